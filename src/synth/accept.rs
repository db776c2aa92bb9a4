//! Which valid proposals become scenarios. Walked in proposal order, each is
//! checked for near-duplicates against those kept before it, and the first
//! `target` kept are the accepted scenarios; later ones are surplus. The same
//! stored proposals give the same scenarios whatever order, or however many
//! processes, made them.

use crate::persona::Scenario;

use super::dedup::{DedupConfig, DedupIndex, Duplicate};

/// What became of one valid proposal.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    Accepted,
    /// A near-duplicate of a scenario kept earlier.
    Duplicate(Duplicate),
    /// Valid and distinct, but `target` scenarios were accepted before it.
    Surplus,
}

/// The walk over valid proposals in index order.
pub struct Acceptance {
    kept: DedupIndex,
    target: usize,
    accepted: Vec<Scenario>,
    last_index: Option<u64>,
}

impl Acceptance {
    pub fn new(dedup: &DedupConfig, target: usize) -> Self {
        Acceptance {
            kept: DedupIndex::new(dedup),
            target,
            accepted: Vec::new(),
            last_index: None,
        }
    }

    /// Decide valid proposal `index` (indices must grow from call to call:
    /// a smaller one is a caller's bug and is decided as surplus).
    pub fn offer(&mut self, index: u64, scenario: &Scenario) -> Decision {
        if self.last_index.is_some_and(|last| index <= last) || self.is_full() {
            return Decision::Surplus;
        }
        self.last_index = Some(index);
        if let Some(duplicate) = self.kept.check(scenario) {
            return Decision::Duplicate(duplicate);
        }
        self.kept.insert(scenario);
        self.accepted.push(scenario.clone());
        Decision::Accepted
    }

    /// Whether `target` scenarios are accepted.
    pub fn is_full(&self) -> bool {
        self.accepted.len() >= self.target
    }

    pub fn accepted(&self) -> &[Scenario] {
        &self.accepted
    }

    pub fn into_accepted(self) -> Vec<Scenario> {
        self.accepted
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(id: &str, goal: &str) -> Scenario {
        serde_json::from_value(serde_json::json!({
            "id": id,
            "user": {"reason_for_contact": goal},
            "evaluation": {"actions": [{"name": "get_order_details", "arguments": {"order_id": id}}]}
        }))
        .unwrap()
    }

    #[test]
    fn the_first_target_distinct_proposals_are_accepted_and_the_rest_are_surplus() {
        let mut walk = Acceptance::new(&DedupConfig::default(), 2);
        let a = scenario("a", "I want to know where my blue lamp order is right now");
        let b = scenario(
            "b",
            "please cancel the running shoes I bought last week for my son",
        );
        let c = scenario(
            "c",
            "what is left on the gift card my aunt gave me for christmas",
        );
        assert_eq!(walk.offer(0, &a), Decision::Accepted);
        assert!(matches!(walk.offer(1, &a), Decision::Duplicate(d) if d.of == "a"));
        assert_eq!(walk.offer(2, &b), Decision::Accepted);
        assert_eq!(walk.offer(3, &c), Decision::Surplus);
        let ids: Vec<&str> = walk.accepted().iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["a", "b"]);
    }

    #[test]
    fn an_index_out_of_order_is_not_accepted() {
        let mut walk = Acceptance::new(&DedupConfig::default(), 5);
        let a = scenario("a", "I want to know where my blue lamp order is right now");
        let b = scenario(
            "b",
            "please cancel the running shoes I bought last week for my son",
        );
        assert_eq!(walk.offer(4, &a), Decision::Accepted);
        assert_eq!(walk.offer(3, &b), Decision::Surplus);
    }
}
