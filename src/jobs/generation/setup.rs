//! Everything a job needs before its first conversation: dataset, personas,
//! environment, templates and models, loaded and checked together so that
//! `sparring validate` and `sparring run` report the same problems.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::config::{Job, Problem};
use crate::env::open_environment;
use crate::env::preflight::{check_gold_actions, mcp_db_problems, probe_problems};
use crate::env::{Environment, ToolSpec};
use crate::judge::{judges_of_job, unknown_endpoints, Judge};
use crate::persona::dataset::{load_job_personas, load_job_scenarios};
use crate::persona::{Persona, Scenario};
use crate::prompt::{
    policy_context, shipped_templates, PromptRegistry, ShippedTemplate, POLICY, USER_SIMULATOR,
};

use super::super::hash::{config_hash, Input};

/// A job's inputs, loaded and checked.
pub struct Prepared {
    pub scenarios: Vec<Scenario>,
    pub scenario_index: HashMap<String, usize>,
    pub personas: Vec<Persona>,
    pub persona_index: HashMap<String, usize>,
    pub environment: Arc<dyn Environment>,
    pub tools: Arc<[ToolSpec]>,
    /// The tools the simulated user may call (dual control); usually none.
    pub user_tools: Arc<[ToolSpec]>,
    pub prompts: PromptRegistry,
    /// The policy's system prompt (the same for every item).
    pub policy_prompt: Arc<str>,
    /// Whether the policy may make several tool calls in one step (the
    /// config's `[policy] parallel_tool_calls`, else the environment's).
    pub parallel_tool_calls: bool,
    pub config_hash: String,
    /// The job's `[[judges]]`, checked (not yet run by the job).
    pub judges: Vec<Judge>,
}

impl Prepared {
    /// Only the scenarios `keep` keeps (in their order): a job over part of
    /// its dataset (the service's `/v1/rollouts` names the scenarios it
    /// wants). The config hash says so, so that the whole dataset's job is
    /// never found as this one.
    pub fn keep_scenarios(&mut self, keep: impl Fn(&Scenario) -> bool) {
        self.scenarios.retain(|s| keep(s));
        self.scenario_index = self
            .scenarios
            .iter()
            .enumerate()
            .map(|(i, s)| (s.id.clone(), i))
            .collect();
        let ids: Vec<&str> = self.scenarios.iter().map(|s| s.id.as_str()).collect();
        let mut text = self.config_hash.clone();
        text.push_str("\nscenarios:");
        text.push_str(&ids.join("\n"));
        if let Ok(hash) = config_hash(&text, &[]) {
            self.config_hash = hash;
        }
    }
}

/// Where one of a job's templates comes from: the file its config names, or
/// the one built into the binary (whatever the working directory).
enum TemplateSource {
    File(PathBuf),
    BuiltIn(ShippedTemplate),
}

/// The templates a job uses, by the names they are rendered by.
fn template_sources(job: &Job) -> Vec<(&'static str, TemplateSource)> {
    shipped_templates()
        .into_iter()
        .map(|(name, built_in)| {
            let configured = if name == USER_SIMULATOR {
                job.user_simulator.template.clone()
            } else if name == POLICY {
                job.policy.template.clone()
            } else {
                None
            };
            let source = match configured {
                Some(file) => TemplateSource::File(file),
                None => TemplateSource::BuiltIn(built_in),
            };
            (name, source)
        })
        .collect()
}

