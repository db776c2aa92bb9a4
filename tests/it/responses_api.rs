//! `api = "responses"`: the Responses API as a policy endpoint, over real
//! HTTP to the mock model server, and through NeMo Gym's own `vllm_model`
//! server (from the wheel) with the mock behind it; token capture where the
//! server returns token ids.

use std::sync::Arc;

use axum::response::IntoResponse;
use sparring::config::{Api, EndpointConfig, MockConfig};
use sparring::jobs::{self, RunOptions};
use sparring::llm::message::Message;
use sparring::llm::{ChatModel, ChatRequest, Endpoint};
use sparring::mock_llm::{tokens, InProcessMock};
use sparring::store::{self, StoredConversation};

use crate::common::{self, endpoint_config, first_scenarios, hello, job_toml, JobSpec};

/// The variable naming NeMo Gym's `vllm_model` server, started by `.ci/run`
/// over a sparring mock that plays `data/retail/scenarios.jsonl`.
const VLLM_MODEL_VAR: &str = "SPARRING_NEMO_GYM_VLLM_MODEL_URL";

fn responses_endpoint(base_url: &str, model: &str) -> EndpointConfig {
    let mut endpoint = endpoint_config("policy", base_url, model);
    endpoint.settings.api = Api::Responses;
    endpoint.settings.max_tokens = 256;
    endpoint
}

/// A job of `scenarios` whose policy endpoint is `policy` (TOML keys), the
/// user the in-process mock; run to its end.
async fn run_job(
    dir: &std::path::Path,
    scenarios: std::path::PathBuf,
    policy: &str,
) -> (jobs::RunReport, Vec<StoredConversation>) {
    let spec = JobSpec {
        scenarios,
        max_retries: 0,
        ..JobSpec::default()
    };
    let db = dir.join("test.db");
    let mut toml = job_toml(&spec, &db);
    let start = toml.find("[endpoints.policy]").unwrap();
    let end = toml.find("[endpoints.user]").unwrap();
    toml.replace_range(start..end, &format!("[endpoints.policy]\n{policy}\n\n"));
    let path = dir.join("job.toml");
    std::fs::write(&path, toml).unwrap();
    let job = sparring::config::load(&path).unwrap_or_else(|p| panic!("{p:?}"));
    let store = store::open(&format!("sqlite://{}", db.display()))
        .await
        .unwrap();
    let ctx = jobs::Context::new(store.clone(), Some(Arc::new(InProcessMock)));
    let report = jobs::run(&ctx, &job, &RunOptions::default()).await.unwrap();
    let conversations = store
        .conversations_page(report.job.id, 0, 10_000)
        .await
        .unwrap();
    (report, conversations)
}

/// Every item done, every conversation scored, the policy's tool calls stored.
fn assert_tool_calls_and_rewards(report: &jobs::RunReport, conversations: &[StoredConversation]) {
    assert_eq!(report.counts.failed, 0, "{:?}", report.counts);
    assert_eq!(report.counts.done, conversations.len() as i64);
    assert!(conversations
        .iter()
        .all(|c| c.conversation.reward.is_some()));
    let calls: usize = conversations
        .iter()
        .flat_map(|c| &c.messages)
        .filter(|m| m.author == "policy")
        .filter_map(|m| m.tool_calls.as_ref()?.as_array().map(Vec::len))
        .sum();
    assert!(calls > 0, "no tool call was stored");
    let results = conversations
        .iter()
        .flat_map(|c| &c.messages)
        .filter(|m| m.role == "tool" && m.tool_call_id.is_some())
        .count();
    assert_eq!(results, calls, "every call answered by its call_id");
    assert!(
        conversations
            .iter()
            .any(|c| c.conversation.reward.is_some_and(|r| r > 0.0)),
        "some conversation solved its scenario"
    );
}

#[tokio::test]
async fn a_job_whose_policy_speaks_the_responses_api_stores_its_tool_calls_and_rewards() {
    let dir = tempfile::tempdir().unwrap();
    // `+reasoning`: every reply brings a reasoning item, and the mock refuses
    // (400, not retried) a turn whose reasoning item was not sent back.
    let (report, conversations) = run_job(
        dir.path(),
        first_scenarios(dir.path(), 4),
        "mock = true\nmodel = \"mock-policy+reasoning\"\napi = \"responses\"\nmax_retries = 0",
    )
    .await;
    assert_eq!(conversations.len(), 4, "{:?}", report.counts);
    assert_tool_calls_and_rewards(&report, &conversations);
    let reasoning_shown = conversations
        .iter()
        .flat_map(|c| &c.messages)
        .any(|m| m.content.contains("The mock thinks"));
    assert!(
        !reasoning_shown,
        "reasoning is never text of the conversation"
    );
}

