//! `sparring bench --latency-ms L --concurrency C --conversations N [--database URL] [--http2]
//! [--tpm N] [--rpm N]`, or `--capture-memory` (token capture's memory per conversation)

use std::time::Duration;

use crate::bench::{bench as run_bench, BenchOptions};
use crate::jobs::{Context, RunOptions};

/// Limits set on the policy's endpoint, whose use the bench reports.
pub struct Limits {
    pub tpm: Option<u32>,
    pub rpm: Option<u32>,
    /// `--agent`: the policy is a `responses_agent` the mock serves.
    pub agent: bool,
}

/// `sparring bench --capture-memory`: token capture's memory per
/// conversation in flight, for `conversations` conversations the shape of
/// the bench's retail ones with a prompt of a few thousand tokens.
pub fn capture_memory(conversations: u32) -> anyhow::Result<i32> {
    // About 90 KiB each with capture on, all held at once.
    const MOST: u32 = 20_000;
    if conversations > MOST {
        eprintln!(
            "--conversations {conversations}: --capture-memory holds every conversation at once \
             (about 90 KiB each with capture on); give at most {MOST}"
        );
        return Ok(super::EXIT_INVALID);
    }
    let shape = crate::bench::capture::CaptureShape {
        conversations: conversations as usize,
        generations: 8,
        first_prompt_tokens: 2_000,
        generation_tokens: 60,
        turn_tokens: 40,
    };
    eprintln!(
        "bench: token capture's memory, {} conversations of {} policy generations held at once \
         (prompts from {} tokens, {} generated each) …",
        shape.conversations, shape.generations, shape.first_prompt_tokens, shape.generation_tokens
    );
    let f = crate::bench::capture::capture_memory(shape);
    println!(
        "per conversation in flight, capture off   {:.1} KiB",
        f.off_kib
    );
    println!(
        "per conversation in flight, capture on    {:.1} KiB",
        f.on_kib
    );
    println!(
        "the token lists' own bytes                {:.1} KiB",
        f.token_bytes_kib
    );
    Ok(0)
}

pub async fn bench(
    latency_ms: u64,
    concurrency: usize,
    conversations: u32,
    database: Option<String>,
    http2: bool,
    limits: Limits,
) -> anyhow::Result<i32> {
    let dir = tempfile_dir()?;
    eprintln!(
        "bench: {conversations} conversations, concurrency {concurrency}, mock latency {latency_ms} ms, {}, {} …",
        database.as_deref().unwrap_or("fresh SQLite file"),
        if http2 { "HTTP/2" } else { "HTTP/1.1" }
    );
    if limits.agent {
        eprintln!("bench: the policy is a responses_agent the mock serves");
    }
    let database = database.unwrap_or_else(|| {
        format!(
            "sqlite://{}",
            dir.join(format!("bench-{}.db", crate::store::now_ms()))
                .display()
        )
    });
    // The bench talks to its own mock process, never an in-process one.
    let ctx = Context::new(crate::store::open(&database).await?, None);
    let options = RunOptions {
        // Progress goes to stderr; the figures are printed on stdout.
        progress: Some(super::progress::CliProgress::new(false, "")),
        ..RunOptions::default()
    };
    let f = run_bench(
        &ctx,
        &BenchOptions {
            exe: std::env::current_exe()?,
            latency: Duration::from_millis(latency_ms),
            concurrency,
            conversations,
            database,
            http2,
            workdir: dir.clone(),
            tokens_per_minute: limits.tpm,
            requests_per_minute: limits.rpm,
            agent: limits.agent,
        },
        &options,
    )
    .await?;
    let _ = std::fs::remove_dir_all(&dir);
    let opt =
        |v: Option<f64>, digits: usize| v.map_or("n/a".to_string(), |v| format!("{v:.digits$}"));
    println!("backend                      {}", f.backend);
    println!("protocol to the model        {}", f.protocol);
    println!(
        "latency / concurrency        {} ms / {}",
        f.latency_ms, f.concurrency
    );
    println!(
        "conversations / model calls  {} / {} in {:.2} s",
        f.conversations, f.model_calls, f.seconds
    );
    println!(
        "conversations/s              {:.1}",
        f.conversations_per_sec
    );
    println!("model calls/s                {:.0}", f.calls_per_sec);
    println!(
        "calls per conversation       {:.2}",
        f.calls_per_conversation
    );
    println!(
        "ideal conversations/s        {}",
        opt(f.ideal_conversations_per_sec, 1)
    );
    println!("ratio to ideal               {}", opt(f.ratio_to_ideal, 3));
    println!(
        "overhead per call p50 / p99  {:.2} / {:.2} ms",
        f.overhead_per_call_ms_p50, f.overhead_per_call_ms_p99
    );
    println!(
        "RSS baseline / peak          {:.1} / {:.1} MiB",
        f.rss_baseline_mib, f.rss_peak_mib
    );
    println!(
        "RSS per in-flight conv       {:.1} KiB (text {:.1} KiB, its own {:.1} KiB without the \
         shared system prompt; beyond its own text {:.1} KiB)",
        f.rss_per_in_flight_kib,
        f.text_per_conversation_kib,
        f.own_text_per_conversation_kib,
        f.rss_per_in_flight_beyond_text_kib
    );
    println!(
        "peak RSS by kind             anon {:.1}, file {:.1}, shmem {:.1} MiB (before: {:.1}, {:.1}, {:.1})",
        f.rss_peak.anon as f64 / 1024.0,
        f.rss_peak.file as f64 / 1024.0,
        f.rss_peak.shmem as f64 / 1024.0,
        f.rss_baseline.anon as f64 / 1024.0,
        f.rss_baseline.file as f64 / 1024.0,
        f.rss_baseline.shmem as f64 / 1024.0,
    );
    println!(
        "anon per in-flight conv      {:.1} KiB beyond its own text",
        f.anon_per_in_flight_beyond_text_kib
    );
    println!(
        "CPU per call                 {} µs orchestrator, {} µs mock server",
        opt(f.cpu_us_per_call, 0),
        opt(f.mock_cpu_us_per_call, 0)
    );
    let t = &f.timeline;
    println!(
        "setup / drain / report       {:.2} s / {:.2} s / {:.2} s",
        t.setup_secs, t.drain_secs, t.report_secs
    );
    println!(
        "generation                   {:.2} s, ratio to ideal {} (the run less its final report)",
        f.generation_seconds,
        opt(f.generation_ratio_to_ideal, 3)
    );
    println!(
        "slot occupancy               {:.3} (between the first and the last start)",
        t.slot_occupancy
    );
    println!(
        "steady model calls/s         {} (ratio to ideal {})",
        opt(t.steady_calls_per_sec, 0),
        opt(t.steady_ratio_to_ideal, 3)
    );
    for b in &f.budget {
        println!(
            "{:<28} {} of {} a minute over {} s of steady state; busiest 60 s window {:.3}",
            format!("{} used", b.limit_name),
            opt(b.steady_utilization, 3),
            b.limit,
            b.steady_secs,
            b.busiest_window
        );
    }
    let tail = &f.tail;
    for (name, split) in [
        ("all conversations", &tail.all),
        ("slowest 1%", &tail.slowest_1pct),
    ] {
        println!(
            "overhead per call, {:<17} {:.2} ms = {:.2} inside model calls beyond L + {:.2} between them \
             ({} conversations, {} of the first wave)",
            name,
            split.per_call_ms,
            split.in_calls_ms,
            split.between_calls_ms,
            split.conversations,
            split.first_wave
        );
    }
    let spread = |q: Option<[f64; 3]>| {
        q.map_or("n/a".to_string(), |[p50, p99, max]| {
            format!("p50 {p50:.2} / p99 {p99:.2} / max {max:.2} ms")
        })
    };
    println!(
        "mock's own time beyond L     {}",
        spread(tail.mock_excess_ms)
    );
    println!(
        "wait for a runtime thread    {}",
        spread(tail.sched_delay_ms)
    );
    match tail.tcp {
        Some(t) => println!(
            "TCP handshakes stalled       {} listen-queue overflows, {} drops, {} SYNs resent (whole machine)",
            t.listen_overflows, t.listen_drops, t.syn_retransmits
        ),
        None => println!("TCP handshakes stalled       n/a (no /proc/net/netstat)"),
    }
    println!("json {}", serde_json::to_string(&f)?);
    Ok(0)
}

