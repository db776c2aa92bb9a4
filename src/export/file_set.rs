//! Every file sparring writes goes through [`FileSet`] (one file or several
//! written together: an export, its metadata sidecar, the two sides of a
//! split, synthesized scenarios):
//!
//! - each target must be missing or a regular file ([`check_writable`]),
//!   checked when the set is created and again just before the renames;
//! - each file is written to `FILE.partial` beside it, created anew (a stale
//!   `.partial` is removed first, a symlink there is removed, never
//!   followed), and renamed over `FILE` only once every file of the set is
//!   complete and synced; dropped without [`FileSet::commit`] (any error on
//!   the way), the `.partial` files are removed;
//! - a set may have a **manifest**, written last: one `SHA256  NAME` line per
//!   file, the format `sha256sum -c` checks. POSIX renames one file at a
//!   time, so a process killed between two renames leaves new files beside
//!   old ones; the manifest is renamed after all of them, so until it is, it
//!   is missing or the previous set's and names other contents: a reader
//!   that checks the manifest never takes a mixed set for one export.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::target::{check_writable, TargetError};

/// Test hook: abort the process (no destructors, like a SIGKILL) after this
/// many renames of a [`FileSet::commit`]. Only the tests set it.
pub const ABORT_AFTER_RENAMES: &str = "SPARRING_TEST_ABORT_AFTER_RENAMES";

/// Files written together, renamed into place together (see the module doc).
pub struct FileSet {
    files: Vec<PartialFile>,
    manifest: Option<PartialFile>,
}

impl FileSet {
    /// `paths`, each checked and opened as `PATH.partial`.
    pub fn create(paths: &[PathBuf]) -> Result<FileSet, TargetError> {
        let files = paths
            .iter()
            .map(|p| PartialFile::create(p))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(FileSet {
            files,
            manifest: None,
        })
    }

    /// [`FileSet::create`], with a manifest at `manifest` listing every file
    /// by its name (the files and the manifest share one folder).
    pub fn with_manifest(paths: &[PathBuf], manifest: &Path) -> Result<FileSet, TargetError> {
        let mut set = FileSet::create(paths)?;
        set.manifest = Some(PartialFile::create(manifest)?);
        Ok(set)
    }

    /// Leave the file at `path` out of the set: nothing is renamed there, a
    /// file already there (a previous export's) is removed at the commit,
    /// and the manifest does not list it. An export leaves out a split's
    /// side that got no rows.
    pub fn leave_out(&mut self, path: &Path) {
        for file in self.files.iter_mut().filter(|f| f.out == path) {
            file.left_out = true;
        }
    }

    /// The writers of the files, in the order of the paths given.
    pub fn writers(&mut self) -> impl Iterator<Item = &mut (dyn Write + Send)> {
        self.files.iter_mut().map(PartialFile::writer)
    }

    /// Flush and sync every file, write the manifest, check every target is
    /// still missing or a regular file, then rename the files into place in
    /// the order given, and the manifest last.
    pub fn commit(mut self) -> Result<(), TargetError> {
        let mut listed = String::new();
        for file in &mut self.files {
            let digest = file.finish()?;
            if !file.left_out {
                listed.push_str(&manifest_line(&digest, &file.out));
            }
        }
        if let Some(manifest) = &mut self.manifest {
            manifest
                .writer
                .write_all(listed.as_bytes())
                .map_err(io_error("write", &manifest.partial))?;
            manifest.finish()?;
        }
        for file in self.files.iter().chain(&self.manifest) {
            check_writable(&file.out)?;
        }
        let abort_after = std::env::var(ABORT_AFTER_RENAMES)
            .ok()
            .and_then(|n| n.parse::<usize>().ok());
        let mut renamed = 0;
        for file in self.files.iter_mut().chain(self.manifest.as_mut()) {
            if file.left_out {
                file.remove_target()?;
                continue;
            }
            file.rename()?;
            renamed += 1;
            if abort_after == Some(renamed) {
                std::process::abort();
            }
        }
        Ok(())
    }
}

