//! The `http` kind: any HTTP chat endpoint, described by `[policy.http]`.
//! Before a conversation's first turn, the agent's session is made when
//! `session_create` says how ([`session`]). Each policy turn is one `POST`:
//! the path and the JSON body rendered from templates over the conversation
//! ([`variables`]), the session id in a header or a cookie and the agent's
//! own cookies echoed ([`request`]); the answer (JSON, or Server-Sent Events)
//! read at JSON Pointers: its text, its optional trace of tool calls in the
//! shape it names, its token usage ([`answer`]); each reported call stored
//! once per conversation ([`unseen`]) before the reply's text. The call goes
//! through the `[roles] policy` endpoint (its limits, timeout, retries and
//! error classes): any status but 2xx is a failure of its class (a session
//! the agent lost, 404 or 410, is `rejected`), an answer that is not what
//! the config says is `malformed_response`, one without text `empty_reply`;
//! each fails the item, never scores a reward. An answer that holds tool use
//! while the trace has read none in the whole conversation leaves a warning
//! on the conversation, which `sparring stats` shows.

pub mod answer;
pub mod pointer;
pub mod request;
pub mod session;
pub mod templates;
pub mod unseen;
pub mod variables;

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use async_trait::async_trait;

use crate::config::policy::http::TraceAt;
use crate::config::policy::HttpKeys;
use crate::config::Problem;
use crate::llm::message::Message;
use crate::llm::{ChatModel, LlmError};
use crate::sim::episode_error::EpisodeError;
use crate::sim::policy::{record_agent_tools, NO_TOKENS};
use crate::sim::{Author, Policy, PolicyTurn, TurnEnd};

pub use templates::{HttpTemplates, TemplateError};
pub use variables::Variables;

pub struct HttpAgent {
    config: HttpKeys,
    /// Where the answer's trace is (`config.trace_at()`).
    trace: Option<TraceAt>,
    /// The templates, parsed; a job's setup has checked them
    /// ([`template_problems`]), so the error is only of a caller that did
    /// not, and fails each turn as an invalid request.
    templates: Result<HttpTemplates, String>,
    model: Arc<dyn ChatModel>,
    /// `http:` and the endpoint's model name.
    name: String,
    replay: bool,
}

/// Every problem of `config`'s templates (read from `file`): for a job's
/// setup, so that `sparring validate` and `run` report them before anything
/// is stored.
pub fn template_problems(file: &Path, config: &HttpKeys) -> Vec<Problem> {
    HttpTemplates::load(file, config).err().unwrap_or_default()
}

impl HttpAgent {
    /// The agent behind `model`'s endpoint, as `config` (read from `file`)
    /// describes it; with `replay`, its reported tool calls are also made on
    /// sparring's own session ([`record_agent_tools`]).
    pub fn new(
        config: HttpKeys,
        file: &Path,
        model: Arc<dyn ChatModel>,
        replay: bool,
    ) -> HttpAgent {
        let templates = HttpTemplates::load(file, &config).map_err(|problems| {
            problems
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; ")
        });
        HttpAgent {
            name: format!("http:{}", model.model()),
            trace: config.trace_at(),
            config,
            templates,
            model,
            replay,
        }
    }
}

#[async_trait]
impl Policy for HttpAgent {
    fn name(&self) -> &str {
        &self.name
    }

    async fn turn(&self, turn: PolicyTurn<'_>) -> Result<TurnEnd, EpisodeError> {
        let invalid = |message: String| super::failed(LlmError::InvalidRequest(message));
        let templates = self.templates.as_ref().map_err(|e| invalid(e.clone()))?;
        let session = turn.policy_session;
        if let (0, Some(create)) = (session.turns, &self.config.session_create) {
            let first = Variables::of_turn(turn.transcript, session);
            session::create(self.model.as_ref(), create, templates, &first, session).await?;
        }
        let variables = Variables::of_turn(turn.transcript, session);
        let path = templates
            .path(&variables)
            .map_err(|e| invalid(e.to_string()))?;
        let body = templates
            .body(&variables)
            .map_err(|e| invalid(e.to_string()))?;
        request::add_session_cookie(&self.config, session);
        let call = request::build(&self.config, path, body, session).map_err(super::failed)?;
        let started = Instant::now();
        let reply = self.model.call_raw(call).await.map_err(super::failed)?;
        let latency_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        session.turns += 1;
        session.keep_set_cookies(&reply.headers);
        let content_type = reply
            .headers
            .get(http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok());
        let pointers = answer::Pointers {
            reply: self.config.reply(),
            trace: self.trace.as_ref(),
            usage: self.config.usage.as_deref(),
        };
        let answer = answer::read(&reply.body, content_type, pointers).map_err(super::malformed)?;
        let new = unseen::unseen(&mut session.reported, answer.trace);
        record_agent_tools(turn.transcript, turn.session, new, self.replay).await?;
        crate::policy::trace::unread::note(
            session,
            turn.transcript,
            answer.tool_use_at.as_deref(),
            || trace_advice(self.trace.as_ref()),
        );
        if answer.text.trim().is_empty() {
            return Err(super::empty_reply(format!(
                "the agent's answer has empty text at policy.http.reply = {:?}",
                self.config.reply()
            )));
        }
        turn.transcript.push_generated(
            Message::assistant(answer.text),
            Author::Policy,
            answer.usage.unwrap_or(NO_TOKENS),
            latency_ms,
            None,
        );
        Ok(TurnEnd::Answered)
    }
}

/// What to change when the answers hold tool use the trace did not read.
fn trace_advice(trace: Option<&TraceAt>) -> String {
    match trace {
        None => "no policy.http.trace is set; point it at the agent's tool calls (and name \
                 their shape with trace_format)"
            .to_string(),
        Some(trace) => format!(
            "policy.http.trace = {:?} (trace_format = \"{}\") read none; point it at them, or \
             name their shape with trace_format",
            trace.pointer,
            trace.format.as_str()
        ),
    }
}
