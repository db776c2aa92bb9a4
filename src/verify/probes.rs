//! The `probes` component: tool calls a scenario makes after the conversation,
//! on the same session, whose outputs are compared with what it expects. A
//! stateful environment (an MCP memory server, a NeMo Gym server, a built-in
//! domain) is asked what the agent left behind, e.g. `read_graph` after the
//! agent was to store a fact.
//!
//! Comparisons: `expect` is JSON the output must contain (a subset match:
//! objects by key, every expected array element found in the actual array, in
//! any order; numbers as numbers), `expect_regex` a regular expression the
//! output's text must match. A probe may give both; it passes when all hold.
//!
//! What each compares ([`ProbeOutput`]): the text is the tool output as the
//! policy would read it, except for an MCP server, whose text is the result's
//! `text` content blocks joined by newlines; `expect` reads the result's
//! structured content when it has one (MCP's `structuredContent`), else the
//! text as JSON.
//! The environment's session makes the calls (the episode engine runs them);
//! this module only checks the outputs.

use regex::Regex;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::ComponentScore;

/// One probe of a scenario (`evaluation.probes`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Probe {
    /// The tool to call, one of the environment's.
    pub tool: String,
    /// The call's arguments (a JSON object; `{}` when left out).
    #[serde(default = "empty_object")]
    pub arguments: Value,
    /// JSON the output must contain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect: Option<Value>,
    /// A regular expression the output text must match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect_regex: Option<String>,
}

fn empty_object() -> Value {
    Value::Object(serde_json::Map::new())
}

/// What a probe's call answered.
#[derive(Debug, Clone, PartialEq)]
pub struct ProbeOutput {
    /// The text `expect_regex` matches.
    pub content: String,
    /// The structured value `expect` reads, when the output has one apart
    /// from its text; `None`: `expect` reads the text as JSON.
    pub structured: Option<Value>,
    pub is_error: bool,
}

impl Probe {
    /// What is wrong with the probe as written (no expectation, an argument
    /// that is not an object, a regex that does not compile), or `None`.
    pub fn problem(&self) -> Option<String> {
        if self.expect.is_none() && self.expect_regex.is_none() {
            return Some(
                "expects nothing; give \"expect\" (JSON the output must contain) or \
                 \"expect_regex\" (a pattern its text must match)"
                    .into(),
            );
        }
        if !self.arguments.is_object() {
            return Some(format!(
                "arguments is {}; give a JSON object, e.g. {{\"query\": \"Alice\"}}",
                self.arguments
            ));
        }
        if let Some(pattern) = &self.expect_regex {
            if let Err(e) = Regex::new(pattern) {
                return Some(format!("expect_regex does not compile: {e}"));
            }
        }
        None
    }

    /// Whether `output` is what the probe expects; the reason when not.
    pub fn check(&self, output: &ProbeOutput) -> Result<(), String> {
        if output.is_error {
            return Err(format!("the call failed: {}", excerpt(&output.content)));
        }
        if let Some(pattern) = &self.expect_regex {
            let re = Regex::new(pattern).map_err(|e| format!("expect_regex: {e}"))?;
            if !re.is_match(&output.content) {
                return Err(format!(
                    "the output does not match /{pattern}/: {}",
                    excerpt(&output.content)
                ));
            }
        }
        if let Some(expected) = &self.expect {
            let actual: Value = match &output.structured {
                Some(structured) => structured.clone(),
                None => serde_json::from_str(&output.content).map_err(|e| {
                    format!(
                        "the output is not JSON ({e}), so \"expect\" cannot match it: {}",
                        excerpt(&output.content)
                    )
                })?,
            };
            if !contains(&actual, expected) {
                return Err(format!(
                    "the output does not contain {expected}: {}",
                    excerpt(&actual.to_string())
                ));
            }
        }
        Ok(())
    }
}

/// Whether `actual` contains `expected`: every key of an expected object in
/// the actual object (recursively), every element of an expected array in
/// some element of the actual array, and scalars equal (numbers by value).
pub fn contains(actual: &Value, expected: &Value) -> bool {
    match (actual, expected) {
        (Value::Object(actual), Value::Object(expected)) => expected
            .iter()
            .all(|(key, want)| actual.get(key).is_some_and(|got| contains(got, want))),
        (Value::Array(actual), Value::Array(expected)) => expected
            .iter()
            .all(|want| actual.iter().any(|got| contains(got, want))),
        (Value::Number(a), Value::Number(b)) => a.as_f64() == b.as_f64(),
        (actual, expected) => actual == expected,
    }
}

/// At most 300 characters of a tool output, for a detail line.
fn excerpt(text: &str) -> String {
    const MOST: usize = 300;
    match text.char_indices().nth(MOST) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_string(),
    }
}

