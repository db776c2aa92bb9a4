//! The generator's prompt: tools, policy, real records, examples, the brief,
//! and on a retry the previous proposal with the exact error.

use serde_json::Value;

use crate::config::synth::diversity::is_transfer_tool;
use crate::config::Problem;
use crate::env::ToolSpec;
use crate::persona::scenario::Scenario;
use crate::prompt::shipped::SYNTH_PROPOSE_TEMPLATE;
use crate::prompt::PromptRegistry;

use super::brief::ProposalBrief;
use super::stage::Rejection;

/// The template's name in the registry.
pub const PROPOSE: &str = "synth/propose";

/// The built-in proposal template (compiled in, so synthesis runs from any directory).
pub fn registry() -> Result<PromptRegistry, Vec<Problem>> {
    PromptRegistry::from_texts(vec![(
        PROPOSE.to_string(),
        SYNTH_PROPOSE_TEMPLATE.label(),
        SYNTH_PROPOSE_TEMPLATE.text.to_string(),
    )])
}

/// Everything one proposal's prompt shows.
pub struct ProposalInput<'a> {
    pub environment: &'a str,
    pub policy: &'a str,
    pub tools: &'a [ToolSpec],
    pub records: &'a Value,
    pub examples: &'a [Scenario],
    pub brief: &'a ProposalBrief,
    pub index: u64,
    /// The previous attempt's reply and why it was rejected.
    pub previous: Option<(&'a str, &'a Rejection)>,
}

pub fn context(input: &ProposalInput<'_>) -> tera::Context {
    let mut ctx = tera::Context::new();
    ctx.insert("environment", input.environment);
    ctx.insert("policy", input.policy);
    let tools: Vec<Value> = input
        .tools
        .iter()
        .map(|t| {
            serde_json::json!({"name": t.name, "description": t.description, "parameters": t.parameters})
        })
        .collect();
    ctx.insert("tools", &tools);
    ctx.insert("records", input.records);
    ctx.insert("examples", input.examples);
    ctx.insert("brief", input.brief);
    let transfer_tools: Vec<&str> = input
        .tools
        .iter()
        .map(|t| t.name.as_str())
        .filter(|name| is_transfer_tool(name))
        .collect();
    ctx.insert("brief_words", &input.brief.in_words(&transfer_tools));
    ctx.insert("index", &input.index);
    match input.previous {
        Some((reply, rejection)) => {
            ctx.insert("previous", reply);
            ctx.insert("feedback_stage", rejection.stage.as_str());
            ctx.insert("feedback", &rejection.reason);
        }
        None => ctx.insert("previous", ""),
    }
    ctx
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::Outcome;

    #[test]
    fn the_prompt_states_the_brief_in_words_with_the_environments_transfer_tool() {
        let tools = crate::env::builtin::retail::specs::tool_specs();
        let brief = ProposalBrief {
            outcome: Some(Outcome::Transfer),
            difficulty: Some("medium".into()),
            ..Default::default()
        };
        let input = ProposalInput {
            environment: "builtin:retail",
            policy: "p",
            tools: &tools,
            records: &Value::Null,
            examples: &[],
            brief: &brief,
            index: 3,
            previous: None,
        };
        let text = registry()
            .unwrap()
            .render(PROPOSE, &context(&input))
            .unwrap();
        assert!(
            text.contains("- The user asks for something the agent cannot handle")
                && text.contains("the last gold action is transfer_to_human_agents")
                && text.contains("- Make it a medium task"),
            "{text}"
        );
        assert!(
            text.contains(
                r#"<brief>
{"difficulty":"medium","multi_intent":false,"outcome":"transfer"}
</brief>"#
            ),
            "{text}"
        );
    }
}
