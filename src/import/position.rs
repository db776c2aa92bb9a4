//! Which line of the file a simulation starts on, for its problems: a
//! reader between the file and serde_json that counts the lines it passes
//! on and, once asked to, notes the line of the next byte that starts a
//! value (serde_json reads the document a byte at a time, so what it has
//! read is where it is).

use std::cell::Cell;
use std::io::{self, Read};
use std::rc::Rc;

#[derive(Debug)]
struct State {
    /// The line of the next byte, 1-based.
    line: Cell<usize>,
    watching: Cell<bool>,
    start: Cell<usize>,
}

/// Shared between the reader serde_json owns and the visitor that asks.
#[derive(Debug, Clone)]
pub(super) struct Lines(Rc<State>);

impl Default for Lines {
    fn default() -> Self {
        Lines(Rc::new(State {
            line: Cell::new(1),
            watching: Cell::new(false),
            start: Cell::new(1),
        }))
    }
}

impl Lines {
    /// From now on, note the line of the next byte that is neither
    /// whitespace nor a comma: the start of the next element of a list.
    pub(super) fn watch(&self) {
        self.0.watching.set(true);
    }

    /// The line noted since [`Lines::watch`].
    pub(super) fn start(&self) -> usize {
        self.0.start.get()
    }

    pub(super) fn reader<R: Read>(&self, inner: R) -> Counting<R> {
        Counting {
            inner,
            lines: self.clone(),
        }
    }
}

pub(super) struct Counting<R> {
    inner: R,
    lines: Lines,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        let state = &self.lines.0;
        for &byte in buf.get(..n).unwrap_or(buf) {
            if state.watching.get() && !matches!(byte, b' ' | b'\t' | b'\r' | b'\n' | b',') {
                state.start.set(state.line.get());
                state.watching.set(false);
            }
            if byte == b'\n' {
                state.line.set(state.line.get() + 1);
            }
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_of_the_next_value_after_watch_is_noted() {
        let lines = Lines::default();
        let mut reader = lines.reader(&b"[\n  {},\n\n  {}\n]"[..]);
        let mut byte = [0u8; 1];
        for _ in 0..7 {
            reader.read_exact(&mut byte).unwrap();
        }
        assert_eq!(byte[0], b',');
        lines.watch();
        reader.read_exact(&mut [0u8; 5]).unwrap();
        assert_eq!(lines.start(), 4);
    }
}
