//! A template path as written: resolved relative to the config file's folder
//! (inside the data root for a submitted config), then read.

use std::path::{Path, PathBuf};

use super::problems::FieldProblems;
use crate::config::Trust;

/// Where `written` points: as is when absolute, else relative to `base`; for
/// a config submitted to the service, only inside the data root.
pub(super) fn resolve_template(
    written: &Path,
    base: &Path,
    trust: Trust<'_>,
    problems: &mut FieldProblems<'_>,
) -> Option<PathBuf> {
    match trust {
        Trust::Local if written.is_absolute() => Some(written.to_path_buf()),
        Trust::Local => Some(base.join(written)),
        Trust::Submitted(boundary) => {
            match boundary.contain(problems.path, &problems.field("template"), base, written) {
                Ok(resolved) => Some(resolved),
                Err(problem) => {
                    problems.list.push(problem);
                    None
                }
            }
        }
    }
}

/// The text of the template at `resolved`, or `None` with why it cannot be read.
pub(super) fn read_template(
    resolved: &Path,
    base: &Path,
    problems: &mut FieldProblems<'_>,
) -> Option<String> {
    match crate::regular_file::read_to_string(resolved) {
        Ok(text) => Some(text),
        Err(e) => {
            problems.at(
                "template",
                format!(
                    "cannot read {}: {e} (paths are relative to the config file's \
                     folder {})",
                    resolved.display(),
                    base.display()
                ),
            );
            None
        }
    }
}
