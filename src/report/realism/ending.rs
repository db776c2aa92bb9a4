//! How a conversation ends, from its termination and its last user turn:
//! - `transferred`: the termination says transfer (`user_transfer`, or any
//!   reason holding `transfer`), or the last user turn asks for a human
//!   ([`TRANSFER_PHRASES`]);
//! - `confirmed`: otherwise, the last user turn thanks or agrees
//!   ([`CONFIRMATION_PHRASES`]): the user stopped after the agent did it;
//! - `abandoned`: otherwise, the user ended it (`user_stop`,
//!   `user_out_of_scope`, or an imported conversation whose reason is not a
//!   limit) without confirming: gave up, left unsatisfied;
//! - `cut_off`: a limit or a failure ended it (`max_turns`, `max_steps`,
//!   `timeout`, errors, `cancelled`, `policy_answered`).

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
/// user last said `last_user` (empty when the user never spoke).
pub fn ending(termination: &str, last_user: &str) -> Ending {
    let said = last_user.to_lowercase().replace('’', "'");
    let has = |phrases: &[&str]| phrases.iter().any(|p| said.contains(p));
    if termination.contains("transfer") || has(&TRANSFER_PHRASES) {
        Ending::Transferred
    } else if has(&CONFIRMATION_PHRASES) && !expresses_frustration(last_user) {
        Ending::Confirmed
    } else if CUT_OFF.iter().any(|c| termination.contains(c)) {
        Ending::CutOff
    } else {
        Ending::Abandoned
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thanks_at_the_end_is_a_confirmation_whatever_stopped_it() {
        assert_eq!(ending("user_stop", "Great, thanks!"), Ending::Confirmed);
        assert_eq!(ending("imported", "That's all, bye"), Ending::Confirmed);
    }

    #[test]
    fn a_transfer_by_reason_or_by_request() {
        assert_eq!(ending("user_transfer", "ok"), Ending::Transferred);
        assert_eq!(
            ending("imported", "Let me talk to a human agent"),
            Ending::Transferred
        );
    }

    #[test]
    fn a_user_leaving_unsatisfied_abandons_a_limit_cuts_off() {
        assert_eq!(ending("user_stop", "Forget it."), Ending::Abandoned);
        assert_eq!(
            ending("user_stop", "Thanks for nothing, this is ridiculous"),
            Ending::Abandoned
        );
        assert_eq!(ending("max_turns", "and the other order?"), Ending::CutOff);
    }
}
