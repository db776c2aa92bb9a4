//! `simulated` environments: tool specs without a backend, played by the
//! `tools` role's model. For each call the model gets the tool's spec, the
//! call, the scenario's hidden `environment_facts` and every earlier call
//! and result of the conversation (`prompts/tool_simulator.tera`). A result
//! that does not fit the tool's output schema, or that contradicts an
//! earlier result, is asked for once more; a second bad one fails the item.
//!
//! For scenario synthesis there is no world to sample: the spec holds no
//! data, and each scenario writes its own facts (`environment_facts`). A
//! session's state is those facts and the writes made so far (the
//! successful calls of tools not marked `read_only`): what a model says a
//! tool returned is not state, so validation checks that a write task calls
//! a write tool and a read-only one does not, that calls fit the specs'
//! schemas and results their output schemas, and that the IDs the user
//! knows are in the facts; it cannot compare a world's state before and
//! after, because there is none.

mod check;
pub mod specs;

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use async_trait::async_trait;
use serde_json::{json, Value};

use crate::config::SimulatedConfig;
use crate::env::{
    Caller, EnvError, EnvUsage, Environment, InitialState, Message, Session, ToolCall, ToolOutput,
    ToolSpec,
};
use crate::llm::{ChatModel, ChatRequest, Role};
use crate::prompt::shipped::TOOL_SIMULATOR_TEMPLATE;
use crate::prompt::PromptRegistry;
use crate::verify::{communicate, Component, ComponentScore, Criteria, Verification};

use check::{check_result, LoggedCall};
use specs::{SimulatedTool, ToolSpecs};

/// The template's name (its text is built in, so it works from any directory).
pub const TEMPLATE: &str = "tool_simulator";

/// What every session shares.
struct Shared {
    name: String,
    specs: ToolSpecs,
    policy_tools: Vec<ToolSpec>,
    user_tools: Vec<ToolSpec>,
    prompts: PromptRegistry,
    model: Option<Arc<dyn ChatModel>>,
}

pub struct SimulatedEnvironment {
    shared: Arc<Shared>,
}

impl SimulatedEnvironment {
    /// Read and check the tool specs at `path`, named by the file's stem;
    /// `model` plays the tools (none to only check them, as `sparring
    /// validate` does).
    pub fn load(path: &Path, model: Option<Arc<dyn ChatModel>>) -> Result<Self, EnvError> {
        let config = SimulatedConfig {
            kind: "simulated".into(),
            tools: path.to_path_buf(),
            name: None,
        };
        Self::open(&config, model)
    }

    /// [`SimulatedEnvironment::load`] of a job's `[environment]`, with its name.
    pub fn open(
        config: &SimulatedConfig,
        model: Option<Arc<dyn ChatModel>>,
    ) -> Result<Self, EnvError> {
        let path = config.tools.as_path();
        let error = |problems: Vec<String>| EnvError::ToolSpecs {
            path: path.display().to_string(),
            problems,
        };
        let text = crate::regular_file::read_to_string(path)
            .map_err(|e| error(vec![format!("cannot read the tool specs: {e}")]))?;
        let specs = ToolSpecs::parse(&text).map_err(error)?;
        let built_in = TOOL_SIMULATOR_TEMPLATE;
        let prompts = PromptRegistry::from_texts(vec![(
            TEMPLATE.to_string(),
            built_in.label(),
            built_in.text.to_string(),
        )])
        .map_err(|problems| EnvError::ToolSpecs {
            path: built_in.label().display().to_string(),
            problems: problems.iter().map(|p| p.message.clone()).collect(),
        })?;
        let specs_of = |tools: &[SimulatedTool]| tools.iter().map(|t| t.spec.clone()).collect();
        Ok(SimulatedEnvironment {
            shared: Arc::new(Shared {
                name: config.label(),
                policy_tools: specs_of(&specs.tools),
                user_tools: specs_of(&specs.user_tools),
                specs,
                prompts,
                model,
            }),
        })
    }
}

#[async_trait]
impl Environment for SimulatedEnvironment {
    fn name(&self) -> &str {
        &self.shared.name
    }

    fn policy_text(&self) -> &str {
        &self.shared.specs.policy_text
    }

    fn tools(&self) -> &[ToolSpec] {
        &self.shared.policy_tools
    }

    fn user_tools(&self) -> &[ToolSpec] {
        &self.shared.user_tools
    }

    fn replays_gold_actions(&self) -> bool {
        false
    }

