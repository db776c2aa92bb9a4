//! Opening a Postgres database: URL, the connection pool, and the embedded
//! migrations.

use std::borrow::Cow;
use std::str::FromStr;
use std::time::Duration;

use sqlx::migrate::{MigrateError, Migrator};
use sqlx::postgres::{PgConnectOptions, PgConnection, PgPool, PgPoolOptions};
use sqlx::Connection;

use crate::store::{migrations, StoreError};

/// Connections per process. A worker holds one only for a statement or a
/// short transaction (milliseconds), never while a conversation runs, so 16
/// serve hundreds of conversations in flight; and ten worker machines at 16
/// each still fit under Postgres's default `max_connections` of 100 with room
/// for the service and psql.
const POOL_SIZE: u32 = 16;
/// How long a statement waits for a free connection before it fails. Only
/// reached when the pool is exhausted by something stuck.
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(30);

/// Whether `url` names a Postgres database (`postgres://` or `postgresql://`).
pub fn is_postgres_url(url: &str) -> bool {
    url.starts_with("postgres://") || url.starts_with("postgresql://")
}

pub(super) async fn open(url: &str) -> Result<PgPool, StoreError> {
    if !is_postgres_url(url) {
        return Err(StoreError::UnsupportedUrl(url.to_string()));
    }
    let open_error = |source| StoreError::Open {
        url: without_password(url).into_owned(),
        source,
    };
    let options = PgConnectOptions::from_str(url)
        .map_err(open_error)?
        .application_name("sparring");

    // Migrate on a connection of its own, closed afterwards: the migrator
    // holds a session-level advisory lock while it works (so workers starting
    // at once take turns), and ending the session releases that lock even
    // when a migration fails half-way, which a pooled connection would not.
    let mut connection = PgConnection::connect_with(&options)
        .await
        .map_err(open_error)?;
    let migrated = migrate(&mut connection).await;
    if let Err(error) = connection.close().await {
        tracing::debug!(%error, "closing the migration connection");
    }
    migrated?;

    PgPoolOptions::new()
        .max_connections(POOL_SIZE)
        .acquire_timeout(ACQUIRE_TIMEOUT)
        .connect_with(options)
        .await
        .map_err(open_error)
}

/// Apply [`migrator`] on `connection`: what `Migrator::run` does once it has
/// a connection. `run` itself would make `open` a future that cannot be
/// spawned (its `Acquire` bound is asked of every lifetime, and rustc cannot
/// prove the future `Send`); sqlx exposes `run_direct` for exactly that case.
async fn migrate(connection: &mut PgConnection) -> Result<(), MigrateError> {
    migrator().run_direct(None, connection, false).await
}

/// The migrations of `migrations/postgres/`, embedded in the binary.
fn migrator() -> Migrator {
    let mut migrator = migrations::embedded!(
        "postgres": "0001_init", "0002_judgments", "0003_judgment_per_judge_name",
        "0004_user_flags", "0005_proposals", "0006_batches", "0007_message_tokens",
        "0008_job_personas",
        "0009_evaluations"
    );
    // On by default; said here because concurrent workers depend on it.
    migrator.set_locking(true);
    migrator
}

/// `url` with its password (in the user info or a `password=` parameter)
/// replaced by `***`, for error messages.
fn without_password(url: &str) -> Cow<'_, str> {
    let Some((scheme, rest)) = url.split_once("://") else {
        return Cow::Borrowed(url);
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(authority_end);
    let authority = match authority.rsplit_once('@') {
        Some((user_info, host)) => match user_info.split_once(':') {
            Some((user, _password)) => Cow::Owned(format!("{user}:***@{host}")),
            None => Cow::Borrowed(authority),
        },
        None => Cow::Borrowed(authority),
    };
    let path = match path.split_once('?') {
        Some((before, query)) => {
            let masked: Vec<Cow<'_, str>> = query
                .split('&')
                .map(|pair| match pair.split_once('=') {
                    Some(("password", _)) => Cow::Borrowed("password=***"),
                    _ => Cow::Borrowed(pair),
                })
                .collect();
            Cow::Owned(format!("{before}?{}", masked.join("&")))
        }
        None => Cow::Borrowed(path),
    };
    if matches!((&authority, &path), (Cow::Borrowed(_), Cow::Borrowed(_))) {
        return Cow::Borrowed(url);
    }
    Cow::Owned(format!("{scheme}://{authority}{path}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_masked_in_urls_shown_to_people() {
        assert_eq!(
            without_password("postgres://sparring:s3cret@db.example:5432/jobs"),
            "postgres://sparring:***@db.example:5432/jobs"
        );
        assert_eq!(
            without_password("postgresql://u@h/d?sslmode=disable&password=x"),
            "postgresql://u@h/d?sslmode=disable&password=***"
        );
        assert_eq!(
            without_password("postgres://postgres@127.0.0.1:5432/test"),
            "postgres://postgres@127.0.0.1:5432/test"
        );
        assert_eq!(without_password("postgres://h"), "postgres://h");
    }

    #[test]
    fn both_postgres_schemes_are_recognised() {
        assert!(is_postgres_url("postgres://h/d"));
        assert!(is_postgres_url("postgresql://h/d"));
        assert!(!is_postgres_url("sqlite://sparring.db"));
        assert!(!is_postgres_url("postgres:/h"));
    }
}
