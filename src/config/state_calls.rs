//! Tool calls an environment's config makes on a session outside any
//! conversation: `state_probes` read its state (what synthesis compares
//! before and after a scenario's gold actions, and the records a generator
//! is shown); `seed_calls` (MCP) put every fresh session into the same
//! starting state. Written `[{ tool = "read_graph", arguments = { … } }]`.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::ranges;
use crate::diagnostics::problem::Problem;

/// One call: a tool and its arguments (a JSON object, `{}` when left out).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StateCall {
    pub tool: String,
    #[serde(default = "empty_object")]
    pub arguments: Value,
}

fn empty_object() -> Value {
    Value::Object(serde_json::Map::new())
}

impl StateCall {
    /// The key of its output in a state: the tool's name, with the
    /// arguments when there are some (two probes of one tool stay apart).
    pub fn key(&self) -> String {
        match &self.arguments {
            Value::Object(map) if map.is_empty() => self.tool.clone(),
            args => format!("{} {args}", self.tool),
        }
    }
}

/// What is wrong with `calls`, read at `field` (`environment.state_probes`):
/// too many, a tool without a name, arguments that are not an object, or
/// two probes that read the same thing.
pub fn problems(path: &Path, field: &str, calls: &[StateCall]) -> Vec<Problem> {
    let mut out: Vec<Problem> = ranges::STATE_CALLS
        .problem(path, field, calls.len() as u64)
        .into_iter()
        .collect();
    for (i, call) in calls.iter().enumerate() {
        let at = format!("{field}[{i}]");
        if call.tool.trim().is_empty() {
            out.push(Problem::at_field(
                path,
                &format!("{at}.tool"),
                "is empty; name one of the server's tools, e.g. tool = \"read_graph\"",
            ));
        }
        if !call.arguments.is_object() {
            out.push(Problem::at_field(
                path,
                &format!("{at}.arguments"),
                format!(
                    "is {}; give a table (a JSON object), e.g. arguments = {{ query = \"Alice\" }}",
                    call.arguments
                ),
            ));
        }
        if calls[..i].iter().any(|c| c.key() == call.key()) {
            out.push(Problem::at_field(
                path,
                &at,
                format!(
                    "repeats an earlier call ({}); each reads a different part of the state",
                    call.key()
                ),
            ));
        }
    }
    out
}

/// Where a listed tool is missing: each call's tool must be one the server
/// lists (`listed`), whether or not the policy is offered it.
pub fn unlisted<'a>(calls: &'a [StateCall], listed: &[&str]) -> Vec<&'a str> {
    calls
        .iter()
        .map(|c| c.tool.as_str())
        .filter(|t| !listed.contains(t))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(v: Value) -> StateCall {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn arguments_default_to_an_empty_object_and_name_the_key_only_when_given() {
        let c = call(json!({"tool": "read_graph"}));
        assert_eq!(c.arguments, json!({}));
        assert_eq!(c.key(), "read_graph");
        let c = call(json!({"tool": "search_nodes", "arguments": {"query": "a"}}));
        assert_eq!(c.key(), "search_nodes {\"query\":\"a\"}");
    }

    #[test]
    fn an_unknown_key_is_refused() {
        let e = serde_json::from_value::<StateCall>(json!({"tool": "t", "expect": 1}));
        assert!(e.unwrap_err().to_string().contains("expect"));
    }

    #[test]
    fn an_empty_tool_arguments_not_an_object_and_a_repeat_are_problems_at_their_index() {
        let calls = vec![
            call(json!({"tool": "read_graph"})),
            call(json!({"tool": ""})),
            call(json!({"tool": "x", "arguments": [1]})),
            call(json!({"tool": "read_graph", "arguments": {}})),
        ];
        let p = problems(Path::new("s.toml"), "environment.state_probes", &calls);
        let at: Vec<&str> = p.iter().filter_map(|p| p.location.as_deref()).collect();
        assert_eq!(
            at,
            [
                "environment.state_probes[1].tool",
                "environment.state_probes[2].arguments",
                "environment.state_probes[3]"
            ]
        );
        let many = vec![call(json!({"tool": "t"})); 33];
        let p = problems(Path::new("s.toml"), "environment.seed_calls", &many);
        assert!(p[0].message.contains("out of range"), "{p:?}");
    }

    #[test]
    fn unlisted_names_the_tools_the_server_does_not_list() {
        let calls = vec![
            call(json!({"tool": "read_graph"})),
            call(json!({"tool": "nope"})),
        ];
        assert_eq!(unlisted(&calls, &["read_graph", "search_nodes"]), ["nope"]);
    }

    const NEMO_GYM: &str = r#"
name = "s"
target = 5
output = "out.jsonl"
[endpoints.generator]
mock = true
model = "mock-synth"
[roles]
generator = "generator"
[environment]
kind = "nemo_gym"
base_url = "http://127.0.0.1:18471"
state_probes = [{ tool = "get_counter_value" }]
records_row = { initial_count = 3 }
"#;

    fn synth(text: &str) -> Result<crate::config::synth::SynthConfig, Vec<Problem>> {
        crate::config::synth::from_toml(
            Path::new("SYNTH.toml"),
            text,
            Path::new("/tmp"),
            crate::config::Trust::Local,
        )
    }

    #[test]
    fn a_nemo_gym_environment_reads_its_state_probes_and_the_row_that_seeds_its_records() {
        let c = synth(NEMO_GYM).unwrap();
        let crate::config::EnvironmentConfig::NemoGym(n) = &c.environment else {
            panic!("{:?}", c.environment);
        };
        assert_eq!(n.state_probes[0].tool, "get_counter_value");
        assert_eq!(n.records_row, Some(json!({"initial_count": 3})));

        let p = synth(&NEMO_GYM.replace("state_probes = [{ tool = \"get_counter_value\" }]\n", ""))
            .unwrap_err();
        assert_eq!(p[0].location.as_deref(), Some("environment.records_row"));
        assert!(p[0].message.contains("add state_probes"), "{p:?}");
        let p = synth(&NEMO_GYM.replace("{ initial_count = 3 }", "3")).unwrap_err();
        assert!(p[0].message.contains("is not a table"), "{p:?}");
        let p =
            synth(&NEMO_GYM.replace("tool = \"get_counter_value\"", "tool = \"x\", expect = 1"))
                .unwrap_err();
        assert!(p[0].to_string().contains("expect"), "{p:?}");
    }
}
