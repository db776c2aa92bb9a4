//! Generation items: one conversation per item, from a scenario, a persona
//! and a seed, as an episode between the policy and the simulated user.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use async_trait::async_trait;
use serde_json::json;

use crate::config::{Job, UserMode};
use crate::llm::ChatModel;
use crate::persona::knobs;
use crate::prompt::{user_simulator_context, with_user_tools, USER_SIMULATOR};
use crate::sim::{run_episode, Episode, EpisodeSpec, Policy, Termination, UserSimulator};
use crate::store::{self, ItemRow, NewConversation, NewMessage, Store, UsageRow};
use crate::user_checks::{check_conversation, Line, ScenarioBasis, UserTurns};
use crate::verify::probe_spec::OUTCOME_KEY;
use crate::verify::{held, Verification};

use super::super::error::RunError;
use super::super::models::Models;
use super::super::work::{work, ItemRunner, Outcome, WorkEnd, WorkOptions, WorkSettings};
use super::reward_judges::RewardJudges;
use super::setup::Prepared;

/// What a generation job's items need, shared by all of its tasks.
pub struct Generation {
    prepared: Prepared,
    policy: Arc<dyn Policy>,
    user_model: Arc<dyn ChatModel>,
    job: Job,
    /// The tools as stored with each conversation, serialized once.
    tools_json: Arc<serde_json::Value>,
    /// The judges `judge:NAME` rewards name.
    reward_judges: RewardJudges,
    /// Per scenario (as `prepared.scenarios`), what the user checks read of
    /// it alone, computed by its first conversation.
    check_bases: Vec<OnceLock<ScenarioBasis>>,
}

impl Generation {
    pub fn new(job: &Job, prepared: Prepared, models: &Models) -> Generation {
        Generation {
            policy: crate::policy::build(
                &job.policy,
                &job.source,
                models.policy.clone(),
                prepared.tools.clone(),
                prepared.parallel_tool_calls,
            ),
            user_model: models.user.clone(),
            tools_json: Arc::new(json!(prepared.tools.as_ref())),
            reward_judges: RewardJudges::new(&prepared.judges, &job.endpoints, &models.endpoints),
            check_bases: prepared.scenarios.iter().map(|_| OnceLock::new()).collect(),
            prepared,
            job: job.clone(),
        }
    }
}

/// Work a generation job's items in this process, once its policy is ready
/// ([`Generation::prepare_policy`]).
pub async fn work_generation(
    store: Arc<dyn Store>,
    job_id: i64,
    job: &Job,
    prepared: Prepared,
    models: &Models,
    owner: String,
    options: WorkOptions,
) -> Result<WorkEnd, RunError> {
    let runner = Arc::new(Generation::new(job, prepared, models));
    runner
        .prepare_policy()
        .await
        .map_err(|problem| RunError::Invalid(vec![problem]))?;
    Ok(work(store, job_id, runner, WorkSettings::of(job), owner, options).await?)
}

#[async_trait]
impl ItemRunner for Generation {
    async fn run(&self, item: &ItemRow) -> Outcome {
        let p = &self.prepared;
        let (Some(&s), Some(&pi)) = (
            p.scenario_index.get(&item.scenario_id),
            p.persona_index.get(&item.persona_id),
        ) else {
            let message = format!(
                "scenario '{}' or persona '{}' is no longer in the dataset",
                item.scenario_id, item.persona_id
            );
            return Outcome::failed("dataset", message);
        };
        let basis = self.check_bases[s].get_or_init(|| ScenarioBasis::of(&p.scenarios[s].user));
        self.converse(item, &p.scenarios[s], &p.personas[pi], basis)
            .await
    }
}

impl Generation {
    /// Get the policy ready before the first conversation (an A2A agent's
    /// card is read and checked); what stops it is a problem of the job.
    pub async fn prepare_policy(&self) -> Result<(), crate::config::Problem> {
        self.policy.prepare().await.map_err(|e| {
            crate::config::Problem::at_field(
                &self.job.source,
                &format!(
                    "policy (kind = \"{}\")",
                    self.job.policy.checked.name().as_str()
                ),
                format!("the agent cannot be used: {e}"),
            )
        })
    }

    /// The job's inputs, as checked.
    pub fn prepared(&self) -> &Prepared {
        &self.prepared
    }

    /// The policy as the job's items run it (its model, tools and steps).
    pub fn policy(&self) -> &dyn Policy {
        self.policy.as_ref()
    }

