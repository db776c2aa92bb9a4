//! Where a file sparring writes may go: a path that is missing or a regular
//! file. An existing node of another kind (a directory, a symlink, a device
//! such as `/dev/full`) is refused before anything is written: sparring
//! writes `FILE.partial` and renames it over `FILE` ([`super::file_set`]),
//! and a rename would replace the node itself with a regular file. An
//! export's `--out` may also be `-`, standard output.

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
        "{} is {kind}, not a regular file; sparring only replaces a regular file it could have \
         written (it writes FILE.partial and renames it over FILE): give a new or regular \
         file's path",
        path.display()
    )]
    NotRegular { path: PathBuf, kind: &'static str },
    #[error("cannot {action} {}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl TargetError {
    /// The path a [`TargetError::NotRegular`] is about.
    pub fn refused_path(&self) -> Option<&Path> {
        match self {
            TargetError::NotRegular { path, .. } => Some(path),
            TargetError::Io { .. } => None,
        }
    }
}

impl ExportTarget {
    /// `-` is standard output; any other path must be missing or a regular
    /// file.
    pub fn check(out: &Path) -> Result<ExportTarget, TargetError> {
        if out.as_os_str() == "-" {
            return Ok(ExportTarget::Stdout);
        }
        check_writable(out)?;
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

/// `Ok` when `path` is missing or a regular file; which kind of node it is
/// otherwise.
pub fn check_writable(path: &Path) -> Result<(), TargetError> {
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
}
