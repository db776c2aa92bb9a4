//! NeMo Gym rows as scenarios (`[dataset] format = "nemo_gym"`).
//!
//! A row is a JSON object with `responses_create_params` (a Responses-API
//! request: `input`, maybe `tools`) and any fields its resources server's
//! `/verify` reads (`ground_truth`, `options`, `expected_answer`, ...). Each row
//! becomes one scenario:
//! - the input's system/developer prompt and the user's opening are the
//!   scenario's `prelude`; without a simulated user (`mode = "none"`) the whole
//!   input is, and it must end with the user's request; with one (`"llm"`) the
//!   prelude ends at the first user turn and the later user turns are the
//!   simulated user's goal (or the row field `user_goal_field` names);
//! - `responses_create_params.tools`, in the Responses or the Chat Completions
//!   shape, are the scenario's tools;
//! - the row itself is the scenario's `initial_state`, kept verbatim (its
//!   `input` cut to the prelude) for `/seed_session` and `/verify`;
//! - a `ground_truth` (or `expected_answers`) list of `{name, arguments}`
//!   calls becomes the gold actions, `expected_answer` the expected answer;
//!   a rollout of the same input in the `replay` file gives the calls and the
//!   reply the mock policy replays when the row has none.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::config::UserMode;
use crate::diagnostics::problem::Problem;
use crate::jsonl::JsonlReader;
use crate::llm::message::{Message, Role, ToolCall, ToolSpec};
use crate::verify::{Action, Criteria};

use super::{Scenario, UserScenario};

/// The row field holding the policy's request.
pub const REQUEST_FIELD: &str = "responses_create_params";

/// How rows become scenarios.
#[derive(Debug, Clone, Copy)]
pub struct RowOptions<'a> {
    pub mode: UserMode,
    pub user_goal_field: Option<&'a str>,
    pub replay: Option<&'a Path>,
}

/// Read a NeMo Gym rows file; every problem of every line is reported.
pub fn load_rows(path: &Path, options: RowOptions<'_>) -> Result<Vec<Scenario>, Vec<Problem>> {
    let mut problems = Vec::new();
    let text = match crate::regular_file::read_to_string(path) {
        Ok(text) => text,
        Err(e) => return Err(vec![Problem::in_file(path, format!("cannot read: {e}"))]),
    };
    let replays = match options.replay {
        Some(replay) => load_replays(replay, &mut problems),
        None => HashMap::new(),
    };
    let mut scenarios = Vec::new();
    let mut ids: HashMap<String, usize> = HashMap::new();
    for read in objects(path, &text) {
        let (line, row) = match read {
            Ok(read) => read,
            Err(problem) => {
                problems.push(problem);
                continue;
            }
        };
        match row_scenario(&row, line, options, &replays) {
            Ok(scenario) => {
                if let Some(first) = ids.insert(scenario.id.clone(), line) {
                    problems.push(Problem::at_line(
                        path,
                        line,
                        format!(
                            "id '{}' was already used on line {first}; rows need distinct \
                             `id`/`uuid`/`task_id` values (or none: the line number is used)",
                            scenario.id
                        ),
                    ));
                }
                scenarios.push(scenario);
            }
            Err(message) => problems.push(Problem::at_line(path, line, message)),
        }
    }
    if scenarios.is_empty() && problems.is_empty() {
        problems.push(Problem::in_file(
            path,
            "no rows found: the file is empty; write one NeMo Gym row (a JSON object with \
             `responses_create_params`) per line",
        ));
    }
    if problems.is_empty() {
        Ok(scenarios)
    } else {
        Err(problems)
    }
}

/// A JSON object of a JSONL file with its 1-based line number.
pub type Numbered = (usize, Map<String, Value>);

/// The JSON objects of a JSONL file of rows or rollouts, with their line
/// numbers; every line that is not one is a problem.
pub fn json_objects(path: &Path) -> Result<Vec<Numbered>, Vec<Problem>> {
    let text = crate::regular_file::read_to_string(path)
        .map_err(|e| vec![Problem::in_file(path, format!("cannot read: {e}"))])?;
    let (rows, problems): (Vec<_>, Vec<_>) =
        objects(path, &text).into_iter().partition(Result::is_ok);
    if problems.is_empty() {
        Ok(rows.into_iter().flatten().collect())
    } else {
        Err(problems.into_iter().filter_map(Result::err).collect())
    }
}

