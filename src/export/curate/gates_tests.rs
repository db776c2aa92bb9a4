use super::*;
use crate::export::curate::test_rows::conversation;
use crate::export::MinJudge;
use crate::store::JudgmentRow;
use crate::user_checks::UserFlag;

fn judged(rows: &[(&str, i64, f64)]) -> JudgmentIndex {
    JudgmentIndex::build(
        rows.iter()
            .enumerate()
            .map(|(i, (judge, a, score))| JudgmentRow {
                id: i as i64 + 1,
                job_id: 1,
                judge_name: (*judge).into(),
                judge_hash: "h".into(),
                conversation_a: *a,
                conversation_b: None,
                status: "ok".into(),
                verdict: Some(serde_json::json!({"kind": "score", "score": score})),
                score: Some(*score),
                consistent: None,
                reason: None,
                updated_at: 0,
            })
            .collect(),
    )
    .unwrap()
}

#[test]
fn the_reward_gate_drops_the_unscored_and_the_low() {
    let filter = Filter {
        min_reward: Some(0.5),
        ..Filter::default()
    };
    assert!(reward(&filter, &conversation(1, "s", "p", Some(0.5), &[])).is_ok());
    let low = reward(&filter, &conversation(1, "s", "p", Some(0.2), &[])).unwrap_err();
    assert_eq!(
        (low.gate, low.reason.as_str()),
        (Gate::Reward, "reward 0.2 below 0.5")
    );
    let unscored = reward(&Filter::default(), &conversation(1, "s", "p", None, &[])).unwrap_err();
    assert!(unscored.reason.contains("not scored"));
}

#[test]
fn the_selection_gate_keeps_what_was_asked_for() {
    let mut filter = Filter::default();
    filter.conversations.persona = Some("p".into());
    assert!(selection(&filter, &conversation(1, "s", "p", Some(1.0), &[])).is_ok());
    let other = selection(&filter, &conversation(1, "s", "q", Some(1.0), &[])).unwrap_err();
    assert_eq!(other.gate, Gate::Selection);
}

#[test]
fn the_judges_gate_drops_failed_and_low_or_unjudged() {
    let index = judged(&[("fid", 1, 0.0), ("helpful", 2, 5.0), ("helpful", 3, 8.0)]);
    let filter = Filter {
        drop_flagged: vec!["fid".into()],
        min_judge: vec![MinJudge {
            judge: "helpful".into(),
            score: 7.0,
        }],
        ..Filter::default()
    };
    let c = |id| conversation(id, "s", "p", Some(1.0), &[]);
    let failed = judges(&filter, &index, &c(1)).unwrap_err();
    assert!(
        failed.reason.contains("judge fid failed it"),
        "{}",
        failed.reason
    );
    let low = judges(&filter, &index, &c(2)).unwrap_err();
    assert!(low.reason.contains("scored 5, below 7"), "{}", low.reason);
    assert!(judges(&filter, &index, &c(3)).is_ok());
    let none = judges(&filter, &index, &c(4)).unwrap_err();
    assert!(none.reason.contains("no ok judgment"), "{}", none.reason);
}

#[test]
fn the_user_flags_gate_names_the_checks_that_fired() {
    let mut c = conversation(1, "s", "p", Some(1.0), &[("user", "hi")]);
    let filter = Filter {
        drop_user_flags: vec![UserFlag::Repetition, UserFlag::RoleConfusion],
        ..Filter::default()
    };
    // Stored before the checks existed: passes.
    assert!(user_flags(&filter, &c).is_ok());
    let stored = |outcome| {
        crate::user_checks::UserChecks {
            version: 1,
            checks: vec![crate::user_checks::CheckResult {
                flag: UserFlag::Repetition,
                outcome,
                evidence: Vec::new(),
            }],
        }
        .to_json()
    };
    c.conversation.user_checks = Some(stored(crate::user_checks::Outcome::Clear));
    assert!(user_flags(&filter, &c).is_ok());
    c.conversation.user_checks = Some(stored(crate::user_checks::Outcome::Flagged));
    let stop = user_flags(&filter, &c).unwrap_err();
    assert_eq!(stop.gate, Gate::UserFlags);
    assert_eq!(stop.reason, "its simulated user was flagged: repetition");
}

#[test]
fn the_bounds_gate_counts_user_turns_and_characters() {
    let c = conversation(
        1,
        "s",
        "p",
        Some(1.0),
        &[
            ("assistant", "Hello"),
            ("user", "hi there"),
            ("assistant", "ok"),
            ("user", "bye"),
        ],
    );
    assert_eq!((turns(&c), chars(&c)), (2, 18));
    let b = |min_turns, max_turns, min_chars, max_chars| Bounds {
        min_turns,
        max_turns,
        min_chars,
        max_chars,
    };
    assert!(bounds(&b(Some(2), Some(2), Some(18), Some(18)), &c).is_ok());
    for (bound, says) in [
        (b(Some(3), None, None, None), "2 user turns, fewer than 3"),
        (b(None, Some(1), None, None), "2 user turns, more than 1"),
        (
            b(None, None, Some(19), None),
            "18 characters, fewer than 19",
        ),
        (b(None, None, None, Some(17)), "18 characters, more than 17"),
    ] {
        let stop = bounds(&bound, &c).unwrap_err();
        assert_eq!((stop.gate, stop.reason.as_str()), (Gate::Bounds, says));
    }
}
