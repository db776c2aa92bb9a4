//! Why a conversation did not earn its reward, in the terms of its reward
//! components: the gold actions beside the actions taken with the first
//! difference marked, the state difference when `db` failed, and the facts
//! not said when `communicate` failed.

use serde::Serialize;
use serde_json::Value;

use crate::store::MessageRow;
use crate::verify::Criteria;

use super::display;
use super::transcript::calls_of;

#[derive(Debug, Clone, Serialize, Default)]
pub struct Why {
    pub components: Vec<ComponentView>,
    /// `None` without gold actions to compare with.
    pub actions: Option<Actions>,
    /// The stored `db` detail, one difference a line, when `db` failed.
    pub state_differences: Vec<String>,
    /// Every required fact and whether it was said, when `communicate` failed.
    pub facts: Vec<Fact>,
    /// Why there is no reward although verification ran.
    pub unscored: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ComponentView {
    pub name: String,
    pub score: String,
    pub failed: bool,
    pub detail: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Actions {
    pub rows: Vec<ActionRow>,
    /// 1-based row of the first difference, if any.
    pub first_difference: Option<usize>,
    /// Calls left out of the comparison: tools no gold action uses (reads).
    pub not_compared: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ActionRow {
    pub n: usize,
    pub gold: Option<String>,
    pub taken: Option<String>,
    pub same: bool,
    pub first_difference: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct Fact {
    pub fact: String,
    pub said: bool,
}

/// Detail prefixes written by the verifiers (`verify::communicate`, the
/// retail `db` score).
const STATE_DIFFERS: &str = "state differs from gold: ";
const NOT_SAID: &str = "not said: ";

pub fn explain(breakdown: &Value, messages: &[MessageRow], criteria: Option<&Criteria>) -> Why {
    let mut why = Why::default();
    // An imported conversation has its source's reward and no breakdown,
    // and may still have gold actions to compare with.
    let empty = serde_json::Map::new();
    let parts = breakdown.as_object().unwrap_or(&empty);
    for (name, part) in parts {
        if name == "unscored" {
            why.unscored = part.as_str().map(str::to_string);
            continue;
        }
        let score = part.get("score").and_then(Value::as_f64);
        let detail = part
            .get("detail")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let failed = score.is_some_and(|s| s < super::plots::SUCCESS_REWARD);
        if failed && name == "db" {
            why.state_differences = detail
                .strip_prefix(STATE_DIFFERS)
                .unwrap_or(&detail)
                .split("; ")
                .map(str::to_string)
                .collect();
        }
        if failed && name == "communicate" {
            let missing: Vec<&str> = detail
                .strip_prefix(NOT_SAID)
                .unwrap_or_default()
                .split("; ")
                .collect();
            why.facts = match criteria {
                Some(c) if !c.communicate.is_empty() => c
                    .communicate
                    .iter()
                    .map(|fact| Fact {
                        said: !missing.contains(&fact.as_str()),
                        fact: fact.clone(),
                    })
                    .collect(),
                _ => missing
                    .iter()
                    .filter(|f| !f.is_empty())
                    .map(|f| Fact {
                        fact: f.to_string(),
                        said: false,
                    })
                    .collect(),
            };
        }
        why.components.push(ComponentView {
            name: name.clone(),
            score: score.map_or_else(|| "–".into(), display::score),
            failed,
            detail,
        });
    }
    if let Some(c) = criteria.filter(|c| !c.actions.is_empty() || parts.contains_key("db")) {
        why.actions = Some(compare_actions(c, messages));
    }
    why
}

/// `name {"arg":1}`, keys sorted: the same text for the same call.
fn action_text(name: &str, arguments: &Value) -> String {
    match arguments {
        Value::Null => format!("{name} {{}}"),
        other => format!("{name} {other}"),
    }
}

fn parsed(arguments: &str) -> Value {
    serde_json::from_str(arguments).unwrap_or_else(|_| Value::String(arguments.to_string()))
}

/// The gold actions beside the calls the policy made to the same tools, in
/// order. Reads the gold list does not use are not compared (they change
/// nothing), but listed.
fn compare_actions(criteria: &Criteria, messages: &[MessageRow]) -> Actions {
    let gold: Vec<String> = criteria
        .actions
        .iter()
        .map(|a| {
            let args = match &a.arguments {
                Value::Null => Value::Object(Default::default()),
                other => other.clone(),
            };
            action_text(&a.name, &args)
        })
        .collect();
    let gold_tools: Vec<&str> = criteria.actions.iter().map(|a| a.name.as_str()).collect();
    let mut taken = Vec::new();
    let mut not_compared = Vec::new();
    for m in messages.iter().filter(|m| m.role == "assistant") {
        for (_, name, arguments) in calls_of(m) {
            let text = action_text(&name, &parsed(&arguments));
            if gold_tools.is_empty() || gold_tools.contains(&name.as_str()) {
                taken.push(text);
            } else {
                not_compared.push(text);
            }
        }
    }
    let mut first_difference = None;
    let rows = (0..gold.len().max(taken.len()))
        .map(|i| {
            let (g, t) = (gold.get(i).cloned(), taken.get(i).cloned());
            let same = g == t;
            let first = !same && first_difference.is_none();
            if first {
                first_difference = Some(i + 1);
            }
            ActionRow {
                n: i + 1,
                gold: g,
                taken: t,
                same,
                first_difference: first,
            }
        })
        .collect();
    Actions {
        rows,
        first_difference,
        not_compared,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::Action;

    fn assistant_calling(calls: &[(&str, &str)]) -> MessageRow {
        MessageRow {
            idx: 1,
            role: "assistant".into(),
            content: String::new(),
            tool_calls: Some(Value::Array(
                calls
                    .iter()
                    .enumerate()
                    .map(|(i, (name, args))| {
                        serde_json::json!({"id": format!("c{i}"), "name": name, "arguments": args})
                    })
                    .collect(),
            )),
            tool_call_id: None,
            author: "policy".into(),
            prompt_tokens: None,
            completion_tokens: None,
            latency_ms: None,
        }
    }

    #[test]
    fn the_first_action_that_differs_from_gold_is_marked_and_reads_are_set_aside() {
        let criteria = Criteria {
            actions: vec![
                Action {
                    name: "cancel".into(),
                    arguments: serde_json::json!({"order": "#1", "reason": "no longer needed"}),
                    caller: Default::default(),
                },
                Action {
                    name: "refund".into(),
                    arguments: Value::Null,
                    caller: Default::default(),
                },
            ],
            communicate: vec!["10.00".into(), "Visa".into()],
            ..Criteria::default()
        };
        let messages = [assistant_calling(&[
            ("get_order", "{\"order\":\"#1\"}"),
            (
                "cancel",
                "{\"reason\":\"no longer needed\",\"order\":\"#1\"}",
            ),
            ("refund", "{\"amount\":5}"),
        ])];
        let breakdown = serde_json::json!({
            "db": {"score": 0.0, "detail": "state differs from gold: orders.#1.status: pending vs cancelled; users.u1.balance: 0 vs 10"},
            "communicate": {"score": 0.0, "detail": "not said: Visa"},
        });
        let why = explain(&breakdown, &messages, Some(&criteria));
        let actions = why.actions.unwrap();
        assert_eq!(actions.first_difference, Some(2));
        assert!(actions.rows[0].same, "{:?}", actions.rows);
        assert_eq!(actions.rows[1].gold.as_deref(), Some("refund {}"));
        assert_eq!(
            actions.rows[1].taken.as_deref(),
            Some("refund {\"amount\":5}")
        );
        assert_eq!(actions.not_compared, ["get_order {\"order\":\"#1\"}"]);
        assert_eq!(
            why.state_differences,
            [
                "orders.#1.status: pending vs cancelled",
                "users.u1.balance: 0 vs 10"
            ]
        );
        let facts: Vec<(&str, bool)> = why
            .facts
            .iter()
            .map(|f| (f.fact.as_str(), f.said))
            .collect();
        assert_eq!(facts, [("10.00", true), ("Visa", false)]);
        assert!(why.components.iter().all(|c| c.failed));
    }
}
