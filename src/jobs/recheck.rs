//! `sparring recheck --job ID`: the simulated-user checks of a job's stored
//! conversations made again by this version of the checks
//! ([`CHECKS_VERSION`]), for conversations checked by an older one (the
//! stored flags say which version made them; stats counts the older ones).
//!
//! What a conversation is checked against is what is stored: an imported
//! one's scenario, gold and user outputs are in its metadata; a generated
//! one's scenario is read again from the files its job's stored config
//! names (when they no longer load, it is left as it was and counted). A
//! generated conversation stores no raw user outputs, so the signs that
//! need them (text after a control token, a reply cut by `max_tokens`) are
//! read from the stored text only. A conversation checked by this version
//! already is left alone.

use std::collections::HashMap;

use crate::config::load::from_snapshot;
use crate::config::UserMode;
use crate::persona::dataset::load_job_scenarios;
use crate::persona::Scenario;
use crate::store::{ConversationStore, JobKind, JobRow, StoreError, StoredConversation};
use crate::user_checks::stored::{imported_turns, scenario_of, stored_line};
use crate::user_checks::{
    check_conversation, Line, Outcome, ScenarioBasis, UserChecks, UserTurns, CHECKS_VERSION,
};

/// Conversations written per transaction.
const PAGE: u32 = 200;

/// What a recheck did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Recheck {
    /// Checked again and stored.
    pub rechecked: u64,
    /// Already checked by this version.
    pub current: u64,
    /// Left as they were: their scenario could not be read again (`why`).
    pub left: u64,
    pub why: Option<String>,
}

/// Check job `job`'s conversations again where an older version checked them.
pub async fn recheck(store: &dyn ConversationStore, job: &JobRow) -> Result<Recheck, StoreError> {
    let mut report = Recheck::default();
    let scenarios = match job.kind {
        JobKind::Import => Ok(None),
        _ => generation_scenarios(job).map(Some),
    };
    let mut after = 0;
    loop {
        let page = store.conversations_page(job.id, after, PAGE).await?;
        let Some(last) = page.last() else { break };
        after = last.conversation.id;
        let mut written = Vec::new();
        for c in &page {
            let stored = UserChecks::from_stored(c.conversation.user_checks.as_ref())
                .ok()
                .flatten();
            if stored.as_ref().is_some_and(|s| s.version == CHECKS_VERSION) {
                report.current += 1;
                continue;
            }
            let checked = match &scenarios {
                Ok(None) => Some(imported(c, stored.as_ref())),
                Ok(Some((scenarios, simulated))) => generated(c, scenarios, *simulated),
                Err(_) => None,
            };
            match checked {
                Some(checks) => written.push((c.conversation.id, checks.to_json())),
                None => report.left += 1,
            }
        }
        report.rechecked += store.replace_user_checks(&written).await?;
    }
    if report.left > 0 {
        report.why = Some(match &scenarios {
            Err(why) => why.clone(),
            Ok(_) => "their scenario is no longer in the job's scenarios".into(),
        });
    }
    Ok(report)
}

/// A generation job's scenarios by id, read again from its stored config,
/// and whether its user was simulated.
fn generation_scenarios(job: &JobRow) -> Result<(HashMap<String, Scenario>, bool), String> {
    let config = from_snapshot(&format!("job {}", job.id), &job.config_snapshot).map_err(|p| {
        format!(
            "the job's stored config no longer loads ({})",
            p.first().map_or_else(String::new, |p| p.message.clone())
        )
    })?;
    let scenarios =
        load_job_scenarios(&config.dataset, config.user_simulator.mode()).map_err(|p| {
            format!(
                "the job's scenarios no longer load ({})",
                p.first().map_or_else(String::new, |p| p.message.clone())
            )
        })?;
    let simulated = config.user_simulator.mode() == UserMode::Llm;
    Ok((
        scenarios.into_iter().map(|s| (s.id.clone(), s)).collect(),
        simulated,
    ))
}

fn lines(c: &StoredConversation) -> Vec<Line> {
    c.messages
        .iter()
        .enumerate()
        .map(|(i, m)| stored_line(i, &m.role, &m.author, &m.content, m.tool_calls.as_ref()))
        .collect()
}

/// An imported conversation checked again from its metadata. Whether its
/// user was simulated is what its stored checks said (all unknown: not);
/// without any, whether the import kept a scenario or user outputs.
fn imported(c: &StoredConversation, stored: Option<&UserChecks>) -> UserChecks {
    let metadata = c
        .conversation
        .metadata
        .as_object()
        .cloned()
        .unwrap_or_default();
    let simulated = match stored {
        Some(s) => s.checks.iter().any(|r| r.outcome != Outcome::Unknown),
        None => metadata.contains_key("scenario") || metadata.contains_key("user_outputs"),
    };
    let user = metadata
        .get("scenario")
        .and_then(|s| serde_json::from_value(s.clone()).ok());
    let gold = metadata
        .get(crate::jobs::import::EVALUATION_KEY)
        .and_then(|e| serde_json::from_value(e.clone()).ok());
    let scenario = scenario_of(&c.conversation.scenario_id, user, gold);
    let has_system = c.messages.first().is_some_and(|m| m.role == "system");
    let turns = imported_turns(lines(c), &metadata, has_system, simulated);
    check_conversation(&turns, &scenario, &ScenarioBasis::of(&scenario.user))
}

/// A generated conversation checked again against its scenario, from its
/// stored text; `None` when the scenario is gone.
fn generated(
    c: &StoredConversation,
    scenarios: &HashMap<String, Scenario>,
    simulated: bool,
) -> Option<UserChecks> {
    let scenario = scenarios.get(&c.conversation.scenario_id)?;
    let turns = UserTurns {
        lines: lines(c),
        outputs: Vec::new(),
        user_stopped: c.conversation.termination == "user_stop",
        simulated_user: simulated,
    };
    Some(check_conversation(
        &turns,
        scenario,
        &ScenarioBasis::of(&scenario.user),
    ))
}
