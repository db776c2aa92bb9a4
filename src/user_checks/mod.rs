//! Deterministic checks of the simulated user, run on every conversation as
//! it is saved: no model calls, pure functions over the transcript and the
//! scenario. Each check is a named flag ([`UserFlag`]) with an outcome and,
//! when it fires, the evidence: the message index and the matched text.
//!
//! | flag | fires when the simulated user … |
//! |---|---|
//! | `premature_stop` | said `###STOP###` while gold write actions were still undone (or facts unsaid) and the agent's last words were announcing an action or asking to confirm it |
//! | `role_confusion` | wrote as the assistant ([`role_confusion::PHRASES`]) or copied [`role_confusion::COPIED_WORDS`] words in a row from the agent's previous message |
//! | `instruction_leak` | repeated [`instruction_leak::LEAKED_WORDS`] words in a row of its hidden instructions or unknown info, spoke of them, or said an id/amount only its unknown info holds |
//! | `invented_fact` | stated an email, id, order number or amount that is not in its scenario and that the agent had not said |
//! | `repetition` | repeated a message, or a run of [`repetition::REPEATED_WORDS`] words, or was cut off by `max_tokens` |
//! | `control_token_misuse` | kept writing after a control token, wrote a malformed one, stopped before the agent spoke, or said TRANSFER with no transfer in sight |

pub mod basis;
pub mod checks;
pub mod control_tokens;
pub mod directions;
pub mod input;
pub mod instruction_leak;
pub mod invented_fact;
pub mod premature_stop;
pub mod repetition;
pub mod role_confusion;
pub mod stored;
pub mod words;

use serde::{Deserialize, Serialize};

pub use basis::ScenarioBasis;
pub use checks::check_conversation;
pub use input::{Line, Speaker, UserOutput, UserTurns};

/// The version of the checks a stored result was made by; bumped when a check
/// changes what it flags, so old results can be told apart.
pub const CHECKS_VERSION: u32 = 3;

/// A deterministic check of the simulated user, named as it is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UserFlag {
    PrematureStop,
    RoleConfusion,
    InstructionLeak,
    InventedFact,
    Repetition,
    ControlTokenMisuse,
}

impl UserFlag {
    pub const ALL: [UserFlag; 6] = [
        UserFlag::PrematureStop,
        UserFlag::RoleConfusion,
        UserFlag::InstructionLeak,
        UserFlag::InventedFact,
        UserFlag::Repetition,
        UserFlag::ControlTokenMisuse,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            UserFlag::PrematureStop => "premature_stop",
            UserFlag::RoleConfusion => "role_confusion",
            UserFlag::InstructionLeak => "instruction_leak",
            UserFlag::InventedFact => "invented_fact",
            UserFlag::Repetition => "repetition",
            UserFlag::ControlTokenMisuse => "control_token_misuse",
        }
    }

    pub fn parse(name: &str) -> Option<UserFlag> {
        UserFlag::ALL.into_iter().find(|f| f.as_str() == name)
    }

    /// `premature_stop, role_confusion, …` for messages.
    pub fn names() -> String {
        UserFlag::ALL.map(UserFlag::as_str).join(", ")
    }

    /// A flag name a user gave (a CLI argument, a config value, a query
    /// parameter), or an error that lists the names there are.
    pub fn from_user(name: &str) -> Result<UserFlag, String> {
        UserFlag::parse(name.trim()).ok_or_else(|| {
            format!(
                "'{name}' is not a simulated-user flag; the flags are: {}",
                UserFlag::names()
            )
        })
    }
}

impl std::fmt::Display for UserFlag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for UserFlag {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        UserFlag::from_user(s)
    }
}

/// What a check found in one conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// It fired; the evidence says where.
    Flagged,
    /// It ran and found nothing.
    Clear,
    /// It could not run: what it needs is missing (e.g. `premature_stop`
    /// without gold actions or facts, or no simulated user at all).
    Unknown,
}

/// Where a check fired: the message (its index in the stored conversation;
/// `None` for a stop with no text, which is not stored as a message), the
/// text that matched, and what was wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Evidence {
    pub message: Option<usize>,
    pub text: String,
    pub why: String,
}

/// One check's result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckResult {
    pub flag: UserFlag,
    pub outcome: Outcome,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<Evidence>,
}

impl CheckResult {
    /// Flagged with this evidence, or clear without any.
    pub fn from_evidence(flag: UserFlag, evidence: Vec<Evidence>) -> CheckResult {
        let outcome = if evidence.is_empty() {
            Outcome::Clear
        } else {
            Outcome::Flagged
        };
        CheckResult {
            flag,
            outcome,
            evidence,
        }
    }

