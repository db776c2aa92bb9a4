//! The import readers read back what sparring exports (the quickstart as
//! `openai`, `hf` and `sharegpt`), NeMo Gym's own shipped rollouts (its
//! `tau2` agent's, `conversational_tool_use_simulation`'s and
//! `nemo_user_sim`'s), and tau2-bench result files (tests/data/tau2: a real
//! run, and files written by tau2-bench's own data models).

use crate::common;

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use common::{repo, sparring, text};
use serde_json::Value;
use sparring::import::{detect, detect_document, tau2, Format, ImportedConversation};
use sparring::llm::message::Role;

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
    let quickstart = repo().join("quickstart.toml");
    let run = sparring(cwd.path(), &["run", quickstart.to_str().unwrap()]);
    assert!(run.status.success(), "{}", text(&run.stderr));
    for (format, read_as) in [
        ("openai", Format::Openai),
        ("hf", Format::Hf),
        ("sharegpt", Format::ShareGpt),
    ] {
        let out = format!("out/{format}.jsonl");
        let export = sparring(
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

/// The wheel's site-packages, from `SPARRING_NEMO_GYM_DIR` (its
/// `resources_servers`).
fn site_packages(test: &str) -> Option<PathBuf> {
    match std::env::var("SPARRING_NEMO_GYM_DIR") {
        Ok(dir) => Some(Path::new(&dir).join("..")),
        Err(_) => {
            println!("SKIPPED: {test}: SPARRING_NEMO_GYM_DIR is not set");
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
            // Their users are simulated, each playing a hidden scenario.
            assert!(c.simulated_user, "{file}:{}", n + 1);
            let scenario = c.scenario.as_ref().unwrap();
            match row["task"]["user_scenario"]["instructions"].as_object() {
                Some(tau2) => {
                    assert_eq!(
                        scenario.reason_for_contact,
                        tau2["reason_for_call"].as_str().unwrap()
                    );
                    assert_eq!(c.origin.scenario_id.as_deref(), row["task"]["id"].as_str());
                }
                None => {
                    let customer = &row["customer_scenario"];
                    assert_eq!(
                        scenario.reason_for_contact,
                        customer["reason_for_contact"].as_str().unwrap()
                    );
                    assert_eq!(c.origin.scenario_id.as_deref(), row["id"].as_str());
                }
            }
            assert_eq!(c.origin.trial, row["_ng_rollout_index"].as_i64());
            for m in c.messages.iter().filter(|m| m.role == Role::User) {
                assert!(
                    !m.content.contains("###"),
                    "{file}:{}: {}",
                    n + 1,
                    m.content
                );
            }
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

#[test]
fn nemo_user_sims_shipped_rollouts_read_with_user_and_assistant_turns_persona_and_reward() {
    let Some(site) = site_packages("nemo_user_sims_shipped_rollouts_read") else {
        return;
    };
    let file = "resources_servers/nemo_user_sim/data/example_rollouts.jsonl";
    let rows = read_all(&site.join(file), Format::NemoGym);
    assert!(rows.len() >= 5, "{file}: {} rows", rows.len());
    for (n, (row, c)) in rows.iter().enumerate() {
        let at = format!("{file}:{}", n + 1);
        let written = row["usersim_result"]["conversation_messages"]
            .as_array()
            .unwrap();
        let written_roles: Vec<&str> = written
            .iter()
            .map(|m| m["role"].as_str().unwrap())
            .collect();
        assert_eq!(roles(c), written_roles, "{at}");
        assert!(
            roles(c).contains(&"user") && roles(c).contains(&"assistant"),
            "{at}"
        );
        for (w, m) in written.iter().zip(&c.messages) {
            assert_eq!(
                m.content.as_ref(),
                w["content"].as_str().unwrap_or_default(),
                "{at}"
            );
        }
        assert_results_pair_with_calls(c);
        assert_eq!(c.reward, row["reward"].as_f64(), "{at}");
        assert_eq!(
            c.origin.scenario_id.as_deref(),
            row["_ng_task_id"]["task_id"].as_str(),
            "{at}"
        );
        assert_eq!(
            c.origin.persona_id.as_deref(),
            row["usersim_result"]["persona"]["uuid"].as_str(),
            "{at}"
        );
        // A `user` call wrote the opening, or it came verbatim from the bank.
        let user_call = row["invocations"]
            .as_array()
            .unwrap()
            .iter()
            .any(|i| i["role"] == "user");
        assert_eq!(c.simulated_user, user_call, "{at}");
        let reasoning = written
            .iter()
            .filter(|m| m["reasoning_content"].is_string())
            .count();
        let kept = c.metadata.get("reasoning").and_then(Value::as_array);
        assert_eq!(kept.map_or(0, Vec::len), reasoning, "{at}");
        assert_eq!(c.metadata["verification"], row["verification"], "{at}");
    }
    // The example set has both: simulated openings and one from the bank.
    assert!(rows.iter().any(|(_, c)| c.simulated_user));
    assert!(rows.iter().any(|(_, c)| !c.simulated_user));
    assert!(rows.iter().any(|(_, c)| !c.tools.is_empty()));
}

/// Every conversation of a tau2-bench results file, with the file as JSON.
fn read_tau2(name: &str) -> (Value, Vec<ImportedConversation>) {
    let path = repo().join("tests/data/tau2").join(name);
    let bytes = std::fs::read(&path).unwrap();
    let head = &bytes[..bytes.len().min(64 * 1024)];
    assert_eq!(detect_document(head), Some(Format::Tau2), "{name}");
    let mut read = Vec::new();
    tau2::read_file(std::fs::File::open(&path).unwrap(), |c| {
        read.push(c.unwrap_or_else(|p| panic!("{name}: {p}")));
        ControlFlow::Continue(())
    })
    .unwrap();
    (serde_json::from_slice(&bytes).unwrap(), read)
}

#[test]
fn tau2_bench_result_files_read_with_their_scenarios_rewards_and_paired_calls() {
    for name in [
        "airline_real_run.json",
        "telecom_made_with_tau2.json",
        "mock_made_with_tau2.json",
    ] {
        let (file, read) = read_tau2(name);
        let simulations = file["simulations"].as_array().unwrap();
        assert_eq!(read.len(), simulations.len(), "{name}");
        assert!(!read.is_empty(), "{name}");
        let tasks = file["tasks"].as_array().unwrap();
        for (sim, c) in simulations.iter().zip(&read) {
            let at = format!("{name}: {}", sim["id"]);
            assert!(c.simulated_user, "{at}");
            assert!(
                roles(c).contains(&"user") && roles(c).contains(&"assistant"),
                "{at}"
            );
            assert_results_pair_with_calls(c);
            assert_eq!(c.reward, sim["reward_info"]["reward"].as_f64(), "{at}");
            assert_eq!(
                c.metadata["termination_reason"], sim["termination_reason"],
                "{at}"
            );
            assert_eq!(
                c.origin.scenario_id.as_deref(),
                sim["task_id"].as_str(),
                "{at}"
            );
            assert_eq!(c.origin.trial, sim["trial"].as_i64(), "{at}");
            // Every tool message, a MultiToolMessage's included, is one result.
            let written_results: usize = sim["messages"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|m| m["role"] == "tool")
                .map(|m| m["tool_messages"].as_array().map_or(1, Vec::len))
                .sum();
            assert_eq!(
                roles(c).iter().filter(|r| **r == "tool").count(),
                written_results,
                "{at}"
            );
            // tau2's control tokens are cut from the user's text as sparring
            // cuts its own user's; what the user wrote is kept, turn by turn.
            let written_users: Vec<&str> = sim["messages"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|m| m["role"] == "user" && m["content"].is_string())
                .map(|m| m["content"].as_str().unwrap())
                .collect();
            let outputs = c.metadata["user_outputs"].as_array().unwrap();
            let raw: Vec<&str> = outputs.iter().map(|o| o["raw"].as_str().unwrap()).collect();
            assert_eq!(raw, written_users, "{at}");
            for m in c.messages.iter().filter(|m| m.role == Role::User) {
                assert!(!m.content.contains("###"), "{at}: {}", m.content);
            }
            // The scenario is the task's user_scenario.
            let task = tasks.iter().find(|t| t["id"] == sim["task_id"]).unwrap();
            let instructions = &task["user_scenario"]["instructions"];
            let scenario = c.scenario.as_ref().unwrap();
            match instructions.as_str() {
                Some(text) => assert_eq!(scenario.task_instructions, text, "{at}"),
                None => {
                    assert_eq!(
                        scenario.reason_for_contact,
                        instructions["reason_for_call"].as_str().unwrap(),
                        "{at}"
                    );
                    assert_eq!(
                        scenario.known_info,
                        instructions["known_info"].as_str().unwrap_or_default(),
                        "{at}"
                    );
                    assert_eq!(
                        scenario.task_instructions,
                        instructions["task_instructions"].as_str().unwrap(),
                        "{at}"
                    );
                }
            }
            match task["user_scenario"]["persona"].as_str() {
                Some(persona) => assert_eq!(c.metadata["task"]["persona"], persona, "{at}"),
                None => assert!(c.metadata["task"].get("persona").is_none(), "{at}"),
            }
            let system = c.system_prompt.as_deref().unwrap();
            let policy = sim["policy"]
                .as_str()
                .or(file["info"]["environment_info"]["policy"].as_str());
            let first = &sim["messages"][0];
            match first["role"].as_str() {
                Some("system") => assert_eq!(Some(system), first["content"].as_str(), "{at}"),
                _ => assert_eq!(Some(system), policy, "{at}"),
            }
        }
    }
    // The real run: gpt-4o played the user, and its turns end with tau2's tokens.
    let (file, read) = read_tau2("airline_real_run.json");
    assert_eq!(file["info"]["user_info"]["llm"], "gpt-4o");
    assert!(
        read.iter().any(|c| c.reward == Some(1.0)) && read.iter().any(|c| c.reward == Some(0.0))
    );
    // Dual control: the telecom user calls the tools of their own phone, and
    // a failed call is named.
    let (_, read) = read_tau2("telecom_made_with_tau2.json");
    let user_calls = read[0]
        .messages
        .iter()
        .filter(|m| m.role == Role::User && !m.tool_calls.is_empty())
        .count();
    assert_eq!(user_calls, 3);
    assert_eq!(
        read[1].metadata["tool_errors"],
        serde_json::json!(["call_2"])
    );
    assert_eq!(read[0].tools.len(), 2);
}
