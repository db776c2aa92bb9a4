//! A `/verify` reply as a verification: `reward` is the reward, the reply's
//! other numeric and boolean fields (those it did not echo from the request)
//! are reported components, and `mask_sample = true` or a `failure_kind`
//! makes the conversation unscored with the reason kept, never a reward of 0.

use serde_json::{Map, Value};

use crate::verify::Verification;

/// Read a reply; `Err` says what is wrong with it.
pub fn verification(request: &Map<String, Value>, reply: &Value) -> Result<Verification, String> {
    let Some(reply) = reply.as_object() else {
        return Err(format!(
            "the reply is a JSON {} instead of an object with `reward`",
            if reply.is_array() { "array" } else { "value" }
        ));
    };
    let reward = match reply.get("reward") {
        Some(Value::Number(n)) => n.as_f64().filter(|r| r.is_finite()),
        _ => None,
    };
    let Some(reward) = reward else {
        return Err(format!(
            "the reply has no numeric `reward` (got {})",
            match reply.get("reward") {
                None => "nothing",
                Some(Value::Null) => "null",
                Some(Value::Bool(_)) => "a boolean",
                Some(Value::String(_)) => "a string",
                Some(Value::Array(_)) => "an array",
                Some(Value::Object(_)) => "an object",
                // Not finite: serde_json reads no such number, kept for completeness.
                Some(Value::Number(_)) => "a number that is not finite",
            }
        ));
    };
    let masked = reply.get("mask_sample").and_then(Value::as_bool) == Some(true);
    let kind = reply.get("failure_kind").and_then(Value::as_str);
    let reason = reply.get("failure_reason").and_then(Value::as_str);
    let unscored = (masked || kind.is_some()).then(|| {
        let mut why = String::from(if masked {
            "the verifier masked the sample (mask_sample = true)"
        } else {
            "the verifier reported a failure"
        });
        if let Some(kind) = kind {
            let kind: String = kind.chars().take(100).collect();
            why.push_str(&format!("; failure_kind: {kind}"));
        }
        if let Some(reason) = reason {
            // The protocol's own field, stored as the reason; bounded.
            let reason: String = reason.chars().take(300).collect();
            why.push_str(&format!("; failure_reason: {reason}"));
        }
        why
    });
    let reported = reply
        .iter()
        .filter(|(name, _)| {
            !matches!(name.as_str(), "reward" | "mask_sample") && !request.contains_key(*name)
        })
        .filter_map(|(name, value)| {
            let score = match value {
                Value::Number(n) => n.as_f64()?,
                Value::Bool(b) => f64::from(u8::from(*b)),
                _ => return None,
            };
            Some((name.clone(), score))
        })
        .collect();
    let mut record = request.clone();
    record.extend(reply.iter().map(|(k, v)| (k.clone(), v.clone())));
    Ok(Verification {
        reward,
        reported,
        unscored,
        record: Some(Value::Object(record)),
        ..Verification::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn request() -> Map<String, Value> {
        json!({"id": 4, "responses_create_params": {}, "response": {}})
            .as_object()
            .cloned()
            .unwrap()
    }

    #[test]
    fn reward_and_the_replys_own_numbers_are_kept_but_echoed_fields_are_not() {
        let reply = json!({"id": 4, "reward": 1.0, "accuracy": true, "set_overlap": 0.5,
                           "mask_sample": false, "failure_kind": null, "extracted_answer": "B"});
        let v = verification(&request(), &reply).unwrap();
        assert_eq!(v.stored_reward(), Some(1.0));
        assert_eq!(v.reported.get("accuracy"), Some(&1.0));
        assert_eq!(v.reported.get("set_overlap"), Some(&0.5));
        assert!(!v.reported.contains_key("id"), "echoed from the request");
        let record = v.record.unwrap();
        assert_eq!(record["extracted_answer"], "B");
        assert_eq!(record["id"], 4);
    }

    #[test]
    fn a_masked_sample_or_a_failure_kind_is_unscored_never_zero() {
        let masked = json!({"reward": 0.0, "mask_sample": true, "failure_kind": "judge_failed",
                            "failure_reason": "judge timed out"});
        let v = verification(&request(), &masked).unwrap();
        assert_eq!(v.stored_reward(), None);
        let why = v.unscored.unwrap();
        assert!(
            why.contains("judge_failed") && why.contains("judge timed out"),
            "{why}"
        );

        let kind_only = json!({"reward": 0.0, "failure_kind": "verifier_error"});
        assert_eq!(
            verification(&request(), &kind_only)
                .unwrap()
                .stored_reward(),
            None
        );
    }

    #[test]
    fn a_reply_without_a_numeric_reward_is_an_error() {
        let e = verification(&request(), &json!({"reward": "high"})).unwrap_err();
        assert!(e.contains("numeric `reward`"), "{e}");
        assert!(verification(&request(), &json!([1])).is_err());
    }
}
