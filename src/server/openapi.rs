//! The OpenAPI 3.1 document of the service, written by hand.

use serde_json::{json, Value};

use crate::synth::Stage;

use super::ui::proposals::FateKind;

fn id_param(what: &str) -> Value {
    json!({"name": "id", "in": "path", "required": true, "description": format!("{what} id"),
           "schema": int64()})
}

/// What the service parses as a 64-bit integer; anything else is a 400.
fn int64() -> Value {
    json!({"type": "integer", "format": "int64", "minimum": i64::MIN, "maximum": i64::MAX})
}

/// A query parameter of the JSON API. A blank value is never one: it is a
/// 400 (leave the parameter out instead), so a text parameter holds at least
/// one character that is not a space.
fn query(name: &str, kind: &str, description: &str) -> Value {
    let schema = if kind == "string" {
        json!({"type": kind, "pattern": "\\S"})
    } else {
        json!({"type": kind})
    };
    json!({"name": name, "in": "query", "required": false, "description": description,
           "schema": schema})
}

/// `k` of pass^k: whole numbers, comma-separated. One that does not read is
/// a 400; one outside 1 to 1,000 a 422.
fn ks_param() -> Value {
    json!({"name": "k", "in": "query", "required": false,
           "description": "The k of pass^k, comma-separated (default 1,2,4); each from 1 to 1,000",
           "schema": {"type": "string", "pattern": "^ *-?[0-9]{1,18} *(, *-?[0-9]{1,18} *)*$"}})
}

/// A query value that is one of `values` (or blank, as a form leaves it).
fn choice(name: &str, values: &[&str], description: &str) -> Value {
    let mut values: Vec<&str> = values.to_vec();
    values.push("");
    json!({"name": name, "in": "query", "required": false, "description": description,
           "schema": {"enum": values}})
}

fn json_response(description: &str, schema: &str) -> Value {
    json!({"description": description,
           "content": {"application/json": {"schema": {"$ref": format!("#/components/schemas/{schema}")}}}})
}

fn error(description: &str) -> Value {
    json_response(description, "Error")
}

/// The document, with the errors every operation shares documented on each.
pub fn document() -> Value {
    let mut document = paths_and_schemas();
    imports(&mut document);
    rollouts(&mut document);
    sessions(&mut document);
    if let Some(paths) = document["paths"].as_object_mut() {
        for (path, item) in paths.iter_mut() {
            let Some(operations) = item.as_object_mut() else {
                continue;
            };
            for operation in operations.values_mut() {
                shared_errors(path, operation);
            }
        }
    }
    document
}

/// The errors any operation may answer before its handler decides anything:
/// 401 without the token, 400 for a path or query value that does not parse,
/// 413 and 400 for a body over the limit or not of its media type, 404 for an
/// id with nothing behind it. Every one is the `Error` shape; the web UI's
/// own 404 and 422 pages are HTML, and so is its 400 for a query string.
fn shared_errors(path: &str, operation: &mut Value) {
    let unprotected = operation["security"]
        .as_array()
        .is_some_and(|s| s.is_empty());
    let has_parameters = operation["parameters"]
        .as_array()
        .is_some_and(|p| !p.is_empty());
    let has_body = operation.get("requestBody").is_some();
    let ui = !path.starts_with("/v1/") && path != "/metrics" && path != "/healthz";
    let Some(responses) = operation["responses"].as_object_mut() else {
        return;
    };
    let mut add = |status: &str, response: Value| {
        responses.entry(status).or_insert(response);
    };
    if !unprotected {
        add("401", error("No or wrong token"));
    }
    if has_parameters {
        let mut unparsed = error(if ui {
            "A path or query value that does not parse: an id outside 64-bit integers; a web UI \
             page answers a query string that does not read (a key given twice) with an HTML \
             page (its forms' blank fields mean \"any\")"
        } else {
            "A path or query value that does not parse, named in `error`: an id outside 64-bit \
             integers, a number that is not one, a boolean other than true or false, or any \
             query value left empty (leave a parameter out instead); a value that parses but is \
             out of range is a 422"
        });
        if ui {
            unparsed["content"]["text/html"] = json!({});
        }
        add("400", unparsed);
    }
    if has_body {
        add("400", error("The body does not parse"));
        add("413", error("Body over 2 MiB"));
    }
    if ui && path.contains("{id}") {
        add(
            "404",
            html("No such job, conversation, judgment, proposal or evaluation"),
        );
        if path == "/jobs/{id}" || path == "/jobs/{id}/proposals/{index}" {
            add(
                "422",
                html("A malformed filter, named with the values that would do"),
            );
        }
    }
}

/// A job config as JSON: its top-level keys with their types and ranges. A
/// config this schema accepts may still be a 422, naming its field: files
/// that do not exist or lie outside the data root, an operator endpoint the
/// server does not define, a role naming no endpoint.
fn job_config_schema() -> Value {
    use crate::config::ranges::{CONCURRENCY, LEASE_SECS, MAX_TURNS};
    let table = |description: &str| json!({"type": "object", "description": description});
    json!({
        "type": "object",
        "required": ["name", "endpoints", "roles"],
        "additionalProperties": false,
        "properties": {
            "name": {"type": "string", "minLength": 1},
            "seed": {"type": "integer", "minimum": 0, "maximum": u64::MAX},
            "database": {"type": "string", "description": "Ignored: jobs are stored in the server's database"},
            "concurrency": {"type": "integer", "minimum": CONCURRENCY.min, "maximum": CONCURRENCY.max},
            "max_turns": {"type": "integer", "minimum": MAX_TURNS.min, "maximum": MAX_TURNS.max},
            "lease_secs": {"type": "number", "minimum": LEASE_SECS.min, "maximum": LEASE_SECS.max},
            "endpoints": {"type": "object", "minProperties": 1,
                          "additionalProperties": {"type": "object"},
                          "description": "[endpoints.NAME]: base_url, model, limits; or operator = \"NAME\""},
            "roles": table("policy, user (and judge): endpoint names"),
            "user_simulator": table("mode, template, greeting"),
            "policy": table("template, max_steps_per_turn"),
            "environment": table("kind and its options"),
            "dataset": table("scenarios or rows, personas, samples_per_scenario"),
            "circuit_breaker": table("window, max_error_rate"),
            "mock": table("latency and fault knobs of the in-process mock"),
            "judges": {"type": "array", "items": {"type": "object"}}
        }
    })
}

