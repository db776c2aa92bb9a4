//! What an A2A agent answered one message, put together from the objects
//! of its answer: a `Task` or a `Message` (a plain send's result, a
//! stream's first event), and, in a stream, the task's status updates and
//! artifact updates as they come. Both versions' JSON read the same: 0.3's
//! `kind`-tagged parts and `input-required`, 1.0's bare parts and
//! `TASK_STATE_INPUT_REQUIRED`.
//!
//! - The reply's text is the text of the last status's message (of the
//!   message, for a Message); a status without one (a task that completed
//!   with its answer as an artifact: ADK's, Strands', fasta2a's) leaves the
//!   artifacts' text to be the reply.
//! - The tool use is in data parts: of the status message, of the agent's
//!   messages of this turn (the task's `history` after the user's message,
//!   and the `working` status messages a stream sends: where ADK reports its
//!   `function_call` and `function_response` parts), and of the artifacts.
//!   A message seen twice (in the history and as the status) is read once.
//! - Token usage is in metadata (of the task, the status message, this
//!   turn's messages, artifacts and stream events: `usage`,
//!   `adk_usage_metadata`, ...); an ADK event's usage is counted once however
//!   many objects carry it.
//! - An artifact update with `append` adds to the artifact of its id (text
//!   to its last text), else it replaces it.

use std::collections::HashSet;

use serde_json::Value;

use super::state::TaskState;
use crate::llm::Usage;
use crate::policy::usage;

/// What the agent answered.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AgentReply {
    pub context_id: Option<String>,
    pub task_id: Option<String>,
    /// The task's state; `None` when the agent answered with a `Message`.
    pub state: Option<TaskState>,
    /// The text parts of the last status's message, or of the message.
    pub texts: Vec<String>,
    /// The parts with data of the status messages and of this turn's agent
    /// messages, whole (their metadata says what ADK's hold).
    pub parts: Vec<Value>,
    /// The task's artifacts, in order. A task continued over several
    /// messages keeps the artifacts of its earlier turns.
    pub artifacts: Vec<Artifact>,
    /// The usage the metadata of its messages and events report.
    pub usage: Option<Usage>,
    /// The usage the task's own metadata reports, as of its latest
    /// snapshot (a task asked after again says it again).
    pub task_usage: Option<Usage>,
    /// Messages and events already read, by id, so that one seen twice
    /// counts once.
    seen: HashSet<String>,
}

/// One artifact of a task.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Artifact {
    /// What tells it from the task's other artifacts: its `artifactId`, else
    /// its JSON.
    pub key: String,
    pub texts: Vec<String>,
    pub parts: Vec<Value>,
    pub usage: Option<Usage>,
}

/// What a turn takes from a reply: the text, the parts with data, the usage.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Taken {
    pub text: String,
    pub parts: Vec<Value>,
    pub usage: Option<Usage>,
}

fn add_usage(total: &mut Option<Usage>, more: Option<Usage>) {
    if let Some(more) = more {
        *total = Some(total.map_or(more, |t| usage::add(t, more)));
    }
}

impl AgentReply {
    /// The reply's text, parts and usage, leaving out the artifacts whose
    /// keys are in `seen` (reported by an earlier answer of the same task):
    /// the text of the status message or message, else of the new
    /// artifacts, joined by new lines.
    pub fn take(&self, seen: &[String]) -> Taken {
        let fresh: Vec<&Artifact> = self
            .artifacts
            .iter()
            .filter(|a| !seen.contains(&a.key))
            .collect();
        let texts: Vec<&str> = if self.texts.is_empty() {
            fresh
                .iter()
                .flat_map(|a| a.texts.iter().map(String::as_str))
                .collect()
        } else {
            self.texts.iter().map(String::as_str).collect()
        };
        let mut parts = self.parts.clone();
        parts.extend(fresh.iter().flat_map(|a| a.parts.iter().cloned()));
        let mut total = self.usage;
        add_usage(&mut total, self.task_usage);
        for artifact in &fresh {
            add_usage(&mut total, artifact.usage);
        }
        Taken {
            text: texts.join("\n"),
            parts,
            usage: total,
        }
    }

    /// The keys of its artifacts.
    pub fn artifact_keys(&self) -> impl Iterator<Item = &str> {
        self.artifacts.iter().map(|a| a.key.as_str())
    }

