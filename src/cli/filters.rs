//! The conversation filters `sparring conversations` takes: the export's
//! (`--min-reward`, `--min-judge`, `--drop-flagged`, `--keep-flagged`,
//! `--keep-unsolved`, read into `export::Filter`) and the conversation
//! browser's (`--max-reward`, `--termination`, `--scenario`, `--persona`,
//! read into `store::browse::ConversationFilter`), so the CLI keeps and drops
//! what the API and the web UI do (except that, as with the job's
//! `drop_flagged` judges, the CLI leaves out unsolved scenarios by default).

use crate::export::prepare::add_job_flagged_judges;
use crate::export::{self, JudgmentIndex, MinJudge, UnsolvedScenarios};
use crate::sim::termination::Termination;
use crate::store::browse::{ConversationFilter, HeldOrBroken};
use crate::store::{JobRow, StoredConversation};

use super::export_said::print_notices;

#[derive(clap::Args, Debug, Clone, Default)]
pub struct FilterArgs {
    /// Keep only conversations with at least this reward (unscored ones are dropped).
    #[arg(long, value_parser = crate::cli::number_flags::parse_finite)]
    pub min_reward: Option<f64>,
    /// Keep only conversations with at most this reward (unscored ones are dropped).
    #[arg(long, value_parser = crate::cli::number_flags::parse_finite)]
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
    /// Keep only probe conversations whose agent held the line (held) or
    /// broke it (broken); other conversations are dropped.
    #[arg(long, value_name = "held|broken", value_parser = HeldOrBroken::parse)]
    pub probe_outcome: Option<HeldOrBroken>,
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

/// `--termination`: one of the terminations sparring stores.
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
            probe_outcome: self.probe_outcome,
        }
    }

    /// The judge conditions, with the job's `drop_flagged` judges unless
    /// `--keep-flagged` (each said on stderr, as `sparring export` does).
    pub fn judge_filter(&self, row: &JobRow) -> export::Filter {
        let mut drop_flagged = self.drop_flagged.clone();
        if !self.keep_flagged {
            let mut notices = Vec::new();
            add_job_flagged_judges(row, &mut drop_flagged, &mut notices);
            print_notices(&notices);
        }
        export::Filter {
            min_reward: None,
            min_judge: self.min_judge.clone(),
            drop_flagged,
            conversations: ConversationFilter::default(),
            drop_user_flags: Vec::new(),
            unsolved: UnsolvedScenarios::default(),
            curated: None,
        }
    }
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
