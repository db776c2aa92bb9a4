//! The one reader of JSON-lines input (imports, scenarios, personas, persona
//! tables, NeMo Gym rows and rollouts, Batch API output files):
//! one line in memory at a time, and never more than a line's limit of it.
//! Each line comes with its 1-based number; a line of only white space is
//! skipped (and counted); a byte-order mark before the first line is
//! dropped; `\n` and `\r\n` both end a line. A line longer than the limit
//! is read past without being kept and is an error at its number, as is a
//! line that is not UTF-8; the reader goes on with the next line, so a
//! caller that skips bad lines can. An I/O error ends the reading.

use std::io::{self, BufRead};

/// A line's limit unless the caller sets another: far above any real
/// conversation (the longest line of every dataset in this repository is
/// under 2 KiB; a long agent trajectory with tool outputs is a few MiB).
pub const DEFAULT_MAX_LINE_BYTES: usize = 64 << 20;

/// A line that could not be read, or the end of reading.
#[derive(Debug, thiserror::Error)]
pub enum LineError {
    #[error("line {line}: {}", self.reason())]
    TooLong { line: usize, limit: usize },
    #[error("line {line}: {}", self.reason())]
    NotUtf8 { line: usize, column: usize },
    #[error("{0}")]
    Io(#[from] io::Error),
}

impl LineError {
    /// The line the error is about; `None` for an I/O error.
    pub fn line(&self) -> Option<usize> {
        match self {
            LineError::TooLong { line, .. } | LineError::NotUtf8 { line, .. } => Some(*line),
            LineError::Io(_) => None,
        }
    }

    /// What is wrong, without the line's number.
    pub fn reason(&self) -> String {
        match self {
            LineError::TooLong { limit, .. } => format!(
                "longer than {} MiB, the most sparring reads of one line (read past, not \
                 kept); a line holds one JSON object: is this a JSON-lines file?",
                limit >> 20
            ),
            LineError::NotUtf8 { column, .. } => {
                format!("not UTF-8 text (a bad byte at column {column}); save the file as UTF-8")
            }
            LineError::Io(e) => e.to_string(),
        }
    }
}

/// Lines of `reader`, each within `max_line_bytes`.
pub struct JsonlReader<R> {
    reader: R,
    max_line_bytes: usize,
    line: usize,
    buffer: Vec<u8>,
    failed: bool,
}

impl<R: BufRead> JsonlReader<R> {
    pub fn new(reader: R) -> Self {
        Self::with_limit(reader, DEFAULT_MAX_LINE_BYTES)
    }

    pub fn with_limit(reader: R, max_line_bytes: usize) -> Self {
        JsonlReader {
            reader,
            max_line_bytes,
            line: 0,
            buffer: Vec::new(),
            failed: false,
        }
    }

    /// The next line that is not blank, with its number; `None` at the end
    /// (and after an I/O error).
    pub fn next_line(&mut self) -> Option<Result<(usize, &str), LineError>> {
        loop {
            if self.failed {
                return None;
            }
            let too_long = match self.fill_line() {
                Ok(None) => return None,
                Ok(Some(too_long)) => too_long,
                Err(e) => {
                    self.failed = true;
                    return Some(Err(LineError::Io(e)));
                }
            };
            self.line += 1;
            if too_long {
                return Some(Err(LineError::TooLong {
                    line: self.line,
                    limit: self.max_line_bytes,
                }));
            }
            let (start, end) = self.content();
            match std::str::from_utf8(&self.buffer[start..end]) {
                Ok(text) if text.trim().is_empty() => continue,
                Ok(_) => break,
                Err(e) => {
                    return Some(Err(LineError::NotUtf8 {
                        line: self.line,
                        column: e.valid_up_to() + 1,
                    }))
                }
            }
        }
        let (start, end) = self.content();
        let text = std::str::from_utf8(&self.buffer[start..end]).unwrap_or_default();
        Some(Ok((self.line, text)))
    }

