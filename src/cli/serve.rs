//! `sparring serve --database URL --bind ADDR [--token TOKEN] [--data-root DIR]
//! [--endpoints FILE] [--allow-url PATTERN]...`

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;

use crate::config::{Boundary, EgressAllowlist, OperatorEndpoints};
use crate::server::{self, AppState};
use crate::stepped::registry::{IDLE_SECS, MAX_SESSIONS};
use crate::stepped::Limits;
use crate::store;

use super::{report_problems, EXIT_INVALID};

/// What submitted configs may reach, as given on the command line.
pub struct ServeBoundary {
    pub data_root: PathBuf,
    pub endpoints: Option<PathBuf>,
    /// `--allow-url` patterns; none: any URL.
    pub allow_url: Vec<String>,
    /// `--max-sessions`: stepped sessions open at once.
    pub max_sessions: u64,
    /// `--session-timeout`: idle seconds before a stepped session expires.
    pub session_timeout: u64,
}

pub async fn serve(
    database: &str,
    bind: &str,
    token: Option<String>,
    boundary: ServeBoundary,
) -> anyhow::Result<i32> {
    let addr: SocketAddr = match bind.parse() {
        Ok(addr) => addr,
        Err(_) => {
            eprintln!("--bind {bind} is not an address; use HOST:PORT, e.g. 127.0.0.1:8080");
            return Ok(EXIT_INVALID);
        }
    };
    if let Err(e) = server::check_bind(addr, token.as_deref()) {
        eprintln!("error: {e}");
        return Ok(EXIT_INVALID);
    }
    if !boundary.data_root.is_dir() {
        eprintln!(
            "--data-root {} is not a folder; give the folder whose files submitted configs may use",
            boundary.data_root.display()
        );
        return Ok(EXIT_INVALID);
    }
    for (flag, value, range) in [
        ("--max-sessions", boundary.max_sessions, MAX_SESSIONS),
        ("--session-timeout", boundary.session_timeout, IDLE_SECS),
    ] {
        if !range.contains(value) {
            eprintln!(
                "{flag} {value} is out of range; give {} to {}",
                range.min, range.max
            );
            return Ok(EXIT_INVALID);
        }
    }
    let limits = Limits {
        max_sessions: boundary.max_sessions as usize,
        idle: std::time::Duration::from_secs(boundary.session_timeout),
    };
    let operators = match &boundary.endpoints {
        None => OperatorEndpoints::default(),
        Some(path) => match OperatorEndpoints::load(path) {
            Ok(operators) => operators,
            Err(problems) => {
                report_problems(&problems);
                return Ok(EXIT_INVALID);
            }
        },
    };
    let egress = match EgressAllowlist::parse(&boundary.allow_url) {
        Ok(egress) => egress,
        Err(errors) => {
            for error in errors {
                eprintln!("error: {error}");
            }
            return Ok(EXIT_INVALID);
        }
    };
    let boundary = Boundary::new(boundary.data_root, operators).with_egress(egress);
    let store = store::open(database).await?;
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("cannot listen on {addr}"))?;
    let local = listener.local_addr()?;
    let data_root = boundary.data_root().display().to_string();
    let operators = boundary.operators.names();
    let egress = boundary.egress.describe();
    let mut state = AppState::new(store, database, token);
    state.boundary = Arc::new(boundary);
    state.sessions = server::sessions::SessionService::new(limits);
    eprintln!(
        "sparring serving on http://{local} (database {database}; data root {data_root}; operator \
         endpoints: {operators}; submitted configs may reach {egress}; auth {}); Ctrl-C or \
         SIGTERM stops it",
        if state.token.is_some() {
            "bearer token"
        } else {
            "off"
        }
    );
    server::serve(listener, state).await?;
    eprintln!(
        "sparring stopped: any jobs that were running here were cancelled and their items in flight \
         returned to pending; to finish them, start `sparring serve` again and POST \
         /v1/jobs/ID/resume, or run `sparring run --resume ID --database {database}`"
    );
    Ok(0)
}
