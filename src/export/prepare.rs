//! A checked [`ExportRequest`] completed against the store: the job found,
//! a `nemo_gym` export held to NeMo Gym jobs, the job's own filters added
//! (its `drop_flagged` judges and user checks, its unsolved synthesized
//! scenarios) unless asked to keep them, and the judges the filters name
//! checked for judgments. What was added is said as [`Notice`]s, which the
//! command line prints and the service leaves out.

use crate::store::browse::ConversationFilter;
use crate::store::{JobRow, JudgmentStore, Store, StoreError};
use crate::user_checks::UserFlag;

use super::request::{CheckedRequest, ExportKind, ExportRequest, FilterRequest, RequestError};
use super::split::Split;
use super::target::ExportTarget;
use super::unsolved::synthesized_outcomes;
use super::{judge_names, judged_by, Exporter, Filter, Format, JudgmentIndex, UnsolvedScenarios};

/// What preparing an export added or found, for the person who asked.
#[derive(Debug, Clone, PartialEq)]
pub enum Notice {
    /// The job's own `drop_flagged` judge, added to the filter.
    JobFlaggedJudge(String),
    /// A check of the job's `[user_simulator] drop_flagged`, added.
    JobUserCheck(UserFlag),
    /// Which of the job's scenarios are synthesized cannot be told, so none
    /// is left out as unsolved.
    UnsolvedUnreadable { job: i64, reason: String },
    /// The conversations of this many unsolved synthesized scenarios are
    /// left out.
    DroppingUnsolved { job: i64, scenarios: usize },
    /// A `drop_flagged` judge without judgments of the job: it drops
    /// nothing. `listed` names the judges that have some.
    DropsNothing { judge: String, listed: String },
}

/// An export ready to write.
#[derive(Debug, Clone)]
pub struct PreparedExport {
    pub row: JobRow,
    pub kind: ExportKind,
    pub filter: Filter,
    pub split: Option<Split>,
    /// Where it goes; `None`: the caller takes the rows.
    pub target: Option<ExportTarget>,
    /// A curated export's first pass: what it kept and why it dropped the
    /// rest (the filter holds to its set).
    pub curated: Option<Box<super::curate::Curated>>,
    /// How each row's advantage is written.
    pub advantage: super::groups::Advantage,
}

impl PreparedExport {
    /// The lines of a [`ExportKind::Lines`] export, read page by page (the
    /// format of any other kind is openai's).
    pub fn exporter<'a>(&self, store: &'a dyn Store) -> Exporter<'a> {
        let (format, user_tools) = match self.kind {
            ExportKind::Lines { format, user_tools } => (format, user_tools),
            _ => (Format::OpenAi, false),
        };
        Exporter::new(store, self.row.id, format, self.filter.clone())
            .with_user_tools(user_tools)
            .with_advantage(self.advantage)
    }
}

/// [`ExportRequest::check`], then [`CheckedRequest::prepare`].
pub async fn prepare(
    store: &dyn Store,
    request: ExportRequest,
    notices: &mut Vec<Notice>,
) -> Result<PreparedExport, RequestError> {
    request.check()?.prepare(store, notices).await
}

impl CheckedRequest {
    /// The export, once the store says what the request could not: see the
    /// module doc. `notices` gets what was added, in order.
    pub async fn prepare(
        self,
        store: &dyn Store,
        notices: &mut Vec<Notice>,
    ) -> Result<PreparedExport, RequestError> {
        let Some(row) = store.get_job(self.job).await? else {
            return Err(RequestError::NoJob(self.job));
        };
        if let ExportKind::Lines {
            format: Format::NemoGym,
            ..
        } = self.kind
        {
            super::nemo_gym::check_job(store, &row)
                .await
                .map_err(RequestError::NotNemoGym)?;
        }
        refuse_malformed(&self.filters)?;
        let unsolved = match self.kind {
            // The scenarios export decides for itself what to write.
            ExportKind::Scenarios { .. } => None,
            _ => Some(self.filters.keep_unsolved),
        };
        let filter = complete(store, &row, self.filters, unsolved, notices).await?;
        if filter.needs_judgments() {
            refuse_unjudged(&filter, row.id, &judged_by(store, row.id).await?, notices)?;
        }
        let mut filter = filter;
        if let Some(curation) = &self.curation {
            let curated =
                super::curate::pass::curate(store, &row, &filter, &self.kind, curation, self.split)
                    .await
                    .map_err(RequestError::Curate)?;
            filter.curated = Some(curated.set.clone());
            return Ok(PreparedExport {
                row,
                kind: self.kind,
                filter,
                split: curated.split.clone(),
                target: self.target,
                curated: Some(Box::new(curated)),
                advantage: self.advantage,
            });
        }
        let split = match self.split {
            Some(split) => {
                let keys = store.conversation_keys(row.id).await?;
                Some(Split::new(
                    keys.iter().map(|k| k.scenario_id.as_str()),
                    split.fraction,
                    split.seed,
                ))
            }
            None => None,
        };
        Ok(PreparedExport {
            row,
            kind: self.kind,
            filter,
            split,
            target: self.target,
            curated: None,
            advantage: self.advantage,
        })
    }
}

/// The values the edge could not read, one field at a time (the first
/// malformed field's).
fn refuse_malformed(filters: &FilterRequest) -> Result<(), RequestError> {
    let Some(first) = filters.malformed.first() else {
        return Ok(());
    };
    Err(RequestError::Malformed(
        filters
            .malformed
            .iter()
            .filter(|m| m.field == first.field)
            .cloned()
            .collect(),
    ))
}

