//! `[diversity]` read through SYNTH.toml's own reader: what loads, and each
//! problem at its line with what would be right.

use std::path::Path;

use super::*;
use crate::config::service::Trust;
use crate::config::synth::{from_toml, SynthConfig};

const HEAD: &str = r#"name = "s"
target = 200
output = "out.jsonl"
[endpoints.generator]
mock = true
model = "mock-synth"
[roles]
generator = "generator"
[environment]
name = "builtin:retail"
"#;

fn load(diversity: &str) -> Result<SynthConfig, Vec<Problem>> {
    from_toml(
        Path::new("SYNTH.toml"),
        &format!("{HEAD}{diversity}"),
        Path::new("/tmp"),
        Trust::Local,
    )
}

fn problems(diversity: &str) -> Vec<String> {
    load(diversity)
        .unwrap_err()
        .iter()
        .map(|p| p.to_string())
        .collect()
}

/// The line of SYNTH.toml where `diversity`'s line `n` (1-based) lands.
fn line(n: usize) -> String {
    format!("line {}", HEAD.lines().count() + n)
}

#[test]
fn without_the_table_nothing_is_asked() {
    let c = load("").unwrap();
    assert!(c.diversity.is_empty());
    assert!(!c.diversity.plans_outcomes());
}

#[test]
fn a_full_table_loads_sorted_with_counts_planned_as_shares_of_the_target() {
    let c = load(
        r#"[diversity]
refusal = 0.1
transfer = 0.05
multi_intent = 0.1
difficulty = { medium = 0.3, easy = 0.5, hard = 0.2 }
tags = { return = 0.15, cancel = 0.1 }
[diversity.tools]
modify_user_address = 0.05
cancel_pending_order = { count = 20 }
"#,
    )
    .unwrap();
    let d = &c.diversity;
    assert_eq!((d.refusal, d.transfer, d.multi_intent), (0.1, 0.05, 0.1));
    let names = |v: &[ShareTarget]| v.iter().map(|t| t.name.clone()).collect::<Vec<_>>();
    assert_eq!(names(&d.difficulty), ["easy", "hard", "medium"]);
    assert_eq!(names(&d.tags), ["cancel", "return"]);
    assert_eq!(d.tools[0].name, "cancel_pending_order");
    assert_eq!(d.tools[0].minimum, ToolMinimum::Count(20));
    assert!((d.tools[0].planned_share - 0.1).abs() < 1e-12);
    assert_eq!(d.tools[1].minimum, ToolMinimum::Share(0.05));
    assert_eq!(d.tools[1].location, Some(format!("{}, column 1", line(8))));
    assert!(d.plans_outcomes() && !d.is_empty());
    assert!((d.resolve_share() - 0.85).abs() < 1e-12);
}

#[test]
fn a_difficulty_mix_that_does_not_sum_to_one_says_its_sum_at_its_line() {
    let all = problems("[diversity]\ndifficulty = { easy = 0.5, hard = 0.2 }\n");
    assert_eq!(all.len(), 1, "{all:?}");
    assert!(all[0].contains(&line(2)), "{all:?}");
    assert!(
        all[0].contains("sum to 0.7") && all[0].contains("must sum to 1"),
        "{all:?}"
    );
}

#[test]
fn a_share_out_of_range_and_an_unknown_key_are_both_reported_at_their_lines() {
    let all = problems("[diversity]\nrefusal = 1.5\nrefusals = 0.1\n");
    assert_eq!(all.len(), 2, "{all:?}");
    assert!(
        all.iter().any(|p| p.contains(&line(2))
            && p.contains("diversity.refusal")
            && p.contains("out of range; use 0 to 1")),
        "{all:?}"
    );
    assert!(
        all.iter()
            .any(|p| p.contains(&line(3)) && p.contains("did you mean `refusal`")),
        "{all:?}"
    );
}

#[test]
fn a_tag_share_must_be_above_zero_and_a_wrong_type_names_the_field() {
    let all = problems("[diversity]\ntags = { cancel = 0 }\ndifficulty = \"hard\"\n");
    assert!(
        all.iter()
            .any(|p| p.contains("diversity.tags.cancel") && p.contains("more than 0 up to 1")),
        "{all:?}"
    );
    assert!(
        all.iter()
            .any(|p| p.contains(&line(3)) && p.contains("is not a table")),
        "{all:?}"
    );
}

#[test]
fn a_tag_with_its_own_knob_says_which_knob() {
    let all = problems("[diversity]\ntags = { refusal = 0.2, transfer = 0.1 }\n");
    assert_eq!(all.len(), 2, "{all:?}");
    assert!(all[0].contains("use refusal = SHARE"), "{all:?}");
    assert!(all[1].contains("use transfer = SHARE"), "{all:?}");
}

#[test]
fn shares_that_cannot_all_be_met_are_rejected_with_the_arithmetic() {
    let outcomes = problems("[diversity]\nrefusal = 0.7\ntransfer = 0.4\n");
    assert!(
        outcomes[0].contains(&line(2)) && outcomes[0].contains("refusal + transfer = 1.1"),
        "{outcomes:?}"
    );
    let multi = problems("[diversity]\nrefusal = 0.5\ntransfer = 0.3\nmulti_intent = 0.3\n");
    assert!(
        multi[0].contains(&line(4)) && multi[0].contains("1 - refusal - transfer = 0.2"),
        "{multi:?}"
    );
    let tools = problems(
        "[diversity]\nrefusal = 0.5\n[diversity.tools]\ncancel_pending_order = 0.4\nmodify_user_address = { count = 40 }\n",
    );
    assert!(
        tools[0].contains(&line(3)) && tools[0].contains("sum to 0.6"),
        "{tools:?}"
    );
}

#[test]
fn a_tool_count_above_the_target_or_with_a_stray_key_is_a_problem() {
    let all = problems(
        "[diversity.tools]\ncancel_pending_order = { count = 300 }\nmodify_user_address = { cuont = 3 }\n",
    );
    assert!(
        all.iter()
            .any(|p| p.contains("diversity.tools.cancel_pending_order.count")
                && p.contains("more than target = 200")),
        "{all:?}"
    );
    assert!(
        all.iter()
            .any(|p| p.contains(&line(3)) && p.contains("unknown field `cuont`")),
        "{all:?}"
    );
}

#[test]
fn tool_names_are_checked_against_the_environment_naming_the_known_tools() {
    let c = load(
        "[diversity]\ntransfer = 0.1\n[diversity.tools]\ncancel_order = 0.1\ntransfer_to_human_agents = 0.1\n",
    )
    .unwrap();
    let file = Path::new("SYNTH.toml");
    let retail = [
        "cancel_pending_order",
        "get_order_details",
        "transfer_to_human_agents",
    ];
    let found: Vec<String> = c
        .diversity
        .tool_problems(file, &retail)
        .iter()
        .map(|p| p.to_string())
        .collect();
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(found[0].contains(&line(4)), "{found:?}");
    assert!(
        found[0].contains("no tool 'cancel_order'")
            && found[0]
                .contains("cancel_pending_order, get_order_details, transfer_to_human_agents"),
        "{found:?}"
    );
    assert!(
        found[1].contains(&line(5)) && found[1].contains("transfer = SHARE"),
        "{found:?}"
    );
    let no_transfer = c
        .diversity
        .tool_problems(file, &["cancel_order", "get_order_details"]);
    let last = no_transfer.last().unwrap().to_string();
    assert!(
        last.contains(&line(2)) && last.contains("no tool that transfers"),
        "{last}"
    );
}
