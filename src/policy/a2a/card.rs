//! The agent card (`/.well-known/agent-card.json` below the endpoint's
//! base_url): read once per job, before the first conversation, to check that
//! the agent speaks what sparring sends (JSON-RPC `message/send`) and to name
//! the policy after it.
//!
//! The card's own `url` (and its interfaces' urls) are not followed: every
//! call stays below the endpoint's base_url, the address the service's egress
//! rules and endpoint pinning check, so a card cannot send sparring's calls
//! (and the endpoint's api_key) to another host.

use serde_json::Value;

/// Where the card is, below the base_url.
pub const PATH: &str = "/.well-known/agent-card.json";

/// What sparring takes from a card.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Card {
    /// The policy's name as stored with each conversation: `a2a:` and the
    /// card's name.
    pub label: String,
}

/// Check a card's body: a JSON object with a name, whose transports include
/// JSON-RPC. A2A 0.3 says so with `preferredTransport` (JSON-RPC when
/// absent) or `additionalInterfaces[].transport`; 1.0 with
/// `supportedInterfaces[].protocolBinding`.
pub fn check(body: &[u8]) -> Result<Card, String> {
    let card: Value = serde_json::from_slice(body)
        .map_err(|e| format!("is not JSON ({e}); an agent card is a JSON object"))?;
    if !card.is_object() {
        return Err("is JSON but not an object; an agent card is a JSON object".into());
    }
    let name = card
        .get("name")
        .and_then(Value::as_str)
        .map(|n| n.chars().filter(|c| !c.is_control()).collect::<String>())
        .filter(|n| !n.trim().is_empty())
        .ok_or("has no name; an agent card names its agent (\"name\": \"...\")")?;
    let jsonrpc = |v: Option<&Value>| {
        v.and_then(Value::as_str)
            .is_some_and(|t| t.eq_ignore_ascii_case("JSONRPC"))
    };
    let interfaces = |key: &str, field: &str| {
        card.get(key)
            .and_then(Value::as_array)
            .is_some_and(|list| list.iter().any(|i| jsonrpc(i.get(field))))
    };
    let preferred = card.get("preferredTransport");
    let listed = interfaces("additionalInterfaces", "transport")
        || interfaces("supportedInterfaces", "protocolBinding");
    // Without preferredTransport, 0.3 means JSON-RPC; a 1.0 card lists its
    // interfaces instead.
    let speaks_jsonrpc = match preferred {
        Some(_) => jsonrpc(preferred) || listed,
        None => listed || card.get("supportedInterfaces").is_none(),
    };
    if !speaks_jsonrpc {
        let named = preferred.map_or_else(|| "?".to_string(), Value::to_string);
        return Err(format!(
            "names no JSON-RPC interface (preferredTransport {}, none of \
             additionalInterfaces or supportedInterfaces is JSONRPC); kind = \"a2a\" speaks \
             JSON-RPC message/send only",
            named.chars().take(40).collect::<String>()
        ));
    }
    Ok(Card {
        label: format!("a2a:{}", name.trim().chars().take(64).collect::<String>()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check_json(v: Value) -> Result<Card, String> {
        check(v.to_string().as_bytes())
    }

    #[test]
    fn cards_of_both_versions_that_speak_json_rpc_are_accepted_and_named() {
        let v03 = json!({"name": "orders desk", "url": "http://elsewhere/", "preferredTransport": "JSONRPC"});
        assert_eq!(check_json(v03).unwrap().label, "a2a:orders desk");
        let v10 = json!({"name": "desk", "supportedInterfaces": [
            {"url": "http://x/", "protocolBinding": "GRPC"},
            {"url": "http://x/", "protocolBinding": "JSONRPC"}]});
        assert_eq!(check_json(v10).unwrap().label, "a2a:desk");
        let grpc_first = json!({"name": "d", "preferredTransport": "GRPC",
            "additionalInterfaces": [{"url": "u", "transport": "JSONRPC"}]});
        assert!(check_json(grpc_first).is_ok());
        let long = "n\u{7}".repeat(100);
        assert_eq!(
            check_json(json!({"name": long})).unwrap().label.len(),
            "a2a:".len() + 64
        );
    }

    #[test]
    fn a_card_without_a_name_or_json_rpc_is_refused_saying_why() {
        assert!(check(b"<html>").unwrap_err().contains("not JSON"));
        assert!(check(b"[]").unwrap_err().contains("not an object"));
        assert!(check_json(json!({"name": " "}))
            .unwrap_err()
            .contains("no name"));
        let grpc = json!({"name": "d", "preferredTransport": "GRPC"});
        let e = check_json(grpc).unwrap_err();
        assert!(e.contains("GRPC") && e.contains("message/send"), "{e}");
        let rest_only = json!({"name": "d", "supportedInterfaces": [
            {"url": "http://x/", "protocolBinding": "HTTP+JSON"}]});
        assert!(check_json(rest_only).is_err());
    }
}
