//! Exports of stored conversations: streamed page by page (constant memory), in
//! id order (deterministic), with filters. Failed items have no conversation and
//! conversations the simulator broke (not scored) are left out. `dpo` turns a
//! pairwise judge's verdicts into preference pairs.
//!
//! One file per format (`openai`, `hf`, `sharegpt`, `nemo_gym`, `dpo`); the
//! training formats end each row on the policy ([`trim`]) and carry the
//! conversation's [`metadata`]; [`split`] sends each scenario to train or
//! validation.
//!
//! The command line and the service ask for an export the same way: an
//! [`request::ExportRequest`], checked ([`request`]), completed against the
//! store ([`prepare`]) and written ([`writing`]) here, so both keep and drop
//! the same conversations and refuse the same requests.

pub mod curate;
pub mod dpo;
pub mod features;
pub mod file_set;
pub mod groups;
pub mod hf;
pub mod judgments;
pub mod kind;
pub mod metadata;
pub mod nemo_gym;
pub mod openai;
pub mod paths;
pub mod prepare;
pub mod probe_pairs;
pub mod request;
pub mod scenarios;
pub mod sharegpt;
pub mod sink;
pub mod split;
pub mod target;
pub mod trim;
pub mod unsolved;
pub mod writing;

use std::fmt;

use serde::Serialize;

use crate::store::{Store, StoreError, StoredConversation};
use crate::user_checks::{UserChecks, UserFlag};

pub use judgments::{newest_judgments, ok_verdict, CorruptJudgment, JudgmentIndex};

pub use sink::{Row, RowSink};
pub use unsolved::UnsolvedScenarios;

/// Every `--format` (and the API's `format=`), for messages that list them.
pub const SUPPORTED_FORMATS: &str = "openai, hf, sharegpt, nemo_gym, dpo, scenarios";

/// A format with one line per conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// OpenAI chat fine-tuning (metadata in a sidecar file).
    OpenAi,
    /// Hugging Face chat templates and TRL: object arguments, uniform keys.
    Hf,
    /// LLaMA-Factory's ShareGPT.
    ShareGpt,
    /// NeMo Gym rollouts (conversations of a `nemo_gym` environment).
    NemoGym,
}

impl Format {
    pub fn parse(s: &str) -> Option<Format> {
        match s {
            "openai" => Some(Format::OpenAi),
            "hf" => Some(Format::Hf),
            "sharegpt" => Some(Format::ShareGpt),
            "nemo_gym" | "nemo-gym" => Some(Format::NemoGym),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Format::OpenAi => "openai",
            Format::Hf => "hf",
            Format::ShareGpt => "sharegpt",
            Format::NemoGym => "nemo_gym",
        }
    }

    /// Whether the rows' metadata goes to a sidecar file (same line order)
    /// rather than into each row.
    pub fn metadata_in_sidecar(self) -> bool {
        self == Format::OpenAi
    }
}

/// `--min-judge NAME=SCORE`: keep a conversation only if judge NAME gave it an
/// `ok` judgment scoring at least SCORE.
#[derive(Debug, Clone, PartialEq)]
pub struct MinJudge {
    pub judge: String,
    pub score: f64,
}

impl std::str::FromStr for MinJudge {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let expected = "expected NAME=SCORE: a judge name, '=', and the lowest score to keep \
                        (e.g. helpfulness=7)";
        let Some((judge, score)) = s.rsplit_once('=') else {
            return Err(format!("'{s}' has no '='; {expected}"));
        };
        let judge = judge.trim();
        if judge.is_empty() {
            return Err(format!("'{s}' names no judge; {expected}"));
        }
        let score: f64 = score
            .trim()
            .parse()
            .ok()
            .filter(|x: &f64| x.is_finite())
            .ok_or_else(|| format!("'{}' in '{s}' is not a number; {expected}", score.trim()))?;
        Ok(MinJudge {
            judge: judge.to_string(),
            score,
        })
    }
}

