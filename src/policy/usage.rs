//! Token usage an agent reports of its own model calls, read where protocols
//! and frameworks put it, so that an agent's conversations fill the usage
//! and cost tables as a model's do:
//! - OpenAI's `usage` (`prompt_tokens` / `completion_tokens`, or the
//!   Responses API's `input_tokens` / `output_tokens`);
//! - Google ADK's `usageMetadata` (`promptTokenCount` /
//!   `candidatesTokenCount`), on each event of `/run` and, over A2A, as
//!   `adk_usage_metadata` in an event's, message's or task's metadata;
//! - Bedrock's and Strands' `inputTokens` / `outputTokens`;
//! - LangChain's `usage_metadata` (`input_tokens` / `output_tokens`).
//!
//! Counts may be written as floats (ADK's A2A metadata goes through protobuf
//! `Struct`s: `124.0`); a negative or absurd count is no count.

use serde_json::Value;

use crate::llm::Usage;

/// The keys a metadata object or an answer holds usage under.
pub const USAGE_KEYS: [&str; 6] = [
    "usage",
    "usageMetadata",
    "usage_metadata",
    "adk_usage_metadata",
    "token_usage",
    "tokenUsage",
];

/// The (prompt, completion) key pairs a usage object is read by.
const COUNTS: [(&str, &str); 4] = [
    ("prompt_tokens", "completion_tokens"),
    ("input_tokens", "output_tokens"),
    ("promptTokenCount", "candidatesTokenCount"),
    ("inputTokens", "outputTokens"),
];

/// A count above this is not a token count of one turn.
const MAX_TOKENS: f64 = 1e12;

/// The tokens of one usage object, in any of the shapes above; `None` when
/// it has no count of either side.
pub fn of_object(usage: &Value) -> Option<Usage> {
    let count = |key: &str| -> Option<u64> {
        let n = usage.get(key)?.as_f64()?;
        (n.is_finite() && (0.0..MAX_TOKENS).contains(&n)).then_some(n.round() as u64)
    };
    COUNTS.iter().find_map(|(prompt, completion)| {
        let (p, c) = (count(prompt), count(completion));
        (p.is_some() || c.is_some()).then(|| Usage {
            prompt_tokens: p.unwrap_or(0),
            completion_tokens: c.unwrap_or(0),
        })
    })
}

/// The usage an object (an answer, an event, a metadata object) holds under
/// one of [`USAGE_KEYS`].
pub fn held_by(object: &Value) -> Option<Usage> {
    USAGE_KEYS
        .iter()
        .filter_map(|key| object.get(*key))
        .find_map(of_object)
}

/// The sum of two usages.
pub fn add(a: Usage, b: Usage) -> Usage {
    Usage {
        prompt_tokens: a.prompt_tokens.saturating_add(b.prompt_tokens),
        completion_tokens: a.completion_tokens.saturating_add(b.completion_tokens),
    }
}

/// What an agent's whole answer reports: its own `usage` (an OpenAI or
/// Responses object), else, for a list (ADK's `/run` events), the sum of
/// what its items hold; `None` when nothing says.
pub fn of_answer(answer: &Value) -> Option<Usage> {
    if let Some(usage) = held_by(answer) {
        return Some(usage);
    }
    let items = answer.as_array()?;
    items.iter().filter_map(held_by).reduce(add)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn usage(p: u64, c: u64) -> Usage {
        Usage {
            prompt_tokens: p,
            completion_tokens: c,
        }
    }

    #[test]
    fn each_shape_gives_its_prompt_and_completion_tokens() {
        assert_eq!(
            held_by(&json!({"usage": {"prompt_tokens": 5, "completion_tokens": 2}})),
            Some(usage(5, 2))
        );
        assert_eq!(
            held_by(&json!({"usage": {"input_tokens": 84, "output_tokens": 29}})),
            Some(usage(84, 29))
        );
        assert_eq!(
            held_by(&json!({"adk_usage_metadata": {"totalTokenCount": 245.0,
                "promptTokenCount": 228.0, "candidatesTokenCount": 17.0}})),
            Some(usage(228, 17))
        );
        assert_eq!(
            held_by(
                &json!({"usage": {"inputTokens": 305, "outputTokens": 27, "totalTokens": 332}})
            ),
            Some(usage(305, 27))
        );
        assert_eq!(held_by(&json!({"usage": {"total": 3}})), None);
        assert_eq!(held_by(&json!({"usage": {"prompt_tokens": -4}})), None);
        assert_eq!(held_by(&json!({"usage": {"prompt_tokens": "7"}})), None);
    }

    #[test]
    fn adks_run_answer_sums_its_events() {
        let events = json!([
            {"usageMetadata": {"candidatesTokenCount": 10, "promptTokenCount": 167}},
            {"content": {}},
            {"usageMetadata": {"candidatesTokenCount": 17, "promptTokenCount": 228}}
        ]);
        assert_eq!(of_answer(&events), Some(usage(395, 27)));
        assert_eq!(of_answer(&json!([{"a": 1}])), None);
        assert_eq!(
            of_answer(&json!({"usage": {"input_tokens": 1, "output_tokens": 2}, "output": []})),
            Some(usage(1, 2))
        );
    }

    proptest! {
        #[test]
        fn any_counts_read_without_panicking(p in any::<f64>(), c in any::<i64>()) {
            let got = of_object(&json!({"prompt_tokens": p, "completion_tokens": c}));
            if let Some(u) = got {
                prop_assert!((u.prompt_tokens as f64) < MAX_TOKENS + 1.0);
                prop_assert!((u.completion_tokens as f64) < MAX_TOKENS + 1.0);
            }
        }
    }
}
