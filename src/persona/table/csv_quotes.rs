//! A CSV file's quotes, watched as the `csv` crate reads it. The crate
//! takes a quote that is never closed as a cell that runs to the end of the
//! file, so a table with one stray `"` would be read silently as a table
//! missing every row after it (and that cell held in memory whole). Reading
//! through [`QuoteWatch`], the same bytes go through RFC 4180's quoting as
//! the crate applies it (a quote opens a cell only at its start; `""`
//! inside is a quote): a file that ends inside a quoted cell, or a quoted
//! cell longer than [`MAX_QUOTED_CELL_BYTES`], is an error at the line its
//! quote opened.

use std::fmt;
use std::io::{self, Read};

/// A quoted cell longer than this is taken for a quote left open.
pub const MAX_QUOTED_CELL_BYTES: usize = 16 << 20;

/// Why the watch stopped the reading: the quote at `line` is not closed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnclosedQuote {
    pub line: u64,
    /// The file ended inside the cell (else it went past the limit).
    pub at_end: bool,
}

impl fmt::Display for UnclosedQuote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.at_end {
            write!(
                f,
                "the quote (\") that opens a cell on this line is never closed: the file ends \
                 inside the cell; close it, or write a quote inside a quoted cell as \"\""
            )
        } else {
            write!(
                f,
                "the quoted cell that opens on this line runs past {} MiB: its closing quote \
                 (\") is probably missing; close it, or write a quote inside a quoted cell as \"\"",
                MAX_QUOTED_CELL_BYTES >> 20
            )
        }
    }
}

impl std::error::Error for UnclosedQuote {}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    CellStart,
    Unquoted,
    Quoted,
    /// A `"` inside a quoted cell: `""` or the cell's end.
    QuoteInQuoted,
}

/// `inner`, its bytes watched for an unclosed quote.
pub struct QuoteWatch<R> {
    inner: R,
    state: State,
    line: u64,
    opened_at: u64,
    quoted_bytes: usize,
}

impl<R: Read> QuoteWatch<R> {
    pub fn new(inner: R) -> Self {
        QuoteWatch {
            inner,
            state: State::CellStart,
            line: 1,
            opened_at: 1,
            quoted_bytes: 0,
        }
    }

    fn watch(&mut self, bytes: &[u8]) -> Result<(), UnclosedQuote> {
        for &b in bytes {
            self.state = match (self.state, b) {
                (State::CellStart, b'"') => {
                    self.opened_at = self.line;
                    self.quoted_bytes = 0;
                    State::Quoted
                }
                (State::CellStart | State::Unquoted | State::QuoteInQuoted, b',' | b'\n') => {
                    State::CellStart
                }
                (State::QuoteInQuoted, b'"') => State::Quoted,
                (State::Quoted, b'"') => State::QuoteInQuoted,
                (State::Quoted, _) => {
                    self.quoted_bytes += 1;
                    if self.quoted_bytes > MAX_QUOTED_CELL_BYTES {
                        return Err(UnclosedQuote {
                            line: self.opened_at,
                            at_end: false,
                        });
                    }
                    State::Quoted
                }
                (State::CellStart | State::Unquoted | State::QuoteInQuoted, _) => State::Unquoted,
            };
            if b == b'\n' {
                self.line += 1;
            }
        }
        Ok(())
    }
}

impl<R: Read> Read for QuoteWatch<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        let outcome = if n == 0 && self.state == State::Quoted {
            Err(UnclosedQuote {
                line: self.opened_at,
                at_end: true,
            })
        } else {
            self.watch(&buf[..n])
        };
        outcome.map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        Ok(n)
    }
}

/// The unclosed quote behind a `csv` error, if that is what it is.
pub fn unclosed_quote(e: &csv::Error) -> Option<&UnclosedQuote> {
    match e.kind() {
        csv::ErrorKind::Io(io) => io.get_ref()?.downcast_ref::<UnclosedQuote>(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn records(text: &str) -> Result<Vec<Vec<String>>, String> {
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .from_reader(QuoteWatch::new(text.as_bytes()));
        let mut out = Vec::new();
        for record in reader.records() {
            match record {
                Ok(r) => out.push(r.iter().map(str::to_string).collect()),
                Err(e) => {
                    return Err(match unclosed_quote(&e) {
                        Some(q) => format!("line {}: {q}", q.line),
                        None => e.to_string(),
                    })
                }
            }
        }
        Ok(out)
    }

    #[test]
    fn quoted_cells_with_commas_line_breaks_and_doubled_quotes_read_as_the_crate_reads_them() {
        let text = "a,b\n\"x, y\",\"line\none\"\n\"say \"\"hi\"\"\",5\" tall\n";
        assert_eq!(
            records(text).unwrap(),
            vec![
                vec!["a", "b"],
                vec!["x, y", "line\none"],
                vec!["say \"hi\"", "5\" tall"]
            ]
        );
    }

    #[test]
    fn a_quote_never_closed_is_an_error_at_the_line_it_opened() {
        let text = "uuid,persona\na,fine\nb,\"never closed\nc,lost\nd,lost too\n";
        let err = records(text).unwrap_err();
        assert!(err.starts_with("line 3: the quote"), "{err}");
        assert!(err.contains("never closed"), "{err}");
    }

    #[test]
    fn a_quoted_cell_past_the_limit_stops_the_reading_early() {
        let text = format!("a,\"{}", "x".repeat(MAX_QUOTED_CELL_BYTES + 10));
        let err = records(&text).unwrap_err();
        assert!(err.starts_with("line 1: the quoted cell"), "{err}");
    }
}
