//! The job's config hash: the config text and the content of every file it
//! names (or, for a built-in template, its text). Equal hashes mean the same
//! job, so a rerun resumes it.

use std::path::Path;

use sha2::{Digest, Sha256};

/// One input of a job besides its config.
pub enum Input<'a> {
    /// A file or a folder of files, read now.
    File(&'a Path),
    /// A text built into the binary, hashed as a file holding it would be.
    Text(&'a str),
}

pub fn config_hash(snapshot: &str, inputs: &[Input<'_>]) -> std::io::Result<String> {
    let mut hasher = Sha256::new();
    hasher.update(snapshot.as_bytes());
    for input in inputs {
        match input {
            Input::File(path) => hash_path(&mut hasher, path)?,
            Input::Text(text) => hasher.update(text.as_bytes()),
        }
    }
    Ok(hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

fn hash_path(hasher: &mut Sha256, path: &Path) -> std::io::Result<()> {
    if path.is_dir() {
        let mut entries: Vec<_> = std::fs::read_dir(path)?
            .filter_map(Result::ok)
            .map(|e| e.path())
            .collect();
        entries.sort();
        for entry in entries {
            if entry.is_file() {
                hasher.update(
                    entry
                        .file_name()
                        .map(|n| n.as_encoded_bytes())
                        .unwrap_or_default(),
                );
                hash_file(hasher, &entry)?;
            }
        }
    } else {
        hash_file(hasher, path)?;
    }
    Ok(())
}

/// A file's bytes into the hash, a buffer at a time: a persona table may be
/// a million rows.
fn hash_file(hasher: &mut Sha256, path: &Path) -> std::io::Result<()> {
    let mut file = crate::regular_file::open(path)?;
    std::io::copy(&mut file, hasher)?;
    Ok(())
}
