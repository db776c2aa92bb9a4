//! The `a2a` kind: an Agent2Agent (A2A) server plays the policy, reached
//! over JSON-RPC 2.0 (`message/send`, A2A 0.3's method, which a2a-sdk 1.x
//! servers also answer in their 0.3 compatibility).
//!
//! Per conversation, each policy turn sends the user's words the agent has
//! not heard ([`request::unheard_user_texts`]) as one message in the
//! conversation's `contextId` (the agent's, kept from its first answer), and
//! in its open task while the agent waits for the user (`input-required`).
//! The answer ([`response`]) is a Task or a Message: its text is the policy's
//! reply; the tool calls the agent reports in data parts ([`trace`]) are kept
//! as the policy's calls with `agent_tool` results (and replayed on sparring's
//! session with `replay_agent_tools`); a task the agent leaves `submitted` or
//! `working` is asked after (`tasks/get`) up to `max_steps_per_turn` times.
//! What each task state means is [`state`]'s. An agent that fails (a failed,
//! rejected or canceled task, one waiting for authentication, a JSON-RPC
//! error) fails the item with class `agent_failed`; an answer that is not
//! A2A is `malformed_response`; HTTP failures keep their classes. None of
//! them is a reward.
//!
//! Before the first conversation of a job the agent card ([`card`]) is read
//! and checked, unless `read_card = false`; its name names the policy.
//!
//! The client is written here rather than taken from an A2A crate (ra2a,
//! a2a-rs, a2a-rust): each brings its own HTTP client, so its calls would
//! bypass the endpoint's raw calls ([`crate::llm::ChatModel::call_raw`]) and
//! with them the endpoint's limits, retry policy, error classes, telemetry and
//! the egress check on its base_url; and sparring needs two methods of the
//! protocol, read leniently, not its types for servers, streaming or gRPC.
//! Every call goes below the endpoint's base_url: the card's `url` is never
//! followed.

pub mod card;
pub mod request;
pub mod response;
pub mod state;
pub mod trace;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use http::header::COOKIE;
use http::HeaderValue;
use tokio::sync::OnceCell;

use crate::config::policy::A2aConfig;
use crate::llm::message::Message;
use crate::llm::raw::RawRequest;
use crate::llm::{ChatModel, LlmError};
use crate::sim::episode::EpisodeError;
use crate::sim::policy::{record_agent_tools, PolicySession, NO_TOKENS};
use crate::sim::transcript::Author;
use crate::sim::{Policy, PolicyTurn, TurnEnd};

use super::{failed, malformed};
use card::Card;
use response::{AgentReply, ResponseError};
use state::{Outcome, TaskState};

/// The longest wait between two `tasks/get` of a task still at work.
const MAX_POLL_DELAY: Duration = Duration::from_secs(2);

/// At most this many characters of what a failed task said go into the
/// item's error.
const SAID_CHARS: usize = 200;

pub struct A2aAgent {
    config: A2aConfig,
    model: Arc<dyn ChatModel>,
    /// `tasks/get` calls at most, per turn, for a task still at work.
    max_steps: u32,
    replay: bool,
    /// The name before (or without) a card: `a2a:` and the endpoint's model.
    fallback_label: String,
    /// The card, read once per job; a card that cannot be read for a
    /// transient reason is not kept, and the next conversation reads again.
    card: OnceCell<Result<Card, LlmError>>,
    next_id: AtomicU64,
}

impl A2aAgent {
    pub fn new(config: A2aConfig, model: Arc<dyn ChatModel>, max_steps: u32, replay: bool) -> Self {
        A2aAgent {
            fallback_label: format!("a2a:{}", model.model()),
            config,
            model,
            max_steps,
            replay,
            card: OnceCell::new(),
            next_id: AtomicU64::new(1),
        }
    }

    fn request_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// Read and check the card, once per job (with `read_card`).
    async fn check_card(&self) -> Result<(), EpisodeError> {
        if !self.config.read_card {
            return Ok(());
        }
        let read = self
            .card
            .get_or_try_init(|| async {
                match self.model.call_raw(RawRequest::get(card::PATH)).await {
                    Ok(reply) => Ok(card::check(&reply.body).map_err(|problem| {
                        LlmError::Malformed(format!("the agent card at {} {problem}", card::PATH))
                    })),
                    Err(e) if e.is_retryable() => Err(e),
                    Err(e) => Ok(Err(e)),
                }
            })
            .await;
        match read {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => Err(failed(about_card(e.clone()))),
            Err(e) => Err(failed(about_card(e))),
        }
    }

    /// One JSON-RPC exchange, with the conversation's cookies.
    async fn call(
        &self,
        body: String,
        session: &mut PolicySession,
    ) -> Result<AgentReply, EpisodeError> {
        let mut request = RawRequest::post(self.config.path.clone(), body);
        if let Some(cookie) = session
            .cookie_header()
            .and_then(|c| HeaderValue::from_str(&c).ok())
        {
            request.headers.push((COOKIE, cookie));
        }
        let reply = self.model.call_raw(request).await.map_err(failed)?;
        session.keep_set_cookies(&reply.headers);
        response::read(&reply.body).map_err(|e| match e {
            ResponseError::Malformed(m) => malformed(m),
            ResponseError::Rpc { code, message } => {
                // The agent's own words stay in the operator's log: a job
                // may name any URL, and its errors go to whoever sent it.
                tracing::debug!(code, %message, "the agent answered a JSON-RPC error");
                failed(LlmError::AgentFailed(format!(
                    "JSON-RPC error {code} ({})",
                    response::rpc_meaning(code)
                )))
            }
        })
    }
}