fn html(description: &str) -> Value {
    json!({"description": description, "content": {"text/html": {}}})
}

fn paths_and_schemas() -> Value {
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "sparring",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "Synthetic multi-turn dialogues: submit generation jobs, follow their \
                progress, read conversations and stream exports. Every route but /healthz needs \
                `Authorization: Bearer TOKEN` when the server has a token."
        },
        "security": [{"bearer": []}],
        "paths": {
            "/healthz": {"get": {
                "summary": "Liveness; needs no token",
                "security": [],
                "responses": {"200": {"description": "ok", "content": {"text/plain": {}}}}
            }},
            "/metrics": {"get": {
                "summary": "Prometheus metrics: jobs, items, queue depth and judgments from the database; this process's model calls, tokens, latency, retries and rate-limit waits by role and endpoint, and conversations done or failed",
                "responses": {"200": {"description": "Prometheus text format", "content": {"text/plain": {}}}}
            }},
            "/v1/openapi.json": {"get": {
                "summary": "This document",
                "responses": {"200": {"description": "OpenAPI 3.1", "content": {"application/json": {}}}}
            }},
            "/v1/jobs": {
                "post": {
                    "summary": "Submit a generation job; the server starts working it",
                    "description": "The body is a job config as in `sparring validate`: TOML \
                        (application/toml or text/plain) or JSON (application/json). Relative paths \
                        resolve against the server's working directory, or the folder `base` names \
                        (relative to it). The config's `database` is ignored: jobs are stored in the \
                        server's database. The same config again returns the existing job (200).",
                    "parameters": [
                        query("new_job", "boolean", "Start a new job even if one with this name or config exists"),
                        query("base", "string", "Folder on the server that relative paths resolve against (default: its working directory)")
                    ],
                    "requestBody": {"required": true, "content": {
                        "application/toml": {"schema": {"type": "string"}},
                        "text/plain": {"schema": {"type": "string"}},
                        "application/json": {"schema": {"$ref": "#/components/schemas/JobConfig"}}
                    }},
                    "responses": {
                        "201": json_response("The new job", "Job"),
                        "200": json_response("The existing job with this config", "Job"),
                        "401": error("No or wrong token"),
                        "409": error("A job with this name has a different config; use new_job=true"),
                        "413": error("Body over 2 MiB"),
                        "422": json_response("The config has problems", "Problems")
                    }
                },
                "get": {
                    "summary": "Every job with its item counts, newest first",
                    "responses": {"200": {"description": "Jobs", "content": {"application/json": {"schema": {
                        "type": "object", "properties": {"jobs": {"type": "array", "items": {"$ref": "#/components/schemas/Job"}}}
                    }}}}}
                }
            },
            "/v1/jobs/{id}": {"get": {
                "summary": "A job with counts, summary (mean reward, terminations, usage) and stored config",
                "parameters": [id_param("Job")],
                "responses": {"200": json_response("The job", "JobDetail"), "404": error("No such job")}
            }},
            "/v1/jobs/{id}/stats": {"get": {
                "summary": "A job's statistics, as `sparring stats --json`: rewards, pass^k, rollout groups (`conversations.groups`: a scenario's scored conversations per group; how many are flat, every reward equal, and how many of those are all 0 and all 1), judges, the simulated user's deterministic checks (rates with intervals, by persona and scenario, agreement with user_fidelity judges), and `synthesized`: the job's synthesized scenarios solved, unsolved (with their ids) and undecided, or null when it ran none",
                "parameters": [id_param("Job"), ks_param(),
                    query("by", "string", "Break the job down by this attribute instead (`sparring stats --by`): a persona attribute stored with the job (e.g. country, age; numbers binned), persona, scenario, knob.NAME, or probe.family / probe.strategy / probe.scored_by (probe conversations only). The answer is then the strata report: per cell conversations, mean reward with its 95% interval, difference from the job's mean, pass^k, termination shares and simulated-user flag rates with Wilson intervals, for probes each cell's hold rate (Wilson), held^k, turn_of_flip counts and blast radius, too-small cells marked, furthest below the job's mean first"),
                    {"name": "min_cell", "in": "query", "required": false, "schema": int64(), "description": "With `by`: a cell with fewer conversations is too small (1 to 1,000,000; default 10)"},
                    {"name": "bins", "in": "query", "required": false, "schema": int64(), "description": "With `by`: bins a numeric attribute is cut into by quantiles (2 to 20; default 4)"}],
                "responses": {"200": {"description": "The report", "content": {"application/json": {"schema": {"type": "object"}}}},
                              "404": error("No such job"), "422": json_response("A bad k, an attribute the job does not have (the problem lists those it has), min_cell or bins out of range or given without by, each named by its field", "Problems")}
            }},
            "/v1/compare-users": {"get": {
                "summary": "Compare the simulated users of two jobs on matched scenarios, personas and samples, as `sparring compare-users A B --json`; with `realism=true`, hold job A's simulated users against job B's real (imported) ones, as `sparring compare-users A B --realism --json` (docs/realism.md)",
                "parameters": [{"name": "a", "in": "query", "required": false, "schema": int64(), "description": "The baseline job; with realism, the simulated job"},
                               {"name": "b", "in": "query", "required": false, "schema": int64(), "description": "The job compared with it (differences are B − A); with realism, the real job (differences are A − B, simulated − real)"},
                               query("realism", "boolean", "Compare the user side with a real job: measures with both values, the difference, a bootstrap interval, and the three largest gaps"),
                               ks_param()],
                "responses": {"200": {"description": "The comparison", "content": {"application/json": {"schema": {"type": "object"}}}},
                              "404": error("No such job"), "422": json_response("A job missing, or a bad k, named by its field", "Problems")}
            }},
            "/v1/evaluations/{id}/leaderboard": {"get": {
                "summary": "A stored evaluation's leaderboard (`sparring evaluate`, docs/leaderboard.md), as `sparring leaderboard --evaluation ID --json`: per policy, over the items every policy scored, mean reward and pass rate with 95% intervals, pass^k, terminations, the simulated-user flag rate, tokens and latency, McNemar and a paired bootstrap against the baseline, Bradley–Terry ratings with bootstrap intervals, and the reward–tokens frontier",
                "parameters": [id_param("Evaluation"),
                    query("baseline", "string", "The policy (by name) the paired tests compare with; default the evaluation's baseline, else its first policy"),
                    query("judge", "string", "A pairwise judge whose stored verdicts between the policies' conversations give a second set of ratings and a win-rate matrix (`judged`); default the evaluation's own"),
                    query("pass_threshold", "number", "A conversation passes at this reward or above (-1,000,000 to 1,000,000; default 1)"),
                    {"name": "resamples", "in": "query", "required": false, "schema": int64(), "description": "Bootstrap resamples (100 to 100,000; default 2,000; the ratings use at most 1,000)"},
                    {"name": "seed", "in": "query", "required": false, "schema": int64(), "description": "Seeds every bootstrap (0 or more; default 0): the same seed gives the same table"}],
                "responses": {"200": {"description": "The table", "content": {"application/json": {"schema": {"type": "object"}}}},
                              "404": error("No such evaluation"),
                              "409": error("Fewer than two of its policies have run, or they share no scored item"),
                              "422": json_response("A baseline that is not one of its policies, or a number out of range, named by its field", "Problems")}
            }},
            "/v1/jobs/{id}/cancel": {"post": {
                "summary": "Cancel a job: conversations in flight are dropped and their items returned to pending",
                "parameters": [id_param("Job")],
                "responses": {"202": json_response("Cancelling", "Job"), "404": error("No such job"),
                              "409": error("The job is done, failed or cancelled already")}
            }},
            "/v1/jobs/{id}/resume": {"post": {
                "summary": "Work the job's remaining items in this server",
                "parameters": [id_param("Job"), query("retry_failed", "boolean", "Put failed items back to pending first")],
                "responses": {"202": json_response("Resuming", "Job"), "404": error("No such job"),
                              "409": error("The job runs here already")}
            }},
            "/v1/jobs/{id}/conversations": {"get": {
                "summary": "A page of the job's conversations, in id order, with filters",
                "parameters": [
                    id_param("Job"),
                    {"name": "after", "in": "query", "required": false, "schema": int64(),
                     "description": "The `next` cursor of the previous page (a conversation id)"},
                    {"name": "limit", "in": "query", "required": false,
                     "schema": {"type": "integer", "minimum": 0, "maximum": u32::MAX},
                     "description": "Conversations per page (clamped to 1 to 500, default 50); a page may hold fewer when filters match little: follow `next` until it is null"},
                    query("min_reward", "number", "Reward at least this (unscored conversations are left out)"),
                    query("max_reward", "number", "Reward at most this (unscored conversations are left out)"),
                    query("termination", "string", "Termination reason, e.g. user_stop"),
                    query("scenario", "string", "Scenario id"),
                    query("persona", "string", "Persona id"),
                    query("min_judge", "string", "NAME=SCORE (comma-separated for several): keep conversations judge NAME scored at least SCORE, as `sparring export --min-judge`; a judge without judgments of the job is a 422"),
                    query("drop_flagged", "string", "Judge names (comma-separated): leave out conversations these pass/fail judges failed")
                ],
                "responses": {"200": json_response("A page", "ConversationPage"), "404": error("No such job"),
                              "422": json_response("A malformed filter, named by its field", "Problems")}
            }},
            "/v1/jobs/{id}/export": {"get": {
                "summary": "The job's conversations as training JSONL, streamed page by page",
                "parameters": [
                    id_param("Job"),
                    {"name": "format", "in": "query", "required": false,
                     "schema": {"enum": ["openai", "hf", "sharegpt", "nemo_gym", "dpo", "scenarios"]},
                     "description": "openai (default; streamed; without its metadata sidecar), hf (Hugging Face chat templates / TRL), sharegpt (LLaMA-Factory), nemo_gym (rollouts of a nemo_gym job), dpo (preference pairs of `judge`'s pairwise verdicts, as `sparring export --format dpo`), or scenarios (not conversations: the job's synthesized scenarios its policy solved, as a scenarios JSONL; takes no conversation filter, only keep_unsolved)"},
                    query("min_reward", "number", "Keep conversations with at least this reward"),
                    query("max_reward", "number", "Keep conversations with at most this reward"),
                    query("termination", "string", "Keep conversations that ended this way (as the web UI's filter)"),
                    query("scenario", "string", "Keep this scenario's conversations"),
                    query("persona", "string", "Keep this persona's conversations"),
                    {"name": "probe_outcome", "in": "query", "required": false,
                     "schema": {"enum": ["held", "broken"]},
                     "description": "Keep only probe conversations (scenarios with a probe block) whose agent held the line (held) or broke it (broken), as `sparring export --probe-outcome`"},
                    query("min_judge", "string", "NAME=SCORE (comma-separated for several): keep conversations judge NAME scored at least SCORE"),
                    query("drop_flagged", "string", "Judge names (comma-separated): drop conversations these pass/fail judges failed"),
                    query("keep_flagged", "boolean", "Keep conversations the job's own drop_flagged judges failed (dropped by default)"),
                    query("drop_user_flag", "string", "Deterministic user checks (comma-separated, e.g. role_confusion,premature_stop): drop conversations whose simulated user they flagged"),
                    query("keep_user_flagged", "boolean", "Keep conversations the job's [user_simulator] drop_flagged checks flagged (dropped by default)"),
                    query("keep_unsolved", "boolean", "Keep the conversations of unsolved synthesized scenarios: scenarios tagged synthesized that every planned attempt of the job failed (dropped by default); format=scenarios: write the unsolved scenarios too"),
                    query("judge", "string", "format=dpo: the pairwise judge whose verdicts make the pairs"),
                    query("probe_pairs", "boolean", "format=dpo: pairs from probes instead of a judge: each probe conversation whose agent broke the line against the held one of its scenario sharing the longest prompt (chosen: held)"),
                    {"name": "dpo_shape", "in": "query", "required": false,
                     "schema": {"enum": ["turn", "trajectory"]},
                     "description": "format=dpo: turn (default; prompt = the shared prefix, chosen/rejected = the first differing assistant turn) or trajectory (the older whole-rollout form)"},
                    {"name": "advantage", "in": "query", "required": false,
                     "schema": {"enum": ["centered", "normalized"]},
                     "description": "Each row's advantage in its rollout group (the job's conversations of its scenario with a reward, whatever the filters keep): centered (default; reward minus the group's mean) or normalized (divided by the group's standard deviation when it is not 0); written with group_id, group_size, group_reward_mean, group_reward_std (nemo_gym rows at the top level, the other formats in metadata); refused with format=dpo"},
                    {"name": "profile", "in": "query", "required": false,
                     "schema": {"enum": ["strict", "generous"]},
                     "description": "Curate with a built-in profile's quality gates (reward, judges, user flags, turn and length bounds, near-duplicates, caps per stratum), as `sparring export --profile`; the response holds the kept conversations in one stream (no holdout split, no manifest or card: the CLI writes those)"},
                    query("stratify_by", "string", "With profile: persona, scenario or metadata.KEY, the strata of the caps")
                ],
                "responses": {"200": {"description": "JSONL, one conversation (or pair) a line (chunked)",
                                      "content": {"application/jsonl": {}}},
                              "400": error("Unknown format"), "404": error("No such job"),
                              "422": json_response("A malformed filter, a min_judge judge without judgments, dpo without a judge that has judgments or with a judge that is not pairwise or with advantage, an unknown advantage, nemo_gym of a job that is not a NeMo Gym job, or scenarios with a conversation filter or of a job whose scenarios file no longer loads", "Problems")}
            }},
            "/v1/jobs/{id}/events": {"get": {
                "summary": "Server-sent events: `progress` (the Job) every second, then `done` once it is finished",
                "parameters": [id_param("Job")],
                "responses": {"200": {"description": "text/event-stream", "content": {"text/event-stream": {}}},
                              "404": error("No such job")}
            }},
            "/v1/conversations/{id}": {"get": {
                "summary": "A conversation: messages with tool calls, reward breakdown, usage and judgments",
                "parameters": [id_param("Conversation")],
                "responses": {"200": json_response("The conversation", "Conversation"), "404": error("No such conversation")}
            }},
            "/v1/synthesis-jobs": {"post": {
                "summary": "Submit a synthesis job (as `sparring synthesize`); the server starts working it",
                "description": "The body is a SYNTH.toml (application/toml or text/plain), checked as \
                    `sparring synthesize` checks a file, with paths inside the data root and keys only \
                    through operator endpoints. Relative paths resolve against the data root, or the \
                    folder `base` names (relative to it). Its `database` and `output` are ignored: the \
                    job is stored in the server's database and its accepted scenarios are served by \
                    /v1/jobs/{id}/scenarios. The job shows in /v1/jobs and has events, stats, cancel and \
                    resume like any job. The same config again returns the existing job (200).",
                "parameters": [
                    query("new_job", "boolean", "Start a new job even if one with this name or config exists"),
                    query("base", "string", "Folder inside the data root that relative paths resolve against")
                ],
                "requestBody": {"required": true, "content": {
                    "application/toml": {"schema": {"type": "string"}},
                    "text/plain": {"schema": {"type": "string"}}
                }},
                "responses": {
                    "201": json_response("The new synthesis job", "Job"),
                    "200": json_response("The existing job with this config", "Job"),
                    "401": error("No or wrong token"),
                    "409": error("A job with this name has a different config; use new_job=true"),
                    "413": error("Body over 2 MiB"),
                    "422": json_response("The config has problems", "Problems")
                }
            }},
            "/v1/jobs/{id}/scenarios": {"get": {
                "summary": "A synthesis job's accepted scenarios so far, in proposal order, as the scenarios JSONL `sparring run` reads",
                "parameters": [id_param("Job")],
                "responses": {
                    "200": {"description": "One scenario row per line", "content": {"application/jsonl": {"schema": {"type": "string"}}}},
                    "404": error("No such job"),
                    "409": error("The job is not a synthesis job")
                }
            }},
            "/v1/judging-jobs": {"post": {
                "summary": "Submit a judging job (as `sparring judge`); the server starts working it",
                "description": "Judges are judges TOML text (what a judges.toml file holds: [[judges]] \
                    and optional [endpoints]; checked as `sparring judge` checks a file, problems named by \
                    field path such as judges[0].builtin) or {\"from_job\": ID} for a generation job's \
                    [[judges]]. The job shows in /v1/jobs and has events, cancel and resume like any job. \
                    The same judges and target again return the existing job (200).",
                "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/JudgingRequest"}}}},
                "responses": {
                    "201": json_response("The new judging job", "Job"),
                    "200": json_response("The existing job with these judges and target", "Job"),
                    "401": error("No or wrong token"),
                    "422": json_response("The request or its judges have problems", "Problems")
                }
            }},
            "/v1/judgments/{id}": {"get": {
                "summary": "A judgment: verdict, swap-check consistency, the model calls per order with raw output, and its conversation(s)",
                "parameters": [id_param("Judgment")],
                "responses": {"200": json_response("The judgment", "Judgment"), "404": error("No such judgment")}
            }},
            "/judgments/{id}": {"get": {
                "summary": "Web UI: a judgment; a pairwise one shows conversations A and B side by side",
                "parameters": [id_param("Judgment")],
                "responses": {"200": {"description": "HTML", "content": {"text/html": {}}}}
            }},
            "/": {"get": {"summary": "Web UI: jobs with progress", "responses": {"200": {"description": "HTML", "content": {"text/html": {}}}}}},
            "/jobs/{id}": {"get": {
                "summary": "Web UI: a job and its conversations, with filters; a synthesis job's counts against its target, rejections per stage and proposals, filtered by fate and stage",
                "parameters": [id_param("Job")],
                "responses": {"200": {"description": "HTML", "content": {"text/html": {}}}}
            }},
            "/jobs/{id}/proposals/{index}": {"get": {
                "summary": "Web UI: a synthesis job's proposal: its brief, every attempt with the generator's reply, rejection and committee review, and the scenario with what the job decided of it",
                "parameters": [
                    id_param("Job"),
                    {"name": "index", "in": "path", "required": true, "description": "The proposal number (from 0)", "schema": int64()},
                    choice("fate", &FateKind::ALL.map(FateKind::as_str), "The job page's filter, kept for previous / next: what became of the proposal"),
                    choice("stage", &Stage::ALL.map(Stage::as_str), "The job page's filter, kept for previous / next: a stage one of its attempts was rejected at")
                ],
                "responses": {"200": {"description": "HTML", "content": {"text/html": {}}}}
            }},
            "/evaluations/{id}": {"get": {
                "summary": "Web UI: an evaluation (`sparring evaluate`): its leaderboard sortable by any figure, each policy's reward with its interval, the reward–cost frontier, the win-rate heat maps, and the items a policy and the baseline disagree on, linked to both conversations",
                "parameters": [
                    id_param("Evaluation"),
                    choice("sort", &super::ui::evaluation_page::SORTS.map(|(key, _)| key), "The column the table is sorted by (default: mean reward)")
                ],
                "responses": {"200": {"description": "HTML", "content": {"text/html": {}}},
                              "409": html("Fewer than two of its policies have run, or they share no scored item")}
            }},
            "/conversations/{id}": {"get": {
                "summary": "Web UI: a conversation as a chat, with its reward breakdown and judgments",
                "parameters": [id_param("Conversation")],
                "responses": {"200": {"description": "HTML", "content": {"text/html": {}}}}
            }}
        },
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer",
                "description": "The server's --token / SPARRING_API_TOKEN. Browsers may pass ?token= once on a GET; a cookie keeps it."}},
            "schemas": {
                "JobConfig": job_config_schema(),
                "Error": {"type": "object", "properties": {"error": {"type": "string"}}, "required": ["error"]},
                "Problems": {"type": "object", "required": ["errors"], "properties": {"errors": {"type": "array", "items": {
                    "type": "object", "required": ["file", "message"], "properties": {
                        "file": {"type": "string"},
                        "location": {"type": ["string", "null"], "description": "A field path such as endpoints.policy.model, or line and column"},
                        "message": {"type": "string"}
                    }}}}},
                "ItemCounts": {"type": "object", "properties": {
                    "pending": {"type": "integer"}, "leased": {"type": "integer"},
                    "done": {"type": "integer"}, "failed": {"type": "integer"}}},
                "Job": {"type": "object", "properties": {
                    "id": {"type": "integer"}, "name": {"type": "string"}, "kind": {"type": "string"},
                    "status": {"enum": ["pending", "running", "done", "failed", "cancelled"]},
                    "config_hash": {"type": "string"},
                    "created_at": {"type": "integer", "description": "Unix milliseconds"},
                    "updated_at": {"type": "integer"},
                    "counts": {"$ref": "#/components/schemas/ItemCounts"},
                    "total": {"type": "integer"},
                    "running_here": {"type": "boolean"}}},
                "JobDetail": {"allOf": [{"$ref": "#/components/schemas/Job"}, {"type": "object", "properties": {
                    "config": {"type": "string", "description": "The stored config (TOML)"},
                    "summary": {"type": "object", "properties": {
                        "conversations": {"type": "integer"},
                        "mean_reward": {"type": ["number", "null"]},
                        "terminations": {"type": "array", "items": {"type": "object", "properties": {
                            "termination": {"type": "string"}, "count": {"type": "integer"}}}},
                        "usage": {"type": "array", "items": {"type": "object"}}}}}}]},
                "ConversationEntry": {"type": "object", "properties": {
                    "id": {"type": "integer"}, "job_id": {"type": "integer"}, "item_key": {"type": "string"},
                    "scenario_id": {"type": "string"}, "persona_id": {"type": "string"}, "sample": {"type": "integer"},
                    "termination": {"type": "string"}, "reward": {"type": ["number", "null"]},
                    "messages": {"type": "integer"}, "started_at": {"type": "integer"}, "finished_at": {"type": "integer"}}},
                "ConversationPage": {"type": "object", "properties": {
                    "conversations": {"type": "array", "items": {"$ref": "#/components/schemas/ConversationEntry"}},
                    "next": {"type": ["string", "null"], "description": "Pass as `after` for the next page; null at the end"}}},
                "JudgingRequest": {"type": "object", "required": ["judges", "target"], "additionalProperties": false, "properties": {
                    "judges": {"oneOf": [
                        {"type": "string", "description": "Judges TOML text"},
                        {"type": "object", "required": ["from_job"], "properties": {"from_job": {"type": "integer"}}}]},
                    "target": {"oneOf": [
                        {"type": "object", "required": ["job"], "properties": {"job": {"type": "integer", "description": "Judge this job's conversations"}}},
                        {"type": "object", "required": ["a", "b"], "properties": {
                            "a": {"type": "integer"}, "b": {"type": "integer", "description": "Pairwise: job A's conversations against job B's for the same scenario, persona and sample"}}}]},
                    "min_reward": {"type": "number", "description": "Only conversations with at least this reward (A's, when pairwise)"},
                    "new_job": {"type": "boolean", "description": "A new job even if one with these judges and target exists"}}},
                "Judgment": {"type": "object", "properties": {
                    "id": {"type": "integer"}, "job_id": {"type": "integer", "description": "The job that made it"},
                    "judge_name": {"type": "string"}, "judge_hash": {"type": "string"},
                    "conversation_a": {"type": "integer"}, "conversation_b": {"type": ["integer", "null"]},
                    "status": {"enum": ["ok", "unparseable", "failed"]},
                    "verdict": {"description": "{kind: score|preference|equivalence|assertions, ...}"},
                    "score": {"type": ["number", "null"]}, "consistent": {"type": ["boolean", "null"]},
                    "reason": {"type": ["string", "null"]},
                    "calls": {"type": "array", "items": {"type": "object", "description": "One model call: call.order (single, ab, ba), call.raw_output, call.parsed, call.status"}},
                    "a": {"$ref": "#/components/schemas/ConversationEntry"},
                    "b": {"oneOf": [{"$ref": "#/components/schemas/ConversationEntry"}, {"type": "null"}]}}},
                "Conversation": {"type": "object", "properties": {
                    "id": {"type": "integer"}, "job_id": {"type": "integer"}, "termination": {"type": "string"},
                    "reward": {"type": ["number", "null"]},
                    "reward_breakdown": {"description": "Verification components"},
                    "messages": {"type": "array", "items": {"type": "object", "properties": {
                        "idx": {"type": "integer"}, "role": {"type": "string"}, "content": {"type": "string"},
                        "tool_calls": {"type": ["array", "null"]}, "tool_call_id": {"type": ["string", "null"]},
                        "author": {"type": "string"}}}},
                    "usage": {"type": "array", "items": {"type": "object"}},
                    "judgments": {"type": "array", "description": "Judgments where it is conversation A or B", "items": {"type": "object"}}}}
            }
        }
    })
}

