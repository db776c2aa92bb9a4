//! The `http` kind: an HTTP chat endpoint. (Being built.)

use std::sync::Arc;

use async_trait::async_trait;

use crate::config::policy::HttpConfig;
use crate::llm::{ChatModel, LlmError};
use crate::sim::episode::EpisodeError;
use crate::sim::{Policy, PolicyTurn, TurnEnd};

pub struct HttpAgent {
    #[allow(dead_code)]
    config: HttpConfig,
    model: Arc<dyn ChatModel>,
    #[allow(dead_code)]
    max_steps: u32,
    #[allow(dead_code)]
    replay: bool,
}

impl HttpAgent {
    pub fn new(
        config: HttpConfig,
        model: Arc<dyn ChatModel>,
        max_steps: u32,
        replay: bool,
    ) -> Self {
        HttpAgent {
            config,
            model,
            max_steps,
            replay,
        }
    }
}

#[async_trait]
impl Policy for HttpAgent {
    fn name(&self) -> &str {
        self.model.model()
    }

    async fn turn(&self, _turn: PolicyTurn<'_>) -> Result<TurnEnd, EpisodeError> {
        Err(super::failed(LlmError::InvalidRequest(
            "kind = \"http\" is not built yet".into(),
        )))
    }
}
