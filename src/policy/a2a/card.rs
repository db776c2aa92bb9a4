//! The agent card (`/.well-known/agent-card.json` below the endpoint's
//! base_url, or `[policy.a2a] card_path`): read once per job, before the first conversation, to choose
//! the A2A version sparring speaks to the agent, to learn whether it
//! streams, and to name the policy after it.
//!
//! Versions: an A2A 1.0 card lists its interfaces in `supportedInterfaces`,
//! each with a `protocolBinding` and a `protocolVersion`; an A2A 0.3 card
//! names one `protocolVersion` for all its transports (`preferredTransport`,
//! JSON-RPC when absent, and `additionalInterfaces[].transport`; a card
//! without a version is 0.3's default, `0.3.0`). a2a-sdk 1.x writes both
//! forms in one card. Of the JSON-RPC interfaces, sparring speaks 1.x (as
//! 1.0) and 0.2 or 0.3 (as 0.3), and prefers 1.0; a card whose JSON-RPC
//! interfaces are all of other versions is refused, as is one with none.
//!
//! The card's own `url` (and its interfaces' urls) are not followed: every
//! call stays below the endpoint's base_url, the address the service's egress
//! rules and endpoint pinning check, so a card cannot send sparring's calls
//! (and the endpoint's api_key) to another host.

use serde_json::Value;

use crate::config::policy::a2a::A2aVersion;

/// What sparring takes from a card.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Card {
    /// The policy's name as stored with each conversation: `a2a:` and the
    /// card's name.
    pub label: String,
    /// The versions of its JSON-RPC interfaces that sparring speaks, newest
    /// first.
    pub versions: Vec<A2aVersion>,
    /// `capabilities.streaming`.
    pub streams: bool,
}

impl Card {
    /// The version to speak: `wanted`, when the card lists it, else the
    /// newest it lists.
    pub fn version(&self, wanted: Option<A2aVersion>) -> Result<A2aVersion, String> {
        match wanted {
            Some(v) if self.versions.contains(&v) => Ok(v),
            Some(v) => Err(format!(
                "lists JSON-RPC for A2A {} but [policy.a2a] version = \"{}\"; remove the key, or \
                 set it to one the card lists",
                names(&self.versions),
                v.as_str()
            )),
            None => self
                .versions
                .first()
                .copied()
                .ok_or_else(|| "lists no JSON-RPC interface".to_string()),
        }
    }
}

fn names(versions: &[A2aVersion]) -> String {
    versions
        .iter()
        .map(|v| v.as_str())
        .collect::<Vec<_>>()
        .join(" and ")
}

/// The version a `protocolVersion` names, if sparring speaks it.
pub fn spoken(version: &str) -> Option<A2aVersion> {
    let mut numbers = version.trim().trim_start_matches(['v', 'V']).split('.');
    let major: u32 = numbers.next()?.parse().ok()?;
    let minor: u32 = numbers.next().map_or(Some(0), |m| m.parse().ok())?;
    match (major, minor) {
        (1, _) => Some(A2aVersion::V10),
        (0, 2 | 3) => Some(A2aVersion::V03),
        _ => None,
    }
}

/// Check a card's body: a JSON object with a name, with a JSON-RPC
/// interface of a version sparring speaks.
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
    let (offered, jsonrpc_at_all) = jsonrpc_versions(&card);
    let mut versions: Vec<A2aVersion> = offered.iter().filter_map(|v| spoken(v)).collect();
    versions.sort_by_key(|v| std::cmp::Reverse(*v == A2aVersion::V10));
    versions.dedup();
    if versions.is_empty() {
        if !jsonrpc_at_all {
            let named = card
                .get("preferredTransport")
                .map_or_else(|| "?".to_string(), Value::to_string);
            return Err(format!(
                "names no JSON-RPC interface (preferredTransport {}, none of \
                 additionalInterfaces or supportedInterfaces is JSONRPC); kind = \"a2a\" speaks \
                 JSON-RPC only",
                named.chars().take(40).collect::<String>()
            ));
        }
        let listed: Vec<String> = offered
            .iter()
            .map(|v| format!("{:?}", v.chars().take(16).collect::<String>()))
            .collect();
        return Err(format!(
            "offers JSON-RPC for A2A versions {} only; sparring speaks 0.3 (message/send; 0.2 \
             reads the same) and 1.0 (SendMessage)",
            listed.join(", ")
        ));
    }
    let streams = card
        .get("capabilities")
        .and_then(|c| c.get("streaming"))
        .and_then(Value::as_bool)
        .unwrap_or(false);
    Ok(Card {
        label: format!("a2a:{}", name.trim().chars().take(64).collect::<String>()),
        versions,
        streams,
    })
}

