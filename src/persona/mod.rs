//! Personas (who the simulated user is) and scenarios (what they want):
//! types, loading with precise errors, and per-item sampling of persona knobs.

pub mod dataset;
pub mod knobs;
pub mod load;
pub mod nemo_gym;
pub mod probe;
pub mod scenario;
pub mod table;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use scenario::{Scenario, UserScenario};

/// Who the simulated user is. Loaded from `personas/*.toml` or a `.jsonl` of many.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Persona {
    /// Stable identifier used in item keys, e.g. `retired_teacher`.
    pub id: String,
    pub name: String,
    pub background: String,
    #[serde(default)]
    pub traits: Vec<String>,
    pub speaking_style: String,
    #[serde(default = "default_language")]
    pub language: String,
    /// Knob name → (value → weight). One value per knob is drawn per item from
    /// the item seed, e.g. `verbosity = { terse = 0.5, chatty = 0.5 }`.
    #[serde(default)]
    pub knobs: BTreeMap<String, BTreeMap<String, f64>>,
    /// What the persona is, as data: a persona table's columns (and derived
    /// ones) or a hand-written persona's own; `stats --by` reads strata from
    /// them. Never shown to a model unless a template puts them in a field.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub attributes: BTreeMap<String, serde_json::Value>,
}

fn default_language() -> String {
    "English".to_string()
}

/// A persona with its knobs resolved for one item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResolvedPersona {
    #[serde(flatten)]
    pub persona: Persona,
    pub resolved_knobs: BTreeMap<String, String>,
}
