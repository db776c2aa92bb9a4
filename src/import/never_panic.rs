//! No input makes a reader panic: arbitrary text, and arbitrary JSON in
//! each format's own top-level shape.

use proptest::prelude::*;
use serde_json::{json, Map, Value};

use super::{detect, Format};

const FORMATS: [Format; 4] = [
    Format::Openai,
    Format::Hf,
    Format::ShareGpt,
    Format::NemoGym,
];

fn json_value() -> impl Strategy<Value = Value> {
    let key = prop::sample::select(vec![
        "role",
        "content",
        "tool_calls",
        "tool_call_id",
        "id",
        "function",
        "name",
        "arguments",
        "type",
        "call_id",
        "output",
        "from",
        "value",
        "text",
        "messages",
        "tools",
        "metadata",
        "conversations",
        "system",
        "input",
        "response",
        "responses_create_params",
        "instructions",
        "reward",
        "weight",
        "summary",
    ]);
    let word = prop::sample::select(vec![
        "",
        "user",
        "assistant",
        "system",
        "tool",
        "developer",
        "human",
        "gpt",
        "function_call",
        "observation",
        "message",
        "function_call_output",
        "reasoning",
        "c1",
        "{}",
        "[{\"name\": \"f\"}]",
        "a\nb",
    ]);
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<f64>().prop_map(|f| json!(f)),
        word.prop_map(|w| json!(w)),
        ".*".prop_map(Value::String),
    ];
    leaf.prop_recursive(5, 64, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((key.clone(), inner), 0..6).prop_map(|fields| {
                Value::Object(
                    fields
                        .into_iter()
                        .map(|(k, v)| (k.to_string(), v))
                        .collect::<Map<_, _>>(),
                )
            }),
        ]
    })
}

proptest! {
    #[test]
    fn arbitrary_text_never_panics_a_reader(text in ".*") {
        let _ = detect(&text);
        for format in FORMATS {
            let _ = format.read_line(&text, 1);
        }
    }

    #[test]
    fn arbitrary_json_never_panics_a_reader(value in json_value()) {
        let text = value.to_string();
        let _ = detect(&text);
        for format in FORMATS {
            let _ = format.read_line(&text, 1);
        }
    }
}
