//! Where imported conversations come from (a file, or a request's body) and
//! reading one line by line: one line in memory at a time, whatever the
//! size of the file, each handed on with its 1-based number. Blank lines
//! are skipped.

use std::io::{BufRead, BufReader, Cursor, Read, Seek};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{
    detect, detect_document, tau2, tau_bench, DocumentError, Format, ImportedConversation,
    LineProblem,
};
use crate::jsonl::{JsonlReader, LineError};

/// A file or a body of conversations, with the name messages give it.
#[derive(Debug, Clone)]
pub struct Source {
    /// As the person who named it wrote it (a CLI argument, or a path
    /// relative to the service's data root): never more of the machine.
    pub shown: String,
    pub content: Content,
}

#[derive(Debug, Clone)]
pub enum Content {
    File(PathBuf),
    /// A request's body (NDJSON), already within the service's body limit.
    Text(Arc<str>),
}

/// How a source could not be read at all (not a line of it: those are
/// [`LineProblem`]s).
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error("{shown}: cannot read it: {source}")]
    Io {
        shown: String,
        #[source]
        source: std::io::Error,
    },
    /// `suggestion` names the formats that read it, only those
    /// (`import::probe`).
    #[error("{shown}: its format cannot be told from its first line: {why}; {suggestion}")]
    Undetected {
        shown: String,
        why: String,
        suggestion: String,
    },
    /// A tau2-bench results document broken where `problem` says.
    #[error("{shown}: {problem}")]
    Document { shown: String, problem: LineProblem },
}

/// Each line of a source: its number and its text (without the line end),
/// each within [`crate::jsonl`]'s limit.
pub struct Lines {
    reader: JsonlReader<Box<dyn ReadSeek>>,
}

impl Source {
    pub fn file(path: impl Into<PathBuf>, shown: impl Into<String>) -> Self {
        Source {
            shown: shown.into(),
            content: Content::File(path.into()),
        }
    }

    pub fn text(text: impl Into<Arc<str>>, shown: impl Into<String>) -> Self {
        Source {
            shown: shown.into(),
            content: Content::Text(text.into()),
        }
    }

    fn io(&self, source: std::io::Error) -> SourceError {
        SourceError::Io {
            shown: self.shown.clone(),
            source,
        }
    }

    /// Its bytes from the start, buffered.
    fn reader(&self) -> Result<Box<dyn ReadSeek>, SourceError> {
        Ok(match &self.content {
            Content::File(path) => {
                let file = crate::regular_file::open(path).map_err(|e| self.io(e))?;
                Box::new(BufReader::with_capacity(1 << 16, file))
            }
            Content::Text(text) => Box::new(Cursor::new(ArcText(Arc::clone(text)))),
        })
    }

    /// Its lines, from the first.
    pub fn lines(&self) -> Result<Lines, SourceError> {
        Ok(Lines {
            reader: JsonlReader::new(self.reader()?),
        })
    }

    /// `format`, or when it is `None` the format its first line is written
    /// in, and whether it was detected.
    pub fn format(&self, format: Option<Format>) -> Result<(Format, bool), SourceError> {
        if let Some(format) = format {
            // Opened once, so a file that cannot be read (missing, a FIFO, a
            // folder) is said before any line is.
            self.reader()?;
            return Ok((format, false));
        }
        let mut head = Vec::with_capacity(HEAD);
        self.reader()?
            .take(HEAD as u64)
            .read_to_end(&mut head)
            .map_err(|e| self.io(e))?;
        if let Some(format) = detect_document(&head) {
            return Ok((format, true));
        }
        let mut lines = self.lines()?;
        let undetected = |why: String, suggestion: String| SourceError::Undetected {
            shown: self.shown.clone(),
            why,
            suggestion,
        };
        let first = match lines.next_line() {
            Some(Ok((_, text))) => text.to_string(),
            Some(Err(LineError::Io(e))) => return Err(self.io(e)),
            Some(Err(e)) => {
                return Err(undetected(
                    e.to_string(),
                    "write it as UTF-8 JSONL: one JSON value per line, each of at most 64 MiB"
                        .into(),
                ))
            }
            None => {
                return Err(undetected(
                    "it holds no line".into(),
                    "no format reads an empty file".into(),
                ))
            }
        };
        match detect(&first) {
            Some(format) => Ok((format, true)),
            None => Err(SourceError::Undetected {
                shown: self.shown.clone(),
                why: "it is not a JSON object with `messages`, `conversations`, \
                      `responses_create_params` or `usersim_result`, nor a tau2-bench results \
                      document, nor a list of tau2 simulations or tau-bench runs"
                    .into(),
                suggestion: super::probe::suggestion(self, None),
            }),
        }
    }

