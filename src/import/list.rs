//! A JSON list read one element at a time: each element is parsed, handed
//! on with its index and the line of the file it starts on, and dropped
//! before the next is read, so memory is bounded by one element. The
//! documents that hold conversations as a list (tau2-bench's `simulations`,
//! a bare list of them, tau-bench's trajectories) all read through it.

use std::fmt;
use std::io::{self, BufReader, Read, Seek};
use std::ops::ControlFlow;

use serde::de::{self, DeserializeSeed, SeqAccess, Visitor};
use serde_json::Value;

use super::position::Lines;
use super::LineProblem;

/// Said by the visitor when the caller asked to stop; not a problem.
pub(super) const STOPPED: &str = "stopped by the caller";

/// The elements of a list, each handed to `each(index, line, element)`
/// until it breaks (then `stopped` is set).
pub(super) struct Elements<'a, F> {
    pub lines: &'a Lines,
    pub each: &'a mut F,
    pub stopped: &'a mut bool,
    /// What the list is, for serde's "expected …" message.
    pub expecting: &'static str,
}

impl<'de, F> DeserializeSeed<'de> for Elements<'_, F>
where
    F: FnMut(usize, usize, Value) -> ControlFlow<()>,
{
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de, F> Visitor<'de> for Elements<'_, F>
where
    F: FnMut(usize, usize, Value) -> ControlFlow<()>,
{
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.expecting)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        for index in 0.. {
            self.lines.watch();
            let Some(element) = seq.next_element::<Value>()? else {
                break;
            };
            if (self.each)(index, self.lines.start(), element).is_break() {
                *self.stopped = true;
                return Err(de::Error::custom(STOPPED));
            }
        }
        Ok(())
    }
}

/// Why a document cannot be read as a whole.
#[derive(Debug, thiserror::Error)]
pub enum DocumentError {
    #[error("cannot read the file: {0}")]
    Io(#[from] io::Error),
    /// Not a document of the format, or broken where it says.
    #[error("{0}")]
    Invalid(LineProblem),
}

/// Reads a document that is one JSON list from its start, handing each
/// element to `each` as [`Elements`] does; `expecting` says what the list
/// should be.
pub(super) fn read_document<R, F>(
    reader: &mut R,
    expecting: &'static str,
    mut each: F,
) -> Result<(), DocumentError>
where
    R: Read + Seek,
    F: FnMut(usize, usize, Value) -> ControlFlow<()>,
{
    reader.rewind()?;
    let lines = Lines::default();
    let mut de = serde_json::Deserializer::from_reader(lines.reader(BufReader::new(reader)));
    let mut stopped = false;
    let read = Elements {
        lines: &lines,
        each: &mut each,
        stopped: &mut stopped,
        expecting,
    }
    .deserialize(&mut de)
    .and_then(|()| de.end());
    finish(read, stopped)
}

/// The outcome of a pass: a stop asked for is no error; an I/O error is
/// the file's; anything else is the document's, at its line.
pub(super) fn finish(
    read: Result<(), serde_json::Error>,
    stopped: bool,
) -> Result<(), DocumentError> {
    match read {
        Ok(()) => Ok(()),
        Err(_) if stopped => Ok(()),
        Err(e) if e.is_io() => Err(DocumentError::Io(e.into())),
        Err(e) => Err(DocumentError::Invalid(json_problem(&e))),
    }
}

/// serde_json's error at its line, without the position it appends.
pub(super) fn json_problem(e: &serde_json::Error) -> LineProblem {
    let text = crate::diagnostics::problem::json_message(e);
    let why = text
        .rsplit_once(" at line ")
        .map_or(text.as_str(), |(why, _)| why);
    let why = if e.is_data() {
        why.to_string()
    } else {
        format!("invalid JSON: {why}")
    };
    LineProblem::new(e.line().max(1), format!("{why} (column {})", e.column()))
}

/// The first byte of `reader` that is not whitespace (`None` when there is
/// none), read from its start; the reader is left anywhere.
pub(super) fn first_byte<R: Read + Seek>(reader: &mut R) -> io::Result<Option<u8>> {
    reader.rewind()?;
    let mut buf = [0u8; 4096];
    loop {
        let n = reader.read(&mut buf)?;
        if n == 0 {
            return Ok(None);
        }
        if let Some(b) = buf[..n].iter().find(|b| !b.is_ascii_whitespace()) {
            return Ok(Some(*b));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    #[test]
    fn each_element_comes_with_its_index_and_line_and_a_break_stops() {
        let text = "[\n  {\"a\": 1},\n\n  {\"a\": 2},\n  3\n]";
        let mut seen = Vec::new();
        read_document(&mut Cursor::new(text), "a list", |i, line, v| {
            seen.push((i, line, v));
            ControlFlow::Continue(())
        })
        .unwrap();
        let at: Vec<(usize, usize)> = seen.iter().map(|(i, l, _)| (*i, *l)).collect();
        assert_eq!(at, [(0, 2), (1, 4), (2, 5)]);
        let mut n = 0;
        read_document(&mut Cursor::new(text), "a list", |_, _, _| {
            n += 1;
            ControlFlow::Break(())
        })
        .unwrap();
        assert_eq!(n, 1);
    }

    #[test]
    fn a_document_that_is_no_list_says_what_was_expected() {
        let err = read_document(&mut Cursor::new("{}"), "a list of runs", |_, _, _| {
            ControlFlow::Continue(())
        })
        .unwrap_err();
        assert!(err.to_string().contains("a list of runs"), "{err}");
        assert_eq!(first_byte(&mut Cursor::new("  \n [")).unwrap(), Some(b'['));
        assert_eq!(first_byte(&mut Cursor::new(" ")).unwrap(), None);
    }
}
