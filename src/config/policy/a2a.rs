//! `[policy.a2a]`: an Agent2Agent server, over JSON-RPC: A2A 0.3
//! (`message/send`, `message/stream`) or A2A 1.0 (`SendMessage`,
//! `SendStreamingMessage`), as the agent's card says.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::check_path;
use crate::diagnostics::document::child;
use crate::diagnostics::problem::Problem;

/// Where an agent's card is, below its base_url, unless `card_path` says.
pub const CARD_PATH: &str = "/.well-known/agent-card.json";

/// The A2A versions sparring speaks over JSON-RPC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum A2aVersion {
    /// A2A 0.3 (0.2.x reads the same): `message/send`, `kind`-tagged parts,
    /// states such as `input-required`.
    #[serde(rename = "0.3")]
    V03,
    /// A2A 1.0: `SendMessage` with the `A2A-Version: 1.0` header, parts
    /// without `kind`, `ROLE_*` and `TASK_STATE_*` names.
    #[serde(rename = "1.0")]
    V10,
}

impl A2aVersion {
    pub fn as_str(self) -> &'static str {
        match self {
            A2aVersion::V03 => "0.3",
            A2aVersion::V10 => "1.0",
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct A2aKeys {
    /// Where JSON-RPC requests are posted, below the endpoint's base_url
    /// (default: the base_url itself).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Whether the agent card (`/.well-known/agent-card.json`) is read and
    /// checked once per job before the first conversation (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_card: Option<bool>,
    /// Where the card is, below the endpoint's base_url (default
    /// `/.well-known/agent-card.json`; a query may follow, as LangGraph's
    /// `?assistant_id=...`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub card_path: Option<String>,
    /// The A2A version to speak: `"0.3"` or `"1.0"`. Default: the newest
    /// the card names for JSON-RPC (0.3 without a card).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<A2aVersion>,
    /// Whether each turn is streamed (`message/stream` or
    /// `SendStreamingMessage`, answered as Server-Sent Events) rather than
    /// sent (`message/send`, `SendMessage`); default false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<bool>,
}

impl A2aKeys {
    /// Where JSON-RPC requests go (empty: the base_url itself).
    pub fn path(&self) -> &str {
        self.path.as_deref().unwrap_or_default()
    }

    pub fn read_card(&self) -> bool {
        self.read_card.unwrap_or(true)
    }

    pub fn card_path(&self) -> &str {
        self.card_path.as_deref().unwrap_or(CARD_PATH)
    }

    pub fn stream(&self) -> bool {
        self.stream.unwrap_or(false)
    }

    /// The keys, when both paths are ones below the base_url.
    pub fn check(&self, file: &Path, field: &str, problems: &mut Vec<Problem>) -> Option<Self> {
        let before = problems.len();
        check_path(file, &child(field, "path"), self.path(), problems);
        if self.card_path().is_empty() {
            problems.push(Problem::at_field(
                file,
                &child(field, "card_path"),
                format!("is empty; the card is at a path below the base_url, e.g. \"{CARD_PATH}\""),
            ));
        }
        check_path(file, &child(field, "card_path"), self.card_path(), problems);
        (problems.len() == before).then(|| self.clone())
    }
}