/// Each line that is not blank as a JSON object at its number, or its
/// problem, as the one JSON-lines reader reads them.
fn objects(path: &Path, text: &str) -> Vec<Result<Numbered, Problem>> {
    let mut reader = JsonlReader::new(text.as_bytes());
    let mut rows = Vec::new();
    while let Some(next) = reader.next_line() {
        rows.push(match next {
            Ok((line, json)) => parse_object(path, line, json).map(|row| (line, row)),
            Err(e) => Err(Problem::unreadable_line(path, &e)),
        });
    }
    rows
}

fn parse_object(path: &Path, line: usize, json: &str) -> Result<Map<String, Value>, Problem> {
    match serde_json::from_str::<Value>(json) {
        Ok(Value::Object(row)) => Ok(row),
        Ok(other) => Err(Problem::at_line(
            path,
            line,
            format!(
                "is a JSON {}, not an object; a NeMo Gym row is an object with \
                 `responses_create_params`",
                json_kind(&other)
            ),
        )),
        Err(e) => Err(Problem::new(
            path,
            Some(format!("line {line}, column {}", e.column())),
            format!(
                "not valid JSON: {}",
                crate::diagnostics::problem::json_message(&e)
            ),
        )),
    }
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// One input item of a Responses-API request, as sparring replays it.
#[derive(Debug, Clone, PartialEq)]
struct Item {
    message: Message,
    /// The item as written, kept for the rollout.
    raw: Value,
}

/// The input items of a request: a string is one user message.
fn input_items(request: &Map<String, Value>) -> Result<Vec<Item>, String> {
    match request.get("input") {
        None | Some(Value::Null) => Err(format!(
            "`{REQUEST_FIELD}` has no `input`; give the conversation's opening, e.g. \
             \"input\": [{{\"role\": \"user\", \"content\": \"...\"}}]"
        )),
        Some(Value::String(text)) => Ok(vec![Item {
            message: Message::user(text.as_str()),
            raw: serde_json::json!({"role": "user", "content": text}),
        }]),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, raw)| {
                input_message(raw)
                    .map(|message| Item {
                        message,
                        raw: raw.clone(),
                    })
                    .map_err(|e| format!("`{REQUEST_FIELD}.input[{i}]` {e}"))
            })
            .collect(),
        Some(other) => Err(format!(
            "`{REQUEST_FIELD}.input` is a {}; it must be a string or a list of items",
            json_kind(other)
        )),
    }
}

/// A message, function call or function call output item as a message.
fn input_message(item: &Value) -> Result<Message, String> {
    let Some(object) = item.as_object() else {
        return Err(format!("is a {}, not an object", json_kind(item)));
    };
    let text_field = |name: &str| object.get(name).and_then(Value::as_str);
    match text_field("type").unwrap_or("message") {
        "message" => {
            let role = match text_field("role") {
                Some("system" | "developer") => Role::System,
                Some("user") => Role::User,
                Some("assistant") => Role::Assistant,
                Some(other) => {
                    return Err(format!(
                        "has role '{other}'; use system, developer, user or assistant"
                    ))
                }
                None => return Err("has no `role`".into()),
            };
            let content = content_text(object.get("content"))?;
            Ok(Message::text(role, content))
        }
        "function_call" => {
            let (Some(call_id), Some(name)) = (text_field("call_id"), text_field("name")) else {
                return Err("is a function_call without `call_id` and `name`".into());
            };
            let arguments = match object.get("arguments") {
                Some(Value::String(s)) => s.clone(),
                Some(other) => other.to_string(),
                None => "{}".into(),
            };
            Ok(Message {
                role: Role::Assistant,
                content: "".into(),
                tool_calls: vec![ToolCall {
                    id: call_id.to_string(),
                    name: name.to_string(),
                    arguments,
                }],
                tool_call_id: None,
                reasoning: None,
            })
        }
        "function_call_output" => {
            let Some(call_id) = text_field("call_id") else {
                return Err("is a function_call_output without `call_id`".into());
            };
            let output = match object.get("output") {
                Some(Value::String(s)) => s.clone(),
                Some(other) => other.to_string(),
                None => String::new(),
            };
            Ok(Message::tool_result(call_id, output))
        }
        other => Err(format!(
            "has type '{other}', which sparring cannot replay to a chat model; rows may hold \
             messages, function_call and function_call_output items"
        )),
    }
}