    /// One conversation of `item` for `scenario` and `persona`, which need
    /// not be among the job's own (an agent server's run request brings
    /// its row); `basis` is what the user checks read of the scenario.
    pub async fn converse(
        &self,
        item: &ItemRow,
        scenario: &crate::persona::Scenario,
        persona: &crate::persona::Persona,
        basis: &ScenarioBasis,
    ) -> Outcome {
        let p = &self.prepared;
        let seed = item.seed as u64;
        let (user, persona_knobs) = match self.user_simulator(scenario, persona, seed) {
            Ok(user) => user,
            Err(e) => return Outcome::failed("template", e.to_string()),
        };
        let spec = self.episode_spec(scenario, seed);
        let started_at = store::now_ms();
        let episode =
            match run_episode(&spec, self.policy.as_ref(), &user, p.environment.as_ref()).await {
                Ok(episode) => episode,
                Err(e) => {
                    tracing::warn!(item = %item.key, class = e.class(), "item failed: {e}");
                    return Outcome::failed(e.class(), e.to_string());
                }
            };
        let recorded = Recorded {
            episode,
            persona_knobs,
            policy_model: self.policy.name(),
            user_model: user.model_name(),
            started_at,
        };
        self.record(item, scenario, persona, basis, recorded).await
    }

    /// The simulated user of one conversation: the job's user model with
    /// the prompt rendered for `persona` (its knobs drawn by `seed`) and
    /// `scenario`, and the knobs it drew.
    pub fn user_simulator(
        &self,
        scenario: &crate::persona::Scenario,
        persona: &crate::persona::Persona,
        seed: u64,
    ) -> Result<(UserSimulator, BTreeMap<String, String>), crate::prompt::PromptError> {
        let p = &self.prepared;
        // The resolved persona (a copy of the persona) is only needed to
        // render the prompt; of it, the conversation keeps its knobs.
        let persona = knobs::resolve(persona, seed);
        let mut ctx = user_simulator_context(&persona, &scenario.user);
        with_user_tools(&mut ctx, &p.user_tools);
        let rendered = p.prompts.render(USER_SIMULATOR, &ctx)?;
        let user =
            UserSimulator::new(self.user_model.clone(), rendered).with_tools(p.user_tools.clone());
        Ok((user, persona.resolved_knobs))
    }

    /// The episode's spec for `scenario`: the job's prompt, opener,
    /// greeting, turns and whether a simulated user takes part.
    pub fn episode_spec<'a>(
        &'a self,
        scenario: &'a crate::persona::Scenario,
        seed: u64,
    ) -> EpisodeSpec<'a> {
        EpisodeSpec {
            scenario,
            seed,
            policy_prompt: self.prepared.policy_prompt.clone(),
            opener: self.job.user_simulator.opens,
            greeting: &self.job.user_simulator.greeting,
            max_turns: self.job.max_turns,
            simulated_user: self.job.user_simulator.mode() == UserMode::Llm,
        }
    }

    /// The job's config as loaded.
    pub fn job(&self) -> &Job {
        &self.job
    }

    /// A finished episode as the conversation `item` stores: its messages,
    /// reward and breakdown, usage, metadata and user checks, with the
    /// scenario's `judge:NAME` rewards judged (their judgments come back
    /// with it, stored once the conversation has an id).
    pub async fn record(
        &self,
        item: &ItemRow,
        scenario: &crate::persona::Scenario,
        persona: &crate::persona::Persona,
        basis: &ScenarioBasis,
        recorded: Recorded<'_>,
    ) -> Outcome {
        let p = &self.prepared;
        let Recorded {
            episode,
            persona_knobs,
            policy_model,
            user_model,
            started_at,
        } = recorded;
        let simulated_user = self.job.user_simulator.mode() == UserMode::Llm;
        let mut conversation = NewConversation {
            job_id: item.job_id,
            item_id: item.id,
            item_key: item.key.clone(),
            scenario_id: item.scenario_id.clone(),
            persona_id: item.persona_id.clone(),
            sample: item.sample,
            seed: item.seed,
            policy_model: policy_model.to_string(),
            user_model: user_model.to_string(),
            termination: episode.termination.as_str().to_string(),
            reward: episode
                .verification
                .as_ref()
                .and_then(|v| v.stored_reward()),
            reward_breakdown: episode
                .verification
                .as_ref()
                .map_or(serde_json::Value::Null, |v| v.breakdown()),
            metadata: conversation_metadata(
                persona_knobs,
                p.environment.name(),
                episode.verification.as_ref(),
                &p.user_tools,
                episode.policy_warning.as_deref(),
            ),
            tools: match &scenario.tools {
                Some(tools) => Arc::new(json!(tools.as_ref())),
                None => Arc::clone(&self.tools_json),
            },
            usage: usage_rows(&episode),
            started_at,
            finished_at: store::now_ms(),
            user_checks: Some(user_checks(&episode, scenario, basis, simulated_user).to_json()),
            messages: message_rows(&episode),
        };
        let judged = episode
            .verification
            .filter(|v| v.unscored.is_none())
            .filter(|_| {
                scenario
                    .evaluation
                    .reward_basis
                    .iter()
                    .any(|c| c.judge_name().is_some())
            });
        let Some(mut verification) = judged else {
            return Outcome::Conversation(Box::new(conversation));
        };
        let preview = conversation.as_stored(0);
        let judged = match self
            .reward_judges
            .judge(item.job_id, &preview, scenario, persona)
            .await
        {
            Ok(judged) => judged,
            Err(e) => {
                tracing::warn!(item = %item.key, class = e.class, "item failed: {}", e.message);
                return Outcome::failed(e.class, e.message);
            }
        };
        verification.add_scored(judged.parts);
        if let Some(probe) = &scenario.probe {
            held::settle_by_judge(&mut verification, probe, &scenario.evaluation.reward_basis);
            put_probe(&mut conversation.metadata, &verification);
        }
        conversation.reward = verification.stored_reward();
        conversation.reward_breakdown = verification.breakdown();
        conversation.usage.push(UsageRow {
            role: "judge".into(),
            calls: judged.calls as i64,
            prompt_tokens: judged.usage.prompt_tokens as i64,
            completion_tokens: judged.usage.completion_tokens as i64,
            latency_ms: judged.latency_ms as i64,
        });
        Outcome::Judged(Box::new(conversation), judged.judgments)
    }
}

