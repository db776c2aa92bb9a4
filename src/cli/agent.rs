//! `sparring agent --config JOB.toml --bind HOST:PORT [--database URL]`:
//! sparring as a NeMo Gym agent server for one job config. When it listens
//! it prints its address (`http://HOST:PORT`) on a line of its own on
//! stdout, for scripts; Ctrl-C or SIGTERM stops it after the rollouts in
//! flight.

use std::io::Write;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use anyhow::Context as _;

use crate::agent::{Agent, OpenError};
use crate::config;
use crate::server::agent::{serve_agent, AgentState};

use super::{report_problems, EXIT_INVALID};

pub async fn agent(config_path: &Path, bind: &str, database: Option<&str>) -> anyhow::Result<i32> {
    let addr: SocketAddr = match bind.parse() {
        Ok(addr) => addr,
        Err(_) => {
            eprintln!("--bind {bind} is not an address; use HOST:PORT, e.g. 127.0.0.1:8090");
            return Ok(EXIT_INVALID);
        }
    };
    let mut job = match config::load(config_path) {
        Ok(job) => job,
        Err(problems) => {
            report_problems(&problems);
            return Ok(EXIT_INVALID);
        }
    };
    if let Some(database) = database {
        job.database = database.to_string();
    }
    let database = job.database.clone();
    let concurrency = job.concurrency;
    let ctx = super::run::context(&database).await?;
    let agent = match Agent::open(&ctx, job).await {
        Ok(agent) => Arc::new(agent),
        Err(OpenError::Invalid(problems)) => {
            report_problems(&problems);
            ctx.store.close().await;
            return Ok(EXIT_INVALID);
        }
        Err(e) => {
            ctx.store.close().await;
            return Err(e.into());
        }
    };
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("cannot listen on {addr}"))?;
    let local = listener.local_addr()?;
    if !local.ip().is_loopback() {
        eprintln!(
            "note: {local} is not a loopback address and the agent server has no token (NeMo \
             Gym's client sends none): anyone who reaches it can run rollouts of this job"
        );
    }
    eprintln!(
        "sparring agent '{}' (job {} in {database}; {concurrency} rollouts at once) serving NeMo \
         Gym's agent routes on http://{local}; Ctrl-C or SIGTERM stops it",
        agent.name(),
        agent.job().id,
    );
    println!("http://{local}");
    std::io::stdout().flush()?;
    serve_agent(listener, AgentState::new(agent.clone(), concurrency)).await?;
    agent.close().await?;
    ctx.store.close().await;
    eprintln!(
        "sparring agent stopped; its rollouts are job {}: sparring stats --job {} --database {database}",
        agent.job().id,
        agent.job().id
    );
    Ok(0)
}
