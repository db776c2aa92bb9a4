use super::*;
use proptest::prelude::*;
use serde_json::json;

fn rows(items: Value, format: TraceFormat) -> Vec<(String, String, String, String)> {
    read(&[items], format)
        .into_iter()
        .map(|r| (r.call.id, r.call.name, r.call.arguments, r.output))
        .collect()
}

fn auto(items: Value) -> Vec<(String, String, String, String)> {
    rows(items, TraceFormat::Auto)
}

fn row(id: &str, name: &str, arguments: &str, output: &str) -> (String, String, String, String) {
    (id.into(), name.into(), arguments.into(), output.into())
}

#[test]
fn openai_chat_messages_pair_calls_with_their_tool_messages() {
    let messages = json!([
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": null, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "get", "arguments": "{\"a\":1}"}},
            {"id": "c2", "type": "function", "function": {"name": "put", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c2", "content": "ok2"},
        {"role": "tool", "tool_call_id": "c1", "content": "ok1"},
        {"role": "assistant", "content": "done"}
    ]);
    let expected = vec![
        row("c1", "get", "{\"a\":1}", "ok1"),
        row("c2", "put", "{}", "ok2"),
    ];
    assert_eq!(auto(messages.clone()), expected);
    assert_eq!(rows(messages.clone(), TraceFormat::OpenaiChat), expected);
    assert!(rows(messages, TraceFormat::AdkEvents).is_empty());
}

#[test]
fn langchain_messages_give_args_as_json_text() {
    let got = auto(json!([
        {"type": "human", "content": "hi"},
        {"type": "ai", "content": "", "tool_calls": [{"name": "get", "args": {"id": "#1"}, "id": "t1"}]},
        {"type": "tool", "tool_call_id": "t1", "content": [{"type": "text", "text": "shipped"}]},
        {"type": "ai", "content": "It shipped."}
    ]));
    assert_eq!(got, vec![row("t1", "get", "{\"id\":\"#1\"}", "shipped")]);
}

#[test]
fn flat_records_carry_their_own_output_and_messages_are_not_records() {
    let got = auto(json!([
        {"id": "c1", "name": "get", "arguments": {"id": "#1"}, "output": "shipped"},
        {"name": "put", "args": {}, "type": "tool_call"},
        {"name": "get", "type": "tool", "tool_call_id": "zz", "content": "not a call"},
        {"role": "assistant", "name": "bot", "content": "hi"}
    ]));
    assert_eq!(
        got,
        vec![
            row("c1", "get", "{\"id\":\"#1\"}", "shipped"),
            row("", "put", "{}", "")
        ]
    );
}

#[test]
fn responses_items_pair_by_call_id_and_an_unanswered_call_keeps_an_empty_output() {
    let items = json!([
        {"type": "function_call", "call_id": "a", "name": "get", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "a", "output": "x"},
        {"type": "function_call", "call_id": "b", "name": "put", "arguments": "{}"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "hi"}]}
    ]);
    let expected = vec![row("a", "get", "{}", "x"), row("b", "put", "{}", "")];
    assert_eq!(auto(items.clone()), expected);
    assert_eq!(rows(items, TraceFormat::Responses), expected);
}

/// `adk api_server`'s `/run` answer for one turn (trimmed), as it came.
fn adk_events() -> Value {
    json!([
        {"content": {"parts": [{"functionCall": {"id": "call_0_0", "args": {"order_id": "#A1002"},
            "name": "get_order_status"}}], "role": "model"},
         "usageMetadata": {"candidatesTokenCount": 10, "promptTokenCount": 167},
         "invocationId": "e-4cf0", "author": "orders_desk"},
        {"content": {"parts": [{"functionResponse": {"id": "call_0_0", "name": "get_order_status",
            "response": {"result": "{\"status\": \"shipped\"}"}}}], "role": "user"},
         "invocationId": "e-4cf0", "author": "orders_desk"},
        {"content": {"parts": [{"text": "All done. PL4471902."}], "role": "model"},
         "invocationId": "e-4cf0", "author": "orders_desk"}
    ])
}