#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Keep conversations with reward ≥ this (unscored ones are dropped).
    pub min_reward: Option<f64>,
    /// Keep conversations each of these judges scored high enough.
    pub min_judge: Vec<MinJudge>,
    /// Drop conversations any of these (pass/fail) judges failed: an `ok`
    /// judgment scoring below 0.5, the rule a generation job's `drop_flagged`
    /// judges follow.
    pub drop_flagged: Vec<String>,
    /// Keep only conversations this keeps (termination, scenario, persona,
    /// max reward): what the service's conversation browser shows.
    pub conversations: crate::store::browse::ConversationFilter,
    /// Drop conversations any of these deterministic user checks flagged.
    /// Conversations stored before the checks existed are kept.
    pub drop_user_flags: Vec<UserFlag>,
    /// Drop the conversations of these scenarios: the job's synthesized
    /// scenarios no attempt passed (see [`unsolved`]).
    pub unsolved: UnsolvedScenarios,
    /// A curated export's conversations (of one job) that passed every gate
    /// (see [`curate`]); the job's others are dropped.
    pub curated: Option<std::sync::Arc<curate::CuratedSet>>,
}

/// Why a conversation was left out of an export.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Skip {
    /// No reward: the user simulator or environment broke it.
    NotScored,
    BelowMinReward,
    /// No `ok` judgment by a `--min-judge` judge, or one scoring too low.
    BelowMinJudge,
    /// A `--drop-flagged` judge failed it.
    Flagged,
    /// A `--drop-user-flag` check flagged its simulated user.
    UserFlagged,
    /// Its scenario is a synthesized one no attempt passed.
    Unsolved,
    /// Another termination, scenario or persona than asked for, or a reward
    /// above the maximum.
    OutsideFilter,
    /// The policy never replied: nothing to train on.
    NoPolicyReply,
    /// A tool call's arguments are not a JSON object (`hf`, `sharegpt`).
    ArgumentsNotAnObject,
    /// The turns do not alternate as LLaMA-Factory's ShareGPT requires.
    NotShareGpt,
    /// A curation gate dropped it (`manifest.json` says which and why).
    Curated,
}

impl Filter {
    /// Whether the filter looks at judgments (so they must be read).
    pub fn needs_judgments(&self) -> bool {
        !self.min_judge.is_empty() || !self.drop_flagged.is_empty()
    }

    /// `judgments` must hold the judgments of the conversation's job when
    /// [`Filter::needs_judgments`].
    pub fn check(&self, c: &StoredConversation, judgments: &JudgmentIndex) -> Result<(), Skip> {
        let id = c.conversation.id;
        if self
            .curated
            .as_ref()
            .is_some_and(|set| !set.keeps(&c.conversation))
        {
            return Err(Skip::Curated);
        }
        let Some(reward) = c.conversation.reward else {
            return Err(Skip::NotScored);
        };
        if self.unsolved_scenario(&c.conversation) {
            return Err(Skip::Unsolved);
        }
        if self.flagged(id, judgments) {
            return Err(Skip::Flagged);
        }
        if self.user_flagged(&c.conversation) {
            return Err(Skip::UserFlagged);
        }
        if self.min_reward.is_some_and(|min| reward < min) {
            return Err(Skip::BelowMinReward);
        }
        if !self.conversations.keeps(&c.conversation) {
            return Err(Skip::OutsideFilter);
        }
        if !self.judged_high_enough(id, judgments) {
            return Err(Skip::BelowMinJudge);
        }
        Ok(())
    }

    /// The judge conditions alone (`min_judge`, `drop_flagged`) for
    /// conversation `id`: what a conversation browser filters by, where an
    /// unscored conversation is still shown.
    pub fn check_judges(&self, id: i64, judgments: &JudgmentIndex) -> Result<(), Skip> {
        if self.flagged(id, judgments) {
            return Err(Skip::Flagged);
        }
        if !self.judged_high_enough(id, judgments) {
            return Err(Skip::BelowMinJudge);
        }
        Ok(())
    }

