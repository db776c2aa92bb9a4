//! How a conversation ends, from its termination and its last user turn:
//! - `transferred`: the termination says transfer (`user_transfer`, or any
//!   reason holding `transfer`), or the last user turn asks for a human
//!   ([`TRANSFER_PHRASES`]);
//! - `confirmed`: otherwise, the last user turn thanks or agrees
//!   ([`CONFIRMATION_PHRASES`]): the user stopped after the agent did it;
//! - `abandoned`: otherwise, the user ended it without confirming (gave up,
//!   left unsatisfied): the termination is the user's (`user_stop`,
//!   `user_out_of_scope`), or, with no limit or failure named, the user's
//!   turn is the conversation's last message;
//! - `cut_off`: otherwise: a limit or a failure ended it (`max_turns`,
//!   `max_steps`, `timeout`, errors, `cancelled`, `policy_answered`), or the
//!   recording simply ends on the agent's answer (an imported rollout of one
//!   exchange).

use serde::Serialize;

use super::lexicon::expresses_frustration;

/// Phrases of a user who is satisfied and leaving.
pub const CONFIRMATION_PHRASES: [&str; 16] = [
    "thank",
    "thanks",
    "thx",
    "great",
    "perfect",
    "that's all",
    "that is all",
    "that works",
    "sounds good",
    "appreciate",
    "bye",
    "got it",
    "all set",
    "awesome",
    "wonderful",
    "excellent",
];

/// Phrases of a user who asks for a person.
pub const TRANSFER_PHRASES: [&str; 6] = [
    "human agent",
    "real person",
    "a human",
    "representative",
    "transfer me",
    "speak to someone",
];

const CUT_OFF: [&str; 9] = [
    "max_turns",
    "max_steps",
    "timeout",
    "policy_error",
    "user_error",
    "env_error",
    "cancelled",
    "policy_answered",
    "error",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Ending {
    Confirmed,
    Abandoned,
    Transferred,
    CutOff,
}

impl Ending {
    pub const ALL: [Ending; 4] = [
        Ending::Confirmed,
        Ending::Abandoned,
        Ending::Transferred,
        Ending::CutOff,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Ending::Confirmed => "confirmed",
            Ending::Abandoned => "abandoned",
            Ending::Transferred => "transferred",
            Ending::CutOff => "cut_off",
        }
    }
}

/// The ending of a conversation that stopped for `termination` after the
/// user last said `last_user` (empty when the user never spoke);
/// `user_spoke_last` when no message came after that turn.
pub fn ending(termination: &str, last_user: &str, user_spoke_last: bool) -> Ending {
    let said = last_user.to_lowercase().replace('’', "'");
    let has = |phrases: &[&str]| phrases.iter().any(|p| said.contains(p));
    if termination.contains("transfer") || has(&TRANSFER_PHRASES) {
        Ending::Transferred
    } else if has(&CONFIRMATION_PHRASES) && !expresses_frustration(last_user) {
        Ending::Confirmed
    } else if termination.starts_with("user_")
        || (user_spoke_last && !CUT_OFF.iter().any(|c| termination.contains(c)))
    {
        Ending::Abandoned
    } else {
        Ending::CutOff
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thanks_at_the_end_is_a_confirmation_whatever_stopped_it() {
        assert_eq!(
            ending("user_stop", "Great, thanks!", true),
            Ending::Confirmed
        );
        assert_eq!(
            ending("imported", "That's all, bye", false),
            Ending::Confirmed
        );
    }

    #[test]
    fn a_transfer_by_reason_or_by_request() {
        assert_eq!(ending("user_transfer", "ok", true), Ending::Transferred);
        assert_eq!(
            ending("imported", "Let me talk to a human agent", false),
            Ending::Transferred
        );
    }

    #[test]
    fn a_user_leaving_unsatisfied_abandons_a_limit_cuts_off() {
        assert_eq!(ending("user_stop", "Forget it.", true), Ending::Abandoned);
        assert_eq!(
            ending("user_stop", "Thanks for nothing, this is ridiculous", true),
            Ending::Abandoned
        );
        assert_eq!(ending("imported", "Forget it.", true), Ending::Abandoned);
        assert_eq!(
            ending("max_turns", "and the other order?", true),
            Ending::CutOff
        );
    }

    #[test]
    fn a_recording_that_ends_on_the_agent_s_answer_is_cut_off() {
        assert_eq!(
            ending("imported", "Where is my order?", false),
            Ending::CutOff
        );
    }
}
