//! A2A task states and what each means for a policy turn.

/// A task's `status.state`, as A2A 0.3 names it (`input-required`) or as
/// A2A 1.0's JSON names it (`TASK_STATE_INPUT_REQUIRED`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskState {
    Submitted,
    Working,
    InputRequired,
    Completed,
    Failed,
    Canceled,
    Rejected,
    AuthRequired,
    Unknown,
}

/// What a state means for the turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The agent answered. `waits_for_user`: the task stays open
    /// (`input-required`) and the user's next message continues it.
    Answered { waits_for_user: bool },
    /// The agent is still at it (`submitted`, `working`): ask again.
    Pending,
    /// The agent ended the task without an answer, or cannot go on.
    Failed,
}

impl TaskState {
    /// The state a name gives, in either spelling; `None` for a name that is
    /// not a task state.
    pub fn parse(name: &str) -> Option<TaskState> {
        let name = name.trim();
        let bare = name
            .strip_prefix("TASK_STATE_")
            .map(|s| s.to_ascii_lowercase().replace('_', "-"));
        let name = bare.as_deref().unwrap_or(name);
        Some(match name {
            "submitted" => TaskState::Submitted,
            "working" => TaskState::Working,
            "input-required" => TaskState::InputRequired,
            "completed" => TaskState::Completed,
            "failed" => TaskState::Failed,
            // 1.0 spells it `TASK_STATE_CANCELLED`.
            "canceled" | "cancelled" => TaskState::Canceled,
            "rejected" => TaskState::Rejected,
            "auth-required" => TaskState::AuthRequired,
            "unknown" | "unspecified" => TaskState::Unknown,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            TaskState::Submitted => "submitted",
            TaskState::Working => "working",
            TaskState::InputRequired => "input-required",
            TaskState::Completed => "completed",
            TaskState::Failed => "failed",
            TaskState::Canceled => "canceled",
            TaskState::Rejected => "rejected",
            TaskState::AuthRequired => "auth-required",
            TaskState::Unknown => "unknown",
        }
    }

    pub fn outcome(self) -> Outcome {
        match self {
            TaskState::Completed => Outcome::Answered {
                waits_for_user: false,
            },
            TaskState::InputRequired => Outcome::Answered {
                waits_for_user: true,
            },
            TaskState::Submitted | TaskState::Working => Outcome::Pending,
            TaskState::Failed
            | TaskState::Canceled
            | TaskState::Rejected
            | TaskState::AuthRequired
            | TaskState::Unknown => Outcome::Failed,
        }
    }

    /// Why a failed state fails the item, for its error message.
    pub fn failure(self) -> &'static str {
        match self {
            TaskState::Failed => "the agent's task ended failed",
            TaskState::Canceled => "the agent's task was canceled",
            TaskState::Rejected => "the agent rejected the task",
            TaskState::AuthRequired => {
                "the agent asks for authentication (auth-required), which sparring cannot \
                 give in the middle of a task; give the endpoint an api_key the agent \
                 accepts (sent as Authorization: Bearer)"
            }
            TaskState::Unknown => "the agent's task is in state unknown",
            TaskState::Submitted
            | TaskState::Working
            | TaskState::InputRequired
            | TaskState::Completed => "the agent's task did not fail",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_spellings_parse_to_the_same_state() {
        for state in [
            TaskState::Submitted,
            TaskState::Working,
            TaskState::InputRequired,
            TaskState::Completed,
            TaskState::Failed,
            TaskState::Canceled,
            TaskState::Rejected,
            TaskState::AuthRequired,
            TaskState::Unknown,
        ] {
            assert_eq!(TaskState::parse(state.as_str()), Some(state));
            let v1 = format!("TASK_STATE_{}", state.as_str().replace('-', "_")).to_uppercase();
            assert_eq!(TaskState::parse(&v1), Some(state), "{v1}");
        }
        assert_eq!(
            TaskState::parse("TASK_STATE_CANCELLED"),
            Some(TaskState::Canceled)
        );
        assert_eq!(TaskState::parse("done"), None);
        assert_eq!(TaskState::parse("TASK_STATE_"), None);
    }

    #[test]
    fn states_map_to_an_answer_a_wait_or_a_failure() {
        use Outcome::*;
        assert_eq!(
            TaskState::Completed.outcome(),
            Answered {
                waits_for_user: false
            }
        );
        assert_eq!(
            TaskState::InputRequired.outcome(),
            Answered {
                waits_for_user: true
            }
        );
        assert_eq!(TaskState::Working.outcome(), Pending);
        assert_eq!(TaskState::Submitted.outcome(), Pending);
        for s in [
            TaskState::Failed,
            TaskState::Canceled,
            TaskState::Rejected,
            TaskState::AuthRequired,
            TaskState::Unknown,
        ] {
            assert_eq!(s.outcome(), Failed, "{s:?}");
        }
        assert!(TaskState::AuthRequired.failure().contains("api_key"));
    }
}
