//! What a synthesis job reads before it proposes anything: the environment,
//! the example scenarios, the policy text; then the generator's endpoint.
//! Every problem names its file and line or field.

use std::path::Path;
use std::sync::Arc;

use crate::config::synth::SynthConfig;
use crate::config::Problem;
use crate::env::{open_environment, open_environment_with, Environment};
use crate::jsonl::JsonlReader;
use crate::judge::Judge;
use crate::persona::Scenario;
use crate::synth::committee::Committee;
use crate::synth::prompt;
use crate::synth::propose::Proposer;
use crate::synth::reviewers::reviewer_judges;

use super::super::context::Context;
use super::super::error::RunError;
use super::super::models::{connect_endpoints, RunningMock};

/// A synthesis job's inputs, read and checked.
pub struct Inputs {
    pub environment: Arc<dyn Environment>,
    /// The review committee's judges (`[[reviewers]]`), none without one.
    pub reviewers: Vec<Judge>,
    pub examples: Vec<Scenario>,
    /// The examples file as read (part of the job's hash).
    pub examples_text: String,
    pub policy: String,
}

pub async fn prepare(config: &SynthConfig) -> Result<Inputs, RunError> {
    let environment = open_environment(&config.environment).await.map_err(|e| {
        RunError::Invalid(vec![Problem::at_field(
            &config.source,
            config.environment.field(),
            e.to_string(),
        )])
    })?;
    let tools: Vec<&str> = environment
        .tools()
        .iter()
        .chain(environment.user_tools())
        .map(|t| t.name.as_str())
        .collect();
    let problems = config.diversity.tool_problems(&config.source, &tools);
    if !problems.is_empty() {
        return Err(RunError::Invalid(problems));
    }
    let reviewers = match &config.committee {
        Some(committee) => reviewer_judges(&config.source, committee).map_err(RunError::Invalid)?,
        None => Vec::new(),
    };
    let (examples, examples_text) = match &config.head.examples {
        Some(file) => read_examples(file, config.head.examples_shown)?,
        None => (Vec::new(), String::new()),
    };
    let policy = match &config.head.policy {
        Some(file) => crate::regular_file::read_to_string(file).map_err(|e| {
            RunError::Invalid(vec![Problem::at_field(
                &config.source,
                "policy",
                format!("cannot read {}: {e}", file.display()),
            )])
        })?,
        None => environment.policy_text().to_string(),
    };
    Ok(Inputs {
        environment,
        reviewers,
        examples,
        examples_text,
        policy,
    })
}

/// The first `shown` scenario rows of `file`, and its whole text.
fn read_examples(file: &Path, shown: usize) -> Result<(Vec<Scenario>, String), RunError> {
    let text = crate::regular_file::read_to_string(file).map_err(|e| {
        RunError::Invalid(vec![Problem::in_file(
            file,
            format!("cannot read the examples: {e}"),
        )])
    })?;
    let mut examples = Vec::new();
    let mut reader = JsonlReader::new(text.as_bytes());
    while let Some(next) = reader.next_line() {
        if examples.len() >= shown {
            break;
        }
        let (line, json) =
            next.map_err(|e| RunError::Invalid(vec![Problem::unreadable_line(file, &e)]))?;
        match serde_json::from_str(json) {
            Ok(scenario) => examples.push(scenario),
            Err(e) => {
                return Err(RunError::Invalid(vec![Problem::at_line(
                    file,
                    line,
                    format!("not a scenario row: {e}; the examples are scenario rows as `sparring run` reads them"),
                )]))
            }
        }
    }
    Ok((examples, text))
}

/// The proposer of a job: its inputs and the generator's endpoint (a mock
/// endpoint talks to a mock started by the context's starter, kept running
/// while the returned handle lives).
pub async fn connect(
    ctx: &Context,
    config: &SynthConfig,
    inputs: Inputs,
) -> Result<(Proposer, Option<Box<dyn RunningMock>>), RunError> {
    let prompts = prompt::registry().map_err(RunError::Invalid)?;
    let mut configs = vec![&config.generator];
    configs.extend(config.tools.iter());
    for endpoint in config.committee.iter().flat_map(|c| &c.endpoints) {
        if configs.iter().all(|e| e.name != endpoint.name) {
            configs.push(endpoint);
        }
    }
    let (endpoints, mock) = connect_endpoints(configs, &[], &config.mock, ctx.mock()).await?;
    let mut environment = inputs.environment;
    if let Some(tools) = &config.tools {
        // A simulated environment's gold actions run only with the model
        // that plays its tools; as checked, it had none.
        let model = endpoints.get(&tools.name);
        environment = open_environment_with(&config.environment, model)
            .await
            .map_err(|e| {
                RunError::Invalid(vec![Problem::at_field(
                    &config.source,
                    config.environment.field(),
                    e.to_string(),
                )])
            })?;
    }
    let generator = endpoints
        .get(&config.generator.name)
        .cloned()
        .ok_or_else(|| {
            RunError::Invalid(vec![Problem::at_field(
                &config.source,
                "roles.generator",
                format!("endpoint '{}' did not connect", config.generator.name),
            )])
        })?;
    let committee = match &config.committee {
        None => None,
        Some(c) => Some(Arc::new(
            Committee::new(inputs.reviewers, &endpoints, c.vote).map_err(|e| {
                RunError::Invalid(vec![Problem::at_field(
                    &config.source,
                    "reviewers",
                    e.to_string(),
                )])
            })?,
        )),
    };
    let proposer = Proposer {
        environment,
        generator,
        prompts,
        policy: inputs.policy,
        examples: inputs.examples,
        records_per_prompt: config.head.records_per_prompt,
        max_attempts: u32::try_from(config.head.max_attempts).unwrap_or(u32::MAX),
        seed: config.head.seed,
        committee,
    };
    Ok((proposer, mock))
}
