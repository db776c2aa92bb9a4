//! The benchmark harness behind `sparring bench`: a generated job against the
//! mock model server (its own process) with latency L and concurrency C, and the
//! figures issue 4's targets are judged by. Figures are printed, never asserted.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::config;
use crate::jobs::{run, Context, RunError, RunOptions};

mod budget;
pub mod capture;
mod memory;
mod netstat;
pub mod openenv;
mod sched_probe;
mod tail;

pub use budget::BudgetUse;
pub use memory::Rss;
use memory::{cpu_secs, peak_until, rss_now, rss_peak_total, Sampler};
pub use netstat::TcpStalls;
pub use tail::{OverheadSplit, TailBreakdown};

#[derive(Debug, Clone)]
pub struct BenchOptions {
    /// The `sparring` binary, run as `mock-llm` in its own process so that the
    /// memory measured is the orchestrator's alone.
    pub exe: PathBuf,
    pub latency: Duration,
    pub concurrency: usize,
    pub conversations: u32,
    /// `sqlite://…` or `postgres://…`: the database of the context's store.
    pub database: String,
    /// The endpoints speak HTTP/2 to the mock (`http2 = true`).
    pub http2: bool,
    /// Where the generated config goes.
    pub workdir: PathBuf,
    /// Limits of the policy's endpoint, whose use the bench reports.
    pub tokens_per_minute: Option<u32>,
    pub requests_per_minute: Option<u32>,
    /// The policy is a `responses_agent` the mock serves.
    pub agent: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct BenchFigures {
    pub backend: String,
    /// `HTTP/1.1` or `HTTP/2`, between the orchestrator and the mock.
    pub protocol: &'static str,
    pub latency_ms: u64,
    pub concurrency: usize,
    pub conversations: i64,
    pub model_calls: i64,
    pub seconds: f64,
    pub conversations_per_sec: f64,
    pub calls_per_sec: f64,
    pub calls_per_conversation: f64,
    /// C ÷ (calls per conversation × L); `None` at L = 0.
    pub ideal_conversations_per_sec: Option<f64>,
    pub ratio_to_ideal: Option<f64>,
    /// Per call: (conversation time − calls × L) ÷ calls, over conversations.
    pub overhead_per_call_ms_p50: f64,
    pub overhead_per_call_ms_p99: f64,
    pub rss_baseline_mib: f64,
    /// The kernel's high-water mark, over the whole run and its report.
    pub rss_peak_mib: f64,
    /// (Peak during generation − baseline) ÷ C, sampled every 10 ms: the
    /// conversations' memory, not that of the job's summary after them.
    pub rss_per_in_flight_kib: f64,
    /// RSS by kind (KiB) before the run and at each kind's sampled peak
    /// while conversations ran.
    pub rss_baseline: Rss,
    pub rss_peak: Rss,
    /// Anonymous memory (heap and stacks) per in-flight conversation,
    /// beyond its own text: what conversations cost, without the binary's
    /// code pages or other file-backed mappings.
    pub anon_per_in_flight_beyond_text_kib: f64,
    /// Average message text of a conversation (content + tool arguments).
    pub text_per_conversation_kib: f64,
    /// Of that, the text a conversation holds itself: all but the system
    /// prompt, which is the job's and shared by every conversation.
    pub own_text_per_conversation_kib: f64,
    /// RSS per in-flight conversation less its own text (not the shared
    /// system prompt: a conversation does not hold a copy of it).
    pub rss_per_in_flight_beyond_text_kib: f64,
    /// CPU time per model call: the orchestrator's, and the mock server's.
    /// Less sensitive than wall time to other load on the machine.
    pub cpu_us_per_call: Option<f64>,
    pub mock_cpu_us_per_call: Option<f64>,
    /// Where the wall time went; see [`Timeline`].
    pub timeline: Timeline,
    /// Until the last conversation finished (the run less its final
    /// report), and the ratio to the ideal over that time.
    pub generation_seconds: f64,
    pub generation_ratio_to_ideal: Option<f64>,
    /// How much of each limit set with `--tpm` / `--rpm` the run used, as the
    /// mock counted it.
    pub budget: Vec<BudgetUse>,
    /// Where the overhead per call went, and what may have caused its tail.
    pub tail: TailBreakdown,
}

/// The run's wall time split into setup (before the first conversation
/// starts), the steady state (every slot refilled as soon as it frees), the
/// drain (after the last conversation starts, slots go idle one by one) and
/// the report (after the last conversation finished: the last commit and the
/// job's summary, which reads every stored message's latency).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Timeline {
    pub setup_secs: f64,
    pub drain_secs: f64,
    pub report_secs: f64,
    /// Conversation time ÷ (C × time) between the first and the last start.
    pub slot_occupancy: f64,
    /// Model calls per second once the first wave has turned over, until the
    /// last start (each conversation's calls counted evenly over its span);
    /// `None` when the run is too short to have one. Calls, not conversations:
    /// items start in a planned order (rounds, longest first within each, and
    /// the tail longest first), so the conversations that finish in a window
    /// are not a fair sample of lengths, while a call is a call.
    pub steady_calls_per_sec: Option<f64>,
    /// Of `steady_calls_per_sec` to the ideal C ÷ L.
    pub steady_ratio_to_ideal: Option<f64>,
}

