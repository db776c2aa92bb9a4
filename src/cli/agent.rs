//! `sparring agent --config JOB.toml --bind HOST:PORT [--database URL]
//! [--token TOKEN | --no-auth]`:
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
use crate::server::agent_auth::{check_agent_bind, open_warning};

use super::{report_problems, EXIT_INVALID};

/// Who may call the agent server: `--token`, or `--no-auth` on purpose.
pub struct Access {
    pub token: Option<String>,
    pub no_auth: bool,
}

pub async fn agent(
    config_path: &Path,
    bind: &str,
    database: Option<&str>,
    access: Access,
) -> anyhow::Result<i32> {
    let addr: SocketAddr = match bind.parse() {
        Ok(addr) => addr,
        Err(_) => {
            eprintln!("--bind {bind} is not an address; use HOST:PORT, e.g. 127.0.0.1:8090");
            return Ok(EXIT_INVALID);
        }
    };
    if let Err(e) = check_agent_bind(addr, access.token.as_deref(), access.no_auth) {
        eprintln!("error: {e}");
        return Ok(EXIT_INVALID);
    }
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
    let ctx = super::context::context(&database).await?;
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
    if access.no_auth && !local.ip().is_loopback() {
        eprintln!("{}", open_warning(local));
    }
    eprintln!(
        "sparring agent '{}' (job {} in {database}; {concurrency} rollouts at once) serving NeMo \
         Gym's agent routes on http://{local}; Ctrl-C or SIGTERM stops it",
        agent.name(),
        agent.job().id,
    );
    println!("http://{local}");
    std::io::stdout().flush()?;
    let state = AgentState::new(agent.clone(), concurrency).with_token(access.token);
    serve_agent(listener, state).await?;
    agent.close().await?;
    ctx.store.close().await;
    eprintln!(
        "sparring agent stopped; its rollouts are job {}: sparring stats --job {} --database {database}",
        agent.job().id,
        agent.job().id
    );
    Ok(0)
}