/// A card that could not be read, saying so.
fn about_card(error: LlmError) -> LlmError {
    let about = |m: String| {
        format!(
            "reading the agent card ({}): {m}; set [policy.a2a] read_card = false for an \
             agent that serves none",
            card::PATH
        )
    };
    match error {
        LlmError::Rejected { status, message } => LlmError::Rejected {
            status,
            message: about(message),
        },
        LlmError::Server { status, message } => LlmError::Server {
            status,
            message: about(message),
        },
        LlmError::Connection(m) => LlmError::Connection(about(m)),
        LlmError::Unanswered(m) => LlmError::Unanswered(about(m)),
        other => other,
    }
}

/// The wait before the `n`th `tasks/get` (from 0): 250 ms, doubling, at
/// most [`MAX_POLL_DELAY`].
fn poll_delay(n: u32) -> Duration {
    (Duration::from_millis(250) * 2u32.saturating_pow(n.min(8))).min(MAX_POLL_DELAY)
}

/// The failure a failed state is, with what the agent said of it.
fn failure(state: TaskState, said: &str) -> LlmError {
    let said: String = said.trim().chars().take(SAID_CHARS).collect();
    LlmError::AgentFailed(if said.is_empty() {
        state.failure().to_string()
    } else {
        format!("{}: {said}", state.failure())
    })
}

#[async_trait]
impl Policy for A2aAgent {
    fn name(&self) -> &str {
        match self.card.get() {
            Some(Ok(card)) => &card.label,
            _ => &self.fallback_label,
        }
    }

    async fn turn(&self, turn: PolicyTurn<'_>) -> Result<TurnEnd, EpisodeError> {
        self.check_card().await?;
        let PolicyTurn {
            transcript,
            session,
            policy_session,
            ..
        } = turn;
        let texts = request::unheard_user_texts(transcript);
        if texts.is_empty() {
            return Err(failed(LlmError::InvalidRequest(
                "nothing to send the agent: no user message since its last reply (kind = \
                 \"a2a\" sends the user's words, so the user speaks before the agent does)"
                    .into(),
            )));
        }
        let started = Instant::now();
        let message_id = format!("{}-{:016x}", policy_session.id, rand::random::<u64>());
        let body = request::message_send(
            self.request_id(),
            &message_id,
            &texts,
            policy_session.context_id.as_deref(),
            policy_session.task_id.as_deref(),
        );
        let mut reply = self.call(body, policy_session).await?;
        let mut polls = 0;
        // A Message is an answer outside any task.
        let (state, waits_for_user) = loop {
            let Some(state) = reply.state else {
                break (None, false);
            };
            match state.outcome() {
                Outcome::Answered { waits_for_user } => break (Some(state), waits_for_user),
                Outcome::Failed => {
                    return Err(failed(failure(state, &reply.texts.join("\n"))));
                }
                Outcome::Pending => {}
            }
            let Some(task) = reply.task_id.clone() else {
                return Err(malformed(format!(
                    "the agent's task is {} but has no id to ask after",
                    state.as_str()
                )));
            };
            if polls >= self.max_steps {
                tracing::debug!(polls, "the agent's task is still at work");
                return Err(failed(LlmError::Timeout(started.elapsed())));
            }
            tokio::time::sleep(poll_delay(polls)).await;
            polls += 1;
            reply = self
                .call(request::tasks_get(self.request_id(), &task), policy_session)
                .await?;
        };
        tracing::trace!(state = state.map(TaskState::as_str), "the agent answered");
        // The artifacts of earlier answers of the same task were read then.
        if reply.task_id.is_none() || reply.task_id != policy_session.task_id {
            policy_session.reported.clear();
        }
        let (text, data) = reply.new_parts(&policy_session.reported);
        if reply.context_id.is_some() {
            policy_session.context_id = reply.context_id.take();
        }
        if waits_for_user {
            policy_session
                .reported
                .extend(reply.artifact_keys().map(str::to_string));
            policy_session.task_id = reply.task_id.take();
        } else {
            policy_session.task_id = None;
            policy_session.reported.clear();
        }
        let latency_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let records = trace::tool_records(&data);
        record_agent_tools(transcript, session, records, self.replay).await?;
        if text.trim().is_empty() {
            return Ok(TurnEnd::Empty);
        }
        transcript.push_generated(
            Message::assistant(text),
            Author::Policy,
            NO_TOKENS,
            latency_ms,
            None,
        );
        Ok(TurnEnd::Answered)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn polls_wait_longer_each_time_up_to_two_seconds() {
        assert_eq!(poll_delay(0), Duration::from_millis(250));
        assert_eq!(poll_delay(2), Duration::from_secs(1));
        assert_eq!(poll_delay(3), MAX_POLL_DELAY);
        assert_eq!(poll_delay(u32::MAX), MAX_POLL_DELAY);
    }

    #[test]
    fn a_failed_state_keeps_a_short_excerpt_of_what_the_agent_said() {
        let e = failure(TaskState::Failed, &"x".repeat(500));
        assert_eq!(e.class(), "agent_failed");
        assert!(e.to_string().contains("ended failed: xxx"), "{e}");
        assert!(e.to_string().len() < 300, "{e}");
        let e = failure(TaskState::Rejected, " ");
        assert_eq!(
            e.to_string(),
            "the agent failed: the agent rejected the task"
        );
    }

    #[test]
    fn a_card_read_that_was_refused_says_it_was_the_card() {
        let e = about_card(LlmError::Rejected {
            status: 404,
            message: "an empty body".into(),
        });
        assert_eq!(e.class(), "rejected");
        assert!(e.to_string().contains("read_card = false"), "{e}");
    }
}