#[test]
fn adk_events_pair_function_calls_with_their_responses_and_unwrap_the_result() {
    let expected = vec![row(
        "call_0_0",
        "get_order_status",
        "{\"order_id\":\"#A1002\"}",
        "{\"status\": \"shipped\"}",
    )];
    assert_eq!(auto(adk_events()), expected);
    assert_eq!(rows(adk_events(), TraceFormat::AdkEvents), expected);
    assert!(rows(adk_events(), TraceFormat::OpenaiChat).is_empty());
    let object_response =
        json!({"functionResponse": {"id": "c", "name": "n", "response": {"a": 1, "b": 2}}});
    let mut pieces = Vec::new();
    adk::read(&object_response, &mut pieces);
    assert_eq!(
        pieces,
        vec![Piece::Output {
            id: "c".into(),
            text: "{\"a\":1,\"b\":2}".into()
        }]
    );
}

#[test]
fn streamed_adk_events_leave_out_the_partial_calls() {
    let events = json!([
        {"content": {"parts": [{"functionCall": {"id": "call_0_0", "name": "get_order_status",
            "willContinue": true}}], "role": "model"}, "partial": true, "invocationId": "e"},
        {"content": {"parts": [{"functionCall": {"id": "call_0_0", "args": {"order_id": "#A1002"},
            "name": "get_order_status"}}], "role": "model"}, "partial": false, "invocationId": "e"},
        {"content": {"parts": [{"functionResponse": {"id": "call_0_0", "name": "get_order_status",
            "response": {"result": "shipped"}}}], "role": "user"}, "invocationId": "e"}
    ]);
    assert_eq!(
        auto(events),
        vec![row(
            "call_0_0",
            "get_order_status",
            "{\"order_id\":\"#A1002\"}",
            "shipped"
        )]
    );
}

#[test]
fn a2a_parts_read_adks_tagged_data_and_any_data_as_auto() {
    // ADK's A2A server: a task's history, 1.0 JSON.
    let history = json!([
        {"role": "ROLE_USER", "parts": [{"text": "Sure. My order id is #A1002."}]},
        {"role": "ROLE_AGENT", "parts": [{"data": {"args": {"order_id": "#A1002"}, "id": "call_0_0",
            "name": "get_order_status"}, "metadata": {"adk_type": "function_call"}}]},
        {"role": "ROLE_AGENT", "parts": [{"data": {"id": "call_0_0", "response": {"result": "shipped"},
            "name": "get_order_status"}, "metadata": {"adk_type": "function_response"}}]},
        {"role": "ROLE_AGENT", "parts": [{"text": "All done."}]}
    ]);
    let expected = vec![row(
        "call_0_0",
        "get_order_status",
        "{\"order_id\":\"#A1002\"}",
        "shipped",
    )];
    assert_eq!(auto(history.clone()), expected);
    assert_eq!(rows(history, TraceFormat::A2aParts), expected);
    // 0.3 data parts holding inline records.
    let artifact = json!({"name": "tool_calls", "parts": [{"kind": "data", "data": {"tool_calls": [
        {"id": "c1", "name": "cancel_order", "arguments": {"order_id": "#A1001"}, "output": "ok"}]}},
        {"kind": "text", "text": "not a call"}]});
    assert_eq!(
        rows(artifact, TraceFormat::A2aParts),
        vec![row("c1", "cancel_order", "{\"order_id\":\"#A1001\"}", "ok")]
    );
}

