//! The gates a curated export applies, in order, and the checks of one
//! stored conversation at each: pure functions of the conversation, its
//! judgments and the export's [`Filter`] (the flags and the profile
//! combined), each failing with the reason the manifest gives.
//!
//! Order: `selection` (the filters that pick conversations rather than judge
//! their quality: termination, scenario, persona, max reward, unsolved
//! synthesized scenarios), `reward`, `judges`, `user_flags`, `bounds` (turns
//! and length), `format` (the format cannot write it: no policy reply, ...),
//! `near_duplicates`, `stratum_cap`, then `holdout`, which drops nothing and
//! sends each scenario to train or validation.

use serde::Serialize;

use crate::export::{Filter, JudgmentIndex};
use crate::store::StoredConversation;
use crate::user_checks::UserChecks;

use super::profile::Bounds;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Gate {
    Selection,
    Reward,
    Judges,
    UserFlags,
    Bounds,
    Format,
    NearDuplicates,
    StratumCap,
    Holdout,
}

impl Gate {
    pub const ALL: [Gate; 9] = [
        Gate::Selection,
        Gate::Reward,
        Gate::Judges,
        Gate::UserFlags,
        Gate::Bounds,
        Gate::Format,
        Gate::NearDuplicates,
        Gate::StratumCap,
        Gate::Holdout,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Gate::Selection => "selection",
            Gate::Reward => "reward",
            Gate::Judges => "judges",
            Gate::UserFlags => "user_flags",
            Gate::Bounds => "bounds",
            Gate::Format => "format",
            Gate::NearDuplicates => "near_duplicates",
            Gate::StratumCap => "stratum_cap",
            Gate::Holdout => "holdout",
        }
    }

    /// Its place in the order.
    pub fn index(self) -> usize {
        Gate::ALL.iter().position(|g| *g == self).unwrap_or(0)
    }
}

/// Why a conversation stopped at a gate.
#[derive(Debug, Clone, PartialEq)]
pub struct Stop {
    pub gate: Gate,
    pub reason: String,
}

fn stop(gate: Gate, reason: impl Into<String>) -> Result<(), Stop> {
    Err(Stop {
        gate,
        reason: reason.into(),
    })
}

/// `selection`: what the filters asked for besides quality.
pub fn selection(filter: &Filter, c: &StoredConversation) -> Result<(), Stop> {
    if filter.unsolved_scenario(&c.conversation) {
        return stop(
            Gate::Selection,
            "its scenario is a synthesized one no attempt passed",
        );
    }
    if !filter.conversations.keeps(&c.conversation) {
        return stop(
            Gate::Selection,
            "outside the termination, scenario, persona, probe outcome or max reward asked for",
        );
    }
    Ok(())
}

/// `reward`: scored, and at least the minimum.
pub fn reward(filter: &Filter, c: &StoredConversation) -> Result<(), Stop> {
    let Some(reward) = c.conversation.reward else {
        return stop(
            Gate::Reward,
            "not scored (the simulator or environment broke it)",
        );
    };
    match filter.min_reward {
        Some(min) if reward < min => stop(Gate::Reward, format!("reward {reward} below {min}")),
        _ => Ok(()),
    }
}

/// `judges`: no pass/fail judge failed it, every minimum score met.
pub fn judges(
    filter: &Filter,
    judgments: &JudgmentIndex,
    c: &StoredConversation,
) -> Result<(), Stop> {
    let id = c.conversation.id;
    for judge in &filter.drop_flagged {
        if let Some(score) = judgments.scores(id, judge).find(|s| *s < 0.5) {
            return stop(
                Gate::Judges,
                format!("judge {judge} failed it (score {score})"),
            );
        }
    }
    for min in &filter.min_judge {
        let scores: Vec<f64> = judgments.scores(id, &min.judge).collect();
        if !scores.iter().any(|s| *s >= min.score) {
            let got = if scores.is_empty() {
                "no ok judgment".to_string()
            } else {
                format!(
                    "scored {}",
                    scores
                        .iter()
                        .map(f64::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            return stop(
                Gate::Judges,
                format!("judge {}: {got}, below {}", min.judge, min.score),
            );
        }
    }
    Ok(())
}

/// `user_flags`: none of the checks asked for flagged its simulated user
/// (a conversation stored before the checks existed passes).
pub fn user_flags(filter: &Filter, c: &StoredConversation) -> Result<(), Stop> {
    if filter.drop_user_flags.is_empty() {
        return Ok(());
    }
    let Ok(Some(checks)) = UserChecks::from_stored(c.conversation.user_checks.as_ref()) else {
        return Ok(());
    };
    let fired: Vec<&str> = filter
        .drop_user_flags
        .iter()
        .filter(|f| checks.is_flagged(**f))
        .map(|f| f.as_str())
        .collect();
    if fired.is_empty() {
        Ok(())
    } else {
        stop(
            Gate::UserFlags,
            format!("its simulated user was flagged: {}", fired.join(", ")),
        )
    }
}

/// The user turns of a conversation: its messages of role `user`.
pub fn turns(c: &StoredConversation) -> u64 {
    c.messages.iter().filter(|m| m.role == "user").count() as u64
}

/// The characters of its messages' contents.
pub fn chars(c: &StoredConversation) -> u64 {
    c.messages
        .iter()
        .map(|m| m.content.chars().count() as u64)
        .sum()
}

/// `bounds`: user turns and characters within the bounds.
pub fn bounds(b: &Bounds, c: &StoredConversation) -> Result<(), Stop> {
    let (t, n) = (turns(c), chars(c));
    if let Some(min) = b.min_turns.filter(|min| t < *min) {
        return stop(Gate::Bounds, format!("{t} user turns, fewer than {min}"));
    }
    if let Some(max) = b.max_turns.filter(|max| t > *max) {
        return stop(Gate::Bounds, format!("{t} user turns, more than {max}"));
    }
    if let Some(min) = b.min_chars.filter(|min| n < *min) {
        return stop(Gate::Bounds, format!("{n} characters, fewer than {min}"));
    }
    if let Some(max) = b.max_chars.filter(|max| n > *max) {
        return stop(Gate::Bounds, format!("{n} characters, more than {max}"));
    }
    Ok(())
}

/// What near-duplicates are compared on: the user's and the policy's words.
pub fn dialogue_text(c: &StoredConversation) -> String {
    c.messages
        .iter()
        .filter(|m| m.role == "user" || m.role == "assistant")
        .map(|m| m.content.as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
#[path = "gates_tests.rs"]
mod tests;
