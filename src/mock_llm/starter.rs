//! The in-process mock as the edge starts it for a job's `mock = true`
//! endpoints: the CLI and the service pass [`InProcessMock`] down to the runner.

use async_trait::async_trait;

use crate::config::MockConfig;
use crate::jobs::{MockStarter, RunningMock};
use crate::persona::Scenario;

use super::MockServer;

/// Starts a [`MockServer`] on a free loopback port.
#[derive(Debug, Clone, Copy, Default)]
pub struct InProcessMock;

#[async_trait]
impl MockStarter for InProcessMock {
    async fn start(
        &self,
        scenarios: &[Scenario],
        config: &MockConfig,
    ) -> std::io::Result<Box<dyn RunningMock>> {
        let server = MockServer::start(
            ([127, 0, 0, 1], 0).into(),
            scenarios.to_vec(),
            config.clone(),
        )
        .await?;
        tracing::info!(url = %server.base_url(), "started the in-process mock model server (a test double)");
        Ok(Box::new(server))
    }
}

impl RunningMock for MockServer {
    fn base_url(&self) -> String {
        MockServer::base_url(self)
    }
}
