//! What a job is called on a page: a generation job by its name, a judging
//! job by what it judges (its stored name ends in a config hash).

use crate::jobs::judging::{JudgesSource, JudgingSpec, JudgingTarget};
use crate::store::JobRow;

/// The kind of job a page shows (the store's own enum, serialised as the
/// templates compare it: `generation` / `judging`).
pub use crate::store::JobKind as Kind;

pub fn kind(row: &JobRow) -> Kind {
    row.kind
}

/// `Judging job 3 with its own judges`, `Judging job 1 against job 2`, or
/// the generation job's name.
pub fn label(row: &JobRow) -> String {
    if matches!(kind(row), Kind::Generation | Kind::Import) {
        return row.name.clone();
    }
    let Ok(spec) = serde_json::from_str::<JudgingSpec>(&row.config_snapshot) else {
        return row.name.clone();
    };
    let judges = match &spec.judges {
        JudgesSource::File { path } => format!(
            "the judges of {}",
            path.file_name().map_or_else(
                || path.display().to_string(),
                |f| f.to_string_lossy().into()
            )
        ),
        JudgesSource::Job { .. } => "its own judges".to_string(),
        JudgesSource::Inline { .. } => "the judges sent with it".to_string(),
    };
    let min = spec
        .min_reward
        .map_or_else(String::new, |m| format!(", reward ≥ {m}"));
    match spec.target {
        JudgingTarget::Job { job_id } => format!("Judging job {job_id} with {judges}{min}"),
        JudgingTarget::Pairwise { a, b, .. } => {
            format!("Judging job {a} against job {b} with {judges}{min}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::JobStatus;

    #[test]
    fn a_judging_job_is_named_by_what_it_judges_not_by_its_hash() {
        let mut row = JobRow {
            id: 4,
            name: "judge-1-vs-2-0a1b2c3d".into(),
            kind: Kind::Judging,
            config_snapshot: serde_json::json!({
                "judges": {"source": "job", "job_id": 1},
                "target": {"kind": "pairwise", "a": 1, "b": 2},
            })
            .to_string(),
            config_hash: String::new(),
            status: JobStatus::Done,
            created_at: 0,
            updated_at: 0,
        };
        assert_eq!(
            label(&row),
            "Judging job 1 against job 2 with its own judges"
        );
        row.config_snapshot = "not json".into();
        assert_eq!(label(&row), "judge-1-vs-2-0a1b2c3d");
        row.kind = Kind::Generation;
        assert_eq!(kind(&row), Kind::Generation);
    }
}
