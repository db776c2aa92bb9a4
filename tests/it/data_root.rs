//! The service boundary through real HTTP: a submitted config reads nothing
//! outside the service's data root (not through `?base=`, an absolute path, a
//! `..`, or a symlink), its own endpoints never get a key from the server's
//! environment, and the operator's endpoints, named by a submitted config,
//! carry the operator's key to the operator's URL and nowhere else.

use std::path::Path;

use serde_json::Value;
use sparring::config::{MockConfig, OperatorEndpoints};
use sparring::mock_llm::MockServer;

use crate::common::{self, JobSpec, Service};

/// POST the TOML `config` to `/v1/jobs{query}`: status and body.
async fn submit(service: &Service, query: &str, config: &str) -> (u16, Value) {
    let response = service
        .post(&format!("/v1/jobs{query}"))
        .header("content-type", "application/toml")
        .body(config.to_string())
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

fn locations(body: &Value) -> Vec<String> {
    body["errors"]
        .as_array()
        .map(|errors| {
            errors
                .iter()
                .map(|e| e["location"].as_str().unwrap_or("").to_string())
                .collect()
        })
        .unwrap_or_default()
}

async fn assert_nothing_stored(service: &Service) {
    let jobs = service.json("/v1/jobs").await;
    assert_eq!(jobs["jobs"], serde_json::json!([]), "a job was stored");
}

/// A quickstart-style config inside the service's data root, with one line
/// replaced.
fn config_with(service: &Service, from: &str, to: &str) -> String {
    let config = service.job("escape", 2, "");
    assert!(config.contains(from), "{from} not in {config}");
    config.replace(from, to)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_submitted_config_cannot_name_a_file_outside_the_data_root() {
    let service = Service::start_with(None).await;
    let root = service.dir.path();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "the secret\n").unwrap();
    std::os::unix::fs::symlink(outside.path(), root.join("linked-out")).unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("secret.txt"),
        root.join("secret-link.tera"),
    )
    .unwrap();
    let policy_template = format!("{}/prompts/policies/default.tera", root.display());

    // `?base=` climbing out, or absolute.
    for base in ["../../../../../..", "/etc", "linked-out"] {
        let (status, body) = submit(
            &service,
            &format!("?base={base}"),
            &service.job("escape", 2, ""),
        )
        .await;
        assert_eq!(status, 422, "?base={base}: {body}");
        assert_eq!(locations(&body), ["?base"], "{body}");
    }

    // An absolute path, a relative one climbing out, a symlink out: each named
    // by its field, and none says whether the file exists or what it holds.
    let attempts = [
        (
            "policy.template",
            config_with(
                &service,
                &policy_template,
                &outside.path().join("secret.txt").display().to_string(),
            ),
        ),
        (
            "policy.template",
            config_with(
                &service,
                &policy_template,
                "../../../../../../../../etc/passwd",
            ),
        ),
        (
            "policy.template",
            config_with(&service, &policy_template, "secret-link.tera"),
        ),
        (
            "dataset.personas",
            config_with(
                &service,
                &format!("personas = \"{}/personas\"", root.display()),
                "personas = \"/etc\"",
            ),
        ),
        (
            "dataset.personas",
            config_with(
                &service,
                &format!("personas = \"{}/personas\"", root.display()),
                "personas = \"linked-out\"",
            ),
        ),
    ];
    for (field, config) in &attempts {
        let (status, body) = submit(&service, "", config).await;
        assert_eq!(status, 422, "{field}: {body}");
        assert_eq!(locations(&body), [field.to_string()], "{body}");
        let text = body.to_string();
        assert!(text.contains("outside the service's data root"), "{text}");
        for leak in ["secret", "does not exist", "line "] {
            assert!(
                !text.contains(leak),
                "{field}: the answer says {leak:?}: {text}"
            );
        }
    }
    // A file outside that exists and one that does not get the same answer.
    let missing = config_with(&service, &policy_template, "/no/such/file.tera");
    let present = config_with(&service, &policy_template, "/etc/hostname");
    assert_eq!(
        submit(&service, "", &missing).await,
        submit(&service, "", &present).await
    );

    // A personas folder inside the root holding a link out.
    let personas = root.join("my-personas");
    common::copy_into(&root.join("personas"), &personas);
    std::os::unix::fs::symlink(outside.path().join("secret.txt"), personas.join("z.toml")).unwrap();
    let config = config_with(
        &service,
        &format!("personas = \"{}/personas\"", root.display()),
        "personas = \"my-personas\"",
    );
    let (status, body) = submit(&service, "", &config).await;
    assert_eq!(status, 422, "{body}");
    assert!(
        body.to_string().contains("z.toml, which leads out"),
        "{body}"
    );

    // A judge's template, in a job and in a judging job.
    let judge = format!(
        "[[judges]]\nname = \"j\"\nendpoint = \"policy\"\ntemplate = \"{}\"\nmode = \"pointwise\"\n",
        outside.path().join("secret.txt").display()
    );
    let (status, body) = submit(
        &service,
        "",
        &format!("{}\n{judge}", service.job("j", 2, "")),
    )
    .await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(locations(&body), ["judges[0].template"], "{body}");
    assert_nothing_stored(&service).await;

    // Inside the root, through a `?base=` subfolder and a symlink that stays in.
    std::fs::create_dir_all(root.join("jobs")).unwrap();
    std::os::unix::fs::symlink(root.join("prompts"), root.join("jobs/prompts")).unwrap();
    let config = config_with(&service, &policy_template, "prompts/policies/default.tera");
    let (status, body) = submit(&service, "?base=jobs", &config).await;
    assert_eq!(status, 201, "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_judging_job_over_http_gets_the_same_boundary() {
    let service = Service::start_with(None).await;
    let generated = service.submit("judged", 2).await;
    service.wait_until_done(generated).await;
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("j.tera"), "secret {{ conversation }}").unwrap();
    let cases = [
        (
            "judges[0].template",
            common::mock_judges(&format!(
                "[[judges]]\nname = \"j\"\nendpoint = \"judge\"\ntemplate = \"{}\"\nmode = \"pointwise\"\n",
                outside.path().join("j.tera").display()
            )),
        ),
        (
            "endpoints.judge.api_key_env",
            "[endpoints.judge]\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\napi_key_env = \"HOME\"\n\
             [[judges]]\nname = \"h\"\nendpoint = \"judge\"\nbuiltin = \"helpfulness\"\n"
                .to_string(),
        ),
    ];
    for (field, judges) in cases {
        let (status, body) = service
            .post_judging(&serde_json::json!({"judges": judges, "target": {"job": generated}}))
            .await;
        assert_eq!(status, 422, "{body}");
        assert_eq!(locations(&body), [field], "{body}");
        assert!(!body.to_string().contains("secret"), "{body}");
    }
    let jobs = service.json("/v1/jobs").await;
    assert_eq!(
        jobs["jobs"].as_array().unwrap().len(),
        1,
        "only the generation job: {jobs}"
    );
}

