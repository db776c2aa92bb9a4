//! The planner: deterministic per (seed, index), shares met over every
//! prefix within a stated tolerance, and knobs that vary jointly.

use proptest::prelude::*;

use crate::config::synth::diversity::{DiversityConfig, ShareTarget, ToolMinimum, ToolTarget};

use super::*;

/// How far a count over the first `n` proposals may be from `n × share`,
/// for any `n` up to [`PREFIX`]: a few proposals, not a few percent.
const TOLERANCE: f64 = 4.0;
const PREFIX: u64 = 2_000;

fn share(name: &str, share: f64) -> ShareTarget {
    ShareTarget {
        name: name.into(),
        share,
    }
}

fn tool(name: &str, share: f64) -> ToolTarget {
    ToolTarget {
        name: name.into(),
        minimum: ToolMinimum::Share(share),
        planned_share: share,
        location: None,
    }
}

fn retail_mix() -> DiversityConfig {
    DiversityConfig {
        tags: vec![share("cancel", 0.15), share("return", 0.15)],
        difficulty: vec![share("easy", 0.5), share("hard", 0.2), share("medium", 0.3)],
        tools: vec![
            tool("modify_user_address", 0.05),
            tool("cancel_pending_order", 0.1),
        ],
        multi_intent: 0.1,
        refusal: 0.1,
        transfer: 0.05,
        ..Default::default()
    }
}

/// Valid `[diversity]` tables: what the config reader accepts.
fn diversity() -> impl Strategy<Value = DiversityConfig> {
    (
        0.0..0.4f64,
        0.0..0.3f64,
        0.0..0.5f64,
        prop::collection::vec(0.01..1.0f64, 0..4),
        prop::collection::vec(0.01..0.6f64, 0..5),
        prop::collection::vec(0.01..0.2f64, 0..4),
        any::<bool>(),
    )
        .prop_map(|(refusal, transfer, multi, mix, tags, tools, outcomes)| {
            let (refusal, transfer) = if outcomes {
                (refusal, transfer)
            } else {
                (0.0, 0.0)
            };
            let resolve = 1.0 - refusal - transfer;
            let total: f64 = mix.iter().sum();
            let tool_total: f64 = tools.iter().sum::<f64>().max(1.0);
            DiversityConfig {
                difficulty: mix
                    .iter()
                    .enumerate()
                    .map(|(i, x)| share(&format!("d{i}"), x / total))
                    .collect(),
                tags: tags
                    .iter()
                    .enumerate()
                    .map(|(i, x)| share(&format!("t{i}"), *x))
                    .collect(),
                tools: tools
                    .iter()
                    .enumerate()
                    .map(|(i, x)| tool(&format!("tool{i}"), x / tool_total * resolve))
                    .collect(),
                multi_intent: multi * resolve,
                refusal,
                transfer,
                ..Default::default()
            }
        })
}

