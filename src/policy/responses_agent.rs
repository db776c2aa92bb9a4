//! The `responses_agent` kind: an Responses-API agent. (Being built.)

use std::sync::Arc;

use async_trait::async_trait;

use crate::config::policy::ResponsesAgentConfig;
use crate::env::ToolSpec;
use crate::llm::{ChatModel, LlmError};
use crate::sim::episode::EpisodeError;
use crate::sim::{Policy, PolicyTurn, TurnEnd};

pub struct ResponsesAgent {
    #[allow(dead_code)]
    config: ResponsesAgentConfig,
    model: Arc<dyn ChatModel>,
    #[allow(dead_code)]
    tools: Arc<[ToolSpec]>,
    #[allow(dead_code)]
    max_steps: u32,
    #[allow(dead_code)]
    replay: bool,
}

impl ResponsesAgent {
    pub fn new(
        config: ResponsesAgentConfig,
        model: Arc<dyn ChatModel>,
        tools: Arc<[ToolSpec]>,
        max_steps: u32,
        replay: bool,
    ) -> Self {
        ResponsesAgent {
            config,
            model,
            tools,
            max_steps,
            replay,
        }
    }
}

#[async_trait]
impl Policy for ResponsesAgent {
    fn name(&self) -> &str {
        self.model.model()
    }

    async fn turn(&self, _turn: PolicyTurn<'_>) -> Result<TurnEnd, EpisodeError> {
        Err(super::failed(LlmError::InvalidRequest(
            "kind = \"responses_agent\" is not built yet".into(),
        )))
    }
}
