//! The JSON Schemas of a session's action, observation and state, as
//! OpenEnv's `/schema` publishes them and the service's OpenAPI document
//! refers to them: one text for both, next to the code that reads and
//! writes them.

use serde_json::{json, Value};

use super::action::{MAX_ACTION_BYTES, MAX_TOOL_CALLS};

fn chat_message() -> Value {
    json!({
        "type": "object",
        "description": "A message in chat completions' shape.",
        "required": ["role"],
        "properties": {
            "role": {"type": "string", "enum": ["system", "user", "assistant", "tool"]},
            "content": {"type": ["string", "null"]},
            "tool_calls": {"type": "array", "items": tool_call()},
            "tool_call_id": {"type": "string"}
        }
    })
}

fn tool_call() -> Value {
    json!({
        "type": "object",
        "required": ["function"],
        "properties": {
            "id": {"type": "string", "minLength": 1, "maxLength": 256,
                   "description": "Generated (`call_STEP_INDEX`) when left out."},
            "type": {"type": "string", "enum": ["function"]},
            "function": {
                "type": "object",
                "required": ["name"],
                "properties": {
                    "name": {"type": "string", "minLength": 1, "maxLength": 256},
                    "arguments": {"type": ["string", "object"],
                                  "description": "JSON text (passed as written, valid or not: \
                                                  the tool reports bad arguments) or an object."}
                }
            }
        }
    })
}

/// The action: the policy's message.
pub fn action() -> Value {
    json!({
        "title": "SparringAction",
        "description": format!(
            "One assistant message of the policy, in chat completions' shape, with the \
             generation's token fields and usage when the caller has them. Tool calls run on \
             the session's environment; a text answer goes to the simulated user. At most \
             {MAX_ACTION_BYTES} bytes of text and arguments."
        ),
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "role": {"type": "string", "enum": ["assistant"]},
            "content": {"type": ["string", "null"]},
            "tool_calls": {"type": "array", "maxItems": MAX_TOOL_CALLS, "items": tool_call()},
            "prompt_token_ids": {"type": "array", "items": {"type": "integer", "minimum": 0}},
            "generation_token_ids": {"type": "array", "items": {"type": "integer", "minimum": 0}},
            "generation_log_probs": {"type": "array", "items": {"type": "number"}},
            "usage": {
                "type": "object",
                "properties": {
                    "prompt_tokens": {"type": "integer", "minimum": 0},
                    "completion_tokens": {"type": "integer", "minimum": 0}
                }
            },
            "metadata": {"type": "object", "description": "Read and ignored (OpenEnv's Action field)."}
        }
    })
}

/// How an episode ended: in the last observation's metadata and the state.
fn end() -> Value {
    json!({
        "type": "object",
        "properties": {
            "termination": {"type": "string", "enum": [
                "user_stop", "user_transfer", "user_out_of_scope", "max_turns", "policy_answered",
                "max_steps", "policy_error", "user_error", "env_error", "timeout", "cancelled"]},
            "reward": {"type": ["number", "null"],
                       "description": "null when the conversation is not scored, never a stand-in 0"},
            "reward_breakdown": {"description": "the reward's components, as stored"},
            "user_checks": {"description": "the simulated user's deterministic checks, as stored"},
            "conversation_id": {"type": "integer"},
            "job_id": {"type": "integer"}
        }
    })
}

/// The observation.
pub fn observation() -> Value {
    let mut metadata = json!({
        "type": "object",
        "description": "Ids and counts; at the end, how the episode ended and the stored \
                        conversation's id. Never the scenario's hidden fields.",
        "properties": {
            "session_id": {"type": "string"},
            "episode_id": {"type": "string"},
            "job_id": {"type": "integer"},
            "scenario_id": {"type": "string"},
            "persona_id": {"type": "string"},
            "seed": {"type": "integer", "minimum": 0},
            "sample": {"type": "integer", "minimum": 0},
            "step": {"type": "integer", "minimum": 0}
        }
    });
    if let (Some(props), Some(end_props)) = (
        metadata["properties"].as_object_mut(),
        end()["properties"].as_object().cloned(),
    ) {
        props.extend(end_props);
    }
    json!({
        "title": "SparringObservation",
        "description": "What the policy has not seen yet: on reset the opening (the policy's \
                        system prompt, the greeting, the user's first words) and the tools; on a \
                        step the tool results, or the simulated user's reply, or the end.",
        "type": "object",
        "required": ["messages", "done", "metadata"],
        "properties": {
            "messages": {"type": "array", "items": chat_message()},
            "tools": {
                "type": ["array", "null"],
                "description": "The tools the policy may call, in chat completions' shape; on \
                                the first observation only.",
                "items": {"type": "object"}
            },
            "done": {"type": "boolean"},
            "reward": {"type": ["number", "null"]},
            "metadata": metadata
        }
    })
}

/// The state.
pub fn state() -> Value {
    json!({
        "title": "SparringState",
        "type": "object",
        "properties": {
            "episode_id": {"type": ["string", "null"]},
            "step_count": {"type": "integer", "minimum": 0},
            "session_id": {"type": "string"},
            "job_id": {"type": "integer"},
            "scenario_id": {"type": "string"},
            "persona_id": {"type": "string"},
            "seed": {"type": "integer", "minimum": 0},
            "sample": {"type": "integer", "minimum": 0},
            "user_turns": {"type": "integer", "minimum": 0},
            "done": {"type": "boolean"},
            "end": {"oneOf": [end(), {"type": "null"},
                              {"type": "object", "properties": {"failed": {"type": "object"}}}]}
        }
    })
}

/// What opens a session (OpenEnv's `reset` data).
pub fn open_request() -> Value {
    json!({
        "title": "SparringReset",
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "scenario_id": {"type": "string", "minLength": 1, "maxLength": 255,
                            "description": "One of the job's scenarios."},
            "scenario": {"type": "object",
                         "description": "A scenario given here, as a line of a scenarios file holds it."},
            "persona_id": {"type": "string", "minLength": 1, "maxLength": 255,
                           "description": "One of the job's personas."},
            "persona": {"type": "object",
                        "description": "A persona given here, as a personas .jsonl line holds it."},
            "seed": {"type": "integer", "minimum": 0,
                     "description": "Without it, one is drawn; with no scenario or persona named, it chooses them."},
            "episode_id": {"type": "string", "minLength": 1, "maxLength": 255},
            "model": {"type": "string", "minLength": 1, "maxLength": 255,
                      "description": "What plays the policy, as stored with the conversation (default `external`)."},
            "sample": {"type": "integer", "minimum": 0, "maximum": super::request::MAX_SAMPLE}
        }
    })
}
