//! Which of OpenAI's APIs an endpoint speaks: a type the endpoint tables as
//! written, as stored and as validated all read.

/// Which of OpenAI's APIs an endpoint's calls go through.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Api {
    /// `POST {base_url}/chat/completions`.
    #[default]
    Chat,
    /// `POST {base_url}/responses`, the Responses API (`llm::responses`).
    Responses,
}

impl Api {
    pub fn is_chat(&self) -> bool {
        *self == Api::Chat
    }
}
