//! One session's episode, from its opening to its stored conversation:
//! opened by a host for a scenario and persona, stepped with the caller's
//! messages, and at its end verified, recorded as a batch episode is
//! (user checks, judge rewards) and stored as a done item of the host's job
//! with its conversation in one transaction. A session that never ends
//! (closed, expired, disconnected) or that fails stores nothing.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use serde_json::{json, Value};

use crate::config::UserMode;
use crate::env::ToolSpec;
use crate::jobs::generation::item::Recorded;
use crate::jobs::seed::item_seed;
use crate::jobs::work::Outcome;
use crate::persona::knobs::seeded_u64;
use crate::persona::{Persona, Scenario};
use crate::sim::{PolicyMessage, SteppedEpisode, SteppedSpec};
use crate::store::{self, ItemRow, ItemStatus, NewItem};
use crate::user_checks::ScenarioBasis;

use super::action::Action;
use super::error::{Invalid, SessionError};
use super::host::Host;
use super::observation::{End, Observation};
use super::request::{OpenRequest, PersonaChoice, ScenarioChoice};

/// Where a session's episode is.
enum Phase {
    Running(Box<SteppedEpisode>),
    Done(End),
    Failed { class: String, message: String },
}

/// A session's episode and what its conversation is stored with.
pub struct Live {
    host: Arc<Host>,
    id: String,
    episode_id: String,
    phase: Phase,
    item: ItemRow,
    scenario: Arc<Scenario>,
    persona: Persona,
    basis: ScenarioBasis,
    knobs: BTreeMap<String, String>,
    model: String,
    tools: Arc<[ToolSpec]>,
    started_at: i64,
    /// When the caller was last answered: a step's latency runs from it.
    answered: Instant,
    /// Policy messages taken.
    steps: u32,
}

impl Host {
    /// Open session `id`'s episode as `request` asks: its first
    /// observation (the opening, the user's first words when the user
    /// speaks first, the tools), never a hidden field of the scenario.
    pub async fn open_session(
        self: &Arc<Self>,
        id: &str,
        request: OpenRequest,
    ) -> Result<(Live, Observation), SessionError> {
        let prepared = self.generation.prepared();
        let job = self.generation.job();
        let seed = request
            .seed
            .unwrap_or_else(|| item_seed(job.seed, &format!("session/{id}")));
        let scenario = match request.scenario {
            ScenarioChoice::Id(sid) => match prepared.scenario_index.get(&sid) {
                Some(&i) => Arc::new(prepared.scenarios[i].clone()),
                None => {
                    return Err(Invalid::at(
                        "scenario_id",
                        format!(
                            "'{sid}' is not one of the job's {} scenarios",
                            prepared.scenarios.len()
                        ),
                    )
                    .into())
                }
            },
            ScenarioChoice::Inline(scenario) => {
                self.check_inline(&scenario)?;
                Arc::new(*scenario)
            }
            ScenarioChoice::BySeed => {
                let n = prepared.scenarios.len().max(1) as u64;
                let i = (seeded_u64(seed, "scenario") % n) as usize;
                match prepared.scenarios.get(i) {
                    Some(s) => Arc::new(s.clone()),
                    None => {
                        return Err(Invalid::at("scenario_id", "the job has no scenarios").into())
                    }
                }
            }
        };
        let persona = match request.persona {
            PersonaChoice::Id(pid) => match prepared.persona_index.get(&pid) {
                Some(&i) => prepared.personas[i].clone(),
                None => {
                    return Err(Invalid::at(
                        "persona_id",
                        format!(
                            "'{pid}' is not one of the job's {} personas",
                            prepared.personas.len()
                        ),
                    )
                    .into())
                }
            },
            PersonaChoice::Inline(persona) => *persona,
            PersonaChoice::BySeed => {
                let n = prepared.personas.len().max(1) as u64;
                match prepared.personas.get((seed % n) as usize) {
                    Some(p) => p.clone(),
                    None => return Err(Invalid::at("persona_id", "the job has no personas").into()),
                }
            }
        };
        let (user, knobs) = self
            .generation
            .user_simulator(&scenario, &persona, seed)
            .map_err(|e| SessionError::Failed {
                class: "template".into(),
                message: e.to_string(),
            })?;
        let spec = SteppedSpec {
            scenario: scenario.clone(),
            seed,
            policy_prompt: prepared.policy_prompt.clone(),
            opener: job.user_simulator.opens,
            greeting: Arc::from(job.user_simulator.greeting.as_str()),
            max_turns: job.max_turns,
            max_steps_per_turn: job.policy.max_steps_per_turn,
            simulated_user: job.user_simulator.mode() == UserMode::Llm,
        };
        let started_at = store::now_ms();
        let episode = SteppedEpisode::open(spec, user, prepared.environment.as_ref())
            .await
            .map_err(|e| SessionError::Failed {
                class: e.class().to_string(),
                message: e.to_string(),
            })?;
        let item = ItemRow {
            id: 0,
            job_id: self.job_row.id,
            key: format!("{}/{}/{id}", scenario.id, persona.id),
            scenario_id: scenario.id.clone(),
            persona_id: persona.id.clone(),
            sample: request.sample as i64,
            seed: seed as i64,
            status: ItemStatus::Leased,
            attempts: 1,
            lease_owner: None,
            lease_expires_at: None,
            last_error: None,
        };
        let mut live = Live {
            host: self.clone(),
            id: id.to_string(),
            episode_id: request.episode_id.unwrap_or_else(|| id.to_string()),
            phase: Phase::Running(Box::new(episode)),
            basis: ScenarioBasis::of(&scenario.user),
            tools: self.tools_of(&scenario),
            item,
            scenario,
            persona,
            knobs,
            model: request.model,
            started_at,
            answered: Instant::now(),
            steps: 0,
        };
        let observation = live.observe(true).await?;
        Ok((live, observation))
    }

