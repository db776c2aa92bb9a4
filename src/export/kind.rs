//! What an export writes: the type the request parser, the paths and the
//! feature cards all read, apart from them.

use super::dpo::DpoShape;
use super::Format;

/// What an export writes.
#[derive(Debug, Clone, PartialEq)]
pub enum ExportKind {
    /// One line per conversation, and whether the user's tool calls stay.
    Lines { format: Format, user_tools: bool },
    /// Preference pairs, from a pairwise judge's verdicts or from probes.
    Dpo { pairs: PairSource, shape: DpoShape },
    /// The job's synthesized scenarios, and whether the unsolved ones too.
    Scenarios { keep_unsolved: bool },
}

/// Where DPO pairs come from.
#[derive(Debug, Clone, PartialEq)]
pub enum PairSource {
    /// This pairwise judge's verdicts.
    Judge(String),
    /// Probe conversations: one that held the line against one that broke
    /// it, in the same scenario (see `probe_pairs`).
    Probe,
}

impl ExportKind {
    /// The format's name, as `--format` takes it.
    pub fn format_name(&self) -> &'static str {
        match self {
            ExportKind::Lines { format, .. } => format.name(),
            ExportKind::Dpo { .. } => "dpo",
            ExportKind::Scenarios { .. } => "scenarios",
        }
    }

    /// Whether each line's metadata goes to a sidecar file.
    pub fn metadata_in_sidecar(&self) -> bool {
        matches!(self, ExportKind::Lines { format, .. } if format.metadata_in_sidecar())
    }
}
