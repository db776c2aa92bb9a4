//! Issue 12 §3, §4, §6 and §7, through the binary and real HTTP: an export
//! never replaces what is not its own, read-only commands create no database,
//! a cause is printed once, blank tokens are refused, and every error of the
//! service is the documented JSON shape with a documented status.

use std::os::unix::fs::FileTypeExt;
use std::path::Path;

use crate::common::{first_scenarios, sparring, text, write_job, JobSpec, Service};

/// A finished job of 3 conversations in `dir`; the database URL.
fn finished_job(dir: &Path) -> String {
    let spec = JobSpec {
        scenarios: first_scenarios(dir, 3),
        max_turns: 3,
        ..JobSpec::default()
    };
    let (path, url) = write_job(dir, &spec);
    let run = sparring(dir, &["run", path.to_str().unwrap(), "--quiet"]);
    assert!(run.status.success(), "{}", text(&run.stderr));
    url
}

fn export(dir: &Path, url: &str, out: &str) -> std::process::Output {
    sparring(
        dir,
        &["export", "--job", "1", "--out", out, "--database", url],
    )
}

fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn an_export_refuses_a_device_a_symlink_and_a_directory_and_streams_to_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let url = finished_job(dir.path());

    let full = export(dir.path(), &url, "/dev/full");
    assert_eq!(full.status.code(), Some(2), "{}", text(&full.stderr));
    assert!(text(&full.stderr).contains("/dev/full is a device or other special file"));
    assert!(!text(&full.stdout).contains("wrote"));
    let dev = std::fs::symlink_metadata("/dev/full").unwrap();
    assert!(dev.file_type().is_char_device(), "/dev/full was replaced");

    let target = dir.path().join("precious.txt");
    std::fs::write(&target, "keep me\n").unwrap();
    std::os::unix::fs::symlink(&target, dir.path().join("link.jsonl")).unwrap();
    std::fs::create_dir(dir.path().join("folder")).unwrap();
    let before = names_in(dir.path());
    for (out, kind) in [("link.jsonl", "a symlink"), ("folder", "a directory")] {
        let refused = export(dir.path(), &url, out);
        let stderr = text(&refused.stderr);
        assert_eq!(refused.status.code(), Some(2), "{out}: {stderr}");
        assert!(stderr.contains(&format!("{out} is {kind}")), "{stderr}");
        assert!(stderr.contains("- for standard output"), "{stderr}");
        assert!(!text(&refused.stdout).contains("wrote"), "{out}");
    }
    assert_eq!(names_in(dir.path()), before, "a refused export wrote");
    assert!(std::fs::symlink_metadata(dir.path().join("link.jsonl"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep me\n");

    let streamed = export(dir.path(), &url, "-");
    let stderr = text(&streamed.stderr);
    assert!(streamed.status.success(), "{stderr}");
    let lines: Vec<serde_json::Value> = text(&streamed.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3, "one line per conversation on stdout");
    assert!(
        stderr.contains("wrote 3 conversations to standard output"),
        "{stderr}"
    );
    assert_eq!(names_in(dir.path()), before, "--out - wrote a file");

    let to_file = export(dir.path(), &url, "out/train.jsonl");
    let stderr = text(&to_file.stderr);
    assert!(to_file.status.success(), "{stderr}");
    assert!(text(&to_file.stdout).contains("wrote 3 conversations to out/train.jsonl"));
    // The openai lines, their metadata in the sidecar beside them, and the
    // sha256 of both.
    assert_eq!(
        names_in(&dir.path().join("out")),
        ["train.jsonl", "train.jsonl.sha256", "train.metadata.jsonl"]
    );
    // Off a terminal, no progress line rewrites itself in place.
    assert!(!stderr.contains('\r'), "{stderr:?}");
}

#[test]
fn read_only_commands_on_a_missing_sqlite_file_say_so_and_create_nothing() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("judges.toml"), "").unwrap();
    let url = "sqlite://missing/sparring.db";
    let commands: [&[&str]; 7] = [
        &["jobs"],
        &["conversations", "--job", "1"],
        &["show", "1"],
        &["stats", "--job", "1"],
        &["export", "--job", "1", "--out", "x.jsonl"],
        &["judge", "judges.toml", "--job", "1"],
        &["run", "--resume", "1"],
    ];
    for args in commands {
        let mut all = args.to_vec();
        all.extend(["--database", url]);
        let out = sparring(dir.path(), &all);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("missing/sparring.db does not exist"),
            "{args:?}: {stderr}"
        );
        assert_eq!(names_in(dir.path()), ["judges.toml"], "{args:?} created");
    }
}

#[test]
fn a_refused_postgres_connection_prints_each_cause_once() {
    let dir = tempfile::tempdir().unwrap();
    // Nothing listens on port 1.
    let out = sparring(
        dir.path(),
        &[
            "show",
            "1",
            "--database",
            "postgres://postgres@127.0.0.1:1/sparring",
        ],
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("cannot open database"), "{stderr}");
    assert_eq!(
        stderr.matches("refused").count(),
        1,
        "a cause printed more than once: {stderr}"
    );
}

#[tokio::test]
async fn a_blank_query_token_is_not_the_token() {
    let service = Service::start("a-token-of-twenty-chars").await;
    for path in ["/v1/jobs?token=+", "/v1/jobs?token=", "/v1/jobs?token=%20"] {
        let response = service.client.get(format!("{}{path}", service.url));
        let response = response.send().await.unwrap();
        assert_eq!(response.status(), 401, "{path}");
    }
}

