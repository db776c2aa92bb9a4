//! A model's answer to the mining prompt: one JSON object holding a scenario
//! and a persona, read into the project's own `Scenario` and `Persona` (the
//! scenario loader's and persona loader's checks). Anything else is a
//! rejection with its reason, never a crash.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::json;

use crate::persona::{Persona, Scenario};

/// The knobs a mined persona may set, each with the values the user
/// simulator's prompt knows (`mood` is any one word).
pub const KNOBS: &[(&str, &[&str])] = &[
    ("verbosity", &["terse", "normal", "chatty"]),
    ("patience", &["low", "medium", "high"]),
    ("typos", &["none", "occasional", "frequent"]),
    ("formality", &["casual", "neutral", "formal"]),
    ("tech_comfort", &["low", "medium", "high"]),
    ("mood", &[]),
];

#[derive(Debug, Deserialize)]
struct Answer {
    scenario: AnswerScenario,
    persona: AnswerPersona,
}

#[derive(Debug, Deserialize)]
struct AnswerScenario {
    #[serde(default)]
    description: String,
    #[serde(default)]
    reason_for_contact: String,
    #[serde(default)]
    known_info: String,
    #[serde(default)]
    unknown_info: String,
    #[serde(default)]
    task_instructions: String,
    #[serde(default)]
    communicate: Vec<String>,
}

#[derive(Debug, Deserialize)]
struct AnswerPersona {
    #[serde(default)]
    name: String,
    #[serde(default)]
    background: String,
    #[serde(default)]
    speaking_style: String,
    #[serde(default)]
    traits: Vec<String>,
    #[serde(default)]
    knobs: BTreeMap<String, String>,
}

/// A scenario and the persona of the same conversation.
#[derive(Debug, Clone, PartialEq)]
pub struct Mined {
    pub scenario: Scenario,
    pub persona: Persona,
}

/// The JSON object of `answer` (a fenced block or text around it allowed),
/// read as a scenario and persona with ids `id`. `Err`: why not.
pub fn read_answer(answer: &str, id: &str) -> Result<Mined, String> {
    let object = match (answer.find('{'), answer.rfind('}')) {
        (Some(start), Some(end)) if start < end => &answer[start..=end],
        _ => return Err("the answer holds no JSON object".into()),
    };
    let answer: Answer = serde_json::from_str(object)
        .map_err(|e| format!("the answer is not the scenario and persona JSON asked for: {e}"))?;
    let s = answer.scenario;
    let facts: Vec<String> = s
        .communicate
        .into_iter()
        .map(|f| f.trim().to_string())
        .filter(|f| !f.is_empty())
        .collect();
    let basis = match facts.is_empty() {
        true => json!("none"),
        false => json!(["communicate"]),
    };
    let scenario: Scenario = serde_json::from_value(json!({
        "id": id,
        "description": s.description.trim(),
        "tags": ["mined"],
        "user": {
            "reason_for_contact": s.reason_for_contact.trim(),
            "known_info": s.known_info.trim(),
            "unknown_info": s.unknown_info.trim(),
            "task_instructions": s.task_instructions.trim(),
        },
        "evaluation": {"actions": [], "communicate": facts, "reward_basis": basis},
    }))
    .map_err(|e| format!("the scenario does not read as a scenario row: {e}"))?;
    let p = answer.persona;
    let mut knobs = BTreeMap::new();
    for (knob, value) in p.knobs {
        let value = value.trim().to_lowercase();
        let Some((_, allowed)) = KNOBS.iter().find(|(k, _)| *k == knob) else {
            return Err(format!(
                "persona knob '{knob}' is not one a persona has; mined knobs are: {}",
                KNOBS.iter().map(|(k, _)| *k).collect::<Vec<_>>().join(", ")
            ));
        };
        let fits = match allowed.is_empty() {
            true => !value.is_empty() && value.chars().all(|c| c.is_alphabetic() || c == '-'),
            false => allowed.contains(&value.as_str()),
        };
        if !fits {
            return Err(format!(
                "persona knob '{knob}' = '{value}' is not one of its values ({})",
                match allowed.is_empty() {
                    true => "one word".to_string(),
                    false => allowed.join(", "),
                }
            ));
        }
        knobs.insert(knob, BTreeMap::from([(value, 1.0)]));
    }
    let persona = Persona {
        id: id.to_string(),
        name: p.name.trim().to_string(),
        background: p.background.trim().to_string(),
        traits: p.traits,
        speaking_style: p.speaking_style.trim().to_string(),
        language: "English".to_string(),
        knobs,
        attributes: BTreeMap::new(),
    };
    Ok(Mined { scenario, persona })
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"Here it is: {"scenario": {"description": "d", "reason_for_contact": "You want a refund.",
        "known_info": "Order #W0000001.", "unknown_info": "", "task_instructions": "Stop once refunded.",
        "communicate": ["$12.50"]}, "persona": {"name": "Ann", "background": "b", "speaking_style": "short",
        "knobs": {"verbosity": "terse", "mood": "Frustrated"}}}"#;

    #[test]
    fn an_answer_becomes_a_scored_scenario_and_a_persona_with_single_value_knobs() {
        let mined = read_answer(GOOD, "mined-1").unwrap();
        assert_eq!(mined.scenario.id, "mined-1");
        assert_eq!(mined.scenario.user.reason_for_contact, "You want a refund.");
        assert_eq!(mined.scenario.evaluation.communicate, vec!["$12.50"]);
        assert_eq!(
            mined.persona.knobs["mood"],
            BTreeMap::from([("frustrated".to_string(), 1.0)])
        );
    }

    #[test]
    fn text_that_is_not_the_json_asked_for_is_a_reason_not_a_crash() {
        assert!(read_answer("I cannot help", "x")
            .unwrap_err()
            .contains("no JSON object"));
        assert!(read_answer("{\"scenario\": 1}", "x")
            .unwrap_err()
            .contains("not the scenario and persona JSON"));
        let bad_knob = GOOD.replace("\"terse\"", "\"very\"");
        assert!(read_answer(&bad_knob, "x")
            .unwrap_err()
            .contains("terse, normal, chatty"));
        let unknown = GOOD.replace("\"verbosity\"", "\"shoe_size\"");
        assert!(read_answer(&unknown, "x")
            .unwrap_err()
            .contains("not one a persona has"));
    }
}
