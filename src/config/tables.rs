//! The tables of a config document, taken out of it by name so that what is
//! left is its head, each then read on its own: one left out gets its
//! default, or, when required, a problem with an example of it. The job,
//! synthesis and judges loaders share this reader.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::Path;

use serde::de::DeserializeOwned;
use toml::de::DeTable;

use crate::diagnostics::document::{Node, Source};
use crate::diagnostics::problem::Problem;

/// The tables found, each with the span of its key.
pub struct Tables<'t> {
    found: BTreeMap<&'static str, (Range<usize>, Node<'t>)>,
}

impl<'t> Tables<'t> {
    /// Take every table of `names` out of `root`.
    pub fn take(root: &mut DeTable<'t>, names: &[&'static str]) -> Tables<'t> {
        let found = names
            .iter()
            .filter_map(|name| Source::take(root, name).map(|found| (*name, found)))
            .collect();
        Tables { found }
    }

    /// Table `name`, if given.
    pub fn optional(&mut self, name: &str) -> Option<Node<'t>> {
        self.optional_at(name).map(|(_, node)| node)
    }

    /// Table `name` with the span of its key, where a problem of the whole
    /// table is placed.
    pub fn optional_at(&mut self, name: &str) -> Option<(Range<usize>, Node<'t>)> {
        self.found.remove(name)
    }

    /// Table `name`, or a problem saying to add `example`.
    pub fn required(
        &mut self,
        file: &Path,
        name: &str,
        example: &str,
        problems: &mut Vec<Problem>,
    ) -> Option<Node<'t>> {
        let node = self.optional(name);
        if node.is_none() {
            problems.push(Problem::at_field(
                file,
                name,
                format!("is missing; add {example}"),
            ));
        }
        node
    }

    /// Table `name` as its type, or the type's default when it is left out;
    /// `None` when it had problems.
    pub fn section<T: DeserializeOwned + Default>(
        &mut self,
        source: &Source<'t>,
        name: &str,
        problems: &mut Vec<Problem>,
    ) -> Option<T> {
        match self.optional(name) {
            None => Some(T::default()),
            Some(node) => source.typed(name, node, problems),
        }
    }
}
