//! `usersim mock-llm --port P [--scenarios FILE]`

use std::net::SocketAddr;
use std::path::Path;

use anyhow::Context;

use crate::mock_llm::MockServer;
use crate::persona::load::load_scenarios;

use super::{report_problems, EXIT_INVALID};

pub async fn serve(host: &str, port: u16, scenarios: Option<&Path>) -> anyhow::Result<i32> {
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
    let server = MockServer::start(addr, scenarios)
        .await
        .with_context(|| format!("cannot listen on {addr}"))?;
    println!(
        "mock model server (a test double) at {} with {count} scenarios; models: mock-policy, mock-user, mock-judge. Ctrl-C stops it.",
        server.base_url()
    );
    tokio::signal::ctrl_c()
        .await
        .context("waiting for Ctrl-C")?;
    Ok(0)
}
