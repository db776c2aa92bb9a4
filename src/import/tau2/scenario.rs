//! A tau2-bench task's `user_scenario` as the scenario its simulated user
//! played: `instructions` is either structured (`reason_for_call`,
//! `known_info`, `unknown_info`, `task_instructions`, `domain`) or one
//! text, which becomes the task instructions; `persona` is text or null.
//! NeMo Gym's `tau2` agent rows carry the same task.

use serde_json::{Map, Value};

use crate::persona::UserScenario;

/// The scenario (`None` when the task has no instructions) and the persona.
pub(crate) fn user_scenario(
    value: Option<&Value>,
) -> Result<(Option<UserScenario>, Option<String>), String> {
    let scenario = match value {
        None | Some(Value::Null) => return Ok((None, None)),
        Some(Value::Object(s)) => s,
        Some(_) => return Err("`user_scenario` is not an object".into()),
    };
    let persona = match scenario.get("persona") {
        None | Some(Value::Null) => None,
        Some(Value::String(p)) => Some(p.clone()),
        Some(_) => return Err("`user_scenario.persona` is not text".into()),
    };
    let instructions = match scenario.get("instructions") {
        None | Some(Value::Null) => None,
        Some(Value::String(text)) => Some(UserScenario {
            reason_for_contact: String::new(),
            known_info: String::new(),
            unknown_info: String::new(),
            task_instructions: text.clone(),
            opening: None,
            turns: Vec::new(),
        }),
        Some(Value::Object(fields)) => Some(UserScenario {
            reason_for_contact: field(fields, "reason_for_call")?,
            known_info: field(fields, "known_info")?,
            unknown_info: field(fields, "unknown_info")?,
            task_instructions: field(fields, "task_instructions")?,
            opening: None,
            turns: Vec::new(),
        }),
        Some(_) => return Err("`user_scenario.instructions` is neither an object nor text".into()),
    };
    Ok((instructions, persona))
}

/// A text field of the instructions; null or absent is empty.
pub(crate) fn field(fields: &Map<String, Value>, name: &str) -> Result<String, String> {
    match fields.get(name) {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(_) => Err(format!("`{name}` of the user's instructions is not text")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn structured_instructions_map_field_by_field_and_text_is_the_task_instructions() {
        let structured = json!({"persona": "terse", "instructions": {
            "domain": "airline", "reason_for_call": "cancel", "known_info": "id 7",
            "unknown_info": null, "task_instructions": "insist"}});
        let (s, persona) = user_scenario(Some(&structured)).unwrap();
        let s = s.unwrap();
        assert_eq!(s.reason_for_contact, "cancel");
        assert_eq!(s.known_info, "id 7");
        assert_eq!(s.unknown_info, "");
        assert_eq!(s.task_instructions, "insist");
        assert_eq!(persona.as_deref(), Some("terse"));
        let text = json!({"persona": null, "instructions": "Create a task."});
        let (s, persona) = user_scenario(Some(&text)).unwrap();
        assert_eq!(s.unwrap().task_instructions, "Create a task.");
        assert_eq!(persona, None);
        assert_eq!(user_scenario(None).unwrap(), (None, None));
    }

    #[test]
    fn instructions_of_another_shape_say_which_field_is_wrong() {
        let why = |v: Value| user_scenario(Some(&v)).unwrap_err();
        assert!(why(json!({"instructions": 3})).contains("neither an object nor text"));
        assert!(why(json!({"instructions": {"known_info": 1}})).contains("`known_info`"));
        assert!(why(json!({"persona": []})).contains("persona"));
        assert!(why(json!([])).contains("not an object"));
    }
}