    /// Checked against the tool's `parameters`, as a call is in a
    /// conversation: a gold action that breaks it could never be made, and
    /// every conversation would score 0 on `db`.
    fn argument_problem(&self, caller: Caller, tool: &str, arguments: &Value) -> Option<String> {
        let tools = match caller {
            Caller::Policy => &self.shared.specs.tools,
            Caller::User => &self.shared.specs.user_tools,
        };
        let tool = tools.iter().find(|t| t.spec.name == tool)?;
        let arguments = match arguments {
            Value::Null => json!({}),
            other => other.clone(),
        };
        self.shared
            .specs
            .check_arguments(tool, &arguments)
            .err()
            .map(|why| {
                format!(
                    "the arguments break the parameters schema of {} in the tools file: {why}; \
                     fix them to what the tool takes, or no conversation can make this call",
                    tool.spec.name
                )
            })
    }

    /// No records: what the generator is told instead (it writes the facts).
    async fn sample_records(&self, _seed: u64, _n: usize) -> Result<Value, EnvError> {
        Ok(json!({
            "records": [],
            "note": "This environment has tool specs and no data: a model plays the tools from \
                     the facts each scenario gives in initial_state (environment_facts). Write \
                     those facts yourself, as JSON the tools' outputs can be read from; every \
                     ID the user knows must appear in them, and every fact to communicate must \
                     follow from them. A write task must call a tool that is not read-only; a \
                     read-only or refusal task must call none."
        }))
    }

    async fn open(&self, init: &InitialState) -> Result<Box<dyn Session>, EnvError> {
        let Some(model) = self.shared.model.clone() else {
            return Err(EnvError::Simulated {
                tool: "(none)".into(),
                message: "no model plays the tools; set [roles] tools = \"ENDPOINT\"".into(),
            });
        };
        Ok(Box::new(SimulatedSession {
            shared: Arc::clone(&self.shared),
            model,
            facts: init.data.clone(),
            seed: init.seed,
            log: Vec::new(),
            usage: EnvUsage::default(),
        }))
    }
}

/// One conversation: the calls made so far and the results the model gave.
pub struct SimulatedSession {
    shared: Arc<Shared>,
    model: Arc<dyn ChatModel>,
    facts: Value,
    seed: u64,
    log: Vec<LoggedCall>,
    usage: EnvUsage,
}

/// The result text a model reply holds: the reply without code fences.
fn result_json(reply: &str) -> Result<Value, String> {
    let text = reply.trim();
    let text = text
        .strip_prefix("```json")
        .or_else(|| text.strip_prefix("```"))
        .and_then(|t| t.strip_suffix("```"))
        .unwrap_or(text)
        .trim();
    serde_json::from_str(text).map_err(|e| {
        format!(
            "the result is not one JSON value ({e}): {}",
            crate::env::simulated::check::preview(text)
        )
    })
}