impl Timeline {
    /// `spans` are (started, finished, model calls), times in ms since the
    /// epoch; `t0` is when the run was asked for, `end` when it returned.
    fn of(spans: &[(i64, i64, i64)], t0: i64, end: i64, concurrency: usize) -> Timeline {
        let (Some(first), Some(last), Some(finish)) = (
            spans.iter().map(|s| s.0).min(),
            spans.iter().map(|s| s.0).max(),
            spans.iter().map(|s| s.1).max(),
        ) else {
            return Timeline::default();
        };
        let busy: i64 = spans
            .iter()
            .map(|&(s, f, _)| (f.min(last) - s.max(first)).max(0))
            .sum();
        let window = (last - first).max(1);
        let mean = spans.iter().map(|&(s, f, _)| f - s).sum::<i64>() as f64 / spans.len() as f64;
        // After two mean conversation lengths the first wave, which all
        // started together, has spread out and finishes at the steady rate.
        let from = first + (2.0 * mean) as i64;
        let steady = (last - from > 1000).then(|| {
            let calls: f64 = spans
                .iter()
                .map(|&(s, f, calls)| {
                    let overlap = (f.min(last) - s.max(from)).max(0) as f64;
                    calls as f64 * overlap / (f - s).max(1) as f64
                })
                .sum();
            calls * 1000.0 / (last - from) as f64
        });
        Timeline {
            setup_secs: (first - t0) as f64 / 1000.0,
            drain_secs: (finish - last) as f64 / 1000.0,
            report_secs: (end - finish).max(0) as f64 / 1000.0,
            slot_occupancy: busy as f64 / (concurrency as f64 * window as f64),
            steady_calls_per_sec: steady,
            steady_ratio_to_ideal: None,
        }
    }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

fn config_text(
    o: &BenchOptions,
    database: &str,
    repo: &Path,
    personas: &Path,
    mock_url: &str,
) -> String {
    let samples = o.conversations.div_ceil(27).max(1);
    let in_flight = o.concurrency * 2 + 16;
    let mut limits = String::new();
    if let Some(tpm) = o.tokens_per_minute {
        limits.push_str(&format!("tokens_per_minute = {tpm}\n"));
    }
    if let Some(rpm) = o.requests_per_minute {
        limits.push_str(&format!("requests_per_minute = {rpm}\n"));
    }
    format!(
        r#"name = "bench-{stamp}"
seed = 1
database = "{database}"
concurrency = {c}
max_turns = 12
lease_secs = 600.0

[circuit_breaker]
window = 1000

[endpoints.policy]
base_url = "{mock_url}"
model = "mock-policy"
max_in_flight = {in_flight}
timeout_secs = 60.0
max_retries = 0
http2 = {http2}
{limits}
[endpoints.user]
base_url = "{mock_url}"
model = "mock-user"
max_in_flight = {in_flight}
timeout_secs = 60.0
max_retries = 0
http2 = {http2}

[roles]
policy = "policy"
user = "user"

[user_simulator]
template = "{repo}/prompts/user_simulator.tera"

[policy]
template = "{repo}/prompts/policies/default.tera"
{agent}
[environment]
name = "builtin:retail"

[dataset]
scenarios = "{repo}/data/retail/scenarios.jsonl"
personas = "{personas}"
samples_per_scenario = {samples}
personas_per_scenario = 1
"#,
        stamp = crate::store::now_ms(),
        agent = if o.agent {
            "kind = \"responses_agent\"\n[policy.responses_agent]\npath = \"/responses\"\n"
        } else {
            ""
        },
        c = o.concurrency,
        http2 = o.http2,
        repo = repo.display(),
        personas = personas.display(),
    )
}

/// The mock model server in a child process; killed when dropped.
struct MockProcess {
    child: std::process::Child,
    url: String,
}

impl MockProcess {
    fn start(exe: &Path, scenarios: &Path, latency: Duration) -> std::io::Result<MockProcess> {
        use std::io::{BufRead, BufReader};
        let mut child = std::process::Command::new(exe)
            .args(["mock-llm", "--port", "0", "--latency-ms"])
            .arg(latency.as_millis().to_string())
            .arg("--scenarios")
            .arg(scenarios)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()?;
        let mut line = String::new();
        if let Some(out) = child.stdout.take() {
            BufReader::new(out).read_line(&mut line)?;
        }
        let url = line
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .map(str::to_string);
        match url {
            Some(url) => Ok(MockProcess { child, url }),
            None => {
                let _ = child.kill();
                Err(std::io::Error::other(format!(
                    "the mock model server did not say where it listens: {line:?}"
                )))
            }
        }
    }
}

impl MockProcess {
    /// What the mock counted (`/mock/stats`).
    async fn stats(&self) -> Result<crate::mock_llm::stats::MockStats, String> {
        // The bench reads its own mock process's counters: one GET, no model
        // call, so not through llm::transport.
        crate::llm::transport::install_crypto_provider();
        #[allow(clippy::disallowed_types)]
        let client = reqwest::Client::new();
        let response = client
            .get(format!(
                "{}/mock/stats",
                self.url.trim_end_matches('/').trim_end_matches("/v1")
            ))
            .send()
            .await
            .map_err(|e| e.to_string())?;
        let body = response.bytes().await.map_err(|e| e.to_string())?;
        serde_json::from_slice(&body).map_err(|e| e.to_string())
    }
}

impl Drop for MockProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Run the benchmark in `ctx`'s store (opened from `o.database`), with
/// `options` as the job's run options (its progress, typically).
pub async fn bench(
    ctx: &Context,
    o: &BenchOptions,
    options: &RunOptions,
) -> Result<BenchFigures, RunError> {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let scenarios = repo.join("data/retail/scenarios.jsonl");
    let mock = MockProcess::start(&o.exe, &scenarios, o.latency).map_err(|e| {
        RunError::Invalid(vec![config::Problem::in_file(
            &o.exe,
            format!("cannot start the mock model server: {e}"),
        )])
    })?;
    let database = o.database.clone();
    let path = o.workdir.join("bench.toml");
    let text = config_text(
        o,
        &database,
        repo,
        &repo.join("personas/retired_teacher.toml"),
        &mock.url,
    );
    let write = crate::export::file_set::write_file(&path, |out| out.write_all(text.as_bytes()));
    write.map_err(|e| {
        RunError::Invalid(vec![config::Problem::in_file(
            &path,
            format!("cannot write: {e}"),
        )])
    })?;
    let job = config::load(&path).map_err(RunError::Invalid)?;
    let baseline = rss_now();
    let sampler = Sampler::start(std::time::Duration::from_millis(10));
    let mock_pid = mock.child.id().to_string();
    let cpu_before = cpu_secs("self").zip(cpu_secs(&mock_pid));
    let tcp_before = TcpStalls::now();
    let probe = sched_probe::SchedProbe::start();
    let started = Instant::now();
    let t0 = crate::store::now_ms();
    let report = run(ctx, &job, options).await?;
    let seconds = started.elapsed().as_secs_f64();
    let end = crate::store::now_ms();
    let peak = rss_peak_total();
    let samples = sampler.stop();
    let cpu_after = cpu_secs("self").zip(cpu_secs(&mock_pid));
    let sched_delays = probe.stop().await;
    let tcp = TcpStalls::now().zip(tcp_before).map(|(a, b)| a.since(b));
    let mock_stats = mock.stats().await.map_err(|e| {
        RunError::Invalid(vec![config::Problem::in_file(
            &o.exe,
            format!("cannot read the mock model server's counts: {e}"),
        )])
    })?;

    let store = &ctx.store;
    let latency_ms = o.latency.as_millis() as f64;
    let mut overheads = Vec::new();
    let mut text_bytes = 0usize;
    let mut shared_bytes = 0usize;
    let mut spans = Vec::new();
    let mut times = Vec::new();
    let mut after = 0;
    loop {
        let page = store.conversations_page(report.job.id, after, 50).await?;
        let Some(last) = page.last() else { break };
        after = last.conversation.id;
        for c in &page {
            let calls: i64 = c.usage.iter().map(|u| u.calls).sum();
            spans.push((c.conversation.started_at, c.conversation.finished_at, calls));
            times.push(tail::ConversationTimes {
                started: c.conversation.started_at,
                finished: c.conversation.finished_at,
                calls,
                call_ms: c.messages.iter().filter_map(|m| m.latency_ms).sum(),
            });
            let elapsed = (c.conversation.finished_at - c.conversation.started_at) as f64;
            if calls > 0 {
                overheads.push((elapsed - calls as f64 * latency_ms).max(0.0) / calls as f64);
            }
            for m in &c.messages {
                let bytes =
                    m.content.len() + m.tool_calls.as_ref().map_or(0, |t| t.to_string().len());
                text_bytes += bytes;
                if m.role == "system" {
                    shared_bytes += bytes;
                }
            }
        }
    }
    overheads.sort_by(f64::total_cmp);
    let conversations = report.summary.conversations;
    let model_calls: i64 = report.summary.usage.iter().map(|u| u.calls).sum();
    let per_conversation = model_calls as f64 / conversations.max(1) as f64;
    let ideal =
        (latency_ms > 0.0).then(|| o.concurrency as f64 / (per_conversation * latency_ms / 1000.0));
    let conversations_per_sec = conversations as f64 / seconds;
    let in_flight = o.concurrency.min(conversations.max(1) as usize) as f64;
    let generation_end = spans.iter().map(|s| s.1).max().unwrap_or(end);
    let last_start = spans.iter().map(|s| s.0).max().unwrap_or(end);
    let budget = budget::uses(
        &mock_stats,
        o.tokens_per_minute,
        o.requests_per_minute,
        u64::try_from(last_start / 1000).unwrap_or(0),
    );
    let (all, slowest_1pct) = tail::split(&times, latency_ms);
    let excess = |p| mock_stats.excess_ms_percentile(p);
    let tail = TailBreakdown {
        all,
        slowest_1pct,
        mock_excess_ms: excess(50.0)
            .zip(excess(99.0))
            .zip(excess(100.0))
            .map(|((a, b), c)| [a, b, c]),
        sched_delay_ms: tail::quantiles_ms(&sched_delays),
        tcp,
    };
    let peaks = peak_until(&samples, generation_end);
    let per_in_flight = peaks.total.saturating_sub(baseline.total) as f64 / in_flight;
    let text_kib = text_bytes as f64 / 1024.0 / conversations.max(1) as f64;
    let own_text_kib = (text_bytes - shared_bytes) as f64 / 1024.0 / conversations.max(1) as f64;
    let per_call = |secs: f64| secs * 1e6 / model_calls.max(1) as f64;
    let cpu = cpu_before.zip(cpu_after);
    let mut timeline = Timeline::of(&spans, t0, end, o.concurrency);
    let generation_seconds = seconds - timeline.report_secs;
    // The ideal in calls: every slot always waiting on one call of L.
    let ideal_calls = (latency_ms > 0.0).then(|| o.concurrency as f64 * 1000.0 / latency_ms);
    timeline.steady_ratio_to_ideal = timeline
        .steady_calls_per_sec
        .zip(ideal_calls)
        .map(|(s, i)| s / i);
    Ok(BenchFigures {
        backend: if database.starts_with("postgres") {
            "postgres"
        } else {
            "sqlite"
        }
        .into(),
        protocol: if o.http2 { "HTTP/2" } else { "HTTP/1.1" },
        latency_ms: o.latency.as_millis() as u64,
        concurrency: o.concurrency,
        conversations,
        model_calls,
        seconds,
        conversations_per_sec,
        calls_per_sec: model_calls as f64 / seconds,
        calls_per_conversation: per_conversation,
        ideal_conversations_per_sec: ideal,
        ratio_to_ideal: ideal.map(|i| conversations_per_sec / i),
        overhead_per_call_ms_p50: percentile(&overheads, 50.0),
        overhead_per_call_ms_p99: percentile(&overheads, 99.0),
        rss_baseline_mib: baseline.total as f64 / 1024.0,
        rss_peak_mib: peak as f64 / 1024.0,
        rss_per_in_flight_kib: per_in_flight,
        text_per_conversation_kib: text_kib,
        own_text_per_conversation_kib: own_text_kib,
        rss_per_in_flight_beyond_text_kib: per_in_flight - own_text_kib,
        anon_per_in_flight_beyond_text_kib: peaks.anon.saturating_sub(baseline.anon) as f64
            / in_flight
            - own_text_kib,
        rss_baseline: baseline,
        rss_peak: peaks,
        cpu_us_per_call: cpu.map(|((s0, _), (s1, _))| per_call(s1 - s0)),
        mock_cpu_us_per_call: cpu.map(|((_, m0), (_, m1))| per_call(m1 - m0)),
        generation_seconds,
        generation_ratio_to_ideal: ideal
            .map(|i| conversations as f64 / generation_seconds.max(f64::MIN_POSITIVE) / i),
        timeline,
        budget,
        tail,
    })
}
