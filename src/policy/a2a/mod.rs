//! The `a2a` kind: an Agent2Agent (A2A) server plays the policy, reached
//! over JSON-RPC 2.0 in the version its card lists (A2A 0.3's
//! `message/send`, 1.0's `SendMessage`), streamed (`message/stream`,
//! `SendStreamingMessage`) when `[policy.a2a] stream` says so.
//!
//! Per conversation, each policy turn sends the user's words the agent has
//! not heard ([`request::unheard_user_texts`]) as one message in the
//! conversation's `contextId` (the agent's, kept from its first answer), and
//! in its open task while the agent waits for the user (`input-required`).
//! The answer ([`response`], [`stream`], put together by [`reply`]) is a
//! Task or a Message: its text is the policy's reply (none fails the item,
//! `empty_reply`); the tool calls the agent reports in data parts (of the
//! status, the turn's history, the artifacts; read by
//! [`crate::policy::trace`]) are kept as the policy's calls with
//! `agent_tool` results (and replayed on sparring's session with
//! `replay_agent_tools`), its token usage as the turn's; a task the agent
//! leaves `submitted` or `working` is asked after (`tasks/get`, `GetTask`)
//! up to `max_steps_per_turn` times.
//! What each task state means is [`state`]'s. An agent that fails (a failed,
//! rejected or canceled task, one waiting for authentication, a JSON-RPC
//! error) fails the item with class `agent_failed`; an answer that is not
//! A2A is `malformed_response`; HTTP failures keep their classes. None of
//! them is a reward.
//!
//! Before the first conversation of a job ([`Policy::prepare`]) the agent
//! card ([`card`]) is read and checked, unless `read_card = false`: it
//! chooses the version, and a card sparring cannot speak to refuses the job
//! at its setup; its name names the policy.
//!
//! The client is written here rather than taken from an A2A crate (ra2a,
//! a2a-rs, a2a-rust): each brings its own HTTP client, so its calls would
//! bypass the endpoint's raw calls ([`crate::llm::ChatModel::call_raw`]) and
//! with them the endpoint's limits, retry policy, error classes, telemetry and
//! the egress check on its base_url; and sparring needs two methods of the
//! protocol, read leniently, not its types for servers or gRPC.
//! Every call goes below the endpoint's base_url: the card's `url` is never
//! followed.

pub mod card;
pub mod reply;
pub mod request;
pub mod response;
pub mod state;
pub mod stream;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use http::header::{ACCEPT, CONTENT_TYPE, COOKIE};
use http::{HeaderName, HeaderValue};
use tokio::sync::OnceCell;

use crate::config::policy::a2a::A2aVersion;
use crate::config::policy::{A2aKeys, TraceFormat};
use crate::llm::message::Message;
use crate::llm::raw::RawRequest;
use crate::llm::{ChatModel, LlmError};
use crate::sim::episode_error::EpisodeError;
use crate::sim::policy::{record_agent_tools, PolicySession, NO_TOKENS};
use crate::sim::transcript::Author;
use crate::sim::{Policy, PolicyTurn, TurnEnd};

use super::{empty_reply, failed, malformed};
use card::Card;
use reply::AgentReply;
use response::ResponseError;
use state::{Outcome, TaskState};

/// The longest wait between two asks after a task still at work.
const MAX_POLL_DELAY: Duration = Duration::from_secs(2);

/// At most this many characters of what a failed task said go into the
/// item's error.
const SAID_CHARS: usize = 200;

/// How the job speaks to its agent: the version and whether it streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Speech {
    pub version: A2aVersion,
    pub stream: bool,
}