/// The protocol versions of the card's JSON-RPC interfaces, and whether it
/// has any JSON-RPC interface at all.
fn jsonrpc_versions(card: &Value) -> (Vec<String>, bool) {
    let jsonrpc = |v: Option<&Value>| {
        v.and_then(Value::as_str)
            .is_some_and(|t| t.eq_ignore_ascii_case("JSONRPC"))
    };
    let mut versions = Vec::new();
    let mut any = false;
    // 1.0: each interface says its version (required there; 1.0 when left out).
    if let Some(interfaces) = card.get("supportedInterfaces").and_then(Value::as_array) {
        for interface in interfaces {
            if jsonrpc(interface.get("protocolBinding")) {
                any = true;
                let version = interface.get("protocolVersion").and_then(Value::as_str);
                versions.push(version.unwrap_or("1.0").to_string());
            }
        }
    }
    // 0.3: one version for the card's transports (0.3.0 when unsaid).
    let preferred = card.get("preferredTransport");
    let is_03 = preferred.is_some()
        || card.get("additionalInterfaces").is_some()
        || card.get("protocolVersion").is_some()
        || card.get("supportedInterfaces").is_none();
    if is_03 {
        let additional = card
            .get("additionalInterfaces")
            .and_then(Value::as_array)
            .is_some_and(|list| list.iter().any(|i| jsonrpc(i.get("transport"))));
        if preferred.is_none() || jsonrpc(preferred) || additional {
            any = true;
            let version = card.get("protocolVersion").and_then(Value::as_str);
            versions.push(version.unwrap_or("0.3.0").to_string());
        }
    }
    (versions, any)
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
        let card = check_json(v03).unwrap();
        assert_eq!(card.label, "a2a:orders desk");
        assert_eq!(card.versions, [A2aVersion::V03]);
        let v10 = json!({"name": "desk", "supportedInterfaces": [
            {"url": "http://x/", "protocolBinding": "GRPC", "protocolVersion": "1.0"},
            {"url": "http://x/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
            "capabilities": {"streaming": true}});
        let card = check_json(v10).unwrap();
        assert_eq!(
            (card.versions.clone(), card.streams),
            (vec![A2aVersion::V10], true)
        );
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
    fn a_card_of_both_forms_prefers_1_0_and_a_wanted_version_must_be_listed() {
        // What a2a-sdk 1.x serves with its 0.3 compatibility on.
        let both = json!({"name": "desk", "supportedInterfaces": [
            {"url": "u", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            {"url": "u", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"}],
            "preferredTransport": "JSONRPC", "protocolVersion": "0.3", "url": "u"});
        let card = check_json(both).unwrap();
        assert_eq!(card.versions, [A2aVersion::V10, A2aVersion::V03]);
        assert_eq!(card.version(None), Ok(A2aVersion::V10));
        assert_eq!(card.version(Some(A2aVersion::V03)), Ok(A2aVersion::V03));
        // ADK's and fasta2a's: 1.0 alone.
        let only = check_json(json!({"name": "d", "supportedInterfaces": [
            {"url": "u", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]}))
        .unwrap();
        let e = only.version(Some(A2aVersion::V03)).unwrap_err();
        assert!(
            e.contains("A2A 1.0") && e.contains("version = \"0.3\""),
            "{e}"
        );
        // Strands': a 0.3 card.
        let strands = check_json(json!({"name": "d", "preferredTransport": "JSONRPC",
            "protocolVersion": "0.3.0", "capabilities": {"streaming": true}}))
        .unwrap();
        assert_eq!(strands.version(None), Ok(A2aVersion::V03));
    }

    #[test]
    fn a_card_with_no_version_sparring_speaks_is_refused_naming_them() {
        let future = json!({"name": "d", "supportedInterfaces": [
            {"url": "u", "protocolBinding": "JSONRPC", "protocolVersion": "2.0"}]});
        let e = check_json(future).unwrap_err();
        assert!(
            e.contains("\"2.0\"") && e.contains("0.3") && e.contains("1.0"),
            "{e}"
        );
        let old = json!({"name": "d", "protocolVersion": "0.1.0"});
        assert!(check_json(old).unwrap_err().contains("\"0.1.0\""));
        assert_eq!(spoken("1.2.3"), Some(A2aVersion::V10));
        assert_eq!(spoken("0.2.6"), Some(A2aVersion::V03));
        assert_eq!(spoken("0.4"), None);
        assert_eq!(spoken("one"), None);
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
        assert!(e.contains("GRPC") && e.contains("JSON-RPC"), "{e}");
        let rest_only = json!({"name": "d", "supportedInterfaces": [
            {"url": "http://x/", "protocolBinding": "HTTP+JSON"}]});
        assert!(check_json(rest_only).is_err());
    }
}
