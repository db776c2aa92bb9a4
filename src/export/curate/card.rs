//! The dataset card (`README.md`) of a curated export, as the Hugging Face
//! Hub reads it: a YAML header (`configs` with each split's `data_files`,
//! `dataset_info.features` matching the format's rows, `task_categories`,
//! `size_categories`, a license placeholder) and a body that says how the
//! data was made: the models, the environments, the gates and their counts,
//! the simulated-user flag rates with 95% Wilson intervals
//! ([`crate::interval`], as `sparring stats` gives them). `datasets.load_dataset(FOLDER)`
//! reads the header. Names only, no path.

use std::fmt::Write as _;

use serde_json::{json, Map, Value};

use crate::interval::wilson;

use super::manifest::DataFile;
use super::pass::Curated;

/// The card of `curated`, exported as `format` into `files`, whose rows
/// have `features` (`datasets.Features.to_dict()` form).
pub fn render(
    curated: &Curated,
    format: &str,
    features: Option<&Value>,
    files: &[DataFile],
) -> String {
    let rows: u64 = files.iter().map(|f| f.rows).sum();
    let mut data_files = Vec::new();
    for f in files {
        data_files.push(json!({"split": f.split, "path": f.name}));
    }
    let splits: Vec<Value> = files
        .iter()
        .map(|f| json!({"name": f.split, "num_examples": f.rows}))
        .collect();
    let mut info = Map::new();
    if let Some(features) = features {
        info.insert("features".into(), yaml_features(features));
    }
    info.insert("splits".into(), Value::Array(splits));
    let header = json!({
        "license": "other",
        "pretty_name": format!("sparring {} ({})", curated.facts.job_name, format),
        "task_categories": ["text-generation"],
        "tags": ["synthetic", "sparring", "multi-turn", "conversational"],
        "size_categories": [size_category(rows)],
        "configs": [{"config_name": "default", "data_files": data_files}],
        "dataset_info": info,
    });
    let mut out = String::from("---\n");
    emit(&header, 0, &mut out);
    out.push_str("---\n");
    out.push_str(MARK);
    out.push_str("\n\n");
    body(curated, format, files, &mut out);
    out
}

/// The line that tells a card sparring wrote from another `README.md`: a
/// curated export replaces only its own.
pub const MARK: &str =
    "<!-- sparring dataset card: rewritten by every curated export to this folder -->";

/// Whether the file at `path` may be replaced by a curated export: missing,
/// or written by one (`README.md` with [`MARK`], `manifest.json` with its
/// `gates`).
pub fn replaceable(path: &std::path::Path) -> bool {
    match crate::regular_file::read_to_string(path) {
        Err(e) => e.kind() == std::io::ErrorKind::NotFound,
        Ok(text) if path.extension().is_some_and(|e| e == "json") => {
            serde_json::from_str::<Value>(&text).is_ok_and(|v| v.get("gates").is_some())
        }
        Ok(text) => text.contains(MARK),
    }
}

/// The Hub's size bucket for `n` rows.
pub fn size_category(n: u64) -> &'static str {
    match n {
        0..1_000 => "n<1K",
        1_000..10_000 => "1K<n<10K",
        10_000..100_000 => "10K<n<100K",
        100_000..1_000_000 => "100K<n<1M",
        1_000_000..10_000_000 => "1M<n<10M",
        _ => "10M<n<100M",
    }
}

fn list_or_none(items: impl IntoIterator<Item = String>) -> String {
    let items: Vec<String> = items.into_iter().collect();
    if items.is_empty() {
        "none recorded".into()
    } else {
        items.join(", ")
    }
}

