//! `premature_stop`: the user said `###STOP###` before the agent did what the
//! scenario needs: a gold write action (any gold action that is not a read:
//! [`READ_PREFIXES`]) had not run, or a fact to communicate had not been
//! said, and the agent's last words were still on the way there — announcing
//! or asking to confirm an action ([`PENDING_CUES`]), or asking a question
//! that is not a closing one ([`CLOSING_CUES`]) — and the user, instead of
//! answering no, left: agreeing in the very message that ends the
//! conversation ("Yes, go ahead. ###STOP###"), or not answering at all. A
//! user that declines ([`DECLINES`]: "No, I don't want to be transferred",
//! "I'll get back to you once I have it") may leave; a stop after the agent
//! said it was done (even wrongly) or closed the conversation is the
//! policy's failure, not the user's. Neither is flagged. Without gold write
//! actions or facts to communicate the check is unknown.

use crate::verify::communicate::says_fact;
use crate::verify::Criteria;

use super::input::{Speaker, UserTurns};
use super::role_confusion::plain;
use super::{excerpt, CheckResult, Evidence, UserFlag};

/// Tool names that only read (the rest change state).
pub const READ_PREFIXES: &[&str] = &[
    "get_",
    "find_",
    "list_",
    "search_",
    "calculate",
    "check_",
    "lookup_",
    "read_",
];

/// An agent still on the way: announcing an action or asking to confirm it.
/// ("I'll be here whenever you're ready" and "let me know" are no such
/// thing.)
pub const PENDING_CUES: &[&str] = &[
    "please confirm",
    "confirm if",
    "confirm whether",
    "confirm that you",
    "(yes/no)",
    "shall i",
    "should i",
    "would you like me to",
    "do you want me to",
    "can i go ahead",
    "like to proceed",
    "want to proceed",
    "wish to proceed",
    "i can proceed",
    "i'll proceed",
    "i will proceed",
    "i'll now",
    "i will now",
    "i'll go ahead",
    "let me proceed",
    "let me go ahead",
    "i'm going to",
    "i am going to",
    "one moment",
    "a moment",
    "hold on",
    "please provide",
    "could you provide",
    "could you please provide",
    "can you provide",
    "please specify",
    "please choose",
    "please select",
    "let me know which",
    "which one would you",
    "which option",
    "i'll need",
    "i will need",
    "i need the following",
];

/// What closes a conversation rather than asks for what is needed: a
/// question with one of these is no open question.
pub const CLOSING_CUES: &[&str] = &[
    "anything else",
    "something else",
    "anything more",
    "other questions",
    "help with today",
    "feel free",
    "whenever you're ready",
    "reach out",
    "take your time",
    "have a great day",
    "have a good day",
];

/// A user's last message that declines what the agent was on the way to,
/// or says it cannot give what was asked.
pub const DECLINES: &[&str] = &[
    "never mind",
    "nevermind",
    "not interested",
    "no thanks",
    "no, thank",
    "i'll pass",
    "rather not",
    "i decline",
    "don't want",
    "do not want",
    "won't be necessary",
    "not necessary",
    "get back to you",
    "come back",
    "reach out again",
    "later",
    "don't have",
    "don't know",
    "don't remember",
    "not sure",
    "think about it",
    "hold off",
    "keep my current",
    "keep it as is",
    "as is for now",
    "i'll keep",
    "i'd like to keep",
    "i would like to keep",
    "no changes",
    "not proceed",
    "won't proceed",
];

/// A user's last message that agrees to the action the agent was about to
/// take.
pub const AGREES: &[&str] = &[
    "yes",
    "go ahead",
    "proceed",
    "i confirm",
    "confirmed",
    "please do",
    "sounds good",
    "that works",
    "let's do",
    "do it",
];

fn is_read(name: &str) -> bool {
    READ_PREFIXES.iter().any(|p| name.starts_with(p))
}

