//! `run_episode`: one conversation between the policy and the simulated user,
//! against a fresh environment session, verified at the end.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::config::Opener;
use crate::env::{EnvError, Environment, InitialState, Session, ToolCall};
use crate::llm::message::{Message, Role};
use crate::llm::Usage;
use crate::persona::Scenario;
use crate::user_checks::UserOutput;
use crate::verify::probe_spec::Family;
use crate::verify::probes::{self, Probe, ProbeOutput};
use crate::verify::{actions, held, rules, Component, Verification};

pub use super::episode_error::EpisodeError;
use super::policy::{Policy, PolicySession, PolicyTurn, TurnEnd};
use super::termination::Termination;
use super::transcript::{Author, Transcript};
use super::user_simulator::{Signal, UserSimulator, UserTurn};

/// What an episode is run with, besides the participants.
pub struct EpisodeSpec<'a> {
    pub scenario: &'a Scenario,
    pub seed: u64,
    /// The policy's rendered system prompt, one text for the whole job.
    pub policy_prompt: Arc<str>,
    pub opener: Opener,
    pub greeting: &'a str,
    /// Turns of the simulated user before the conversation ends with `max_turns`.
    pub max_turns: u32,
    /// Whether a simulated user takes part. Without one the scenario's prelude
    /// (or `user.opening`) is the whole request and the conversation ends when
    /// the policy answers.
    pub simulated_user: bool,
}

/// The usage entry of a remote environment's requests (not a model role).
pub const ENV_USAGE: &str = "env";

/// Model calls, tokens and time spent by one role.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RoleUsage {
    pub calls: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub latency_ms: u64,
}

impl RoleUsage {
    fn add(&mut self, calls: u64, usage: Usage, latency_ms: u64) {
        self.calls += calls;
        self.prompt_tokens += usage.prompt_tokens;
        self.completion_tokens += usage.completion_tokens;
        self.latency_ms += latency_ms;
    }
}

#[derive(Debug, Clone)]
pub struct Episode {
    pub transcript: Transcript,
    pub termination: Termination,
    /// `None` when the termination says nothing about the policy (e.g. `user_error`).
    pub verification: Option<Verification>,
    /// Usage by role name (`policy`, `user`, and `env`: requests to a remote
    /// environment and the time spent waiting for them).
    pub usage: BTreeMap<&'static str, RoleUsage>,
    /// What the user model wrote each turn, before its control token was cut
    /// off, for the fidelity checks.
    pub user_outputs: Vec<UserOutput>,
    /// What the policy warned of this conversation (an agent whose answers
    /// held tool use that no trace read).
    pub policy_warning: Option<String>,
}

/// One conversation, start to end. Its span names the scenario and seed (the item
/// span around it holds the item key), so every call logged under it says whose it was.
#[tracing::instrument(
    name = "episode",
    skip_all,
    fields(scenario = %spec.scenario.id, seed = spec.seed)
)]
pub async fn run_episode(
    spec: &EpisodeSpec<'_>,
    policy: &dyn Policy,
    user: &UserSimulator,
    env: &dyn Environment,
) -> Result<Episode, EpisodeError> {
    let scenario_id = spec.scenario.id.as_str();
    let Begun {
        mut session,
        mut state,
        mut policy_next,
    } = begin(spec, env).await?;
    let mut policy_session = PolicySession::new();

    let termination = loop {
        if !policy_next {
            if let Some(end) = user_turn(spec, user, session.as_mut(), &mut state).await? {
                break end;
            }
        }
        policy_next = false;

        let before = state.transcript.messages.len();
        let end = policy
            .turn(PolicyTurn {
                transcript: &mut state.transcript,
                session: session.as_mut(),
                tools: spec.scenario.tools.as_ref(),
                seed: spec.seed,
                scenario: scenario_id,
                policy_session: &mut policy_session,
            })
            .await?;
        let policy_usage = state.usage.entry("policy").or_default();
        for r in &state.transcript.messages[before..] {
            if let (Some(u), Some(ms)) = (r.usage, r.latency_ms) {
                policy_usage.add(1, u, ms);
            }
        }
        match end {
            TurnEnd::Answered => {}
            TurnEnd::OutOfSteps => break Termination::MaxSteps,
            TurnEnd::Empty => break Termination::PolicyError,
        }
    };
    let mut episode = finish(spec, session, state, termination).await?;
    episode.policy_warning = policy_session.warning.take();
    Ok(episode)
}

