//! Validation by execution, before any model reviews a proposal: its gold
//! actions run on a fresh session, and what they did is checked against what
//! the scenario claims.

use std::path::Path;

use serde_json::Value;

use crate::env::{EnvError, Environment, InitialState, ToolCall, ToolOutput};
use crate::persona::scenario::{unscored_problems, Scenario};
use crate::verify::communicate::says_fact;

use super::answer_leak::check_answer_leak;
use super::brief::{Outcome, ProposalBrief};
use super::stage::{Rejection, Stage};

/// Tags that say a task must leave the state as it found it.
const UNCHANGED_TAGS: &[&str] = &["read-only", "refusal"];

/// Why a proposal did not pass validation by execution.
#[derive(Debug)]
pub enum Invalid {
    /// The proposal is wrong; the generator is told why.
    Rejected(Rejection),
    /// The environment failed (a server gone, a tools model failing, a
    /// state it cannot show): not the proposal's fault, never a rejection;
    /// the item fails and may be retried.
    Environment(EnvError),
}

impl From<Rejection> for Invalid {
    fn from(r: Rejection) -> Self {
        Invalid::Rejected(r)
    }
}

impl From<EnvError> for Invalid {
    fn from(e: EnvError) -> Self {
        Invalid::Environment(e)
    }
}

impl Invalid {
    /// The rejection, when the proposal was at fault.
    pub fn rejection(&self) -> Option<&Rejection> {
        match self {
            Invalid::Rejected(r) => Some(r),
            Invalid::Environment(_) => None,
        }
    }
}

/// One gold action and what it returned on the fresh session.
#[derive(Debug, Clone)]
pub struct ExecutedCall {
    pub call: ToolCall,
    pub output: ToolOutput,
}

/// Run `scenario`'s gold actions on a fresh session and check, in order: no
/// tool error; the state changes iff the task needs a write; every ID in the
/// user's known info exists in the seed data; every fact to communicate is
/// in some output and in nothing the user knows or says (`answer_leak`);
/// `sparring validate`'s own checks; the brief
/// (`brief_check`). The first failure is the rejection, with the exact error.
pub async fn validate(
    environment: &dyn Environment,
    scenario: &Scenario,
    brief: &ProposalBrief,
) -> Result<Vec<ExecutedCall>, Invalid> {
    let init = InitialState {
        seed: 0,
        data: scenario.initial_state.clone(),
    };
    let mut session = environment.open(&init).await.map_err(|e| match e {
        EnvError::InitialState(_) => Invalid::Rejected(Rejection::new(
            Stage::Execution,
            format!("initial_state: {e}"),
        )),
        e => Invalid::Environment(e),
    })?;
    let before = session.state().await?.ok_or_else(|| {
        Invalid::Environment(EnvError::NotSampleable {
            environment: environment.name().to_string(),
            reason: "it cannot show a session's state, so gold actions cannot be checked"
                .to_string(),
        })
    })?;
    let mut executed = Vec::new();
    for (i, action) in scenario.evaluation.actions.iter().enumerate() {
        let call = ToolCall {
            id: format!("gold_{i}"),
            name: action.name.clone(),
            arguments: action.arguments.to_string(),
        };
        // An `Err` is the environment failing (a server gone, a tools model
        // failing), not the proposal: the item fails, retryable.
        let output = session.call_by(action.caller, &call).await?;
        if output.is_error {
            return Err(Invalid::Rejected(Rejection::new(
                Stage::Execution,
                format!(
                    "evaluation.actions[{i}] ({} {}) fails on a fresh session: {}",
                    action.name, action.arguments, output.content
                ),
            )));
        }
        executed.push(ExecutedCall { call, output });
    }
    let after = session.state().await?.unwrap_or(Value::Null);
    // Its place (an MCP server process) back before `validate`'s own
    // checks open another session to replay the gold actions.
    drop(session);
    check_state_change(scenario, brief, &before, &after)?;
    check_known_ids(scenario, &before)?;
    check_communicable(scenario, &executed)?;
    check_answer_leak(scenario)?;
    check_validate_rules(environment, scenario).await?;
    super::brief_check::check_brief(environment, scenario, brief, before != after).await?;
    Ok(executed)
}

/// Whether the task must leave the state unchanged (read-only or refusal).
pub fn must_leave_state_unchanged(scenario: &Scenario, brief: &ProposalBrief) -> bool {
    brief.outcome == Some(Outcome::Refusal)
        || scenario
            .tags
            .iter()
            .any(|t| UNCHANGED_TAGS.contains(&t.as_str()))
}

