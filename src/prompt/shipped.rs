//! The templates built into the binary: what a job, a judge, the tool
//! simulator and synthesis render when their config names no file of its own.
//! Built in, so a config in any folder runs from any working directory; a
//! template file named in a config still takes their place.

use std::path::PathBuf;

/// A template compiled into the binary from the repository's `prompts/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShippedTemplate {
    /// Its path in the repository: the file to copy to write one's own.
    pub path: &'static str,
    pub text: &'static str,
}

impl ShippedTemplate {
    /// How problems and render errors name it, so that no one looks for it
    /// in their working directory: `prompts/user_simulator.tera (built in)`.
    pub fn label(self) -> PathBuf {
        PathBuf::from(format!("{} (built in)", self.path))
    }
}

macro_rules! shipped {
    ($path:literal) => {
        ShippedTemplate {
            path: $path,
            text: include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/", $path)),
        }
    };
}

/// The simulated user's system prompt.
pub const USER_SIMULATOR_TEMPLATE: ShippedTemplate = shipped!("prompts/user_simulator.tera");
/// The policy's system prompt.
pub const POLICY_TEMPLATE: ShippedTemplate = shipped!("prompts/policies/default.tera");
/// The prompt of the model that plays a `simulated` environment's tools.
pub const TOOL_SIMULATOR_TEMPLATE: ShippedTemplate = shipped!("prompts/tool_simulator.tera");
/// The scenario generator's prompt (synthesis).
pub const SYNTH_PROPOSE_TEMPLATE: ShippedTemplate = shipped!("prompts/synth/propose.tera");
pub const MINE_SCENARIO_TEMPLATE: ShippedTemplate = shipped!("prompts/mine/scenario.tera");

/// The built-in judges' templates (the review committee's `blueprint_review` among them).
pub const JUDGE_HELPFULNESS: ShippedTemplate = shipped!("prompts/judges/helpfulness.tera");
pub const JUDGE_PAIRWISE_PREFERENCE: ShippedTemplate =
    shipped!("prompts/judges/pairwise_preference.tera");
pub const JUDGE_EQUIVALENCE: ShippedTemplate = shipped!("prompts/judges/equivalence.tera");
pub const JUDGE_POLICY_ADHERENCE: ShippedTemplate =
    shipped!("prompts/judges/policy_adherence.tera");
pub const JUDGE_USER_FIDELITY: ShippedTemplate = shipped!("prompts/judges/user_fidelity.tera");
pub const JUDGE_ASSERTIONS: ShippedTemplate = shipped!("prompts/judges/assertions.tera");
pub const JUDGE_BLUEPRINT_REVIEW: ShippedTemplate =
    shipped!("prompts/judges/blueprint_review.tera");

/// Every built-in template.
pub const ALL: [ShippedTemplate; 12] = [
    USER_SIMULATOR_TEMPLATE,
    POLICY_TEMPLATE,
    TOOL_SIMULATOR_TEMPLATE,
    SYNTH_PROPOSE_TEMPLATE,
    MINE_SCENARIO_TEMPLATE,
    JUDGE_HELPFULNESS,
    JUDGE_PAIRWISE_PREFERENCE,
    JUDGE_EQUIVALENCE,
    JUDGE_POLICY_ADHERENCE,
    JUDGE_USER_FIDELITY,
    JUDGE_ASSERTIONS,
    JUDGE_BLUEPRINT_REVIEW,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_template_under_prompts_is_built_in_except_the_optional_answer_policy() {
        let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut files = Vec::new();
        let mut stack = vec![repo.join("prompts")];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                } else {
                    let relative = path.strip_prefix(repo).unwrap();
                    files.push(relative.to_string_lossy().into_owned());
                }
            }
        }
        files.sort();
        let mut built_in: Vec<String> = ALL.iter().map(|t| t.path.to_string()).collect();
        // A policy prompt a config names as a file (examples/qa-*.toml); no default.
        built_in.push("prompts/policies/answer.tera".into());
        // The probe strategies, built in beside the scenarios loader.
        built_in.extend(
            crate::persona::probe::SHIPPED.map(|(name, _)| format!("prompts/probes/{name}.toml")),
        );
        built_in.sort();
        assert_eq!(files, built_in);
        for template in ALL {
            assert_eq!(
                std::fs::read_to_string(repo.join(template.path)).unwrap(),
                template.text
            );
        }
    }

    #[test]
    fn a_built_in_template_is_named_by_its_path_and_said_to_be_built_in() {
        assert_eq!(
            USER_SIMULATOR_TEMPLATE.label(),
            PathBuf::from("prompts/user_simulator.tera (built in)")
        );
    }
}
