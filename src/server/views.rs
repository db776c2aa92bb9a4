//! What the API returns and the web UI shows, read from the store once for
//! both: a job with its progress, a conversation's list entry, a whole
//! conversation with its judgments.

use serde::Serialize;

use crate::store::{
    ConversationRow, ItemCounts, JobKind, JobRow, JobStatus, JobStore, JobSummary, JudgeCallRow,
    JudgmentRow, MessageRow, Store, StoredConversation, UsageRow,
};

use super::{ApiError, AppState};

#[derive(Debug, Clone, Serialize)]
pub struct JobView {
    pub id: i64,
    pub name: String,
    pub kind: crate::store::JobKind,
    pub status: JobStatus,
    pub config_hash: String,
    pub created_at: i64,
    pub updated_at: i64,
    pub counts: ItemCounts,
    pub total: i64,
    /// Whether this server is working the job right now.
    pub running_here: bool,
}

impl JobView {
    pub fn finished(&self) -> bool {
        !matches!(self.status, JobStatus::Pending | JobStatus::Running) && !self.running_here
    }
}

pub async fn job_view(state: &AppState, row: JobRow) -> Result<JobView, ApiError> {
    let counts = state.store.item_counts(row.id).await?;
    Ok(JobView {
        id: row.id,
        running_here: state.runs.is_running(row.id),
        name: row.name,
        kind: row.kind,
        status: row.status,
        config_hash: row.config_hash,
        created_at: row.created_at,
        updated_at: row.updated_at,
        total: counts.total(),
        counts,
    })
}

pub async fn job_row(store: &dyn JobStore, id: i64) -> Result<JobRow, ApiError> {
    store.get_job(id).await?.ok_or_else(|| ApiError::no_job(id))
}

/// A job with the aggregates of its stored conversations.
#[derive(Debug, Clone, Serialize)]
pub struct JobDetail {
    #[serde(flatten)]
    pub job: JobView,
    pub summary: SummaryView,
    /// The stored config (TOML for a generation job, JSON for judging and
    /// synthesis jobs); the service shows paths inside its data root relative
    /// to it (`relative_paths`).
    pub config: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct SummaryView {
    pub conversations: i64,
    pub mean_reward: Option<f64>,
    pub terminations: Vec<TerminationCount>,
    pub usage: Vec<UsageRow>,
}

#[derive(Debug, Clone, Serialize)]
pub struct TerminationCount {
    pub termination: String,
    pub count: i64,
}

impl From<JobSummary> for SummaryView {
    fn from(s: JobSummary) -> Self {
        SummaryView {
            conversations: s.conversations,
            mean_reward: s.mean_reward,
            terminations: s
                .terminations
                .into_iter()
                .map(|(termination, count)| TerminationCount { termination, count })
                .collect(),
            usage: s.usage,
        }
    }
}

pub async fn job_detail(state: &AppState, id: i64) -> Result<JobDetail, ApiError> {
    let row = job_row(state.store.as_ref(), id).await?;
    let config = row.config_snapshot.clone();
    let mut summary = state.store.job_summary(id).await?;
    if row.kind == JobKind::Judging {
        // A judging job stores judgments, not conversations: its usage is
        // that of its judge calls.
        summary.usage =
            crate::report::judging_usage::judging_usage(state.store.as_ref(), id).await?;
    }
    let summary = summary.into();
    Ok(JobDetail {
        job: job_view(state, row).await?,
        summary,
        config,
    })
}

/// A conversation in a list: who, how it ended, its reward; no messages.
#[derive(Debug, Clone, Serialize)]
pub struct ConversationEntry {
    pub id: i64,
    pub job_id: i64,
    pub item_key: String,
    pub scenario_id: String,
    pub persona_id: String,
    pub sample: i64,
    pub termination: String,
    pub reward: Option<f64>,
    pub messages: usize,
    pub started_at: i64,
    pub finished_at: i64,
}

impl From<&StoredConversation> for ConversationEntry {
    fn from(c: &StoredConversation) -> Self {
        let r = &c.conversation;
        ConversationEntry {
            id: r.id,
            job_id: r.job_id,
            item_key: r.item_key.clone(),
            scenario_id: r.scenario_id.clone(),
            persona_id: r.persona_id.clone(),
            sample: r.sample,
            termination: r.termination.clone(),
            reward: r.reward,
            messages: c.messages.len(),
            started_at: r.started_at,
            finished_at: r.finished_at,
        }
    }
}

/// A conversation with everything stored about it.
#[derive(Debug, Clone, Serialize)]
pub struct ConversationDetail {
    #[serde(flatten)]
    pub conversation: ConversationRow,
    pub messages: Vec<MessageRow>,
    pub usage: Vec<UsageRow>,
    /// Judgments where it is conversation A or B.
    pub judgments: Vec<JudgmentRow>,
}

pub async fn conversation_detail(
    store: &dyn Store,
    id: i64,
) -> Result<ConversationDetail, ApiError> {
    let stored = store
        .get_conversation(id)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("conversation {id} does not exist")))?;
    let judgments = store.judgments_of_conversation(id).await?;
    Ok(ConversationDetail {
        conversation: stored.conversation,
        messages: stored.messages,
        usage: stored.usage,
        judgments,
    })
}

/// A judgment with the model calls it was made of and the conversation(s) it
/// judged, whole.
pub struct JudgmentSides {
    pub judgment: JudgmentRow,
    /// By order, then sample: `single`, or `ab` and `ba` with a swap check.
    pub calls: Vec<JudgeCallRow>,
    pub a: StoredConversation,
    /// `None` for a judgment of one conversation (or against a reference).
    pub b: Option<StoredConversation>,
}

pub async fn judgment_sides(store: &dyn Store, id: i64) -> Result<JudgmentSides, ApiError> {
    let judgment = store
        .get_judgment(id)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("judgment {id} does not exist")))?;
    let calls = store
        .judge_calls(
            &judgment.judge_hash,
            judgment.conversation_a,
            judgment.conversation_b,
        )
        .await?;
    let stored = |cid: i64| async move {
        store.get_conversation(cid).await?.ok_or_else(|| {
            ApiError::Internal(format!(
                "judgment {id} names conversation {cid}, which is not stored"
            ))
        })
    };
    let a = stored(judgment.conversation_a).await?;
    let b = match judgment.conversation_b {
        Some(b) => Some(stored(b).await?),
        None => None,
    };
    Ok(JudgmentSides {
        judgment,
        calls,
        a,
        b,
    })
}

/// A judgment as the API returns it: the conversations as list entries.
#[derive(Debug, Clone, Serialize)]
pub struct JudgmentView {
    #[serde(flatten)]
    pub judgment: JudgmentRow,
    pub calls: Vec<JudgeCallRow>,
    pub a: ConversationEntry,
    pub b: Option<ConversationEntry>,
}

impl From<&JudgmentSides> for JudgmentView {
    fn from(s: &JudgmentSides) -> Self {
        JudgmentView {
            judgment: s.judgment.clone(),
            calls: s.calls.clone(),
            a: ConversationEntry::from(&s.a),
            b: s.b.as_ref().map(ConversationEntry::from),
        }
    }
}