    /// What a scenario given in the request must also meet for this job:
    /// its judge rewards name the job's judges, and without a simulated
    /// user it says what the user asks.
    fn check_inline(&self, scenario: &Scenario) -> Result<(), Invalid> {
        let prepared = self.generation.prepared();
        let one = std::slice::from_ref(scenario);
        let file = std::path::Path::new("scenario");
        let problems =
            crate::judge::requirements::unknown_reward_judges(file, &prepared.judges, one);
        if let Some(p) = problems.into_iter().next() {
            return Err(Invalid::at("scenario.evaluation.reward_basis", p.message));
        }
        if self.generation.job().user_simulator.mode() == UserMode::None
            && scenario.prelude.is_empty()
            && scenario.user.opening.is_none()
        {
            return Err(Invalid::at(
                "scenario.user.opening",
                "is missing; this job has no simulated user, so the opening is the whole request",
            ));
        }
        Ok(())
    }
}

impl Live {
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Whether the episode has ended (stored, or failed).
    pub fn is_over(&self) -> bool {
        !matches!(self.phase, Phase::Running(_))
    }

    /// Once the episode is over, how: the state kept of it after the
    /// session gives its place back.
    /// Compact: the end's breakdown and user checks were in the last
    /// observation, and are stored with the conversation.
    pub fn ended_state(&self) -> Option<Value> {
        if !self.is_over() {
            return None;
        }
        let mut state = self.state();
        if let Some(end) = state["end"].as_object_mut() {
            end.remove("reward_breakdown");
            end.remove("user_checks");
        }
        Some(state)
    }

