//! Writing the starter project into a folder. Everything is checked before the
//! first file is written, so a refusal writes nothing: a symbolic link, a path
//! that is a file, a folder that is not empty (unless forced), and, forced, a
//! starter path inside that is a link or of the wrong kind.

use std::path::{Path, PathBuf};

use super::{StarterFile, FILES};

#[derive(Debug, thiserror::Error)]
pub enum InitError {
    #[error("the folder is an empty path; give the folder to write the starter project into (e.g. `sparring init my-project`)")]
    EmptyPath,
    #[error(
        "{} is a symbolic link; sparring init writes only into a real folder: give the \
         folder it points to, or a new path",
        .path.display()
    )]
    Symlink { path: PathBuf },
    #[error(
        "{} is a file, not a folder; give a new path (the folder is created) or an empty folder",
        .path.display()
    )]
    NotAFolder { path: PathBuf },
    #[error(
        "{} is a folder; the starter project has a file of that name: move it away, or \
         give another folder",
        .path.display()
    )]
    NotAFile { path: PathBuf },
    #[error(
        "{} is not empty (it holds {entries}); give a new or empty folder, or pass --force to \
         write the starter's {} files over any of the same names (nothing else in it is touched)",
        .path.display(),
        FILES.len()
    )]
    NotEmpty { path: PathBuf, entries: String },
    #[error("cannot write {}: {source}", .path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl InitError {
    /// Whether the folder given was refused (invalid input), rather than the
    /// writing failing.
    pub fn is_invalid_input(&self) -> bool {
        !matches!(self, InitError::Io { .. })
    }
}

/// What [`write_starter`] wrote.
#[derive(Debug, PartialEq, Eq)]
pub struct Written {
    pub files: usize,
    /// The starter paths that held a file before (`--force`).
    pub replaced: Vec<&'static str>,
}

/// Writes the starter project into `dir` (created with its parents if
/// missing). `force` writes into a folder that is not empty, over the files
/// of the starter's names.
pub fn write_starter(dir: &Path, force: bool) -> Result<Written, InitError> {
    check_folder(dir, force)?;
    let mut replaced = Vec::new();
    for file in FILES {
        if check_inside(dir, file)? {
            replaced.push(file.path);
        }
    }
    for file in FILES {
        let path = dir.join(file.path);
        let io = |source| InitError::Io {
            path: path.clone(),
            source,
        };
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        std::fs::write(&path, file.text).map_err(io)?;
    }
    Ok(Written {
        files: FILES.len(),
        replaced,
    })
}

fn check_folder(dir: &Path, force: bool) -> Result<(), InitError> {
    if dir.as_os_str().is_empty() {
        return Err(InitError::EmptyPath);
    }
    let io = |source| InitError::Io {
        path: dir.to_path_buf(),
        source,
    };
    match std::fs::symlink_metadata(dir) {
        Ok(meta) if meta.file_type().is_symlink() => Err(InitError::Symlink {
            path: dir.to_path_buf(),
        }),
        Ok(meta) if !meta.is_dir() => Err(InitError::NotAFolder {
            path: dir.to_path_buf(),
        }),
        Ok(_) if force => Ok(()),
        Ok(_) => {
            let mut names: Vec<String> = std::fs::read_dir(dir)
                .map_err(io)?
                .map(|entry| entry.map(|e| e.file_name().to_string_lossy().into_owned()))
                .collect::<Result<_, _>>()
                .map_err(io)?;
            if names.is_empty() {
                return Ok(());
            }
            names.sort();
            Err(InitError::NotEmpty {
                path: dir.to_path_buf(),
                entries: entries(&names),
            })
        }
        // Not a directory: a file above it, which the ancestors' check names.
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) =>
        {
            existing_ancestor_is_a_folder(dir)
        }
        Err(e) => Err(io(e)),
    }
}

/// `2 entries: a.txt, notes` or `14 entries: a, b, c, …`.
fn entries(names: &[String]) -> String {
    let shown: Vec<&str> = names.iter().take(3).map(String::as_str).collect();
    let more = if names.len() > shown.len() {
        ", …"
    } else {
        ""
    };
    let noun = if names.len() == 1 { "entry" } else { "entries" };
    format!("{} {noun}: {}{more}", names.len(), shown.join(", "))
}

/// A missing folder is created with its parents: the nearest one that
/// exists must be a folder (a link to one is fine: `/tmp` on macOS).
fn existing_ancestor_is_a_folder(dir: &Path) -> Result<(), InitError> {
    for ancestor in dir.ancestors().skip(1) {
        if ancestor.as_os_str().is_empty() {
            break;
        }
        match std::fs::metadata(ancestor) {
            Ok(meta) if meta.is_dir() => return Ok(()),
            Ok(_) => {
                return Err(InitError::NotAFolder {
                    path: ancestor.to_path_buf(),
                })
            }
            Err(_) => continue,
        }
    }
    Ok(())
}