fn load_templates(
    templates: &[(&'static str, TemplateSource)],
) -> Result<PromptRegistry, Vec<Problem>> {
    PromptRegistry::load_sources(
        templates
            .iter()
            .map(|(name, source)| match source {
                TemplateSource::File(file) => (name.to_string(), file.clone(), None),
                TemplateSource::BuiltIn(t) => {
                    (name.to_string(), t.label(), Some(t.text.to_string()))
                }
            })
            .collect(),
    )
}

/// A job's config hash: its config and the content of every file it names
/// (the scenarios, personas, replay and templates; a built-in template's
/// text as its file's was, so a job that used the default files hashes and
/// resumes as it did). Cheap beside [`prepare`]: a service finds what it
/// prepared for the same config by it.
pub fn config_hash_of(job: &Job) -> Result<String, Vec<Problem>> {
    job_config_hash(job, &template_sources(job))
}

fn job_config_hash(
    job: &Job,
    templates: &[(&'static str, TemplateSource)],
) -> Result<String, Vec<Problem>> {
    let mut inputs: Vec<Input<'_>> = vec![Input::File(job.dataset.data())];
    inputs.extend(job.dataset.personas.as_deref().map(Input::File));
    inputs.extend(job.dataset.replay.as_deref().map(Input::File));
    inputs.extend(templates.iter().map(|(_, source)| match source {
        TemplateSource::File(file) => Input::File(file),
        TemplateSource::BuiltIn(t) => Input::Text(t.text),
    }));
    config_hash(&job.snapshot, &inputs).map_err(|e| {
        vec![Problem::in_file(
            &job.source,
            format!("cannot hash the job inputs: {e}"),
        )]
    })
}

/// Load and check everything; every problem found is reported, not just the first.
pub async fn prepare(job: &Job) -> Result<Prepared, Vec<Problem>> {
    let mut problems = Vec::new();
    let scenarios =
        load_job_scenarios(&job.dataset, job.user_simulator.mode()).unwrap_or_else(|p| {
            problems.extend(p);
            Vec::new()
        });
    let personas = load_job_personas(job, scenarios.len()).unwrap_or_else(|p| {
        problems.extend(p);
        Vec::new()
    });
    let environment = match open_environment(&job.environment).await {
        Ok(env) => Some(env),
        Err(e) => {
            problems.extend(e.problems_at(&job.source, job.environment.field()));
            None
        }
    };
    let judges = match judges_of_job(job) {
        Ok(judges) => {
            problems.extend(unknown_endpoints(&job.source, &judges, |name| {
                job.endpoints.contains_key(name)
            }));
            judges
        }
        Err(p) => {
            problems.extend(p);
            Vec::new()
        }
    };
    problems.extend(crate::persona::scenario::unscored_problems(
        job.dataset.data(),
        &scenarios,
    ));
    if job.user_simulator.mode() == crate::config::UserMode::None {
        problems.extend(crate::persona::scenario::opening_problems(
            job.dataset.data(),
            &scenarios,
        ));
    }
    problems.extend(crate::judge::requirements::unmet_by_scenarios(
        &job.source,
        &judges,
        &scenarios,
    ));
    problems.extend(crate::judge::requirements::unknown_reward_judges(
        job.dataset.data(),
        &judges,
        &scenarios,
    ));
    let items = super::plan::item_count(
        scenarios.len(),
        personas.len(),
        job.dataset.samples_per_scenario,
        job.dataset.personas_per_scenario(),
    );
    if items > crate::config::ranges::MAX_ITEMS {
        problems.push(Problem::at_field(
            &job.source,
            "dataset.samples_per_scenario",
            format!(
                "the job would have {items} items ({} scenarios × their personas × \
                 samples); a job holds at most {}: lower samples_per_scenario or \
                 personas_per_scenario, or split the dataset",
                scenarios.len(),
                crate::config::ranges::MAX_ITEMS
            ),
        ));
    }
    let templates = template_sources(job);
    let prompts = match load_templates(&templates) {
        Ok(registry) => {
            problems.extend(registry.check_templates());
            Some(registry)
        }
        Err(p) => {
            problems.extend(p);
            None
        }
    };
    if let crate::config::policy::PolicyKind::Http(http) = &job.policy.checked {
        problems.extend(crate::policy::http::template_problems(&job.source, http));
    }
    let (Some(environment), Some(prompts)) = (environment, prompts) else {
        return Err(problems);
    };
    let gold_checked = gold_actions_the_environment_runs(job, &scenarios, environment.as_ref());
    problems
        .extend(check_gold_actions(job.dataset.data(), &gold_checked, environment.as_ref()).await);
    problems.extend(probe_problems(
        job.dataset.data(),
        &scenarios,
        environment.as_ref(),
    ));
    if matches!(job.environment, crate::config::EnvironmentConfig::Mcp(_)) {
        problems.extend(mcp_db_problems(job.dataset.data(), &scenarios));
    }
    let parallel_tool_calls = match parallel_tool_calls(job, environment.as_ref()) {
        Ok(parallel) => parallel,
        Err(problem) => {
            problems.push(problem);
            false
        }
    };
    if !problems.is_empty() {
        return Err(problems);
    }
    let policy_prompt = prompts
        .render(
            POLICY,
            &policy_context(
                environment.policy_text(),
                environment.name(),
                parallel_tool_calls,
            ),
        )
        .map_err(|e| {
            vec![Problem::in_file(
                prompts.file_of(POLICY).unwrap_or(Path::new("policy")),
                e.to_string(),
            )]
        })?;
    let config_hash = job_config_hash(job, &templates)?;
    let tools: Arc<[ToolSpec]> = environment.tools().to_vec().into();
    let user_tools: Arc<[ToolSpec]> = environment.user_tools().to_vec().into();
    Ok(Prepared {
        scenario_index: scenarios
            .iter()
            .enumerate()
            .map(|(i, s)| (s.id.clone(), i))
            .collect(),
        scenarios,
        persona_index: personas
            .iter()
            .enumerate()
            .map(|(i, p)| (p.id.clone(), i))
            .collect(),
        personas,
        environment,
        tools,
        user_tools,
        prompts,
        judges,
        policy_prompt: policy_prompt.into(),
        parallel_tool_calls,
        config_hash,
    })
}

/// `prepared` with its environment opened again with the model that plays
/// its tools (a `simulated` environment), which validation had not.
pub async fn with_tools_model(
    job: &Job,
    mut prepared: Prepared,
    models: &super::super::models::Models,
) -> Result<Prepared, Problem> {
    if let Some(model) = &models.tools {
        prepared.environment = crate::env::open_environment_with(&job.environment, Some(model))
            .await
            .map_err(|e| Problem::at_field(&job.source, job.environment.field(), e.to_string()))?;
    }
    Ok(prepared)
}

/// The scenarios as far as their gold actions run on the environment: all of
/// them, unless the policy is an agent that may run tools of its own without
/// their calls being replayed on sparring's session (`replay_agent_tools`).
/// Its gold calls of tools the environment lacks are then the agent's own,
/// checked against its trace (`actions`) only; its gold calls of the
/// environment's tools, and the user's (dual control), are checked as ever.
fn gold_actions_the_environment_runs<'s>(
    job: &Job,
    scenarios: &'s [Scenario],
    environment: &dyn Environment,
) -> std::borrow::Cow<'s, [Scenario]> {
    if !job.policy.checked.is_agent() || job.policy.replay_agent_tools() {
        return std::borrow::Cow::Borrowed(scenarios);
    }
    let tools = environment.tools();
    scenarios
        .iter()
        .map(|scenario| {
            let mut scenario = scenario.clone();
            scenario.evaluation.actions.retain(|action| {
                !action.caller.is_policy() || tools.iter().any(|t| t.name == action.name)
            });
            scenario
        })
        .collect()
}

/// Whether the policy may make several tool calls in one step: what the
/// config says, else what the environment's policy allows. Allowing them
/// where the environment's policy forbids them would give the policy a
/// system prompt that says both, so it is refused.
fn parallel_tool_calls(job: &Job, environment: &dyn Environment) -> Result<bool, Problem> {
    let allowed = environment.allows_parallel_tool_calls();
    match job.policy.parallel_tool_calls {
        None => Ok(allowed),
        Some(true) if !allowed => Err(Problem::at_field(
            &job.source,
            "policy.parallel_tool_calls",
            format!(
                "is true, but the policy of {} allows one tool call at a time, so the \
                 policy's system prompt would say both; leave the key out (the default \
                 follows the environment) or set it to false",
                environment.name()
            ),
        )),
        Some(parallel) => Ok(parallel),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The repository's quickstart, its paths (relative to the repository
    /// root) made absolute so that it loads from any folder.
    fn quickstart_text(repo: &Path) -> String {
        let text = std::fs::read_to_string(repo.join("quickstart.toml")).unwrap();
        ["prompts/", "data/", "personas\""]
            .iter()
            .fold(text, |text, relative| {
                text.replace(
                    &format!("\"{relative}"),
                    &format!("\"{}/{relative}", repo.display()),
                )
            })
    }

    fn quickstart_with(extra: &str) -> Job {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
        let text = quickstart_text(repo);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("job.toml");
        std::fs::write(&path, format!("{text}\n{extra}")).unwrap();
        crate::config::load(&path).unwrap()
    }

    const SEVERAL: &str = "You may make several tool calls in one step";
    const ONE: &str = "Make one tool call at a time";

    fn quickstart_with_policy_key(key: &str) -> Job {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
        let text = quickstart_text(repo).replace("[policy]\n", &format!("[policy]\n{key}\n"));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("job.toml");
        std::fs::write(&path, text).unwrap();
        crate::config::load(&path).unwrap()
    }

    #[tokio::test]
    async fn parallel_tool_calls_follow_retails_policy_of_one_call_at_a_time_unless_told() {
        let prepared = prepare(&quickstart_with_policy_key("")).await.unwrap();
        assert!(!prepared.parallel_tool_calls);
        assert!(prepared.policy_prompt.contains(ONE));
        assert!(!prepared.policy_prompt.contains(SEVERAL));

        let prepared = prepare(&quickstart_with_policy_key("parallel_tool_calls = false"))
            .await
            .unwrap();
        assert!(!prepared.parallel_tool_calls);

        let problems =
            match prepare(&quickstart_with_policy_key("parallel_tool_calls = true")).await {
                Err(problems) => problems,
                Ok(_) => panic!("parallel calls against retail's policy must be refused"),
            };
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(
            problems[0].location.as_deref(),
            Some("policy.parallel_tool_calls")
        );
        assert!(
            problems[0].message.contains("builtin:retail"),
            "{problems:?}"
        );
    }

    #[tokio::test]
    async fn an_environment_that_allows_parallel_calls_gets_them_by_default_and_the_prompt_says_one_thing(
    ) {
        let mut job = quickstart_with_policy_key("");
        job.environment = crate::config::EnvironmentConfig::Builtin("builtin:phone".into());
        let environment = open_environment(&job.environment).await.unwrap();
        assert!(environment.allows_parallel_tool_calls());
        assert_eq!(parallel_tool_calls(&job, environment.as_ref()), Ok(true));
        job.policy.parallel_tool_calls = Some(false);
        assert_eq!(parallel_tool_calls(&job, environment.as_ref()), Ok(false));
    }

    #[tokio::test]
    async fn a_job_without_template_files_names_the_built_in_ones() {
        let mut job = quickstart_with_policy_key("");
        job.user_simulator.template = None;
        job.policy.template = None;
        let prepared = prepare(&job).await.unwrap_or_else(|p| panic!("{p:?}"));
        assert_eq!(
            prepared.prompts.file_of(USER_SIMULATOR),
            Some(Path::new("prompts/user_simulator.tera (built in)"))
        );
        assert_eq!(
            prepared.prompts.file_of(POLICY),
            Some(Path::new("prompts/policies/default.tera (built in)"))
        );
        // The built-in texts hash as the files they are built from did.
        let mut with_files = quickstart_with_policy_key("");
        with_files.snapshot = job.snapshot.clone();
        let from_files = prepare(&with_files).await.unwrap();
        assert_eq!(prepared.config_hash, from_files.config_hash);
    }

    #[tokio::test]
    async fn an_agent_with_tools_of_its_own_may_have_gold_actions_the_environment_lacks() {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
        let text = quickstart_text(repo).replace("[policy]\n", "[policy]\nkind = \"http\"\n");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("job.toml");
        std::fs::write(
            &path,
            format!(
                "{text}\n[policy.http]\nbody = '{{\"q\": {{{{ last_user | json_encode() }}}}}}'\n\
                 reply = \"/reply\"\n"
            ),
        )
        .unwrap();
        let mut job = crate::config::load(&path).unwrap_or_else(|p| panic!("{p:?}"));
        job.environment = crate::config::EnvironmentConfig::Builtin("builtin:chat".into());
        job.dataset.scenarios = Some(repo.join("tests/agents/data/scenarios.jsonl"));
        job.policy.template = None;
        if let Err(problems) = prepare(&job).await {
            panic!("{problems:?}");
        }
        // Replayed on sparring's session, the agent's calls must be its tools.
        job.policy.replay_agent_tools = Some(true);
        let problems = match prepare(&job).await {
            Err(problems) => problems,
            Ok(_) => panic!("gold calls of tools builtin:chat lacks, replayed, must be refused"),
        };
        assert!(
            problems[0]
                .message
                .contains("'get_order_status' is not a tool of builtin:chat"),
            "{problems:?}"
        );
        // A gold call of one of the environment's tools is checked as ever.
        job.policy.replay_agent_tools = Some(false);
        job.environment = crate::config::EnvironmentConfig::Builtin("builtin:retail".into());
        let retail = std::fs::read_to_string(repo.join("data/retail/scenarios.jsonl")).unwrap();
        let first = retail.lines().next().unwrap().replace(
            "{\"order_id\": \"#LL21743\"}",
            "{\"order_id\": \"#LL00000\"}",
        );
        job.dataset.scenarios = Some(dir.path().join("retail.jsonl"));
        std::fs::write(job.dataset.data(), format!("{first}\n")).unwrap();
        let problems = match prepare(&job).await {
            Err(problems) => problems,
            Ok(_) => panic!("a gold call of retail's own tool that fails must be refused"),
        };
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(
            problems[0].message.contains("fails when replayed"),
            "{problems:?}"
        );
    }

    #[tokio::test]
    async fn a_jobs_judges_are_checked_with_the_rest_of_the_job() {
        let job = quickstart_with(
            "[[judges]]\nname = \"helpful\"\nendpoint = \"policy\"\nbuiltin = \"helpfulness\"\n\
             [[judges]]\nname = \"fidelity2\"\nendpoint = \"nowhere\"\nbuiltin = \"user_fidelity\"\n",
        );
        let problems = match prepare(&job).await {
            Err(problems) => problems,
            Ok(_) => panic!("an undefined judge endpoint must be a problem"),
        };
        assert_eq!(problems.len(), 1, "{problems:?}");
        // The quickstart's own three judges come first.
        assert_eq!(problems[0].location.as_deref(), Some("judges[4].endpoint"));

        let job = quickstart_with(
            "[[judges]]\nname = \"helpful\"\nendpoint = \"policy\"\nbuiltin = \"helpfulness\"\n",
        );
        let prepared = prepare(&job).await.unwrap_or_else(|p| panic!("{p:?}"));
        assert_eq!(prepared.judges.len(), 4);
        assert_eq!(prepared.judges[3].name, "helpful");
    }
}
