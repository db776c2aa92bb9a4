//! Migrations embedded in the binary: each backend names its own files in
//! `migrations/<backend>/`, numbered `0001_…`, `0002_…` in order.

use std::borrow::Cow;

use sqlx::migrate::{Migration, MigrationType, Migrator};
use sqlx::SqlSafeStr;

/// The [`Migrator`] of `migrations/$backend/$file.sql` for each `$file`
/// (`NNNN_description`), versions 1, 2, … in the order given.
macro_rules! embedded {
    ($backend:literal: $($file:literal),+ $(,)?) => {
        $crate::store::migrations::migrator_of(&[$(
            (
                $file,
                include_str!(concat!(
                    env!("CARGO_MANIFEST_DIR"), "/migrations/", $backend, "/", $file, ".sql"
                )),
            )
        ),+])
    };
}
pub(crate) use embedded;

/// A migrator of `files`, each `(NNNN_description, SQL)`, versions 1, 2, …
/// in order; a migration's description is its file's name after `NNNN_`.
pub(crate) fn migrator_of(files: &[(&'static str, &'static str)]) -> Migrator {
    let migrations = files
        .iter()
        .zip(1..)
        .map(|(&(file, sql), version)| {
            let description = file.split_once('_').map_or(file, |(_, rest)| rest);
            Migration::new(
                version,
                Cow::Borrowed(description),
                MigrationType::Simple,
                sql.into_sql_str(),
                false,
            )
        })
        .collect();
    Migrator::with_migrations(migrations)
}

#[cfg(test)]
mod tests {
    #[test]
    fn migrations_are_numbered_in_order_and_described_by_their_file_names() {
        let migrator = embedded!("sqlite": "0001_init", "0002_judgments");
        let listed: Vec<(i64, &str)> = migrator
            .iter()
            .map(|m| (m.version, &*m.description))
            .collect();
        assert_eq!(listed, vec![(1, "init"), (2, "judgments")]);
    }
}
