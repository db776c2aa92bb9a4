//! Web UI pages read as HTML over real HTTP, where a browser adds nothing:
//! what a running job shows while its model calls are out.

use crate::common::{first_scenarios, JobSpec, Service};

const TOKEN: &str = "ui-pages-token";

/// The number before `marker` in `text`, e.g. `3` of `3 model calls in flight`.
fn number_before(text: &str, marker: &str) -> Option<u64> {
    let at = text.find(marker)?;
    let digits: String = text[..at]
        .trim_end()
        .chars()
        .rev()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.chars().rev().collect::<String>().parse().ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_job_shows_its_model_calls_in_flight_and_its_retries() {
    let service = Service::start(TOKEN).await;
    // Every policy reply takes 2 s, and the first is a 429 to be retried.
    let config = service.job_with(JobSpec {
        name: "slow".into(),
        policy_model: "mock-policy+slow+ratelimit-once".into(),
        scenarios: first_scenarios(service.dir.path(), 2),
        ..JobSpec::default()
    });
    let job = service.submit_toml(config).await["id"].as_i64().unwrap();
    let started = std::time::Instant::now();
    let page = loop {
        let page = service.text(&format!("/jobs/{job}")).await;
        let in_flight = number_before(&page, "model call").unwrap_or(0);
        let retries = number_before(&page, "retr").unwrap_or(0);
        if in_flight > 0 && retries > 0 {
            break page;
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(30),
            "no calls in flight and retries shown: {page}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    };
    assert!(page.contains("<b>Running here now:</b>"), "{page}");
    assert!(
        page.contains("<meta http-equiv=\"refresh\""),
        "a running job's page refreshes"
    );
    let _ = service.post(&format!("/v1/jobs/{job}/cancel")).send().await;
}

/// A synthesis job on `mock-synth` whose first attempt is its last, so that
/// the mock's deliberately broken proposals stay rejected at their stages.
const ONE_ATTEMPT_SYNTH: &str = "name = \"ui-synth\"\ntarget = 12\nmax_attempts = 1\n\
    [endpoints.generator]\nmock = true\nmodel = \"mock-synth\"\n\
    [roles]\ngenerator = \"generator\"\n[environment]\nname = \"builtin:retail\"\n";

/// `POST /v1/synthesis-jobs` with `toml`, run to the end; the job's id.
async fn synthesized(service: &Service, toml: &str) -> i64 {
    let response = service
        .post("/v1/synthesis-jobs")
        .header("content-type", "application/toml")
        .body(toml.to_string())
        .send()
        .await
        .unwrap();
    let status = response.status();
    let job: serde_json::Value = response.json().await.unwrap();
    assert_eq!(status, 201, "{job}");
    let id = job["id"].as_i64().unwrap();
    service.wait_until_done(id).await;
    id
}

/// The proposal numbers the table of a synthesis job's page links to, with
/// the query the links carry.
fn proposal_links(page: &str, job: i64) -> Vec<(i64, String)> {
    let marker = format!("<td class=\"num\"><a href=\"/jobs/{job}/proposals/");
    page.split(&marker)
        .skip(1)
        .map(|rest| {
            let end = rest.find('"').unwrap();
            let (index, query) = rest[..end].split_once('?').unwrap_or((&rest[..end], ""));
            (index.parse().unwrap(), query.replace("&amp;", "&"))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_synthesis_job_page_lists_accepted_and_rejected_proposals_and_filters_them_by_fate_and_stage(
) {
    let service = Service::start(TOKEN).await;
    let job = synthesized(&service, ONE_ATTEMPT_SYNTH).await;
    let stats = service.json(&format!("/v1/jobs/{job}/stats")).await;
    let proposals = stats["synthesis"]["proposals"].as_u64().unwrap() as usize;

    let page = service.text(&format!("/jobs/{job}")).await;
    assert!(
        page.contains("<b>12 of 12 scenarios accepted</b>"),
        "{page}"
    );
    assert!(
        page.contains(&format!("href=\"/v1/jobs/{job}/scenarios\"")),
        "{page}"
    );
    // The coverage of the accepted scenarios, as `sparring stats` prints it.
    assert!(
        page.contains("coverage of 12 accepted scenarios (no [diversity] targets)"),
        "{page}"
    );
    assert!(
        !page.contains("http-equiv=\"refresh\""),
        "a finished job's page stays"
    );
    // Every stage stats counts rejections at has its row (the mock breaks
    // first attempts at several).
    let stages: Vec<String> = stats["synthesis"]["stages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["stage"].as_str().unwrap().to_string())
        .collect();
    assert!(stages.len() >= 4, "{stats}");
    for stage in &stages {
        assert!(
            page.contains(&format!(
                "<a href=\"/jobs/{job}?stage={stage}\">{stage}</a>"
            )),
            "no {stage} row: {page}"
        );
    }
    let all = proposal_links(&page, job);
    assert_eq!(all.len(), proposals.min(50), "{page}");
    assert!(
        page.contains("<td class=\"fate good\">accepted</td>"),
        "{page}"
    );
    assert!(
        page.contains("<td class=\"fate bad\">rejected at unknown_id</td>"),
        "{page}"
    );

    // mock-synth breaks proposal 8 with an unknown ID; with one attempt
    // each, the filter keeps as many proposals as stats counts attempts.
    let page = service.text(&format!("/jobs/{job}?stage=unknown_id")).await;
    let kept = proposal_links(&page, job);
    assert!(
        kept.contains(&(8, "stage=unknown_id".to_string())),
        "{kept:?}"
    );
    assert!(
        kept.iter().all(|(_, q)| q == "stage=unknown_id"),
        "{kept:?}"
    );
    let unknown_id = stats["synthesis"]["stages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["stage"] == "unknown_id")
        .unwrap();
    assert_eq!(
        kept.len() as u64,
        unknown_id["rejected"].as_u64().unwrap(),
        "{stats}"
    );
    assert!(kept.len() < proposals);
    assert!(page.contains(&format!(
        "<b>{} of {proposals} proposals</b> match the filter",
        kept.len()
    )));
    assert!(
        page.contains("<option value=\"unknown_id\" selected>"),
        "{page}"
    );
    for (index, _) in &kept {
        let shown = service
            .text(&format!("/jobs/{job}/proposals/{index}"))
            .await;
        assert!(shown.contains("rejected at unknown_id"), "{shown}");
    }

    let page = service.text(&format!("/jobs/{job}?fate=accepted")).await;
    assert_eq!(proposal_links(&page, job).len(), 12, "{page}");
    assert!(!page.contains("<td class=\"fate bad\">"), "{page}");
    let page = service
        .text(&format!("/jobs/{job}?fate=rejected&stage=format"))
        .await;
    let rejected = proposal_links(&page, job);
    assert!(!rejected.is_empty());
    assert!(
        rejected.contains(&(2, "fate=rejected&stage=format".to_string())),
        "{rejected:?}"
    );
    assert!(
        rejected
            .iter()
            .all(|(_, q)| q == "fate=rejected&stage=format"),
        "{rejected:?}"
    );
    // Paged: one row a page, the next page's link keeps the filter.
    let page = service
        .text(&format!("/jobs/{job}?fate=accepted&limit=1&offset=1"))
        .await;
    assert_eq!(proposal_links(&page, job).len(), 1);
    assert!(
        page.contains(&format!(
            "href=\"/jobs/{job}?fate=accepted&amp;limit=1&amp;offset=2\">Next page"
        )),
        "{page}"
    );

    // The jobs list shows the job's scenarios against its target.
    let list = service.text("/").await;
    assert!(list.contains("12 of 12 accepted"), "{list}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_proposal_filter_is_a_422_page_naming_the_field_and_the_values_that_would_do() {
    let service = Service::start(TOKEN).await;
    let job = synthesized(&service, ONE_ATTEMPT_SYNTH).await;
    for path in [
        format!("/jobs/{job}?fate=lost&stage=typing&offset=-1"),
        format!("/jobs/{job}/proposals/0?fate=lost&stage=typing&offset=-1"),
    ] {
        let response = service.get(&path).send().await.unwrap();
        assert_eq!(response.status(), 422, "{path}");
        assert!(response.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/html"));
        let page = response.text().await.unwrap();
        assert!(page.contains("fate: &#x27;lost&#x27; is not a fate; give one of accepted, duplicate, surplus, rejected"), "{page}");
        assert!(
            page.contains(
                "stage: &#x27;typing&#x27; is not a stage; give one of format, execution"
            ),
            "{page}"
        );
        assert!(
            page.contains("offset: &#x27;-1&#x27; is not a row count"),
            "{page}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_proposal_page_shows_each_reply_escaped_with_its_rejection_and_the_scenario_with_its_decision(
) {
    let service = Service::start(TOKEN).await;
    let job = synthesized(&service, ONE_ATTEMPT_SYNTH).await;
    // Proposal 2: mock-synth's reply that is not JSON.
    let page = service
        .text(&format!("/jobs/{job}/proposals/2?stage=format"))
        .await;
    assert!(
        page.contains("<h3>Attempt 1: <span class=\"bad\">rejected at format</span></h3>"),
        "{page}"
    );
    assert!(
        page.contains("<pre>Here is a scenario: {&quot;id&quot;: &quot;draft&quot;"),
        "{page}"
    );
    assert!(!page.contains("{\"id\": \"draft\""), "{page}");
    assert!(
        page.contains("<p class=\"bad\">Rejected at <b>format</b>: "),
        "{page}"
    );
    assert!(
        page.contains("None: no attempt passed every check."),
        "{page}"
    );
    assert!(
        page.contains(&format!(
            "href=\"/jobs/{job}?stage=format\">← job {job} (as filtered)"
        )),
        "{page}"
    );
    assert!(page.contains(" in the filter</span>"), "{page}");
    // Proposal 8: an ID the seed data does not have, and the reason says which.
    let page = service.text(&format!("/jobs/{job}/proposals/8")).await;
    assert!(
        page.contains("<p class=\"rejection\"><b>unknown_id:</b> "),
        "{page}"
    );
    // Proposal 0: accepted, its scenario shown whole.
    let page = service.text(&format!("/jobs/{job}/proposals/0")).await;
    assert!(
        page.contains("Accepted: it is one of the job's scenarios."),
        "{page}"
    );
    assert!(page.contains("<pre class=\"scenario\">{"), "{page}");
    assert!(page.contains("synth-0-000000"), "{page}");
    assert!(page.contains("rel=\"next\" href=\"/jobs/"), "{page}");

    // No such proposal, and a job that has none.
    let missing = service
        .get(&format!("/jobs/{job}/proposals/99999"))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);
    assert!(missing
        .text()
        .await
        .unwrap()
        .contains("has no stored proposal 99999"));
    let generation = service.submit("not-synthesis", 1).await;
    let other = service
        .get(&format!("/jobs/{generation}/proposals/0"))
        .send()
        .await
        .unwrap();
    assert_eq!(other.status(), 404);
    assert!(other
        .text()
        .await
        .unwrap()
        .contains("only synthesis jobs have proposals"));
}

/// A generator over real HTTP that answers every prompt with `reply`.
async fn generator_answering(reply: &'static str) -> String {
    use axum::routing::post;
    let answer = serde_json::json!({
        "choices": [{"index": 0, "message": {"role": "assistant", "content": reply}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 7, "completion_tokens": 5, "total_tokens": 12}
    });
    let app = axum::Router::new().route(
        "/v1/chat/completions",
        post(move || {
            let answer = answer.clone();
            async move { axum::Json(answer) }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    url
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_holding_a_script_tag_is_shown_as_text_on_every_page() {
    const REPLY: &str = "<script>alert(\"owned\")</script> is all I have";
    let service = Service::start(TOKEN).await;
    let url = generator_answering(REPLY).await;
    let toml = format!(
        "name = \"ui-script\"\ntarget = 1\nmax_proposals = 1\nmax_attempts = 2\n\
         [endpoints.generator]\nbase_url = \"{url}\"\nmodel = \"fake\"\nmax_retries = 0\n\
         [roles]\ngenerator = \"generator\"\n[environment]\nname = \"builtin:retail\"\n"
    );
    let job = synthesized(&service, &toml).await;
    let page = service.text(&format!("/jobs/{job}")).await;
    assert!(page.contains("<b>0 of 1 scenarios accepted</b>"), "{page}");
    assert!(
        page.contains("<td class=\"fate bad\">rejected at format</td>"),
        "{page}"
    );
    let page = service.text(&format!("/jobs/{job}/proposals/0")).await;
    assert!(!page.contains("<script>"), "{page}");
    assert_eq!(
        page.matches(
            "<pre>&lt;script&gt;alert(&quot;owned&quot;)&lt;&#x2F;script&gt; is all I have</pre>"
        )
        .count(),
        2,
        "both attempts' replies, escaped: {page}"
    );
    assert!(
        page.contains("<h3>Attempt 2: <span class=\"bad\">rejected at format</span></h3>"),
        "{page}"
    );
}
