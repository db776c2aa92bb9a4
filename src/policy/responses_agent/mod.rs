//! The `responses_agent` kind: a service that implements the OpenAI Responses
//! API contract as NeMo Gym's `remote_agent` defines it. Each call carries the
//! whole conversation so far (`input`, the job's policy prompt as
//! `instructions` unless `send_instructions = false`) and, unless
//! `offer_tools = false`, the environment's tools, which the agent may ask
//! sparring to run with unpaired `function_call`s ([`step`]). sparring runs
//! them on the conversation's session and calls again, until the agent
//! answers with an assistant message and no unpaired call, or the turn runs
//! out of `max_steps_per_turn` calls. The agent's own tool records are kept
//! in the transcript (results as `agent_tool`). Cookies the agent sets are
//! echoed on its later calls of the same conversation. An invalid Responses
//! object is a terminal failure of the item.

pub mod step;

use std::sync::Arc;
use std::time::Instant;

use async_trait::async_trait;
use http::header::COOKIE;
use http::HeaderValue;

use crate::config::policy::ResponsesAgentKeys;
use crate::env::ToolSpec;
use crate::llm::message::Message;
use crate::llm::raw::RawRequest;
use crate::llm::responses::to_request;
use crate::llm::wire::Sampling;
use crate::llm::{ChatModel, ChatRequest, LlmError, Role};
use crate::sim::episode_error::EpisodeError;
use crate::sim::policy::{record_agent_tools, run_tool_calls};
use crate::sim::{Author, Policy, PolicySession, PolicyTurn, TurnEnd};

pub struct ResponsesAgent {
    config: ResponsesAgentKeys,
    endpoint: Arc<dyn ChatModel>,
    tools: Arc<[ToolSpec]>,
    max_steps: u32,
    replay: bool,
    name: String,
}

impl ResponsesAgent {
    pub fn new(
        config: ResponsesAgentKeys,
        endpoint: Arc<dyn ChatModel>,
        tools: Arc<[ToolSpec]>,
        max_steps: u32,
        replay: bool,
    ) -> Self {
        let name = format!("responses_agent:{}", endpoint.model());
        ResponsesAgent {
            config,
            endpoint,
            tools,
            max_steps,
            replay,
            name,
        }
    }

    /// The body of one call: the conversation so far as Responses input.
    fn body(&self, turn: &PolicyTurn<'_>, tools: &Arc<[ToolSpec]>) -> Result<String, EpisodeError> {
        let mut messages = turn.transcript.policy_view();
        if !self.config.send_instructions() {
            if let Some(first) = messages.first() {
                if first.role == crate::llm::message::Role::System {
                    messages.remove(0);
                }
            }
        }
        let request = ChatRequest {
            role: Role::Policy,
            messages,
            tools: if self.config.offer_tools() {
                tools.clone()
            } else {
                Arc::from(Vec::new())
            },
            ..ChatRequest::default()
        };
        let sampling = Sampling {
            temperature: None,
            top_p: None,
            max_tokens: None,
        };
        serde_json::to_string(&to_request(self.endpoint.model(), &sampling, &request)).map_err(
            |e| {
                super::failed(LlmError::InvalidRequest(format!(
                    "cannot serialize the agent's request: {e}"
                )))
            },
        )
    }

    /// One call: the request with the conversation's cookies, the reply's
    /// cookies kept, the reply read.
    async fn call(
        &self,
        body: String,
        session: &mut PolicySession,
    ) -> Result<(step::Step, u64), EpisodeError> {
        let mut request = RawRequest::post(self.config.path().to_string(), body);
        if let Some(cookies) = session.cookie_header() {
            let value = HeaderValue::from_str(&cookies).map_err(|_| {
                super::malformed("the agent set a cookie an HTTP header cannot carry back")
            })?;
            request.headers.push((COOKIE, value));
        }
        let started = Instant::now();
        let reply = self
            .endpoint
            .call_raw(request)
            .await
            .map_err(super::failed)?;
        let latency_ms = started.elapsed().as_millis() as u64;
        session.keep_set_cookies(&reply.headers);
        let step = step::read(&reply.body).map_err(super::malformed)?;
        Ok((step, latency_ms))
    }
}

#[async_trait]
impl Policy for ResponsesAgent {
    fn name(&self) -> &str {
        &self.name
    }

    async fn turn(&self, turn: PolicyTurn<'_>) -> Result<TurnEnd, EpisodeError> {
        let tools = turn.tools.cloned().unwrap_or_else(|| self.tools.clone());
        for _ in 0..self.max_steps {
            let body = self.body(&turn, &tools)?;
            let (step, latency_ms) = self.call(body, turn.policy_session).await?;
            let has_records = !step.records.is_empty();
            record_agent_tools(turn.transcript, turn.session, step.records, self.replay).await?;
            let asks = step.asks;
            if !step.text.is_empty() || !asks.is_empty() {
                let mut message = Message::assistant(step.text);
                message.tool_calls = asks.clone();
                turn.transcript.push_generated(
                    message,
                    Author::Policy,
                    step.usage,
                    latency_ms,
                    None,
                );
            }
            if asks.is_empty() {
                if step.answered || step.incomplete {
                    let said = turn.transcript.messages.last().is_some_and(|r| {
                        r.author == Author::Policy && !r.message.content.trim().is_empty()
                    });
                    if !said {
                        return Err(super::empty_reply(
                            "the agent's Responses output has an assistant message without text",
                        ));
                    }
                    return Ok(TurnEnd::Answered);
                }
                if !has_records {
                    return Err(super::empty_reply(
                        "the agent's Responses output has no message, no call and no tool record",
                    ));
                }
                // Only its own tool records: the agent is called again, as
                // NeMo Gym's loop does.
                continue;
            }
            run_tool_calls(turn.transcript, turn.session, &asks).await?;
        }
        Ok(TurnEnd::OutOfSteps)
    }
}
