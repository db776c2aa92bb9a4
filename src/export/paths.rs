//! The files an export to `--out FILE` writes: the lines (per side of a
//! split: `FILE.train.jsonl`, `FILE.validation.jsonl`), the openai metadata
//! sidecar beside each, the `datasets` features (`FILE.features.json`) and
//! the manifest of them all (`FILE.sha256`, written last; see
//! [`super::file_set`]); a curated export adds `manifest.json` and the
//! dataset card `README.md` in the same folder.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::kind::ExportKind;
use super::split::{with_part, Side};

/// The paths of an export to one `--out`.
#[derive(Debug, Clone, PartialEq)]
pub struct ExportPaths {
    /// In the order [`super::sink::Outputs`] takes them: per side (one, or
    /// train then validation), the lines, then the sidecar when the format
    /// has one.
    pub lines: Vec<PathBuf>,
    /// The `datasets` features, when the format is meant for `datasets`.
    pub features: Option<PathBuf>,
    /// A curated export's `manifest.json` and dataset card `README.md`, in
    /// `--out`'s folder.
    pub curated: Option<(PathBuf, PathBuf)>,
    /// The sha256 of every file written.
    pub manifest: PathBuf,
}

impl ExportPaths {
    pub fn of(out: &Path, kind: &ExportKind, split: bool) -> ExportPaths {
        let sides: Vec<PathBuf> = if split {
            [Side::Train, Side::Validation]
                .iter()
                .map(|side| with_part(out, side.name()))
                .collect()
        } else {
            vec![out.to_path_buf()]
        };
        let sidecar = kind.metadata_in_sidecar();
        let lines = sides
            .into_iter()
            .flat_map(|lines| {
                let meta = sidecar.then(|| with_part(&lines, "metadata"));
                std::iter::once(lines).chain(meta)
            })
            .collect();
        ExportPaths {
            lines,
            features: features_of(kind).map(|_| suffixed(out, ".features.json")),
            curated: None,
            manifest: suffixed(out, ".sha256"),
        }
    }

    /// With the files of a curated export beside `out`.
    pub fn with_curation(mut self, out: &Path) -> ExportPaths {
        self.curated = Some((
            out.with_file_name("manifest.json"),
            out.with_file_name("README.md"),
        ));
        self
    }

    /// The data files (no sidecar) and the split each holds, as a dataset
    /// card's `data_files` name them.
    pub fn data_files(out: &Path, split: bool) -> Vec<(&'static str, PathBuf)> {
        if split {
            [Side::Train, Side::Validation]
                .iter()
                .map(|side| (side.name(), with_part(out, side.name())))
                .collect()
        } else {
            vec![("train", out.to_path_buf())]
        }
    }

    /// Every path, the manifest last.
    pub fn all(&self) -> Vec<PathBuf> {
        let mut all = self.written();
        all.push(self.manifest.clone());
        all
    }

    /// The files the manifest lists: the lines, the features, then a
    /// curated export's manifest.json and README.md.
    pub fn written(&self) -> Vec<PathBuf> {
        let curated = self
            .curated
            .iter()
            .flat_map(|(manifest, card)| [manifest, card]);
        self.lines
            .iter()
            .chain(&self.features)
            .chain(curated)
            .cloned()
            .collect()
    }
}

/// `out` with `suffix` after its whole name.
fn suffixed(out: &Path, suffix: &str) -> PathBuf {
    let mut name = out.as_os_str().to_os_string();
    name.push(suffix);
    PathBuf::from(name)
}

/// The `datasets` features of what `kind` writes, when it is meant for
/// `datasets`.
pub fn features_of(kind: &ExportKind) -> Option<Value> {
    match kind {
        ExportKind::Lines { format, user_tools } => super::features::of(*format, *user_tools),
        ExportKind::Dpo { .. } => Some(super::features::dpo()),
        ExportKind::Scenarios { .. } => None,
    }
}
