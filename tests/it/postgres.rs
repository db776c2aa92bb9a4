//! The Postgres database the integration tests use: a fresh one per test process,
//! created on the server `SPARRING_TEST_POSTGRES` names.
//!
//! A long-lived database outlives the code that wrote it: a branch that added a
//! migration leaves it applied there, and then every other checkout's migrator
//! refuses the database. A database of this process's own never holds a schema it
//! did not make. Databases left by earlier runs are dropped after a day.

use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

use sqlx::{AssertSqlSafe, Connection, PgConnection};

/// Prefix of every scratch database; the rest is `<unix seconds>_<pid>`.
const PREFIX: &str = "sparring_it_";

/// Scratch databases older than this are an earlier run's and are dropped.
const STALE_AFTER_SECS: u64 = 24 * 3600;

/// The server `SPARRING_TEST_POSTGRES` names, or `None` after saying that `test` is
/// skipped and why.
pub fn server(test: &str) -> Option<String> {
    let url = std::env::var("SPARRING_TEST_POSTGRES")
        .ok()
        .filter(|url| !url.is_empty());
    if url.is_none() {
        println!(
            "SKIPPED: {test} on Postgres: SPARRING_TEST_POSTGRES is not set (set it to a \
             postgres:// URL, e.g. postgres://postgres@127.0.0.1:5432/test)"
        );
    }
    url
}

/// This process's own database on that server, created the first time it is asked
/// for; `None` (after saying so) when no server is named.
pub fn database(test: &str) -> Option<String> {
    static OWN: OnceLock<String> = OnceLock::new();
    let server = server(test)?;
    Some(OWN.get_or_init(|| create_own(&server, "")).clone())
}

/// A database of its own on that server for a story whose jobs the others
/// must not see (one that lists, say, every NeMo Gym job of its database),
/// created at each call; `None` (after saying so) when no server is named.
pub fn separate_database(test: &str, tag: &str) -> Option<String> {
    let server = server(test)?;
    Some(create_own(&server, &format!("_{tag}")))
}

/// `url` (`postgres://…/DATABASE[?…]`) naming `database` instead.
pub fn with_database(url: &str, database: &str) -> String {
    let (scheme, rest) = url.split_once("://").expect("a postgres:// URL");
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let (authority, path) = rest.split_at(authority_end);
    let query = path.find('?').map_or("", |at| &path[at..]);
    format!("{scheme}://{authority}/{database}{query}")
}

/// Creates `sparring_it_<now>_<pid><suffix>` on `server`, after dropping stale ones.
/// Runs on a thread of its own so it can be called from inside any test's runtime.
fn create_own(server: &str, suffix: &str) -> String {
    let server = server.to_string();
    let suffix = suffix.to_string();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let now = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap()
                .as_secs();
            let name = format!("{PREFIX}{now}_{}{suffix}", std::process::id());
            let mut admin = PgConnection::connect(&server)
                .await
                .unwrap_or_else(|e| panic!("cannot connect to {server}: {e}"));
            drop_stale(&mut admin, now).await;
            sqlx::query(AssertSqlSafe(format!("CREATE DATABASE {name}")))
                .execute(&mut admin)
                .await
                .unwrap_or_else(|e| panic!("cannot create the scratch database {name}: {e}"));
            with_database(&server, &name)
        })
    })
    .join()
    .unwrap()
}

async fn drop_stale(admin: &mut PgConnection, now: u64) {
    let names: Vec<String> = sqlx::query_scalar(
        "SELECT datname FROM pg_database WHERE datname LIKE 'sparring\\_it\\_%'",
    )
    .fetch_all(&mut *admin)
    .await
    .unwrap();
    for name in names {
        let created = name[PREFIX.len()..]
            .split('_')
            .next()
            .and_then(|secs| secs.parse::<u64>().ok());
        if created.is_some_and(|secs| now.saturating_sub(secs) > STALE_AFTER_SECS) {
            // Best effort: another run may be dropping it too.
            let _ = sqlx::query(AssertSqlSafe(format!(
                "DROP DATABASE IF EXISTS {name} WITH (FORCE)"
            )))
            .execute(&mut *admin)
            .await;
        }
    }
}
