//! `/metrics` in the Prometheus text format. Two sources: the store, read on
//! each scrape, whose gauges count the work of every process sharing the
//! database; and this process's own counters (model calls by role and
//! endpoint, tokens, latency, retries, waits on limits, items finished),
//! which count only the work done in this server process since it started.

use std::collections::BTreeMap;

use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};

use super::prometheus::{Exposition, Kind};
use super::{ApiError, AppState};
use crate::jobs::totals;
use crate::llm::telemetry::{self, EndpointSnapshot};

/// Said in every process counter's help, so nobody sums them across servers
/// thinking they are the database's totals.
const HERE: &str = "Counts this server process's work since it started (the sparring_jobs, \
                    sparring_items and sparring_judgments gauges count every process sharing the database).";

pub async fn metrics(State(state): State<AppState>) -> Result<Response, ApiError> {
    let mut page = Exposition::default();
    render_store(&state, &mut page).await?;
    render_process(&telemetry::snapshot(), &mut page);
    Ok((
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        page.finish(),
    )
        .into_response())
}

async fn render_store(state: &AppState, page: &mut Exposition) -> Result<(), ApiError> {
    let jobs = state.store.all_jobs().await?;
    let mut by_status: BTreeMap<&str, i64> = BTreeMap::new();
    // (job id, job name, status or judge, status) → count
    let mut items: Vec<(String, String, &str, i64)> = Vec::new();
    let mut queue: Vec<(String, String, i64)> = Vec::new();
    let mut judgments: Vec<(String, String, String, String, i64)> = Vec::new();
    for job in &jobs {
        *by_status.entry(job.status.as_str()).or_default() += 1;
        let counts = state.store.item_counts(job.id).await?;
        let id = job.id.to_string();
        for (status, n) in [
            ("done", counts.done),
            ("failed", counts.failed),
            ("pending", counts.pending),
            ("leased", counts.leased),
        ] {
            items.push((id.clone(), job.name.clone(), status, n));
        }
        queue.push((id.clone(), job.name.clone(), counts.pending));
        let mut outcomes: BTreeMap<(String, String), i64> = BTreeMap::new();
        for j in state.store.judgments_of_job(job.id).await? {
            *outcomes.entry((j.judge_name, j.status)).or_default() += 1;
        }
        for ((judge, status), n) in outcomes {
            judgments.push((id.clone(), job.name.clone(), judge, status, n));
        }
    }
    page.family(
        "sparring_jobs",
        Kind::Gauge,
        "Jobs in the database by status.",
    );
    for (status, n) in by_status {
        page.sample("sparring_jobs", &[("status", status)], n);
    }
    page.family(
        "sparring_items",
        Kind::Gauge,
        "Work items in the database by job and status: done items are stored conversations, \
         failed ones failed conversations.",
    );
    for (job, name, status, n) in &items {
        page.sample(
            "sparring_items",
            &[("job", job), ("name", name), ("status", status)],
            n,
        );
    }
    page.family(
        "sparring_queue_depth",
        Kind::Gauge,
        "Pending items per job, in the database.",
    );
    for (job, name, n) in &queue {
        page.sample("sparring_queue_depth", &[("job", job), ("name", name)], n);
    }
    page.family(
        "sparring_judgments",
        Kind::Gauge,
        "Judgments in the database of each job's conversations by judge and status \
         (ok, unparseable, failed).",
    );
    for (job, name, judge, status, n) in &judgments {
        page.sample(
            "sparring_judgments",
            &[
                ("job", job),
                ("name", name),
                ("judge", judge),
                ("status", status),
            ],
            n,
        );
    }
    page.family(
        "sparring_jobs_running_here",
        Kind::Gauge,
        "Jobs this server process is working now.",
    );
    let here = jobs.iter().filter(|j| state.runs.is_running(j.id)).count();
    page.sample("sparring_jobs_running_here", &[], here);
    Ok(())
}

