//! `--stratify-by persona|scenario|metadata.KEY`: which stratum a stored
//! conversation is in, for the caps per stratum and the manifest's counts.
//! `metadata.KEY` reads the conversation's stored metadata (`KEY` may be a
//! dotted path, e.g. `metadata.persona_knobs.verbosity`); a conversation
//! without it, or without a persona (an imported one, most often), is in
//! the stratum `(none)`, which no cap holds.

use serde_json::Value;

use crate::store::ConversationRow;

/// The stratum of a conversation without the key asked for.
pub const NONE: &str = "(none)";
/// The one stratum when nothing stratifies.
pub const ALL: &str = "all";

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StratifyBy {
    Persona,
    Scenario,
    /// The path of keys under the conversation's metadata.
    Metadata(Vec<String>),
}

impl StratifyBy {
    pub fn parse(text: &str) -> Result<StratifyBy, String> {
        let expected = "use persona, scenario or metadata.KEY (a key of the conversations' \
                        stored metadata, e.g. metadata.environment)";
        match text.trim() {
            "persona" => Ok(StratifyBy::Persona),
            "scenario" => Ok(StratifyBy::Scenario),
            other => match other.strip_prefix("metadata.") {
                Some(path) if !path.is_empty() && path.split('.').all(|k| !k.is_empty()) => Ok(
                    StratifyBy::Metadata(path.split('.').map(str::to_string).collect()),
                ),
                _ => Err(format!("'{text}' is not a stratum; {expected}")),
            },
        }
    }

    /// As written: `persona`, `scenario`, `metadata.KEY`.
    pub fn name(&self) -> String {
        match self {
            StratifyBy::Persona => "persona".into(),
            StratifyBy::Scenario => "scenario".into(),
            StratifyBy::Metadata(path) => format!("metadata.{}", path.join(".")),
        }
    }

    /// The stratum of `c`.
    pub fn of(&self, c: &ConversationRow) -> String {
        match self {
            StratifyBy::Persona if c.persona_id.trim().is_empty() => NONE.to_string(),
            StratifyBy::Persona => c.persona_id.clone(),
            StratifyBy::Scenario if c.scenario_id.trim().is_empty() => NONE.to_string(),
            StratifyBy::Scenario => c.scenario_id.clone(),
            StratifyBy::Metadata(path) => {
                let found = path.iter().try_fold(&c.metadata, |v, k| v.get(k));
                match found {
                    None | Some(Value::Null) => NONE.to_string(),
                    Some(Value::String(s)) => s.clone(),
                    Some(other) => other.to_string(),
                }
            }
        }
    }
}

/// The stratum of `c` under `by` (all conversations in [`ALL`] without one).
pub fn of(by: Option<&StratifyBy>, c: &ConversationRow) -> String {
    by.map_or_else(|| ALL.to_string(), |by| by.of(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strata_read_as_written_and_name_themselves_back() {
        for text in [
            "persona",
            "scenario",
            "metadata.environment",
            "metadata.a.b",
        ] {
            assert_eq!(StratifyBy::parse(text).unwrap().name(), text);
        }
        for bad in ["", "model", "metadata.", "metadata..x", "metadata"] {
            let e = StratifyBy::parse(bad).unwrap_err();
            assert!(
                e.contains("persona, scenario or metadata.KEY"),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn a_metadata_stratum_reads_nested_keys_and_says_none_when_missing() {
        let mut c = crate::export::curate::test_rows::conversation(1, "s", "p", Some(1.0), &[])
            .conversation;
        c.metadata = serde_json::json!({"environment": "builtin:retail",
            "persona_knobs": {"verbosity": "high", "n": 3}});
        let by = |t: &str| StratifyBy::parse(t).unwrap();
        assert_eq!(by("metadata.environment").of(&c), "builtin:retail");
        assert_eq!(by("metadata.persona_knobs.verbosity").of(&c), "high");
        assert_eq!(by("metadata.persona_knobs.n").of(&c), "3");
        assert_eq!(by("metadata.nothing").of(&c), NONE);
        assert_eq!(by("persona").of(&c), "p");
        c.metadata = Value::Null;
        assert_eq!(by("metadata.environment").of(&c), NONE);
        assert_eq!(of(None, &c), ALL);
    }
}
