//! A judging job as stored in its job row: where its judges come from, what
//! it judges, and the filter.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Where a judging job's judges come from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "source", rename_all = "snake_case")]
pub enum JudgesSource {
    /// A `judges.toml` (absolute path; read again on resume).
    File { path: PathBuf },
    /// The `[[judges]]` of a generation job's stored config.
    Job { job_id: i64 },
    /// Judges TOML sent with the job (the service), kept here so that a
    /// resumed job judges with the same judges; template paths are relative
    /// to `base`.
    Inline { toml: String, base: PathBuf },
}

/// What problems in inline judges name as their file.
pub const INLINE_JUDGES: &str = "judges";

/// What a judging job judges.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum JudgingTarget {
    /// Every conversation of a job, with the judges that judge one conversation.
    Job { job_id: i64 },
    /// Conversations of job A against those of job B, paired by
    /// `match_by`, with the pairwise judges.
    Pairwise {
        a: i64,
        b: i64,
        #[serde(default, skip_serializing_if = "MatchBy::is_default")]
        match_by: MatchBy,
    },
}

/// How pairwise judging pairs job A's conversations with job B's. Where
/// several of a job share a match, they pair in id order: the first with
/// the first.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchBy {
    /// The same scenario, persona and sample (two runs of one dataset).
    #[default]
    Scenario,
    /// The same system prompt and first user message (two models' answers
    /// to the same prompts, imported).
    Prompt,
    /// The same value of this metadata key.
    Metadata(String),
}

impl MatchBy {
    fn is_default(&self) -> bool {
        *self == MatchBy::Scenario
    }

    /// `scenario`, `prompt` or `metadata.KEY`, or what would do.
    pub fn from_user(text: &str) -> Result<MatchBy, String> {
        match text {
            "scenario" => Ok(MatchBy::Scenario),
            "prompt" => Ok(MatchBy::Prompt),
            _ => match text.strip_prefix("metadata.") {
                Some(key) if !key.trim().is_empty() && key.len() <= 200 => {
                    Ok(MatchBy::Metadata(key.to_string()))
                }
                _ => Err(format!(
                    "'{text}' is not a way to pair conversations: use scenario (the same \
                     scenario, persona and sample), prompt (the same system prompt and first \
                     user message) or metadata.KEY (the same value of a metadata key)"
                )),
            },
        }
    }
}

/// A judging job as stored in its job row (JSON): enough to rebuild it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgingSpec {
    pub judges: JudgesSource,
    pub target: JudgingTarget,
    /// Only conversations with at least this reward (A's, when pairwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_reward: Option<f64>,
}
