//! The SQLite store: one database file in WAL mode with one writer.
//!
//! Every write goes through a pool of exactly one connection, so writers of
//! this process queue there (in order) instead of fighting over SQLITE_BUSY,
//! and every multi-statement write begins IMMEDIATE, taking the write lock up
//! front so it can never deadlock with another process upgrading a read.
//! Reads use a small pool of read-only connections, which WAL lets run
//! alongside the writer.

mod connect;
mod conversations;
mod items;
mod jobs;
mod judgments;

// Children read rows with the shared decoders as `super::decode`.
use super::decode;
use async_trait::async_trait;
use sqlx::sqlite::SqlitePool;

use crate::store::{
    ConversationKey, ItemCounts, ItemRow, JobRow, JobStatus, JobSummary, JudgeCallRow, JudgmentRow,
    LatencyHistogram, NewConversation, NewItem, NewJob, NewJudgment, Store, StoreError,
    StoredConversation,
};

/// Starts every write transaction.
const BEGIN_WRITE: &str = "BEGIN IMMEDIATE";

/// Most parameters one statement may bind: SQLITE_MAX_VARIABLE_NUMBER of the
/// bundled SQLite (3.32 and later).
const MAX_BOUND_PARAMETERS: usize = 32_766;

/// How many rows of `parameters_per_row` bound parameters one INSERT may carry.
fn rows_per_statement(parameters_per_row: usize) -> usize {
    (MAX_BOUND_PARAMETERS / parameters_per_row.max(1)).max(1)
}

/// Most rows in one multi-row INSERT of a conversation's rows.
const MAX_ROWS_PER_INSERT: usize = 64;

/// `rows` in chunks whose sizes are powers of two, largest first (at most
/// [`MAX_ROWS_PER_INSERT`] and what the parameter limit allows). Every
/// distinct row count is a distinct statement that the connection prepares
/// and caches: one statement per conversation, sized to its message count,
/// filled the writer's statement cache with ~100 large programs over a long
/// job (2 MB); with chunk sizes 1, 2, 4 … 64 there are seven per table.
fn power_of_two_chunks<T>(rows: &[T], parameters_per_row: usize) -> Vec<&[T]> {
    let most = rows_per_statement(parameters_per_row).min(MAX_ROWS_PER_INSERT);
    let most = 1usize << most.ilog2();
    let mut chunks = Vec::new();
    let mut rest = rows;
    while !rest.is_empty() {
        let size = most.min(1usize << rest.len().ilog2());
        let (chunk, tail) = rest.split_at(size);
        chunks.push(chunk);
        rest = tail;
    }
    chunks
}

/// `head`, then `rows` copies of the placeholder tuple `row` separated by
/// commas, then `tail`. Only placeholders are spliced in, never values.
fn multi_row_sql(head: &str, row: &str, rows: usize, tail: &str) -> String {
    let mut sql = String::with_capacity(head.len() + rows * (row.len() + 2) + tail.len());
    sql.push_str(head);
    for n in 0..rows {
        if n > 0 {
            sql.push_str(", ");
        }
        sql.push_str(row);
    }
    sql.push_str(tail);
    sql
}

/// A [`Store`] in a SQLite database file (or in memory, for tests).
#[derive(Debug, Clone)]
pub struct SqliteStore {
    writer: SqlitePool,
    reader: SqlitePool,
}

/// The file a `sqlite:` URL names, or `None` for an in-memory database.
pub fn database_file(url: &str) -> Result<Option<std::path::PathBuf>, StoreError> {
    connect::database_file(url)
}

impl SqliteStore {
    /// Open `sqlite://PATH` (relative or absolute; `sqlite::memory:` for a
    /// throwaway database), creating the file and its folder if missing, and
    /// bring its schema up to date.
    pub async fn open(url: &str) -> Result<Self, StoreError> {
        let pools = connect::open(url).await?;
        Ok(SqliteStore {
            writer: pools.writer,
            reader: pools.reader,
        })
    }

    /// Wait for queued writes, then close every connection.
    pub async fn close(&self) {
        self.writer.close().await;
        self.reader.close().await;
    }
}

#[async_trait]
impl Store for SqliteStore {
    async fn create_job(&self, job: &NewJob) -> Result<JobRow, StoreError> {
        jobs::create(&self.writer, job).await
    }

    async fn get_job(&self, id: i64) -> Result<Option<JobRow>, StoreError> {
        jobs::get(&self.reader, id).await
    }

    async fn find_job_by_config_hash(&self, hash: &str) -> Result<Option<JobRow>, StoreError> {
        jobs::find_by_config_hash(&self.reader, hash).await
    }

    async fn find_job_by_name(&self, name: &str) -> Result<Option<JobRow>, StoreError> {
        jobs::find_by_name(&self.reader, name).await
    }

    async fn all_jobs(&self) -> Result<Vec<JobRow>, StoreError> {
        jobs::all(&self.reader).await
    }

    async fn open_jobs(&self) -> Result<Vec<JobRow>, StoreError> {
        jobs::open(&self.reader).await
    }

    async fn set_job_status(&self, id: i64, status: JobStatus) -> Result<(), StoreError> {
        jobs::set_status(&self.writer, id, status).await
    }

    async fn add_items(&self, job_id: i64, items: &[NewItem]) -> Result<u64, StoreError> {
        items::add(&self.writer, job_id, items).await
    }

    async fn lease_items(
        &self,
        job_id: i64,
        owner: &str,
        limit: u32,
        lease_ms: i64,
    ) -> Result<Vec<ItemRow>, StoreError> {
        items::lease(&self.writer, job_id, owner, limit, lease_ms).await
    }

