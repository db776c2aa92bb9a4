//! The work items of a generation job: scenarios × personas × samples, each with
//! a seed derived from the job seed and the item key.

use crate::persona::{Persona, Scenario};
use crate::store::NewItem;

use super::super::seed::item_seed;

pub fn item_key(scenario: &str, persona: &str, sample: u32) -> String {
    format!("{scenario}/{persona}/{sample}")
}

/// How much work a scenario's conversations are expected to take, in gold
/// actions: each is at least one policy step, and the user has to ask for it.
fn expected_length(scenario: &Scenario) -> usize {
    scenario.evaluation.actions.len()
}

/// How many items [`plan_items`] makes (saturating): the job's size, checked
/// against `config::ranges::MAX_ITEMS` before anything is planned or stored.
pub fn item_count(
    scenarios: usize,
    personas: usize,
    samples: u32,
    personas_per_scenario: Option<u32>,
) -> u64 {
    let per_scenario = match personas_per_scenario {
        Some(n) => (n as usize).min(personas),
        None => personas,
    };
    (scenarios as u64)
        .saturating_mul(per_scenario as u64)
        .saturating_mul(u64::from(samples))
}

/// Every item of the job. With `personas_per_scenario = Some(n)`, each scenario is
/// paired with `n` personas chosen by the job seed (a rotation, so every persona
/// gets used about equally); otherwise with every persona.
///
/// Items are leased in the order given here (by id). They come in rounds:
/// round `k` holds sample `k` of every (scenario, persona) pair, longest
/// expected conversation first. So the conversations in flight at any time
/// are a mix of every scenario, not a thousand copies of one script running
/// in lockstep (writing, finishing and committing at the same moment), and a
/// job stopped half way has covered every scenario evenly.
///
/// The last `tail` items (the caller passes twice the job's concurrency) are
/// instead sorted longest first: a finite job then ends on its shortest
/// conversations, and the slots that empty while the last ones finish empty
/// sooner (the "drain" in `sparring bench`). Which persona a scenario gets
/// does not depend on the order.
pub fn plan_items(
    job_seed: u64,
    scenarios: &[Scenario],
    personas: &[Persona],
    samples: u32,
    personas_per_scenario: Option<u32>,
    tail: usize,
) -> Vec<NewItem> {
    if personas.is_empty() {
        return Vec::new();
    }
    let offset = (job_seed % personas.len() as u64) as usize;
    let mut order: Vec<(usize, &Scenario)> = scenarios.iter().enumerate().collect();
    order.sort_by_key(|(_, scenario)| std::cmp::Reverse(expected_length(scenario)));
    let mut pairs: Vec<(&Scenario, &Persona)> = Vec::new();
    for (s_index, scenario) in order {
        let chosen: Vec<&Persona> = match personas_per_scenario {
            Some(n) => (0..(n as usize).min(personas.len()))
                .map(|k| &personas[(offset + s_index * n as usize + k) % personas.len()])
                .collect(),
            None => personas.iter().collect(),
        };
        pairs.extend(chosen.into_iter().map(|persona| (scenario, persona)));
    }
    let mut items: Vec<(usize, NewItem)> = Vec::with_capacity(pairs.len() * samples as usize);
    for sample in 0..samples {
        for (scenario, persona) in &pairs {
            let key = item_key(&scenario.id, &persona.id, sample);
            items.push((
                expected_length(scenario),
                NewItem {
                    seed: item_seed(job_seed, &key) as i64,
                    key,
                    scenario_id: scenario.id.clone(),
                    persona_id: persona.id.clone(),
                    sample: i64::from(sample),
                },
            ));
        }
    }
    // Stable: within a length, the tail keeps the round order.
    let start = items.len().saturating_sub(tail);
    items[start..].sort_by_key(|(length, _)| std::cmp::Reverse(*length));
    items.into_iter().map(|(_, item)| item).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_item_count_is_what_plan_items_makes_and_saturates() {
        assert_eq!(item_count(3, 5, 2, Some(2)), 12);
        assert_eq!(item_count(3, 5, 2, None), 30);
        assert_eq!(item_count(3, 1, 2, Some(4)), 6);
        assert_eq!(item_count(usize::MAX, usize::MAX, u32::MAX, None), u64::MAX);
    }
    use std::collections::BTreeMap;

    fn persona(id: &str) -> Persona {
        Persona {
            id: id.into(),
            name: id.into(),
            background: String::new(),
            traits: vec![],
            speaking_style: String::new(),
            language: "English".into(),
            knobs: BTreeMap::new(),
            attributes: Default::default(),
        }
    }

    fn scenario(id: &str) -> Scenario {
        serde_json::from_value(serde_json::json!({
            "id": id,
            "user": {"reason_for_contact": "x", "known_info": "", "task_instructions": ""}
        }))
        .unwrap()
    }

    fn scenario_with_actions(id: &str, actions: usize) -> Scenario {
        let actions: Vec<_> = (0..actions)
            .map(|k| serde_json::json!({"name": "get_order_details", "arguments": {"order_id": k}}))
            .collect();
        serde_json::from_value(serde_json::json!({
            "id": id,
            "user": {"reason_for_contact": "x", "known_info": "", "task_instructions": ""},
            "evaluation": {"actions": actions}
        }))
        .unwrap()
    }

    fn order(items: &[NewItem]) -> Vec<String> {
        items
            .iter()
            .map(|i| format!("{}/{}", i.scenario_id, i.sample))
            .collect()
    }

    #[test]
    fn rounds_mix_every_scenario_and_the_tail_ends_on_the_shortest() {
        let scenarios = [
            scenario_with_actions("short", 1),
            scenario_with_actions("long", 5),
            scenario_with_actions("none", 0),
            scenario_with_actions("mid", 3),
        ];
        let personas = [persona("p1"), persona("p2"), persona("p3")];
        let items = plan_items(9, &scenarios, &personas, 3, Some(1), 0);
        assert_eq!(
            order(&items),
            [
                "long/0", "mid/0", "short/0", "none/0", "long/1", "mid/1", "short/1", "none/1",
                "long/2", "mid/2", "short/2", "none/2"
            ],
            "round by round, longest first within a round"
        );
        let items = plan_items(9, &scenarios, &personas, 3, Some(1), 6);
        assert_eq!(
            order(&items),
            [
                "long/0", "mid/0", "short/0", "none/0", "long/1", "mid/1", "long/2", "mid/2",
                "short/1", "short/2", "none/1", "none/2"
            ],
            "the last six sorted longest first, rounds kept within a length"
        );
        let items = plan_items(9, &scenarios, &personas, 2, Some(1), usize::MAX);
        assert_eq!(
            order(&items),
            ["long/0", "long/1", "mid/0", "mid/1", "short/0", "short/1", "none/0", "none/1"]
        );
        // The persona of each scenario is what the file order gives it.
        let offset = 9 % 3;
        for (s_index, s) in scenarios.iter().enumerate() {
            let item = items.iter().find(|i| i.scenario_id == s.id).unwrap();
            assert_eq!(item.persona_id, personas[(offset + s_index) % 3].id);
        }
    }

    #[test]
    fn items_are_the_cross_product_or_a_rotation_of_personas() {
        let scenarios = [scenario("s1"), scenario("s2"), scenario("s3")];
        let personas = [persona("p1"), persona("p2"), persona("p3"), persona("p4")];
        let all = plan_items(1, &scenarios, &personas, 2, None, 0);
        assert_eq!(all.len(), 3 * 4 * 2);
        let some = plan_items(1, &scenarios, &personas, 1, Some(2), 0);
        assert_eq!(some.len(), 3 * 2);
        let keys: std::collections::HashSet<_> = some.iter().map(|i| i.key.clone()).collect();
        assert_eq!(keys.len(), some.len(), "keys are unique");
        let used: std::collections::HashSet<_> =
            some.iter().map(|i| i.persona_id.clone()).collect();
        assert_eq!(used.len(), 4, "the rotation uses every persona");
    }
}