/// `status` and a JSON body with an `error` string.
async fn assert_json_error(response: reqwest::Response, status: u16, what: &str) {
    assert_eq!(response.status(), status, "{what}");
    let kind = response.headers()["content-type"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(kind.starts_with("application/json"), "{what}: {kind}");
    let body: serde_json::Value = response.json().await.unwrap();
    assert!(
        body["error"].as_str().is_some_and(|e| !e.is_empty()),
        "{what}: {body}"
    );
}

#[tokio::test]
async fn every_error_is_the_documented_json_with_a_documented_status() {
    let service = Service::start("a-token-of-twenty-chars").await;
    let job = service.submit("conformance", 1).await;
    service.wait_until_done(job).await;

    let unparseable = [
        "/v1/jobs/99999999999999999999".to_string(),
        "/v1/conversations/x".to_string(),
        "/jobs/99999999999999999999".to_string(),
    ];
    for path in &unparseable {
        assert_json_error(service.get(path).send().await.unwrap(), 400, path).await;
    }
    // A blank query value does not parse (400); one out of range is a 422
    // naming its field.
    let blank = format!("/v1/jobs/{job}/conversations?after=");
    assert_json_error(service.get(&blank).send().await.unwrap(), 400, &blank).await;
    for (path, field) in [(format!("/v1/jobs/{job}/conversations?limit=-1"), "limit")] {
        let response = service.get(&path).send().await.unwrap();
        assert_eq!(response.status(), 422, "{path}");
        let body: serde_json::Value = response.json().await.unwrap();
        assert_eq!(body["errors"][0]["location"], field, "{path}: {body}");
    }
    let null = service.post("/v1/jobs?new_job=null").body("name = 'x'");
    assert_json_error(null.send().await.unwrap(), 400, "new_job=null").await;

    let huge = vec![b'#'; sparring::server::BODY_LIMIT + 1];
    let huge = service.post("/v1/jobs").body(huge).send().await.unwrap();
    assert_json_error(huge, 413, "a body over the limit").await;

    let anonymous = service.client.get(format!("{}/v1/jobs", service.url));
    assert_json_error(anonymous.send().await.unwrap(), 401, "no token").await;

    let nowhere = service.get("/v1/nowhere").send().await.unwrap();
    assert_json_error(nowhere, 404, "an unknown route").await;

    for filter in ["min_reward=NaN", "max_reward=nan", "min_reward=inf"] {
        let path = format!("/v1/jobs/{job}/conversations?{filter}");
        let response = service.get(&path).send().await.unwrap();
        assert_eq!(response.status(), 422, "{path}");
        let body: serde_json::Value = response.json().await.unwrap();
        assert!(body["errors"][0]["location"]
            .as_str()
            .unwrap()
            .ends_with("reward"));
    }
    let nan_export = service.get(&format!("/v1/jobs/{job}/export?min_reward=NaN"));
    assert_eq!(nan_export.send().await.unwrap().status(), 422);

    let document = service.json("/v1/openapi.json").await;
    for (path, item) in document["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            let responses = operation["responses"].as_object().unwrap();
            if path != "/healthz" {
                assert!(responses.contains_key("401"), "{method} {path}: 401");
            }
            if operation["parameters"]
                .as_array()
                .is_some_and(|p| !p.is_empty())
            {
                assert!(responses.contains_key("400"), "{method} {path}: 400");
            }
        }
    }
    let body = &document["paths"]["/v1/jobs"]["post"]["requestBody"]["content"];
    let schema = &body["application/json"]["schema"]["$ref"];
    assert_eq!(schema, "#/components/schemas/JobConfig");
    let required = &document["components"]["schemas"]["JobConfig"]["required"];
    assert!(required.as_array().is_some_and(|r| !r.is_empty()));
    let empty = service.post("/v1/jobs").json(&serde_json::json!({}));
    let empty = empty.send().await.unwrap();
    assert_eq!(empty.status(), 422, "{{}} lacks the required keys");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn judges_with_one_configuration_and_two_names_each_get_their_own_judgments() {
    let dir = tempfile::tempdir().unwrap();
    let url = finished_job(dir.path());
    let judges = crate::common::mock_judges(
        "[[judges]]\nname = \"preference\"\nendpoint = \"judge\"\nbuiltin = \"helpfulness\"\n\
         [[judges]]\nname = \"pref_biased\"\nendpoint = \"judge\"\nbuiltin = \"helpfulness\"\n",
    );
    std::fs::write(dir.path().join("judges.toml"), judges).unwrap();
    let out = sparring(
        dir.path(),
        &[
            "judge",
            "judges.toml",
            "--job",
            "1",
            "--database",
            &url,
            "--quiet",
        ],
    );
    let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{said}");
    let store = sparring::store::open(&url).await.unwrap();
    let judgments = store.judgments_of_job(1).await.unwrap();
    for name in ["preference", "pref_biased"] {
        let mine: Vec<_> = judgments.iter().filter(|j| j.judge_name == name).collect();
        assert_eq!(
            mine.len(),
            3,
            "{name}: one judgment per conversation\n{said}"
        );
        assert!(mine.iter().all(|j| j.status == "ok"), "{name}: {mine:?}");
    }
    assert_eq!(
        judgments[0].judge_hash,
        judgments[judgments.len() - 1].judge_hash,
        "the two judges share a configuration, so their calls are shared by hash"
    );
}
