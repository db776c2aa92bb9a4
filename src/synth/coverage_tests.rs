//! Coverage counted over the hand-written retail scenarios, whose mix is
//! known: 27 scenarios, 2 transfers, 6 hard, 4 returns.

use crate::config::synth::diversity::{ShareTarget, ToolTarget};

use super::*;

fn shipped() -> Vec<Scenario> {
    include_str!("../../data/retail/scenarios.jsonl")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn share(name: &str, share: f64) -> ShareTarget {
    ShareTarget {
        name: name.into(),
        share,
    }
}

fn targets() -> DiversityConfig {
    DiversityConfig {
        tags: vec![share("Return", 0.1), share("gift-card", 0.5)],
        difficulty: vec![
            share("easy", 0.25),
            share("hard", 0.25),
            share("medium", 0.5),
        ],
        tools: vec![
            ToolTarget {
                name: "calculate".into(),
                minimum: ToolMinimum::Count(4),
                planned_share: 0.1,
                location: None,
            },
            ToolTarget {
                name: "get_product_details".into(),
                minimum: ToolMinimum::Share(0.2),
                planned_share: 0.2,
                location: None,
            },
        ],
        multi_intent: 0.1,
        refusal: 0.1,
        transfer: 0.05,
        ..Default::default()
    }
}

fn find<'a>(reaches: &'a [Reach], name: &str) -> &'a Reach {
    reaches.iter().find(|r| r.name == name).unwrap()
}

#[test]
fn each_target_is_counted_and_flagged_only_when_short_by_more_than_the_tolerance() {
    let c = Coverage::of(&targets(), &shipped());
    assert_eq!(c.scenarios, 27);
    let transfer = find(&c.outcome, "transfer");
    assert_eq!((transfer.count, transfer.missed), (2, false));
    assert_eq!(transfer.target, Some(Target::Share(0.05)));
    // Four of the 27 hand-written scenarios are refusals (14.8%, over 10%).
    let refusal = find(&c.outcome, "refusal");
    assert_eq!((refusal.count, refusal.missed), (4, false));
    assert!(c.multi_intent.missed && c.multi_intent.count == 0);
    // 7 hard of 27 is 25.9%; 6 easy is 22.2%, short of 25% by more than 2 points.
    let hard = find(&c.difficulty, "hard");
    assert_eq!((hard.count, hard.missed), (7, false));
    assert!((hard.share - 7.0 / 27.0).abs() < 1e-12);
    let easy = find(&c.difficulty, "easy");
    assert_eq!((easy.count, easy.missed), (6, true));
    // Tags match whatever their case; 4 of 27 is above 10%.
    let ret = find(&c.tags, "Return");
    assert_eq!((ret.count, ret.missed), (4, false));
    assert!(find(&c.tags, "gift-card").missed);
    assert_eq!(find(&c.tags, "retail").target, None);
    let calculate = find(&c.tools, "calculate");
    assert_eq!((calculate.count, calculate.missed), (2, true));
    // 8 of 27 call get_product_details: 29.6%, above 20%.
    let product = find(&c.tools, "get_product_details");
    assert_eq!((product.count, product.missed), (8, false));
    // refusal, multi-intent, easy, gift-card, calculate.
    assert_eq!(c.missed(), 5);
}

#[test]
fn the_lines_show_each_target_with_its_reach_and_the_rest_on_one_line() {
    let c = Coverage::of(&targets(), &shipped());
    let lines = c.lines();
    assert!(lines[0].contains("5 of 11 targets missed"), "{lines:#?}");
    let calculate = lines.iter().find(|l| l.contains("calculate")).unwrap();
    assert!(
        calculate.contains("target ≥ 4 scenarios") && calculate.ends_with("MISSED"),
        "{calculate}"
    );
    let transfer = lines.iter().find(|l| l.contains(" transfer ")).unwrap();
    assert!(
        transfer.contains("7.4%") && !transfer.contains("MISSED"),
        "{transfer}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains("also: ") && l.contains("retail 27")),
        "{lines:#?}"
    );
}

#[test]
fn without_targets_or_scenarios_nothing_is_missed_or_divided_by_zero() {
    let c = Coverage::of(&DiversityConfig::default(), &shipped());
    assert_eq!(c.missed(), 0);
    assert!(c.lines()[0].contains("no [diversity] targets"));
    assert!(c
        .lines()
        .iter()
        .any(|l| l.contains("outcome") && l.contains("resolve 21, refusal 4, transfer 2")));
    let empty = Coverage::of(&targets(), &[]);
    assert_eq!(empty.scenarios, 0);
    assert!(empty.tools.iter().all(|r| r.share == 0.0 && r.missed));
}

#[test]
fn coverage_serializes_with_its_targets_named() {
    let json = serde_json::to_value(Coverage::of(&targets(), &shipped())).unwrap();
    assert_eq!(
        json["tools"][0]["target"],
        serde_json::json!({"at_least_count": 4})
    );
    assert_eq!(
        json["outcome"][1]["target"],
        serde_json::json!({"share": 0.1})
    );
}
