//! Items in Postgres's own words: adding many as arrays, leasing them with
//! `FOR UPDATE SKIP LOCKED`, and renewing leases named in an array.

use sqlx::{Pool, Postgres};

use crate::store::decode::{self, item_columns};
use crate::store::sql::dialect::{Lease, Leasing, Renewal};
use crate::store::sql::statement::postgres_now_ms;
use crate::store::{ItemRow, NewItem, StoreError};

/// Items per INSERT. Each statement binds five arrays (one element per item),
/// so Postgres's limit of 65,535 bound parameters never applies; the chunk
/// only keeps one statement's message to a few megabytes.
const ITEMS_PER_STATEMENT: usize = 5_000;

/// Longest lease taken: longer ones never expire anyway, and the cap keeps
/// `now + lease_ms` inside BIGINT (where SQLite's store saturates).
const MAX_LEASE_MS: i64 = i64::MAX / 2;

impl Leasing for Postgres {
    async fn add_items(
        pool: &Pool<Self>,
        job_id: i64,
        items: &[NewItem],
    ) -> Result<u64, StoreError> {
        let mut added = 0;
        let mut tx = pool.begin().await?;
        for chunk in items.chunks(ITEMS_PER_STATEMENT) {
            let keys: Vec<&str> = chunk.iter().map(|item| item.key.as_str()).collect();
            let scenarios: Vec<&str> = chunk.iter().map(|item| item.scenario_id.as_str()).collect();
            let personas: Vec<&str> = chunk.iter().map(|item| item.persona_id.as_str()).collect();
            let samples: Vec<i64> = chunk.iter().map(|item| item.sample).collect();
            let seeds: Vec<i64> = chunk.iter().map(|item| item.seed).collect();
            // ORDER BY the position in the arrays: ids follow the caller's order,
            // which is the order items are leased in. A key repeated within the
            // call conflicts with its first copy and is skipped like any other.
            let inserted = sqlx::query(concat!(
                "INSERT INTO items \
                 (job_id, key, scenario_id, persona_id, sample, seed, updated_at, status, attempts) \
                 SELECT $1, given.key, given.scenario_id, given.persona_id, given.sample, given.seed, ",
                postgres_now_ms!(),
                ", 'pending', 0 \
                 FROM UNNEST($2::TEXT[], $3::TEXT[], $4::TEXT[], $5::BIGINT[], $6::BIGINT[]) \
                 WITH ORDINALITY AS given (key, scenario_id, persona_id, sample, seed, position) \
                 ORDER BY given.position \
                 ON CONFLICT (job_id, key) DO NOTHING"
            ))
            .bind(job_id)
            .bind(&keys)
            .bind(&scenarios)
            .bind(&personas)
            .bind(&samples)
            .bind(&seeds)
            .execute(&mut *tx)
            .await?;
            added += inserted.rows_affected();
        }
        tx.commit().await?;
        Ok(added)
    }

    /// One statement: lock up to `limit` leasable items in id order, skipping
    /// rows another transaction has locked (another worker leasing, completing or
    /// renewing them), and lease them. A row locked here was re-checked against
    /// the WHERE clause after its last committed change, so an item leased by a
    /// worker that committed a moment ago is never taken over.
    async fn lease_items(pool: &Pool<Self>, lease: &Lease<'_>) -> Result<Vec<ItemRow>, StoreError> {
        let rows = sqlx::query(concat!(
            "WITH leasable AS ( \
               SELECT id FROM items \
               WHERE job_id = $1 \
                 AND (status = 'pending' OR (status = 'leased' AND lease_expires_at < ",
            postgres_now_ms!(),
            ")) \
               ORDER BY id LIMIT $2 \
               FOR UPDATE SKIP LOCKED \
             ) \
             UPDATE items SET status = 'leased', lease_owner = $3, lease_expires_at = ",
            postgres_now_ms!(),
            " + $4, attempts = attempts + 1, updated_at = ",
            postgres_now_ms!(),
            " WHERE id IN (SELECT id FROM leasable) RETURNING ",
            item_columns!()
        ))
        .bind(lease.job_id)
        .bind(i64::from(lease.limit))
        .bind(lease.owner)
        .bind(lease.lease_ms.min(MAX_LEASE_MS))
        .fetch_all(pool)
        .await?;
        let mut leased = rows
            .iter()
            .map(decode::item)
            .collect::<Result<Vec<_>, _>>()?;
        // RETURNING comes in no promised order.
        leased.sort_by_key(|item| item.id);
        Ok(leased)
    }

    /// Like SQLite's: an expired lease that nobody took over is still `owner`'s
    /// and is renewed, just as `complete_item` still honours it.
    async fn renew_leases(pool: &Pool<Self>, renewal: &Renewal<'_>) -> Result<u64, StoreError> {
        let renewed = sqlx::query(concat!(
            "UPDATE items SET lease_expires_at = ",
            postgres_now_ms!(),
            " + $1, updated_at = ",
            postgres_now_ms!(),
            " WHERE id = ANY($2::BIGINT[]) AND status = 'leased' AND lease_owner = $3"
        ))
        .bind(renewal.lease_ms.min(MAX_LEASE_MS))
        .bind(renewal.item_ids)
        .bind(renewal.owner)
        .execute(pool)
        .await?;
        Ok(renewed.rows_affected())
    }
}
