//! The top-level object of a results file, read by serde visitors: `info`
//! and `tasks` whole (they are small and said once), `simulations` one
//! element at a time, each handed on as soon as it is read, and anything
//! else skipped without being kept.

use std::collections::HashMap;
use std::fmt;
use std::ops::ControlFlow;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use crate::import::list::Elements;
use crate::import::position::Lines;
use crate::import::{ImportedConversation, LineProblem};

use super::run::{add_task, Run, Task};
use super::simulation;

/// Whether, and how, `simulations` was met.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) enum Simulations {
    #[default]
    NotSeen,
    /// Skipped because it came before `info` or `tasks`: a second pass reads it.
    Deferred,
    Read,
}

#[derive(Debug, Default)]
pub(super) struct State {
    pub run: Option<Run>,
    pub tasks: Option<HashMap<String, Task>>,
    pub simulations: Simulations,
    pub stopped: bool,
}

/// One pass over the document. The first reads `info` and `tasks`, and
/// `simulations` if they came before it; the second only `simulations`.
pub(super) struct Pass<'a, F> {
    pub second: bool,
    pub state: &'a mut State,
    pub each: &'a mut F,
    pub lines: &'a Lines,
}

impl<'de, F> DeserializeSeed<'de> for Pass<'_, F>
where
    F: FnMut(Result<ImportedConversation, LineProblem>) -> ControlFlow<()>,
{
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de, F> Visitor<'de> for Pass<'_, F>
where
    F: FnMut(Result<ImportedConversation, LineProblem>) -> ControlFlow<()>,
{
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a tau2-bench results object (`info`, `tasks`, `simulations`)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "info" if !self.second => {
                    let run = Run::read(map.next_value::<Value>()?).map_err(de::Error::custom)?;
                    self.state.run = Some(run);
                }
                "tasks" if !self.second => {
                    let mut tasks = HashMap::new();
                    map.next_value_seed(Tasks(&mut tasks))?;
                    self.state.tasks = Some(tasks);
                }
                "simulations"
                    if self.second || (self.state.run.is_some() && self.state.tasks.is_some()) =>
                {
                    let run = self.state.run.take().unwrap_or_default();
                    // A document without `tasks` (some submissions write only
                    // the simulations) is read as a bare list is.
                    let tasks = self.state.tasks.take();
                    let each = &mut *self.each;
                    let read = map.next_value_seed(Elements {
                        lines: self.lines,
                        each: &mut |index, line, sim| {
                            each(simulation::read(index, line, sim, &run, tasks.as_ref()))
                        },
                        stopped: &mut self.state.stopped,
                        expecting: "`simulations` as a list of simulations",
                    });
                    self.state.run = Some(run);
                    self.state.tasks = tasks;
                    read?;
                    self.state.simulations = Simulations::Read;
                }
                "simulations" => {
                    map.next_value::<IgnoredAny>()?;
                    self.state.simulations = Simulations::Deferred;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

/// `tasks`, element by element into the map.
struct Tasks<'a>(&'a mut HashMap<String, Task>);

impl<'de> DeserializeSeed<'de> for Tasks<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Tasks<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("`tasks` as a list of tasks")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(task) = seq.next_element::<Value>()? {
            add_task(self.0, task);
        }
        Ok(())
    }
}