fn body(curated: &Curated, format: &str, files: &[DataFile], out: &mut String) {
    let f = &curated.facts;
    let c = &curated.curation;
    let _ = writeln!(out, "# sparring {} ({format})\n", f.job_name);
    let _ = writeln!(
        out,
        "Multi-turn conversations between a policy model and an LLM-simulated user, \
         stored by sparring job {} ({} job \"{}\"), curated with the \
         `{}` profile and exported as `{format}`.\n",
        f.job, f.job_kind, f.job_name, c.label
    );
    out.push_str(
        "> License: a placeholder (`other`). Set the license that your models' \
                  and environments' terms allow before sharing.\n\n",
    );
    out.push_str("## How the data was made\n\n");
    let _ = writeln!(
        out,
        "- Policy models: {}",
        list_or_none(f.policy_models.iter().cloned())
    );
    let _ = writeln!(
        out,
        "- Simulated-user models: {}",
        list_or_none(f.user_models.iter().cloned())
    );
    let judges = f.judges.iter().map(|(name, models)| {
        if models.is_empty() {
            name.clone()
        } else {
            format!(
                "{name} ({})",
                models.iter().cloned().collect::<Vec<_>>().join(", ")
            )
        }
    });
    let _ = writeln!(out, "- Judges (models): {}", list_or_none(judges));
    let _ = writeln!(
        out,
        "- Environments: {}",
        list_or_none(f.environments.iter().cloned())
    );
    let _ = writeln!(out, "- Scenarios kept: {}\n", f.scenarios_kept);
    out.push_str("## Quality gates\n\n");
    let _ = writeln!(
        out,
        "Applied in order; what leaves a gate enters the next. Stratified by {}. \
         `manifest.json` gives the counts per stratum and every dropped conversation with \
         its reason.\n",
        c.stratify_by
            .as_ref()
            .map_or("nothing".into(), |s| format!("`{}`", s.name()))
    );
    if curated.uncapped > 0 {
        let _ = writeln!(
            out,
            "{} kept conversations have no {} and were not capped (the cap per stratum needs one).\n",
            curated.uncapped,
            c.stratify_by
                .as_ref()
                .map_or("stratum".into(), |s| s.name())
        );
    }
    out.push_str("| gate | entered | left | dropped |\n|---|---:|---:|---:|\n");
    for g in curated.funnel.gates() {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} |",
            g.gate, g.entered, g.left, g.dropped
        );
    }
    out.push_str("\n## Simulated-user flags\n\n");
    if f.flags.is_empty() {
        out.push_str("No conversation of the job has stored user checks.\n");
    } else {
        out.push_str(
            "Over every conversation of the job the check ran on, before the gates; \
             95% Wilson intervals.\n\n| check | flagged | of | rate | 95% interval |\n\
             |---|---:|---:|---:|---|\n",
        );
        for (flag, flagged, checked) in &f.flags {
            let rate = *flagged as f64 / (*checked).max(1) as f64;
            let ci = wilson(*flagged, *checked)
                .map_or("n/a".to_string(), |(lo, hi)| format!("[{lo:.3}, {hi:.3}]"));
            let _ = writeln!(
                out,
                "| {} | {flagged} | {checked} | {rate:.3} | {ci} |",
                flag.as_str()
            );
        }
    }
    out.push_str("\n## Splits\n\n");
    let held = c.profile.holdout.map_or(String::new(), |(share, seed)| {
        format!(" The validation split holds out {share} of the kept scenarios (seed {seed}): no scenario is in both splits.")
    });
    let _ = writeln!(out, "By scenario.{held}\n");
    if files.len() == 1 && c.profile.holdout.is_some() {
        out.push_str(
            "Only one split has rows: the other is not written (`datasets` refuses a split without data).\n\n",
        );
    }
    for file in files {
        let _ = writeln!(
            out,
            "- `{}`: {} rows (`{}`)",
            file.split, file.rows, file.name
        );
    }
}

/// `features` (`Features.to_dict()` form) as the card's YAML list, the form
/// `datasets.Features._to_yaml_list` writes.
pub fn yaml_features(features: &Value) -> Value {
    Value::Array(
        features
            .as_object()
            .into_iter()
            .flatten()
            .map(|(name, feature)| {
                let mut entry = Map::new();
                entry.insert("name".into(), json!(name));
                let (key, value) = yaml_type(feature);
                entry.insert(key.into(), value);
                Value::Object(entry)
            })
            .collect(),
    )
}

