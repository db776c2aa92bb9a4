//! Where an export goes: standard output (`-`), or a regular file written as
//! `FILE.partial` and renamed over `FILE` only once complete. An existing
//! target that is not a regular file (a directory, a symlink, a device such
//! as `/dev/full`) is refused before anything is written: a rename would
//! replace the node itself with a regular file.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// `--out`, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExportTarget {
    Stdout,
    File(PathBuf),
}

#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    #[error(
        "--out {path} is {kind}, not a regular file; an export only replaces a regular file it \
         could have written: give a new or regular file's path, or - for standard output"
    )]
    NotRegular { path: PathBuf, kind: &'static str },
    #[error("cannot {action} {path}")]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl ExportTarget {
    /// `-` is standard output; any other path must be missing or a regular
    /// file.
    pub fn check(out: &Path) -> Result<ExportTarget, TargetError> {
        if out.as_os_str() == "-" {
            return Ok(ExportTarget::Stdout);
        }
        refuse_non_regular(out)?;
        Ok(ExportTarget::File(out.to_path_buf()))
    }

    /// How the target reads in messages.
    pub fn describe(&self) -> String {
        match self {
            ExportTarget::Stdout => "standard output".into(),
            ExportTarget::File(path) => path.display().to_string(),
        }
    }
}

/// What kind of node `path` is, if it exists and is not a regular file.
fn refuse_non_regular(path: &Path) -> Result<(), TargetError> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(source) => {
            return Err(TargetError::Io {
                action: "inspect",
                path: path.to_path_buf(),
                source,
            })
        }
    };
    let kind = meta.file_type();
    let kind = if kind.is_file() {
        return Ok(());
    } else if kind.is_dir() {
        "a directory"
    } else if kind.is_symlink() {
        "a symlink"
    } else {
        "a device or other special file"
    };
    Err(TargetError::NotRegular {
        path: path.to_path_buf(),
        kind,
    })
}

/// `FILE.partial` next to `FILE`: written, then renamed over `FILE` by
/// [`PartialFile::commit`]. Dropped without a commit (any error on the way),
/// it is removed.
pub struct PartialFile {
    partial: PathBuf,
    out: PathBuf,
    writer: BufWriter<File>,
}

impl PartialFile {
    pub fn create(out: &Path) -> Result<PartialFile, TargetError> {
        let io = |action, path: &Path| {
            let path = path.to_path_buf();
            move |source| TargetError::Io {
                action,
                path,
                source,
            }
        };
        if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(io("create the folder", dir))?;
        }
        let mut name = out.file_name().unwrap_or(out.as_os_str()).to_os_string();
        name.push(".partial");
        let partial = out.with_file_name(name);
        // A stale `.partial` of an interrupted export is ours to replace; a
        // symlink there is removed, never followed (nor does create_new
        // follow one).
        refuse_non_regular(&partial).or_else(|e| match &e {
            TargetError::NotRegular {
                kind: "a symlink", ..
            } => Ok(()),
            _ => Err(e),
        })?;
        match std::fs::remove_file(&partial) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(io("remove the stale", &partial)(e))
            }
            _ => {}
        }
        let file = File::options()
            .write(true)
            .create_new(true)
            .open(&partial)
            .map_err(io("create", &partial))?;
        Ok(PartialFile {
            partial,
            out: out.to_path_buf(),
            writer: BufWriter::new(file),
        })
    }

    pub fn writer(&mut self) -> &mut (dyn Write + Send) {
        &mut self.writer
    }

    /// Flush and sync the file, check the target is still missing or a regular
    /// file, and rename the file over it.
    pub fn commit(mut self) -> Result<(), TargetError> {
        let io = |action, path: &Path| {
            let path = path.to_path_buf();
            move |source| TargetError::Io {
                action,
                path,
                source,
            }
        };
        self.writer.flush().map_err(io("write", &self.partial))?;
        self.writer
            .get_ref()
            .sync_all()
            .map_err(io("write", &self.partial))?;
        refuse_non_regular(&self.out)?;
        std::fs::rename(&self.partial, &self.out).map_err(io("move the export to", &self.out))?;
        self.partial.clear();
        Ok(())
    }
}

impl Drop for PartialFile {
    fn drop(&mut self) {
        if !self.partial.as_os_str().is_empty() {
            let _ = std::fs::remove_file(&self.partial);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dash_is_standard_output_and_a_missing_file_is_fine() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            ExportTarget::check(Path::new("-")).unwrap(),
            ExportTarget::Stdout
        );
        let out = dir.path().join("new.jsonl");
        assert_eq!(
            ExportTarget::check(&out).unwrap(),
            ExportTarget::File(out.clone())
        );
    }

    #[test]
    fn directories_symlinks_and_devices_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(dir.path().join("elsewhere"), &link).unwrap();
        for (path, kind) in [
            (dir.path().to_path_buf(), "a directory"),
            (link, "a symlink"),
            (PathBuf::from("/dev/null"), "a device or other special file"),
        ] {
            match ExportTarget::check(&path) {
                Err(TargetError::NotRegular { kind: k, .. }) => assert_eq!(k, kind),
                other => panic!("{}: {other:?}", path.display()),
            }
        }
    }

    #[test]
    fn a_partial_file_dropped_without_commit_is_removed() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("x.jsonl");
        let mut partial = PartialFile::create(&out).unwrap();
        partial.writer().write_all(b"line\n").unwrap();
        assert!(dir.path().join("x.jsonl.partial").exists());
        drop(partial);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_committed_partial_file_replaces_the_target() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("x.jsonl");
        std::fs::write(&out, "old\n").unwrap();
        let mut partial = PartialFile::create(&out).unwrap();
        partial.writer().write_all(b"new\n").unwrap();
        partial.commit().unwrap();
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "new\n");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
