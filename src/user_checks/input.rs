//! The conversation as the checks read it: who said what, at which stored
//! index, and what the user model wrote before its control token was cut off.

/// Who said a line, as the simulated user saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Speaker {
    /// The simulated user (a message it generated).
    User,
    /// The agent: the policy's replies and the greeting.
    Agent,
    /// A user turn the dataset gave (a prelude's opening), not the simulator's.
    Given,
    /// Anything else: system prompts, tool results.
    Other,
}

/// One stored message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// Its index in the stored conversation.
    pub index: usize,
    pub speaker: Speaker,
    pub text: String,
    /// The names of the tools the agent called in it.
    pub tool_calls: Vec<String>,
}

impl Line {
    /// From a stored message: its role (`user`, `assistant`, …), who wrote it
    /// (`user` for the simulator), its text and its tool calls' names.
    pub fn new(
        index: usize,
        role: &str,
        author: &str,
        text: &str,
        tool_calls: Vec<String>,
    ) -> Line {
        let speaker = match (role, author) {
            ("user", "user") => Speaker::User,
            ("assistant", _) => Speaker::Agent,
            ("user", _) => Speaker::Given,
            _ => Speaker::Other,
        };
        Line {
            index,
            speaker,
            text: text.to_string(),
            tool_calls,
        }
    }
}

/// What the user model wrote for one turn, before the engine removed its
/// control token and whatever followed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserOutput {
    /// The stored message it became (`None` when only a token was left).
    pub message: Option<usize>,
    pub raw: String,
    /// As the server said it: `length` means it was cut by `max_tokens`.
    pub finish_reason: Option<String>,
}

/// The conversation the checks look at.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UserTurns {
    pub lines: Vec<Line>,
    /// Every user model output, in order; empty when not recorded (a
    /// conversation checked again from what is stored), and then the checks
    /// that need them see only the stored text.
    pub outputs: Vec<UserOutput>,
    /// The conversation ended with the user's `###STOP###`.
    pub user_stopped: bool,
    /// A simulated user took part (not `[user_simulator] mode = "none"`).
    pub simulated_user: bool,
}

impl UserTurns {
    pub fn user_lines(&self) -> impl Iterator<Item = &Line> {
        self.lines.iter().filter(|l| l.speaker == Speaker::User)
    }

    /// The agent's last line with text before stored index `index`.
    pub fn agent_text_before(&self, index: usize) -> Option<&Line> {
        self.lines
            .iter()
            .take_while(|l| l.index < index)
            .filter(|l| l.speaker == Speaker::Agent && !l.text.trim().is_empty())
            .last()
    }
}

/// A dialogue of `(who, text)` lines, `who` being `user` (the simulator) or
/// anything else (the agent), stored at indexes 0, 1, …
#[cfg(test)]
pub fn dialogue(lines: &[(&str, &str)]) -> UserTurns {
    UserTurns {
        lines: lines
            .iter()
            .enumerate()
            .map(|(i, (who, text))| {
                let (role, author) = if *who == "user" {
                    ("user", "user")
                } else {
                    ("assistant", "policy")
                };
                Line::new(i, role, author, text, vec![])
            })
            .collect(),
        simulated_user: true,
        ..UserTurns::default()
    }
}