/// `POST /v1/imports` and its schemas, added to the document beside the
/// other routes.
fn imports(document: &mut Value) {
    document["paths"]["/v1/imports"] = json!({"post": {
        "summary": "Import conversations sparring did not generate into an import job (as `sparring import`), to judge, check, curate and export them",
        "description": "Either JSON naming files inside the data root ({\"name\", \"files\", \"format\", \"skip_invalid\"}), \
            or the conversations themselves, one JSON object per line (Content-Type: application/x-ndjson, \
            with name, format and skip_invalid in the query), within the body limit. Formats: openai, hf, \
            sharegpt, nemo_gym, or auto (told from each source's first line). Every invalid line is a \
            problem with its file and line, and nothing is stored unless skip_invalid. A conversation the \
            job holds already is not added again, so the same import twice adds nothing.",
        "parameters": [
            query("name", "string", "NDJSON body: the import job to make or add to"),
            // Not `choice`: the JSON API reads a blank value as a 400, not as "any".
            {"name": "format", "in": "query", "required": false,
             "description": "NDJSON body: the format of its lines (default auto)",
             "schema": {"enum": ["openai", "hf", "sharegpt", "nemo_gym", "tau2", "tau_bench", "auto"]}},
            query("skip_invalid", "boolean", "NDJSON body: store the valid lines and count the invalid ones")
        ],
        "requestBody": {"required": true, "content": {
            "application/json": {"schema": {"$ref": "#/components/schemas/ImportRequest"}},
            "application/x-ndjson": {"schema": {"type": "string"}}
        }},
        "responses": {
            "201": json_response("A new import job, with what was read and added", "ImportReport"),
            "200": json_response("Added to the import job of this name", "ImportReport"),
            "422": json_response("The request, a file or a line has problems; nothing stored", "Problems")
        }
    }});
    let schemas = &mut document["components"]["schemas"];
    schemas["ImportRequest"] = json!({"type": "object", "required": ["name", "files"], "additionalProperties": false, "properties": {
                    "name": {"type": "string", "description": "The import job to make or add to"},
                    "files": {"type": "array", "items": {"type": "string"}, "description": "JSONL files, relative to the data root"},
                    "format": {"enum": ["openai", "hf", "sharegpt", "nemo_gym", "tau2", "tau_bench", "auto"]},
                    "skip_invalid": {"type": "boolean", "description": "Store the valid lines and count the invalid ones, instead of storing nothing"}}});
    schemas["ImportReport"] = json!({"type": "object", "required": ["job", "created", "conversations", "added", "invalid", "sources", "skipped"], "properties": {
                    "job": {"$ref": "#/components/schemas/Job"},
                    "created": {"type": "boolean"},
                    "conversations": {"type": "integer", "description": "Valid conversations read"},
                    "added": {"type": "integer", "description": "Of those, how many the job did not hold yet"},
                    "invalid": {"type": "integer", "description": "Invalid lines skipped"},
                    "sources": {"type": "array", "items": {"type": "object", "properties": {
                        "source": {"type": "string"}, "format": {"type": "string"}, "detected": {"type": "boolean"},
                        "conversations": {"type": "integer"}, "added": {"type": "integer"}, "invalid": {"type": "integer"},
                        "warnings": {"type": "array", "items": {"type": "string"}, "description": "Tools inferred from the calls; simulations whose user never names its task's identifiers"}}}},
                    "skipped": {"type": "array", "description": "The invalid lines skipped, the first 1,000", "items": {"type": "object"}}}});
}