/// A message's text: a string, or the text of its parts (`input_text`,
/// `output_text`, `text`).
pub fn content_text(content: Option<&Value>) -> Result<String, String> {
    match content {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(Value::Array(parts)) => {
            let mut text = String::new();
            for (i, part) in parts.iter().enumerate() {
                match part.get("text").and_then(Value::as_str) {
                    Some(t) => text.push_str(t),
                    None => {
                        return Err(format!(
                            "content[{i}] has no `text`; sparring reads text parts only"
                        ))
                    }
                }
            }
            Ok(text)
        }
        Some(other) => Err(format!(
            "has `content` of type {}; use a string or a list of text parts",
            json_kind(other)
        )),
    }
}

/// The tools of a request, in the Responses shape (`{"type": "function",
/// "name": ...}`) or the Chat Completions shape (`{"type": "function",
/// "function": {"name": ...}}`).
fn tools(request: &Map<String, Value>) -> Result<Vec<ToolSpec>, String> {
    let Some(list) = request.get("tools").filter(|t| !t.is_null()) else {
        return Ok(Vec::new());
    };
    let Some(list) = list.as_array() else {
        return Err(format!("`{REQUEST_FIELD}.tools` is not a list"));
    };
    list.iter()
        .enumerate()
        .map(|(i, tool)| {
            let at = format!("`{REQUEST_FIELD}.tools[{i}]`");
            let kind = tool
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or("function");
            if kind != "function" {
                return Err(format!(
                    "{at} has type '{kind}'; sparring offers function tools only"
                ));
            }
            let spec = tool.get("function").unwrap_or(tool);
            let Some(name) = spec.get("name").and_then(Value::as_str) else {
                return Err(format!("{at} has no `name`"));
            };
            Ok(ToolSpec {
                name: name.to_string(),
                description: spec
                    .get("description")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                parameters: spec
                    .get("parameters")
                    .cloned()
                    .unwrap_or_else(|| serde_json::json!({"type": "object", "properties": {}})),
            })
        })
        .collect()
}

/// What joins a rollout to the row it was made from: the roles and texts of
/// the input (recorded rollouts add `"type": "message"` and the like).
pub fn input_key(request: &Map<String, Value>) -> Option<String> {
    let items = input_items(request).ok()?;
    let key: Vec<(&str, &str, String)> = items
        .iter()
        .map(|i| {
            let calls = serde_json::to_string(&i.message.tool_calls).unwrap_or_default();
            (i.message.role.as_str(), &*i.message.content, calls)
        })
        .collect();
    serde_json::to_string(&key).ok()
}

/// What a run request and the job's own row of the same task share of their
/// input, as a key that joins them. Without a simulated user
/// (`mode = "none"`) both carry the whole input. With one (`"llm"`) the job
/// keeps of its row only the prelude (up to the first user message) and the
/// user's later words (its goal), while a run request carries the whole
/// input, the assistant's turns between them included: the key is the
/// prelude's items and the user's later words, which both hold.
pub fn request_key(request: &Map<String, Value>, mode: UserMode) -> Option<String> {
    let items = input_items(request).ok()?;
    match mode {
        UserMode::None => shared_key(&items, &[]),
        UserMode::Llm => {
            let first_user = items.iter().position(|i| i.message.role == Role::User)?;
            let later: Vec<String> = items[first_user + 1..]
                .iter()
                .filter(|i| i.message.role == Role::User)
                .map(|i| i.message.content.to_string())
                .collect();
            shared_key(&items[..=first_user], &later)
        }
    }
}

