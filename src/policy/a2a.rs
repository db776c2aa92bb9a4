//! The `a2a` kind: an Agent2Agent server. (Being built.)

use std::sync::Arc;

use async_trait::async_trait;

use crate::config::policy::A2aConfig;
use crate::llm::{ChatModel, LlmError};
use crate::sim::episode::EpisodeError;
use crate::sim::{Policy, PolicyTurn, TurnEnd};

pub struct A2aAgent {
    #[allow(dead_code)]
    config: A2aConfig,
    model: Arc<dyn ChatModel>,
    #[allow(dead_code)]
    max_steps: u32,
    #[allow(dead_code)]
    replay: bool,
}

impl A2aAgent {
    pub fn new(config: A2aConfig, model: Arc<dyn ChatModel>, max_steps: u32, replay: bool) -> Self {
        A2aAgent {
            config,
            model,
            max_steps,
            replay,
        }
    }
}

#[async_trait]
impl Policy for A2aAgent {
    fn name(&self) -> &str {
        self.model.model()
    }

    async fn turn(&self, _turn: PolicyTurn<'_>) -> Result<TurnEnd, EpisodeError> {
        Err(super::failed(LlmError::InvalidRequest(
            "kind = \"a2a\" is not built yet".into(),
        )))
    }
}