/// One file at `path`, written whole by `fill` (see [`FileSet`]).
pub fn write_file(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> Result<(), TargetError> {
    let mut set = FileSet::create(&[path.to_path_buf()])?;
    if let Some(writer) = set.writers().next() {
        fill(writer).map_err(io_error("write", path))?;
    }
    set.commit()
}

/// `HEX  NAME\n`, as `sha256sum` writes it (a name holding a backslash or a
/// newline escaped, the line then starting with a backslash).
fn manifest_line(digest: &[u8], path: &Path) -> String {
    let name = path
        .file_name()
        .unwrap_or(path.as_os_str())
        .to_string_lossy();
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    if name.contains(['\\', '\n']) {
        let escaped = name.replace('\\', "\\\\").replace('\n', "\\n");
        format!("\\{hex}  {escaped}\n")
    } else {
        format!("{hex}  {name}\n")
    }
}

fn io_error(action: &'static str, path: &Path) -> impl FnOnce(io::Error) -> TargetError {
    let path = path.to_path_buf();
    move |source| TargetError::Io {
        action,
        path,
        source,
    }
}

/// `FILE.partial` next to `FILE`, hashed as it is written. Dropped before
/// its rename, it is removed.
struct PartialFile {
    partial: PathBuf,
    out: PathBuf,
    writer: Hashing<BufWriter<File>>,
    /// Not to be renamed into place ([`FileSet::leave_out`]).
    left_out: bool,
}

impl PartialFile {
    fn create(out: &Path) -> Result<PartialFile, TargetError> {
        check_writable(out)?;
        if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(io_error("create the folder", dir))?;
        }
        let mut name = out.file_name().unwrap_or(out.as_os_str()).to_os_string();
        name.push(".partial");
        let partial = out.with_file_name(name);
        // A stale `.partial` of an interrupted write is ours to replace; a
        // symlink there is removed, never followed (nor does create_new
        // follow one).
        check_writable(&partial).or_else(|e| match &e {
            TargetError::NotRegular {
                kind: "a symlink", ..
            } => Ok(()),
            _ => Err(e),
        })?;
        match std::fs::remove_file(&partial) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => {
                return Err(io_error("remove the stale", &partial)(e))
            }
            _ => {}
        }
        let file = File::options()
            .write(true)
            .create_new(true)
            .open(&partial)
            .map_err(io_error("create", &partial))?;
        Ok(PartialFile {
            partial,
            out: out.to_path_buf(),
            writer: Hashing::new(BufWriter::new(file)),
            left_out: false,
        })
    }

    fn writer(&mut self) -> &mut (dyn Write + Send) {
        &mut self.writer
    }

    /// Flush and sync the file; the sha256 of what was written.
    fn finish(&mut self) -> Result<Vec<u8>, TargetError> {
        let write = io_error("write", &self.partial);
        self.writer.inner.flush().map_err(write)?;
        self.writer
            .inner
            .get_ref()
            .sync_all()
            .map_err(io_error("write", &self.partial))?;
        Ok(self.writer.hasher.clone().finalize().to_vec())
    }

    /// Remove what is at the target (checked to be missing or a regular
    /// file) and the partial file.
    fn remove_target(&mut self) -> Result<(), TargetError> {
        match std::fs::remove_file(&self.out) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => {
                return Err(io_error("remove the empty side's old", &self.out)(e))
            }
            _ => {}
        }
        Ok(())
    }

    fn rename(&mut self) -> Result<(), TargetError> {
        std::fs::rename(&self.partial, &self.out)
            .map_err(io_error("move the file to", &self.out))?;
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

/// A writer that hashes what goes through it.
struct Hashing<W> {
    inner: W,
    hasher: Sha256,
}

impl<W> Hashing<W> {
    fn new(inner: W) -> Self {
        Hashing {
            inner,
            hasher: Sha256::new(),
        }
    }
}

impl<W: Write> Write for Hashing<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_file_left_out_is_not_written_nor_listed_and_an_old_one_goes() {
        let dir = tempfile::tempdir().unwrap();
        let paths = [dir.path().join("a.jsonl"), dir.path().join("b.jsonl")];
        std::fs::write(&paths[1], "old\n").unwrap();
        let mut set = FileSet::with_manifest(&paths, &dir.path().join("x.sha256")).unwrap();
        for w in set.writers() {
            w.write_all(b"line\n").unwrap();
        }
        set.leave_out(&paths[1]);
        set.commit().unwrap();
        assert_eq!(names(dir.path()), ["a.jsonl", "x.sha256"]);
        let listed = std::fs::read_to_string(dir.path().join("x.sha256")).unwrap();
        assert!(
            listed.contains("a.jsonl") && !listed.contains("b.jsonl"),
            "{listed}"
        );
    }

    #[test]
    fn a_set_dropped_without_commit_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let paths = [dir.path().join("x.jsonl"), dir.path().join("x.meta.jsonl")];
        let mut set = FileSet::with_manifest(&paths, &dir.path().join("x.sha256")).unwrap();
        for w in set.writers() {
            w.write_all(b"line\n").unwrap();
        }
        assert_eq!(names(dir.path()).len(), 3);
        drop(set);
        assert!(names(dir.path()).is_empty());
    }

    #[test]
    fn a_committed_set_replaces_its_targets_and_lists_them_as_sha256sum_does() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("x.jsonl");
        std::fs::write(&out, "old\n").unwrap();
        let paths = [out.clone(), dir.path().join("x.metadata.jsonl")];
        let manifest = dir.path().join("x.jsonl.sha256");
        let mut set = FileSet::with_manifest(&paths, &manifest).unwrap();
        for (w, text) in set.writers().zip(["new\n", "meta\n"]) {
            w.write_all(text.as_bytes()).unwrap();
        }
        set.commit().unwrap();
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "new\n");
        assert_eq!(
            names(dir.path()),
            ["x.jsonl", "x.jsonl.sha256", "x.metadata.jsonl"]
        );
        // sha256("new\n"), sha256("meta\n")
        assert_eq!(
            std::fs::read_to_string(&manifest).unwrap(),
            format!(
                "{}  x.jsonl\n{}  x.metadata.jsonl\n",
                hex(&Sha256::digest(b"new\n")),
                hex(&Sha256::digest(b"meta\n"))
            )
        );
    }

    fn hex(d: &[u8]) -> String {
        d.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn a_symlink_at_the_partial_path_is_replaced_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("outside.txt");
        std::fs::write(&outside, "keep me\n").unwrap();
        let out = dir.path().join("x.jsonl");
        std::os::unix::fs::symlink(&outside, dir.path().join("x.jsonl.partial")).unwrap();
        write_file(&out, |w| w.write_all(b"new\n")).unwrap();
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "keep me\n");
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "new\n");
        assert_eq!(names(dir.path()), ["outside.txt", "x.jsonl"]);
    }

    #[test]
    fn a_device_or_directory_target_is_refused_and_nothing_is_left() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        for target in [sub.clone(), PathBuf::from("/dev/null")] {
            let e = write_file(&target, |w| w.write_all(b"x")).unwrap_err();
            assert!(matches!(e, TargetError::NotRegular { .. }), "{e}");
        }
        assert_eq!(names(dir.path()), ["sub"]);
        assert!(names(&sub).is_empty());
    }

    #[test]
    fn an_odd_name_is_escaped_as_sha256sum_escapes_it() {
        let line = manifest_line(&[0xab], Path::new("a\\b\nc"));
        assert_eq!(line, "\\ab  a\\\\b\\nc\n");
    }
}