/// Checks the folders and the file of one starter path inside `dir` (which
/// may exist, forced): none may be a link, each folder a folder and the file
/// a file. Whether the file exists already.
fn check_inside(dir: &Path, file: StarterFile) -> Result<bool, InitError> {
    let relative = Path::new(file.path);
    let mut at = dir.to_path_buf();
    let components: Vec<_> = relative.components().collect();
    for (i, component) in components.iter().enumerate() {
        at.push(component);
        let is_file = i + 1 == components.len();
        let meta = match std::fs::symlink_metadata(&at) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
            Err(source) => return Err(InitError::Io { path: at, source }),
        };
        if meta.file_type().is_symlink() {
            return Err(InitError::Symlink { path: at });
        }
        match (is_file, meta.is_dir()) {
            (true, true) => return Err(InitError::NotAFile { path: at }),
            (true, false) => return Ok(true),
            (false, false) => return Err(InitError::NotAFolder { path: at }),
            (false, true) => {}
        }
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listing(dir: &Path) -> Vec<PathBuf> {
        let mut found = Vec::new();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(at) = stack.pop() {
            for entry in std::fs::read_dir(&at).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() && !path.is_symlink() {
                    stack.push(path.clone());
                }
                found.push(path.strip_prefix(dir).unwrap().to_path_buf());
            }
        }
        found.sort();
        found
    }

    #[test]
    fn a_new_folder_and_its_parents_are_made_and_get_every_file() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("a/b/project");
        let written = write_starter(&target, false).unwrap();
        assert_eq!(written.files, FILES.len());
        assert!(written.replaced.is_empty());
        for file in FILES {
            assert_eq!(
                std::fs::read_to_string(target.join(file.path)).unwrap(),
                file.text
            );
        }
    }

    #[test]
    fn an_empty_folder_is_written_into_a_non_empty_one_only_when_forced() {
        let dir = tempfile::tempdir().unwrap();
        write_starter(dir.path(), false).unwrap();
        std::fs::write(dir.path().join("notes.txt"), "mine").unwrap();
        std::fs::write(dir.path().join("quickstart.toml"), "edited").unwrap();
        let before = listing(dir.path());
        let refused = write_starter(dir.path(), false).unwrap_err();
        assert!(matches!(refused, InitError::NotEmpty { .. }), "{refused}");
        assert!(refused.to_string().contains("--force"), "{refused}");
        assert!(refused.is_invalid_input());
        assert_eq!(listing(dir.path()), before);
        assert_eq!(
            std::fs::read_to_string(dir.path().join("quickstart.toml")).unwrap(),
            "edited"
        );

        let forced = write_starter(dir.path(), true).unwrap();
        assert_eq!(forced.replaced.len(), FILES.len(), "every file was there");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("quickstart.toml")).unwrap(),
            FILES[0].text
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("notes.txt")).unwrap(),
            "mine",
            "nothing else is touched"
        );
    }

    #[test]
    fn a_file_a_link_or_a_file_above_is_refused_and_nothing_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("file");
        std::fs::write(&file, "x").unwrap();
        let empty = dir.path().join("empty");
        std::fs::create_dir(&empty).unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&empty, &link).unwrap();
        let dangling = dir.path().join("dangling");
        std::os::unix::fs::symlink(dir.path().join("nowhere"), &dangling).unwrap();
        let before = listing(dir.path());
        for (target, force) in [
            (file.clone(), false),
            (file.clone(), true),
            (link.clone(), false),
            (link, true),
            (dangling, true),
            (file.join("below"), false),
        ] {
            let refused = write_starter(&target, force).unwrap_err();
            assert!(
                refused.is_invalid_input(),
                "{}: {refused}",
                target.display()
            );
            assert!(
                refused.to_string().contains(&file.display().to_string())
                    || refused.to_string().contains("symbolic link"),
                "{}: {refused}",
                target.display()
            );
        }
        assert_eq!(listing(dir.path()), before);
        assert!(matches!(
            write_starter(Path::new(""), false),
            Err(InitError::EmptyPath)
        ));
    }

    #[test]
    fn forced_a_link_or_a_folder_at_a_starter_path_inside_is_refused_before_writing() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("prompts")).unwrap();
        let refused = write_starter(dir.path(), true).unwrap_err();
        assert!(matches!(refused, InitError::Symlink { .. }), "{refused}");
        assert_eq!(listing(outside.path()), Vec::<PathBuf>::new());
        assert_eq!(listing(dir.path()), vec![PathBuf::from("prompts")]);

        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("quickstart.toml")).unwrap();
        let refused = write_starter(dir.path(), true).unwrap_err();
        assert!(matches!(refused, InitError::NotAFile { .. }), "{refused}");
        assert_eq!(listing(dir.path()), vec![PathBuf::from("quickstart.toml")]);
    }

    #[test]
    fn a_long_listing_shows_three_names_and_the_count() {
        let names: Vec<String> = ["a", "b", "c", "d"].map(String::from).to_vec();
        assert_eq!(entries(&names), "4 entries: a, b, c, …");
        assert_eq!(entries(&names[..1]), "1 entry: a");
    }
}