/// [`request_key`] of a scenario the job read from a row.
pub fn scenario_key(scenario: &Scenario, mode: UserMode) -> Option<String> {
    let request = scenario.initial_state.get(REQUEST_FIELD)?.as_object()?;
    match mode {
        UserMode::None => request_key(request, mode),
        UserMode::Llm => {
            let items = input_items(request).ok()?;
            let first_user = items.iter().position(|i| i.message.role == Role::User)?;
            shared_key(&items[..=first_user], &scenario.user.turns)
        }
    }
}

fn shared_key(prelude: &[Item], later_user_turns: &[String]) -> Option<String> {
    let items: Vec<(&str, &str, String)> = prelude
        .iter()
        .map(|i| {
            let calls = serde_json::to_string(&i.message.tool_calls).unwrap_or_default();
            (i.message.role.as_str(), &*i.message.content, calls)
        })
        .collect();
    serde_json::to_string(&(items, later_user_turns)).ok()
}

/// What a recorded rollout did: its function calls and its last reply.
#[derive(Debug, Clone, Default)]
struct Replay {
    calls: Vec<Action>,
    reply: Option<String>,
}

fn load_replays(path: &Path, problems: &mut Vec<Problem>) -> HashMap<String, Replay> {
    let text = match crate::regular_file::read_to_string(path) {
        Ok(text) => text,
        Err(e) => {
            problems.push(Problem::in_file(path, format!("cannot read: {e}")));
            return HashMap::new();
        }
    };
    let mut replays = HashMap::new();
    for read in objects(path, &text) {
        let (line, rollout) = match read {
            Ok(read) => read,
            Err(problem) => {
                problems.push(problem);
                continue;
            }
        };
        let key = rollout
            .get(REQUEST_FIELD)
            .and_then(Value::as_object)
            .and_then(input_key);
        let Some(key) = key else {
            problems.push(Problem::at_line(
                path,
                line,
                format!("the rollout has no readable `{REQUEST_FIELD}.input` to join it to a row"),
            ));
            continue;
        };
        let output = rollout
            .get("response")
            .and_then(|r| r.get("output"))
            .and_then(Value::as_array);
        let mut replay = Replay::default();
        for item in output.into_iter().flatten() {
            match item.get("type").and_then(Value::as_str) {
                Some("function_call") => {
                    let name = item.get("name").and_then(Value::as_str).unwrap_or_default();
                    let arguments = match item.get("arguments") {
                        Some(Value::String(s)) => {
                            serde_json::from_str(s).unwrap_or(Value::String(s.clone()))
                        }
                        Some(other) => other.clone(),
                        None => Value::Object(Map::new()),
                    };
                    replay.calls.push(Action {
                        name: name.to_string(),
                        arguments,
                        caller: Default::default(),
                    });
                }
                Some("message") => {
                    if let Ok(text) = content_text(item.get("content")) {
                        replay.reply = Some(text);
                    }
                }
                _ => {}
            }
        }
        replays.insert(key, replay);
    }
    replays
}

/// The row fields that hold the expected calls as a list of `{name,
/// arguments}`: `ground_truth` (workplace_assistant) and `expected_answers`
/// (xlam_fc).
const GOLD_CALL_FIELDS: [&str; 2] = ["ground_truth", "expected_answers"];

/// Gold actions from the first of [`GOLD_CALL_FIELDS`] that is a list of
/// `{name, arguments}` calls (arguments as JSON text or an object).
fn ground_truth_actions(row: &Map<String, Value>) -> Option<Vec<Action>> {
    GOLD_CALL_FIELDS
        .iter()
        .find_map(|field| gold_calls(row.get(*field)?))
}

/// A list of `{name, arguments}` calls as actions; `None` when it is not one.
fn gold_calls(list: &Value) -> Option<Vec<Action>> {
    let list = list.as_array()?;
    list.iter()
        .map(|call| {
            let name = call.get("name")?.as_str()?.to_string();
            let arguments = match call.get("arguments") {
                Some(Value::String(s)) => serde_json::from_str(s).ok()?,
                Some(v @ Value::Object(_)) => v.clone(),
                _ => return None,
            };
            Some(Action {
                name,
                arguments,
                caller: Default::default(),
            })
        })
        .collect()
}

