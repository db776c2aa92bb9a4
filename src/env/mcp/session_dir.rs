//! The conversation's own folder (`{session_dir}` in an MCP server's command
//! or environment): made empty when the session opens, removed when it ends,
//! so a server that keeps state in files (server-memory's
//! `MEMORY_FILE_PATH`) starts from nothing in every conversation.
//!
//! Its absolute path (the system's temporary folder, this process's id) is
//! the machine's, not the conversation's: whatever the server says that the
//! policy reads or an error keeps names the folder `.` instead
//! ([`SessionDir::hide`]), as if the server ran in it, which it does with
//! `cwd = "{session_dir}"`.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::config::mcp::SESSION_DIR;

static MADE: AtomicU64 = AtomicU64::new(0);

/// What every session folder's name starts with, before `PID-N`.
const PREFIX: &str = "sparring-mcp-";

/// A folder under the system's temporary folder, removed on drop.
#[derive(Debug)]
pub struct SessionDir {
    path: PathBuf,
}

impl SessionDir {
    pub fn create() -> std::io::Result<SessionDir> {
        let n = MADE.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("{PREFIX}{}-{n}", std::process::id()));
        if path.exists() {
            std::fs::remove_dir_all(&path)?;
        }
        std::fs::create_dir_all(&path)?;
        Ok(SessionDir { path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `text` with `{session_dir}` replaced by this folder.
    pub fn fill(&self, text: &str) -> String {
        text.replace(SESSION_DIR, &self.path.display().to_string())
    }

    /// `text` with this folder's absolute path made relative: `FOLDER/x`
    /// becomes `./x`, `FOLDER` alone `.`.
    pub fn hide(&self, text: &str) -> String {
        let path = self.path.display().to_string();
        if !text.contains(&path) {
            return text.to_string();
        }
        text.replace(&format!("{path}/"), "./").replace(&path, ".")
    }
}

/// Remove the session folders of sparring processes that no longer run. A
/// session's folder goes with its session on every path but one: a process
/// killed outright (SIGKILL, a crash) leaves its folders, and only a later
/// process can remove them. Once per process; Linux only (a process runs
/// while `/proc/PID` exists), elsewhere nothing is removed.
pub fn sweep_stale() {
    static SWEPT: std::sync::Once = std::sync::Once::new();
    SWEPT.call_once(|| {
        if !Path::new("/proc/self").exists() {
            return;
        }
        let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
            return;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(pid) = owner(&name) else {
                continue;
            };
            let dead = !Path::new(&format!("/proc/{pid}")).exists();
            if dead && entry.file_type().is_ok_and(|t| t.is_dir()) {
                if let Err(e) = std::fs::remove_dir_all(entry.path()) {
                    tracing::debug!("cannot remove the stale folder {name}: {e}");
                }
            }
        }
    });
}

/// The process id in a session folder's name (`sparring-mcp-PID-N`).
fn owner(name: &str) -> Option<u32> {
    let (pid, n) = name.strip_prefix(PREFIX)?.split_once('-')?;
    n.parse::<u64>().ok()?;
    pid.parse().ok()
}

impl Drop for SessionDir {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_dir_all(&self.path) {
            tracing::debug!("cannot remove {}: {e}", self.path.display());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_names_its_process() {
        assert_eq!(owner("sparring-mcp-4242-7"), Some(4242));
        for other in [
            "sparring-mcp-4242",
            "sparring-mcp-x-1",
            "sparring-mcp-1-x",
            "other-1-2",
        ] {
            assert_eq!(owner(other), None, "{other}");
        }
    }

    #[test]
    fn each_session_gets_its_own_empty_folder_removed_when_it_ends() {
        let a = SessionDir::create().unwrap();
        let b = SessionDir::create().unwrap();
        assert_ne!(a.path(), b.path());
        assert!(a.path().is_dir());
        let filled = a.fill("{session_dir}/memory.jsonl");
        assert_eq!(Path::new(&filled), a.path().join("memory.jsonl"));
        std::fs::write(&filled, "x").unwrap();
        let said = format!(
            "ENOENT: no such file, open '{filled}'; allowed: {}",
            a.path().display()
        );
        assert_eq!(
            a.hide(&said),
            "ENOENT: no such file, open './memory.jsonl'; allowed: ."
        );
        let path = a.path().to_path_buf();
        drop(a);
        assert!(!path.exists());
    }
}
