//! The variables each template sees, built from the crate's own types.

use std::collections::BTreeMap;

use serde::Serialize;
use tera::Context;

use crate::persona::{Persona, ResolvedPersona, UserScenario};

/// The simulated user writes this (alone, or at the end of its last message) when
/// its goal is actually done.
pub const STOP_TOKEN: &str = "###STOP###";
/// The simulated user writes this when it has been transferred to a human.
pub const TRANSFER_TOKEN: &str = "###TRANSFER###";
/// The simulated user writes this when its scenario gives it no way to continue.
pub const OUT_OF_SCOPE_TOKEN: &str = "###OUT-OF-SCOPE###";

/// What the user-simulator template sees of a persona: who they are and the knob
/// values drawn for this item, not the knobs' weights.
#[derive(Serialize)]
struct PersonaView<'a> {
    id: &'a str,
    name: &'a str,
    background: &'a str,
    traits: &'a [String],
    speaking_style: &'a str,
    language: &'a str,
    resolved_knobs: &'a BTreeMap<String, String>,
}

/// Variables of the `user_simulator` template: `persona` (id, name, background,
/// traits, speaking_style, language, resolved_knobs), `scenario` (reason_for_contact,
/// known_info, unknown_info, task_instructions), `stop_token`, `transfer_token`,
/// `out_of_scope_token`, `user_tools` (empty; see [`with_user_tools`]).
pub fn user_simulator_context(persona: &ResolvedPersona, scenario: &UserScenario) -> Context {
    let p = &persona.persona;
    let view = PersonaView {
        id: &p.id,
        name: &p.name,
        background: &p.background,
        traits: &p.traits,
        speaking_style: &p.speaking_style,
        language: &p.language,
        resolved_knobs: &persona.resolved_knobs,
    };
    // `Context::insert` cannot fail here: both values are plain strings, lists and
    // string maps, which always serialize to JSON.
    let mut ctx = Context::new();
    ctx.insert("persona", &view);
    ctx.insert("scenario", scenario);
    ctx.insert("stop_token", STOP_TOKEN);
    ctx.insert("transfer_token", TRANSFER_TOKEN);
    ctx.insert("out_of_scope_token", OUT_OF_SCOPE_TOKEN);
    ctx.insert("user_tools", &Vec::<UserToolView>::new());
    ctx
}

/// What the user-simulator template sees of a tool the user may call.
#[derive(Serialize)]
struct UserToolView<'a> {
    name: &'a str,
    description: &'a str,
}

/// Give the `user_simulator` context the user's tools (dual control):
/// `user_tools`, a list of `{name, description}` (empty without them).
pub fn with_user_tools(ctx: &mut Context, tools: &[crate::llm::message::ToolSpec]) {
    let view: Vec<UserToolView<'_>> = tools
        .iter()
        .map(|t| UserToolView {
            name: &t.name,
            description: &t.description,
        })
        .collect();
    ctx.insert("user_tools", &view);
}

/// Variables of the `policy` template: `domain_policy` (the full text),
/// `environment` (e.g. `builtin:retail`) and `parallel_tool_calls` (whether
/// the policy may make several tool calls in one step).
pub fn policy_context(
    domain_policy: &str,
    environment: &str,
    parallel_tool_calls: bool,
) -> Context {
    let mut ctx = Context::new();
    ctx.insert("domain_policy", domain_policy);
    ctx.insert("environment", environment);
    ctx.insert("parallel_tool_calls", &parallel_tool_calls);
    ctx
}

/// A persona with every field and knob filled, for checking templates.
pub(crate) fn sample_persona() -> ResolvedPersona {
    let knobs = [
        ("verbosity", "terse"),
        ("patience", "low"),
        ("typos", "occasional"),
    ];
    ResolvedPersona {
        persona: Persona {
            id: "sample_persona".into(),
            name: "Sam Sample".into(),
            background: "A 40-year-old office manager who shops online now and then.".into(),
            traits: vec!["practical".into(), "direct".into()],
            speaking_style: "Plain, short sentences.".into(),
            language: "English".into(),
            knobs: knobs
                .iter()
                .map(|(k, v)| (k.to_string(), BTreeMap::from([(v.to_string(), 1.0)])))
                .collect(),
            attributes: Default::default(),
        },
        resolved_knobs: knobs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    }
}

/// A scenario with every field filled, for checking templates.
pub(crate) fn sample_scenario() -> UserScenario {
    UserScenario {
        reason_for_contact: "The desk lamp you ordered arrived with a cracked base.".into(),
        known_info: "Your email is sam@example.com and the order id is #W1000001.".into(),
        unknown_info: "You do not know the lamp's item id.".into(),
        task_instructions: "Ask for an exchange for the same lamp; accept a refund only \
                            if no exchange is possible."
            .into(),
        turns: Vec::new(),
        opening: None,
    }
}

/// The sample policy variables, for checking templates.
pub(crate) fn sample_policy_context() -> Context {
    policy_context(
        "# Sample policy\nAuthenticate the customer by email before any change.",
        "builtin:sample",
        true,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_user_simulator_sees_drawn_knob_values_but_not_their_weights() {
        let ctx = user_simulator_context(&sample_persona(), &sample_scenario());
        let persona = ctx.get("persona").unwrap();
        assert_eq!(persona["resolved_knobs"]["verbosity"], "terse");
        assert_eq!(persona["name"], "Sam Sample");
        assert!(persona.get("knobs").is_none());
        assert_eq!(ctx.get("stop_token").unwrap(), "###STOP###");
        assert_eq!(ctx.get("transfer_token").unwrap(), "###TRANSFER###");
        assert_eq!(ctx.get("out_of_scope_token").unwrap(), "###OUT-OF-SCOPE###");
        assert_eq!(
            ctx.get("scenario").unwrap()["unknown_info"],
            "You do not know the lamp's item id."
        );
    }
}