    /// Take a task: its ids, state, status message, this turn's history and
    /// its artifacts (replacing those of the same key).
    pub fn apply_task(&mut self, task: &Value) -> Result<(), String> {
        let Some(status) = task.get("status").filter(|s| s.is_object()) else {
            return Err("the agent's task has no status object".into());
        };
        self.set_ids(task, "id");
        self.apply_status(status)?;
        if let Some(history) = task.get("history").and_then(Value::as_array) {
            let after_user = history.iter().rposition(is_user).map_or(0, |i| i + 1);
            for message in &history[after_user..] {
                self.read_agent_message(message);
            }
        }
        if let Some(artifacts) = task.get("artifacts").and_then(Value::as_array) {
            for artifact in artifacts {
                self.put_artifact(artifact, false);
            }
        }
        if let Some(found) = task.get("metadata").and_then(usage::held_by) {
            self.task_usage = Some(found);
        }
        Ok(())
    }

    /// Take a message answered outside any task.
    pub fn apply_message(&mut self, message: &Value) -> Result<(), String> {
        if !message.get("parts").is_some_and(Value::is_array) {
            return Err("the agent's message has no parts list".into());
        }
        self.context_id = string(message, "contextId").or(self.context_id.take());
        self.task_id = string(message, "taskId");
        self.state = None;
        self.texts = texts_of(message.get("parts"));
        self.read_agent_message(message);
        Ok(())
    }

    /// Take a stream's status update.
    pub fn apply_status_update(&mut self, update: &Value) -> Result<(), String> {
        let Some(status) = update.get("status").filter(|s| s.is_object()) else {
            return Err("the agent's status update has no status object".into());
        };
        self.set_ids(update, "taskId");
        self.apply_status(status)?;
        self.read_metadata(update.get("metadata"));
        Ok(())
    }

    /// Take a stream's artifact update.
    pub fn apply_artifact_update(&mut self, update: &Value) -> Result<(), String> {
        let Some(artifact) = update.get("artifact").filter(|a| a.is_object()) else {
            return Err("the agent's artifact update has no artifact object".into());
        };
        self.set_ids(update, "taskId");
        let append = update.get("append").and_then(Value::as_bool) == Some(true);
        self.put_artifact(artifact, append);
        self.read_metadata(update.get("metadata"));
        Ok(())
    }

    fn set_ids(&mut self, object: &Value, task_key: &str) {
        if let Some(context) = string(object, "contextId") {
            self.context_id = Some(context);
        }
        if let Some(task) = string(object, task_key) {
            self.task_id = Some(task);
        }
    }

    /// A status: its state, and its message (the reply's text when it has
    /// one; none when it has not).
    fn apply_status(&mut self, status: &Value) -> Result<(), String> {
        let Some(name) = status.get("state").and_then(Value::as_str) else {
            return Err("the agent's task status has no state".into());
        };
        let Some(state) = TaskState::parse(name) else {
            return Err(format!(
                "the agent's task is in state {:?}, which is not an A2A task state (submitted, \
                 working, input-required, completed, failed, canceled, rejected, auth-required, \
                 unknown)",
                excerpt(name)
            ));
        };
        self.state = Some(state);
        match status.get("message").filter(|m| m.is_object()) {
            Some(message) => {
                self.texts = texts_of(message.get("parts"));
                self.read_agent_message(message);
            }
            None => self.texts.clear(),
        }
        Ok(())
    }

    /// An agent's message of this turn: its parts with data and its usage,
    /// once per message id.
    fn read_agent_message(&mut self, message: &Value) {
        if is_user(message) {
            return;
        }
        if let Some(id) = string(message, "messageId") {
            if !self.seen.insert(format!("message {id}")) {
                return;
            }
        }
        self.parts.extend(data_parts(message.get("parts")));
        self.read_metadata(message.get("metadata"));
    }

    /// The usage a metadata object reports, once per ADK event.
    fn read_metadata(&mut self, metadata: Option<&Value>) {
        let Some(metadata) = metadata.filter(|m| m.is_object()) else {
            return;
        };
        let Some(found) = usage::held_by(metadata) else {
            return;
        };
        if let Some(event) = string(metadata, "adk_event_id") {
            if !self.seen.insert(format!("event {event}")) {
                return;
            }
        }
        add_usage(&mut self.usage, Some(found));
    }