    /// The episode's tools in MCP's `tools/list` shape.
    pub fn mcp_tools(&self) -> Vec<Value> {
        self.tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "inputSchema": t.parameters}))
            .collect()
    }

    /// Take one action (an assistant message as JSON): the next observation.
    /// A wrong action is an `Invalid` that changes nothing; a step after
    /// the end is `Ended`; a failure of the episode ends it unstored.
    pub async fn step(&mut self, value: &Value) -> Result<Observation, SessionError> {
        let episode = match &mut self.phase {
            Phase::Running(episode) => episode,
            Phase::Done(end) => {
                return Err(SessionError::Ended {
                    termination: end.termination.clone(),
                    conversation_id: end.conversation_id,
                })
            }
            Phase::Failed { class, message } => {
                return Err(SessionError::Failed {
                    class: class.clone(),
                    message: message.clone(),
                })
            }
        };
        let action = Action::read(value, self.steps).map_err(|e| e.under("action"))?;
        let latency_ms = u64::try_from(self.answered.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.steps += 1;
        let stepped = episode
            .step(PolicyMessage {
                message: action.message,
                tokens: action.tokens,
                usage: action.usage,
                latency_ms,
            })
            .await;
        if let Err(e) = stepped {
            return Err(self.fail(e.class(), e.to_string()));
        }
        self.observe(false).await
    }

    /// The session's state (OpenEnv's `state`): ids, counts and, once it
    /// ended, how.
    pub fn state(&self) -> Value {
        let (done, end) = match &self.phase {
            Phase::Running(_) => (false, Value::Null),
            Phase::Done(end) => (true, end.json()),
            Phase::Failed { class, message } => (
                true,
                json!({"failed": {"class": class, "message": message}}),
            ),
        };
        let turns = match &self.phase {
            Phase::Running(episode) => episode.transcript().user_turns(),
            _ => 0,
        };
        json!({
            "episode_id": self.episode_id,
            "step_count": self.steps,
            "session_id": self.id,
            "job_id": self.item.job_id,
            "scenario_id": self.item.scenario_id,
            "persona_id": self.item.persona_id,
            "seed": self.item.seed as u64,
            "sample": self.item.sample,
            "user_turns": turns,
            "done": done,
            "end": end,
        })
    }

    /// The observation of what happened since the caller was last
    /// answered; at the end, the episode verified and stored.
    async fn observe(&mut self, first: bool) -> Result<Observation, SessionError> {
        let Phase::Running(episode) = &mut self.phase else {
            return Err(SessionError::NotStarted);
        };
        let messages = episode.take_new();
        let ended = episode.ended();
        let mut metadata = json!({
            "session_id": self.id,
            "episode_id": self.episode_id,
            "job_id": self.item.job_id,
            "scenario_id": self.item.scenario_id,
            "persona_id": self.item.persona_id,
            "seed": self.item.seed as u64,
            "sample": self.item.sample,
            "step": self.steps,
        });
        let end = match ended {
            None => None,
            Some(_) => Some(self.store_end().await?),
        };
        if let (Some(end), Some(map)) = (&end, metadata.as_object_mut()) {
            if let Value::Object(fields) = end.json() {
                map.extend(fields);
            }
        }
        self.answered = Instant::now();
        Ok(Observation {
            messages,
            tools: first.then(|| self.tools.clone()),
            done: end.is_some(),
            reward: end.as_ref().and_then(|e| e.reward),
            metadata,
        })
    }

    /// The ended episode verified, recorded and stored: how it ended.
    async fn store_end(&mut self) -> Result<End, SessionError> {
        let Phase::Running(episode) = std::mem::replace(
            &mut self.phase,
            Phase::Failed {
                class: "internal".into(),
                message: "the session was being stored".into(),
            },
        ) else {
            return Err(SessionError::NotStarted);
        };
        let user_model = episode.user_model().to_string();
        let episode = match episode.finish().await {
            Ok(episode) => episode,
            Err(e) => return Err(self.fail(e.class(), e.to_string())),
        };
        let recorded = Recorded {
            episode,
            persona_knobs: std::mem::take(&mut self.knobs),
            policy_model: &self.model,
            user_model: &user_model,
            started_at: self.started_at,
        };
        let generation = &self.host.generation;
        let outcome = generation
            .record(
                &self.item,
                &self.scenario,
                &self.persona,
                &self.basis,
                recorded,
            )
            .await;
        let (conversation, judgments) = match outcome {
            Outcome::Conversation(c) => (*c, Vec::new()),
            Outcome::Judged(c, judgments) => (*c, judgments),
            Outcome::Failed { class, message } => return Err(self.fail(&class, message)),
            Outcome::Finished | Outcome::Proposal(_) => {
                return Err(self.fail(
                    "internal",
                    "the episode was recorded as something other than a conversation".into(),
                ))
            }
        };
        let new_item = NewItem {
            key: self.item.key.clone(),
            scenario_id: self.item.scenario_id.clone(),
            persona_id: self.item.persona_id.clone(),
            sample: self.item.sample,
            seed: self.item.seed,
        };
        let store = &self.host.store;
        let stored = match store
            .store_rollout(self.item.job_id, &new_item, &conversation)
            .await
        {
            Ok(Some(id)) => id,
            Ok(None) => {
                return Err(self.fail("store", format!("item key '{}' is taken", self.item.key)))
            }
            Err(e) => {
                self.phase = Phase::Failed {
                    class: "store".into(),
                    message: "the store failed".into(),
                };
                return Err(e.into());
            }
        };
        for mut judgment in judgments {
            judgment.conversation_a = stored;
            if let Err(e) = store.save_judgment(&judgment).await {
                tracing::warn!(
                    conversation = stored,
                    judge = %judgment.judge_name,
                    "the reward judge's judgment was not stored: {e}"
                );
            }
        }
        let end = End {
            termination: conversation.termination.clone(),
            reward: conversation.reward,
            reward_breakdown: conversation.reward_breakdown.clone(),
            user_checks: conversation.user_checks.clone().unwrap_or(Value::Null),
            conversation_id: stored,
            job_id: self.item.job_id,
        };
        self.phase = Phase::Done(end.clone());
        Ok(end)
    }

    /// End the session as failed (nothing stored): the error to answer.
    fn fail(&mut self, class: &str, message: String) -> SessionError {
        tracing::warn!(session = %self.id, class, "stepped session failed: {message}");
        self.phase = Phase::Failed {
            class: class.to_string(),
            message: message.clone(),
        };
        SessionError::Failed {
            class: class.to_string(),
            message,
        }
    }
}
