//! The judgments exports and reports go by. Only `ok` judgments say anything
//! (unparseable and failed ones are neither a loss nor a zero), and of a judge
//! whose config changed only the newest judgment of each conversation counts.

use std::collections::HashMap;

use crate::judge::Verdict;
use crate::store::JudgmentRow;

/// A stored `ok` judgment whose verdict does not read as a [`Verdict`].
#[derive(Debug, thiserror::Error)]
#[error("judgment {judgment} (judge '{judge}') is stored inconsistently: {message}")]
pub struct CorruptJudgment {
    pub judgment: i64,
    pub judge: String,
    pub message: String,
}

/// The newest judgment per judge name and conversation(s), in id order.
///
/// The store keeps one judgment per judge *config hash*: after a judge's
/// template changes, a conversation may have two judgments under one name.
/// Counting both would count the conversation twice; the newer one stands.
pub fn newest_judgments(rows: Vec<JudgmentRow>) -> Vec<JudgmentRow> {
    let mut newest: HashMap<(String, i64, Option<i64>), JudgmentRow> = HashMap::new();
    for row in rows {
        let key = (
            row.judge_name.clone(),
            row.conversation_a,
            row.conversation_b,
        );
        match newest.get(&key) {
            Some(kept) if (kept.updated_at, kept.id) >= (row.updated_at, row.id) => {}
            _ => {
                newest.insert(key, row);
            }
        }
    }
    let mut kept: Vec<JudgmentRow> = newest.into_values().collect();
    kept.sort_by_key(|row| row.id);
    kept
}

/// The verdict of an `ok` judgment; `None` for unparseable and failed ones.
pub fn ok_verdict(row: &JudgmentRow) -> Result<Option<Verdict>, CorruptJudgment> {
    if row.status != "ok" {
        return Ok(None);
    }
    let corrupt = |message: String| CorruptJudgment {
        judgment: row.id,
        judge: row.judge_name.clone(),
        message,
    };
    let value = row
        .verdict
        .clone()
        .ok_or_else(|| corrupt("status ok without a verdict".into()))?;
    serde_json::from_value(value)
        .map(Some)
        .map_err(|e| corrupt(format!("the verdict does not read: {e}")))
}

/// Per conversation, the scores its `ok` judgments gave, by judge name: what
/// `--min-judge` and `--drop-flagged` look at. Built from one job's judgments.
#[derive(Debug, Clone, Default)]
pub struct JudgmentIndex {
    scores: HashMap<i64, Vec<(String, f64)>>,
}

impl JudgmentIndex {
    /// From the judgments of a job (`JudgmentStore::judgments_of_job`). A judgment gives
    /// conversation A a score when its verdict has one: a pointwise score, 1/0
    /// for equivalence, the share met for assertions. Preferences give none.
    pub fn build(rows: Vec<JudgmentRow>) -> Result<Self, CorruptJudgment> {
        let mut index = JudgmentIndex::default();
        for row in newest_judgments(rows) {
            if let Some(score) = ok_verdict(&row)?.and_then(|v| v.score()) {
                index
                    .scores
                    .entry(row.conversation_a)
                    .or_default()
                    .push((row.judge_name, score));
            }
        }
        Ok(index)
    }

    /// The names of the judges that gave any score, sorted.
    pub fn judges(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .scores
            .values()
            .flatten()
            .map(|(name, _)| name.clone())
            .collect();
        names.sort();
        names.dedup();
        names
    }

    /// The scores judge `judge` gave conversation `conversation`.
    pub fn scores<'a>(
        &'a self,
        conversation: i64,
        judge: &'a str,
    ) -> impl Iterator<Item = f64> + 'a {
        self.scores
            .get(&conversation)
            .into_iter()
            .flatten()
            .filter(move |(name, _)| name == judge)
            .map(|(_, score)| *score)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn row(id: i64, judge: &str, a: i64, status: &str, score: Option<f64>) -> JudgmentRow {
        JudgmentRow {
            id,
            job_id: 1,
            judge_name: judge.into(),
            judge_hash: format!("hash-{id}"),
            conversation_a: a,
            conversation_b: None,
            status: status.into(),
            verdict: score.map(|s| json!({"kind": "score", "score": s})),
            score,
            consistent: None,
            reason: None,
            updated_at: id,
        }
    }

    #[test]
    fn a_newer_judgment_of_the_same_judge_and_conversation_replaces_the_older() {
        let rows = vec![
            row(1, "helpful", 10, "ok", Some(9.0)),
            row(2, "helpful", 11, "ok", Some(5.0)),
            row(3, "helpful", 10, "ok", Some(3.0)),
            row(4, "fidelity", 10, "ok", Some(1.0)),
        ];
        let ids: Vec<i64> = newest_judgments(rows.clone())
            .iter()
            .map(|r| r.id)
            .collect();
        assert_eq!(ids, vec![2, 3, 4]);
        let index = JudgmentIndex::build(rows).unwrap();
        assert_eq!(index.scores(10, "helpful").collect::<Vec<_>>(), vec![3.0]);
        assert_eq!(index.scores(10, "fidelity").collect::<Vec<_>>(), vec![1.0]);
        assert_eq!(index.scores(12, "helpful").count(), 0);
        assert_eq!(index.judges(), ["fidelity", "helpful"]);
    }

    #[test]
    fn unparseable_and_failed_judgments_give_no_score() {
        let rows = vec![
            row(1, "helpful", 10, "unparseable", None),
            row(2, "helpful", 11, "failed", None),
        ];
        let index = JudgmentIndex::build(rows).unwrap();
        assert_eq!(index.scores(10, "helpful").count(), 0);
        assert_eq!(index.scores(11, "helpful").count(), 0);
    }

    #[test]
    fn an_ok_judgment_without_a_readable_verdict_is_corrupt() {
        let mut bad = row(7, "helpful", 10, "ok", None);
        bad.verdict = Some(json!({"kind": "nonsense"}));
        let err = JudgmentIndex::build(vec![bad]).unwrap_err();
        assert_eq!(err.judgment, 7);
        assert!(err.to_string().contains("judge 'helpful'"), "{err}");
    }
}