    pub fn unknown(flag: UserFlag) -> CheckResult {
        CheckResult {
            flag,
            outcome: Outcome::Unknown,
            evidence: Vec::new(),
        }
    }
}

/// Every check's result for one conversation, as stored with it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserChecks {
    pub version: u32,
    pub checks: Vec<CheckResult>,
}

impl UserChecks {
    pub fn outcome(&self, flag: UserFlag) -> Outcome {
        self.checks
            .iter()
            .find(|c| c.flag == flag)
            .map_or(Outcome::Unknown, |c| c.outcome)
    }

    /// The flags that fired, in [`UserFlag::ALL`] order.
    pub fn flagged(&self) -> Vec<UserFlag> {
        UserFlag::ALL
            .into_iter()
            .filter(|f| self.outcome(*f) == Outcome::Flagged)
            .collect()
    }

    /// Made by this version of the checks ([`CHECKS_VERSION`]); older ones
    /// are checked again by `sparring recheck`.
    pub fn is_current(&self) -> bool {
        self.version == CHECKS_VERSION
    }

    pub fn is_flagged(&self, flag: UserFlag) -> bool {
        self.outcome(flag) == Outcome::Flagged
    }

    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }

    /// The checks stored with a conversation (`None`: stored before the checks
    /// existed). Stored JSON that does not read is an error naming why.
    pub fn from_stored(value: Option<&serde_json::Value>) -> Result<Option<UserChecks>, String> {
        match value {
            None | Some(serde_json::Value::Null) => Ok(None),
            Some(v) => serde_json::from_value(v.clone())
                .map(Some)
                .map_err(|e| format!("stored user checks do not read: {e}")),
        }
    }
}

/// Evidence text is kept short: the first this many characters, then `…`.
pub const EVIDENCE_CHARS: usize = 200;

/// `text`, cut to [`EVIDENCE_CHARS`] characters.
pub fn excerpt(text: &str) -> String {
    let text = text.trim();
    match text.char_indices().nth(EVIDENCE_CHARS) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flag_names_round_trip_and_an_unknown_name_lists_the_flags() {
        for flag in UserFlag::ALL {
            assert_eq!(UserFlag::parse(flag.as_str()), Some(flag));
            assert_eq!(
                serde_json::to_value(flag).unwrap(),
                serde_json::json!(flag.as_str())
            );
        }
        let err = UserFlag::from_user("role-confusion").unwrap_err();
        assert!(
            err.contains("'role-confusion'") && err.contains("role_confusion"),
            "{err}"
        );
    }

    #[test]
    fn the_config_knows_the_same_flags() {
        let names: Vec<&str> = UserFlag::ALL.iter().map(|f| f.as_str()).collect();
        assert_eq!(names, crate::config::file::USER_FLAG_NAMES.to_vec());
    }

    #[test]
    fn stored_checks_read_back_and_a_missing_result_is_none() {
        let checks = UserChecks {
            version: CHECKS_VERSION,
            checks: vec![
                CheckResult::from_evidence(
                    UserFlag::Repetition,
                    vec![Evidence {
                        message: Some(3),
                        text: "again".into(),
                        why: "said twice".into(),
                    }],
                ),
                CheckResult::unknown(UserFlag::PrematureStop),
                CheckResult::from_evidence(UserFlag::RoleConfusion, vec![]),
            ],
        };
        let stored = checks.to_json();
        let back = UserChecks::from_stored(Some(&stored)).unwrap().unwrap();
        assert_eq!(back, checks);
        assert_eq!(back.flagged(), vec![UserFlag::Repetition]);
        assert_eq!(back.outcome(UserFlag::RoleConfusion), Outcome::Clear);
        assert_eq!(back.outcome(UserFlag::InventedFact), Outcome::Unknown);
        assert_eq!(UserChecks::from_stored(None).unwrap(), None);
        assert!(UserChecks::from_stored(Some(&serde_json::json!({"checks": 3}))).is_err());
    }

    #[test]
    fn excerpts_are_cut_on_a_character_boundary() {
        let long = "é".repeat(EVIDENCE_CHARS + 5);
        let cut = excerpt(&long);
        assert_eq!(cut.chars().count(), EVIDENCE_CHARS + 1);
        assert!(cut.ends_with('…'));
        assert_eq!(excerpt("  short "), "short");
    }
}
