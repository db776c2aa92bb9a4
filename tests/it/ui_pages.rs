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