/// What an episode keeps as it goes: the transcript, usage by role, what
/// the user model wrote, and how many user turns the scenario itself gave.
#[derive(Debug, Default)]
pub(super) struct EpisodeState {
    pub transcript: Transcript,
    pub usage: BTreeMap<&'static str, RoleUsage>,
    pub user_outputs: Vec<UserOutput>,
    /// User turns of the opening (a prelude's or a scripted opening's):
    /// `max_turns` counts the simulated user's own after them.
    pub given_user_turns: usize,
}

impl EpisodeState {
    /// Count a policy generation recorded without going through a model
    /// of sparring's (a stepped session's caller wrote it).
    pub fn add_policy_call(&mut self, usage: Usage, latency_ms: u64) {
        self.usage
            .entry("policy")
            .or_default()
            .add(1, usage, latency_ms);
    }
}

/// An episode's session opened and its transcript begun.
pub(super) struct Begun {
    pub session: Box<dyn Session>,
    pub state: EpisodeState,
    /// Whether the policy speaks first (the opening ends with the user's
    /// words or a tool's); otherwise the simulated user does.
    pub policy_next: bool,
}

/// Open the episode's environment session and write the opening: the
/// policy's system prompt and greeting, or the dataset's prelude, and a
/// scripted opening of the user's.
pub(super) async fn begin(
    spec: &EpisodeSpec<'_>,
    env: &dyn Environment,
) -> Result<Begun, EpisodeError> {
    let init = InitialState {
        seed: spec.seed,
        data: spec.scenario.initial_state.clone(),
    };
    let planted = spec
        .scenario
        .probe
        .as_ref()
        .and_then(|p| p.planted.as_ref());
    let session = crate::env::planted::wrap(env.open(&init).await?, planted);
    let mut transcript = Transcript::default();
    let prelude = &spec.scenario.prelude;
    if prelude.is_empty() {
        transcript.push(Message::system(spec.policy_prompt.clone()), Author::System);
        // Without a simulated user nobody is greeted: the opening is the request.
        if spec.opener == Opener::Agent && spec.simulated_user {
            transcript.push(Message::assistant(spec.greeting), Author::System);
        }
    } else {
        // The dataset's own opening: its prompt and the user's words so far.
        for message in prelude {
            transcript.push(message.clone(), Author::System);
        }
    }
    // A scripted opening is the user's first message, verbatim.
    let opening = spec
        .scenario
        .user
        .opening
        .as_deref()
        .filter(|_| prelude.is_empty());
    if let Some(opening) = opening {
        transcript.push(Message::user(opening), Author::System);
    }
    let given_user_turns = transcript.user_turns();
    // After a prelude (or an opening) that ends with the user's words (or a
    // tool's), the policy speaks.
    let policy_next = opening.is_some()
        || prelude
            .last()
            .is_some_and(|m| matches!(m.role, Role::User | Role::Tool));
    Ok(Begun {
        session,
        state: EpisodeState {
            transcript,
            given_user_turns,
            ..EpisodeState::default()
        },
        policy_next,
    })
}

