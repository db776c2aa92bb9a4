//! The policy seam: whatever answers the simulated user, one turn at a time.
//! Today's model with tools ([`super::model_policy::ModelPolicy`], whose tool
//! calls sparring runs) is one kind; a deployed agent reached over HTTP
//! (`crate::policy`) is another, which may run tools of its own and report
//! them. The episode knows this trait, not the kinds.

use std::sync::Arc;

use async_trait::async_trait;

use crate::env::{Session, ToolCall, ToolSpec};
use crate::llm::message::{Caller, Message};
use crate::llm::Usage;

use super::episode_error::EpisodeError;
use super::transcript::{Author, Transcript};

/// The key of a stored conversation's metadata that holds what its policy
/// warned of it ([`PolicySession::warning`]), which `sparring stats` counts.
pub const WARNING_KEY: &str = "policy_warning";

/// How a policy turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TurnEnd {
    /// The policy answered the user in text.
    Answered,
    /// `max_steps_per_turn` steps without a text answer.
    OutOfSteps,
    /// Neither text nor tool calls.
    Empty,
}

/// What one conversation keeps on the policy's side between its turns: the
/// session id an agent is told, the cookies it set, the context (A2A's
/// `contextId`) and the task it answers in. A model keeps nothing here.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PolicySession {
    /// This conversation's id as agents are told it (never a path, a process
    /// id or anything of the machine): `sparring-` and 16 random hex digits.
    pub id: String,
    /// Cookies the agent set, by name, echoed on its later calls.
    pub cookies: Vec<(String, String)>,
    /// The agent's own name for the conversation, when it gives one.
    pub context_id: Option<String>,
    /// The agent's task the conversation is in, when it gives one.
    pub task_id: Option<String>,
    /// Policy turns taken so far (the first turn is 0 while it runs).
    pub turns: u32,
    /// What the agent already reported and sparring stored, in order, so that
    /// an agent that repeats itself is read once: the tool calls of an http
    /// agent that reports the whole conversation's calls on every turn (a
    /// LangGraph thread's messages), or the artifact ids of the A2A task the
    /// conversation is in. A session runs one kind, so one list serves both.
    pub reported: Vec<String>,
    /// What the policy warns of this conversation, once it has ended (an
    /// agent's answers that hold tool use no trace read): kept with the
    /// stored conversation, counted by `sparring stats`.
    pub warning: Option<String>,
}

impl PolicySession {
    /// A new conversation's, with a fresh random id.
    pub fn new() -> PolicySession {
        PolicySession {
            id: format!("sparring-{:016x}", rand::random::<u64>()),
            ..PolicySession::default()
        }
    }

    /// The id as a UUID (8-4-4-4-12 hex digits, version 4 and RFC 4122's
    /// variant), for agents whose ids must be UUIDs (a LangGraph thread):
    /// the id's 64 random bits, then 64 more drawn from them (splitmix64),
    /// so one conversation always gets the same UUID and two get different
    /// ones as their ids differ.
    pub fn uuid(&self) -> String {
        let digits = self.id.rsplit('-').next().unwrap_or_default();
        let high = u64::from_str_radix(digits, 16).unwrap_or_else(|_| {
            // An id not of `new`'s form (set by a test or a caller): its
            // bytes, folded.
            self.id.bytes().fold(0xcbf2_9ce4_8422_2325, |h: u64, b| {
                (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
            })
        });
        let low = splitmix64(high);
        let value = (u128::from(high) << 64 | u128::from(low)) & !(0xf << 76 | 0x3 << 62)
            | (0x4 << 76 | 0x2 << 62);
        let hex = format!("{value:032x}");
        format!(
            "{}-{}-{}-{}-{}",
            &hex[..8],
            &hex[8..12],
            &hex[12..16],
            &hex[16..20],
            &hex[20..]
        )
    }

    /// Take the cookies of `Set-Cookie` header values: each one's name and
    /// value (its attributes are not kept: the conversation is short-lived and
    /// goes to one agent). A cookie set again replaces the old value.
    pub fn keep_cookies<'a>(&mut self, set_cookie: impl IntoIterator<Item = &'a str>) {
        for header in set_cookie {
            let pair = header.split(';').next().unwrap_or("").trim();
            let Some((name, value)) = pair.split_once('=') else {
                continue;
            };
            let (name, value) = (name.trim(), value.trim());
            if name.is_empty() {
                continue;
            }
            match self.cookies.iter_mut().find(|(n, _)| n == name) {
                Some(cookie) => cookie.1 = value.to_string(),
                None => self.cookies.push((name.to_string(), value.to_string())),
            }
        }
    }

    /// Keep the cookies of a reply's `Set-Cookie` headers.
    pub fn keep_set_cookies(&mut self, headers: &http::HeaderMap) {
        self.keep_cookies(
            headers
                .get_all(http::header::SET_COOKIE)
                .iter()
                .filter_map(|v| v.to_str().ok()),
        );
    }

    /// The `Cookie` header value for the kept cookies, if any.
    pub fn cookie_header(&self) -> Option<String> {
        (!self.cookies.is_empty()).then(|| {
            self.cookies
                .iter()
                .map(|(n, v)| format!("{n}={v}"))
                .collect::<Vec<_>>()
                .join("; ")
        })
    }
}

