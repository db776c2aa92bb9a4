//! `manifest.json` of a curated export: the profile and the settings in
//! force, the funnel (each gate's entered, left and dropped, in all and per
//! stratum), where the kept conversations went, the rows written to each
//! file, and every dropped conversation with its gate and reason. Names
//! only, no path: the folder is meant to be shared as it is.

use serde_json::{json, Value};

use crate::export::Filter;

use super::pass::Curated;

/// One data file written: its split, its name in the folder, its rows.
#[derive(Debug, Clone, PartialEq)]
pub struct DataFile {
    pub split: &'static str,
    pub name: String,
    pub rows: u64,
}

/// What the cap per stratum did with the conversations that have no
/// stratum: `null` without a cap.
fn stratum_cap(curated: &Curated) -> Value {
    let Some(max) = curated.curation.profile.max_per_stratum else {
        return Value::Null;
    };
    let by = curated
        .curation
        .stratify_by
        .as_ref()
        .map_or_else(|| "stratum".to_string(), |s| s.name());
    json!({
        "max_per_stratum": max,
        "by": by,
        "not_capped": curated.uncapped,
        "why_not_capped": (curated.uncapped > 0).then(|| format!(
            "{} kept conversation{} {} no {by} (stratum \"{}\"): the per-{by} cap does not apply to {}",
            curated.uncapped,
            if curated.uncapped == 1 { "" } else { "s" },
            if curated.uncapped == 1 { "has" } else { "have" },
            super::stratum::NONE,
            if curated.uncapped == 1 { "it" } else { "them" },
        )),
    })
}

/// The manifest of `curated`, exported as `format` with `filter` (flags and
/// profile combined) into `files`.
pub fn manifest(curated: &Curated, format: &str, filter: &Filter, files: &[DataFile]) -> Value {
    let profile = &curated.curation.profile;
    let b = &profile.bounds;
    json!({
        "job": curated.facts.job,
        "format": format,
        "profile": curated.curation.label,
        "stratify_by": curated.curation.stratify_by.as_ref().map(|s| s.name()),
        "settings": {
            "min_reward": filter.min_reward,
            "min_judge": filter.min_judge.iter().map(|m| json!({"judge": m.judge, "score": m.score})).collect::<Vec<_>>(),
            "drop_flagged": filter.drop_flagged,
            "drop_user_flags": filter.drop_user_flags.iter().map(|f| f.as_str()).collect::<Vec<_>>(),
            "bounds": {
                "min_turns": b.min_turns, "max_turns": b.max_turns,
                "min_chars": b.min_chars, "max_chars": b.max_chars,
            },
            "near_duplicates": profile.near_duplicates.map(|n| json!({
                "similarity": n.similarity,
                "shingle_words": n.shingle_words,
                "permutations": n.permutations,
            })),
            "max_per_stratum": profile.max_per_stratum,
        },
        "stratum_cap": stratum_cap(curated),
        "gates": curated.funnel.gates(),
        "kept_by_stratum_and_split": curated.sides,
        "files": files.iter().map(|f| json!({"split": f.split, "file": f.name, "rows": f.rows})).collect::<Vec<_>>(),
        "dropped": curated.funnel.dropped(),
    })
}