/// One row as a scenario, as [`load_rows`] reads each (without replays): an
/// agent server's run request. `Err` says what is wrong with the row.
pub fn row_as_scenario(
    row: &Map<String, Value>,
    options: RowOptions<'_>,
) -> Result<Scenario, String> {
    row_scenario(row, 0, options, &HashMap::new())
}

/// The id a row names itself by (`id`, `uuid` or `task_id`), if any.
pub fn row_id(row: &Map<String, Value>) -> Option<String> {
    let id = scenario_id(row, 0);
    (id != "line-0").then_some(id)
}

fn scenario_id(row: &Map<String, Value>, line: usize) -> String {
    for field in ["id", "uuid", "task_id"] {
        match row.get(field) {
            Some(Value::String(s)) if !s.trim().is_empty() => return s.trim().to_string(),
            Some(Value::Number(n)) => return format!("{field}-{n}"),
            _ => {}
        }
    }
    format!("line-{line}")
}

fn row_scenario(
    row: &Map<String, Value>,
    line: usize,
    options: RowOptions<'_>,
    replays: &HashMap<String, Replay>,
) -> Result<Scenario, String> {
    let request = match row.get(REQUEST_FIELD) {
        Some(Value::Object(request)) => request,
        Some(other) => {
            return Err(format!(
                "`{REQUEST_FIELD}` is a {}; it must be an object with `input`",
                json_kind(other)
            ))
        }
        None => {
            return Err(format!(
                "has no `{REQUEST_FIELD}`; a NeMo Gym row gives the policy's request there, e.g. \
                 {{\"{REQUEST_FIELD}\": {{\"input\": [{{\"role\": \"user\", \"content\": \"...\"}}]}}}}"
            ))
        }
    };
    let items = input_items(request)?;
    let tools = tools(request)?;
    let first_user = items.iter().position(|i| i.message.role == Role::User);
    let Some(first_user) = first_user else {
        return Err(format!(
            "`{REQUEST_FIELD}.input` has no user message; the policy needs the user's request"
        ));
    };
    let (prelude_len, turns) = match options.mode {
        UserMode::None => {
            let last = items.last().map(|i| i.message.role);
            if last != Some(Role::User) {
                return Err(format!(
                    "`{REQUEST_FIELD}.input` ends with a {} item; without a simulated user \
                     ([user_simulator] mode = \"none\") the input must end with the user's request",
                    last.map_or("missing", Role::as_str)
                ));
            }
            (items.len(), Vec::new())
        }
        UserMode::Llm => {
            let later = items[first_user + 1..]
                .iter()
                .filter(|i| i.message.role == Role::User)
                .map(|i| i.message.content.to_string())
                .collect();
            (first_user + 1, later)
        }
    };
    let opening = items[first_user].message.content.to_string();
    let goal = match options.user_goal_field {
        Some(field) => match row.get(field) {
            Some(Value::String(goal)) => goal.clone(),
            Some(other) => other.to_string(),
            None => {
                return Err(format!(
                    "has no `{field}` field, which [dataset] user_goal_field names as the \
                     simulated user's goal"
                ))
            }
        },
        None => goal_from_turns(&turns),
    };

    let mut kept = row.clone();
    let mut kept_request = request.clone();
    if prelude_len < items.len() {
        kept_request.insert(
            "input".into(),
            Value::Array(items[..prelude_len].iter().map(|i| i.raw.clone()).collect()),
        );
    }
    kept.insert(REQUEST_FIELD.into(), Value::Object(kept_request));

    let replay = input_key(request).and_then(|key| replays.get(&key));
    let actions = ground_truth_actions(row)
        .or_else(|| replay.map(|r| r.calls.clone()))
        .unwrap_or_default();
    let id = scenario_id(row, line);
    Ok(Scenario {
        description: opening.chars().take(100).collect(),
        difficulty: None,
        tags: vec!["nemo_gym".into()],
        user: UserScenario {
            reason_for_contact: opening,
            known_info: String::new(),
            unknown_info: String::new(),
            task_instructions: goal,
            turns,
            opening: None,
        },
        initial_state: Value::Object(kept),
        evaluation: Criteria {
            actions,
            expected_answer: row
                .get("expected_answer")
                .and_then(Value::as_str)
                .map(str::to_string),
            reference_reply: replay.and_then(|r| r.reply.clone()),
            ..Criteria::default()
        },
        prelude: items[..prelude_len]
            .iter()
            .map(|i| i.message.clone())
            .collect(),
        tools: Some(Arc::from(tools)),
        probe: None,
        id,
    })
}

