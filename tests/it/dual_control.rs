//! Dual control end to end (`builtin:phone`): the simulated user fixes its
//! own phone with its user tools when the agent asks; success needs those
//! calls; they are stored with the user's messages, never reach the policy
//! (checked on the wire, at the mock model server), and stay out of the
//! policy's training export unless asked for.

use std::sync::Arc;

use crate::common::{self, repo};
use sparring::config::MockConfig;
use sparring::jobs::{self, RunOptions};
use sparring::mock_llm::MockServer;
use sparring::persona::Scenario;
use sparring::store::{self, Store, StoredConversation};

const USER_TOOLS: &[&str] = &[
    "check_status_bar",
    "toggle_airplane_mode",
    "toggle_mobile_data",
    "toggle_data_roaming",
    "run_speed_test",
];

fn scenarios() -> Vec<Scenario> {
    std::fs::read_to_string(repo().join("data/phone/scenarios.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn job_toml(base_url: &str, user_model: &str, db: &std::path::Path) -> String {
    let r = repo();
    format!(
        r#"name = "phone-{user_model}"
seed = 7
database = "sqlite://{db}"
concurrency = 4
[endpoints.policy]
base_url = "{base_url}"
model = "mock-policy+perfect"
[endpoints.user]
base_url = "{base_url}"
model = "{user_model}"
[roles]
policy = "policy"
user = "user"
[user_simulator]
template = "{r}/prompts/user_simulator.tera"
[policy]
template = "{r}/prompts/policies/default.tera"
[environment]
name = "builtin:phone"
[dataset]
scenarios = "{r}/data/phone/scenarios.jsonl"
personas = "{r}/personas"
personas_per_scenario = 1
"#,
        db = db.display(),
        r = r.display(),
    )
}

async fn run(user_model: &str) -> (tempfile::TempDir, Vec<StoredConversation>, MockServer) {
    let dir = tempfile::tempdir().unwrap();
    let mock = MockServer::start(
        ([127, 0, 0, 1], 0).into(),
        scenarios(),
        MockConfig::default(),
    )
    .await
    .unwrap();
    let db = dir.path().join("phone.db");
    let path = dir.path().join("job.toml");
    std::fs::write(&path, job_toml(&mock.base_url(), user_model, &db)).unwrap();
    let job = sparring::config::load(&path).unwrap_or_else(|p| panic!("{p:?}"));
    let store: Arc<dyn Store> = store::open(&format!("sqlite://{}", db.display()))
        .await
        .unwrap();
    let ctx = jobs::Context::new(store.clone(), None);
    let report = jobs::run(&ctx, &job, &RunOptions::default()).await.unwrap();
    assert_eq!(report.counts.failed, 0, "{report:?}");
    let all = store
        .conversations_page(report.job.id, 0, 10_000)
        .await
        .unwrap();
    (dir, all, mock)
}

fn user_calls(c: &StoredConversation) -> Vec<String> {
    c.messages
        .iter()
        .filter(|m| m.author == "user" && m.role == "user")
        .filter_map(|m| m.tool_calls.as_ref())
        .flat_map(|calls| calls.as_array().unwrap().clone())
        .map(|call| call["name"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn the_users_own_calls_fix_the_phone_earn_the_reward_and_the_policy_never_sees_them() {
    let (_dir, all, mock) = run("mock-user").await;
    assert_eq!(all.len(), 5);
    for c in &all {
        let id = &c.conversation.scenario_id;
        assert_eq!(c.conversation.termination, "user_stop", "{id}");
        assert_eq!(
            c.conversation.reward,
            Some(1.0),
            "{id}: {}",
            c.conversation.reward_breakdown
        );
        let gold: Vec<String> = scenarios()
            .into_iter()
            .find(|s| &s.id == id)
            .unwrap()
            .evaluation
            .actions
            .iter()
            .filter(|a| a.caller == sparring::env::Caller::User)
            .map(|a| a.name.clone())
            .collect();
        assert_eq!(user_calls(c), gold, "{id}: the user made its gold calls");
        // Each user call's result is stored as the environment's answer to the user.
        let results = c
            .messages
            .iter()
            .filter(|m| m.author == "user_tool")
            .count();
        assert_eq!(results, gold.len(), "{id}");
    }
    let seen = mock.stats().tool_calls_seen;
    let by_user = &seen["mock-user"];
    assert!(by_user.contains("toggle_airplane_mode"), "{seen:?}");
    let by_policy = seen.get("mock-policy+perfect").cloned().unwrap_or_default();
    assert!(by_policy.contains("enable_roaming"), "{seen:?}");
    for tool in USER_TOOLS {
        assert!(
            !by_policy.contains(*tool),
            "the policy was shown the user's {tool}: {seen:?}"
        );
    }
}

#[tokio::test]
async fn a_user_who_never_acts_on_their_phone_leaves_the_reward_at_zero() {
    let (_dir, all, _mock) = run("mock-user+no-tools").await;
    for c in &all {
        let id = &c.conversation.scenario_id;
        assert!(user_calls(c).is_empty(), "{id}");
        let needs_user = id != "phone-004-out-of-data";
        let want = if needs_user { 0.0 } else { 1.0 };
        assert_eq!(
            c.conversation.reward,
            Some(want),
            "{id}: {}",
            c.conversation.reward_breakdown
        );
    }
}

#[tokio::test]
async fn exports_leave_the_users_tool_calls_out_and_only_hf_keeps_them_when_asked() {
    let (dir, all, _mock) = run("mock-user").await;
    let db = dir.path().join("phone.db");
    let job = all[0].conversation.job_id.to_string();
    let database = format!("sqlite://{}", db.display());
    let run_export = |extra: &[&str], out: &str| {
        let out = dir.path().join(out);
        let mut args = vec!["export", "--job", &job, "--out", out.to_str().unwrap()];
        args.extend(["--database", &database]);
        args.extend(extra);
        (common::sparring(dir.path(), &args), out)
    };
    let export = |extra: &[&str], out: &str| {
        let (output, out) = run_export(extra, out);
        assert!(output.status.success(), "{}", common::text(&output.stderr));
        std::fs::read_to_string(out).unwrap()
    };
    // OpenAI takes tool calls on assistant messages only: refused, pointing to hf.
    for format in ["openai", "sharegpt"] {
        let (refused, out) = run_export(&["--format", format, "--user-tools"], "refused.jsonl");
        let stderr = common::text(&refused.stderr);
        assert_eq!(refused.status.code(), Some(2), "{format}: {stderr}");
        assert!(stderr.contains("--format hf"), "{stderr}");
        assert!(!out.exists());
    }
    let openai = export(&["--format", "openai"], "openai.jsonl");
    let plain = export(&["--format", "hf"], "plain.jsonl");
    let kept = export(&["--format", "hf", "--user-tools"], "kept.jsonl");
    // The datasets features of the kept export have the user_tools column.
    let features = std::fs::read_to_string(dir.path().join("kept.jsonl.features.json")).unwrap();
    let features: serde_json::Value = serde_json::from_str(&features).unwrap();
    assert!(features["user_tools"].is_object(), "{features}");
    let lines = |text: &str| -> Vec<serde_json::Value> {
        text.lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    // (calls by the user, tool results, calls by the agent) in one export.
    let count = |line: &serde_json::Value| {
        let messages = line["messages"].as_array().unwrap();
        let calls_by = |role: &str| -> usize {
            messages
                .iter()
                .filter(|m| m["role"] == role)
                .filter_map(|m| m["tool_calls"].as_array())
                .map(Vec::len)
                .sum()
        };
        let results = messages.iter().filter(|m| m["role"] == "tool").count();
        (calls_by("user"), results, calls_by("assistant"))
    };
    let (plain, kept) = (lines(&plain), lines(&kept));
    assert_eq!(plain.len(), 5);
    for o in lines(&openai) {
        assert_eq!(
            count(&o).0,
            0,
            "the openai export has no user tool call: {o}"
        );
        assert!(o.get("user_tools").is_none());
    }
    let mut user_calls_kept = 0;
    for (p, k) in plain.iter().zip(&kept) {
        let (user, results, agent) = count(p);
        assert_eq!(user, 0, "the policy's export has no user tool call: {p}");
        assert_eq!(results, agent, "every tool result left is the agent's: {p}");
        assert!(p.get("user_tools").is_none());
        let (user, results, agent) = count(k);
        assert_eq!(results, agent + user, "{k}");
        user_calls_kept += user;
        assert_eq!(k["user_tools"].as_array().unwrap().len(), USER_TOOLS.len());
    }
    // Scenarios 1, 2, 3 and 5 need 1, 1, 1 and 2 calls of the user.
    assert_eq!(user_calls_kept, 5);
}
