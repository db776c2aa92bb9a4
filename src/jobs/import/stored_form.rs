//! An imported conversation as the store keeps it: an item keyed by the
//! conversation's content hash, and the conversation with its messages,
//! tools, reward, metadata and the simulated-user checks.

use std::collections::HashSet;
use std::sync::Arc;

use serde_json::{json, Map, Value};

use crate::import::pairing::PAIRING_KEY;
use crate::import::{content_hash, prompt_id, Format, ImportedConversation};
use crate::llm::message::Role;
use crate::store::{self, NewConversation, NewItem, NewMessage};
use crate::user_checks::stored::{imported_turns, scenario_of, stored_line};
use crate::user_checks::{check_conversation, Line, ScenarioBasis, UserChecks};

/// Where the metadata says which file and line a conversation came from.
pub const SOURCE_KEY: &str = "import";
/// Where the metadata keeps the scenario's gold (`verify::Criteria`), when
/// the source has it: `premature_stop` and the gold-versus-taken view read it.
pub const EVALUATION_KEY: &str = "evaluation";

/// Where a conversation was read: its file's name (never its folder) and
/// line, and the format.
pub struct Provenance<'a> {
    pub file_name: &'a str,
    pub line: usize,
    pub format: Format,
}

/// The item and conversation of `c` in job `job_id`.
pub fn stored_form(
    c: &ImportedConversation,
    job_id: i64,
    from: &Provenance<'_>,
) -> (NewItem, NewConversation) {
    let key = content_hash(c);
    let scenario_id = c.origin.scenario_id.clone().unwrap_or_else(|| prompt_id(c));
    let persona_id = c.origin.persona_id.clone().unwrap_or_default();
    let sample = c.origin.trial.unwrap_or(0);
    let item = NewItem {
        key: key.clone(),
        scenario_id: scenario_id.clone(),
        persona_id: persona_id.clone(),
        sample,
        seed: 0,
    };
    let mut metadata = c.metadata.clone();
    metadata.insert(
        SOURCE_KEY.into(),
        json!({"format": from.format.as_str(), "file": from.file_name, "line": from.line}),
    );
    if let Some(scenario) = &c.scenario {
        metadata.insert("scenario".into(), json!(scenario));
    }
    if let Some(criteria) = &c.criteria {
        metadata.insert(EVALUATION_KEY.into(), json!(criteria));
    }
    if let Some(pairing) = &c.pairing {
        metadata.insert(PAIRING_KEY.into(), pairing.clone());
    }
    let messages = messages(c);
    let user_checks = user_checks(c, &scenario_id, &messages);
    let now = store::now_ms();
    let conversation = NewConversation {
        job_id,
        item_id: 0,
        item_key: key,
        scenario_id,
        persona_id,
        sample,
        seed: 0,
        policy_model: c
            .models
            .policy
            .clone()
            .or_else(|| text_of(&metadata, &["policy_model", "model"]))
            .unwrap_or_default(),
        user_model: c
            .models
            .user
            .clone()
            .or_else(|| text_of(&metadata, &["user_model"]))
            .unwrap_or_default(),
        termination: text_of(&metadata, &["termination", "termination_reason"])
            .unwrap_or_else(|| "imported".into()),
        reward: c.reward,
        reward_breakdown: Value::Null,
        metadata: Value::Object(metadata),
        tools: Arc::new(Value::Array(c.tools.clone())),
        usage: Vec::new(),
        started_at: now,
        finished_at: now,
        user_checks: Some(user_checks.to_json()),
        messages,
    };
    (item, conversation)
}

/// The simulated-user checks of an imported conversation, as importing it
/// stores them (what the real-user corpus test measures).
pub fn checks_of(c: &ImportedConversation) -> UserChecks {
    let scenario_id = c.origin.scenario_id.clone().unwrap_or_else(|| prompt_id(c));
    user_checks(c, &scenario_id, &messages(c))
}

fn text_of(metadata: &Map<String, Value>, keys: &[&str]) -> Option<String> {
    keys.iter()
        .find_map(|k| metadata.get(*k).and_then(Value::as_str))
        .map(str::to_string)
}

/// The system prompt first, then the rest, each with who wrote it: the
/// user, the agent (`policy`), a tool (`env`), or, for a result of the
/// user's own call (dual control), the user's tool (`user_tool`), as sparring
/// stores its own conversations.
fn messages(c: &ImportedConversation) -> Vec<NewMessage> {
    let system = c
        .system_prompt
        .as_deref()
        .map(|text| row("system", text, "system"));
    let user_calls: HashSet<&str> = c
        .messages
        .iter()
        .filter(|m| m.role == Role::User)
        .flat_map(|m| m.tool_calls.iter().map(|call| call.id.as_str()))
        .collect();
    system
        .into_iter()
        .chain(c.messages.iter().map(|m| {
            let answers_user = m
                .tool_call_id
                .as_deref()
                .is_some_and(|id| user_calls.contains(id));
            let author = match m.role {
                Role::User => "user",
                Role::Assistant => "policy",
                Role::Tool if answers_user => "user_tool",
                Role::Tool => "env",
                Role::System => "system",
            };
            NewMessage {
                tool_calls: (!m.tool_calls.is_empty()).then(|| json!(m.tool_calls)),
                tool_call_id: m.tool_call_id.clone(),
                ..row(m.role.as_str(), &m.content, author)
            }
        }))
        .collect()
}

fn row(role: &str, text: &str, author: &str) -> NewMessage {
    NewMessage {
        role: role.into(),
        content: text.into(),
        tool_calls: None,
        tool_call_id: None,
        author: author.into(),
        prompt_tokens: None,
        completion_tokens: None,
        latency_ms: None,
        tokens: None,
    }
}

/// The simulated-user checks over the stored messages, with the hidden
/// scenario when the source has one; without a simulated user every check
/// is unknown.
fn user_checks(c: &ImportedConversation, scenario_id: &str, messages: &[NewMessage]) -> UserChecks {
    let scenario = scenario_of(scenario_id, c.scenario.clone(), c.criteria.clone());
    let lines: Vec<Line> = messages
        .iter()
        .enumerate()
        .map(|(index, m)| stored_line(index, &m.role, &m.author, &m.content, m.tool_calls.as_ref()))
        .collect();
    let turns = imported_turns(
        lines,
        &c.metadata,
        c.system_prompt.is_some(),
        c.simulated_user,
    );
    check_conversation(&turns, &scenario, &ScenarioBasis::of(&scenario.user))
}
