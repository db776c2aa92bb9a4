//! The service through real HTTP: a server on a free loopback port in this
//! process, jobs against the in-process mock model server, reqwest as the
//! client.

use crate::common;

use std::time::Duration;

use common::{JobSpec, Service};
use serde_json::Value;
use sparring::server;

const TOKEN: &str = "test-token-123";

async fn start_service(token: Option<&str>) -> Service {
    Service::start_with(token).await
}

/// Text as the UI's templates escape it (tera's autoescape).
fn html_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#x27;")
        .replace('/', "&#x2F;")
}

#[tokio::test]
async fn healthz_is_open_and_every_other_route_needs_the_token() {
    let service = start_service(Some(TOKEN)).await;
    let bare = |path: &str| service.client.get(format!("{}{path}", service.url));

    assert_eq!(bare("/healthz").send().await.unwrap().status(), 200);
    for path in ["/v1/jobs", "/v1/openapi.json", "/metrics", "/", "/jobs/1"] {
        let response = bare(path).send().await.unwrap();
        assert_eq!(response.status(), 401, "{path} without a token");
        assert_eq!(response.headers()["www-authenticate"], "Bearer");
        let wrong = bare(path).bearer_auth("wrong").send().await.unwrap();
        assert_eq!(wrong.status(), 401, "{path} with a wrong token");
    }
    assert_eq!(service.get("/v1/jobs").send().await.unwrap().status(), 200);

    // A browser passes the token once in the query and keeps it in a cookie.
    let page = bare(&format!("/?token={TOKEN}")).send().await.unwrap();
    assert_eq!(page.status(), 200);
    let cookie = page.headers()["set-cookie"].to_str().unwrap().to_string();
    assert!(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"));
    let pair = cookie.split(';').next().unwrap().to_string();
    let again = bare("/").header("cookie", &pair).send().await.unwrap();
    assert_eq!(again.status(), 200);
    // The cookie does not authorize requests that change something.
    let post = service
        .client
        .post(format!("{}/v1/jobs/1/cancel", service.url))
        .header("cookie", &pair)
        .send()
        .await
        .unwrap();
    assert_eq!(post.status(), 401);
}

#[tokio::test]
async fn a_bad_config_is_refused_with_422_and_the_field_paths_of_its_problems() {
    let service = start_service(Some(TOKEN)).await;
    let bad = service
        .job("bad", 2, "")
        .replace("model = \"mock-policy\"", "model = \"\"")
        .replace("user = \"user\"", "user = \"nobody\"");
    let response = service
        .post("/v1/jobs")
        .header("content-type", "application/toml")
        .body(bad)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 422);
    let body: Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
    let locations: Vec<&str> = body["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["location"].as_str().unwrap_or(""))
        .collect();
    assert!(locations.contains(&"endpoints.policy.model"), "{body}");
    assert!(locations.contains(&"roles.user"), "{body}");
    assert_eq!(body["errors"][0]["file"], "request body");

    // JSON bodies are checked the same way; an unknown field is named.
    let response = service
        .post("/v1/jobs")
        .header("content-type", "application/json")
        .body(r#"{"name": "x", "colour": "red"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 422);
    let body = response.text().await.unwrap();
    assert!(body.contains("unknown field `colour`"), "{body}");

    // A body over the limit is refused before it is read whole.
    let huge = "#".repeat(server::BODY_LIMIT + 1);
    let response = service.post("/v1/jobs").body(huge).send().await.unwrap();
    assert_eq!(response.status(), 413);
}

#[tokio::test]
async fn a_submitted_job_runs_to_the_end_and_every_view_of_it_agrees() {
    let service = start_service(Some(TOKEN)).await;
    let job = service.submit_toml(service.job("served", 5, "")).await;
    let id = job["id"].as_i64().unwrap();
    assert_eq!(job["total"], 5);

    // Live progress: at least one progress event, then done.
    let mut events = service
        .get(&format!("/v1/jobs/{id}/events"))
        .send()
        .await
        .unwrap();
    assert_eq!(events.headers()["content-type"], "text/event-stream");
    let mut seen = String::new();
    while !seen.contains("event: done") {
        let chunk = tokio::time::timeout(Duration::from_secs(120), events.chunk())
            .await
            .expect("an event within the time limit")
            .unwrap();
        let Some(chunk) = chunk else { break };
        seen.push_str(&String::from_utf8_lossy(&chunk));
    }
    assert!(seen.contains("event: progress"), "{seen}");
    assert!(seen.contains("event: done"), "{seen}");

    let detail = service.wait_until(id, &["done"]).await;
    assert_eq!(detail["counts"]["done"], 5, "{detail}");
    assert_eq!(detail["summary"]["conversations"], 5);
    assert!(detail["summary"]["mean_reward"].is_number());

    // Pages of two cover every conversation exactly once.
    let mut ids = Vec::new();
    let mut after = String::new();
    loop {
        let page = service
            .json(&format!("/v1/jobs/{id}/conversations?limit=2{after}"))
            .await;
        let conversations = page["conversations"].as_array().unwrap();
        assert!(conversations.len() <= 2);
        ids.extend(conversations.iter().map(|c| c["id"].as_i64().unwrap()));
        match page["next"].as_str() {
            Some(next) => after = format!("&after={next}"),
            None => break,
        }
    }
    let mut unique = ids.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), ids.len(), "a conversation was listed twice");
    assert_eq!(ids.len(), 5);

    // Filters: a termination that never happens matches nothing.
    let none = service
        .json(&format!(
            "/v1/jobs/{id}/conversations?termination=no_such_reason"
        ))
        .await;
    assert_eq!(none["conversations"].as_array().unwrap().len(), 0);
    assert!(none["next"].is_null());

    // The export streams one line per scored conversation.
    let scored = {
        let all = service
            .json(&format!("/v1/jobs/{id}/conversations?min_reward=-1000000"))
            .await;
        all["conversations"].as_array().unwrap().len()
    };
    let export = service
        .text(&format!("/v1/jobs/{id}/export?format=openai"))
        .await;
    assert_eq!(export.lines().count(), scored);
    for line in export.lines() {
        let row: Value = serde_json::from_str(line).unwrap();
        assert!(row["messages"].is_array());
    }
    let unknown = service
        .get(&format!("/v1/jobs/{id}/export?format=nope"))
        .send()
        .await
        .unwrap();
    assert_eq!(unknown.status(), 400);

    // A built-in curation profile gates the streamed rows: strict keeps only
    // full rewards, so no more rows than those.
    let full = service
        .json(&format!("/v1/jobs/{id}/conversations?min_reward=1"))
        .await["conversations"]
        .as_array()
        .unwrap()
        .len();
    let strict = service
        .text(&format!(
            "/v1/jobs/{id}/export?format=hf&profile=strict&stratify_by=scenario"
        ))
        .await;
    assert!(strict.lines().count() <= full, "{strict}");
    for line in strict.lines() {
        let row: Value = serde_json::from_str(line).unwrap();
        assert_eq!(row["metadata"]["reward"], 1.0, "{row}");
    }
    for (query, field) in [
        ("profile=/etc/passwd", "profile"),
        ("profile=strict&stratify_by=model", "stratify_by"),
        ("stratify_by=persona", "stratify_by"),
    ] {
        let (status, body) = status_and_json(
            service
                .get(&format!("/v1/jobs/{id}/export?format=hf&{query}"))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, 422, "{query}: {body}");
        assert_eq!(locations(&body), [field], "{query}: {body}");
    }

    // One conversation, through the API and the UI.
    let conversation = service.json(&format!("/v1/conversations/{}", ids[0])).await;
    let messages = conversation["messages"].as_array().unwrap();
    assert!(messages.len() >= 3, "{conversation}");
    assert!(conversation["judgments"].is_array());
    let said = messages
        .iter()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap()
        .to_string();
    let page = service.text(&format!("/conversations/{}", ids[0])).await;
    assert!(page.contains("<!doctype html>"));
    assert!(page.contains(&html_escape(&said)), "{said} not in {page}");
    assert!(page.contains("class=\"bubble user\""));

    let jobs_page = service.text("/").await;
    assert!(jobs_page.contains("served"));
    let job_page = service.text(&format!("/jobs/{id}")).await;
    assert!(job_page.contains(&format!("href=\"/conversations/{}\"", ids[0])));
    let filtered = service
        .text(&format!("/jobs/{id}?min_reward=-1000000&limit=2"))
        .await;
    assert!(filtered.contains("Next page"), "{filtered}");

    // Metrics count the stored conversations.
    let metrics = service.text("/metrics").await;
    assert!(
        metrics.contains(&format!(
            "sparring_items{{job=\"{id}\",name=\"served\",status=\"done\"}} 5"
        )),
        "{metrics}"
    );
    assert!(metrics.contains(&format!(
        "sparring_queue_depth{{job=\"{id}\",name=\"served\"}} 0"
    )));

    // The same config again is the same job.
    let again = service
        .post("/v1/jobs")
        .body(service.job("served", 5, ""))
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 200);
}

