//! Every check over one conversation.

use crate::persona::Scenario;

use super::input::UserTurns;
use super::{
    control_tokens, instruction_leak, invented_fact, premature_stop, repetition, role_confusion,
    CheckResult, ScenarioBasis, UserChecks, UserFlag, CHECKS_VERSION,
};

/// The results of every check, in [`UserFlag::ALL`] order. Without a
/// simulated user every check is unknown. `basis` is
/// `ScenarioBasis::of(&scenario.user)`, computed once per scenario.
pub fn check_conversation(
    turns: &UserTurns,
    scenario: &Scenario,
    basis: &ScenarioBasis,
) -> UserChecks {
    let checks = if turns.simulated_user {
        vec![
            premature_stop::check(turns, &scenario.evaluation),
            role_confusion::check(turns),
            instruction_leak::check(turns, &basis.leak),
            invented_fact::check(turns, &basis.invented),
            repetition::check(turns, &basis.repetition),
            control_tokens::check(turns),
        ]
    } else {
        UserFlag::ALL
            .into_iter()
            .map(CheckResult::unknown)
            .collect()
    };
    UserChecks {
        version: CHECKS_VERSION,
        checks,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::user_checks::{Line, Outcome};

    #[test]
    fn every_flag_has_a_result_in_order_and_no_user_means_unknown() {
        let scenario: Scenario = serde_json::from_str(
            r#"{"id": "s", "user": {"reason_for_contact": "R", "known_info": "K",
                "task_instructions": "T"}, "evaluation": {"communicate": ["42"]}}"#,
        )
        .unwrap();
        let mut turns = UserTurns {
            lines: vec![Line::new(0, "user", "user", "Hello there.", vec![])],
            simulated_user: true,
            ..UserTurns::default()
        };
        let basis = ScenarioBasis::of(&scenario.user);
        let checks = check_conversation(&turns, &scenario, &basis);
        let flags: Vec<UserFlag> = checks.checks.iter().map(|c| c.flag).collect();
        assert_eq!(flags, UserFlag::ALL.to_vec());
        assert!(checks.checks.iter().all(|c| c.outcome == Outcome::Clear));
        turns.simulated_user = false;
        let none = check_conversation(&turns, &scenario, &basis);
        assert!(none.checks.iter().all(|c| c.outcome == Outcome::Unknown));
    }
}
