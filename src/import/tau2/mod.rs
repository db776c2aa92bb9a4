//! tau2-bench results: the one JSON document a `tau2 run` writes (`info`,
//! `tasks`, `simulations[]`), read streaming so memory is bounded by one
//! simulation and the tasks, never by the number of simulations. tau2
//! writes `tasks` before `simulations`; when a file has them the other way
//! round (or `info` after them), the first pass skips `simulations` without
//! keeping it and a second pass over the file reads them, which is why the
//! reader must seek. Each simulation becomes an [`ImportedConversation`]
//! (see `simulation`), or a [`LineProblem`] at the line it starts on that
//! says which simulation and why; all of them in one pass. A file that is
//! not such a document (invalid JSON, no `simulations` list) is a
//! [`DocumentError`], after the conversations before the fault were handed on.
//!
//! The directory form tau2 uses for voice runs (`results.json` with
//! `simulations/*.json` beside it) and full-duplex simulations (`ticks`
//! without `messages`) are not read.

mod document;
mod messages;
mod run;
mod scenario;
mod simulation;

use std::io::{BufReader, Read, Seek};
use std::ops::ControlFlow;

use serde::de::DeserializeSeed;

use super::list::{self, finish, first_byte, DocumentError};
use super::position::Lines;
use super::{ImportedConversation, LineProblem};
use document::{Pass, Simulations, State};
use run::Run;

pub(crate) use run::{criteria as evaluation_criteria, id_text};
pub(crate) use scenario::{field as instruction_field, user_scenario};
pub use simulation::TASKLESS_KEY;

/// Reads a whole results file from its start, handing each simulation's
/// conversation, or why it cannot be read, to `each` in file order; `each`
/// returns `ControlFlow::Break` to stop early (then this returns `Ok`). A
/// file that is a bare list of simulations (no `info`, no `tasks`, as some
/// leaderboard submissions are written) is read as the `simulations` of a
/// document without them: no scenario, tools or models.
pub fn read_file<R, F>(mut reader: R, mut each: F) -> Result<(), DocumentError>
where
    R: Read + Seek,
    F: FnMut(Result<ImportedConversation, LineProblem>) -> ControlFlow<()>,
{
    if first_byte(&mut reader)? == Some(b'[') {
        let run = Run::default();
        return list::read_document(
            &mut reader,
            "a list of tau2-bench simulations",
            |index, line, sim| each(simulation::read(index, line, sim, &run, None)),
        );
    }
    let mut state = State::default();
    pass(&mut reader, false, &mut state, &mut each)?;
    match state.simulations {
        _ if state.stopped => Ok(()),
        Simulations::Read => Ok(()),
        Simulations::Deferred => pass(&mut reader, true, &mut state, &mut each),
        Simulations::NotSeen => Err(DocumentError::Invalid(LineProblem::new(
            1,
            "no `simulations` list: not a tau2-bench results file (tau2's directory form keeps \
             them in simulations/*.json beside results.json, which is not read)",
        ))),
    }
}

fn pass<R, F>(
    reader: &mut R,
    second: bool,
    state: &mut State,
    each: &mut F,
) -> Result<(), DocumentError>
where
    R: Read + Seek,
    F: FnMut(Result<ImportedConversation, LineProblem>) -> ControlFlow<()>,
{
    reader.rewind()?;
    let lines = Lines::default();
    let mut de = serde_json::Deserializer::from_reader(lines.reader(BufReader::new(reader)));
    let read = Pass {
        second,
        state: &mut *state,
        each,
        lines: &lines,
    }
    .deserialize(&mut de)
    .and_then(|()| de.end());
    let stopped = state.stopped;
    finish(read, stopped)
}

#[cfg(test)]
mod tests;
