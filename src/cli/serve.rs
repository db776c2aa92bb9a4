//! `usersim serve --database URL --bind ADDR [--token TOKEN]`

use std::net::SocketAddr;

use anyhow::Context;

use crate::server::{self, AppState};
use crate::store;

use super::EXIT_INVALID;

pub async fn serve(database: &str, bind: &str, token: Option<String>) -> anyhow::Result<i32> {
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
    let store = store::open(database).await?;
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("cannot listen on {addr}"))?;
    let local = listener.local_addr()?;
    let state = AppState::new(store, database, token);
    eprintln!(
        "usersim serving on http://{local} (database {database}; auth {}); Ctrl-C or SIGTERM stops it",
        if state.token.is_some() {
            "bearer token"
        } else {
            "off"
        }
    );
    server::serve(listener, state).await?;
    eprintln!(
        "usersim stopped: any jobs that were running here were cancelled and their items in flight \
         returned to pending; to finish them, start `usersim serve` again and POST \
         /v1/jobs/ID/resume, or run `usersim run --resume ID --database {database}`"
    );
    Ok(0)
}
