//! The import readers read back what usersim exports (the quickstart as
//! `openai`, `hf` and `sharegpt`), and NeMo Gym's own shipped rollouts.
//! `nemo_user_sim`'s rollouts are another shape, not read yet.

use crate::common;

use std::path::{Path, PathBuf};

use common::{repo, text, usersim};
use serde_json::Value;
use usersim::import::{detect, Format, ImportedConversation};
use usersim::llm::message::Role;

/// Every line of `file`, read as `format`, with the row it came from.
fn read_all(file: &Path, format: Format) -> Vec<(Value, ImportedConversation)> {
    let jsonl = std::fs::read_to_string(file).unwrap();
    let first = jsonl.lines().next().unwrap();
    assert_eq!(detect(first), Some(format), "{}", file.display());
    jsonl
        .lines()
        .enumerate()
        .map(|(n, line)| {
            let c = format
                .read_line(line, n + 1)
                .unwrap_or_else(|p| panic!("{}: {p}", file.display()));
            (serde_json::from_str(line).unwrap(), c)
        })
        .collect()
}

fn roles(c: &ImportedConversation) -> Vec<&'static str> {
    c.messages.iter().map(|m| m.role.as_str()).collect()
}

/// Every tool result answers a call of the assistant message it follows
/// (the tool results between them included).
fn assert_results_pair_with_calls(c: &ImportedConversation) {
    let mut calls: Vec<&str> = Vec::new();
    for m in &c.messages {
        match m.role {
            Role::Tool => {
                let id = m.tool_call_id.as_deref().unwrap();
                assert!(calls.contains(&id), "{id} answers no call of {calls:?}");
            }
            _ if !m.tool_calls.is_empty() => {
                calls = m.tool_calls.iter().map(|c| c.id.as_str()).collect();
            }
            _ => {}
        }
    }
}

/// The chat messages of an `openai` or `hf` row, checked against what was read.
fn assert_chat_row_read_as_written(row: &Value, c: &ImportedConversation) {
    let written = row["messages"].as_array().unwrap();
    let (system, rest) = match written.split_first() {
        Some((first, rest)) if first["role"] == "system" => (first["content"].as_str(), rest),
        _ => (None, written.as_slice()),
    };
    assert_eq!(c.system_prompt.as_deref(), system);
    let written_roles: Vec<&str> = rest.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles(c), written_roles);
    for (w, m) in rest.iter().zip(&c.messages) {
        let ids: Vec<&str> = w["tool_calls"]
            .as_array()
            .map(|calls| calls.iter().map(|c| c["id"].as_str().unwrap()).collect())
            .unwrap_or_default();
        let read: Vec<&str> = m.tool_calls.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(read, ids);
        assert_eq!(m.tool_call_id.as_deref(), w["tool_call_id"].as_str());
    }
    assert_results_pair_with_calls(c);
}

/// A `sharegpt` row's turns as chat roles: each observation is one tool
/// result per call of the function_call before it.
fn assert_sharegpt_row_read_as_written(row: &Value, c: &ImportedConversation) {
    let mut expected = Vec::new();
    let mut calls = 0;
    for turn in row["conversations"].as_array().unwrap() {
        let value = turn["value"].as_str().unwrap();
        match turn["from"].as_str().unwrap() {
            "human" => expected.push("user"),
            "gpt" => expected.push("assistant"),
            "function_call" => {
                let parsed: Value = serde_json::from_str(value).unwrap();
                calls = parsed.as_array().map_or(1, Vec::len);
                expected.push("assistant");
            }
            "observation" => expected.extend(std::iter::repeat_n("tool", calls)),
            other => panic!("from {other}"),
        }
    }
    assert_eq!(roles(c), expected);
    let system = row["system"].as_str().filter(|s| !s.is_empty());
    assert_eq!(c.system_prompt.as_deref(), system);
    assert_results_pair_with_calls(c);
}

#[test]
fn the_quickstart_exported_as_openai_hf_and_sharegpt_reads_back_as_written() {
    let cwd = tempfile::tempdir().unwrap();
    let quickstart = repo().join("examples/quickstart.toml");
    let run = usersim(cwd.path(), &["run", quickstart.to_str().unwrap()]);
    assert!(run.status.success(), "{}", text(&run.stderr));
    for (format, read_as) in [
        ("openai", Format::Openai),
        ("hf", Format::Hf),
        ("sharegpt", Format::ShareGpt),
    ] {
        let out = format!("out/{format}.jsonl");
        let export = usersim(
            cwd.path(),
            &["export", "--job", "1", "--format", format, "--out", &out],
        );
        assert!(export.status.success(), "{}", text(&export.stderr));
        let rows = read_all(&cwd.path().join(&out), read_as);
        assert!(rows.len() >= 40, "{format}: {} rows", rows.len());
        for (row, c) in &rows {
            match read_as {
                Format::ShareGpt => assert_sharegpt_row_read_as_written(row, c),
                _ => assert_chat_row_read_as_written(row, c),
            }
        }
        let with_calls = rows
            .iter()
            .filter(|(_, c)| c.messages.iter().any(|m| !m.tool_calls.is_empty()))
            .count();
        assert!(with_calls > 0, "{format}: no conversation calls a tool");
        assert!(rows.iter().all(|(_, c)| !c.tools.is_empty()), "{format}");
    }
}

/// The wheel's site-packages, from `USERSIM_NEMO_GYM_DIR` (its
/// `resources_servers`).
fn site_packages(test: &str) -> Option<PathBuf> {
    match std::env::var("USERSIM_NEMO_GYM_DIR") {
        Ok(dir) => Some(Path::new(&dir).join("..")),
        Err(_) => {
            println!("SKIPPED: {test}: USERSIM_NEMO_GYM_DIR is not set");
            None
        }
    }
}

#[test]
fn nemo_gyms_shipped_rollouts_read_with_user_and_assistant_turns_and_paired_calls() {
    let Some(site) = site_packages("nemo_gyms_shipped_rollouts_read") else {
        return;
    };
    for file in [
        "responses_api_agents/tau2/data/example_rollouts.jsonl",
        "resources_servers/conversational_tool_use_simulation/data/example_rollouts.jsonl",
    ] {
        let rows = read_all(&site.join(file), Format::NemoGym);
        assert!(!rows.is_empty(), "{file}");
        for (n, (row, c)) in rows.iter().enumerate() {
            let roles = roles(c);
            assert!(roles.contains(&"user"), "{file}:{}", n + 1);
            assert!(roles.contains(&"assistant"), "{file}:{}", n + 1);
            assert!(c.system_prompt.is_some(), "{file}:{}", n + 1);
            assert!(!c.tools.is_empty(), "{file}:{}", n + 1);
            assert_eq!(c.reward, row["reward"].as_f64(), "{file}:{}", n + 1);
            assert_results_pair_with_calls(c);
            let items = || {
                row["responses_create_params"]["input"]
                    .as_array()
                    .into_iter()
                    .chain(row["response"]["output"].as_array())
                    .flatten()
            };
            let of_type = |kind: &str| items().filter(|item| item["type"] == kind).count();
            let results = roles.iter().filter(|r| **r == "tool").count();
            assert_eq!(results, of_type("function_call_output"), "{file}:{}", n + 1);
            // Reasoning is no message, but it is kept.
            let reasoning = c.metadata.get("reasoning").and_then(Value::as_array);
            assert_eq!(
                reasoning.map_or(0, Vec::len),
                of_type("reasoning"),
                "{file}:{}",
                n + 1
            );
        }
    }
}