    async fn renew_leases(
        &self,
        owner: &str,
        item_ids: &[i64],
        lease_ms: i64,
    ) -> Result<u64, StoreError> {
        items::renew(&self.writer, owner, item_ids, lease_ms).await
    }

    async fn complete_items(
        &self,
        owner: &str,
        batch: &[(i64, &NewConversation)],
    ) -> Result<Vec<Result<i64, StoreError>>, StoreError> {
        conversations::complete_items(&self.writer, owner, batch).await
    }

    async fn finish_item(&self, item_id: i64, owner: &str) -> Result<(), StoreError> {
        items::finish(&self.writer, item_id, owner).await
    }

    async fn fail_item(
        &self,
        item_id: i64,
        owner: &str,
        class: &str,
        message: &str,
    ) -> Result<(), StoreError> {
        items::fail(&self.writer, item_id, owner, class, message).await
    }

    async fn reset_failed_items(&self, job_id: i64) -> Result<u64, StoreError> {
        items::reset_failed(&self.writer, job_id).await
    }

    async fn release_items(&self, job_id: i64, owner: &str) -> Result<u64, StoreError> {
        items::release(&self.writer, job_id, owner).await
    }

    async fn item_counts(&self, job_id: i64) -> Result<ItemCounts, StoreError> {
        items::counts(&self.reader, job_id).await
    }

    async fn get_conversation(&self, id: i64) -> Result<Option<StoredConversation>, StoreError> {
        conversations::get(&self.reader, id).await
    }

    async fn conversations_page(
        &self,
        job_id: i64,
        after_id: i64,
        limit: u32,
    ) -> Result<Vec<StoredConversation>, StoreError> {
        conversations::page(&self.reader, job_id, after_id, limit).await
    }

    async fn job_summary(&self, job_id: i64) -> Result<JobSummary, StoreError> {
        conversations::summary(&self.reader, job_id).await
    }

    async fn call_latencies(&self, job_id: i64) -> Result<Vec<LatencyHistogram>, StoreError> {
        conversations::latencies(&self.reader, job_id).await
    }

    async fn save_judgment(&self, judgment: &NewJudgment) -> Result<i64, StoreError> {
        judgments::save(&self.writer, judgment).await
    }

    async fn find_judgment(
        &self,
        judge_hash: &str,
        a: i64,
        b: Option<i64>,
    ) -> Result<Option<JudgmentRow>, StoreError> {
        judgments::find(&self.reader, judge_hash, a, b).await
    }

    async fn judge_calls(
        &self,
        judge_hash: &str,
        a: i64,
        b: Option<i64>,
    ) -> Result<Vec<JudgeCallRow>, StoreError> {
        judgments::calls(&self.reader, judge_hash, a, b).await
    }

    async fn judgments_of_job(&self, job_id: i64) -> Result<Vec<JudgmentRow>, StoreError> {
        judgments::of_job(&self.reader, job_id).await
    }

    async fn judge_calls_of_job(&self, job_id: i64) -> Result<Vec<JudgeCallRow>, StoreError> {
        judgments::calls_of_job(&self.reader, job_id).await
    }

    async fn get_judgment(&self, id: i64) -> Result<Option<JudgmentRow>, StoreError> {
        judgments::get(&self.reader, id).await
    }

    async fn judgments_of_conversation(&self, id: i64) -> Result<Vec<JudgmentRow>, StoreError> {
        judgments::of_conversation(&self.reader, id).await
    }

    async fn judgments_made_by(
        &self,
        job_id: i64,
        after: i64,
        limit: u32,
    ) -> Result<Vec<JudgmentRow>, StoreError> {
        judgments::made_by(&self.reader, job_id, after, limit).await
    }

    async fn conversation_keys(&self, job_id: i64) -> Result<Vec<ConversationKey>, StoreError> {
        judgments::conversation_keys(&self.reader, job_id).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multi_row_sql_repeats_the_placeholder_tuple() {
        assert_eq!(
            multi_row_sql(
                "INSERT INTO t (a, b) VALUES ",
                "(?, ?)",
                3,
                " ON CONFLICT DO NOTHING"
            ),
            "INSERT INTO t (a, b) VALUES (?, ?), (?, ?), (?, ?) ON CONFLICT DO NOTHING"
        );
    }

    #[test]
    fn rows_go_in_power_of_two_chunks_largest_first() {
        let rows: Vec<u32> = (0..75).collect();
        let sizes: Vec<usize> = power_of_two_chunks(&rows, 10)
            .iter()
            .map(|c| c.len())
            .collect();
        assert_eq!(sizes, vec![64, 8, 2, 1]);
        let again: Vec<u32> = power_of_two_chunks(&rows, 10).concat();
        assert_eq!(again, rows, "every row once, in order");
        assert!(power_of_two_chunks::<u32>(&[], 10).is_empty());
        let wide: Vec<usize> = power_of_two_chunks(&rows, 10_000)
            .iter()
            .map(|c| c.len())
            .collect();
        assert_eq!(
            wide,
            vec![2; 37].into_iter().chain([1]).collect::<Vec<_>>(),
            "3 rows fit: chunks of 2"
        );
    }

    #[test]
    fn rows_per_statement_stays_under_the_parameter_limit() {
        assert_eq!(rows_per_statement(10), 3_276);
        assert!(rows_per_statement(7) * 7 <= MAX_BOUND_PARAMETERS);
    }
}
