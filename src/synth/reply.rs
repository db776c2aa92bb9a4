//! Reading a generator's reply: one scenario in sparring's own JSONL row
//! format, in the last fenced ```json block or as the whole reply.

use crate::persona::scenario::Scenario;

/// The JSON text a reply carries: the body of its last ```json fence (or of
/// its last bare ``` fence), else the whole reply trimmed.
pub fn json_text(reply: &str) -> &str {
    let mut found: Option<&str> = None;
    let mut rest = reply;
    while let Some(open) = rest.find("```") {
        let after = &rest[open + 3..];
        let Some(line_end) = after.find('\n') else {
            break;
        };
        let info = after[..line_end].trim();
        let body = &after[line_end + 1..];
        let Some(close) = body.find("```") else {
            break;
        };
        if info.is_empty() || info.eq_ignore_ascii_case("json") {
            found = Some(&body[..close]);
        }
        rest = &body[close + 3..];
    }
    found.unwrap_or(reply).trim()
}

/// The scenario a reply proposes, or serde's exact error (with line and
/// column in the JSON text) for the generator to fix.
pub fn parse_scenario(reply: &str) -> Result<Scenario, String> {
    let text = json_text(reply);
    if text.is_empty() {
        return Err("the reply is empty; answer with one scenario as a ```json block".into());
    }
    serde_json::from_str(text)
        .map_err(|e| format!("the scenario JSON does not parse as a sparring scenario row: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const ROW: &str = r#"{"id": "x", "user": {"reason_for_contact": "r"}}"#;

    #[test]
    fn the_last_json_fence_wins_over_earlier_ones_and_prose() {
        let reply = format!(
            "Here is a draft:\n```json\n{{\"id\": 1}}\n```\nFixed:\n```json\n{ROW}\n```\nDone."
        );
        assert_eq!(parse_scenario(&reply).unwrap().id, "x");
    }

    #[test]
    fn a_bare_reply_is_parsed_whole() {
        assert_eq!(parse_scenario(ROW).unwrap().id, "x");
    }

    #[test]
    fn an_unknown_field_is_named_in_the_error() {
        let err = parse_scenario(r#"{"id": "x", "user": {}, "goal": "g"}"#).unwrap_err();
        assert!(err.contains("unknown field `goal`"), "{err}");
        assert!(err.contains("line 1"), "{err}");
    }

    proptest! {
        #[test]
        fn any_reply_gives_a_scenario_or_an_error_never_a_panic(reply in "\\PC{0,200}") {
            let _ = parse_scenario(&reply);
        }

        #[test]
        fn a_row_inside_any_prose_is_found(before in "[a-zA-Z .,\n]{0,80}", after in "[a-zA-Z .,\n]{0,80}") {
            let reply = format!("{before}\n```json\n{ROW}\n```\n{after}");
            prop_assert_eq!(parse_scenario(&reply).unwrap().id, "x");
        }
    }
}