/// The next value of the splitmix64 sequence after `state`: a bijection of
/// 64-bit values that spreads every bit of its input over its output.
fn splitmix64(state: u64) -> u64 {
    let mut z = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// One policy turn's inputs: the conversation so far (appended to), the
/// environment session, the tools (the scenario's own, when it brings them,
/// else the job's), and the conversation's policy session.
pub struct PolicyTurn<'a> {
    pub transcript: &'a mut Transcript,
    pub session: &'a mut dyn Session,
    pub tools: Option<&'a Arc<[ToolSpec]>>,
    pub seed: u64,
    pub scenario: &'a str,
    pub policy_session: &'a mut PolicySession,
}

#[async_trait]
pub trait Policy: Send + Sync {
    /// What plays the policy, as stored with each conversation: the model's
    /// name, or the agent kind's label (`a2a:NAME`), never its URL.
    fn name(&self) -> &str;

    /// Get ready before a job's first conversation (an A2A agent's card is
    /// read and checked): an error refuses the job at its setup rather than
    /// failing each item. Most policies have nothing to do.
    async fn prepare(&self) -> Result<(), EpisodeError> {
        Ok(())
    }

    /// Run one turn: append what the policy said and did to the transcript,
    /// running on the session the tool calls it asks sparring to run.
    async fn turn(&self, turn: PolicyTurn<'_>) -> Result<TurnEnd, EpisodeError>;
}

/// A tool call an agent ran itself, and what it got back: kept in the
/// transcript as a call of the policy and a result marked as the agent's
/// (`agent_tool`), so the stored conversation, its exports and the
/// gold-versus-taken view show it like any other tool use.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentToolRecord {
    pub call: ToolCall,
    pub output: String,
}

/// Append the records of one agent reply. With `replay`, each call is also
/// made on sparring's own session (its answer discarded), so that state
/// verification (`db`, probes) sees what the agent did to its own copy of
/// the environment. A failure of the environment on a replayed call fails
/// the episode, as a failure on any policy call does.
pub async fn record_agent_tools(
    transcript: &mut Transcript,
    session: &mut dyn Session,
    records: Vec<AgentToolRecord>,
    replay: bool,
) -> Result<(), EpisodeError> {
    for record in records {
        if replay {
            session
                .call_by(Caller::Policy, &record.call)
                .await
                .map_err(|error| EpisodeError::ToolCall {
                    caller: Caller::Policy,
                    tool: record.call.name.clone(),
                    error,
                })?;
        }
        let id = record.call.id.clone();
        let mut message = Message::assistant("");
        message.tool_calls = vec![record.call];
        transcript.push(message, Author::Policy);
        transcript.push(Message::tool_result(id, record.output), Author::AgentTool);
    }
    Ok(())
}

/// Run calls the policy asked sparring to run on the session, in order,
/// appending each result (a tool's error is its output; the environment
/// failing fails the episode).
pub async fn run_tool_calls(
    transcript: &mut Transcript,
    session: &mut dyn Session,
    calls: &[ToolCall],
) -> Result<(), EpisodeError> {
    for call in calls {
        let output = session
            .call_by(Caller::Policy, call)
            .await
            .map_err(|error| EpisodeError::ToolCall {
                caller: Caller::Policy,
                tool: call.name.clone(),
                error,
            })?;
        transcript.push(
            Message::tool_result(call.id.clone(), output.content),
            Author::Env,
        );
    }
    Ok(())
}

/// Usage of an agent call that reports none: one call, no tokens.
pub const NO_TOKENS: Usage = Usage {
    prompt_tokens: 0,
    completion_tokens: 0,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cookies_are_kept_by_name_without_their_attributes_and_replaced_when_set_again() {
        let mut s = PolicySession::new();
        assert!(
            s.id.starts_with("sparring-") && s.id.len() == 25,
            "{}",
            s.id
        );
        assert_eq!(s.cookie_header(), None);
        s.keep_cookies(["sid=abc; Path=/; HttpOnly", "theme=dark", "broken", "=x"]);
        assert_eq!(s.cookie_header().as_deref(), Some("sid=abc; theme=dark"));
        s.keep_cookies(["sid=def; Max-Age=60"]);
        assert_eq!(s.cookie_header().as_deref(), Some("sid=def; theme=dark"));
    }

    #[test]
    fn two_sessions_get_different_ids() {
        assert_ne!(PolicySession::new().id, PolicySession::new().id);
    }

    #[test]
    fn a_sessions_uuid_is_a_version_4_uuid_of_its_id_and_stays_the_same() {
        let s = PolicySession {
            id: "sparring-0123456789abcdef".into(),
            ..PolicySession::default()
        };
        let uuid = s.uuid();
        let groups: Vec<&str> = uuid.split('-').collect();
        assert_eq!(
            groups.iter().map(|g| g.len()).collect::<Vec<_>>(),
            [8, 4, 4, 4, 12],
            "{uuid}"
        );
        assert!(uuid.starts_with("01234567-89ab-4def-"), "{uuid}");
        assert!(
            matches!(groups[3].as_bytes()[0], b'8' | b'9' | b'a' | b'b'),
            "{uuid}"
        );
        assert!(uuid.bytes().all(|b| b == b'-' || b.is_ascii_hexdigit()));
        assert_eq!(s.uuid(), uuid);
        let other = PolicySession::new();
        assert_ne!(other.uuid(), uuid);
        let odd = PolicySession {
            id: "not hex".into(),
            ..PolicySession::default()
        };
        assert_eq!(odd.uuid().len(), 36);
    }
}