    /// The metadata sidecar sparring's `openai` export writes beside
    /// `NAME.jsonl` (`NAME.metadata.jsonl`, a row per line in the same
    /// order), when this is such a file and the sidecar is there.
    pub fn sidecar(&self) -> Option<Source> {
        let Content::File(path) = &self.content else {
            return None;
        };
        let sidecar = sidecar_path(path)?;
        sidecar.is_file().then(|| {
            let shown = Path::new(&self.shown)
                .with_file_name(sidecar.file_name().unwrap_or_default())
                .to_string_lossy()
                .into_owned();
            Source::file(sidecar, shown)
        })
    }

    /// Reads every line in `format`, handing each line's number and its
    /// conversation or problem to `each` until it breaks. With an `openai`
    /// sidecar, each line's metadata is read from it.
    pub fn read(
        &self,
        format: Format,
        mut each: impl FnMut(usize, Result<ImportedConversation, LineProblem>) -> ControlFlow<()>,
    ) -> Result<(), SourceError> {
        if format.is_document() {
            return self.read_document(format, each);
        }
        let mut sidecar = match (format, self.sidecar()) {
            (Format::Openai, Some(sidecar)) => Some((sidecar.lines()?, sidecar)),
            _ => None,
        };
        let mut lines = self.lines()?;
        while let Some(next) = lines.next_line() {
            let mut read = match next {
                Ok((line, text)) => format.read_line(text, line).map(|c| (line, c)),
                Err(LineError::Io(e)) => return Err(self.io(e)),
                Err(e) => Err(LineProblem::new(e.line().unwrap_or(0), e.reason())),
            };
            if let (Some((side_lines, side)), Ok((line, conversation))) = (&mut sidecar, &mut read)
            {
                let merged = match side_lines.next_line() {
                    None => super::sidecar::merge(conversation, *line, None),
                    Some(Ok(side_line)) => {
                        super::sidecar::merge(conversation, *line, Some(side_line))
                    }
                    Some(Err(LineError::Io(e))) => return Err(side.io(e)),
                    Some(Err(e)) => Err(LineProblem::new(
                        *line,
                        format!("its row in the metadata sidecar: {}", e.reason()),
                    )),
                };
                if let Err(problem) = merged {
                    read = Err(problem);
                }
            }
            let (line, read) = match read {
                Ok((line, conversation)) => (line, Ok(conversation)),
                Err(problem) => (problem.line, Err(problem)),
            };
            if each(line, read).is_break() {
                break;
            }
        }
        Ok(())
    }
}

impl Source {
    /// A tau2-bench results document (or tau-bench's trajectories),
    /// conversation by conversation: each is handed on with its number in
    /// the file (from 1), each problem with the line its element starts on.
    fn read_document(
        &self,
        format: Format,
        mut each: impl FnMut(usize, Result<ImportedConversation, LineProblem>) -> ControlFlow<()>,
    ) -> Result<(), SourceError> {
        let mut simulation = 0;
        let handle = |read: Result<ImportedConversation, LineProblem>| {
            simulation += 1;
            match read {
                Ok(conversation) => each(simulation, Ok(conversation)),
                Err(problem) => each(problem.line, Err(problem)),
            }
        };
        let read = match format {
            Format::TauBench => tau_bench::read_file(self.reader()?, handle),
            _ => tau2::read_file(self.reader()?, handle),
        };
        read.map_err(|e| match e {
            DocumentError::Io(e) => self.io(e),
            DocumentError::Invalid(problem) => SourceError::Document {
                shown: self.shown.clone(),
                problem,
            },
        })
    }
}