/// The key and value a feature has in the YAML list: `dtype`, `list` or `struct`.
fn yaml_type(feature: &Value) -> (&'static str, Value) {
    match feature.get("_type").and_then(Value::as_str) {
        Some("Value") => ("dtype", feature["dtype"].clone()),
        Some("Json") => ("dtype", json!("json")),
        Some("List") => {
            let inner = &feature["feature"];
            match yaml_type(inner) {
                ("struct", fields) => ("list", fields),
                (_, dtype) => ("list", dtype),
            }
        }
        _ => ("struct", yaml_features(feature)),
    }
}

/// `value` as block YAML at `indent` spaces (strings as JSON strings, which
/// YAML reads as double-quoted scalars).
fn emit(value: &Value, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    match value {
        Value::Object(map) => {
            for (key, item) in map {
                out.push_str(&pad);
                out.push_str(key);
                out.push(':');
                inline_or_block(item, indent, out);
            }
        }
        Value::Array(items) => {
            for item in items {
                out.push_str(&pad);
                out.push('-');
                match item {
                    Value::Object(map) if !map.is_empty() => {
                        // The first key on the dash's line, the rest under it.
                        let mut first = true;
                        for (key, v) in map {
                            if first {
                                out.push(' ');
                                first = false;
                            } else {
                                out.push_str(&pad);
                                out.push_str("  ");
                            }
                            out.push_str(key);
                            out.push(':');
                            inline_or_block(v, indent + 2, out);
                        }
                    }
                    other => inline_or_block(other, indent, out),
                }
            }
        }
        scalar => {
            out.push_str(&pad);
            out.push_str(&scalar_text(scalar));
            out.push('\n');
        }
    }
}

fn inline_or_block(item: &Value, indent: usize, out: &mut String) {
    match item {
        Value::Object(m) if !m.is_empty() => {
            out.push('\n');
            emit(item, indent + 2, out);
        }
        Value::Array(a) if !a.is_empty() => {
            out.push('\n');
            emit(item, indent + 2, out);
        }
        Value::Object(_) => out.push_str(" {}\n"),
        Value::Array(_) => out.push_str(" []\n"),
        scalar => {
            out.push(' ');
            out.push_str(&scalar_text(scalar));
            out.push('\n');
        }
    }
}

fn scalar_text(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn features_become_the_yaml_list_datasets_writes() {
        let features = json!({
            "a": {"_type": "Json"},
            "m": {"feature": {"role": {"dtype": "string", "_type": "Value"},
                              "args": {"_type": "Json"}}, "_type": "List"},
            "s": {"x": {"dtype": "int64", "_type": "Value"}},
            "w": {"feature": {"dtype": "int64", "_type": "Value"}, "_type": "List"},
        });
        // As datasets 5's Features._to_yaml_list gives it.
        assert_eq!(
            yaml_features(&features),
            json!([
                {"name": "a", "dtype": "json"},
                {"name": "m", "list": [{"name": "args", "dtype": "json"}, {"name": "role", "dtype": "string"}]},
                {"name": "s", "struct": [{"name": "x", "dtype": "int64"}]},
                {"name": "w", "list": "int64"},
            ])
        );
    }

    #[test]
    fn yaml_nests_lists_of_maps_under_their_dash() {
        let mut out = String::new();
        emit(
            &json!({"configs": [{"config_name": "default", "data_files": [{"split": "train", "path": "d.jsonl"}]}], "n": 3, "e": []}),
            0,
            &mut out,
        );
        assert_eq!(
            out,
            "configs:\n  - config_name: \"default\"\n    data_files:\n      - path: \"d.jsonl\"\n        split: \"train\"\ne: []\nn: 3\n"
        );
    }

    #[test]
    fn sizes_fall_in_the_hubs_buckets() {
        assert_eq!(size_category(0), "n<1K");
        assert_eq!(size_category(999), "n<1K");
        assert_eq!(size_category(1_000), "1K<n<10K");
        assert_eq!(size_category(250_000), "100K<n<1M");
    }
}
