//! `[environment] on_missing_tool`: a type the environment table as stored
//! and as validated both read.

/// What a call to a tool the resources server does not serve (HTTP 404)
/// becomes (`[environment] on_missing_tool`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MissingTool {
    /// The server's reply goes back to the policy as the tool's (error)
    /// output and the conversation goes on to `/verify`, as NeMo Gym's own
    /// agent does (`xlam_fc` serves none of its tools: its verify compares
    /// only the calls).
    #[default]
    Output,
    /// The conversation fails as `env_error` and nothing is stored.
    EnvError,
}

impl MissingTool {
    pub fn is_default(&self) -> bool {
        *self == MissingTool::default()
    }
}