/// A finished episode with what the conversation row says of who took part.
pub struct Recorded<'a> {
    pub episode: Episode,
    /// The knobs the persona drew for this conversation.
    pub persona_knobs: BTreeMap<String, String>,
    /// What played the policy: the job's policy, or a stepped session's caller.
    pub policy_model: &'a str,
    pub user_model: &'a str,
    pub started_at: i64,
}

/// A probe's outcome, in the metadata under `probe`.
fn put_probe(metadata: &mut serde_json::Value, verification: &Verification) {
    if let (Some(outcome), Some(map)) = (verification.probe.as_ref(), metadata.as_object_mut()) {
        map.insert(OUTCOME_KEY.into(), json!(outcome));
    }
}

/// What a conversation keeps besides its messages: the persona's knobs, the
/// environment, and the verifier's own record of what it scored (NeMo Gym:
/// the rollout as sent to `/verify` and its reply), for exports in its format.
fn conversation_metadata(
    persona_knobs: std::collections::BTreeMap<String, String>,
    environment: &str,
    verification: Option<&crate::verify::Verification>,
    user_tools: &[crate::env::ToolSpec],
    policy_warning: Option<&str>,
) -> serde_json::Value {
    let mut metadata = json!({
        "persona_knobs": persona_knobs,
        "environment": environment,
    });
    if let (Some(warning), Some(map)) = (policy_warning, metadata.as_object_mut()) {
        map.insert(crate::sim::policy::WARNING_KEY.into(), json!(warning));
    }
    // The user's tools (dual control), for exports that are asked to keep
    // the user's tool calls.
    if let (false, Some(map)) = (user_tools.is_empty(), metadata.as_object_mut()) {
        map.insert(
            crate::export::openai::USER_TOOLS_KEY.into(),
            json!(user_tools),
        );
    }
    if let Some(verification) = verification {
        put_probe(&mut metadata, verification);
    }
    if let (Some(record), Some(map)) = (
        verification.and_then(|v| v.record.as_ref()),
        metadata.as_object_mut(),
    ) {
        map.insert(crate::export::nemo_gym::RECORD_KEY.into(), record.clone());
    }
    metadata
}

/// The deterministic checks of the simulated user over this episode.
fn user_checks(
    episode: &Episode,
    scenario: &crate::persona::Scenario,
    basis: &ScenarioBasis,
    simulated_user: bool,
) -> crate::user_checks::UserChecks {
    let lines = episode
        .transcript
        .messages
        .iter()
        .enumerate()
        .map(|(index, r)| {
            Line::new(
                index,
                r.message.role.as_str(),
                r.author.as_str(),
                &r.message.content,
                r.message
                    .tool_calls
                    .iter()
                    .map(|c| c.name.clone())
                    .collect(),
            )
        })
        .collect();
    let turns = UserTurns {
        lines,
        outputs: episode.user_outputs.clone(),
        user_stopped: episode.termination == Termination::UserStop,
        simulated_user,
    };
    check_conversation(&turns, scenario, basis)
}

fn usage_rows(episode: &Episode) -> Vec<UsageRow> {
    episode
        .usage
        .iter()
        .map(|(role, u)| UsageRow {
            role: role.to_string(),
            calls: u.calls as i64,
            prompt_tokens: u.prompt_tokens as i64,
            completion_tokens: u.completion_tokens as i64,
            latency_ms: u.latency_ms as i64,
        })
        .collect()
}

fn message_rows(episode: &Episode) -> Vec<NewMessage> {
    episode
        .transcript
        .messages
        .iter()
        .map(|r| NewMessage {
            role: r.message.role.as_str().to_string(),
            content: r.message.content.clone(),
            tool_calls: (!r.message.tool_calls.is_empty()).then(|| json!(r.message.tool_calls)),
            tool_call_id: r.message.tool_call_id.clone(),
            author: r.author.as_str().to_string(),
            prompt_tokens: r.usage.map(|u| u.prompt_tokens as i64),
            completion_tokens: r.usage.map(|u| u.completion_tokens as i64),
            latency_ms: r.latency_ms.map(|l| l as i64),
            tokens: r.tokens.clone(),
        })
        .collect()
}
