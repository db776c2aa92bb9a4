//! MCP values as sparring's: a server's tool as a [`ToolSpec`], a
//! `tools/call` result as a [`ToolOutput`] (what the policy reads) or a
//! [`ProbeOutput`] (what a probe checks).

use rmcp::model::{CallToolResult, ContentBlock, ResourceContents, Tool};
use serde_json::Value;

use crate::env::{ToolOutput, ToolSpec};
use crate::verify::probes::ProbeOutput;

/// A tool the server lists, as offered to the policy.
pub fn tool_spec(tool: &Tool) -> ToolSpec {
    ToolSpec {
        name: tool.name.to_string(),
        description: tool
            .description
            .as_deref()
            .or(tool.title.as_deref())
            .unwrap_or_default()
            .to_string(),
        parameters: Value::Object(tool.input_schema.as_ref().clone()),
    }
}

/// What the policy reads: the structured content as JSON when there is some
/// (it is the machine-readable form, and probes compare it), else the text
/// blocks joined by newlines; a block with no text (an image) is named by
/// its kind. `isError` makes it an error output the policy sees as such.
pub fn tool_output(result: &CallToolResult) -> ToolOutput {
    let text = match &result.structured_content {
        Some(structured) if !structured.is_null() => structured.to_string(),
        _ => result
            .content
            .iter()
            .map(block_text)
            .collect::<Vec<_>>()
            .join("\n"),
    };
    if result.is_error == Some(true) {
        ToolOutput::error(text)
    } else {
        ToolOutput::ok(text)
    }
}

/// What a probe checks: `expect_regex` the result's text (its `content`
/// blocks of type `text`, joined by newlines; no block of another kind), and
/// `expect` its `structuredContent` when it has some (else that text read as
/// JSON). `isError` makes it a failed call.
pub fn probe_output(result: &CallToolResult) -> ProbeOutput {
    let text = result
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text(text) => Some(text.text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n");
    let is_error = result.is_error == Some(true);
    ProbeOutput {
        content: if is_error {
            format!("Error: {text}")
        } else {
            text
        },
        structured: result
            .structured_content
            .clone()
            .filter(|structured| !structured.is_null()),
        is_error,
    }
}

fn block_text(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text(text) => text.text.clone(),
        ContentBlock::Resource(resource) => match &resource.resource {
            ResourceContents::TextResourceContents { text, .. } => text.clone(),
            ResourceContents::BlobResourceContents { uri, .. } => format!("[resource {uri}]"),
            #[allow(unreachable_patterns)]
            _ => "[resource]".to_string(),
        },
        ContentBlock::Image(image) => format!("[image {}]", image.mime_type),
        ContentBlock::Audio(audio) => format!("[audio {}]", audio.mime_type),
        ContentBlock::ResourceLink(link) => format!("[resource link {}]", link.uri),
        #[allow(unreachable_patterns)]
        _ => "[content]".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn result(v: Value) -> CallToolResult {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn structured_content_wins_over_text_and_text_blocks_are_joined() {
        let r = result(
            json!({"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}),
        );
        assert_eq!(tool_output(&r), ToolOutput::ok("a\nb"));
        let r = result(json!({"content": [{"type": "text", "text": "{\"n\": 1}"}],
                              "structuredContent": {"n": 1}}));
        assert_eq!(tool_output(&r).content, r#"{"n":1}"#);
    }

    #[test]
    fn a_probe_reads_the_text_blocks_and_the_structured_content_apart() {
        let r = result(json!({
            "content": [{"type": "text", "text": "done"},
                        {"type": "image", "data": "AA==", "mimeType": "image/png"},
                        {"type": "text", "text": "said \"yes\""}],
            "structuredContent": {"content": "done"}
        }));
        let out = probe_output(&r);
        assert_eq!(out.content, "done\nsaid \"yes\"");
        assert_eq!(out.structured, Some(json!({"content": "done"})));
        assert!(!out.is_error);
        // What the policy reads is still the structured content.
        assert_eq!(tool_output(&r).content, r#"{"content":"done"}"#);
    }

    #[test]
    fn is_error_goes_back_to_the_policy_as_an_error_output() {
        let r = result(
            json!({"content": [{"type": "text", "text": "Entity X not found"}],
                              "isError": true}),
        );
        let out = tool_output(&r);
        assert!(out.is_error);
        assert_eq!(out.content, "Error: Entity X not found");
    }

    #[test]
    fn a_tool_becomes_a_function_spec_with_its_input_schema() {
        let tool: Tool = serde_json::from_value(json!({
            "name": "read_graph", "description": "Read the graph",
            "inputSchema": {"type": "object", "properties": {}}
        }))
        .unwrap();
        let spec = tool_spec(&tool);
        assert_eq!(spec.name, "read_graph");
        assert_eq!(spec.description, "Read the graph");
        assert_eq!(spec.parameters["type"], "object");
    }
}
