//! What a backend brings to the shared queries: how its transactions begin,
//! and the statements its dialect writes its own way (leasing, bulk inserts).

use std::future::Future;

use sqlx::Pool;

use super::runs::Runner;
use crate::store::{ItemRow, NewConversation, NewItem, StoreError};

/// A backend's SQL dialect, implemented on its sqlx database type.
pub(crate) trait Dialect: Runner + Leasing + BulkInsert {
    /// Begins a transaction whose reads all see one snapshot.
    const BEGIN_READ: &'static str;
    /// Begins a transaction that writes.
    const BEGIN_WRITE: &'static str;
}

/// Items leased for a while: see [`crate::store::ItemStore::lease_items`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Lease<'a> {
    pub job_id: i64,
    pub owner: &'a str,
    pub limit: u32,
    pub lease_ms: i64,
}

/// Leases to renew: see [`crate::store::ItemStore::renew_leases`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Renewal<'a> {
    pub owner: &'a str,
    pub item_ids: &'a [i64],
    pub lease_ms: i64,
}

/// Adding, leasing and renewing items, on the pool writes go to. The store
/// asks only for something: at least one item, lease or renewal.
pub(crate) trait Leasing: Runner {
    /// See [`crate::store::ItemStore::add_items`].
    fn add_items(
        pool: &Pool<Self>,
        job_id: i64,
        items: &[NewItem],
    ) -> impl Future<Output = Result<u64, StoreError>> + Send;
    fn lease_items(
        pool: &Pool<Self>,
        lease: &Lease<'_>,
    ) -> impl Future<Output = Result<Vec<ItemRow>, StoreError>> + Send;
    fn renew_leases(
        pool: &Pool<Self>,
        renewal: &Renewal<'_>,
    ) -> impl Future<Output = Result<u64, StoreError>> + Send;
}

/// The many rows of one conversation, and of a batch of imported ones.
pub(crate) trait BulkInsert: Runner {
    /// Its messages, numbered from 0 in order, and its usage rows.
    fn insert_rows(
        tx: &mut Self::Tx,
        id: i64,
        c: &NewConversation,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;
    /// See [`crate::store::ImportStore::store_imported`], in the transaction `tx`.
    fn insert_imported(
        tx: &mut Self::Tx,
        job_id: i64,
        batch: &[(NewItem, NewConversation)],
    ) -> impl Future<Output = Result<u64, StoreError>> + Send;
}
