//! The mining prompt: one stored conversation, private values already
//! replaced, rendered by `prompts/mine/scenario.tera` (built in, sandboxed).

use serde::Serialize;

use crate::config::Problem;
use crate::prompt::shipped::MINE_SCENARIO_TEMPLATE;
use crate::prompt::PromptRegistry;
use crate::store::MessageRow;

use super::private::Redactor;

/// The template's name in the registry.
pub const MINE: &str = "mine/scenario";

/// The built-in mining template.
pub fn registry() -> Result<PromptRegistry, Vec<Problem>> {
    PromptRegistry::from_texts(vec![(
        MINE.to_string(),
        MINE_SCENARIO_TEMPLATE.label(),
        MINE_SCENARIO_TEMPLATE.text.to_string(),
    )])
}

/// One line of the conversation as the prompt shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Turn {
    /// `customer`, `agent`, `agent calls`, `tool` or `system`.
    pub speaker: &'static str,
    /// On one line, private values replaced.
    pub text: String,
}

/// The conversation's messages as turns, each redacted by `redactor`.
pub fn turns(messages: &[MessageRow], redactor: &mut Redactor) -> Vec<Turn> {
    let mut turns = Vec::new();
    for m in messages {
        let speaker = match m.role.as_str() {
            "user" => "customer",
            "assistant" => "agent",
            "tool" => "tool",
            _ => "system",
        };
        if !m.content.trim().is_empty() {
            turns.push(Turn {
                speaker,
                text: one_line(&redactor.redact(&m.content)),
            });
        }
        if let Some(calls) = &m.tool_calls {
            if calls.as_array().is_some_and(|a| !a.is_empty()) {
                turns.push(Turn {
                    speaker: "agent calls",
                    text: one_line(&redactor.redact_json(calls).to_string()),
                });
            }
        }
    }
    turns
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

pub fn context(conversation_id: i64, environment: &str, turns: &[Turn]) -> tera::Context {
    let mut ctx = tera::Context::new();
    ctx.insert("conversation_id", &conversation_id);
    ctx.insert("environment", environment);
    ctx.insert("turns", turns);
    ctx
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::transcript::tests::row as message;
    use crate::mine::private::PrivacyRules;

    #[test]
    fn the_prompt_shows_each_turn_on_one_line_without_private_values() {
        let mut redactor = Redactor::new(&PrivacyRules::default()).unwrap();
        let turns = turns(
            &[
                message(
                    "user",
                    "Hi,\nI'm ann@example.org and\n my order is #W1234567",
                ),
                message("assistant", "Found it."),
            ],
            &mut redactor,
        );
        let text = registry()
            .unwrap()
            .render(MINE, &context(9, "builtin:chat", &turns))
            .unwrap();
        assert!(
            text.contains("<conversation id=\"9\">\n[customer] Hi, I'm "),
            "{text}"
        );
        assert!(
            text.contains("[agent] Found it.\n</conversation>"),
            "{text}"
        );
        assert!(!text.contains("ann@example.org") && !text.contains("#W1234567"));
    }
}
