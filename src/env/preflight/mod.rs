//! Checks of scenarios against an environment before anything runs: their
//! gold actions (`gold_actions`) and their state probes (`probes`). `sparring
//! validate`, every job's setup and the synthesis of scenarios report the
//! same problems from here.

pub mod gold_actions;
pub mod probes;

pub use gold_actions::check_gold_actions;
pub use probes::{mcp_db_problems, probe_problems};