    /// Whether one of `drop_user_flags` fired on the conversation's user.
    /// Stored checks that do not read drop nothing (and are reported by
    /// `sparring stats`).
    pub fn user_flagged(&self, c: &crate::store::ConversationRow) -> bool {
        if self.drop_user_flags.is_empty() {
            return false;
        }
        match UserChecks::from_stored(c.user_checks.as_ref()) {
            Ok(Some(checks)) => self.drop_user_flags.iter().any(|f| checks.is_flagged(*f)),
            _ => false,
        }
    }

    /// Whether the conversation is one of an unsolved synthesized scenario.
    pub fn unsolved_scenario(&self, c: &crate::store::ConversationRow) -> bool {
        self.unsolved.contains(&c.scenario_id)
    }

    fn flagged(&self, id: i64, judgments: &JudgmentIndex) -> bool {
        self.drop_flagged
            .iter()
            .any(|judge| judgments.scores(id, judge).any(|s| s < 0.5))
    }

    fn judged_high_enough(&self, id: i64, judgments: &JudgmentIndex) -> bool {
        self.min_judge.iter().all(|min| {
            judgments
                .scores(id, &min.judge)
                .any(|score| score >= min.score)
        })
    }

    /// The judges the filter names that have no judgments among `judged`
    /// (the judge names with judgments of the job): a `min_judge` one keeps
    /// nothing, a `drop_flagged` one drops nothing.
    pub fn judges_without_judgments(&self, judged: &[String]) -> UnjudgedJudges {
        let unknown = |name: &&str| !judged.iter().any(|j| j == name);
        UnjudgedJudges {
            min_judge: self
                .min_judge
                .iter()
                .map(|m| m.judge.as_str())
                .filter(unknown)
                .map(str::to_string)
                .collect(),
            drop_flagged: self
                .drop_flagged
                .iter()
                .map(String::as_str)
                .filter(unknown)
                .map(str::to_string)
                .collect(),
            judged: judged.to_vec(),
        }
    }
}

/// See [`Filter::judges_without_judgments`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UnjudgedJudges {
    pub min_judge: Vec<String>,
    pub drop_flagged: Vec<String>,
    /// The judges that do have judgments of the job, sorted.
    pub judged: Vec<String>,
}

impl UnjudgedJudges {
    /// `judges with judgments of job 3: a, b`, or that there are none.
    pub fn listed(&self, job: i64) -> String {
        if self.judged.is_empty() {
            "none of the job's conversations has been judged".to_string()
        } else {
            format!(
                "judges with judgments of job {job}: {}",
                self.judged.join(", ")
            )
        }
    }
}

/// The names of the judges with judgments of job `job_id`'s conversations, sorted.
pub async fn judged_by(store: &dyn Store, job_id: i64) -> Result<Vec<String>, StoreError> {
    Ok(judge_names(&store.judgments_of_job(job_id).await?))
}

/// The judge names of `rows`, sorted, each once.
pub fn judge_names(rows: &[crate::store::JudgmentRow]) -> Vec<String> {
    let mut names: Vec<String> = rows.iter().map(|j| j.judge_name.clone()).collect();
    names.sort();
    names.dedup();
    names
}

/// How many conversations were left out, by reason.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Skipped {
    pub not_scored: u64,
    pub below_min_reward: u64,
    pub below_min_judge: u64,
    pub flagged: u64,
    pub user_flagged: u64,
    pub unsolved: u64,
    pub outside_filter: u64,
    pub no_policy_reply: u64,
    pub arguments_not_an_object: u64,
    pub not_sharegpt: u64,
    pub curated: u64,
}

