//! Many policies, one table (issue 43, in part): jobs that ran the same
//! items with different policies, compared item by item. Pure statistics,
//! one a file (`mcnemar`, `paired`, `bradley_terry`, `pareto`), the table's
//! types (`table`) and `gather`, which alone reads the store.

pub mod bradley_terry;
pub mod cells;
pub mod file;
pub mod gather;
pub mod mcnemar;
pub mod paired;
pub mod pareto;
pub mod table;
pub mod win_rates;

pub use gather::{leaderboard, LeaderboardError, LeaderboardRequest};
pub use table::Leaderboard;
