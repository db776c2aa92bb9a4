//! The metadata sidecar of sparring's `openai` export (`NAME.metadata.jsonl`,
//! one row per line of `NAME.jsonl`, in the same order): the scenario,
//! persona, sample, reward and judges' scores of each conversation, which
//! an `openai` line itself cannot hold.

use serde_json::Value;

use super::conversation::object;
use super::{ImportedConversation, LineProblem};

/// Adds line `line`'s sidecar row (`None` when the sidecar ended early) to
/// `conversation`: its reward and origin, and every field as metadata.
pub(super) fn merge(
    conversation: &mut ImportedConversation,
    line: usize,
    side: Option<(usize, &str)>,
) -> Result<(), LineProblem> {
    let Some((side_line, text)) = side else {
        return Err(LineProblem::new(
            line,
            "the metadata sidecar (NAME.metadata.jsonl) has fewer rows than this file has \
             lines; it must have one per line, in the same order",
        ));
    };
    let row = object(side_line, text).map_err(|p| {
        LineProblem::new(line, format!("its row in the metadata sidecar: {}", p.why))
    })?;
    let text_of = |key: &str| row.get(key).and_then(Value::as_str).map(str::to_string);
    if let Some(scenario) = text_of("scenario") {
        conversation.origin.scenario_id = Some(scenario);
    }
    if let Some(persona) = text_of("persona") {
        conversation.origin.persona_id = Some(persona);
    }
    if let Some(sample) = row.get("sample").and_then(Value::as_i64) {
        conversation.origin.trial = Some(sample);
    }
    match row.get("reward") {
        None | Some(Value::Null) => {}
        Some(reward) => match reward.as_f64() {
            Some(reward) if reward.is_finite() => conversation.reward = Some(reward),
            _ => {
                return Err(LineProblem::new(
                    line,
                    format!("its row in the metadata sidecar: `reward` is {reward}, not a number"),
                ))
            }
        },
    }
    for (key, value) in row {
        conversation.metadata.entry(key).or_insert(value);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::Format;

    fn conversation() -> ImportedConversation {
        Format::Openai
            .read_line(r#"{"messages": [{"role": "user", "content": "hi"}]}"#, 1)
            .unwrap()
    }

    #[test]
    fn a_sidecar_row_gives_origin_reward_and_metadata() {
        let mut c = conversation();
        let row = r#"{"scenario": "s1", "persona": "p", "sample": 2, "reward": 0.5,
                      "judges": {"helpful": 4}}"#;
        merge(&mut c, 1, Some((1, row))).unwrap();
        assert_eq!(c.origin.scenario_id.as_deref(), Some("s1"));
        assert_eq!(c.origin.persona_id.as_deref(), Some("p"));
        assert_eq!(c.origin.trial, Some(2));
        assert_eq!(c.reward, Some(0.5));
        assert_eq!(c.metadata["judges"]["helpful"], 4);
    }

    #[test]
    fn a_short_or_broken_sidecar_is_a_problem_of_the_line() {
        let mut c = conversation();
        let err = merge(&mut c, 7, None).unwrap_err();
        assert_eq!(err.line, 7);
        assert!(err.why.contains("fewer rows"), "{err}");
        let err = merge(&mut c, 3, Some((3, "{"))).unwrap_err();
        assert!(err.why.contains("metadata sidecar: invalid JSON"), "{err}");
        let err = merge(&mut c, 3, Some((3, r#"{"reward": "high"}"#))).unwrap_err();
        assert!(err.why.contains("not a number"), "{err}");
    }
}