/// This process's counters: finished items, then model-call telemetry.
fn render_process(endpoints: &[EndpointSnapshot], page: &mut Exposition) {
    for (family, what, items) in [
        (
            "sparring_conversations_total",
            "Conversations of generation jobs finished here, by outcome (completed: stored; failed: the item failed).",
            &totals::CONVERSATIONS,
        ),
        (
            "sparring_judging_items_total",
            "Items of judging jobs (one judge over one conversation or pair) finished here, by outcome.",
            &totals::JUDGING_ITEMS,
        ),
        (
            "sparring_synthesis_proposals_total",
            "Items of synthesis jobs (one proposal with its feedback retries) finished here, by outcome.",
            &totals::PROPOSALS,
        ),
    ] {
        page.family(family, Kind::Counter, &format!("{what} {HERE}"));
        let (completed, failed) = items.read();
        page.sample(family, &[("outcome", "completed")], completed);
        page.sample(family, &[("outcome", "failed")], failed);
    }

    let calls = "sparring_model_calls_total";
    page.family(
        calls,
        Kind::Counter,
        &format!(
            "Model calls by role, endpoint and outcome (ok, or the error class after retries). {HERE}"
        ),
    );
    for e in endpoints {
        for r in &e.roles {
            for &(outcome, n) in &r.outcomes {
                // Every role shows `ok`; error classes only once they happened.
                if n > 0 || outcome == telemetry::OK {
                    let labels = [
                        ("role", r.role),
                        ("endpoint", &e.endpoint),
                        ("outcome", outcome),
                    ];
                    page.sample(calls, &labels, n);
                }
            }
        }
    }

    let tokens = "sparring_model_tokens_total";
    page.family(
        tokens,
        Kind::Counter,
        &format!("Tokens of successful model calls by role, endpoint and kind (prompt, completion), as the server reported them. {HERE}"),
    );
    for e in endpoints {
        for r in &e.roles {
            for (kind, n) in [
                ("prompt", r.prompt_tokens),
                ("completion", r.completion_tokens),
            ] {
                page.sample(
                    tokens,
                    &[("role", r.role), ("endpoint", &e.endpoint), ("kind", kind)],
                    n,
                );
            }
        }
    }

    let latency = "sparring_model_latency_seconds";
    page.family(
        latency,
        Kind::Histogram,
        &format!("Model call latency by role and endpoint, retries and their backoff included, time waited for the endpoint's limits or a pause after a 429 left out. {HERE}"),
    );
    for e in endpoints {
        for r in &e.roles {
            page.histogram(
                latency,
                &[("role", r.role), ("endpoint", &e.endpoint)],
                &r.latency,
            );
        }
    }

    let retries = "sparring_retries_total";
    page.family(
        retries,
        Kind::Counter,
        &format!("HTTP attempts retried by endpoint and reason (429, 5xx, timeout, connection, malformed). {HERE}"),
    );
    for e in endpoints {
        for &(reason, n) in &e.retries {
            page.sample(retries, &[("endpoint", &e.endpoint), ("reason", reason)], n);
        }
    }

    let waits = "sparring_rate_limit_wait_seconds_total";
    page.family(
        waits,
        Kind::Counter,
        &format!("Time requests waited before being sent, by endpoint and limit: rate (requests/min, tokens/min or the in-flight cap) or pause (the endpoint paused after a 429). {HERE}"),
    );
    for e in endpoints {
        for (limit, waited) in [("rate", e.rate_wait), ("pause", e.pause_wait)] {
            page.sample_f64(
                waits,
                &[("endpoint", &e.endpoint), ("limit", limit)],
                waited.as_secs_f64(),
            );
        }
    }

    let in_flight = "sparring_model_requests_in_flight";
    page.family(
        in_flight,
        Kind::Gauge,
        "HTTP requests to each endpoint sent and not yet answered, from this server process.",
    );
    for e in endpoints {
        page.sample(in_flight, &[("endpoint", &e.endpoint)], e.in_flight);
    }
}
