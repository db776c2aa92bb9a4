//! A streamed answer (`message/stream`, `SendStreamingMessage`): Server-Sent
//! Events, each a JSON-RPC response whose result is the task, a message, a
//! status update or an artifact update, put together in order into one
//! reply ([`super::reply`]). The stream is read whole: a server ends it
//! once the task completed, failed or waits for the user. A JSON-RPC error
//! in it is the answer's error; an event that is not JSON is malformed.

use serde_json::Value;

use super::reply::AgentReply;
use super::response::{apply, ResponseError};
use crate::policy::sse::event_data;

/// Read a streamed answer's body.
pub fn read(body: &[u8]) -> Result<AgentReply, ResponseError> {
    let mut reply = AgentReply::default();
    read_into(body, &mut reply)?;
    Ok(reply)
}

/// Read a streamed answer's body into what the turn's answers said so far.
pub fn read_into(body: &[u8], reply: &mut AgentReply) -> Result<(), ResponseError> {
    let text = String::from_utf8_lossy(body);
    let events = event_data(&text);
    if events.is_empty() {
        return Err(ResponseError::Malformed(
            "the agent's stream holds no event; a streamed A2A answer is Server-Sent Events of \
             JSON-RPC responses"
                .into(),
        ));
    }
    for (i, data) in events.iter().enumerate() {
        let value: Value = serde_json::from_str(data).map_err(|_| {
            ResponseError::Malformed(format!(
                "event {} of the agent's stream is not JSON; each event is a JSON-RPC response",
                i + 1
            ))
        })?;
        apply(&value, reply)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::state::TaskState;
    use super::*;
    use serde_json::json;

    fn stream(events: &[Value]) -> Vec<u8> {
        events
            .iter()
            .map(|e| format!("data: {e}\n\n"))
            .collect::<String>()
            .into_bytes()
    }

    #[test]
    fn strands_0_3_stream_ends_completed_with_its_answer_as_an_artifact() {
        let body = stream(&[
            json!({"id": 2, "jsonrpc": "2.0", "result": {"kind": "task", "id": "t", "contextId": "c",
                "status": {"state": "submitted"},
                "history": [{"kind": "message", "role": "user", "messageId": "m2", "parts": []}]}}),
            json!({"id": 2, "jsonrpc": "2.0", "result": {"kind": "status-update", "taskId": "t",
                "contextId": "c", "final": false, "status": {"state": "working", "message": {
                    "kind": "message", "role": "agent", "messageId": "w1",
                    "parts": [{"kind": "text", "text": "All done. "}]}}}}),
            json!({"id": 2, "jsonrpc": "2.0", "result": {"kind": "artifact-update", "taskId": "t",
                "artifact": {"artifactId": "tr", "name": "trace", "metadata": {"usage":
                    {"inputTokens": 305, "outputTokens": 27}},
                    "parts": [{"kind": "data", "data": {"messages": []}}]}}}),
            json!({"id": 2, "jsonrpc": "2.0", "result": {"kind": "artifact-update", "taskId": "t",
                "artifact": {"artifactId": "ar", "name": "agent_response",
                    "parts": [{"kind": "text", "text": "All done. PL4471902.\n"}]}}}),
            json!({"id": 2, "jsonrpc": "2.0", "result": {"kind": "status-update", "taskId": "t",
                "final": true, "status": {"state": "completed"}}}),
        ]);
        let reply = read(&body).unwrap();
        assert_eq!(reply.state, Some(TaskState::Completed));
        assert_eq!(reply.context_id.as_deref(), Some("c"));
        let taken = reply.take(&[]);
        assert_eq!(taken.text, "All done. PL4471902.\n");
        assert_eq!(taken.parts.len(), 1);
        assert_eq!(taken.usage.map(|u| u.prompt_tokens), Some(305));
    }

    #[test]
    fn an_error_event_or_an_event_that_is_not_json_ends_the_read() {
        let body = stream(&[
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32001, "message": "no"}}),
        ]);
        assert!(matches!(
            read(&body),
            Err(ResponseError::Rpc { code: -32001, .. })
        ));
        let e = read(b"data: {\"jsonrpc\": \"2.0\", \"result\": {\"kind\": \"task\", \"status\": {\"state\": \"working\"}}}\n\ndata: <html>\n\n").unwrap_err();
        assert!(matches!(e, ResponseError::Malformed(m) if m.contains("event 2")));
        assert!(matches!(read(b""), Err(ResponseError::Malformed(m)) if m.contains("no event")));
    }
}