#[test]
fn strands_converse_messages_and_anthropic_blocks_pair_uses_with_results() {
    let strands = json!({"messages": [
        {"role": "user", "content": [{"text": "Sure. My order id is #A1002."}]},
        {"role": "assistant", "content": [{"toolUse": {"toolUseId": "call_0_0", "name": "get_order_status",
            "input": {"order_id": "#A1002"}}}]},
        {"role": "user", "content": [{"toolResult": {"toolUseId": "call_0_0", "status": "success",
            "content": [{"text": "shipped"}]}}]},
        {"role": "assistant", "content": [{"text": "All done."}]}
    ]});
    let expected = vec![row(
        "call_0_0",
        "get_order_status",
        "{\"order_id\":\"#A1002\"}",
        "shipped",
    )];
    assert_eq!(auto(strands.clone()), expected);
    assert_eq!(rows(strands, TraceFormat::BedrockConverse), expected);
    let anthropic = json!([
        {"role": "assistant", "content": [{"type": "text", "text": "Let me look."},
            {"type": "tool_use", "id": "tu1", "name": "get", "input": {"a": 1}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "tu1",
            "content": [{"type": "text", "text": "x"}, {"json": {"y": 2}}]}]}
    ]);
    assert_eq!(
        auto(anthropic),
        vec![row("tu1", "get", "{\"a\":1}", "x{\"y\":2}")]
    );
}

#[test]
fn pydantic_ai_messages_pair_tool_calls_with_their_returns() {
    let run = json!({"messages": [
        {"kind": "response", "parts": [{"part_kind": "tool-call", "tool_name": "get_order_status",
            "args": "{\"order_id\":\"#A1002\"}", "tool_call_id": "call_0_0"}],
         "usage": {"input_tokens": 127, "output_tokens": 10}},
        {"kind": "request", "parts": [{"part_kind": "tool-return", "tool_name": "get_order_status",
            "content": "shipped", "tool_call_id": "call_0_0"}]},
        {"kind": "response", "parts": [{"part_kind": "text", "content": "All done."}]}
    ], "usage": {"input_tokens": 305, "output_tokens": 27}});
    let expected = vec![row(
        "call_0_0",
        "get_order_status",
        "{\"order_id\":\"#A1002\"}",
        "shipped",
    )];
    assert_eq!(auto(run.clone()), expected);
    assert_eq!(rows(run, TraceFormat::PydanticAi), expected);
}

#[test]
fn data_that_looks_like_no_trace_reads_as_none_and_depth_is_bounded() {
    assert!(auto(json!({"order": {"status": "shipped"}, "tool": "x"})).is_empty());
    assert!(auto(json!([[[[[[[[{"tool_calls": [{"name": "deep"}]}]]]]]]]])).is_empty());
    assert!(auto(json!("text")).is_empty());
}

fn any_trace() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<i64>().prop_map(|n| json!(n)),
        any::<bool>().prop_map(Value::Bool),
        prop::sample::select(vec![
            "tool",
            "function_call",
            "function_call_output",
            "get",
            "c1",
            "",
            "data",
            "tool-call",
            "tool-return",
            "response",
            "request",
            "tool_use",
            "tool_result",
            "function_call"
        ])
        .prop_map(|s| json!(s)),
    ];
    leaf.prop_recursive(6, 64, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec(
                (
                    prop::sample::select(vec![
                        "tool_calls",
                        "id",
                        "name",
                        "arguments",
                        "args",
                        "output",
                        "type",
                        "role",
                        "call_id",
                        "tool_call_id",
                        "content",
                        "messages",
                        "function",
                        "parts",
                        "functionCall",
                        "functionResponse",
                        "response",
                        "kind",
                        "data",
                        "metadata",
                        "adk_type",
                        "part_kind",
                        "tool_name",
                        "toolUse",
                        "toolResult",
                        "toolUseId",
                        "input",
                        "partial"
                    ]),
                    inner
                ),
                0..5
            )
            .prop_map(|kv| Value::Object(
                kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
            )),
        ]
    })
}

/// Objects in `value`, itself included.
fn objects(value: &Value) -> usize {
    match value {
        Value::Object(map) => 1 + map.values().map(objects).sum::<usize>(),
        Value::Array(items) => items.iter().map(objects).sum(),
        _ => 0,
    }
}

proptest! {
    #[test]
    fn any_json_reads_without_panicking_in_every_format_and_each_record_is_an_object_of_it(
        data in prop::collection::vec(any_trace(), 0..3)
    ) {
        let most = data.iter().map(objects).sum::<usize>();
        for format in TraceFormat::ALL {
            let records = read(&data, format);
            prop_assert!(records.len() <= most);
        }
    }
}
