//! Reading a file a user named (a config, a template, a dataset, an import):
//! only a regular file. Opening a FIFO blocks until someone writes to it,
//! reading `/dev/zero` never ends, and a service that does either on a
//! request's behalf stops answering. So the file's type is checked before
//! it is opened, it is opened without blocking (`O_NONBLOCK`, which a
//! regular file ignores), and the type is checked again on what was opened,
//! so a file swapped for a FIFO in between is refused too.

use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, Read};
use std::path::Path;

/// `path` opened for reading, if it is a regular file (a symlink to one is).
pub fn open(path: &Path) -> io::Result<File> {
    refuse_special(&std::fs::metadata(path)?)?;
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path)?;
    refuse_special(&file.metadata()?)?;
    Ok(file)
}

/// The whole of the regular file at `path`, as text.
pub fn read_to_string(path: &Path) -> io::Result<String> {
    let mut text = String::new();
    open(path)?.read_to_string(&mut text)?;
    Ok(text)
}

/// Whether `path` is a regular file (after symlinks): what [`open`] opens.
pub fn is_regular(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file())
}

/// An error saying what `meta` is when it is not a regular file.
fn refuse_special(meta: &Metadata) -> io::Result<()> {
    if meta.is_file() {
        return Ok(());
    }
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("it is {}, not a regular file; name a file", kind_of(meta)),
    ))
}

fn kind_of(meta: &Metadata) -> &'static str {
    if meta.is_dir() {
        return "a folder";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let kind = meta.file_type();
        if kind.is_fifo() {
            return "a named pipe (FIFO)";
        }
        if kind.is_char_device() || kind.is_block_device() {
            return "a device";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    "a special file"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_regular_file_is_read_and_a_folder_or_device_is_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.txt");
        std::fs::write(&file, "text").unwrap();
        assert_eq!(read_to_string(&file).unwrap(), "text");
        assert!(is_regular(&file));
        let folder = read_to_string(dir.path()).unwrap_err();
        assert_eq!(folder.kind(), io::ErrorKind::InvalidInput);
        assert!(folder.to_string().contains("a folder"), "{folder}");
        #[cfg(unix)]
        {
            let device = read_to_string(Path::new("/dev/zero")).unwrap_err();
            assert!(device.to_string().contains("a device"), "{device}");
            let link = dir.path().join("link");
            std::os::unix::fs::symlink(&file, &link).unwrap();
            assert_eq!(read_to_string(&link).unwrap(), "text");
        }
        assert_eq!(
            read_to_string(&dir.path().join("missing"))
                .unwrap_err()
                .kind(),
            io::ErrorKind::NotFound
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_refused_at_once_without_waiting_for_a_writer() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe.jsonl");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let started = std::time::Instant::now();
        let err = open(&fifo).unwrap_err();
        assert!(err.to_string().contains("a named pipe (FIFO)"), "{err}");
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
        assert!(!is_regular(&fifo));
    }
}
