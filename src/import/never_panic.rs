//! No input makes a reader panic: arbitrary text, and arbitrary JSON in
//! each format's own top-level shape.

use std::io::Cursor;
use std::ops::ControlFlow;

use proptest::prelude::*;
use serde_json::{json, Map, Value};

use super::{detect, detect_document, tau2, tau_bench, Format};

const FORMATS: [Format; 6] = Format::ALL;

/// Reads `bytes` as a tau2-bench results file and as tau-bench
/// trajectories to the end.
fn read_tau2(bytes: &[u8]) {
    let _ = detect_document(bytes);
    let _ = tau2::read_file(Cursor::new(bytes), |c| {
        let _ = c.map(|c| c.messages.len());
        ControlFlow::Continue(())
    });
    let _ = tau_bench::read_file(Cursor::new(bytes), |c| {
        let _ = c.map(|c| c.messages.len());
        ControlFlow::Continue(())
    });
}

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
        "usersim_result",
        "conversation_messages",
        "reasoning_content",
        "invocations",
        "request",
        "persona",
        "uuid",
        "task",
        "user_scenario",
        "customer_scenario",
        "reason_for_call",
        "reason_for_contact",
        "known_info",
        "task_instructions",
        "_ng_task_id",
        "task_id",
        "_ng_rollout_index",
        "info",
        "tasks",
        "simulations",
        "environment_info",
        "policy",
        "tool_defs",
        "trial",
        "reward_info",
        "tool_messages",
        "requestor",
        "error",
        "is_audio",
        "ticks",
        "traj",
        "evaluation_criteria",
        "communicate_info",
        "actions",
        "kwargs",
        "outputs",
        "instruction",
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
        read_tau2(text.as_bytes());
    }

    #[test]
    fn arbitrary_bytes_never_panic_the_tau2_reader(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        read_tau2(&bytes);
    }

    #[test]
    fn arbitrary_json_never_panics_a_reader(value in json_value()) {
        let text = value.to_string();
        let _ = detect(&text);
        for format in FORMATS {
            let _ = format.read_line(&text, 1);
        }
        read_tau2(text.as_bytes());
    }

    #[test]
    fn arbitrary_results_documents_never_panic_the_tau2_reader(
        info in json_value(),
        tasks in prop::collection::vec(json_value(), 0..4),
        simulations in prop::collection::vec(json_value(), 0..4),
        simulations_first in any::<bool>(),
        pretty in any::<bool>(),
    ) {
        let json = |v: &Value| {
            if pretty {
                serde_json::to_string_pretty(v).unwrap_or_default()
            } else {
                v.to_string()
            }
        };
        let (info, tasks, simulations) = (
            json(&info),
            json(&Value::Array(tasks)),
            json(&Value::Array(simulations)),
        );
        // Both orders: `simulations` last is read in one pass, first in two.
        let text = if simulations_first {
            format!("{{\"simulations\": {simulations},\n\"info\": {info},\n\"tasks\": {tasks}}}")
        } else {
            format!("{{\"info\": {info},\n\"tasks\": {tasks},\n\"simulations\": {simulations}}}")
        };
        read_tau2(text.as_bytes());
    }
}