    fn put_artifact(&mut self, artifact: &Value, append: bool) {
        let key = string(artifact, "artifactId").unwrap_or_else(|| artifact.to_string());
        let texts = texts_of(artifact.get("parts"));
        let parts = data_parts(artifact.get("parts"));
        let usage = artifact.get("metadata").and_then(usage::held_by);
        match self.artifacts.iter_mut().find(|a| a.key == key) {
            Some(known) if append => {
                for text in texts {
                    match known.texts.last_mut() {
                        Some(last) => last.push_str(&text),
                        None => known.texts.push(text),
                    }
                }
                known.parts.extend(parts);
                add_usage(&mut known.usage, usage);
            }
            Some(known) => {
                *known = Artifact {
                    key,
                    texts,
                    parts,
                    usage,
                }
            }
            None => self.artifacts.push(Artifact {
                key,
                texts,
                parts,
                usage,
            }),
        }
    }
}

/// A message of the user's (0.3 `user`, 1.0 `ROLE_USER`).
fn is_user(message: &Value) -> bool {
    message
        .get("role")
        .and_then(Value::as_str)
        .is_some_and(|r| r.eq_ignore_ascii_case("user") || r == "ROLE_USER")
}

/// The non-empty texts of text parts (0.3 `{"kind": "text"}`, 1.0
/// `{"text"}`).
fn texts_of(parts: Option<&Value>) -> Vec<String> {
    let Some(parts) = parts.and_then(Value::as_array) else {
        return Vec::new();
    };
    parts
        .iter()
        .filter(|p| matches!(p.get("kind").and_then(Value::as_str), None | Some("text")))
        .filter_map(|p| p.get("text").and_then(Value::as_str))
        .filter(|t| !t.is_empty())
        .map(str::to_string)
        .collect()
}

/// The parts that carry data, whole.
fn data_parts(parts: Option<&Value>) -> Vec<Value> {
    let Some(parts) = parts.and_then(Value::as_array) else {
        return Vec::new();
    };
    parts
        .iter()
        .filter(|p| matches!(p.get("kind").and_then(Value::as_str), None | Some("data")))
        .filter(|p| p.get("data").is_some_and(|d| !d.is_null()))
        .cloned()
        .collect()
}

