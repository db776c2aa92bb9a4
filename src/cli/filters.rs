//! The conversation filters `usersim conversations` takes: the export's
//! (`--min-reward`, `--min-judge`, `--drop-flagged`, `--keep-flagged`,
//! `--keep-unsolved`, read into `export::Filter`) and the conversation
//! browser's (`--max-reward`, `--termination`, `--scenario`, `--persona`,
//! read into `store::browse::ConversationFilter`), so the CLI keeps and drops
//! what the API and the web UI do (except that, as with the job's
//! `drop_flagged` judges, the CLI leaves out unsolved scenarios by default).

use crate::export::unsolved::synthesized_outcomes;
use crate::export::{self, JudgmentIndex, MinJudge, UnsolvedScenarios};
use crate::sim::termination::Termination;
use crate::store::browse::ConversationFilter;
use crate::store::{JobRow, Store, StoredConversation};

#[derive(clap::Args, Debug, Clone, Default)]
pub struct FilterArgs {
    /// Keep only conversations with at least this reward (unscored ones are dropped).
    #[arg(long, value_parser = crate::config::ranges::parse_finite)]
    pub min_reward: Option<f64>,
    /// Keep only conversations with at most this reward (unscored ones are dropped).
    #[arg(long, value_parser = crate::config::ranges::parse_finite)]
    pub max_reward: Option<f64>,
    /// Keep only conversations that ended this way (user_stop, max_turns, ...).
    #[arg(long, value_parser = parse_termination)]
    pub termination: Option<String>,
    /// Keep only conversations of this scenario id.
    #[arg(long)]
    pub scenario: Option<String>,
    /// Keep only conversations of this persona id.
    #[arg(long)]
    pub persona: Option<String>,
    /// Keep only conversations judge NAME scored at least SCORE (an ok
    /// judgment). Repeatable: all must hold.
    #[arg(long, value_name = "NAME=SCORE")]
    pub min_judge: Vec<MinJudge>,
    /// Drop conversations pass/fail judge NAME failed. Repeatable. The job's
    /// own judges with `drop_flagged = true` are added unless --keep-flagged.
    #[arg(long, value_name = "NAME")]
    pub drop_flagged: Vec<String>,
    /// Keep conversations the job's `drop_flagged` judges flagged.
    #[arg(long)]
    pub keep_flagged: bool,
    /// Keep the conversations of unsolved synthesized scenarios (those no
    /// attempt passed), which are left out by default.
    #[arg(long)]
    pub keep_unsolved: bool,
}

/// `--termination`: one of the terminations usersim stores.
fn parse_termination(text: &str) -> Result<String, String> {
    match Termination::parse(text) {
        Some(t) => Ok(t.as_str().to_string()),
        None => {
            let known: Vec<&str> = Termination::ALL.iter().map(|t| t.as_str()).collect();
            Err(format!(
                "'{text}' is not a termination; one of: {}",
                known.join(", ")
            ))
        }
    }
}

impl FilterArgs {
    /// The conditions on a conversation's own fields.
    pub fn conversation_filter(&self) -> ConversationFilter {
        ConversationFilter {
            min_reward: self.min_reward,
            max_reward: self.max_reward,
            termination: self.termination.clone(),
            scenario: self.scenario.clone(),
            persona: self.persona.clone(),
        }
    }

    /// The judge conditions, with the job's `drop_flagged` judges unless
    /// `--keep-flagged` (each said on stderr, as `usersim export` does).
    pub fn judge_filter(&self, row: &JobRow) -> export::Filter {
        let mut drop_flagged = self.drop_flagged.clone();
        if !self.keep_flagged {
            for name in crate::jobs::judging::drop_flagged_judges(row) {
                if !drop_flagged.contains(&name) {
                    eprintln!("dropping conversations judge '{name}' flagged (the job's drop_flagged; --keep-flagged keeps them)");
                    drop_flagged.push(name);
                }
            }
        }
        export::Filter {
            min_reward: None,
            min_judge: self.min_judge.clone(),
            drop_flagged,
            conversations: ConversationFilter::default(),
            drop_user_flags: Vec::new(),
            unsolved: UnsolvedScenarios::default(),
        }
    }
}

/// The unsolved synthesized scenarios of job `row`, whose conversations are
/// left out unless `keep` (`--keep-unsolved`); each said on stderr, as
/// `--drop-flagged`'s judges are.
pub async fn unsolved_for(
    store: &dyn Store,
    row: &JobRow,
    keep: bool,
) -> anyhow::Result<UnsolvedScenarios> {
    if keep {
        return Ok(UnsolvedScenarios::default());
    }
    let outcomes = synthesized_outcomes(store, row).await?;
    if let Some(reason) = &outcomes.unreadable {
        eprintln!("warning: cannot tell which of job {}'s scenarios are synthesized, so no conversation is left out as unsolved: {reason}", row.id);
    }
    let unsolved = outcomes.unsolved();
    if !unsolved.is_empty() {
        eprintln!(
            "dropping the conversations of {} unsolved synthesized scenario{} (none of their attempts passed; `usersim stats --job {}` lists them; --keep-unsolved keeps them)",
            unsolved.len(),
            if unsolved.len() == 1 { "" } else { "s" },
            row.id
        );
    }
    Ok(unsolved)
}

/// The judgments `filter` needs, or `None` (said on stderr) when a
/// `--min-judge` judge has no judgments of the job, so nothing could be kept.
pub async fn judgments_for(
    store: &dyn Store,
    job: i64,
    filter: &export::Filter,
) -> anyhow::Result<Option<JudgmentIndex>> {
    if !filter.needs_judgments() {
        return Ok(Some(JudgmentIndex::default()));
    }
    let rows = store.judgments_of_job(job).await?;
    let unjudged = filter.judges_without_judgments(&export::judge_names(&rows));
    let listed = unjudged.listed(job);
    for judge in &unjudged.drop_flagged {
        eprintln!("warning: --drop-flagged {judge}: no judgments by '{judge}', so it drops nothing; {listed}");
    }
    for judge in &unjudged.min_judge {
        eprintln!("--min-judge {judge}=…: no judgments by '{judge}', so no conversation would be kept; {listed}");
    }
    if !unjudged.min_judge.is_empty() {
        return Ok(None);
    }
    Ok(Some(JudgmentIndex::build(rows)?))
}

/// Whether a conversation passes both kinds of conditions.
pub fn keeps(
    conversation: &ConversationFilter,
    judges: &export::Filter,
    judgments: &JudgmentIndex,
    c: &StoredConversation,
) -> bool {
    conversation.keeps(&c.conversation)
        && !judges.unsolved_scenario(&c.conversation)
        && judges.check_judges(c.conversation.id, judgments).is_ok()
}
