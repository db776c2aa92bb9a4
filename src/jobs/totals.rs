//! What this process has finished since it started, by kind of job, for the
//! service's `/metrics` (the store's counts cover every process; these cover
//! this one, so a scrape can tell the work done here).

use std::sync::atomic::{AtomicU64, Ordering};

use crate::store::JobKind;

#[derive(Debug, Default)]
pub struct ItemTotals {
    completed: AtomicU64,
    failed: AtomicU64,
}

impl ItemTotals {
    const fn new() -> ItemTotals {
        ItemTotals {
            completed: AtomicU64::new(0),
            failed: AtomicU64::new(0),
        }
    }

    pub fn completed(&self) {
        self.completed.fetch_add(1, Ordering::Relaxed);
    }

    pub fn failed(&self) {
        self.failed.fetch_add(1, Ordering::Relaxed);
    }

    /// `(completed, failed)` so far.
    pub fn read(&self) -> (u64, u64) {
        (
            self.completed.load(Ordering::Relaxed),
            self.failed.load(Ordering::Relaxed),
        )
    }
}

/// Generation items: conversations stored, or failed.
pub static CONVERSATIONS: ItemTotals = ItemTotals::new();
/// Judging items: a conversation's judgments stored, or failed.
pub static JUDGING_ITEMS: ItemTotals = ItemTotals::new();

/// Synthesis items: a proposal stored, or failed.
pub static PROPOSALS: ItemTotals = ItemTotals::new();

/// Import items: a conversation read and stored (none fails).
pub static IMPORTED: ItemTotals = ItemTotals::new();

/// The totals for a job of `kind`.
pub fn of_kind(kind: JobKind) -> &'static ItemTotals {
    match kind {
        JobKind::Generation => &CONVERSATIONS,
        JobKind::Judging => &JUDGING_ITEMS,
        JobKind::Synthesis => &PROPOSALS,
        JobKind::Import => &IMPORTED,
    }
}
