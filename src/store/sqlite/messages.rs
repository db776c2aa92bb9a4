//! A conversation's messages and usage, many rows per multi-row INSERT.

use sqlx::{AssertSqlSafe, Sqlite, Transaction};

use super::multi_row::{multi_row_sql, power_of_two_chunks};
use crate::store::decode::{message_columns, usage_columns};
use crate::store::{NewMessage, StoreError, UsageRow};

pub(super) type Tx = Transaction<'static, Sqlite>;

/// Bound parameters per row of the messages INSERT.
const MESSAGE_PARAMETERS: usize = 10;
/// Bound parameters per row of the usage INSERT.
const USAGE_PARAMETERS: usize = 6;

/// Messages of one or many conversations: `(conversation id, index, message)`.
pub(super) async fn insert_messages(
    tx: &mut Tx,
    rows: &[(i64, i64, &NewMessage)],
) -> Result<(), StoreError> {
    for chunk in power_of_two_chunks(rows, MESSAGE_PARAMETERS) {
        let sql = multi_row_sql(
            concat!("INSERT INTO messages (", message_columns!(), ") VALUES "),
            "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            chunk.len(),
            "",
        );
        let mut insert = sqlx::query(AssertSqlSafe(sql));
        for &(id, idx, m) in chunk {
            insert = insert
                .bind(id)
                .bind(idx)
                .bind(m.role.as_str())
                .bind(&*m.content)
                .bind(m.tool_calls.as_ref().map(|calls| calls.to_string()))
                .bind(m.tool_call_id.as_deref())
                .bind(m.author.as_str())
                .bind(m.prompt_tokens)
                .bind(m.completion_tokens)
                .bind(m.latency_ms);
        }
        insert.execute(&mut **tx).await?;
    }
    Ok(())
}

pub(super) async fn insert_usage(
    tx: &mut Tx,
    id: i64,
    usage: &[UsageRow],
) -> Result<(), StoreError> {
    for chunk in power_of_two_chunks(usage, USAGE_PARAMETERS) {
        let sql = multi_row_sql(
            concat!(
                "INSERT INTO conversation_usage (",
                usage_columns!(),
                ") VALUES "
            ),
            "(?, ?, ?, ?, ?, ?)",
            chunk.len(),
            "",
        );
        let mut insert = sqlx::query(AssertSqlSafe(sql));
        for u in chunk {
            insert = insert
                .bind(id)
                .bind(u.role.as_str())
                .bind(u.calls)
                .bind(u.prompt_tokens)
                .bind(u.completion_tokens)
                .bind(u.latency_ms);
        }
        insert.execute(&mut **tx).await?;
    }
    Ok(())
}
