//! What a backend supplies to the shared queries: where they run, and the
//! statements its dialect writes its own way (leasing, bulk inserts).

use std::future::Future;

use super::runs::{Commit, Runs};
use crate::store::decode::StoredRow;
use crate::store::{ItemRow, NewItem, NewMessage, StoreError, UsageRow};

pub(crate) trait Backend: Send + Sync + 'static {
    type Row: StoredRow + Send + Sync;
    type Tx: Commit<Row = Self::Row>;

    /// Where single reads run.
    fn reader(&self) -> impl Runs<Row = Self::Row> + '_;
    /// Where single writes run.
    fn writer(&self) -> impl Runs<Row = Self::Row> + '_;
    /// A transaction whose reads all see one snapshot.
    fn begin_read(&self) -> impl Future<Output = Result<Self::Tx, StoreError>> + Send;
    /// A transaction that writes.
    fn begin_write(&self) -> impl Future<Output = Result<Self::Tx, StoreError>> + Send;

    /// See [`crate::store::Store::add_items`].
    fn add_items(
        &self,
        job_id: i64,
        items: &[NewItem],
    ) -> impl Future<Output = Result<u64, StoreError>> + Send;
    /// See [`crate::store::Store::lease_items`].
    fn lease_items(
        &self,
        job_id: i64,
        owner: &str,
        limit: u32,
        lease_ms: i64,
    ) -> impl Future<Output = Result<Vec<ItemRow>, StoreError>> + Send;
    /// See [`crate::store::Store::renew_leases`].
    fn renew_leases(
        &self,
        owner: &str,
        item_ids: &[i64],
        lease_ms: i64,
    ) -> impl Future<Output = Result<u64, StoreError>> + Send;
    /// A conversation's messages, numbered from 0 in order.
    fn insert_messages(
        tx: &mut Self::Tx,
        conversation_id: i64,
        messages: &[NewMessage],
    ) -> impl Future<Output = Result<(), StoreError>> + Send;
    /// A conversation's usage rows.
    fn insert_usage(
        tx: &mut Self::Tx,
        conversation_id: i64,
        usage: &[UsageRow],
    ) -> impl Future<Output = Result<(), StoreError>> + Send;
}
