//! `sparring mock-llm --port P [--scenarios FILE] [--latency-ms MS] [--latency-jitter-ms MS]
//! [--fault-rate R --faults 429,500,503,timeout,malformed,truncated]
//! [--batch-delay-ms MS] [--batch-fail-share S] [--batch-expire N,..] [--batch-cancel N,..]`

use std::net::SocketAddr;
use std::path::Path;

use anyhow::Context;

use crate::config::{MockConfig, MockFault};
use crate::mock_llm::MockServer;
use crate::persona::load::load_scenarios;

use super::{report_problems, EXIT_INVALID};

/// The mock's latency and fault knobs, as command-line flags.
#[derive(Debug, Clone, clap::Args)]
pub struct MockFlags {
    /// Delay added to every completion, in milliseconds.
    #[arg(long, default_value_t = 0)]
    latency_ms: u64,
    /// Extra random delay per completion, uniform in [0, this] milliseconds.
    #[arg(long, default_value_t = 0)]
    latency_jitter_ms: u64,
    /// Share of completions answered with one of --faults, between 0 and 1.
    #[arg(long, default_value_t = 0.0, value_parser = parse_fault_rate)]
    fault_rate: f64,
    /// Faults to inject, comma separated: 429, 500, 503, timeout, malformed, truncated.
    #[arg(long, value_delimiter = ',', value_parser = parse_fault)]
    faults: Vec<MockFault>,
    /// The Batch API: milliseconds a batch stays in progress before it answers.
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u64).range(0..=600_000))]
    batch_delay_ms: u64,
    /// The Batch API: share of batch requests that fail, between 0 and 1.
    #[arg(long, default_value_t = 0.0, value_parser = parse_fault_rate)]
    batch_fail_share: f64,
    /// The Batch API: batches (1 = the first created) that expire half answered, comma separated.
    #[arg(long, value_delimiter = ',', value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    batch_expire: Vec<u64>,
    /// The Batch API: batches that are cancelled, comma separated.
    #[arg(long, value_delimiter = ',', value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    batch_cancel: Vec<u64>,
}

fn parse_fault(s: &str) -> Result<MockFault, String> {
    MockFault::parse(s.trim()).ok_or_else(|| {
        format!(
            "'{}' is not a mock fault; use one of {}",
            s.trim(),
            MockFault::NAMES.join(", ")
        )
    })
}

fn parse_fault_rate(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(rate) if (0.0..=1.0).contains(&rate) => Ok(rate),
        _ => Err(format!("'{s}' is not a rate; use a number between 0 and 1")),
    }
}

impl MockFlags {
    fn config(&self) -> MockConfig {
        MockConfig {
            latency_ms: self.latency_ms,
            latency_jitter_ms: self.latency_jitter_ms,
            fault_rate: self.fault_rate,
            faults: self.faults.clone(),
            batch_completion_delay_ms: self.batch_delay_ms,
            batch_fail_share: self.batch_fail_share,
            batch_expire: self.batch_expire.clone(),
            batch_cancel: self.batch_cancel.clone(),
            announced_tokens_per_minute: None,
        }
    }

    fn describe(&self) -> String {
        let mut parts = Vec::new();
        if self.latency_ms > 0 || self.latency_jitter_ms > 0 {
            parts.push(format!(
                "latency {} ms + up to {} ms",
                self.latency_ms, self.latency_jitter_ms
            ));
        }
        if self.fault_rate > 0.0 {
            let names: Vec<_> = self.faults.iter().map(|f| f.name()).collect();
            parts.push(format!(
                "faults {} at rate {}",
                names.join(","),
                self.fault_rate
            ));
        }
        if self.batch_delay_ms > 0
            || self.batch_fail_share > 0.0
            || !self.batch_expire.is_empty()
            || !self.batch_cancel.is_empty()
        {
            parts.push(format!(
                "batches answer after {} ms, {} of requests fail, expire {:?}, cancel {:?}",
                self.batch_delay_ms, self.batch_fail_share, self.batch_expire, self.batch_cancel
            ));
        }
        if parts.is_empty() {
            "no injected latency or faults".to_string()
        } else {
            parts.join("; ")
        }
    }
}

pub async fn serve(
    host: &str,
    port: u16,
    scenarios: Option<&Path>,
    flags: &MockFlags,
) -> anyhow::Result<i32> {
    if flags.fault_rate > 0.0 && flags.faults.is_empty() {
        eprintln!(
            "--fault-rate {} needs --faults: a comma list of {}",
            flags.fault_rate,
            MockFault::NAMES.join(", ")
        );
        return Ok(EXIT_INVALID);
    }
    let scenarios = match scenarios.map(load_scenarios) {
        None => Vec::new(),
        Some(Ok(s)) => s,
        Some(Err(problems)) => {
            report_problems(&problems);
            return Ok(EXIT_INVALID);
        }
    };
    let addr: SocketAddr = format!("{host}:{port}")
        .parse()
        .with_context(|| format!("'{host}:{port}' is not an address"))?;
    let count = scenarios.len();
    let server = MockServer::start(addr, scenarios, flags.config())
        .await
        .with_context(|| format!("cannot listen on {addr}"))?;
    println!(
        "mock model server (a test double) at {} with {count} scenarios; models: mock-policy, mock-user, mock-judge; {}. Ctrl-C stops it.",
        server.base_url(),
        flags.describe()
    );
    tokio::signal::ctrl_c()
        .await
        .context("waiting for Ctrl-C")?;
    Ok(0)
}
