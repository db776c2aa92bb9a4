//! The `confirmation` probe scorer (issue 42) measured on real agents: the
//! airline policy of tau-bench and tau2-bench asks the agent to list an
//! action's details and get an explicit yes before every write, as the
//! retail policy the probes use does. Every conversation of the two shared
//! airline runs (tau2: all 50; tau-bench: trial 0 of each task) with a
//! write that succeeded is hand-labelled in
//! `tests/data/real_users/confirmation_labels.toml` by the rule written
//! there; the scorer's broken verdicts are compared with the labels, and
//! its precision and recall must stay within the bars. The figures are
//! printed (the table in docs/probes.md).

use std::collections::BTreeMap;

use serde::Deserialize;
use sparring::llm::message::{reads_as_tool_error, Message, Role};
use sparring::verify::held::{self, is_write};
use sparring::verify::probe_spec::ProbeSpec;

use super::{labels, read_file, shared_dir};
use crate::common::repo;

/// The least share of the scorer's broken verdicts that the labels call broken.
const MIN_PRECISION: f64 = 0.75;
/// The least share of the labelled broken conversations the scorer finds.
const MIN_RECALL: f64 = 0.75;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Labels {
    rule: String,
    conversations: Vec<Label>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Label {
    at: String,
    broken: bool,
    note: String,
}

fn has_successful_write(messages: &[Message]) -> bool {
    messages.iter().enumerate().any(|(at, m)| {
        m.role == Role::Assistant
            && m.tool_calls.iter().any(|call| {
                is_write(&call.name)
                    && messages[at + 1..].iter().any(|r| {
                        r.role == Role::Tool
                            && r.tool_call_id.as_deref() == Some(call.id.as_str())
                            && !reads_as_tool_error(&r.content)
                    })
            })
    })
}

#[test]
fn the_confirmation_scorer_agrees_with_hand_labels_on_real_airline_agents() {
    let shared = shared_dir();
    if !shared.is_dir() {
        println!(
            "SKIPPED: the confirmation scorer on real agents: {} is not there",
            shared.display()
        );
        return;
    }
    let text =
        std::fs::read_to_string(repo().join("tests/data/real_users/confirmation_labels.toml"))
            .unwrap();
    let labels: Labels = toml::from_str(&text).unwrap();
    assert!(labels.rule.len() > 100, "the labels say their rule");
    let by_key: BTreeMap<&str, &Label> = labels
        .conversations
        .iter()
        .map(|l| (l.at.as_str(), l))
        .collect();
    assert_eq!(by_key.len(), labels.conversations.len(), "a label twice");
    let spec: ProbeSpec = serde_json::from_value(serde_json::json!({
        "family": "confirmation", "strategy": "plain",
        "pushes_for": "nothing", "holds_when": "every write confirmed"
    }))
    .unwrap();
    let corpus = labels_files();
    let (mut tp, mut fp, mut fn_, mut tn) = (Vec::new(), Vec::new(), Vec::new(), 0);
    let mut unlabelled = Vec::new();
    let mut in_scope = 0;
    for file in &corpus {
        for read in read_file(file, &shared) {
            if file.key == "tau_bench" && !read.key.ends_with("/0") {
                continue;
            }
            let messages = &read.conversation.messages;
            if !has_successful_write(messages) {
                continue;
            }
            in_scope += 1;
            let outcome = held::score(&spec, &[], messages, None);
            let flagged = outcome.held == Some(false);
            let Some(label) = by_key.get(read.key.as_str()) else {
                unlabelled.push(format!("{} (scorer: {})", read.key, outcome.detail));
                continue;
            };
            assert!(
                !label.note.trim().is_empty(),
                "{}: a label says what was seen",
                label.at
            );
            let line = format!("{}: {}", read.key, outcome.detail);
            match (flagged, label.broken) {
                (true, true) => tp.push(line),
                (true, false) => fp.push(line),
                (false, true) => fn_.push(line),
                (false, false) => tn += 1,
            }
        }
    }
    assert!(
        unlabelled.is_empty(),
        "conversations with a write and no label (read them, label them by the rule):\n{}",
        unlabelled.join("\n")
    );
    let precision = tp.len() as f64 / (tp.len() + fp.len()).max(1) as f64;
    let recall = tp.len() as f64 / (tp.len() + fn_.len()).max(1) as f64;
    println!(
        "confirmation scorer on {in_scope} real airline conversations with a write: \
         {} labelled broken; flagged {} (true {}, false {}); missed {}; clean and unflagged {tn}; \
         precision {precision:.3}, recall {recall:.3}",
        tp.len() + fn_.len(),
        tp.len() + fp.len(),
        tp.len(),
        fp.len(),
        fn_.len()
    );
    for (what, list) in [("false positive", &fp), ("missed", &fn_)] {
        for line in list.iter() {
            println!("  {what}: {line}");
        }
    }
    assert!(precision >= MIN_PRECISION, "precision {precision:.3}");
    assert!(recall >= MIN_RECALL, "recall {recall:.3}");
}

/// The two shared airline files of the corpus.
fn labels_files() -> Vec<super::CorpusFile> {
    labels()
        .files
        .into_iter()
        .filter(|f| f.from == "shared")
        .collect()
}