impl Skipped {
    pub fn add(&mut self, skip: Skip) {
        match skip {
            Skip::NotScored => self.not_scored += 1,
            Skip::BelowMinReward => self.below_min_reward += 1,
            Skip::BelowMinJudge => self.below_min_judge += 1,
            Skip::Flagged => self.flagged += 1,
            Skip::UserFlagged => self.user_flagged += 1,
            Skip::Unsolved => self.unsolved += 1,
            Skip::OutsideFilter => self.outside_filter += 1,
            Skip::NoPolicyReply => self.no_policy_reply += 1,
            Skip::ArgumentsNotAnObject => self.arguments_not_an_object += 1,
            Skip::NotShareGpt => self.not_sharegpt += 1,
            Skip::Curated => self.curated += 1,
        }
    }

    pub fn total(&self) -> u64 {
        self.not_scored
            + self.below_min_reward
            + self.below_min_judge
            + self.flagged
            + self.user_flagged
            + self.unsolved
            + self.outside_filter
            + self.no_policy_reply
            + self.arguments_not_an_object
            + self.not_sharegpt
            + self.curated
    }
}

/// `3 not scored, 2 below --min-reward`, or `none`.
impl fmt::Display for Skipped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_counts(
            f,
            &[
                (self.not_scored, "not scored"),
                (self.flagged, "flagged by a --drop-flagged judge"),
                (
                    self.user_flagged,
                    "with a --drop-user-flag flag on the simulated user",
                ),
                (
                    self.unsolved,
                    "of unsolved synthesized scenarios (--keep-unsolved keeps them)",
                ),
                (self.below_min_reward, "below --min-reward"),
                (
                    self.below_min_judge,
                    "without a high enough --min-judge score",
                ),
                (
                    self.outside_filter,
                    "outside the termination, scenario, persona, probe outcome or max reward asked for",
                ),
                (self.no_policy_reply, "without a policy reply"),
                (
                    self.arguments_not_an_object,
                    "with tool-call arguments that are not a JSON object",
                ),
                (
                    self.not_sharegpt,
                    "whose turns do not alternate as ShareGPT requires",
                ),
                (
                    self.curated,
                    "dropped by the profile's gates (manifest.json says why)",
                ),
            ],
        )
    }
}

/// `parts` that are not zero as `3 why, 1 why`, or `none`.
pub(crate) fn write_counts(f: &mut fmt::Formatter<'_>, parts: &[(u64, &str)]) -> fmt::Result {
    let mut first = true;
    for (n, why) in parts.iter().filter(|(n, _)| *n > 0) {
        if !first {
            f.write_str(", ")?;
        }
        first = false;
        write!(f, "{n} {why}")?;
    }
    if first {
        f.write_str("none")?;
    }
    Ok(())
}

#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("cannot write the export")]
    Io(#[from] std::io::Error),
    #[error("conversation {conversation} is stored inconsistently: {message}")]
    Corrupt { conversation: i64, message: String },
    #[error(transparent)]
    CorruptJudgment(#[from] CorruptJudgment),
    #[error(
        "job {job} is not a NeMo Gym job: --format nemo_gym writes the rollouts a NeMo Gym \
         resources server verified, which only generation jobs whose [environment] kind is \
         \"nemo_gym\" have; {}",
        nemo_gym::nemo_gym_jobs_listed(nemo_gym_jobs)
    )]
    NotNemoGym { job: i64, nemo_gym_jobs: Vec<i64> },
    #[error(
        "judge '{judge}' is not pairwise: its judgments of job {job}'s conversations are {mode} \
         verdicts, and --format dpo makes its pairs from a pairwise judge's preferences \
         (`sparring judge JUDGES.toml --pairwise --a JOB --b OTHER_JOB`); {}",
        pairwise_judges_listed(pairwise)
    )]
    NotPairwise {
        judge: String,
        job: i64,
        /// What its verdicts are: pointwise, equivalence or assertions.
        mode: &'static str,
        /// The judges with preference verdicts there.
        pairwise: Vec<String>,
    },
    #[error(
        "no judgments by judge '{judge}' for the conversations of job {job}; {}",
        judges_with_judgments(present)
    )]
    NoJudgments {
        judge: String,
        job: i64,
        /// The judge names that have judgments there.
        present: Vec<String>,
    },
}