    /// The next line's bytes into `buffer` (its end kept); whether it went
    /// past the limit (then `buffer` is empty); `None` at the end.
    fn fill_line(&mut self) -> io::Result<Option<bool>> {
        self.buffer.clear();
        let mut read_any = false;
        let mut too_long = false;
        loop {
            let available = match self.reader.fill_buf() {
                Ok(available) => available,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if available.is_empty() {
                break;
            }
            read_any = true;
            let (taken, ended) = match memchr::memchr(b'\n', available) {
                Some(at) => (at + 1, true),
                None => (available.len(), false),
            };
            // The line end (`\r\n`) does not count against the limit.
            if !too_long && self.buffer.len() + taken > self.max_line_bytes + 2 {
                too_long = true;
                self.buffer = Vec::new();
            }
            if !too_long {
                // Grown by doubling, but never past the limit.
                let needed = self.buffer.len() + taken;
                if needed > self.buffer.capacity() {
                    let target = (self.buffer.capacity() * 2)
                        .max(needed)
                        .min(self.max_line_bytes + 2);
                    self.buffer.reserve_exact(target - self.buffer.len());
                }
                self.buffer.extend_from_slice(&available[..taken]);
            }
            self.reader.consume(taken);
            if ended {
                break;
            }
        }
        if !too_long {
            let (start, end) = self.content();
            if end - start > self.max_line_bytes {
                too_long = true;
                self.buffer = Vec::new();
            }
        }
        Ok(read_any.then_some(too_long))
    }

    /// Where the line's text is in `buffer`: its end and, on the first
    /// line, a byte-order mark left out.
    fn content(&self) -> (usize, usize) {
        let mut end = self.buffer.len();
        if self.buffer[..end].ends_with(b"\n") {
            end -= 1;
        }
        if self.buffer[..end].ends_with(b"\r") {
            end -= 1;
        }
        let start = if self.line <= 1 && self.buffer[..end].starts_with("\u{feff}".as_bytes()) {
            3
        } else {
            0
        };
        (start.min(end), end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn all(text: &[u8], limit: usize) -> Vec<Result<(usize, String), String>> {
        let mut reader = JsonlReader::with_limit(text, limit);
        let mut out = Vec::new();
        while let Some(next) = reader.next_line() {
            out.push(
                next.map(|(n, l)| (n, l.to_string()))
                    .map_err(|e| e.to_string()),
            );
        }
        out
    }

    #[test]
    fn lines_are_numbered_blank_ones_skipped_and_a_byte_order_mark_dropped() {
        let text = "\u{feff}{\"a\": 1}\r\n\n   \n{\"b\": 2}\n{\"c\": 3}";
        assert_eq!(
            all(text.as_bytes(), 100),
            vec![
                Ok((1, "{\"a\": 1}".to_string())),
                Ok((4, "{\"b\": 2}".to_string())),
                Ok((5, "{\"c\": 3}".to_string())),
            ]
        );
        assert!(all(b"", 100).is_empty());
        assert!(all(b"\n\n", 100).is_empty());
        // A mark inside the file is text of its line, not dropped.
        assert_eq!(
            all("x\n\u{feff}y".as_bytes(), 100)[1],
            Ok((2, "\u{feff}y".to_string()))
        );
    }

    #[test]
    fn a_line_past_the_limit_is_an_error_at_its_number_and_the_next_is_read() {
        let text = format!("{{}}\n{}\n{{\"after\": 1}}\n", "x".repeat(1000));
        let read = all(text.as_bytes(), 100);
        assert_eq!(read[0], Ok((1, "{}".to_string())));
        let err = read[1].clone().unwrap_err();
        assert!(err.starts_with("line 2: longer than"), "{err}");
        assert_eq!(read[2], Ok((3, "{\"after\": 1}".to_string())));
        // Exactly at the limit, with its line end, is read.
        let exact = format!("{}\r\n", "y".repeat(100));
        assert_eq!(all(exact.as_bytes(), 100)[0], Ok((1, "y".repeat(100))));
        let over = "y".repeat(101);
        assert!(all(over.as_bytes(), 100)[0].is_err());
    }

    #[test]
    fn a_line_that_is_not_utf8_is_an_error_at_its_column() {
        let read = all(b"{}\nab\xffc\n{}\n", 100);
        assert_eq!(read.len(), 3);
        let err = read[1].clone().unwrap_err();
        assert!(
            err.contains("line 2: not UTF-8") && err.contains("column 3"),
            "{err}"
        );
    }

    #[test]
    fn a_huge_line_is_read_past_with_a_small_buffer() {
        let huge = vec![b'z'; 8 << 20];
        let mut reader = JsonlReader::with_limit(std::io::BufReader::new(&huge[..]), 1 << 20);
        assert!(matches!(
            reader.next_line(),
            Some(Err(LineError::TooLong { line: 1, .. }))
        ));
        assert!(
            reader.buffer.capacity() <= 2 << 20,
            "{}",
            reader.buffer.capacity()
        );
        assert!(reader.next_line().is_none());
    }

    proptest! {
        #[test]
        fn every_non_blank_line_comes_back_with_its_number(
            lines in prop::collection::vec("[a-z {}\"]{0,12}", 0..20),
            crlf in any::<bool>(),
        ) {
            let end = if crlf { "\r\n" } else { "\n" };
            let text = lines.join(end);
            let expected: Vec<Result<(usize, String), String>> = lines
                .iter()
                .enumerate()
                .filter(|(_, l)| !l.trim().is_empty())
                .map(|(i, l)| Ok((i + 1, l.clone())))
                .collect();
            prop_assert_eq!(all(text.as_bytes(), 64), expected);
        }
    }
}