/// What `auto` reads of a file to tell a tau2-bench document.
const HEAD: usize = 64 * 1024;

/// A buffered reader that can go back to the start (a tau2 document may be
/// read twice).
trait ReadSeek: BufRead + Seek + Send {}
impl<T: BufRead + Seek + Send> ReadSeek for T {}

/// `NAME.metadata.jsonl` beside `NAME.jsonl` (or beside `NAME.SPLIT.jsonl`,
/// `NAME.SPLIT.metadata.jsonl`, as split exports name them).
fn sidecar_path(path: &Path) -> Option<PathBuf> {
    let name = path.file_name()?.to_str()?;
    let stem = name.strip_suffix(".jsonl")?;
    if stem.ends_with(".metadata") {
        return None;
    }
    Some(path.with_file_name(format!("{stem}.metadata.jsonl")))
}

impl Lines {
    /// The next non-blank line and its number, or `None` at the end.
    pub fn next_line(&mut self) -> Option<Result<(usize, &str), LineError>> {
        self.reader.next_line()
    }
}

/// A shared text read as bytes.
struct ArcText(Arc<str>);

impl AsRef<[u8]> for ArcText {
    fn as_ref(&self) -> &[u8] {
        self.0.as_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(source: &Source, format: Format) -> Vec<Result<usize, String>> {
        let mut out = Vec::new();
        source
            .read(format, |_, read| {
                out.push(read.map(|c| c.messages.len()).map_err(|p| p.to_string()));
                ControlFlow::Continue(())
            })
            .unwrap();
        out
    }

    #[test]
    fn lines_are_numbered_from_one_and_blank_ones_are_skipped() {
        let text = "{\"messages\": [{\"role\": \"user\", \"content\": \"a\"}]}\r\n\n  \n\
                    {\"messages\": []}\n";
        let source = Source::text(text, "body");
        let read = collect(&source, Format::Openai);
        assert_eq!(read.len(), 2);
        assert_eq!(read[0], Ok(1));
        let problem = read[1].clone().unwrap_err();
        assert!(problem.starts_with("line 4"), "{problem}");
    }

    #[test]
    fn auto_says_what_it_chose_or_why_it_cannot() {
        let source = Source::text("\n{\"conversations\": []}\n", "body");
        assert_eq!(source.format(None).unwrap(), (Format::ShareGpt, true));
        assert_eq!(
            source.format(Some(Format::Hf)).unwrap(),
            (Format::Hf, false)
        );
        let err = Source::text("[1, 2]\n", "x.jsonl")
            .format(None)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("x.jsonl: its format cannot be told"),
            "{err}"
        );
        assert!(err.contains("no format sparring reads"), "{err}");
        let empty = Source::text("", "e.jsonl").format(None).unwrap_err();
        assert!(empty.to_string().contains("no line"), "{empty}");
    }

    #[test]
    fn a_folder_or_a_missing_file_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let err = Source::file(dir.path(), "data/").lines().err().unwrap();
        assert!(
            err.to_string().starts_with("data/: cannot read it"),
            "{err}"
        );
        let err = Source::file(dir.path().join("nope.jsonl"), "nope.jsonl")
            .lines()
            .err()
            .unwrap();
        assert!(
            err.to_string().starts_with("nope.jsonl: cannot read"),
            "{err}"
        );
    }

    #[test]
    fn the_sidecar_is_found_beside_an_export_and_its_splits() {
        assert_eq!(
            sidecar_path(Path::new("/d/x.jsonl")),
            Some(PathBuf::from("/d/x.metadata.jsonl"))
        );
        assert_eq!(
            sidecar_path(Path::new("x.train.jsonl")),
            Some(PathBuf::from("x.train.metadata.jsonl"))
        );
        assert_eq!(sidecar_path(Path::new("x.metadata.jsonl")), None);
        assert_eq!(sidecar_path(Path::new("x.json")), None);
    }
}