/// The filter asked for, with the job's own: its `drop_flagged` judges and
/// user checks unless kept, and its unsolved synthesized scenarios when
/// `unsolved` says whether to keep them.
async fn complete(
    store: &dyn Store,
    row: &JobRow,
    asked: FilterRequest,
    unsolved: Option<bool>,
    notices: &mut Vec<Notice>,
) -> Result<Filter, StoreError> {
    let mut drop_flagged = asked.drop_flagged;
    if !asked.keep_flagged {
        add_job_flagged_judges(row, &mut drop_flagged, notices);
    }
    let mut drop_user_flags = asked.drop_user_flags;
    if !asked.keep_user_flagged {
        for flag in job_user_checks(row) {
            if !drop_user_flags.contains(&flag) {
                notices.push(Notice::JobUserCheck(flag));
                drop_user_flags.push(flag);
            }
        }
    }
    let unsolved = match unsolved {
        Some(keep) => unsolved_for(store, row, keep, notices).await?,
        None => UnsolvedScenarios::default(),
    };
    Ok(Filter {
        min_reward: asked.min_reward,
        min_judge: asked.min_judge,
        drop_flagged,
        conversations: ConversationFilter {
            min_reward: None,
            max_reward: asked.max_reward,
            termination: asked.termination,
            scenario: asked.scenario,
            persona: asked.persona,
            probe_outcome: asked.probe_outcome,
        },
        drop_user_flags,
        unsolved,
        curated: None,
    })
}

/// The job's `drop_flagged` judges added to `drop_flagged`, each said.
pub fn add_job_flagged_judges(
    row: &JobRow,
    drop_flagged: &mut Vec<String>,
    notices: &mut Vec<Notice>,
) {
    for name in job_flagged_judges(row) {
        if !drop_flagged.contains(&name) {
            notices.push(Notice::JobFlaggedJudge(name.clone()));
            drop_flagged.push(name);
        }
    }
}

/// The judges of a stored generation job's config with `drop_flagged =
/// true`: exports drop what they flag unless told to keep it (none when its
/// stored config cannot be read).
fn job_flagged_judges(row: &JobRow) -> Vec<String> {
    let Ok(job) = stored_config(row) else {
        return Vec::new();
    };
    crate::judge::judges_of_job(&job)
        .map(|judges| {
            judges
                .into_iter()
                .filter(|j| j.drop_flagged)
                .map(|j| j.name)
                .collect()
        })
        .unwrap_or_default()
}

/// The user checks a stored generation job's config lists in
/// `[user_simulator] drop_flagged` (none when it cannot be read).
fn job_user_checks(row: &JobRow) -> Vec<UserFlag> {
    stored_config(row)
        .map(|job| {
            job.user_simulator
                .drop_flagged
                .iter()
                .filter_map(|name| UserFlag::parse(name))
                .collect()
        })
        .unwrap_or_default()
}

fn stored_config(row: &JobRow) -> Result<crate::config::Job, Vec<crate::config::Problem>> {
    crate::config::load::from_snapshot(
        &format!("job {} (stored config)", row.id),
        &row.config_snapshot,
    )
}

/// The unsolved synthesized scenarios of job `row`, whose conversations are
/// left out unless `keep`; each said.
pub async fn unsolved_for(
    store: &dyn Store,
    row: &JobRow,
    keep: bool,
    notices: &mut Vec<Notice>,
) -> Result<UnsolvedScenarios, StoreError> {
    if keep {
        return Ok(UnsolvedScenarios::default());
    }
    let outcomes = synthesized_outcomes(store, row).await?;
    if let Some(reason) = &outcomes.unreadable {
        notices.push(Notice::UnsolvedUnreadable {
            job: row.id,
            reason: reason.clone(),
        });
    }
    let unsolved = outcomes.unsolved();
    if !unsolved.is_empty() {
        notices.push(Notice::DroppingUnsolved {
            job: row.id,
            scenarios: unsolved.len(),
        });
    }
    Ok(unsolved)
}

/// The judgments `filter` needs of job `job`'s conversations, read once;
/// refused when a `min_judge` judge has none (nothing would be kept), said
/// when a `drop_flagged` one has none (it drops nothing).
pub async fn judgments_for(
    store: &dyn JudgmentStore,
    job: i64,
    filter: &Filter,
    notices: &mut Vec<Notice>,
) -> Result<JudgmentIndex, RequestError> {
    if !filter.needs_judgments() {
        return Ok(JudgmentIndex::default());
    }
    let rows = store.judgments_of_job(job).await?;
    refuse_unjudged(filter, job, &judge_names(&rows), notices)?;
    Ok(JudgmentIndex::build(rows)?)
}

/// A `min_judge` judge without judgments among `judged` (the judges with
/// judgments of job `job`) is refused; a `drop_flagged` one is said.
fn refuse_unjudged(
    filter: &Filter,
    job: i64,
    judged: &[String],
    notices: &mut Vec<Notice>,
) -> Result<(), RequestError> {
    let unjudged = filter.judges_without_judgments(judged);
    let listed = unjudged.listed(job);
    for judge in &unjudged.drop_flagged {
        notices.push(Notice::DropsNothing {
            judge: judge.clone(),
            listed: listed.clone(),
        });
    }
    if unjudged.min_judge.is_empty() {
        Ok(())
    } else {
        Err(RequestError::Unjudged { job, unjudged })
    }
}