/// Score 1.0 when every probe's output is as expected, else 0.0; the detail
/// says which probes failed and why. `outputs[i]` answers `probes[i]`.
pub fn score(probes: &[Probe], outputs: &[ProbeOutput]) -> ComponentScore {
    if probes.is_empty() {
        return ComponentScore {
            score: 0.0,
            detail: "the scenario names `probes` in its reward_basis but gives no probes".into(),
        };
    }
    let failed: Vec<String> = probes
        .iter()
        .enumerate()
        .filter_map(|(i, probe)| {
            let result = match outputs.get(i) {
                Some(output) => probe.check(output),
                None => Err("was not run".into()),
            };
            result
                .err()
                .map(|why| format!("probe {i} ({}): {why}", probe.tool))
        })
        .collect();
    if failed.is_empty() {
        ComponentScore {
            score: 1.0,
            detail: format!("all {} probes as expected", probes.len()),
        }
    } else {
        ComponentScore {
            score: 0.0,
            detail: failed.join("; "),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn ok(text: &str) -> ProbeOutput {
        ProbeOutput {
            content: text.into(),
            structured: None,
            is_error: false,
        }
    }

    fn probe(v: Value) -> Probe {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn expect_is_a_subset_match_on_objects_and_arrays_in_any_order() {
        let graph = json!({"entities": [
            {"name": "Bob", "entityType": "person", "observations": ["x"]},
            {"name": "Alice", "entityType": "person", "observations": ["likes tea", "in Oslo"]}
        ], "relations": []});
        assert!(contains(
            &graph,
            &json!({"entities": [{"name": "Alice", "observations": ["in Oslo"]}]})
        ));
        assert!(!contains(
            &graph,
            &json!({"entities": [{"name": "Alice", "observations": ["in Rome"]}]})
        ));
        assert!(!contains(&graph, &json!({"people": []})));
        assert!(contains(&json!({"n": 3.0}), &json!({"n": 3})));
        assert!(!contains(&json!("3"), &json!(3)));
    }

    #[test]
    fn a_probe_passes_only_when_every_expectation_holds() {
        let p = probe(json!({"tool": "read_graph", "expect": {"a": 1}, "expect_regex": "^\\{"}));
        assert!(p.check(&ok(r#"{"a": 1, "b": 2}"#)).is_ok());
        let why = p.check(&ok(r#"{"a": 2}"#)).unwrap_err();
        assert!(why.contains("does not contain"), "{why}");
        let why = p.check(&ok("a: 1")).unwrap_err();
        assert!(why.contains("does not match"), "{why}");
        let failed = ProbeOutput {
            content: "Error: no such entity".into(),
            structured: None,
            is_error: true,
        };
        assert!(p.check(&failed).unwrap_err().contains("the call failed"));
    }

    #[test]
    fn the_regex_matches_the_text_and_expect_the_structured_content() {
        let out = ProbeOutput {
            content: "done".into(),
            structured: Some(json!({"content": "done", "said": "a \"quote\""})),
            is_error: false,
        };
        let p = probe(json!({"tool": "t", "expect_regex": "^done$",
                             "expect": {"said": "a \"quote\""}}));
        assert_eq!(p.check(&out), Ok(()));
        let p = probe(json!({"tool": "t", "expect_regex": "content"}));
        assert!(p.check(&out).unwrap_err().contains("does not match"));
    }

    #[test]
    fn the_score_is_all_or_nothing_and_names_the_failed_probe() {
        let probes = vec![
            probe(json!({"tool": "t", "expect_regex": "Stopped"})),
            probe(json!({"tool": "u", "expect_regex": "Alice"})),
        ];
        let s = score(&probes, &[ok("Stopped logging"), ok("Alice")]);
        assert_eq!(s.score, 1.0, "{}", s.detail);
        let s = score(&probes, &[ok("Stopped logging"), ok("Bob")]);
        assert_eq!(s.score, 0.0);
        assert!(s.detail.starts_with("probe 1 (u)"), "{}", s.detail);
        assert_eq!(score(&[], &[]).score, 0.0);
    }

    #[test]
    fn a_probe_without_expectation_or_with_a_bad_regex_is_a_problem() {
        assert!(probe(json!({"tool": "t"}))
            .problem()
            .unwrap()
            .contains("expects nothing"));
        assert!(probe(json!({"tool": "t", "expect_regex": "("}))
            .problem()
            .unwrap()
            .contains("does not compile"));
        assert!(probe(json!({"tool": "t", "arguments": [1], "expect": {}}))
            .problem()
            .unwrap()
            .contains("JSON object"));
        assert!(probe(json!({"tool": "t", "expect": {}}))
            .problem()
            .is_none());
    }

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            (-1000i64..1000).prop_map(|n| json!(n)),
            "[a-z]{0,4}".prop_map(Value::String),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::btree_map("[a-c]", inner, 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn every_value_contains_itself_and_the_empty_object_is_in_every_object(v in json_value()) {
            prop_assert!(contains(&v, &v));
            let empty = json!({});
            if v.is_object() {
                prop_assert!(contains(&v, &empty));
            }
        }

        #[test]
        fn checking_any_output_text_never_panics(text in ".{0,200}") {
            let p = probe(json!({"tool": "t", "expect": {"a": [1]}, "expect_regex": "a"}));
            let _ = p.check(&ok(&text));
        }
    }
}
