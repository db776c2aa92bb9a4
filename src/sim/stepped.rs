//! A stepped episode: a conversation whose policy turns the caller writes,
//! one assistant message at a time (a trainer generating with its own
//! engine, an evaluation harness). Built from the same parts as
//! [`super::run_episode`]: the opening, the simulated user's turn (its
//! prompt, tools and control tokens), tool calls run on the session, max
//! turns and steps, and verification at the end.

use std::sync::Arc;

use crate::config::Opener;
use crate::env::{Environment, Session};
use crate::llm::message::Message;
use crate::llm::Usage;
use crate::persona::Scenario;
use crate::token_ids::TokenIds;

use super::episode::{begin, finish, user_turn, Begun, EpisodeState};
use super::policy::run_tool_calls;
use super::transcript::{Author, Recorded, Transcript};
use super::{Episode, EpisodeError, EpisodeSpec, Termination, UserSimulator};

/// What a stepped episode is run with: a batch episode's spec, owned, since
/// the episode outlives the request that opened it.
#[derive(Debug, Clone)]
pub struct SteppedSpec {
    pub scenario: Arc<Scenario>,
    pub seed: u64,
    pub policy_prompt: Arc<str>,
    pub opener: Opener,
    pub greeting: Arc<str>,
    pub max_turns: u32,
    /// Messages with tool calls the policy may write in one turn before the
    /// conversation ends with `max_steps` (the batch policy's model calls).
    pub max_steps_per_turn: u32,
    pub simulated_user: bool,
}

impl SteppedSpec {
    fn episode(&self) -> EpisodeSpec<'_> {
        EpisodeSpec {
            scenario: &self.scenario,
            seed: self.seed,
            policy_prompt: self.policy_prompt.clone(),
            opener: self.opener,
            greeting: &self.greeting,
            max_turns: self.max_turns,
            simulated_user: self.simulated_user,
        }
    }
}

/// One message the policy wrote: text, tool calls or both, with what the
/// caller knows of its generation.
#[derive(Debug, Clone, PartialEq)]
pub struct PolicyMessage {
    /// An assistant message.
    pub message: Message,
    /// The generation's token ids and log probabilities, when the caller
    /// sends them: kept on the stored turn untouched.
    pub tokens: Option<Arc<TokenIds>>,
    /// The generation's token counts, when the caller sends them.
    pub usage: Option<Usage>,
    /// How long the caller took to write it (since it was shown the last
    /// observation).
    pub latency_ms: u64,
}

/// A conversation in progress whose policy is the caller.
pub struct SteppedEpisode {
    spec: SteppedSpec,
    user: UserSimulator,
    session: Box<dyn Session>,
    state: EpisodeState,
    /// Messages with tool calls written in the policy's current turn.
    steps_in_turn: u32,
    /// How much of the transcript the caller has been shown.
    shown: usize,
    ended: Option<Termination>,
}

impl SteppedEpisode {
    /// Open the environment session and write the opening; when the user
    /// speaks first, the user's first turn too (which may already end it).
    pub async fn open(
        spec: SteppedSpec,
        user: UserSimulator,
        env: &dyn Environment,
    ) -> Result<SteppedEpisode, EpisodeError> {
        let Begun {
            mut session,
            mut state,
            policy_next,
        } = begin(&spec.episode(), env).await?;
        let ended = if policy_next {
            None
        } else {
            user_turn(&spec.episode(), &user, session.as_mut(), &mut state).await?
        };
        Ok(SteppedEpisode {
            spec,
            user,
            session,
            state,
            steps_in_turn: 0,
            shown: 0,
            ended,
        })
    }

    /// Why it ended, once it has.
    pub fn ended(&self) -> Option<Termination> {
        self.ended
    }

    pub fn spec(&self) -> &SteppedSpec {
        &self.spec
    }

    pub fn transcript(&self) -> &Transcript {
        &self.state.transcript
    }

    /// The user simulator's model, as stored with the conversation.
    pub fn user_model(&self) -> &str {
        self.user.model_name()
    }

    /// Take one message of the policy: its tool calls run on the session
    /// (their results come next), or its text answers the user (whose
    /// reply comes next), or the conversation ends. `Some` once it has
    /// ended; a step after the end changes nothing.
    pub async fn step(
        &mut self,
        action: PolicyMessage,
    ) -> Result<Option<Termination>, EpisodeError> {
        if self.ended.is_some() {
            return Ok(self.ended);
        }
        let calls = action.message.tool_calls.clone();
        let has_text = !action.message.content.trim().is_empty();
        self.state.add_policy_call(
            action.usage.unwrap_or(Usage {
                prompt_tokens: 0,
                completion_tokens: 0,
            }),
            action.latency_ms,
        );
        self.state.transcript.messages.push(Recorded {
            message: action.message,
            author: Author::Policy,
            usage: action.usage,
            latency_ms: Some(action.latency_ms),
            tokens: action.tokens,
        });
        // The caller's own message is never shown back to it.
        self.shown = self.state.transcript.messages.len();
        let end = if !calls.is_empty() {
            run_tool_calls(&mut self.state.transcript, self.session.as_mut(), &calls).await?;
            self.steps_in_turn += 1;
            (self.steps_in_turn >= self.spec.max_steps_per_turn).then_some(Termination::MaxSteps)
        } else if !has_text {
            Some(Termination::PolicyError)
        } else {
            self.steps_in_turn = 0;
            user_turn(
                &self.spec.episode(),
                &self.user,
                self.session.as_mut(),
                &mut self.state,
            )
            .await?
        };
        self.ended = end;
        Ok(end)
    }

    /// What the policy has not been shown yet, in its view: the opening,
    /// tool results, the user's replies (never the user's own tool use,
    /// never the policy's own messages).
    pub fn take_new(&mut self) -> Vec<Message> {
        let new: Vec<Message> = self.state.transcript.messages[self.shown..]
            .iter()
            .filter(|r| !r.is_user_tool_use() && r.author != Author::Policy)
            .map(|r| r.message.clone())
            .collect();
        self.shown = self.state.transcript.messages.len();
        new
    }

    /// The ended conversation, verified. Call once [`Self::ended`] says it
    /// ended; a conversation still going is cut off as `cancelled`.
    pub async fn finish(self) -> Result<Episode, EpisodeError> {
        let termination = self.ended.unwrap_or(Termination::Cancelled);
        finish(&self.spec.episode(), self.session, self.state, termination).await
    }
}