fn tempfile_dir() -> anyhow::Result<std::path::PathBuf> {
    let dir = std::env::temp_dir().join(format!("sparring-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// What `sparring bench-openenv` is asked for.
pub struct OpenEnvArgs {
    pub addr: String,
    pub concurrency: usize,
    pub think_ms: u64,
    pub duration_secs: u64,
    pub action: String,
    pub reset: String,
    pub server_pid: Option<u32>,
}

/// `sparring bench-openenv`: OpenEnv's WebSocket protocol at C sessions, a
/// wait of L before each step; the figures on stdout.
pub async fn openenv(args: OpenEnvArgs) -> anyhow::Result<i32> {
    use crate::bench::openenv::{bench_openenv, OpenEnvBench};
    let json = |flag: &str, text: &str| match serde_json::from_str::<serde_json::Value>(text) {
        Ok(v) if v.is_object() => Ok(v),
        _ => Err(format!("{flag} {text:?} is not a JSON object")),
    };
    let (action, reset) = match (json("--action", &args.action), json("--reset", &args.reset)) {
        (Ok(a), Ok(r)) => (a, r),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("{e}");
            return Ok(super::EXIT_INVALID);
        }
    };
    eprintln!(
        "bench-openenv: {} sessions on ws://{}/ws, {} ms before each step, counting {} s …",
        args.concurrency, args.addr, args.think_ms, args.duration_secs
    );
    let report = bench_openenv(OpenEnvBench {
        addr: args.addr,
        concurrency: args.concurrency,
        think: Duration::from_millis(args.think_ms),
        duration: Duration::from_secs(args.duration_secs),
        reset,
        action,
        server_pid: args.server_pid,
    })
    .await?;
    let r = &report;
    println!(
        "steps counted                 {} in {:.1} s ({} episodes ended, {} errors)",
        r.steps, r.window_secs, r.episodes, r.errors
    );
    println!(
        "steps a second                {:.1} (ideal C / L = {:.1}; ratio {:.3})",
        r.steps_per_sec, r.ideal_steps_per_sec, r.ratio
    );
    println!(
        "step round trip, ms           p50 {:.2}  p90 {:.2}  p99 {:.2}  max {:.2}",
        r.step_ms.p50, r.step_ms.p90, r.step_ms.p99, r.step_ms.max
    );
    for (name, p) in [
        ("  that went on", &r.turn_ms),
        ("  that ended it", &r.end_ms),
    ] {
        println!(
            "{name:<30}p50 {:.2}  p90 {:.2}  p99 {:.2}  max {:.2}",
            p.p50, p.p90, p.p99, p.max
        );
    }
    println!(
        "reset round trip, ms          p50 {:.2}  p99 {:.2}",
        r.reset_ms.p50, r.reset_ms.p99
    );
    if let (Some(idle), Some(open), Some(per)) = (r.rss_idle_kib, r.rss_open_kib, r.per_session_kib)
    {
        println!("server memory, KiB            {idle} idle, {open} with every session open ({per:.1} a session)");
    }
    println!("json {}", serde_json::to_string(&report)?);
    Ok(0)
}
