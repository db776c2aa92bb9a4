//! A database made before the rename to `sparring` (version 0.1.0, when the
//! program and its default file had the old name) opens, migrates and reads
//! as any other: the migrations it was made with are unchanged byte for byte
//! (sqlx checks their checksums), and nothing stored names the program.
//!
//! `tests/data/before_rename/quickstart-0.1.0.sql` is `sqlite3 .dump` of the
//! quickstart's first three scenarios, one persona each, run by the binary of
//! the commit before the rename.

use sqlx::{Connection, Executor};

use crate::common::{sparring, text};

async fn restore(db: &std::path::Path) -> String {
    let url = format!("sqlite://{}?mode=rwc", db.display());
    let dump: &'static str = include_str!("../data/before_rename/quickstart-0.1.0.sql");
    let mut conn = sqlx::SqliteConnection::connect(&url).await.unwrap();
    conn.execute(sqlx::raw_sql(dump)).await.unwrap();
    conn.close().await.unwrap();
    format!("sqlite://{}", db.display())
}

#[tokio::test]
async fn a_database_from_before_the_rename_opens_and_its_job_reads_and_exports() {
    let dir = tempfile::tempdir().unwrap();
    let url = restore(&dir.path().join("before-rename.db")).await;

    let jobs = sparring(dir.path(), &["jobs", "--database", &url]);
    assert!(jobs.status.success(), "{}", text(&jobs.stderr));
    assert!(
        text(&jobs.stdout).contains("quickstart"),
        "{}",
        text(&jobs.stdout)
    );

    let stats = sparring(dir.path(), &["stats", "--job", "1", "--database", &url]);
    assert!(stats.status.success(), "{}", text(&stats.stderr));
    assert!(
        text(&stats.stdout)
            .lines()
            .any(|l| l.split_whitespace().eq(["stored", "3"])),
        "{}",
        text(&stats.stdout)
    );

    let out = dir.path().join("job1.jsonl");
    let export = sparring(
        dir.path(),
        &[
            "export",
            "--job",
            "1",
            "--format",
            "openai",
            "--database",
            &url,
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert!(export.status.success(), "{}", text(&export.stderr));
    let rows = std::fs::read_to_string(&out).unwrap();
    assert_eq!(rows.lines().count(), 3, "{rows}");

    // Every migration of this version is recorded as applied, and the ones the
    // old database had kept their checksums (a changed one refuses to open).
    let mut conn = sqlx::SqliteConnection::connect(&url).await.unwrap();
    let (applied,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM _sqlx_migrations WHERE success")
        .fetch_one(&mut conn)
        .await
        .unwrap();
    let shipped = std::fs::read_dir(crate::common::repo().join("migrations/sqlite"))
        .unwrap()
        .count() as i64;
    assert_eq!(applied, shipped);
}
