//! The `datasets` features of a format's rows, the same for every file of
//! the format whatever its rows hold: what `load_dataset("json", …,
//! features=…)` needs to load several files in one call (a split's two
//! sides, two jobs' exports). Without them `datasets` infers each file's
//! types from its first rows, and a file where every `tool_calls` is `null`
//! (or every score of a judge) gets the type `null`, which the next file's
//! lists cannot be cast to.
//!
//! Written as `datasets.Features.to_dict()` writes them (read back with
//! `Features.from_dict`). The parts whose keys vary from one row or job to
//! the next (tool-call arguments, tool parameters, judge scores) are
//! `Json`, which `datasets` (≥ 5) stores as text and gives back as the
//! objects they were.

use serde_json::{json, Map, Value};

use super::Format;

/// The features of `format`'s rows (`dpo`: `None` for `format`, see
/// [`dpo`]); `None` for formats not meant for `datasets` (`openai`, whose
/// lines are OpenAI's, and `nemo_gym`, whose rows are NeMo Gym's).
pub fn of(format: Format, user_tools: bool) -> Option<Value> {
    match format {
        Format::Hf => {
            let mut row = object(&[
                ("messages", list(message())),
                ("tools", list(tool())),
                ("metadata", metadata()),
            ]);
            if user_tools {
                row.insert("user_tools".into(), list(tool()));
            }
            Some(Value::Object(row))
        }
        Format::ShareGpt => Some(Value::Object(object(&[
            (
                "conversations",
                list(Value::Object(object(&[
                    ("from", string()),
                    ("value", string()),
                ]))),
            ),
            ("system", string()),
            ("tools", string()),
            ("metadata", metadata()),
        ]))),
        Format::OpenAi | Format::NemoGym => None,
    }
}

/// The features of `dpo` rows, either shape.
pub fn dpo() -> Value {
    Value::Object(object(&[
        ("prompt", list(message())),
        ("chosen", list(message())),
        ("rejected", list(message())),
        ("tools", list(tool())),
        (
            "metadata",
            Value::Object(object(&[
                ("shape", string()),
                ("source", string()),
                ("scenario", string()),
                ("persona", string()),
                ("sample", int()),
                ("judge", string()),
                ("judgment", int()),
                ("winner", string()),
                ("swap_checked", value("bool")),
                ("conversation_a", int()),
                ("conversation_b", int()),
                ("chosen_conversation", int()),
                ("rejected_conversation", int()),
                ("chosen_reward", float()),
                ("rejected_reward", float()),
                ("family", string()),
                ("strategy", string()),
                ("turn_of_flip", int()),
            ])),
        ),
    ]))
}

/// The features a dataset card declares for what `kind` writes: those of
/// [`of`] and [`dpo`], and `openai`'s lines (arguments as JSON strings, an
/// assistant's `weight`); `None` for NeMo Gym rollouts, whose rows are
/// NeMo Gym's own.
pub fn for_card(kind: &super::kind::ExportKind) -> Option<Value> {
    use super::kind::ExportKind;
    match kind {
        ExportKind::Lines {
            format: Format::OpenAi,
            ..
        } => Some(openai()),
        ExportKind::Lines { format, user_tools } => of(*format, *user_tools),
        ExportKind::Dpo { .. } => Some(dpo()),
        ExportKind::Scenarios { .. } => None,
    }
}

/// An `openai` line: messages (tool-call arguments as JSON strings, an
/// assistant's `weight`) and tools.
pub fn openai() -> Value {
    let mut message = chat_message(string());
    if let Value::Object(fields) = &mut message {
        fields.insert("weight".into(), int());
    }
    Value::Object(object(&[
        ("messages", list(message)),
        ("tools", list(tool())),
    ]))
}

/// An `hf` message.
fn message() -> Value {
    chat_message(any_json())
}

/// A chat message whose tool calls' arguments are `arguments`.
fn chat_message(arguments: Value) -> Value {
    Value::Object(object(&[
        ("role", string()),
        ("content", string()),
        (
            "tool_calls",
            list(Value::Object(object(&[
                ("id", string()),
                ("type", string()),
                (
                    "function",
                    Value::Object(object(&[("name", string()), ("arguments", arguments)])),
                ),
            ]))),
        ),
        ("tool_call_id", string()),
    ]))
}

/// A function tool.
fn tool() -> Value {
    Value::Object(object(&[
        ("type", string()),
        (
            "function",
            Value::Object(object(&[
                ("name", string()),
                ("description", string()),
                ("parameters", any_json()),
            ])),
        ),
    ]))
}

/// The metadata of a conversation (`super::metadata`), with its assistant
/// weights.
fn metadata() -> Value {
    Value::Object(object(&[
        ("conversation", int()),
        ("job", int()),
        ("scenario", string()),
        ("persona", string()),
        ("sample", int()),
        ("seed", int()),
        ("policy_model", string()),
        ("termination", string()),
        ("reward", float()),
        (
            "reward_breakdown",
            list(Value::Object(object(&[
                ("component", string()),
                ("score", float()),
            ]))),
        ),
        ("judges", any_json()),
        (
            "probe",
            Value::Object(object(&[
                ("family", string()),
                ("strategy", string()),
                ("held", value("bool")),
                ("turn_of_flip", int()),
            ])),
        ),
        ("group_id", string()),
        ("group_size", int()),
        ("group_reward_mean", float()),
        ("group_reward_std", float()),
        ("advantage", float()),
        ("assistant_weights", list(int())),
    ]))
}

fn object(fields: &[(&str, Value)]) -> Map<String, Value> {
    fields
        .iter()
        .map(|(name, feature)| (name.to_string(), feature.clone()))
        .collect()
}

fn value(dtype: &str) -> Value {
    json!({"dtype": dtype, "_type": "Value"})
}

fn string() -> Value {
    value("string")
}

fn int() -> Value {
    value("int64")
}

fn float() -> Value {
    value("float64")
}

fn list(feature: Value) -> Value {
    json!({"feature": feature, "_type": "List"})
}

fn any_json() -> Value {
    json!({"_type": "Json"})
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The paths of the leaves of `features` (`[]` for a list's items).
    fn paths(features: &Value, at: &str, out: &mut Vec<String>) {
        let Some(map) = features.as_object() else {
            return;
        };
        match map.get("_type").and_then(Value::as_str) {
            Some("List") => paths(&map["feature"], &format!("{at}[]"), out),
            Some(_) => out.push(at.to_string()),
            None => {
                for (key, feature) in map {
                    paths(feature, &format!("{at}.{key}"), out);
                }
            }
        }
    }

    #[test]
    fn user_tools_add_a_column_of_tools() {
        let plain = of(Format::Hf, false).unwrap();
        let with = of(Format::Hf, true).unwrap();
        assert!(plain.get("user_tools").is_none());
        assert_eq!(with["user_tools"], plain["tools"]);
        let mut leaves = Vec::new();
        paths(&plain, "", &mut leaves);
        assert!(leaves.contains(&".messages[].tool_calls[].function.arguments".to_string()));
        assert!(leaves.contains(&".metadata.assistant_weights[]".to_string()));
        assert!(of(Format::OpenAi, false).is_none());
    }
}