/// `POST /v1/rollouts`: the request, and the NDJSON lines it streams.
fn rollouts(document: &mut Value) {
    use super::rollouts::{K, MAX_ROLLOUTS};
    document["paths"]["/v1/rollouts"] = json!({"post": {
        "summary": "Rollouts on demand for an RL trainer: k rollouts of each scenario with the request's policy endpoint, streamed as NDJSON as each finishes",
        "description": "The job config (`config`, a file inside the data root, or `config_toml`) gives the simulated \
            user, the environment and the limits; `policy` is the policy's endpoint for this request, checked as a \
            submitted job's endpoints are (the egress allowlist, operator endpoints); `api_key` is held in memory, \
            never stored. The answer is one JSON object per line: `job`, then a `rollout` per finished rollout or an \
            `error` per failed one, a `group` once a scenario's k rollouts are all finished (reward mean and standard \
            deviation, flatness, each rollout's advantage), `progress` while nothing else is written, and `summary` \
            last. Every rollout is stored in a job of its own (Location). Closing the connection cancels the job.",
        "requestBody": {"required": true, "content": {
            "application/json": {"schema": {"$ref": "#/components/schemas/RolloutsRequest"}}
        }},
        "responses": {
            "200": {"description": "The rollouts, one JSON line each (docs/rollouts.md)",
                    "headers": {"Location": {"description": "The job holding the rollouts", "schema": {"type": "string"}}},
                    "content": {"application/x-ndjson": {"schema": {"type": "string"}}}},
            "422": json_response("The request, its config or its scenarios have problems, each naming its field; nothing stored", "Problems")
        }
    }});
    let schemas = &mut document["components"]["schemas"];
    schemas["RolloutsRequest"] = json!({"type": "object", "required": ["k", "policy"], "additionalProperties": false, "properties": {
        "config": {"type": "string", "description": "A job config file, relative to the data root (give this or config_toml)"},
        "config_toml": {"type": "string", "description": "The job config itself, as TOML; its relative paths resolve against the data root"},
        "scenarios": {"oneOf": [
            {"type": "array", "minItems": 1, "items": {"type": "object"},
             "description": "The scenarios themselves, each as a scenarios (or NeMo Gym rows) file holds it"},
            {"type": "object", "additionalProperties": false, "properties": {
                "file": {"type": "string", "description": "A scenarios (or NeMo Gym rows) file relative to the data root, instead of the config's"},
                "ids": {"type": "array", "minItems": 1, "items": {"type": "string"}, "description": "The scenarios to roll out (default: all)"}}}]},
        "k": {"type": "integer", "minimum": K.min, "maximum": K.max,
              "description": format!("Rollouts per scenario, its group; scenarios × k at most {MAX_ROLLOUTS}")},
        "policy": {"type": "object", "additionalProperties": false, "properties": {
            "base_url": {"type": "string", "description": "OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1"},
            "model": {"type": "string"},
            "api": {"type": "string", "enum": ["chat", "chat_completions", "responses"], "description": "The wire format: chat (Chat Completions, the default; chat_completions is the same) or responses (the Responses API)"},
            "api_key": {"type": "string", "description": "Sent as the bearer token; held in memory only"},
            "operator": {"type": "string", "description": "An operator endpoint of this server, instead of base_url and model"},
            "temperature": {"type": "number"}, "top_p": {"type": "number"},
            "max_tokens": {"type": "integer"}, "timeout_secs": {"type": "number"}, "max_in_flight": {"type": "integer"}}},
        "name": {"type": "string", "description": "The job's name (default: the config's)"},
        "concurrency": {"type": "integer", "description": "Conversations in flight at most (default: the config's)"}}});
}

