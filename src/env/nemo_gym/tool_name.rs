//! Tool names as NeMo Gym reads them: an MCP client namespaces a server's
//! tools as `mcp__<server>__<tool>`, and NeMo Gym strips that prefix before a
//! verifier compares names, so a call scores the same on either transport.

/// `mcp__server__tool` → `tool`; any other name as it is (also
/// `mcp__x` without a second `__`, which names no server).
pub fn normalize_tool_name(name: &str) -> &str {
    let Some(rest) = name.strip_prefix("mcp__") else {
        return name;
    };
    match rest.split_once("__") {
        Some((_server, tool)) if !tool.is_empty() => tool,
        _ => name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mcp_server_prefix_is_removed_as_nemo_gym_does() {
        assert_eq!(
            normalize_tool_name("mcp__workplace_assistant__email_reply_email"),
            "email_reply_email"
        );
        assert_eq!(
            normalize_tool_name("email_reply_email"),
            "email_reply_email"
        );
        assert_eq!(normalize_tool_name("mcp__lonely"), "mcp__lonely");
        // Only the first server segment goes; the tool keeps its own `__`.
        assert_eq!(normalize_tool_name("mcp__s__a__b"), "a__b");
    }
}
