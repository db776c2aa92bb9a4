//! The `http` kind: any HTTP chat endpoint, described by `[policy.http]`.
//! Each policy turn is one `POST`: the path and the JSON body rendered from
//! templates over the conversation ([`variables`]), the session id in a
//! header or a cookie and the agent's own cookies echoed ([`request`]); the
//! answer's text and optional trace of tool calls read at JSON Pointers
//! ([`answer`]), each reported call stored once per conversation ([`trace`])
//! before the reply's text. The call goes through the `[roles] policy`
//! endpoint (its limits, timeout, retries and error classes): any status but
//! 2xx is a failure of its class (a session the agent lost, 404 or 410, is
//! `rejected`), an answer that is not what the config says is
//! `malformed_response`; either fails the item, never scores a reward.

pub mod answer;
pub mod request;
pub mod templates;
pub mod trace;
pub mod variables;

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use async_trait::async_trait;

use crate::config::policy::HttpConfig;
use crate::config::Problem;
use crate::llm::message::Message;
use crate::llm::{ChatModel, LlmError};
use crate::sim::episode::EpisodeError;
use crate::sim::policy::{record_agent_tools, NO_TOKENS};
use crate::sim::{Author, Policy, PolicyTurn, TurnEnd};

pub use templates::{HttpTemplates, TemplateError};
pub use variables::Variables;

pub struct HttpAgent {
    config: HttpConfig,
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
pub fn template_problems(file: &Path, config: &HttpConfig) -> Vec<Problem> {
    HttpTemplates::load(file, config).err().unwrap_or_default()
}

impl HttpAgent {
    /// The agent behind `model`'s endpoint, as `config` (read from `file`)
    /// describes it; with `replay`, its reported tool calls are also made on
    /// sparring's own session ([`record_agent_tools`]).
    pub fn new(
        config: HttpConfig,
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
        let answer = answer::read(
            &reply.body,
            &self.config.reply,
            self.config.trace.as_deref(),
        )
        .map_err(super::malformed)?;
        let new = trace::unseen(&mut session.reported, answer.trace);
        record_agent_tools(turn.transcript, turn.session, new, self.replay).await?;
        let answered = !answer.text.trim().is_empty();
        turn.transcript.push_generated(
            Message::assistant(answer.text),
            Author::Policy,
            NO_TOKENS,
            latency_ms,
            None,
        );
        Ok(if answered {
            TurnEnd::Answered
        } else {
            TurnEnd::Empty
        })
    }
}