pub fn check(turns: &UserTurns, criteria: &Criteria) -> CheckResult {
    let writes: Vec<&str> = criteria
        .actions
        .iter()
        .map(|a| a.name.as_str())
        .filter(|n| !is_read(n))
        .collect();
    if !turns.simulated_user || (writes.is_empty() && criteria.communicate.is_empty()) {
        return CheckResult::unknown(UserFlag::PrematureStop);
    }
    if !turns.user_stopped {
        return CheckResult::from_evidence(UserFlag::PrematureStop, Vec::new());
    }
    let mut called: Vec<&str> = turns
        .lines
        .iter()
        .filter(|l| l.speaker == Speaker::Agent)
        .flat_map(|l| l.tool_calls.iter().map(String::as_str))
        .collect();
    let mut missing: Vec<String> = Vec::new();
    for write in writes {
        match called.iter().position(|c| *c == write) {
            Some(at) => {
                called.remove(at);
            }
            None => missing.push(format!("action {write}")),
        }
    }
    let said: Vec<&str> = turns
        .lines
        .iter()
        .filter(|l| l.speaker == Speaker::Agent)
        .map(|l| &*l.text)
        .collect();
    for fact in &criteria.communicate {
        if !said.iter().any(|s| says_fact(s, fact)) {
            missing.push(format!("fact '{fact}'"));
        }
    }
    let end = turns.lines.last().map_or(0, |l| l.index + 1);
    let stop = turns.outputs.last();
    let stop_at = stop.and_then(|o| o.message).unwrap_or(end);
    let last_agent = turns.agent_text_before(stop_at);
    let pending = last_agent.and_then(|l| pending_cue(&l.text));
    let (Some(agent), Some(cue), false) = (last_agent, pending, missing.is_empty()) else {
        return CheckResult::from_evidence(UserFlag::PrematureStop, Vec::new());
    };
    let stop_text = match stop {
        Some(o) => o.raw.clone(),
        None => turns
            .user_lines()
            .last()
            .map_or_else(String::new, |l| l.text.clone()),
    };
    // The user's own last words, when they answer the agent's last message.
    let answer = turns
        .user_lines()
        .last()
        .filter(|l| l.index > agent.index)
        .map_or("", |l| l.text.as_str());
    if declines(answer) {
        return CheckResult::from_evidence(UserFlag::PrematureStop, Vec::new());
    }
    let evidence = Evidence {
        message: stop.map_or_else(|| turns.user_lines().last().map(|l| l.index), |o| o.message),
        text: excerpt(&stop_text),
        why: format!(
            "stopped with {} undone, right after the agent's message {} ({cue}): '{}'",
            missing.join(", "),
            agent.index,
            excerpt(&agent.text)
        ),
    };
    CheckResult::from_evidence(UserFlag::PrematureStop, vec![evidence])
}

/// Whether the user's last words decline (and do not agree): it may leave.
fn declines(text: &str) -> bool {
    let lower = plain(text);
    let first = lower
        .split(|c: char| !c.is_alphanumeric())
        .find(|w| !w.is_empty())
        .unwrap_or_default();
    let agrees = AGREES.iter().any(|a| contains_words(&lower, a));
    let no = matches!(first, "no" | "nope" | "nah");
    !agrees && (no || DECLINES.iter().any(|d| lower.contains(d)))
}

/// Whether `text` holds `phrase` as whole words.
fn contains_words(text: &str, phrase: &str) -> bool {
    text.match_indices(phrase).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + phrase.len()..].chars().next();
        !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
    })
}

