//! Where the paths a config names lead: relative to the config's folder, and
//! for a config submitted to the service, inside its data root (after
//! symlinks), including the files of a personas folder.

use std::path::{Path, PathBuf};

use super::trust::{Boundary, Trust};
use crate::diagnostics::problem::Problem;

/// Resolves the paths of one config (`file`, relative to `base`).
pub struct Resolver<'a> {
    pub file: &'a Path,
    pub base: &'a Path,
    pub trust: Trust<'a>,
}

/// What a path must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Want {
    File,
    FileOrFolder,
}

impl Resolver<'_> {
    /// `path` (found at `field`) resolved, or a problem. For a submitted
    /// config, a path outside the data root gets a problem that says nothing
    /// about the file; inside it, whether it exists is said.
    pub fn existing(
        &self,
        field: &str,
        path: &Path,
        want: Want,
        problems: &mut Vec<Problem>,
    ) -> Option<PathBuf> {
        let resolved = self.resolve(field, path, problems)?;
        match std::fs::metadata(&resolved) {
            Err(_) => problems.push(Problem::at_field(
                self.file,
                field,
                format!(
                    "{} does not exist (paths are relative to the config file's folder {})",
                    resolved.display(),
                    self.base.display()
                ),
            )),
            Ok(meta) if want == Want::File && meta.is_dir() => problems.push(Problem::at_field(
                self.file,
                field,
                format!("{} is a folder; a file is expected", resolved.display()),
            )),
            Ok(meta) if meta.is_dir() => {
                if let Trust::Submitted(boundary) = self.trust {
                    problems.extend(self.links_out_of(boundary, field, &resolved));
                }
            }
            Ok(_) => {}
        }
        Some(resolved)
    }

    /// `path` resolved without checking it exists (a judge's template is
    /// read, and so checked, by the judge module).
    pub fn resolve(
        &self,
        field: &str,
        path: &Path,
        problems: &mut Vec<Problem>,
    ) -> Option<PathBuf> {
        match self.trust {
            Trust::Local if path.is_absolute() => Some(path.to_path_buf()),
            Trust::Local => Some(self.base.join(path)),
            Trust::Submitted(boundary) => {
                match boundary.contain(self.file, field, self.base, path) {
                    Ok(resolved) => Some(resolved),
                    Err(problem) => {
                        problems.push(problem);
                        None
                    }
                }
            }
        }
    }

    /// Problems for the entries of `dir` (a folder a submitted config names)
    /// that are links leading out of the data root.
    fn links_out_of(&self, boundary: &Boundary, field: &str, dir: &Path) -> Vec<Problem> {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Vec::new();
        };
        entries
            .filter_map(Result::ok)
            .filter(|entry| {
                boundary
                    .contain(self.file, field, dir, Path::new(&entry.file_name()))
                    .is_err()
            })
            .map(|entry| {
                Problem::at_field(
                    self.file,
                    field,
                    format!(
                        "holds {}, which leads out of the service's data root; a submitted \
                         config may use only files under the data root",
                        entry.file_name().to_string_lossy()
                    ),
                )
            })
            .collect()
    }
}
