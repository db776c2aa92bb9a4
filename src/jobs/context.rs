//! What the edge (the CLI, the service) builds once and passes to every run:
//! the store, opened once, and the way to start the mock model server.

use std::sync::Arc;

use crate::store::Store;

use super::models::MockStarter;

#[derive(Clone)]
pub struct Context {
    pub store: Arc<dyn Store>,
    /// Starts the mock for `mock = true` endpoints; without it they are refused.
    pub mock: Option<Arc<dyn MockStarter>>,
}

impl Context {
    pub fn new(store: Arc<dyn Store>, mock: Option<Arc<dyn MockStarter>>) -> Context {
        Context { store, mock }
    }

    pub fn mock(&self) -> Option<&dyn MockStarter> {
        self.mock.as_deref()
    }
}