pub struct A2aAgent {
    config: A2aKeys,
    model: Arc<dyn ChatModel>,
    /// Asks after a task still at work, at most, per turn.
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
    pub fn new(config: A2aKeys, model: Arc<dyn ChatModel>, max_steps: u32, replay: bool) -> Self {
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

    /// The card, read and checked once per job (with `read_card`).
    async fn card(&self) -> Result<&Card, EpisodeError> {
        let read = self
            .card
            .get_or_try_init(|| async {
                let path = self.config.card_path().to_string();
                match self.model.call_raw(RawRequest::get(path.clone())).await {
                    Ok(reply) => {
                        Ok(card::check(&reply.body).map_err(|p| about_card_body(&path, p)))
                    }
                    Err(e) if e.is_retryable() => Err(e),
                    Err(e) => Ok(Err(e)),
                }
            })
            .await;
        match read {
            Ok(Ok(card)) => Ok(card),
            Ok(Err(e)) => Err(failed(about_card(self.config.card_path(), e.clone()))),
            Err(e) => Err(failed(about_card(self.config.card_path(), e))),
        }
    }

    /// The version and the kind of call of every message: from the card, as
    /// `[policy.a2a]` asks, or from `[policy.a2a]` alone without a card. A
    /// card that lists no version sparring speaks, not the one asked for,
    /// or that says the agent does not stream when streaming is asked for,
    /// is refused (`malformed_response`).
    pub async fn speech(&self) -> Result<Speech, EpisodeError> {
        if !self.config.read_card() {
            return Ok(Speech {
                version: self.config.version.unwrap_or(A2aVersion::V03),
                stream: self.config.stream(),
            });
        }
        let card = self.card().await?;
        let version = card
            .version(self.config.version)
            .map_err(|problem| failed(about_card_body(self.config.card_path(), problem)))?;
        if self.config.stream() && !card.streams {
            return Err(failed(about_card_body(
                self.config.card_path(),
                "says the agent does not stream (capabilities.streaming is not true), but \
                 [policy.a2a] stream = true; set stream = false"
                    .into(),
            )));
        }
        Ok(Speech {
            version,
            stream: self.config.stream(),
        })
    }

    /// One JSON-RPC exchange, with the conversation's cookies, its answer
    /// put into `reply` (what the turn's answers said so far); a streamed
    /// answer (`text/event-stream`) is read whole.
    async fn call(
        &self,
        body: String,
        speech: Speech,
        streamed: bool,
        session: &mut PolicySession,
        reply: &mut AgentReply,
    ) -> Result<(), EpisodeError> {
        let mut request = RawRequest::post(self.config.path().to_string(), body);
        if let Some(cookie) = session
            .cookie_header()
            .and_then(|c| HeaderValue::from_str(&c).ok())
        {
            request.headers.push((COOKIE, cookie));
        }
        if speech.version == A2aVersion::V10 {
            request.headers.push((
                HeaderName::from_static(request::VERSION_HEADER),
                HeaderValue::from_static("1.0"),
            ));
        }
        if streamed {
            request
                .headers
                .push((ACCEPT, HeaderValue::from_static("text/event-stream")));
        }
        let answer = self.model.call_raw(request).await.map_err(failed)?;
        session.keep_set_cookies(&answer.headers);
        let content_type = answer
            .headers
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok());
        let read = if super::sse::is_event_stream(content_type) {
            stream::read_into(&answer.body, reply)
        } else {
            response::read_into(&answer.body, reply)
        };
        read.map_err(|e| match e {
            ResponseError::Malformed(m) => malformed(m),
            ResponseError::Rpc { code, message } => {
                // The agent's own words stay in the operator's log: a job
                // may name any URL, and its errors go to whoever sent it.
                tracing::debug!(code, %message, "the agent answered a JSON-RPC error");
                failed(LlmError::AgentFailed(format!(
                    "JSON-RPC error {code} ({}){}",
                    response::rpc_meaning(code),
                    self.hint(code, speech)
                )))
            }
        })
    }