/// The simulated user's instructions from the row's later user turns.
fn goal_from_turns(turns: &[String]) -> String {
    if turns.is_empty() {
        return "You have said what you need. Answer the agent's questions from what you said; \
                once the agent has done it, end the conversation."
            .into();
    }
    let mut goal = String::from(
        "After your opening request, ask for the following, one message at a time and in this \
         order, each once the agent has handled the one before:",
    );
    for (i, turn) in turns.iter().enumerate() {
        goal.push_str(&format!("\n{}. {turn}", i + 1));
    }
    goal.push_str("\nWhen the agent has handled all of them, end the conversation.");
    goal
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rows.jsonl");
        std::fs::write(&path, text).unwrap();
        (dir, path)
    }

    fn single_step() -> RowOptions<'static> {
        RowOptions {
            mode: UserMode::None,
            user_goal_field: None,
            replay: None,
        }
    }

    const WORKPLACE_LIKE: &str = r#"{"id": 0, "responses_create_params": {"input": [{"role": "system", "content": "Today is Thursday."}, {"role": "user", "content": "Reply to carlos."}], "tools": [{"type": "function", "name": "email_reply_email", "description": "Replies.", "parameters": {"type": "object", "properties": {"email_id": {"type": "string"}}}, "strict": false}], "parallel_tool_calls": false}, "ground_truth": [{"name": "email_reply_email", "arguments": "{\"email_id\": \"00000057\"}"}], "category": "email"}"#;

    #[test]
    fn a_run_request_of_a_multi_turn_row_has_the_key_of_the_row_the_job_read() {
        let row = r#"{"responses_create_params": {"input": [{"role": "system", "content": "Today is Monday."}, {"role": "user", "content": "Book lunch with Ana."}, {"role": "assistant", "content": "Done."}, {"role": "user", "content": "Move it to 1pm."}]}, "exp_cal_state": {}}"#;
        let other = row.replace("Move it to 1pm.", "Cancel it.");
        let (_dir, path) = write(&format!("{row}\n{other}\n"));
        let llm = RowOptions {
            mode: UserMode::Llm,
            user_goal_field: None,
            replay: None,
        };
        let scenarios = load_rows(&path, llm).unwrap();
        // The job keeps the prelude only; the request carries everything.
        assert_eq!(
            scenarios[0].initial_state[REQUEST_FIELD]["input"]
                .as_array()
                .unwrap()
                .len(),
            2
        );
        let request: Map<String, Value> = serde_json::from_str::<Value>(row).unwrap()
            [REQUEST_FIELD]
            .as_object()
            .unwrap()
            .clone();
        let key = request_key(&request, UserMode::Llm);
        assert!(key.is_some());
        assert_eq!(key, scenario_key(&scenarios[0], UserMode::Llm));
        assert_ne!(key, scenario_key(&scenarios[1], UserMode::Llm));
        // Whole inputs without a simulated user, as the old key had them.
        assert_eq!(
            request_key(&request, UserMode::None).is_some(),
            input_key(&request).is_some()
        );
        assert_ne!(
            request_key(&request, UserMode::None),
            scenario_key(&scenarios[0], UserMode::None)
        );
    }

    #[test]
    fn a_row_becomes_a_scenario_with_its_prompt_tools_gold_calls_and_fields_kept() {
        let (_dir, path) = write(WORKPLACE_LIKE);
        let scenarios = load_rows(&path, single_step()).unwrap();
        let s = &scenarios[0];
        assert_eq!(s.id, "id-0");
        assert_eq!(s.prelude.len(), 2);
        assert_eq!(s.prelude[0].role, Role::System);
        assert_eq!(&*s.prelude[1].content, "Reply to carlos.");
        let tools = s.tools.as_ref().unwrap();
        assert_eq!(tools[0].name, "email_reply_email");
        assert_eq!(s.evaluation.actions[0].name, "email_reply_email");
        assert_eq!(s.evaluation.actions[0].arguments["email_id"], "00000057");
        assert_eq!(s.initial_state["category"], "email");
        assert_eq!(s.initial_state[REQUEST_FIELD]["parallel_tool_calls"], false);
    }

    #[test]
    fn chat_completions_tools_and_string_inputs_are_read_too() {
        let (_dir, path) = write(
            r#"{"responses_create_params": {"input": "What is 2+2?", "tools": [{"type": "function", "function": {"name": "add", "parameters": {"type": "object"}}}]}, "expected_answer": "4"}"#,
        );
        let s = &load_rows(&path, single_step()).unwrap()[0];
        assert_eq!(s.id, "line-1");
        assert_eq!(s.tools.as_ref().unwrap()[0].name, "add");
        assert_eq!(&*s.prelude[0].content, "What is 2+2?");
        assert_eq!(s.evaluation.expected_answer.as_deref(), Some("4"));
    }

    #[test]
    fn with_a_simulated_user_the_opening_is_the_first_user_turn_and_the_rest_is_the_goal() {
        let (_dir, path) = write(
            r#"{"responses_create_params": {"input": [{"role": "system", "content": "S"}, {"role": "user", "content": "add lunch"}, {"role": "assistant", "content": "[]"}, {"role": "user", "content": "move it to 1pm"}]}, "exp_cal_state": {}}"#,
        );
        let options = RowOptions {
            mode: UserMode::Llm,
            ..single_step()
        };
        let s = &load_rows(&path, options).unwrap()[0];
        assert_eq!(s.prelude.len(), 2);
        assert_eq!(s.user.turns, vec!["move it to 1pm".to_string()]);
        assert!(s.user.task_instructions.contains("1. move it to 1pm"));
        let kept = s.initial_state[REQUEST_FIELD]["input"].as_array().unwrap();
        assert_eq!(kept.len(), 2, "the rollout's input is the prelude");
    }

    #[test]
    fn bad_rows_are_reported_by_line_with_what_would_be_right() {
        let (_dir, path) = write(&format!(
            "{WORKPLACE_LIKE}\n\n{{\"ground_truth\": []}}\n[1]\n{{\"responses_create_params\": {{\"input\": [{{\"role\": \"user\", \"content\": \"hi\"}}, {{\"role\": \"assistant\", \"content\": \"hello\"}}]}}}}\n"
        ));
        let problems = load_rows(&path, single_step()).unwrap_err();
        let text: Vec<String> = problems.iter().map(|p| p.to_string()).collect();
        assert_eq!(problems.len(), 3, "{text:#?}");
        assert!(text[0].contains("line 3") && text[0].contains("has no `responses_create_params`"));
        assert!(text[1].contains("line 4") && text[1].contains("not an object"));
        assert!(text[2].contains("line 5") && text[2].contains("must end with the user's request"));
    }

    #[test]
    fn a_recorded_rollout_of_the_same_input_gives_the_calls_and_reply_to_replay() {
        let dir = tempfile::tempdir().unwrap();
        let rows = dir.path().join("rows.jsonl");
        std::fs::write(
            &rows,
            r#"{"responses_create_params": {"input": [{"role": "user", "content": "Pick A or B"}]}, "expected_answer": "B"}"#,
        )
        .unwrap();
        let rollouts = dir.path().join("rollouts.jsonl");
        std::fs::write(
            &rollouts,
            r#"{"responses_create_params": {"input": [{"role": "user", "content": "Pick A or B", "type": "message"}], "tool_choice": null}, "response": {"output": [{"type": "function_call", "name": "think", "arguments": "{\"x\": 1}", "call_id": "c"}, {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "\\boxed{B}"}]}]}, "reward": 1.0}"#,
        )
        .unwrap();
        let options = RowOptions {
            replay: Some(&rollouts),
            ..single_step()
        };
        let s = &load_rows(&rows, options).unwrap()[0];
        assert_eq!(s.evaluation.reference_reply.as_deref(), Some("\\boxed{B}"));
        assert_eq!(s.evaluation.actions[0].name, "think");
        assert_eq!(s.evaluation.actions[0].arguments["x"], 1);
    }
}
