//! `sparring openenv --config JOB.toml --bind HOST:PORT [--database URL]
//! [--max-concurrent-envs N] [--session-timeout SECS]`: one job config's
//! simulated users and environment as an OpenEnv environment server
//! (docs/sessions.md). When it listens it prints its address
//! (`http://HOST:PORT`) on a line of its own on stdout, for scripts;
//! Ctrl-C or SIGTERM stops it.

use std::io::Write;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;

use crate::config;
use crate::server::openenv::{serve_openenv, OpenEnvState};
use crate::stepped::registry::{IDLE_SECS, MAX_SESSIONS};
use crate::stepped::{Host, Limits, SessionError, Sessions};

use super::{report_problems, EXIT_INVALID};

/// What `sparring openenv` is asked for.
pub struct OpenEnvArgs<'a> {
    pub config: &'a Path,
    pub bind: &'a str,
    pub database: Option<&'a str>,
    pub max_concurrent_envs: u64,
    pub session_timeout: u64,
}

pub async fn openenv(args: OpenEnvArgs<'_>) -> anyhow::Result<i32> {
    let addr: SocketAddr = match args.bind.parse() {
        Ok(addr) => addr,
        Err(_) => {
            eprintln!(
                "--bind {} is not an address; use HOST:PORT, e.g. 127.0.0.1:8000",
                args.bind
            );
            return Ok(EXIT_INVALID);
        }
    };
    for (flag, value, range) in [
        (
            "--max-concurrent-envs",
            args.max_concurrent_envs,
            MAX_SESSIONS,
        ),
        ("--session-timeout", args.session_timeout, IDLE_SECS),
    ] {
        if !range.contains(value) {
            eprintln!(
                "{flag} {value} is out of range; give {} to {}",
                range.min, range.max
            );
            return Ok(EXIT_INVALID);
        }
    }
    let mut job = match config::load(args.config) {
        Ok(job) => job,
        Err(problems) => {
            report_problems(&problems);
            return Ok(EXIT_INVALID);
        }
    };
    if let Some(database) = args.database {
        job.database = database.to_string();
    }
    let database = job.database.clone();
    let ctx = super::context::context(&database).await?;
    let host = match Host::open(&ctx, job).await {
        Ok(host) => Arc::new(host),
        Err(SessionError::Config(problems)) => {
            report_problems(&problems);
            ctx.store.close().await;
            return Ok(EXIT_INVALID);
        }
        Err(e) => {
            ctx.store.close().await;
            return Err(anyhow::anyhow!(e.message()));
        }
    };
    let limits = Limits {
        max_sessions: args.max_concurrent_envs as usize,
        idle: Duration::from_secs(args.session_timeout),
    };
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("cannot listen on {addr}"))?;
    let local = listener.local_addr()?;
    if !local.ip().is_loopback() {
        eprintln!(
            "note: {local} is not a loopback address and the OpenEnv server has no token \
             (OpenEnv's clients send none): anyone who reaches it can run episodes of this job"
        );
    }
    eprintln!(
        "sparring openenv '{}' (job {} in {database}; {} sessions at most, idle ones expire after \
         {} s) serving OpenEnv on http://{local} (WebSocket ws://{local}/ws); Ctrl-C or SIGTERM \
         stops it",
        host.name(),
        host.job().id,
        limits.max_sessions,
        limits.idle.as_secs(),
    );
    println!("http://{local}");
    std::io::stdout().flush()?;
    let state = OpenEnvState {
        host: host.clone(),
        sessions: Sessions::new(limits),
    };
    serve_openenv(listener, state).await?;
    if let Err(e) = host.close().await {
        eprintln!("warning: {}", e.message());
    }
    ctx.store.close().await;
    eprintln!(
        "sparring openenv stopped; its episodes are job {}: sparring stats --job {} --database \
         {database}",
        host.job().id,
        host.job().id
    );
    Ok(0)
}
