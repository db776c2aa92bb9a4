//! The problems of one judge table, each located at `judges[INDEX].FIELD`.

use std::path::Path;

use crate::diagnostics::problem::Problem;

/// Problems of one judge table, located at `judges[INDEX].FIELD`.
pub(super) struct FieldProblems<'a> {
    pub(super) path: &'a Path,
    pub(super) index: usize,
    pub(super) list: Vec<Problem>,
}

impl<'a> FieldProblems<'a> {
    pub(super) fn new(path: &'a Path, index: usize) -> Self {
        FieldProblems {
            path,
            index,
            list: Vec::new(),
        }
    }

    pub(super) fn field(&self, f: &str) -> String {
        format!("judges[{}].{f}", self.index)
    }

    pub(super) fn at(&mut self, f: &str, message: String) {
        let field = self.field(f);
        self.list
            .push(Problem::at_field(self.path, &field, message));
    }
}