/// Why the agent's words read as still on the way, if they do.
fn pending_cue(text: &str) -> Option<String> {
    let lower = plain(text);
    if let Some(cue) = PENDING_CUES.iter().find(|c| lower.contains(*c)) {
        return Some(format!("'{cue}'"));
    }
    (lower.contains('?') && !CLOSING_CUES.iter().any(|c| lower.contains(c)))
        .then(|| "an open question".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::user_checks::input::{Line, UserOutput};
    use crate::user_checks::Outcome;
    use crate::verify::Action;

    fn criteria(actions: &[&str], facts: &[&str]) -> Criteria {
        Criteria {
            actions: actions
                .iter()
                .map(|n| Action {
                    name: n.to_string(),
                    arguments: serde_json::json!({}),
                    caller: Default::default(),
                })
                .collect(),
            communicate: facts.iter().map(|f| f.to_string()).collect(),
            ..Criteria::default()
        }
    }

    /// User asks, agent says `agent` (having called `calls`), user stops.
    fn stopped_after(agent: &str, calls: &[&str]) -> UserTurns {
        UserTurns {
            lines: vec![
                Line::new(0, "user", "user", "Cancel my order please.", vec![]),
                Line::new(
                    1,
                    "assistant",
                    "policy",
                    "",
                    calls.iter().map(|c| c.to_string()).collect(),
                ),
                Line::new(2, "tool", "env", "{}", vec![]),
                Line::new(3, "assistant", "policy", agent, vec![]),
                Line::new(4, "user", "user", "Thanks, bye.", vec![]),
            ],
            outputs: vec![UserOutput {
                message: Some(4),
                raw: "Thanks, bye. ###STOP###".into(),
                finish_reason: None,
            }],
            user_stopped: true,
            simulated_user: true,
        }
    }

    #[test]
    fn stopping_when_the_agent_asks_to_confirm_a_write_is_premature() {
        let turns = stopped_after(
            "Here is what I will do: cancel order #W1. Please confirm (yes/no).",
            &["get_order_details"],
        );
        let r = check(
            &turns,
            &criteria(&["get_order_details", "cancel_pending_order"], &[]),
        );
        assert_eq!(r.outcome, Outcome::Flagged);
        assert_eq!(r.evidence[0].message, Some(4));
        assert!(
            r.evidence[0].why.contains("action cancel_pending_order"),
            "{:?}",
            r.evidence
        );
    }

    #[test]
    fn stopping_at_an_open_question_before_a_fact_was_said_is_premature() {
        let turns = stopped_after("Could you give me your email address?", &[]);
        let r = check(
            &turns,
            &criteria(&["find_user_id_by_email"], &["$1,234.50"]),
        );
        assert_eq!(r.outcome, Outcome::Flagged);
        assert!(r.evidence[0].why.contains("an open question"));
    }

    #[test]
    fn stopping_once_done_or_after_the_agent_claimed_it_is_not_premature() {
        let done = stopped_after(
            "All done. Refund 1234.50. Anything else?",
            &["cancel_pending_order"],
        );
        let c = criteria(&["cancel_pending_order"], &["$1,234.50"]);
        assert_eq!(check(&done, &c).outcome, Outcome::Clear);
        // The agent claimed to be done without acting: the policy's failure.
        let claimed = stopped_after("All done. Refund 1234.50. Anything else?", &[]);
        assert_eq!(check(&claimed, &c).outcome, Outcome::Clear);
    }

    #[test]
    fn a_user_that_declines_or_cannot_answer_may_leave_but_one_that_agrees_may_not() {
        let c = criteria(&["transfer_to_human_agents"], &[]);
        let offer = "I can transfer you to a human agent. Would you like me to do that?";
        let mut turns = stopped_after(offer, &[]);
        for (said, premature) in [
            ("No, I don't want to be transferred. Thanks anyway.", false),
            (
                "I'll get back to you once I have the reservation id.",
                false,
            ),
            ("Yes, please go ahead. Thank you!", true),
            ("Thanks, bye.", true),
        ] {
            turns.lines[4].text = said.into();
            turns.outputs[0].raw = format!("{said} ###STOP###");
            let r = check(&turns, &c);
            assert_eq!(r.outcome == Outcome::Flagged, premature, "{said}");
        }
        let closed = stopped_after(
            "Take your time, and I'll be here whenever you're ready. Feel free to let me know!",
            &[],
        );
        assert_eq!(check(&closed, &c).outcome, Outcome::Clear);
    }

    #[test]
    fn without_writes_or_facts_it_is_unknown_and_without_a_stop_clear() {
        let turns = stopped_after("Please confirm (yes/no).", &[]);
        assert_eq!(
            check(&turns, &criteria(&["get_order_details"], &[])).outcome,
            Outcome::Unknown
        );
        let mut running = turns.clone();
        running.user_stopped = false;
        assert_eq!(
            check(&running, &criteria(&["cancel_pending_order"], &[])).outcome,
            Outcome::Clear
        );
    }
}
