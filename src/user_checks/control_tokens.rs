//! `control_token_misuse`: the user's `###STOP###`, `###TRANSFER###` and
//! `###OUT-OF-SCOPE###` used wrongly. Five signs: text after a token (which
//! the engine drops, so the agent never sees it: "…###STOP### Agent: You're
//! welcome!"); a malformed token left in a message ("##STOP", "STOP###");
//! a STOP or TRANSFER before the agent said anything but its greeting; a
//! TRANSFER before the agent transferred the user (it called no transfer
//! tool, and said no "transferred" since the user's last message: "Yes,
//! please transfer me. ###TRANSFER###" ends the conversation before the
//! agent can); a STOP or OUT-OF-SCOPE right after the agent transferred the
//! user. A transfer's token is TRANSFER, said once transferred (tau2-bench's
//! user guidelines).

use std::sync::LazyLock;

use regex::Regex;

use crate::prompt::{OUT_OF_SCOPE_TOKEN, STOP_TOKEN, TRANSFER_TOKEN};

use super::input::{Speaker, UserTurns};
use super::{excerpt, CheckResult, Evidence, UserFlag};

const TOKENS: [&str; 3] = [STOP_TOKEN, TRANSFER_TOKEN, OUT_OF_SCOPE_TOKEN];

/// A token written wrongly: `#` marks with a token word, on either side.
static MALFORMED: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"#{2,}\s*(?:STOP|TRANSFER|OUT[-_ ]OF[-_ ]SCOPE)\b|\b(?:STOP|TRANSFER|OUT[-_ ]OF[-_ ]SCOPE)\s*#{2,}").ok()
});

pub fn check(turns: &UserTurns) -> CheckResult {
    let mut evidence = Vec::new();
    for output in &turns.outputs {
        let Some((at, token)) = TOKENS
            .iter()
            .filter_map(|t| output.raw.find(t).map(|at| (at, *t)))
            .min_by_key(|(at, _)| *at)
        else {
            continue;
        };
        let after = output.raw[at + token.len()..].trim();
        if !after.is_empty() {
            evidence.push(Evidence {
                message: output.message,
                text: excerpt(&output.raw[at..]),
                why: format!("text after {token}, which the agent never sees"),
            });
            continue;
        }
        let before = output
            .message
            .unwrap_or_else(|| turns.lines.last().map_or(0, |l| l.index + 1));
        let agent_spoke = turns
            .lines
            .iter()
            .take_while(|l| l.index < before)
            .any(|l| l.speaker == Speaker::Agent && is_policy_turn(turns, l.index));
        if (token == STOP_TOKEN || token == TRANSFER_TOKEN) && !agent_spoke {
            evidence.push(Evidence {
                message: output.message,
                text: excerpt(&output.raw),
                why: format!("{token} before the agent said anything but its greeting"),
            });
            continue;
        }
        if token != TRANSFER_TOKEN && just_transferred(turns, before) {
            evidence.push(Evidence {
                message: output.message,
                text: excerpt(&output.raw),
                why: format!(
                    "{token} right after the agent transferred it: a transfer's token is {TRANSFER_TOKEN}"
                ),
            });
            continue;
        }
        let called = turns
            .lines
            .iter()
            .take_while(|l| l.index < before)
            .any(|l| {
                l.speaker == Speaker::Agent && l.tool_calls.iter().any(|t| t.contains("transfer"))
            });
        if token == TRANSFER_TOKEN && !called && !just_transferred(turns, before) {
            evidence.push(Evidence {
                message: output.message,
                text: excerpt(&output.raw),
                why: format!(
                    "{token} though the agent had not transferred it (no transfer tool called, no transfer said since its last message)"
                ),
            });
        }
    }
    if let Some(malformed) = MALFORMED.as_ref() {
        for line in turns.user_lines() {
            if let Some(m) = malformed.find(&line.text.to_uppercase()) {
                evidence.push(Evidence {
                    message: Some(line.index),
                    text: excerpt(&line.text),
                    why: format!("a malformed control token: '{}'", m.as_str()),
                });
            }
        }
    }
    evidence.sort_by_key(|e| e.message);
    CheckResult::from_evidence(UserFlag::ControlTokenMisuse, evidence)
}

/// Whether the agent line at `index` came after the user's first message (a
/// greeting is the agent's before the user says anything).
fn is_policy_turn(turns: &UserTurns, index: usize) -> bool {
    turns
        .lines
        .iter()
        .any(|l| l.speaker == Speaker::User && l.index < index)
}