#[tokio::test]
async fn a_cancelled_job_stops_and_resumes_to_the_end() {
    let service = start_service(Some(TOKEN)).await;
    let slow = "lease_secs = 1.0\n\n[mock]\nlatency_ms = 100\n";
    let job = service.submit_toml(service.job("slow", 10, slow)).await;
    let id = job["id"].as_i64().unwrap();
    let response = service
        .post(&format!("/v1/jobs/{id}/cancel"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 202);
    let cancelled = service.wait_until(id, &["cancelled"]).await;
    assert!(
        cancelled["counts"]["done"].as_i64().unwrap() < 10,
        "{cancelled}"
    );
    assert_eq!(cancelled["counts"]["leased"], 0, "leases are released");

    let response = service
        .post(&format!("/v1/jobs/{id}/resume"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 202);
    let done = service.wait_until(id, &["done"]).await;
    assert_eq!(done["counts"]["done"], 10, "{done}");

    let again = service
        .post(&format!("/v1/jobs/{id}/cancel"))
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 409);
    let missing = service.get("/v1/jobs/999").send().await.unwrap();
    assert_eq!(missing.status(), 404);
}

#[tokio::test]
async fn the_openapi_document_describes_every_route() {
    let service = start_service(None).await;
    let document = service.json("/v1/openapi.json").await;
    assert_eq!(document["openapi"], "3.1.0");
    let paths = document["paths"].as_object().unwrap();
    for route in [
        "/v1/judging-jobs",
        "/v1/imports",
        "/v1/judgments/{id}",
        "/judgments/{id}",
        "/healthz",
        "/metrics",
        "/v1/openapi.json",
        "/v1/jobs",
        "/v1/jobs/{id}",
        "/v1/jobs/{id}/cancel",
        "/v1/jobs/{id}/resume",
        "/v1/jobs/{id}/conversations",
        "/v1/jobs/{id}/export",
        "/v1/jobs/{id}/events",
        "/v1/jobs/{id}/stats",
        "/v1/compare-users",
        "/v1/conversations/{id}",
        "/",
        "/jobs/{id}",
        "/conversations/{id}",
    ] {
        assert!(paths.contains_key(route), "{route} is not in the document");
    }
    // Without a configured token, no route asks for one.
    let open = service
        .client
        .get(format!("{}/v1/jobs", service.url))
        .send()
        .await
        .unwrap();
    assert_eq!(open.status(), 200);
}

#[test]
fn serve_refuses_a_non_loopback_address_without_a_token() {
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_sparring"))
        .args([
            "serve",
            "--database",
            "sqlite://never.db",
            "--bind",
            "0.0.0.0:0",
        ])
        .current_dir(dir.path())
        .env_remove("SPARRING_API_TOKEN")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = common::text(&out.stderr);
    assert!(
        err.contains("refusing to listen on 0.0.0.0:0 without an API token"),
        "{err}"
    );
    assert!(!dir.path().join("never.db").exists());
}

const HELPFUL: &str =
    "[[judges]]\nname = \"helpful\"\nendpoint = \"judge\"\nbuiltin = \"helpfulness\"\n";

/// The scores judge `judge` gave each conversation of the page, by id, read
/// from the conversation detail (judgments of either side).
async fn scores_of(service: &Service, ids: &[i64], judge: &str) -> Vec<(i64, f64, bool)> {
    let mut out = Vec::new();
    for id in ids {
        let c = service.json(&format!("/v1/conversations/{id}")).await;
        let score = c["judgments"]
            .as_array()
            .unwrap()
            .iter()
            .find(|j| j["judge_name"] == judge && j["status"] == "ok")
            .and_then(|j| j["score"].as_f64())
            .unwrap_or_else(|| panic!("conversation {id} has no ok '{judge}' score: {c}"));
        out.push((*id, score, c["reward"].is_number()));
    }
    out
}

fn conversation_ids(page: &Value) -> Vec<i64> {
    page["conversations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_i64().unwrap())
        .collect()
}

/// The `location`s of a 422's problems.
fn locations(body: &Value) -> Vec<String> {
    body["errors"]
        .as_array()
        .unwrap_or_else(|| panic!("no errors in {body}"))
        .iter()
        .map(|e| e["location"].as_str().unwrap_or("").to_string())
        .collect()
}

async fn status_and_json(response: reqwest::Response) -> (u16, Value) {
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_judging_job_sent_over_http_scores_a_job_and_its_scores_filter_conversations_and_exports()
{
    let service = start_service(Some(TOKEN)).await;
    let generated = service.submit("to-judge", 8).await;
    service.wait_until_done(generated).await;

    let body = serde_json::json!({
        "judges": common::mock_judges(HELPFUL),
        "target": {"job": generated},
    });
    let (status, job) = service.post_judging(&body).await;
    assert_eq!(status, 201, "{job}");
    assert_eq!(job["kind"], "judging");
    let judging = job["id"].as_i64().unwrap();
    let listed = service.json("/v1/jobs").await;
    assert!(
        listed["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .any(|j| j["id"] == judging && j["kind"] == "judging"),
        "{listed}"
    );
    let done = service.wait_until_done(judging).await;
    assert_eq!(done["counts"]["done"], 8, "{done}");
    // Its summary's usage is that of its judge calls: one per conversation.
    let usage = &done["summary"]["usage"];
    assert_eq!(usage[0]["role"], "judge:helpful", "{done}");
    assert_eq!(usage[0]["calls"], 8, "{done}");
    assert!(usage[0]["prompt_tokens"].as_i64().unwrap() > 0, "{done}");
    let events = service.text(&format!("/v1/jobs/{judging}/events")).await;
    assert!(events.contains("event: done"), "{events}");

    // The same request again is the same job.
    let (again, same) = service.post_judging(&body).await;
    assert_eq!((again, same["id"].as_i64()), (200, Some(judging)));

    // The inline judges were stored with the job: resuming it reads them again.
    let resumed = service
        .post(&format!("/v1/jobs/{judging}/resume?retry_failed=true"))
        .send()
        .await
        .unwrap();
    assert_eq!(resumed.status(), 202);
    let after = service.wait_until(judging, &["done", "failed"]).await;
    assert_eq!(after["status"], "done", "{after}");

    // Filter by score: the highest score keeps some conversations, not all.
    let all = service
        .json(&format!("/v1/jobs/{generated}/conversations?limit=500"))
        .await;
    let ids = conversation_ids(&all);
    assert_eq!(ids.len(), 8);
    let scores = scores_of(&service, &ids, "helpful").await;
    let best = scores.iter().map(|s| s.1).fold(f64::MIN, f64::max);
    let expected: Vec<i64> = scores.iter().filter(|s| s.1 >= best).map(|s| s.0).collect();
    assert!(
        !expected.is_empty() && expected.len() < ids.len(),
        "the mock judge gave every conversation the same score: {scores:?}"
    );
    let filtered = service
        .json(&format!(
            "/v1/jobs/{generated}/conversations?limit=500&min_judge=helpful={best}"
        ))
        .await;
    assert_eq!(conversation_ids(&filtered), expected);

    // The export keeps the same conversations (those that are scored).
    let export = service
        .text(&format!(
            "/v1/jobs/{generated}/export?format=openai&min_judge=helpful={best}"
        ))
        .await;
    let exported = scores.iter().filter(|s| s.1 >= best && s.2).count();
    assert_eq!(export.lines().count(), exported, "{export}");
    let everything = service
        .text(&format!("/v1/jobs/{generated}/export?format=openai"))
        .await;
    assert!(everything.lines().count() > exported);

    // A bad filter is a 422 naming the query field.
    for (path, says) in [
        (
            format!("/v1/jobs/{generated}/conversations?min_judge=helpful"),
            "expected NAME=SCORE",
        ),
        (
            format!("/v1/jobs/{generated}/conversations?min_judge=nobody=1"),
            "judges with judgments of job",
        ),
        (
            format!("/v1/jobs/{generated}/export?min_judge=helpful=high"),
            "expected NAME=SCORE",
        ),
        (
            format!("/v1/jobs/{generated}/export?format=openai&judge=helpful"),
            "format=dpo only",
        ),
    ] {
        let (status, body) = status_and_json(service.get(&path).send().await.unwrap()).await;
        assert_eq!(status, 422, "{path}: {body}");
        let field = if path.contains("judge=helpful") && !path.contains("min_judge") {
            "judge"
        } else {
            "min_judge"
        };
        assert_eq!(locations(&body), [field], "{path}: {body}");
        assert!(body.to_string().contains(says), "{path}: {body}");
    }

    // The UI: the judging job lists its judgments; a conversation links its own.
    let job_page = service.text(&format!("/jobs/{judging}")).await;
    assert_eq!(
        job_page.matches("href=\"/judgments/").count(),
        8,
        "{job_page}"
    );
    let conversation_page = service.text(&format!("/conversations/{}", ids[0])).await;
    assert!(
        conversation_page.contains(">helpful</a>"),
        "{conversation_page}"
    );
    let filtered_page = service
        .text(&format!("/jobs/{generated}?min_judge=helpful%3D{best}"))
        .await;
    assert_eq!(
        filtered_page.matches("href=\"/conversations/").count(),
        expected.len(),
        "{filtered_page}"
    );
}

#[tokio::test]
async fn bad_judges_are_a_422_with_the_field_paths_sparring_judge_reports() {
    let service = start_service(Some(TOKEN)).await;
    let generated = service.submit("judged-badly", 1).await;
    service.wait_until_done(generated).await;

    let bad = common::mock_judges("[[judges]]\nname = \"\"\nendpoint = \"nowhere\"\n");
    let (status, body) = service
        .post_judging(&serde_json::json!({"judges": bad, "target": {"job": generated}}))
        .await;
    assert_eq!(status, 422, "{body}");
    let found = locations(&body);
    assert_eq!(found, ["judges[0].name", "judges[0].template"], "{body}");
    assert!(body["errors"]
        .as_array()
        .unwrap()
        .iter()
        .all(|e| e["file"] == "judges"));

    // `sparring judge` says the same of the same TOML in a file.
    let file = service.dir.path().join("bad-judges.toml");
    std::fs::write(&file, &bad).unwrap();
    let database = format!(
        "sqlite://{}",
        service.dir.path().join("service.db").display()
    );
    let out = common::sparring(
        service.dir.path(),
        &[
            "judge",
            file.to_str().unwrap(),
            "--job",
            &generated.to_string(),
            "--database",
            &database,
        ],
    );
    assert!(!out.status.success());
    let said = common::text(&out.stderr);
    for error in body["errors"].as_array().unwrap() {
        let message = error["message"].as_str().unwrap();
        assert!(said.contains(message), "{message} not in {said}");
    }

    // A judge naming an endpoint nobody defines.
    let (status, body) = service
        .post_judging(&serde_json::json!({
            "judges": common::mock_judges(&HELPFUL.replace("endpoint = \"judge\"", "endpoint = \"nowhere\"")),
            "target": {"job": generated},
        }))
        .await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(locations(&body), ["judges[0].endpoint"], "{body}");
    assert!(body.to_string().contains("'nowhere'"), "{body}");

    // A TOML syntax error names its line; a wrong request shape names the fields.
    let (status, body) = service
        .post_judging(&serde_json::json!({"judges": "[[judges]\n", "target": {"job": generated}}))
        .await;
    assert_eq!(status, 422, "{body}");
    assert!(locations(&body)[0].starts_with("line 1"), "{body}");
    let (status, body) = service
        .post_judging(&serde_json::json!({"judges": 7, "target": {"a": 1}}))
        .await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(locations(&body), ["judges", "target"]);
    let (status, body) = service
        .post_judging(
            &serde_json::json!({"judges": {"from_job": generated}, "target": {"job": 999}}),
        )
        .await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(locations(&body), ["target.job"]);
    assert!(body.to_string().contains("job 999 does not exist"));
    let (status, body) = service
        .post_judging(&serde_json::json!({"judges": "", "target": {"job": generated}, "colour": 1}))
        .await;
    assert_eq!(status, 422, "{body}");
    assert!(
        body.to_string().contains("unknown field `colour`"),
        "{body}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pairwise_judging_job_shows_both_conversations_side_by_side_with_the_verdict() {
    let service = start_service(Some(TOKEN)).await;
    let a = service.submit("side-a", 3).await;
    let b = service
        .submit_toml(service.job_with(JobSpec {
            name: "side-b".into(),
            policy_model: "mock-policy+perfect".into(),
            scenarios: common::first_scenarios(service.dir.path(), 3),
            ..JobSpec::default()
        }))
        .await["id"]
        .as_i64()
        .unwrap();
    service.wait_until_done(a).await;
    service.wait_until_done(b).await;
    let judging = service.judge_pairwise(a, b).await;

    // The judging job's page links each judgment.
    let job_page = service.text(&format!("/jobs/{judging}")).await;
    let links: Vec<i64> = job_page
        .split("href=\"/judgments/")
        .skip(1)
        .map(|rest| rest[..rest.find('"').unwrap()].parse().unwrap())
        .collect();
    assert_eq!(links.len(), 3, "{job_page}");

    let judgment = service.json(&format!("/v1/judgments/{}", links[0])).await;
    let (ca, cb) = (
        judgment["conversation_a"].as_i64().unwrap(),
        judgment["conversation_b"]
            .as_i64()
            .expect("a pairwise judgment"),
    );
    assert_eq!(judgment["a"]["job_id"].as_i64(), Some(a));
    assert_eq!(judgment["b"]["job_id"].as_i64(), Some(b));
    let orders: Vec<&str> = judgment["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["call"]["order"].as_str().unwrap())
        .collect();
    assert_eq!(orders, ["ab", "ba"], "{judgment}");

    // Side B's conversation shows the judgment too, linked.
    let side_b = service.json(&format!("/v1/conversations/{cb}")).await;
    assert!(
        side_b["judgments"]
            .as_array()
            .unwrap()
            .iter()
            .any(|j| j["id"] == judgment["id"]),
        "{side_b}"
    );
    let side_b_page = service.text(&format!("/conversations/{cb}")).await;
    assert!(side_b_page.contains(&format!("href=\"/judgments/{}\"", links[0])));
    assert!(side_b_page.contains(&format!("B, against <a href=\"/conversations/{ca}\">")));

    // The side-by-side page: both chats, the verdict, both orders' raw output folded.
    let page = service.text(&format!("/judgments/{}", links[0])).await;
    let column = |side: &str| {
        let start = page
            .find(&format!("<section class=\"side side-{side}\">"))
            .unwrap_or_else(|| panic!("no side {side} in {page}"));
        let end = start + page[start..].find("</section>").unwrap();
        page[start..end].to_string()
    };
    for (side, id) in [("a", ca), ("b", cb)] {
        let shown = column(side);
        let stored = service.json(&format!("/v1/conversations/{id}")).await;
        for m in stored["messages"].as_array().unwrap() {
            let content = m["content"].as_str().unwrap();
            if m["role"] == "user" || m["role"] == "assistant" {
                assert!(
                    shown.contains(&html_escape(content)),
                    "side {side}: {content} is not shown"
                );
            }
        }
    }
    let preference = judgment["verdict"]["preference"].as_str().unwrap();
    let verdict = match preference {
        "A" => format!("verdict <b>A (conversation {ca})</b>"),
        "B" => format!("verdict <b>B (conversation {cb})</b>"),
        _ => "verdict <b>neither: a tie</b>".to_string(),
    };
    assert!(page.contains(&verdict), "{verdict} not in {page}");
    let consistency = if judgment["consistent"] == true {
        "both orders agreed"
    } else {
        "the two orders disagreed"
    };
    assert!(page.contains(&format!("swap check: <b>{consistency}</b>")));
    // Each order's output, the judge's reasoning, is shown.
    assert_eq!(page.matches("<div class=\"raw\">").count(), 2);
    for call in judgment["calls"].as_array().unwrap() {
        let raw = call["call"]["raw_output"].as_str().unwrap();
        assert!(page.contains(&html_escape(raw)), "{raw} not in {page}");
    }

    // DPO pairs over HTTP: only with a judge that has judgments.
    let dpo = service
        .text(&format!("/v1/jobs/{a}/export?format=dpo&judge=pref"))
        .await;
    for line in dpo.lines() {
        let row: Value = serde_json::from_str(line).unwrap();
        assert!(
            row["chosen"].is_array() && row["rejected"].is_array(),
            "{row}"
        );
    }
    for (query, field) in [
        ("format=dpo", "judge"),
        ("format=dpo&judge=nobody", "judge"),
    ] {
        let (status, body) = status_and_json(
            service
                .get(&format!("/v1/jobs/{a}/export?{query}"))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, 422, "{query}: {body}");
        assert_eq!(locations(&body), [field], "{body}");
    }
}