/// The stepped sessions (`/v1/sessions`): what opens one, the action, the
/// observation and the state, the schemas OpenEnv's `/schema` publishes.
fn sessions(document: &mut Value) {
    use crate::stepped::schema;
    let session_id = json!({"name": "id", "in": "path", "required": true,
        "description": "The session's id (`ses_` and 24 hex digits), from its first observation's metadata.session_id",
        "schema": {"type": "string"}});
    let gone = |what: &str| {
        error(&format!(
            "{what}: `kind` says which (unknown_session 404, closed or expired 410)"
        ))
    };
    let paths = &mut document["paths"];
    paths["/v1/sessions"] = json!({"post": {
        "summary": "Open a stepped session: an episode whose policy is the caller, one assistant message a step",
        "description": "The job config (`config`, a file inside the data root, or `config_toml`) gives the simulated user, \
            the environment, the limits and the scenarios, loaded as a submitted job config is (the data root, the egress \
            allowlist, operator endpoints); the other fields say which scenario and persona and the seed. The answer is \
            the first observation: the opening (the policy's system prompt, the greeting, the user's first words) and the \
            tools, never the scenario's hidden fields. The episode is stored as a conversation of the config's job when it \
            ends (docs/sessions.md).",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/SessionOpen"}}}},
        "responses": {
            "201": {"description": "The first observation",
                    "headers": {"Location": {"description": "/v1/sessions/ID", "schema": {"type": "string"}}},
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/SessionObservation"}}}},
            "422": json_response("A field of the request or of its config is wrong, each named", "Problems"),
            "502": error("The episode failed as it opened (the simulated user's model, the environment); nothing stored"),
            "503": error("The server holds its most sessions (`--max-sessions`) or job configs; `kind` says which")
        }
    }});
    paths["/v1/sessions/{id}"] = json!({
        "get": {
            "summary": "A stepped session's state: ids, counts, and how it ended",
            "parameters": [session_id.clone()],
            "responses": {
                "200": json_response("The state", "SessionState"),
                "404": gone("No such session"),
                "410": gone("The session was closed or expired")
            }
        },
        "delete": {
            "summary": "Close a stepped session: its place is free; an episode not ended is dropped, nothing of it stored",
            "parameters": [session_id.clone()],
            "responses": {
                "200": json_response("The state it had, with `closed: true`", "SessionState"),
                "404": gone("No such session"),
                "410": gone("The session was closed or expired already")
            }
        }
    });
    paths["/v1/sessions/{id}/step"] = json!({"post": {
        "summary": "Step a stepped session with the policy's message: its tool calls' results, the simulated user's reply, or the end",
        "description": "At the end (`done`), the observation's metadata holds the termination, the reward's breakdown, the \
            user checks and the stored conversation's id, and `reward` the stored reward (null when unscored). A wrong \
            action is a 422 naming its field, and the session goes on as it was.",
        "parameters": [session_id],
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/SessionAction"}}}},
        "responses": {
            "200": json_response("The next observation", "SessionObservation"),
            "404": gone("No such session"),
            "409": error("The episode ended already (`kind`: ended, with its conversation id), or another step of it is running (`kind`: busy)"),
            "410": gone("The session was closed or expired"),
            "422": json_response("A field of the action is wrong, named (`action.tool_calls[0].function.name`); nothing changed", "Problems"),
            "502": error("The episode failed (the simulated user's model, the environment); it ends unstored, never with a reward of 0")
        }
    }});
    let schemas = &mut document["components"]["schemas"];
    let mut open = schema::open_request();
    if let Some(props) = open["properties"].as_object_mut() {
        props.insert("config".into(), json!({"type": "string", "description": "A job config file, relative to the data root (give this or config_toml)"}));
        props.insert("config_toml".into(), json!({"type": "string", "description": "The job config itself, as TOML; its relative paths resolve against the data root"}));
    }
    schemas["SessionOpen"] = open;
    schemas["SessionAction"] = schema::action();
    schemas["SessionObservation"] = schema::observation();
    schemas["SessionState"] = schema::state();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The paths the router registers, read from the files that register them.
    fn registered_routes() -> Vec<String> {
        let sources = [
            include_str!("mod.rs"),
            include_str!("api.rs"),
            include_str!("judging.rs"),
            include_str!("evaluations.rs"),
            include_str!("imports.rs"),
            include_str!("synthesis.rs"),
            include_str!("rollouts/mod.rs"),
            include_str!("sessions/mod.rs"),
            include_str!("ui/mod.rs"),
        ];
        let mut routes = Vec::new();
        for source in sources {
            for part in source.split(".route(").skip(1) {
                let Some(path) = part.trim_start().strip_prefix('"') else {
                    continue;
                };
                let end = path.find('"').unwrap();
                routes.push(path[..end].to_string());
            }
        }
        routes
    }

    #[test]
    fn every_registered_route_is_in_the_document() {
        let document = document();
        let paths = document["paths"].as_object().unwrap();
        let routes = registered_routes();
        assert!(routes.len() >= 17, "too few routes found: {routes:?}");
        for route in &routes {
            assert!(
                paths.contains_key(route),
                "{route} is not in the OpenAPI document"
            );
        }
        for path in paths.keys() {
            assert!(
                routes.contains(path),
                "{path} is documented but not registered"
            );
        }
    }
}