    /// What to change, for an error that says the agent does not take what
    /// was sent.
    fn hint(&self, code: i64, speech: Speech) -> String {
        if !matches!(code, -32601 | -32004) {
            return String::new();
        }
        let sent = request::send_method(speech.version, speech.stream);
        let streams = matches!(self.card.get(), Some(Ok(card)) if card.streams);
        if !speech.stream && streams {
            format!(
                "; sparring sent {sent} and the card says the agent streams: set [policy.a2a] \
                 stream = true"
            )
        } else {
            format!("; sparring sent {sent} (A2A {})", speech.version.as_str())
        }
    }
}

/// A card that sparring does not take, saying where it was.
fn about_card_body(path: &str, problem: String) -> LlmError {
    LlmError::Malformed(format!("the agent card at {path} {problem}"))
}

/// A card that could not be read, saying so.
fn about_card(path: &str, error: LlmError) -> LlmError {
    let about = |m: String| {
        format!(
            "reading the agent card ({path}): {m}; set [policy.a2a] card_path to where the \
             agent serves it, or read_card = false for an agent that serves none"
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

/// The wait before the `n`th ask (from 0): 250 ms, doubling, at most
/// [`MAX_POLL_DELAY`].
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

    async fn prepare(&self) -> Result<(), EpisodeError> {
        self.speech().await.map(|_| ())
    }

    async fn turn(&self, turn: PolicyTurn<'_>) -> Result<TurnEnd, EpisodeError> {
        let speech = self.speech().await?;
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
        let body = request::message_send(&request::Send {
            version: speech.version,
            stream: speech.stream,
            id: self.request_id(),
            message_id: &message_id,
            texts: &texts,
            context_id: policy_session.context_id.as_deref(),
            task_id: policy_session.task_id.as_deref(),
        });
        let mut reply = AgentReply::default();
        self.call(body, speech, speech.stream, policy_session, &mut reply)
            .await?;
        let mut polls = 0;
        // A Message is an answer outside any task.
        let (state, waits_for_user) = loop {
            let Some(state) = reply.state else {
                break (None, false);
            };
            match state.outcome() {
                Outcome::Answered { waits_for_user } => break (Some(state), waits_for_user),
                Outcome::Failed => {
                    let said = reply.take(&policy_session.reported).text;
                    return Err(failed(failure(state, &said)));
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
            // The task as asked after says its state again; what the turn's
            // earlier answers reported (a stream's messages, their usage)
            // stays, each message read once.
            let ask = request::tasks_get(speech.version, self.request_id(), &task);
            self.call(ask, speech, false, policy_session, &mut reply)
                .await?;
        };
        tracing::trace!(state = state.map(TaskState::as_str), "the agent answered");
        // The artifacts of earlier answers of the same task were read then.
        if reply.task_id.is_none() || reply.task_id != policy_session.task_id {
            policy_session.reported.clear();
        }
        let taken = reply.take(&policy_session.reported);
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
        let records = super::trace::read(&taken.parts, TraceFormat::A2aParts);
        record_agent_tools(transcript, session, records, self.replay).await?;
        let parts = serde_json::Value::Array(taken.parts);
        super::trace::unread::note(
            policy_session,
            transcript,
            super::trace::unread::tool_use_at(&parts).as_deref(),
            || {
                "sparring reads tool calls from A2A data parts in the shapes \
                 docs/agents-under-test.md lists (a call with its name and arguments); tool \
                 results alone cannot be scored by actions"
                    .to_string()
            },
        );
        if taken.text.trim().is_empty() {
            return Err(empty_reply(match state {
                Some(state) => format!(
                    "the agent's task ended {} with no text (none in its status message or its \
                     artifacts)",
                    state.as_str()
                ),
                None => "the agent answered a message without text".to_string(),
            }));
        }
        transcript.push_generated(
            Message::assistant(taken.text),
            Author::Policy,
            taken.usage.unwrap_or(NO_TOKENS),
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
        let e = about_card(
            crate::config::policy::a2a::CARD_PATH,
            LlmError::Rejected {
                status: 404,
                message: "an empty body".into(),
            },
        );
        assert_eq!(e.class(), "rejected");
        assert!(e.to_string().contains("read_card = false"), "{e}");
    }
}