/// Every share the planner is asked to meet, with whether a brief meets it.
#[allow(clippy::type_complexity)]
fn targets(d: &DiversityConfig) -> Vec<(String, f64, Box<dyn Fn(&ProposalBrief) -> bool + '_>)> {
    let mut out: Vec<(String, f64, Box<dyn Fn(&ProposalBrief) -> bool + '_>)> = Vec::new();
    if d.plans_outcomes() {
        for (outcome, s) in [
            (Outcome::Resolve, d.resolve_share()),
            (Outcome::Refusal, d.refusal),
            (Outcome::Transfer, d.transfer),
        ] {
            out.push((
                outcome.as_str().into(),
                s,
                Box::new(move |b| b.outcome == Some(outcome)),
            ));
        }
    }
    out.push((
        "multi-intent".into(),
        d.multi_intent,
        Box::new(|b| b.multi_intent),
    ));
    for t in &d.difficulty {
        out.push((
            format!("difficulty {}", t.name),
            t.share,
            Box::new(move |b| b.difficulty.as_deref() == Some(t.name.as_str())),
        ));
    }
    for t in &d.tags {
        out.push((
            format!("tag {}", t.name),
            t.share,
            Box::new(move |b| b.tags.contains(&t.name)),
        ));
    }
    for t in &d.tools {
        out.push((
            format!("tool {}", t.name),
            t.planned_share,
            Box::new(move |b| b.tools.contains(&t.name)),
        ));
    }
    out
}

/// The largest distance of a count from `n × share` over the first `prefix` briefs.
fn worst_deviation(d: &DiversityConfig, seed: u64, prefix: u64) -> Vec<(String, f64)> {
    let targets = targets(d);
    let mut counts = vec![0u64; targets.len()];
    let mut worst = vec![0.0f64; targets.len()];
    for index in 0..prefix {
        let brief = plan_brief(d, seed, index);
        let n = (index + 1) as f64;
        for (i, (_, share, meets)) in targets.iter().enumerate() {
            counts[i] += u64::from(meets(&brief));
            worst[i] = worst[i].max((counts[i] as f64 - n * share).abs());
        }
    }
    targets
        .into_iter()
        .map(|(name, _, _)| name)
        .zip(worst)
        .collect()
}

#[test]
fn an_empty_table_gives_every_proposal_the_empty_brief() {
    for index in [0, 1, 7, 1_000_003] {
        assert_eq!(
            plan_brief(&DiversityConfig::default(), 42, index),
            ProposalBrief::default()
        );
    }
}

#[test]
fn the_retail_mix_is_met_within_the_tolerance_over_every_prefix() {
    for seed in [0, 1, u64::MAX] {
        for (name, worst) in worst_deviation(&retail_mix(), seed, 20_000) {
            assert!(worst <= TOLERANCE, "seed {seed}, {name}: off by {worst}");
        }
    }
}

#[test]
fn refusals_come_in_every_difficulty_and_with_every_tag_not_in_lockstep() {
    let d = retail_mix();
    let briefs: Vec<ProposalBrief> = (0..300).map(|i| plan_brief(&d, 0, i)).collect();
    let refusals: Vec<&ProposalBrief> = briefs
        .iter()
        .filter(|b| b.outcome == Some(Outcome::Refusal))
        .collect();
    for difficulty in ["easy", "medium", "hard"] {
        assert!(
            refusals
                .iter()
                .any(|b| b.difficulty.as_deref() == Some(difficulty)),
            "no {difficulty} refusal"
        );
    }
    for tag in ["cancel", "return"] {
        assert!(refusals.iter().any(|b| b.tags.iter().any(|t| t == tag)));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn a_brief_depends_only_on_the_seed_and_its_index_not_on_planning_order(
        d in diversity(), seed in any::<u64>(), start in 0u64..1_000_000,
    ) {
        let forward: Vec<ProposalBrief> = (start..start + 64).map(|i| plan_brief(&d, seed, i)).collect();
        let mut backward: Vec<ProposalBrief> = (start..start + 64).rev().map(|i| plan_brief(&d, seed, i)).collect();
        backward.reverse();
        prop_assert_eq!(forward, backward);
    }

    #[test]
    fn every_share_is_met_within_the_tolerance_over_every_prefix(
        d in diversity(), seed in any::<u64>(),
    ) {
        for (name, worst) in worst_deviation(&d, seed, PREFIX) {
            prop_assert!(worst <= TOLERANCE, "{}: off by {} in {:?}", name, worst, d);
        }
    }

    #[test]
    fn every_required_tool_is_asked_for_once_its_share_of_the_prefix_passes_the_tolerance(
        d in diversity(), seed in any::<u64>(),
    ) {
        for t in &d.tools {
            let by = ((TOLERANCE + 1.0) / t.planned_share).ceil() as u64;
            prop_assert!(
                (0..by).any(|i| plan_brief(&d, seed, i).tools.contains(&t.name)),
                "{} (share {}) not asked for in the first {} proposals", t.name, t.planned_share, by
            );
        }
    }

    #[test]
    fn refusals_and_transfers_ask_for_no_tool_and_one_request(
        d in diversity(), seed in any::<u64>(), index in any::<u64>(),
    ) {
        let b = plan_brief(&d, seed, index);
        if b.outcome.is_some_and(|o| o != Outcome::Resolve) {
            prop_assert!(b.tools.is_empty() && !b.multi_intent, "{:?}", b);
        }
        prop_assert!(b.tools.len() <= 1);
        prop_assert_eq!(b.outcome.is_some(), d.plans_outcomes());
        prop_assert_eq!(b.difficulty.is_some(), !d.difficulty.is_empty());
    }
}
