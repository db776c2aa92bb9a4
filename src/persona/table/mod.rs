//! Persona tables (docs/populations.md): a table of people (CSV, JSONL or
//! Parquet) read row by row, filtered by a `where` expression, sampled with a
//! seed (stratified or not), and each chosen row made a [`Persona`] by the
//! `[persona_table]` mapping, its knobs weighted from numeric columns. No
//! store and no printing: `persona::dataset` and `sparring personas sample`
//! call it.

mod csv_quotes;
pub mod filter;
pub mod mapping;
pub mod panel;
pub mod sample;
pub mod source;
pub mod traits;

use std::fmt;
use std::path::{Path, PathBuf};

use crate::config::file::PersonaTableFile;
use crate::config::Problem;

use super::Persona;

/// One row: column → value, in the table's column order.
pub type Columns = serde_json::Map<String, serde_json::Value>;

/// Where a row is in its table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Place {
    /// A line of a CSV or JSONL file (1-based, the header is line 1 of a CSV).
    Line(u64),
    /// A row of a Parquet file (1-based).
    Row(u64),
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Place::Line(n) => write!(f, "line {n}"),
            Place::Row(n) => write!(f, "row {n}"),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub place: Place,
    pub columns: Columns,
}

/// A problem with a persona table or the `[persona_table]` that reads it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TableError {
    /// The table file itself: unreadable, malformed, empty, a missing column.
    #[error("{}: {}{message}", file.display(), place.map(|p| format!("{p}: ")).unwrap_or_default())]
    Table {
        file: PathBuf,
        place: Option<Place>,
        message: String,
    },
    /// A key of `[persona_table]` in the job config (a template, the filter).
    #[error("{}: {field}: {message}", config.display())]
    Config {
        config: PathBuf,
        field: String,
        message: String,
    },
}

impl TableError {
    pub fn table(file: &Path, place: Option<Place>, message: impl Into<String>) -> TableError {
        TableError::Table {
            file: file.to_path_buf(),
            place,
            message: message.into(),
        }
    }

    pub fn config(config: &Path, field: &str, message: impl Into<String>) -> TableError {
        TableError::Config {
            config: config.to_path_buf(),
            field: field.to_string(),
            message: message.into(),
        }
    }

    pub fn into_problem(self) -> Problem {
        match self {
            TableError::Table {
                file,
                place,
                message,
            } => Problem::new(file, place.map(|p| p.to_string()), message),
            TableError::Config {
                config,
                field,
                message,
            } => Problem::at_field(config, &field, message),
        }
    }
}

/// Everything needed to turn a table into a job's personas.
pub struct TableJob<'a> {
    /// The job config, named by errors in `[persona_table]`.
    pub config: &'a Path,
    pub table: &'a Path,
    pub settings: &'a PersonaTableFile,
    /// The seed when `[persona_table] seed` is absent.
    pub job_seed: u64,
    /// Rows to draw; `None`: every row that passes the filter.
    pub sample: Option<u64>,
}

/// The personas of a table job: the filter and the sample applied, each
/// chosen row mapped. `progress` is told the rows read so far.
pub fn load_personas(
    job: &TableJob<'_>,
    progress: &mut dyn FnMut(u64),
) -> Result<Vec<Persona>, TableError> {
    let rows = choose_rows(job, progress)?;
    personas_of(job, &rows)
}

/// The chosen rows as personas, by the `[persona_table]` mapping and knob rules.
pub fn personas_of(job: &TableJob<'_>, rows: &[Row]) -> Result<Vec<Persona>, TableError> {
    let mapping = mapping::Mapping::new(job.config, job.settings)?;
    let first = rows
        .first()
        .ok_or_else(|| TableError::table(job.table, None, "no row was chosen"))?;
    mapping.check_row(job.table, first)?;
    let knobs = traits::KnobRules::new(job.settings, &first.columns);
    for column in knobs.columns() {
        if !first.columns.contains_key(column) {
            return Err(sample::missing_column(
                job.table,
                first,
                column,
                "[[persona_table.knob_rules]]",
            ));
        }
    }
    rows.iter()
        .map(|row| {
            let mut persona = mapping.persona(job.table, row)?;
            persona.knobs = knobs.weights(&row.columns);
            Ok(persona)
        })
        .collect()
}

/// The rows of a table job, in table order: the filter and sample applied.
pub fn choose_rows(
    job: &TableJob<'_>,
    progress: &mut dyn FnMut(u64),
) -> Result<Vec<Row>, TableError> {
    let filter =
        match &job.settings.filter {
            Some(text) => Some(filter::parse(text).map_err(|e| {
                TableError::config(job.config, "persona_table.where", e.to_string())
            })?),
            None => None,
        };
    let mapping = mapping::Mapping::new(job.config, job.settings)?;
    let derive = |row: &mut Row| mapping.derive(job.table, row);
    let plan = sample::Plan {
        table: job.table,
        id: &job.settings.id,
        filter: filter.as_ref(),
        stratify_by: &job.settings.stratify_by,
        allocation: job.settings.allocation,
        seed: job.settings.seed.unwrap_or(job.job_seed),
        size: job.sample,
        derive: &derive,
    };
    sample::draw(&plan, progress).map_err(|e| match e {
        sample::SampleError::NobodySelected => TableError::config(
            job.config,
            "persona_table.where",
            format!(
                "selects no row of {}; loosen the filter or check its values",
                job.table.display()
            ),
        ),
        sample::SampleError::Table(e) => e,
    })
}