fn pairwise_judges_listed(pairwise: &[String]) -> String {
    if pairwise.is_empty() {
        "no pairwise judge has judged the job's conversations".into()
    } else {
        format!(
            "pairwise judges with judgments there: {}",
            pairwise.join(", ")
        )
    }
}

fn judges_with_judgments(present: &[String]) -> String {
    if present.is_empty() {
        "the job's conversations have no judgments at all (run `sparring judge` first)".into()
    } else {
        format!("judges with judgments there: {}", present.join(", "))
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ExportCounts {
    pub written: u64,
    pub skipped: Skipped,
}

const PAGE: u32 = 200;

/// An export read one store page at a time: each [`Exporter::next_rows`] is
/// the rows of the next page, so memory stays constant however big the job.
pub struct Exporter<'a> {
    store: &'a dyn Store,
    job_id: i64,
    format: Format,
    filter: Filter,
    after: i64,
    done: bool,
    counts: ExportCounts,
    /// The job's judgments (filters and metadata), read with the first page.
    judgments: Option<JudgmentIndex>,
    /// Keep the user's own tool calls (dual control); left out by default.
    user_tools: bool,
    /// The judges that scored any of the job's conversations: the keys of
    /// every row's `metadata.judges`.
    judges: Vec<String>,
    /// The job's rollout groups, read with the first page.
    groups: Option<groups::RolloutGroups>,
    /// How each row's advantage is written.
    advantage: groups::Advantage,
}

impl<'a> Exporter<'a> {
    pub fn new(store: &'a dyn Store, job_id: i64, format: Format, filter: Filter) -> Self {
        Exporter {
            store,
            job_id,
            format,
            filter,
            after: 0,
            done: false,
            counts: ExportCounts::default(),
            judgments: None,
            user_tools: false,
            judges: Vec::new(),
            groups: None,
            advantage: groups::Advantage::default(),
        }
    }

    /// Write each row's advantage centred (the default) or normalized.
    pub fn with_advantage(mut self, advantage: groups::Advantage) -> Self {
        self.advantage = advantage;
        self
    }

    /// Keep the user's own tool calls and their results (`hf` only; the
    /// other formats have no place for them): the policy's training data
    /// leaves them out, since the policy never saw them.
    pub fn with_user_tools(mut self, keep: bool) -> Self {
        self.user_tools = keep;
        self
    }

    /// The rows of the next page (possibly none, when a whole page is
    /// filtered out); `None` once every conversation was read.
    pub async fn next_rows(&mut self) -> Result<Option<Vec<Row>>, ExportError> {
        if self.done {
            return Ok(None);
        }
        let judgments = match self.judgments.take() {
            Some(judgments) => judgments,
            None => {
                let index = JudgmentIndex::build(self.store.judgments_of_job(self.job_id).await?)?;
                self.judges = index.judges();
                index
            }
        };
        let judgments = &*self.judgments.insert(judgments);
        if self.groups.is_none() {
            self.groups = Some(groups::RolloutGroups::read(self.store, self.job_id).await?);
        }
        let groups = self.groups.as_ref();
        let page = self
            .store
            .conversations_page(self.job_id, self.after, PAGE)
            .await?;
        let Some(last) = page.last() else {
            self.done = true;
            return Ok(None);
        };
        self.after = last.conversation.id;
        let mut rows = Vec::new();
        for c in &page {
            if let Err(skip) = self.filter.check(c, judgments) {
                self.counts.skipped.add(skip);
                continue;
            }
            let group = groups.and_then(|g| g.fields(&c.conversation, self.advantage));
            let metadata = metadata::of(c, judgments, &self.judges, group.as_ref());
            let mut line = match line_of(self.format, c, &metadata, self.user_tools)? {
                Ok(line) => line,
                Err(skip) => {
                    self.counts.skipped.add(skip);
                    continue;
                }
            };
            if self.format == Format::NemoGym {
                let tokens = self.store.message_tokens(c.conversation.id).await?;
                nemo_gym::put_tokens(&mut line, c, &tokens)?;
                nemo_gym::put_group(&mut line, group.as_ref());
            }
            rows.push(Row {
                line,
                sidecar: self.format.metadata_in_sidecar().then_some(metadata),
                scenario: c.conversation.scenario_id.clone(),
            });
            self.counts.written += 1;
        }
        Ok(Some(rows))
    }

    /// The JSONL lines of the next page (see [`Exporter::next_rows`]),
    /// without sidecar metadata.
    pub async fn next_chunk(&mut self) -> Result<Option<Vec<u8>>, ExportError> {
        let Some(rows) = self.next_rows().await? else {
            return Ok(None);
        };
        let mut out = Vec::new();
        for row in &rows {
            sink::write_line(&mut out, &row.line)?;
        }
        Ok(Some(out))
    }

    pub fn counts(&self) -> ExportCounts {
        self.counts
    }
}

/// `c` as a line of `format` with its `metadata`, or why the format cannot
/// write it.
pub fn line_of(
    format: Format,
    c: &StoredConversation,
    metadata: &serde_json::Value,
    user_tools: bool,
) -> Result<Result<serde_json::Value, Skip>, ExportError> {
    Ok(match format {
        Format::OpenAi => openai::line(c)?,
        Format::Hf => hf::line(c, metadata.clone(), user_tools)?,
        Format::ShareGpt => sharegpt::line(c, metadata.clone())?,
        Format::NemoGym => Ok(nemo_gym::line(c)?),
    })
}

/// Write a job's conversations as rows to `sink`, calling `on_page` after
/// each page with the counts so far.
pub async fn write(
    store: &dyn Store,
    job_id: i64,
    format: Format,
    filter: &Filter,
    sink: &mut (dyn RowSink + Send),
    on_page: &mut (dyn FnMut(ExportCounts) + Send),
) -> Result<ExportCounts, ExportError> {
    write_from(
        Exporter::new(store, job_id, format, filter.clone()),
        sink,
        on_page,
    )
    .await
}

/// [`write`] from an exporter set up by the caller (e.g. keeping the user's
/// tool calls).
pub async fn write_from(
    mut exporter: Exporter<'_>,
    sink: &mut (dyn RowSink + Send),
    on_page: &mut (dyn FnMut(ExportCounts) + Send),
) -> Result<ExportCounts, ExportError> {
    while let Some(rows) = exporter.next_rows().await? {
        for row in &rows {
            sink.write_row(row)?;
        }
        on_page(exporter.counts());
    }
    sink.flush()?;
    Ok(exporter.counts())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn min_judge_reads_name_equals_score() {
        let m: MinJudge = "helpfulness=7.5".parse().unwrap();
        assert_eq!(
            m,
            MinJudge {
                judge: "helpfulness".into(),
                score: 7.5
            }
        );
        let m: MinJudge = " fidelity = 1 ".parse().unwrap();
        assert_eq!((m.judge.as_str(), m.score), ("fidelity", 1.0));
    }

    #[test]
    fn a_malformed_min_judge_says_what_is_expected() {
        for bad in [
            "helpfulness",
            "=7",
            "helpfulness=high",
            "helpfulness=",
            "x=inf",
        ] {
            let err = bad.parse::<MinJudge>().unwrap_err();
            assert!(err.contains("expected NAME=SCORE"), "{bad}: {err}");
            assert!(err.contains(bad.trim()), "{bad}: {err}");
        }
    }

    #[test]
    fn skipped_counts_read_as_reasons() {
        let mut s = Skipped::default();
        assert_eq!(s.to_string(), "none");
        s.add(Skip::NotScored);
        s.add(Skip::BelowMinJudge);
        s.add(Skip::BelowMinJudge);
        assert_eq!(s.total(), 3);
        assert_eq!(
            s.to_string(),
            "1 not scored, 2 without a high enough --min-judge score"
        );
    }
}