impl SimulatedSession {
    fn prompt(&self, tool: &SimulatedTool, caller: Caller) -> Result<String, EnvError> {
        let mut ctx = tera::Context::new();
        let pretty = |v: &Value| serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string());
        ctx.insert("tool_name", &tool.spec.name);
        ctx.insert("tool_spec", &pretty(&json!(tool.spec)));
        ctx.insert(
            "output_schema",
            &tool.output_schema.as_ref().map(pretty).unwrap_or_default(),
        );
        ctx.insert("facts", &pretty(&self.facts));
        let lines: Vec<String> = self.log.iter().map(|c| c.line().to_string()).collect();
        ctx.insert("earlier_calls", &lines);
        ctx.insert("caller", caller_word(caller));
        self.shared
            .prompts
            .render(TEMPLATE, &ctx)
            .map_err(|e| EnvError::Simulated {
                tool: tool.spec.name.clone(),
                message: e.to_string(),
            })
    }

    async fn simulate(&mut self, caller: Caller, call: &ToolCall) -> Result<ToolOutput, EnvError> {
        let shared = Arc::clone(&self.shared);
        let tools = match caller {
            Caller::Policy => &shared.specs.tools,
            Caller::User => &shared.specs.user_tools,
        };
        let Some(tool) = tools.iter().find(|t| t.spec.name == call.name) else {
            let names: Vec<&str> = match caller {
                Caller::Policy => self.shared.policy_tools.iter(),
                Caller::User => self.shared.user_tools.iter(),
            }
            .map(|t| t.name.as_str())
            .collect();
            return Ok(ToolOutput::error(format!(
                "unknown tool '{}'; available tools: {}",
                call.name,
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                }
            )));
        };
        let raw = if call.arguments.trim().is_empty() {
            "{}"
        } else {
            &call.arguments
        };
        let arguments: Value = match serde_json::from_str(raw) {
            Ok(v) => v,
            Err(e) => {
                return Ok(ToolOutput::error(format!(
                    "the arguments of {} are not valid JSON ({e})",
                    call.name
                )))
            }
        };
        if let Err(e) = self.shared.specs.check_arguments(tool, &arguments) {
            return Ok(ToolOutput::error(format!(
                "invalid arguments for {}: {e}",
                call.name
            )));
        }
        let system = self.prompt(tool, caller)?;
        let request = json!({"tool": call.name, "arguments": arguments});
        let mut messages = vec![Message::system(system), Message::user(request.to_string())];
        let mut last_problem = String::new();
        for attempt in 0..2 {
            let started = Instant::now();
            let response = self
                .model
                .complete(ChatRequest {
                    role: Role::Tools,
                    messages: messages.clone(),
                    seed: Some(self.seed),
                    ..ChatRequest::default()
                })
                .await;
            self.usage.requests += 1;
            self.usage.wait += started.elapsed();
            let response = response.map_err(|e| EnvError::Simulated {
                tool: call.name.clone(),
                message: format!("the tools model failed: {e}"),
            })?;
            let reply = response.message.content.clone();
            let checked = result_json(&reply).and_then(|result| {
                check_result(&self.shared.specs, tool, &arguments, &result, &self.log)
                    .map(|is_error| (result, is_error))
            });
            match checked {
                Ok((result, is_error)) => {
                    let logged = LoggedCall {
                        caller,
                        tool: call.name.clone(),
                        read_only: tool.read_only,
                        arguments,
                        result,
                        is_error,
                    };
                    let content = logged.result.to_string();
                    self.log.push(logged);
                    return Ok(ToolOutput { content, is_error });
                }
                Err(problem) => {
                    tracing::debug!(tool = %call.name, attempt, "simulated result rejected: {problem}");
                    messages.push(Message::assistant(reply));
                    messages.push(Message::user(format!(
                        "{RETRY_MARK} {problem}. Answer the same call again with one JSON value that fixes this."
                    )));
                    last_problem = problem;
                }
            }
        }
        Err(EnvError::Simulated {
            tool: call.name.clone(),
            message: format!("a bad result twice (retried once): {last_problem}"),
        })
    }
}

/// Starts the message that asks the tools model to answer again.
pub const RETRY_MARK: &str = "That result was rejected:";

fn caller_word(caller: Caller) -> &'static str {
    match caller {
        Caller::Policy => "agent",
        Caller::User => "user",
    }
}

#[async_trait]
impl Session for SimulatedSession {
    async fn call(&mut self, call: &ToolCall) -> Result<ToolOutput, EnvError> {
        self.simulate(Caller::Policy, call).await
    }

    async fn call_by(&mut self, caller: Caller, call: &ToolCall) -> Result<ToolOutput, EnvError> {
        self.simulate(caller, call).await
    }

    /// `db`: every gold action was made, in order, by its caller, with the
    /// same arguments, and did not fail (the session's state is its calls);
    /// `communicate`: the facts were said.
    async fn verify(
        &mut self,
        messages: &[Message],
        criteria: &Criteria,
    ) -> Result<Verification, EnvError> {
        let mut made = self.log.iter().filter(|c| !c.is_error);
        let missing: Vec<String> = criteria
            .actions
            .iter()
            .filter(|gold| {
                let wanted = match &gold.arguments {
                    Value::Null => json!({}),
                    other => other.clone(),
                };
                !made.any(|c| {
                    c.caller == gold.caller && c.tool == gold.name && c.arguments == wanted
                })
            })
            .map(|gold| format!("{} by the {}", gold.name, gold.caller.as_str()))
            .collect();
        let db = if missing.is_empty() {
            ComponentScore {
                score: 1.0,
                detail: format!("all {} gold calls made, in order", criteria.actions.len()),
            }
        } else {
            ComponentScore {
                score: 0.0,
                detail: format!("gold calls not made (in order): {}", missing.join("; ")),
            }
        };
        let mut parts = std::collections::BTreeMap::new();
        parts.insert(Component::Db, db);
        parts.insert(
            Component::Communicate,
            communicate::score(messages, &criteria.communicate),
        );
        Ok(Verification::combine(&criteria.reward_basis, parts))
    }

    fn usage(&self) -> EnvUsage {
        self.usage
    }

    /// The scenario's facts and the writes made so far, in order.
    async fn state(&mut self) -> Result<Option<Value>, EnvError> {
        let writes: Vec<Value> = self
            .log
            .iter()
            .filter(|c| !c.read_only && !c.is_error)
            .map(|c| {
                json!({"caller": caller_word(c.caller), "tool": c.tool, "arguments": c.arguments})
            })
            .collect();
        Ok(Some(json!({"facts": self.facts, "writes": writes})))
    }
}