/// Whether the agent transferred the user since the user's last message
/// before stored index `before`: it called a transfer tool, or said so.
fn just_transferred(turns: &UserTurns, before: usize) -> bool {
    let since = turns
        .lines
        .iter()
        .take_while(|l| l.index < before)
        .filter(|l| l.speaker == Speaker::User)
        .last()
        .map_or(0, |l| l.index + 1);
    turns
        .lines
        .iter()
        .filter(|l| l.index >= since && l.index < before && l.speaker == Speaker::Agent)
        .any(|l| {
            let text = l.text.to_lowercase();
            l.tool_calls.iter().any(|t| t.contains("transfer"))
                || [
                    "transferred to",
                    "transferred you",
                    "being transferred",
                    "transferring you",
                ]
                .iter()
                .any(|p| text.contains(p))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::user_checks::input::{Line, UserOutput};
    use crate::user_checks::Outcome;

    /// Agent greeting, user, agent; then the user's output `raw`.
    fn ending_with(raw: &str, agent: &str) -> UserTurns {
        let (text, _) = crate::sim::user_simulator::parse_signal(raw);
        let mut lines = vec![
            Line::new(0, "assistant", "system", "Hi! How can I help?", vec![]),
            Line::new(1, "user", "user", "I need help with my order.", vec![]),
            Line::new(2, "assistant", "policy", agent, vec![]),
        ];
        let message = (!text.is_empty()).then_some(3);
        if !text.is_empty() {
            lines.push(Line::new(3, "user", "user", &text, vec![]));
        }
        UserTurns {
            lines,
            outputs: vec![UserOutput {
                message,
                raw: raw.into(),
                finish_reason: Some("stop".into()),
            }],
            user_stopped: true,
            simulated_user: true,
        }
    }

    #[test]
    fn text_after_a_token_is_flagged() {
        let r = check(&ending_with(
            "Perfect, thanks! ###STOP### Agent: You're welcome! Is there anything else?",
            "All done.",
        ));
        assert_eq!(r.outcome, Outcome::Flagged);
        assert!(r.evidence[0].text.starts_with("###STOP### Agent:"));
        assert_eq!(r.evidence[0].message, Some(3));
    }

    #[test]
    fn a_malformed_token_or_an_unprompted_transfer_is_flagged() {
        let mut turns = ending_with("Thanks, bye ##STOP", "All done.");
        turns.outputs.clear();
        assert_eq!(check(&turns).outcome, Outcome::Flagged);
        let transfer = check(&ending_with("Okay. ###TRANSFER###", "All done."));
        assert_eq!(transfer.outcome, Outcome::Flagged);
        assert!(transfer.evidence[0].why.contains("had not transferred"));
        let asked = check(&ending_with(
            "Yes, please transfer me. ###TRANSFER###",
            "Would you like me to transfer you to a human agent?",
        ));
        assert_eq!(asked.outcome, Outcome::Flagged);
    }

    #[test]
    fn leaving_a_transfer_with_another_token_is_flagged() {
        for raw in ["###OUT-OF-SCOPE###", "Thanks. ###STOP###"] {
            let r = check(&ending_with(
                raw,
                "YOU ARE BEING TRANSFERRED TO A HUMAN AGENT. PLEASE HOLD ON.",
            ));
            assert_eq!(r.outcome, Outcome::Flagged, "{raw}");
            assert!(
                r.evidence[0].why.contains("transferred it"),
                "{:?}",
                r.evidence
            );
        }
    }

    #[test]
    fn a_stop_in_the_opening_message_is_flagged() {
        let turns = UserTurns {
            lines: vec![
                Line::new(0, "assistant", "system", "Hi! How can I help?", vec![]),
                Line::new(1, "user", "user", "Hello", vec![]),
            ],
            outputs: vec![UserOutput {
                message: Some(1),
                raw: "Hello ###STOP###".into(),
                finish_reason: None,
            }],
            user_stopped: true,
            simulated_user: true,
        };
        assert_eq!(check(&turns).outcome, Outcome::Flagged);
    }

    #[test]
    fn tokens_used_as_meant_are_not_flagged() {
        for (raw, agent) in [
            (
                "No, that's everything. Thank you! ###STOP###",
                "All done. Anything else?",
            ),
            ("###STOP###", "All done."),
            (
                "Okay, I'll wait for them. ###TRANSFER###",
                "I've transferred you to a human agent.",
            ),
            ("I can't go on. ###OUT-OF-SCOPE###", "We cannot do that."),
        ] {
            let r = check(&ending_with(raw, agent));
            assert_eq!(r.outcome, Outcome::Clear, "{raw}: {:?}", r.evidence);
        }
    }
}