#[tokio::test]
async fn the_responses_api_gives_the_token_fields_a_server_returns_and_none_otherwise() {
    let server = common::mock(MockConfig::default()).await;
    let url = server.base_url();
    let with = Endpoint::new(&responses_endpoint(&url, "mock-policy+tokens"), &url).unwrap();
    let response = with.complete(hello()).await.unwrap();
    let tokens = response.tokens.expect("the mock's +tokens returns them");
    let generated = tokens::generated_text(&response.message);
    assert_eq!(tokens.generation_token_ids, tokens::token_ids(&generated));
    let log_probs: Vec<f64> = tokens
        .generation_token_ids
        .iter()
        .map(|id| tokens::log_prob(*id))
        .collect();
    assert_eq!(tokens.generation_log_probs, log_probs);
    assert!(!tokens.prompt_token_ids.is_empty());
    assert!(response.usage.prompt_tokens > 0 && response.usage.completion_tokens > 0);

    let without = Endpoint::new(&responses_endpoint(&url, "mock-policy"), &url).unwrap();
    assert!(without.complete(hello()).await.unwrap().tokens.is_none());
}

#[tokio::test]
async fn capture_tokens_asks_a_chat_server_for_token_ids_as_vllm_model_does() {
    let server = common::mock(MockConfig::default()).await;
    let url = server.base_url();
    let config = {
        let mut endpoint = endpoint_config("policy", &url, "mock-policy");
        endpoint.settings.capture_tokens = true;
        endpoint
    };
    let response = Endpoint::new(&config, &url)
        .unwrap()
        .complete(hello())
        .await
        .unwrap();
    let tokens = response.tokens.expect("asked for and returned");
    let generated = tokens::generated_text(&response.message);
    assert_eq!(tokens.generation_token_ids, tokens::token_ids(&generated));
    // The prompt's ids are those vLLM's /tokenize gives for the same messages.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let tokenized: serde_json::Value = reqwest::Client::new()
        .post(format!("http://{}/tokenize", server.addr()))
        .json(&serde_json::json!({"model": "mock-policy", "messages": [
            {"role": "system", "content": "s"}, {"role": "user", "content": "hello"}]}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let ids: Vec<u32> = serde_json::from_value(tokenized["tokens"].clone()).unwrap();
    assert_eq!(tokens.prompt_token_ids, ids);

    let plain = endpoint_config("policy", &url, "mock-policy");
    let response = Endpoint::new(&plain, &url)
        .unwrap()
        .complete(hello())
        .await
        .unwrap();
    assert!(response.tokens.is_none(), "not asked: none");
}

/// A server answering each POST with the next of `replies` (the last one
/// again when they run out), counting the requests.
async fn scripted(replies: Vec<serde_json::Value>) -> (String, Arc<std::sync::Mutex<usize>>) {
    let count = Arc::new(std::sync::Mutex::new(0usize));
    let seen = count.clone();
    let app = axum::Router::new().route(
        "/v1/responses",
        axum::routing::post(move || {
            let replies = replies.clone();
            let seen = seen.clone();
            async move {
                let mut n = seen.lock().unwrap();
                let reply = replies[(*n).min(replies.len() - 1)].clone();
                *n += 1;
                axum::Json(reply).into_response()
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, count)
}

#[tokio::test]
async fn a_failed_reply_is_retried_as_a_server_error_and_an_invalid_prompt_is_not() {
    let failed = serde_json::json!({"status": "failed", "output": [],
        "error": {"code": "server_error", "message": "the server's own words"}});
    let done = serde_json::json!({"status": "completed", "output": [
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]}]});
    let (url, count) = scripted(vec![failed, done]).await;
    let config = {
        let mut endpoint = responses_endpoint(&url, "m");
        endpoint.settings.max_retries = 2;
        endpoint
    };
    let response = Endpoint::new(&config, &url)
        .unwrap()
        .complete(hello())
        .await
        .unwrap();
    assert_eq!(&*response.message.content, "ok");
    assert_eq!(*count.lock().unwrap(), 2, "failed once, retried once");

    let invalid = serde_json::json!({"status": "failed", "output": [],
        "error": {"code": "invalid_prompt", "message": "no"}});
    let (url, count) = scripted(vec![invalid]).await;
    let config = {
        let mut endpoint = responses_endpoint(&url, "m");
        endpoint.settings.max_retries = 2;
        endpoint
    };
    let e = Endpoint::new(&config, &url)
        .unwrap()
        .complete(hello())
        .await
        .unwrap_err();
    assert_eq!(e.class(), "rejected");
    assert!(e.to_string().contains("invalid_prompt"), "{e}");
    assert_eq!(*count.lock().unwrap(), 1, "a rejection is not retried");
}

fn vllm_model_url(test: &str) -> Option<String> {
    match std::env::var(VLLM_MODEL_VAR) {
        Ok(url) if !url.is_empty() => Some(url.trim_end_matches('/').to_string()),
        _ => {
            eprintln!(
                "SKIPPED: {test}: {VLLM_MODEL_VAR} is not set; start NeMo Gym's vllm_model over \
                 sparring's mock as .ci/run does (sparring mock-llm --port 18430 --scenarios \
                 data/retail/scenarios.jsonl; scripts/nemo-gym start --model vllm_model \
                 base_url=http://127.0.0.1:18430/v1 api_key=none model=mock-policy \
                 return_token_id_information=true uses_reasoning_parser=false)"
            );
            None
        }
    }
}

#[tokio::test]
async fn a_job_runs_through_nemo_gyms_vllm_model_with_its_tool_calls_and_rewards() {
    let Some(url) = vllm_model_url("a_job_runs_through_nemo_gyms_vllm_model") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (report, conversations) = run_job(
        dir.path(),
        first_scenarios(dir.path(), 3),
        &format!(
            "base_url = \"{url}/v1\"\nmodel = \"mock-policy\"\napi = \"responses\"\n\
             max_retries = 0\ntimeout_secs = 30"
        ),
    )
    .await;
    assert_eq!(conversations.len(), 3);
    assert_tool_calls_and_rewards(&report, &conversations);
}

#[tokio::test]
async fn an_endpoint_call_through_vllm_model_returns_the_generations_token_ids_untouched() {
    let Some(url) = vllm_model_url("an_endpoint_call_through_vllm_model") else {
        return;
    };
    let base = format!("{url}/v1");
    let endpoint = Endpoint::new(&responses_endpoint(&base, "mock-policy"), &base).unwrap();
    let scenarios = sparring::persona::load::load_scenarios(
        &common::repo().join("data/retail/scenarios.jsonl"),
    )
    .unwrap();
    let request = ChatRequest {
        messages: vec![
            Message::system("You are a retail support agent."),
            Message::user("Hi, where is my order?"),
        ],
        scenario: Some(scenarios[0].id.clone()),
        ..ChatRequest::default()
    };
    let response = endpoint.complete(request).await.unwrap();
    let tokens = response
        .tokens
        .expect("vllm_model with return_token_id_information: true returns token fields");
    // The mock's own ids and log probabilities, through vllm_model unchanged.
    let generated = tokens::generated_text(&response.message);
    assert_eq!(tokens.generation_token_ids, tokens::token_ids(&generated));
    for (id, log_prob) in tokens
        .generation_token_ids
        .iter()
        .zip(&tokens.generation_log_probs)
    {
        assert_eq!(*log_prob, tokens::log_prob(*id));
    }
    // vllm_model asked the mock's /tokenize for the prompt's ids.
    assert!(!tokens.prompt_token_ids.is_empty());
}

#[test]
fn the_policys_reasoning_goes_back_to_the_policy_and_never_to_the_simulated_user() {
    use sparring::llm::reasoning::Reasoning;
    use sparring::sim::{Author, Transcript};
    let item = serde_json::value::RawValue::from_string(
        r#"{"type":"reasoning","id":"rs_1","summary":[]}"#.to_string(),
    )
    .unwrap();
    let mut answer = Message::assistant("Your order has shipped.");
    answer.reasoning = Some(Reasoning::new(vec![item]));
    let mut transcript = Transcript::default();
    transcript.push(Message::system("rules"), Author::System);
    transcript.push(Message::user("where is my order?"), Author::User);
    transcript.push(answer, Author::Policy);
    let policy = transcript.policy_view();
    assert!(policy[2].reasoning.is_some(), "sent back to the policy");
    let user = transcript.user_view(&Arc::from("you are a customer"));
    assert!(user.iter().all(|m| m.reasoning.is_none()));
    assert_eq!(&*user.last().unwrap().content, "Your order has shipped.");
    // Nor is it serialized with the message (stores and exports see none).
    let json = serde_json::to_string(&policy[2]).unwrap();
    assert!(!json.contains("rs_1"), "{json}");
}