pub fn string(value: &Value, key: &str) -> Option<String> {
    value
        .get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// At most 64 characters of a name the agent gave, for a message.
pub fn excerpt(text: &str) -> String {
    text.chars().take(64).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn usage(p: u64, c: u64) -> Option<Usage> {
        Some(Usage {
            prompt_tokens: p,
            completion_tokens: c,
        })
    }

    #[test]
    fn adks_task_gives_its_history_calls_its_artifact_text_and_its_usage() {
        let mut reply = AgentReply::default();
        reply
            .apply_task(&json!({"id": "t", "contextId": "c",
                "status": {"state": "TASK_STATE_COMPLETED"},
                "artifacts": [{"artifactId": "a", "parts": [{"text": "All done. PL4471902."}]}],
                "history": [
                    {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "old"}]},
                    {"messageId": "x", "role": "ROLE_AGENT", "parts": [{"data": {"old": 1}}]},
                    {"messageId": "m2", "role": "ROLE_USER", "parts": [{"text": "#A1002"}]},
                    {"messageId": "c1", "role": "ROLE_AGENT", "parts": [{"data": {"id": "call_0_0",
                        "name": "get_order_status", "args": {}}, "metadata": {"adk_type": "function_call"}}]},
                    {"messageId": "t1", "role": "ROLE_AGENT", "parts": [{"text": "All done. PL4471902."}]}],
                "metadata": {"adk_event_id": "e3", "adk_usage_metadata": {"promptTokenCount": 228.0,
                    "candidatesTokenCount": 17.0}}}))
            .unwrap();
        assert_eq!(reply.state, Some(TaskState::Completed));
        let taken = reply.take(&[]);
        assert_eq!(taken.text, "All done. PL4471902.");
        assert_eq!(taken.parts.len(), 1, "{:?}", taken.parts);
        assert_eq!(taken.parts[0]["metadata"]["adk_type"], "function_call");
        assert_eq!(taken.usage, usage(228, 17));
    }

    #[test]
    fn a_stream_is_folded_into_the_last_status_the_joined_artifact_and_summed_usage() {
        let mut reply = AgentReply::default();
        reply
            .apply_task(
                &json!({"id": "t", "contextId": "c", "status": {"state": "submitted"},
                "history": [{"kind": "message", "role": "user", "messageId": "m", "parts": []}]}),
            )
            .unwrap();
        for (event, text) in [("e1", "Let me look."), ("e2", "")] {
            let mut update = json!({"taskId": "t", "status": {"state": "working", "message": {
                "messageId": event, "role": "agent", "parts": [{"data": {"functionCall": {"name": "get"}}}]}},
                "metadata": {"adk_event_id": event, "adk_usage_metadata":
                    {"promptTokenCount": 10, "candidatesTokenCount": 1}}});
            if !text.is_empty() {
                update["status"]["message"]["parts"] = json!([{"text": text}]);
            }
            reply.apply_status_update(&update).unwrap();
        }
        // The same event's usage again (an artifact update of it).
        reply
            .apply_artifact_update(&json!({"taskId": "t", "append": true, "artifact": {
                "artifactId": "a", "parts": [{"text": "All done. "}]},
                "metadata": {"adk_event_id": "e2", "adk_usage_metadata": {"promptTokenCount": 10}}}))
            .unwrap();
        reply
            .apply_artifact_update(&json!({"taskId": "t", "append": true, "artifact": {
                "artifactId": "a", "parts": [{"text": "PL4471902."}]}}))
            .unwrap();
        reply
            .apply_status_update(&json!({"taskId": "t", "status": {"state": "completed"}}))
            .unwrap();
        let taken = reply.take(&[]);
        assert_eq!(reply.state, Some(TaskState::Completed));
        assert_eq!(
            taken.text, "All done. PL4471902.",
            "the working message is not the reply"
        );
        assert_eq!(
            taken.parts.len(),
            1,
            "the message of e2 had no data: {:?}",
            taken.parts
        );
        assert_eq!(taken.usage, usage(20, 2));
        // The last chunk, not appended, replaces the artifact.
        reply
            .apply_artifact_update(&json!({"append": false, "artifact": {"artifactId": "a",
                "parts": [{"kind": "text", "text": "Whole."}], "metadata": {"usage": {"input_tokens": 3}}}}))
            .unwrap();
        assert_eq!(reply.take(&[]).text, "Whole.");
        assert_eq!(reply.take(&[]).usage, usage(23, 2));
    }

    #[test]
    fn artifacts_seen_in_an_earlier_answer_of_the_task_are_left_out() {
        let mut reply = AgentReply::default();
        reply
            .apply_task(&json!({"id": "t", "status": {"state": "completed"},
                "artifacts": [
                    {"artifactId": "a1", "parts": [{"kind": "data", "data": 1}, {"kind": "text", "text": "old"}]},
                    {"parts": [{"kind": "data", "data": 2}, {"kind": "text", "text": "new"}]}]}))
            .unwrap();
        let keys: Vec<String> = reply.artifact_keys().map(str::to_string).collect();
        assert_eq!(keys[0], "a1");
        let taken = reply.take(&keys[..1]);
        assert_eq!(taken.text, "new");
        assert_eq!(taken.parts, vec![json!({"kind": "data", "data": 2})]);
        assert_eq!(reply.take(&keys).text, "");
    }

    #[test]
    fn a_status_message_also_in_the_history_is_read_once() {
        let message = json!({"messageId": "s", "role": "agent",
            "parts": [{"kind": "text", "text": "Done."}, {"kind": "data", "data": {"tool_calls": []}}],
            "metadata": {"usage": {"prompt_tokens": 4, "completion_tokens": 1}}});
        let mut reply = AgentReply::default();
        reply
            .apply_task(
                &json!({"id": "t", "status": {"state": "input-required", "message": message},
                "history": [{"role": "user", "messageId": "u", "parts": []}, message]}),
            )
            .unwrap();
        let taken = reply.take(&[]);
        assert_eq!((taken.text.as_str(), taken.parts.len()), ("Done.", 1));
        assert_eq!(taken.usage, usage(4, 1));
    }
}
