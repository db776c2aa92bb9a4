//! A [`PreparedExport`] written: to outputs the caller holds (standard
//! output, a response body), or to the files of `--out` as one
//! [`FileSet`] (the lines, sidecars, features and manifest renamed into
//! place together, or none of them).

use std::path::Path;

use crate::store::Store;

use super::curate::{card, manifest};
use super::dpo::{self, DpoCounts};
use super::file_set::FileSet;
use super::kind::PairSource;
use super::paths::{features_of, ExportPaths};
use super::prepare::PreparedExport;
use super::probe_pairs;
use super::request::ExportKind;
use super::scenarios::{self, ScenarioCounts, ScenariosError};
use super::sink::{Output, Outputs};
use super::split::Side;
use super::target::TargetError;
use super::{write_from, ExportCounts, ExportError};

/// What an export wrote (so far, to a progress callback).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Written {
    Lines(ExportCounts),
    Pairs(DpoCounts),
    Scenarios(ScenarioCounts),
}

/// A finished export: what it wrote, and how many rows went to each side
/// (one entry without a split).
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    pub written: Written,
    pub sides: Vec<(Option<Side>, u64)>,
}

#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error(transparent)]
    Export(#[from] ExportError),
    #[error(transparent)]
    Scenarios(#[from] ScenariosError),
    #[error(transparent)]
    Files(#[from] TargetError),
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    #[error("no output file to write to")]
    NoOutput,
}

impl WriteError {
    /// Whether the request was wrong rather than the writing: a judge that
    /// made no judgments there or is not pairwise, a scenarios export of a
    /// job without synthesized scenarios to read.
    pub fn is_refusal(&self) -> bool {
        matches!(
            self,
            WriteError::Export(ExportError::NoJudgments { .. } | ExportError::NotPairwise { .. })
                | WriteError::Scenarios(
                    ScenariosError::NotGeneration { .. } | ScenariosError::Unreadable { .. }
                )
        )
    }
}

/// Write `export` to `outputs`, calling `progress` with the counts so far.
pub async fn write_to(
    store: &dyn Store,
    export: &PreparedExport,
    outputs: &mut Outputs<'_>,
    progress: &mut (dyn FnMut(Written) + Send),
) -> Result<Report, WriteError> {
    let written = match &export.kind {
        ExportKind::Lines { .. } => Written::Lines(
            write_from(export.exporter(store), outputs, &mut |c| {
                progress(Written::Lines(c))
            })
            .await?,
        ),
        ExportKind::Dpo {
            pairs: PairSource::Judge(judge),
            shape,
        } => {
            let job = export.row.id;
            Written::Pairs(
                dpo::write(
                    store,
                    job,
                    judge,
                    *shape,
                    &export.filter,
                    outputs,
                    &mut |c| progress(Written::Pairs(c)),
                )
                .await?,
            )
        }
        ExportKind::Dpo {
            pairs: PairSource::Probe,
            shape,
        } => Written::Pairs(
            probe_pairs::write(
                store,
                export.row.id,
                *shape,
                &export.filter,
                outputs,
                &mut |c| progress(Written::Pairs(c)),
            )
            .await?,
        ),
        ExportKind::Scenarios { keep_unsolved } => {
            Written::Scenarios(scenarios::write(store, &export.row, *keep_unsolved, outputs).await?)
        }
    };
    Ok(Report {
        written,
        sides: outputs.written(),
    })
}

/// Write `export` to the files of `--out out` (see [`ExportPaths`]); on any
/// error, none of them is left behind.
pub async fn write_files(
    store: &dyn Store,
    export: &PreparedExport,
    out: &Path,
    progress: &mut (dyn FnMut(Written) + Send),
) -> Result<Report, WriteError> {
    let mut paths = ExportPaths::of(out, &export.kind, export.split.is_some());
    if export.curated.is_some() {
        paths = paths.with_curation(out);
    }
    let features = features_of(&export.kind);
    // Dropped on any error, the partial files are removed.
    let mut files = FileSet::with_manifest(&paths.written(), &paths.manifest)?;
    let report = {
        let mut writers = files.writers();
        let mut next = |with_sidecar: bool| {
            let lines = writers.next();
            let sidecar = if with_sidecar { writers.next() } else { None };
            lines.map(|lines| Output::new(lines, sidecar))
        };
        let sidecar = export.kind.metadata_in_sidecar();
        let outputs = match &export.split {
            None => next(sidecar).map(Outputs::One),
            Some(split) => {
                next(sidecar)
                    .zip(next(sidecar))
                    .map(|(train, validation)| Outputs::Split {
                        split: split.clone(),
                        train,
                        validation,
                    })
            }
        };
        let Some(mut outputs) = outputs else {
            return Err(WriteError::NoOutput);
        };
        write_to(store, export, &mut outputs, progress).await?
    };
    // A side of a split that got no rows is not written (nor its sidecar):
    // `datasets` refuses a split without data, and the card names only the
    // files there are.
    let total: u64 = report.sides.iter().map(|(_, n)| *n).sum();
    if export.split.is_some() && total > 0 {
        for (name, path) in ExportPaths::data_files(out, true) {
            let rows: u64 = report
                .sides
                .iter()
                .filter(|(side, _)| side.map(|s| s.name()) == Some(name))
                .map(|(_, n)| *n)
                .sum();
            if rows == 0 {
                let sidecar = super::split::with_part(&path, "metadata");
                files.leave_out(&path);
                files.leave_out(&sidecar);
            }
        }
    }
    // After the lines: the features, then a curated export's manifest.json
    // and README.md.
    let mut rest = files.writers().skip(paths.lines.len());
    if let Some(features) = &features {
        let writer = rest.next().ok_or(WriteError::NoOutput)?;
        serde_json::to_writer_pretty(&mut *writer, features)?;
        writer.write_all(b"\n")?;
    }
    if let Some(curated) = &export.curated {
        let files_written = data_files(out, export.split.is_some(), &report);
        let format = export.kind.format_name();
        let manifest = manifest::manifest(curated, format, &export.filter, &files_written);
        let writer = rest.next().ok_or(WriteError::NoOutput)?;
        serde_json::to_writer_pretty(&mut *writer, &manifest)?;
        writer.write_all(b"\n")?;
        let card_features = super::features::for_card(&export.kind);
        let card = card::render(curated, format, card_features.as_ref(), &files_written);
        let writer = rest.next().ok_or(WriteError::NoOutput)?;
        writer.write_all(card.as_bytes())?;
    }
    drop(rest);
    files.commit()?;
    Ok(report)
}

/// The data files of an export to `out` (by name, no folder) with the rows
/// `report` says each got.
fn data_files(out: &Path, split: bool, report: &Report) -> Vec<manifest::DataFile> {
    ExportPaths::data_files(out, split)
        .into_iter()
        .map(|(name, path)| manifest::DataFile {
            split: name,
            name: path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            rows: report
                .sides
                .iter()
                .filter(|(side, _)| side.map_or("train", |s| s.name()) == name)
                .map(|(_, n)| *n)
                .sum(),
        })
        // An empty side of a split is not written (see `write_files`),
        // unless every side is empty.
        .filter(|f| !split || f.rows > 0 || report.sides.iter().all(|(_, n)| *n == 0))
        .collect()
}