/// The turn after the policy answered: the simulated user's reply (with
/// its own tool calls on the way), or the end: without a simulated user
/// the policy's answer ends it, past `max_turns` it ends, and a control
/// token or a broken user ends it. `None`: the policy speaks next.
pub(super) async fn user_turn(
    spec: &EpisodeSpec<'_>,
    user: &UserSimulator,
    session: &mut dyn Session,
    state: &mut EpisodeState,
) -> Result<Option<Termination>, EpisodeError> {
    if !spec.simulated_user {
        return Ok(Some(Termination::PolicyAnswered));
    }
    let transcript = &mut state.transcript;
    if transcript.user_turns() - state.given_user_turns >= spec.max_turns as usize {
        return Ok(Some(Termination::MaxTurns));
    }
    let usage = &mut state.usage;
    let (turn, steps) = user
        .next(transcript, session, spec.seed, &spec.scenario.id)
        .await?;
    if steps.calls > 0 {
        usage
            .entry("user")
            .or_default()
            .add(steps.calls, steps.usage, steps.latency_ms);
    }
    let reply = match turn {
        UserTurn::Empty {
            usage: u,
            latency_ms,
        } => {
            usage.entry("user").or_default().add(2, u, latency_ms);
            return Ok(Some(Termination::UserError));
        }
        UserTurn::OutOfSteps => return Ok(Some(Termination::UserError)),
        UserTurn::Reply(reply) => reply,
    };
    usage
        .entry("user")
        .or_default()
        .add(1, reply.usage, reply.latency_ms);
    state.user_outputs.push(UserOutput {
        message: (!reply.text.is_empty()).then_some(transcript.messages.len()),
        raw: reply.raw.clone(),
        finish_reason: reply.finish_reason.clone(),
    });
    if !reply.text.is_empty() {
        transcript.push_generated(
            Message::user(reply.text.clone()),
            Author::User,
            reply.usage,
            reply.latency_ms,
            // The simulated user's words are never trained on.
            None,
        );
    }
    Ok(match reply.signal {
        Some(Signal::Stop) => Some(Termination::UserStop),
        Some(Signal::Transfer) => Some(Termination::UserTransfer),
        Some(Signal::OutOfScope) => Some(Termination::UserOutOfScope),
        None => None,
    })
}

/// The end of an episode: verified when its termination says something
/// about the policy (and its scenario is scored), with the environment's
/// usage added.
pub(super) async fn finish(
    spec: &EpisodeSpec<'_>,
    mut session: Box<dyn Session>,
    state: EpisodeState,
    termination: Termination,
) -> Result<Episode, EpisodeError> {
    let EpisodeState {
        transcript,
        mut usage,
        user_outputs,
        ..
    } = state;
    // `reward_basis = "none"`: generated, not scored; no reward is stored.
    let scored = !spec.scenario.evaluation.reward_basis.is_unscored();
    let verification = if termination.is_scored() && scored {
        let view = transcript.policy_view();
        let criteria = &spec.scenario.evaluation;
        // Before `verify`, which may close the session (NeMo Gym's does).
        let probed =
            if criteria.probes.is_empty() && !criteria.reward_basis.contains(&Component::Probes) {
                None
            } else {
                let outputs = run_probes(session.as_mut(), &criteria.probes).await?;
                Some(probes::score(&criteria.probes, &outputs))
            };
        let probe = match &spec.scenario.probe {
            Some(probe) => {
                let state = if probe.family == Family::Disclosure {
                    session.state().await?
                } else {
                    None
                };
                Some(held::score(probe, &criteria.actions, &view, state.as_ref()))
            }
            None => None,
        };
        let mut verification = session.verify(&view, criteria).await?;
        verification.add_scored(rules::score_all(criteria, &view));
        if let Some(score) = probed {
            verification.include(Component::Probes, score, &criteria.reward_basis);
        }
        if criteria.reward_basis.contains(&Component::Actions) {
            let score = actions::score(&criteria.actions, &view);
            verification.include(Component::Actions, score, &criteria.reward_basis);
        }
        if let Some(outcome) = probe {
            held::include(&mut verification, outcome, &criteria.reward_basis);
        }
        Some(verification)
    } else {
        None
    };
    let env = session.usage();
    if env.requests > 0 {
        let wait_ms = u64::try_from(env.wait.as_millis()).unwrap_or(u64::MAX);
        usage
            .entry(ENV_USAGE)
            .or_default()
            .add(env.requests, Usage::default(), wait_ms);
    }
    Ok(Episode {
        transcript,
        termination,
        verification,
        usage,
        user_outputs,
        policy_warning: None,
    })
}

/// Make each probe's call on the conversation's session ([`Session::probe`]).
/// A tool error is an output (the probe fails); the environment failing
/// fails the episode.
async fn run_probes(
    session: &mut dyn Session,
    probes: &[Probe],
) -> Result<Vec<ProbeOutput>, EnvError> {
    let mut outputs = Vec::with_capacity(probes.len());
    for (i, probe) in probes.iter().enumerate() {
        let call = ToolCall {
            id: format!("probe_{i}"),
            name: probe.tool.clone(),
            arguments: probe.arguments.to_string(),
        };
        outputs.push(session.probe(&call).await?);
    }
    Ok(outputs)
}
