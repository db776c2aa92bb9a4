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

/// A folder under the system's temporary folder, removed on drop.
#[derive(Debug)]
pub struct SessionDir {
    path: PathBuf,
}

impl SessionDir {
    pub fn create() -> std::io::Result<SessionDir> {
        let n = MADE.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("usersim-mcp-{}-{n}", std::process::id()));
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
