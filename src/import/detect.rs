//! `--format auto`: which format a file is in, from its first bytes (a
//! tau2-bench results document, whose first line may be only `{`, or a JSON
//! list of tau2 simulations or tau-bench runs) or else its first line.

use std::fmt;

use serde::de::{self, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::Format;

/// The format of a file that is one JSON document, from `head`, its first
/// bytes (the whole file or a prefix of it, say 64 KiB), pretty-printed or
/// on one line:
/// - [`Format::Tau2`] when it opens a JSON object whose first top-level
///   key that tells formats apart is `info`, `tasks` or `simulations`, as a
///   tau2-bench results file does, or a list whose first element has
///   `task_id` and `messages` (a bare list of tau2 simulations);
/// - [`Format::TauBench`] when it opens a list whose first element has
///   `traj` (tau-bench's trajectories).
///
/// `None` when an object's first telling key is a JSON-lines format's
/// (`messages`, `conversations`, `responses_create_params`,
/// `usersim_result`) or the head says nothing: then [`detect`] the first
/// line.
pub fn detect_document(head: &[u8]) -> Option<Format> {
    let mut found = None;
    let mut de = serde_json::Deserializer::from_slice(head);
    // The visitors stop at the first key that tells, with an error that only
    // means "stop"; a head cut inside a value fails the same way.
    let _ = de::Deserializer::deserialize_any(&mut de, Keys(&mut found));
    found
}

/// The first element of a list: the keys that tell a tau2 simulation from a
/// tau-bench run.
struct ElementKeys<'a>(&'a mut Option<Format>);

impl<'de> Visitor<'de> for ElementKeys<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let (mut task_id, mut messages) = (false, false);
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "traj" => {
                    *self.0 = Some(Format::TauBench);
                    return Err(de::Error::custom("told"));
                }
                "task_id" => task_id = true,
                "messages" => messages = true,
                _ => {}
            }
            if task_id && messages {
                *self.0 = Some(Format::Tau2);
                return Err(de::Error::custom("told"));
            }
            map.next_value::<IgnoredAny>()?;
        }
        Ok(())
    }
}

impl<'de> de::DeserializeSeed<'de> for ElementKeys<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

struct Keys<'a>(&'a mut Option<Format>);

impl<'de> Visitor<'de> for Keys<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object or list")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        seq.next_element_seed(ElementKeys(self.0))?;
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "info" | "tasks" | "simulations" => {
                    *self.0 = Some(Format::Tau2);
                    return Err(de::Error::custom("told"));
                }
                "messages" | "conversations" | "responses_create_params" | "usersim_result" => {
                    return Err(de::Error::custom("told"));
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

/// The format `first_line` is written in: a NeMo Gym rollout has
/// `responses_create_params` (or, `nemo_user_sim`'s, `usersim_result`),
/// ShareGPT `conversations`; of the rows with
/// `messages`, `hf`'s always have `metadata` (or object arguments) and
/// `openai`'s never. `None` when it is none of them.
pub fn detect(first_line: &str) -> Option<Format> {
    let row: Value = serde_json::from_str(first_line).ok()?;
    let row = row.as_object()?;
    if row.contains_key("responses_create_params") || row.contains_key("usersim_result") {
        return Some(Format::NemoGym);
    }
    if row.get("conversations").is_some_and(Value::is_array) {
        return Some(Format::ShareGpt);
    }
    let messages = row.get("messages")?.as_array()?;
    let object_arguments = messages
        .iter()
        .filter_map(|m| m.get("tool_calls")?.as_array())
        .flatten()
        .any(|c| c["function"]["arguments"].is_object());
    if row.contains_key("metadata") || object_arguments {
        Some(Format::Hf)
    } else {
        Some(Format::Openai)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_format_is_told_by_its_first_line() {
        let user = r#"{"role": "user", "content": "x"}"#;
        assert_eq!(
            detect(&format!(r#"{{"messages": [{user}]}}"#)),
            Some(Format::Openai)
        );
        assert_eq!(
            detect(&format!(
                r#"{{"messages": [{user}], "tools": [], "metadata": {{}}}}"#
            )),
            Some(Format::Hf)
        );
        let object_args = r#"{"messages": [{"role": "assistant", "tool_calls": [
            {"id": "a", "function": {"name": "f", "arguments": {}}}]}]}"#;
        assert_eq!(detect(object_args), Some(Format::Hf));
        assert_eq!(
            detect(r#"{"conversations": [], "system": ""}"#),
            Some(Format::ShareGpt)
        );
        assert_eq!(
            detect(r#"{"responses_create_params": {"input": []}}"#),
            Some(Format::NemoGym)
        );
        assert_eq!(
            detect(r#"{"reward": 1.0, "usersim_result": {"conversation_messages": []}}"#),
            Some(Format::NemoGym)
        );
        for other in ["", "{", "[1]", r#"{"text": "x"}"#, r#"{"messages": 1}"#] {
            assert_eq!(detect(other), None, "{other}");
        }
    }

    #[test]
    fn every_formats_name_parses_back_and_only_tau2_is_a_document() {
        for f in Format::ALL {
            assert_eq!(Format::parse(f.as_str()), Some(f));
            assert_eq!(
                f.is_document(),
                matches!(f, Format::Tau2 | Format::TauBench)
            );
        }
        assert_eq!(Format::parse("auto"), None);
        let why = Format::Tau2.read_line("{}", 3).unwrap_err();
        assert!(why
            .to_string()
            .starts_with("line 3: a tau2-bench results file is one JSON document"));
    }

    #[test]
    fn a_list_of_tau2_simulations_or_tau_bench_runs_is_told_by_its_first_element() {
        let bare = b"[\n  {\n    \"id\": \"a\",\n    \"task_id\": \"3\",\n    \"messages\": [{\"role\": \"as";
        assert_eq!(detect_document(bare), Some(Format::Tau2));
        let v1 = br#"[{"task_id": 0, "reward": 0.0, "info": {"task": {}}, "traj": [{"ro"#;
        assert_eq!(detect_document(v1), Some(Format::TauBench));
    }

    #[test]
    fn a_tau2_results_document_is_told_by_its_first_keys_pretty_or_not_whole_or_cut() {
        let pretty = b"{\n  \"timestamp\": \"2025-06-05\",\n  \"info\": {\n    \"git_commit\": \"c";
        assert_eq!(detect_document(pretty), Some(Format::Tau2));
        let compact = br#"{"timestamp":"t","info":{},"tasks":[],"simulations":[]}"#;
        assert_eq!(detect_document(compact), Some(Format::Tau2));
        assert_eq!(
            detect_document(br#"  {"simulations": ["#),
            Some(Format::Tau2)
        );
        for other in [
            &br#"{"messages": [], "info": {}}"#[..],
            br#"{"responses_create_params": {}, "tasks": []}"#,
            br#"{"timestamp": "cut her"#,
            b"[{\"info\": 1}]",
            b"[{\"messages\": []}]",
            b"[]",
            b"",
            b"\xff\xfe",
        ] {
            assert_eq!(
                detect_document(other),
                None,
                "{}",
                String::from_utf8_lossy(other)
            );
        }
    }
}
