//! `/v1/responses`: one request's policy tool loop, as NeMo Gym's agents
//! answer it. The request's `input` (ending with the user's words or a
//! tool's output) is given to the job's policy model with the request's
//! `tools` (or the environment's); its tool calls run on a fresh session
//! of the job's environment (a NeMo Gym resources server is seeded with
//! the request as a row) until it answers in text or runs out of steps;
//! the answer is a Responses-API object whose `output` holds what the
//! policy did. Nothing is verified or stored: that is `/run`'s.

use serde_json::{json, Map, Value};

use crate::config::{EnvironmentConfig, UserMode};
use crate::env::nemo_gym::training::{self, Turn};
use crate::env::InitialState;
use crate::persona::nemo_gym::{request_key, row_as_scenario, RowOptions, REQUEST_FIELD};
use crate::sim::policy::TurnEnd;
use crate::sim::{Author, PolicySession, PolicyTurn, Transcript};

use super::error::{Invalid, RunFailure};
use super::open::Agent;
use super::request::RunRequest;

impl Agent {
    pub async fn responses(&self, body: &[u8]) -> Result<Value, RunFailure> {
        let params: Value = serde_json::from_slice(body)
            .map_err(|e| Invalid::at(&[], format!("the body is not JSON ({e})")))?;
        let Value::Object(params) = params else {
            return Err(Invalid::at(&[], "the body is not a Responses-API request object").into());
        };
        let mut row = Map::new();
        row.insert(REQUEST_FIELD.into(), Value::Object(params.clone()));
        let row_bytes = serde_json::to_vec(&row).unwrap_or_default();
        // The same checks as a run request's, fields named as the request's.
        let request = RunRequest::read(&row_bytes).map_err(|mut e| {
            e.field.retain(|f| f != REQUEST_FIELD);
            e
        })?;
        let options = RowOptions {
            mode: UserMode::None,
            user_goal_field: None,
            replay: None,
        };
        let scenario = row_as_scenario(&request.row, options).map_err(|e| {
            Invalid::at(
                &["input"],
                e.replace(&format!("`{REQUEST_FIELD}.input`"), "`input`"),
            )
        })?;
        // The job's own row of the same input names the scenario (a mock
        // policy plays its script by it).
        let scenario_id = request_key(&params, self.job.user_simulator.mode())
            .and_then(|key| self.rows_by_input.get(&key))
            .map_or("responses", |&i| {
                self.generation.prepared().scenarios[i].id.as_str()
            });
        let seed = params
            .get("seed")
            .and_then(Value::as_u64)
            .unwrap_or(self.job.seed);
        let data = match self.job.environment {
            EnvironmentConfig::NemoGym(_) => Value::Object(request.row.clone()),
            _ => Value::Null,
        };
        let environment = &self.generation.prepared().environment;
        let mut session = environment
            .open(&InitialState { seed, data })
            .await
            .map_err(|e| RunFailure::Rollout {
                class: "env_error".into(),
                message: e.to_string(),
            })?;
        let mut transcript = Transcript::default();
        for message in &scenario.prelude {
            transcript.push(message.clone(), Author::System);
        }
        let given = transcript.messages.len();
        let end = self
            .generation
            .policy()
            .turn(PolicyTurn {
                transcript: &mut transcript,
                session: session.as_mut(),
                tools: scenario.tools.as_ref(),
                seed,
                scenario: scenario_id,
                policy_session: &mut PolicySession::new(),
            })
            .await
            .map_err(|e| RunFailure::Rollout {
                class: e.class().into(),
                message: e.to_string(),
            })?;
        let made = &transcript.messages[given..];
        let (input_tokens, output_tokens) = made
            .iter()
            .filter_map(|r| r.usage)
            .fold((0, 0), |(i, o), u| {
                (i + u.prompt_tokens, o + u.completion_tokens)
            });
        let turns: Vec<Turn<'_>> = made
            .iter()
            .map(|r| Turn {
                message: &r.message,
                tokens: r.tokens.as_deref(),
            })
            .collect();
        let output = training::output_items(&turns);
        let tools = params.get("tools").cloned().unwrap_or_else(|| json!([]));
        let mut response = json!({
            "id": format!("resp_sparring_{}_{}", self.job_row.id, crate::store::now_ms()),
            "object": "response",
            "created_at": crate::store::now_ms() / 1000,
            "model": self.generation.policy().name(),
            "output": output,
            "parallel_tool_calls": params.get("parallel_tool_calls").and_then(Value::as_bool).unwrap_or(true),
            "tool_choice": "auto",
            "tools": crate::env::nemo_gym::rollout::response_tools(&tools),
            "status": "completed",
            "usage": {
                "input_tokens": input_tokens,
                "output_tokens": output_tokens,
                "total_tokens": input_tokens + output_tokens,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens_details": {"reasoning_tokens": 0},
            },
        });
        if end != TurnEnd::Answered {
            // Out of steps, or an empty answer: as NeMo Gym marks a
            // trajectory that did not finish.
            response["status"] = json!("incomplete");
            response["metadata"] = json!({"sparring_turn_end": format!("{end:?}")});
        }
        Ok(response)
    }
}
