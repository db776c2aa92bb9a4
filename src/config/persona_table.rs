//! `[persona_table]` checked: what can be known from the config alone (names,
//! numbers, how it fits `[dataset]`). The table's own columns, templates and
//! the `where` expression are checked against the table by
//! `persona::table` when the job's inputs are read.

use std::path::Path;

use super::file::{DatasetFile, PersonaTableFile, SamplePer};
use super::ranges;
use crate::diagnostics::problem::Problem;

/// The persona fields a table may fill, as `[persona_table.fields]` names them.
pub const FIELDS: [&str; 6] = [
    "id",
    "name",
    "background",
    "speaking_style",
    "traits",
    "language",
];

/// The file extensions of a persona table.
pub const TABLE_EXTENSIONS: [&str; 3] = ["csv", "jsonl", "parquet"];

/// Whether `path` names a table only (CSV or Parquet; a `.jsonl` may also be
/// a file of personas written out, which `[persona_table]` tells apart).
pub fn is_table_only(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("csv" | "parquet")
    )
}

pub fn check(
    path: &Path,
    dataset: &DatasetFile,
    table: Option<&PersonaTableFile>,
    problems: &mut Vec<Problem>,
) {
    let personas = dataset.personas.as_deref();
    let Some(table) = table else {
        if let Some(file) = personas.filter(|p| is_table_only(p)) {
            problems.push(Problem::at_field(
                path,
                "dataset.personas",
                format!(
                    "'{}' is a persona table; add a [persona_table] section naming its id \
                     column and how its columns fill the persona, e.g. id = \"uuid\" and \
                     fields = {{ background = \"persona\" }} (docs/populations.md)",
                    file.display()
                ),
            ));
        }
        return;
    };
    match personas {
        None => problems.push(Problem::at_field(
            path,
            "persona_table",
            "needs a table: set [dataset] personas to a .csv, .jsonl or .parquet file",
        )),
        Some(file) => {
            let extension = file.extension().and_then(|e| e.to_str()).unwrap_or("");
            if !TABLE_EXTENSIONS.contains(&extension) {
                problems.push(Problem::at_field(
                    path,
                    "dataset.personas",
                    format!(
                        "'{}' is not a persona table; with [persona_table] name a .csv, \
                         .jsonl or .parquet file",
                        file.display()
                    ),
                ));
            }
        }
    }
    check_table(path, dataset, table, problems);
}

fn check_table(
    path: &Path,
    dataset: &DatasetFile,
    table: &PersonaTableFile,
    problems: &mut Vec<Problem>,
) {
    if table.id.trim().is_empty() {
        problems.push(Problem::at_field(
            path,
            "persona_table.id",
            "is empty; name the column of each row's unique id, e.g. id = \"uuid\"",
        ));
    }
    for field in table.fields.keys() {
        if !FIELDS.contains(&field.as_str()) {
            problems.push(Problem::at_field(
                path,
                &format!("persona_table.fields.{field}"),
                format!(
                    "'{field}' is not a persona field; the fields are: {}",
                    FIELDS.join(", ")
                ),
            ));
        }
    }
    if !table.fields.contains_key("background") {
        problems.push(Problem::at_field(
            path,
            "persona_table.fields",
            "has no background; give the column or template the simulated user is told \
             they are, e.g. background = \"persona\"",
        ));
    }
    if let Some(n) = table.sample {
        problems.extend(ranges::PERSONA_SAMPLE.problem(path, "persona_table.sample", n));
    }
    if table.per == SamplePer::Scenario {
        if table.sample.is_none() {
            problems.push(Problem::at_field(
                path,
                "persona_table.per",
                "is \"scenario\" but no sample is given; set sample = N (personas per \
                 scenario), or per = \"job\"",
            ));
        }
        if dataset.personas_per_scenario.is_some() {
            problems.push(Problem::at_field(
                path,
                "dataset.personas_per_scenario",
                "is set by [persona_table] per = \"scenario\" (its sample); remove it",
            ));
        }
    }
    if !table.stratify_by.is_empty() && table.sample.is_none() {
        problems.push(Problem::at_field(
            path,
            "persona_table.stratify_by",
            "needs a sample to divide among the strata; set sample = N",
        ));
    }
    for (knob, values) in table.knobs.iter().flatten() {
        for (value, weight) in values {
            problems.extend(ranges::KNOB_WEIGHT.problem(
                path,
                &format!("persona_table.knobs.{knob}.{value}"),
                *weight,
            ));
        }
    }
    for (i, rule) in table.knob_rules.iter().flatten().enumerate() {
        if let Some(strength) = rule.strength {
            problems.extend(ranges::KNOB_RULE_STRENGTH.problem(
                path,
                &format!("persona_table.knob_rules[{i}].strength"),
                strength,
            ));
        }
        if let Some([min, max]) = rule.scale {
            if !(min.is_finite() && max.is_finite() && min < max) {
                problems.push(Problem::at_field(
                    path,
                    &format!("persona_table.knob_rules[{i}].scale"),
                    format!(
                        "[{min}, {max}] is not a range; give [min, max] with min < max, \
                         e.g. [0, 1] or [1, 5]"
                    ),
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::super::load::{from_snapshot, load};

    #[test]
    fn a_persona_table_survives_the_jobs_snapshot() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/retail-population.toml");
        let job = load(&path).unwrap();
        let table = job.dataset.persona_table.clone().unwrap();
        assert_eq!(table.filter.as_deref(), Some("country == 'USA'"));
        assert_eq!(table.derived.len(), 1);
        let again = from_snapshot("job 1", &job.snapshot).unwrap();
        assert_eq!(again.dataset.persona_table, Some(table));
        assert_eq!(again.snapshot, job.snapshot);
    }

    #[test]
    fn per_scenario_needs_a_sample_and_leaves_personas_per_scenario_to_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("s.jsonl"), "").unwrap();
        std::fs::write(dir.path().join("people.csv"), "uuid\n1\n").unwrap();
        let text =
            "name = \"t\"\n[endpoints.e]\nmock = true\nmodel = \"m\"\n[roles]\npolicy = \"e\"\n\
                    user = \"e\"\n[environment]\nname = \"builtin:chat\"\n[dataset]\n\
                    scenarios = \"s.jsonl\"\npersonas = \"people.csv\"\npersonas_per_scenario = 2\n\
                    [persona_table]\nid = \"uuid\"\nper = \"scenario\"\nstratify_by = [\"sex\"]\n\
                    fields = { background = \"uuid\", mood = \"x\" }\n";
        let path = dir.path().join("job.toml");
        std::fs::write(&path, text).unwrap();
        let problems = load(&path).unwrap_err();
        let fields: Vec<&str> = problems
            .iter()
            .map(|p| p.location.as_deref().unwrap_or(""))
            .collect();
        assert_eq!(
            fields,
            [
                "persona_table.fields.mood",
                "persona_table.per",
                "dataset.personas_per_scenario",
                "persona_table.stratify_by"
            ],
            "{problems:?}"
        );
    }
}