fn check_state_change(
    scenario: &Scenario,
    brief: &ProposalBrief,
    before: &Value,
    after: &Value,
) -> Result<(), Rejection> {
    let changed = before != after;
    match (must_leave_state_unchanged(scenario, brief), changed) {
        (true, true) => Err(Rejection::new(
            Stage::State,
            format!(
                "the scenario is tagged read-only or refusal (tags {:?}), but its gold actions change the state; drop the write actions or the tag",
                scenario.tags
            ),
        )),
        (false, false) => Err(Rejection::new(
            Stage::State,
            "the gold actions leave the state unchanged, but the task is not tagged read-only or refusal; add the write action the task needs, or tag it read-only",
        )),
        _ => Ok(()),
    }
}

/// Words of the user's known info that look like identifiers: an `#order`
/// id, an email, or a word mixing letters with digits or underscores.
pub fn id_like_words(text: &str) -> Vec<String> {
    text.split_whitespace()
        .map(bare_word)
        .filter(|w| w.len() >= 4)
        .filter(|w| {
            let digit = w.chars().any(|c| c.is_ascii_digit());
            let alpha = w.chars().any(|c| c.is_alphabetic());
            w.starts_with('#') || w.contains('@') || (w.contains('_') && alpha) || (digit && alpha)
        })
        .map(str::to_string)
        .collect()
}

/// A word without the punctuation around it.
fn bare_word(word: &str) -> &str {
    word.trim_matches(|c: char| ",.;:()[]\"'!?".contains(c))
}

fn strings_of<'a>(value: &'a Value, out: &mut Vec<&'a str>) {
    match value {
        Value::String(s) => out.push(s),
        Value::Array(items) => items.iter().for_each(|v| strings_of(v, out)),
        Value::Object(map) => map.iter().for_each(|(k, v)| {
            out.push(k);
            strings_of(v, out)
        }),
        _ => {}
    }
}

fn check_known_ids(scenario: &Scenario, seed: &Value) -> Result<(), Rejection> {
    let mut strings = Vec::new();
    strings_of(seed, &mut strings);
    let unknown: Vec<String> = id_like_words(&scenario.user.known_info)
        .into_iter()
        // A whole value (an order id), or a word of a text (an MCP
        // server's observation "member id MB2041").
        .filter(|id| {
            !strings.iter().any(|s| {
                s.eq_ignore_ascii_case(id)
                    || s.split_whitespace()
                        .any(|w| bare_word(w).eq_ignore_ascii_case(id))
            })
        })
        .collect();
    if unknown.is_empty() {
        return Ok(());
    }
    Err(Rejection::new(
        Stage::UnknownId,
        format!(
            "user.known_info names {} that the seed data does not have: {}; use IDs from the sampled records",
            if unknown.len() == 1 { "an ID" } else { "IDs" },
            unknown.join(", ")
        ),
    ))
}

fn check_communicable(scenario: &Scenario, executed: &[ExecutedCall]) -> Result<(), Rejection> {
    let missing: Vec<&str> = scenario
        .evaluation
        .communicate
        .iter()
        .filter(|fact| !executed.iter().any(|e| says_fact(&e.output.content, fact)))
        .map(String::as_str)
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(Rejection::new(
        Stage::Communicate,
        format!(
            "evaluation.communicate: {} in no gold action's output, so the agent could not know {}: {}; communicate only facts the tools return",
            if missing.len() == 1 { "a fact is" } else { "facts are" },
            if missing.len() == 1 { "it" } else { "them" },
            missing.iter().map(|f| format!("{f:?}")).collect::<Vec<_>>().join(", ")
        ),
    ))
}

async fn check_validate_rules(
    environment: &dyn Environment,
    scenario: &Scenario,
) -> Result<(), Rejection> {
    let file = Path::new("proposal");
    let one = std::slice::from_ref(scenario);
    let mut problems = unscored_problems(file, one);
    problems.extend(crate::env::preflight::check_gold_actions(file, one, environment).await);
    problems.extend(crate::env::preflight::probe_problems(
        file,
        one,
        environment,
    ));
    if !environment.scores_db() {
        problems.extend(crate::env::preflight::mcp_db_problems(file, one));
    }
    if scenario.user.reason_for_contact.trim().is_empty() && scenario.user.opening.is_none() {
        problems.push(crate::config::Problem::at_field(
            file,
            "user.reason_for_contact",
            "is empty; say why the user contacts the agent",
        ));
    }
    match problems.first() {
        None => Ok(()),
        Some(_) => Err(Rejection::new(
            Stage::Checks,
            problems
                .iter()
                .map(|p| match &p.location {
                    Some(at) => format!("{at}: {}", p.message),
                    None => p.message.clone(),
                })
                .collect::<Vec<_>>()
                .join("; "),
        )),
    }
}