/// A mock model server that knows the scenarios of `file`.
async fn mock_for(file: &Path) -> MockServer {
    let scenarios = sparring::persona::load::load_scenarios(file).unwrap();
    MockServer::start(([127, 0, 0, 1], 0).into(), scenarios, MockConfig::default())
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operator_endpoint_carries_the_operators_key_to_the_operators_url_only() {
    let dir = tempfile::tempdir().unwrap();
    let scenarios = common::first_scenarios(dir.path(), 2);
    let operator_mock = mock_for(&scenarios).await;
    let own_mock = mock_for(&scenarios).await;
    // The operator's key is the value of a variable of the server's
    // environment; HOME is always set, so no test changes the environment.
    let key = std::env::var("HOME").unwrap();
    let operators = OperatorEndpoints::from_text(
        Path::new("endpoints.toml"),
        &format!(
            "[endpoints.shared-policy]\nbase_url = \"{url}\"\nmodel = \"mock-policy\"\napi_key_env = \"HOME\"\n\
             [endpoints.shared-user]\nbase_url = \"{url}\"\nmodel = \"mock-user\"\napi_key_env = \"HOME\"\n\
             [endpoints.shared-judge]\nbase_url = \"{url}\"\nmodel = \"mock-judge\"\napi_key_env = \"HOME\"\n",
            url = operator_mock.base_url()
        ),
    )
    .unwrap();
    let database = format!("sqlite://{}", dir.path().join("service.db").display());
    let service = Service::with_operators(&database, None, dir, operators).await;

    // Roles on the operator's endpoints: the job runs to the end there.
    let config = service.job_with(JobSpec {
        name: "operated".into(),
        scenarios: common::first_scenarios(service.dir.path(), 2),
        ..JobSpec::default()
    });
    let config = config
        .replace(
            "[endpoints.policy]\nmock = true\nmodel = \"mock-policy\"",
            "[endpoints.policy]\noperator = \"shared-policy\"\ntemperature = 0.0",
        )
        .replace(
            "[endpoints.user]\nmock = true\nmodel = \"mock-user\"",
            "[endpoints.user]\noperator = \"shared-user\"",
        );
    let config: String = config
        .lines()
        .filter(|l| !l.starts_with("max_retries") && !l.starts_with("timeout_secs"))
        .map(|l| format!("{l}\n"))
        .collect();
    let (status, job) = submit(&service, "", &config).await;
    assert_eq!(status, 201, "{job}");
    let id = job["id"].as_i64().unwrap();
    let done = service.wait_until_done(id).await;
    assert_eq!(done["counts"]["done"], 2, "{done}");
    let seen = operator_mock.stats().by_authorization;
    assert_eq!(
        seen.keys().collect::<Vec<_>>(),
        [&format!("Bearer {key}")],
        "the operator's mock saw: {seen:?}"
    );
    assert!(seen.values().sum::<u64>() >= 4, "{seen:?}");
    let detail = service.json(&format!("/v1/jobs/{id}")).await;
    assert!(
        !detail.to_string().contains(&key),
        "the key is shown: {detail}"
    );

    // A judging job whose judges name an operator endpoint: judged there too.
    let judges = "[endpoints.judge]\noperator = \"shared-judge\"\n\
                  [[judges]]\nname = \"helpful\"\nendpoint = \"judge\"\nbuiltin = \"helpfulness\"\n";
    let (status, judging) = service
        .post_judging(&serde_json::json!({"judges": judges, "target": {"job": id}}))
        .await;
    assert_eq!(status, 201, "{judging}");
    let judging = service
        .wait_until_done(judging["id"].as_i64().unwrap())
        .await;
    assert_eq!(judging["counts"]["done"], 2, "{judging}");
    let seen = operator_mock.stats();
    assert_eq!(seen.by_model.get("mock-judge"), Some(&2), "{seen:?}");
    assert_eq!(
        seen.by_authorization.keys().collect::<Vec<_>>(),
        [&format!("Bearer {key}")]
    );

    // A submitted config's own endpoint reaches its URL with no key at all.
    let own = service.job_with(JobSpec {
        name: "own".into(),
        base_url: Some(own_mock.base_url()),
        scenarios: common::first_scenarios(service.dir.path(), 2),
        ..JobSpec::default()
    });
    let (status, job) = submit(&service, "", &own).await;
    assert_eq!(status, 201, "{job}");
    service.wait_until_done(job["id"].as_i64().unwrap()).await;
    // (The client sends an empty bearer when it has no key.)
    let seen = own_mock.stats().by_authorization;
    assert!(
        !seen.is_empty() && seen.keys().all(|k| k == "none" || k.trim() == "Bearer"),
        "a submitted endpoint got a key: {seen:?}"
    );

    // Asking for a key variable is refused, naming the operator's endpoints.
    let (status, body) = submit(
        &service,
        "",
        &own.replace(
            "timeout_secs = 10",
            "timeout_secs = 10\napi_key_env = \"HOME\"",
        ),
    )
    .await;
    assert_eq!(status, 422, "{body}");
    assert!(
        locations(&body).contains(&"endpoints.policy.api_key_env".to_string()),
        "{body}"
    );
    assert!(
        body.to_string().contains("shared-policy, shared-user"),
        "{body}"
    );
    assert!(!body.to_string().contains(&key), "{body}");
}
