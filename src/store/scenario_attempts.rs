//! What a generation job's items did for each of its scenarios: how many
//! attempts were planned and how far each got. Read in one aggregate query
//! (a row per scenario, however many conversations), so that deciding which
//! synthesized scenarios no attempt solved (`verify::solved`) never reads a
//! conversation's messages.

use serde::Serialize;

/// One scenario's items (its planned attempts: personas × samples) by how
/// far they got.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ScenarioAttempts {
    pub scenario_id: String,
    /// Items planned for the scenario.
    pub planned: u64,
    /// Pending or leased: still to run.
    pub waiting: u64,
    /// Failed items: infrastructure failures (a model call that failed after
    /// its retries, ...), which are not attempts.
    pub failed: u64,
    /// Done, with a conversation that has no reward: the simulator or the
    /// environment broke it, or the scenario is not scored.
    pub unscored: u64,
    /// Done, with a reward: the attempts proper.
    pub scored: u64,
    /// Of the scored, those with at least the success reward asked for.
    pub passed: u64,
}
