//! Model endpoints as written (`[endpoints.NAME]` of a job, a judges file or
//! the service's operator endpoints file). An endpoint is one of three kinds,
//! told apart by its keys, so that a mixture cannot be written:
//! - a server: `base_url` (and optionally `api_key_env`, the variable holding its key);
//! - the built-in mock model server (a test double): `mock = true`;
//! - an operator endpoint of `sparring serve --endpoints`: `operator = "NAME"`,
//!   which takes the operator's URL, model, key and limits, and may set only
//!   `temperature` and `top_p`.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use toml::de::DeValue;

use super::endpoint_file::{
    default_batch_max_attempts, default_batch_max_requests, default_batch_poll_secs, SERVER_ONLY,
};
pub use super::endpoint_file::{EndpointFile, EndpointTable};
use super::job::{Api, EndpointConfig, Target};
use super::ranges;
use super::trust::{OperatorEndpoints, Trust};
use crate::diagnostics::document::{child, fields_of, Node, Source};
use crate::diagnostics::problem::Problem;

#[derive(Debug, Deserialize)]
struct OperatorKeys {
    operator: String,
    temperature: Option<f32>,
    top_p: Option<f32>,
}

/// Read `[endpoints.NAME]` (`node`, found at `field`): its kind from its keys,
/// every key that does not belong to that kind reported at its line.
pub fn read_endpoint<'t>(
    source: &Source<'t>,
    field: &str,
    mut node: Node<'t>,
    problems: &mut Vec<Problem>,
) -> Option<EndpointFile> {
    let DeValue::Table(table) = node.get_ref() else {
        problems.push(source.at(
            node.span(),
            field,
            "is not a table; write [endpoints.NAME] with base_url and model",
        ));
        return None;
    };
    let table_keys = fields_of::<EndpointTable>();
    let before = problems.len();
    if table.contains_key("operator") {
        let known = fields_of::<OperatorKeys>();
        source.drop_unknown_keys(
            field,
            &mut node,
            known,
            &|key| {
                table_keys.contains(&key).then(|| {
                    format!(
                        "`{key}` is the operator's: an endpoint with `operator` gets the \
                         operator's URL, model, key and limits, and may set only \
                         temperature and top_p; remove `{key}`"
                    )
                })
            },
            problems,
        );
        let keys: OperatorKeys = source.deserialize(field, &node, problems)?;
        return (problems.len() == before).then_some(EndpointFile::Operator {
            operator: keys.operator,
            temperature: keys.temperature,
            top_p: keys.top_p,
        });
    }
    let is_mock = table
        .get("mock")
        .is_some_and(|m| matches!(m.get_ref(), DeValue::Boolean(true)));
    if is_mock {
        let known: Vec<&str> = table_keys
            .iter()
            .filter(|key| !SERVER_ONLY.contains(key))
            .copied()
            .collect();
        source.drop_unknown_keys(
            field,
            &mut node,
            &known,
            &|key| match key {
                "base_url" => Some(
                    "an endpoint is either a server (base_url) or the built-in mock \
                     (mock = true), not both; remove one"
                        .into(),
                ),
                "api_key_env" => {
                    Some("the built-in mock takes no API key; remove api_key_env".into())
                }
                "azure_deployment" | "azure_api_version" => Some(format!(
                    "the built-in mock is not an Azure deployment; remove {key}"
                )),
                _ => None,
            },
            problems,
        );
    } else {
        if !table.contains_key("base_url") {
            problems.push(Problem::at_field(
                &source.file,
                &child(field, "base_url"),
                "is missing; set base_url = \"http://HOST:PORT/v1\", or mock = true for the \
                 built-in test double",
            ));
        }
        source.drop_unknown_keys(field, &mut node, table_keys, &|_| None, problems);
        if problems.len() != before {
            return None;
        }
    }
    let table = source.deserialize(field, &node, problems)?;
    (problems.len() == before).then(|| EndpointFile::Table(Box::new(table)))
}

/// An `[endpoints]` table read, resolved and checked.
#[derive(Debug, Default)]
pub struct Endpoints {
    /// Every name defined, usable or not (so roles naming a broken endpoint
    /// are not also told it is undefined).
    pub names: Vec<String>,
    pub configs: BTreeMap<String, EndpointConfig>,
    /// As stored: operator endpoints resolved.
    pub snapshots: BTreeMap<String, EndpointTable>,
}

/// Read every `[endpoints.NAME]` of `node`: each by its kind, an operator
/// endpoint resolved (`operators` is `None` outside the service), each checked
/// with `trust`, except that an operator's endpoint is the operator's own and
/// reads its key from this process's environment.
pub fn read_endpoints<'t>(
    source: &Source<'t>,
    node: Node<'t>,
    trust: Trust<'_>,
    problems: &mut Vec<Problem>,
) -> Endpoints {
    let path = source.file.as_path();
    let operators = match trust {
        Trust::Submitted(boundary) => Some(&boundary.operators),
        Trust::Local => None,
    };
    let mut endpoints = Endpoints::default();
    let DeValue::Table(table) = node.into_inner() else {
        problems.push(Problem::at_field(
            path,
            "endpoints",
            "is not a table; write [endpoints.NAME] tables",
        ));
        return endpoints;
    };
    for (name, node) in table {
        let name = name.into_inner().into_owned();
        endpoints.names.push(name.clone());
        let field = child("endpoints", &name);
        let Some(written) = read_endpoint(source, &field, node, problems) else {
            continue;
        };
        let Some(resolved) = written.resolve(path, &field, operators, problems) else {
            continue;
        };
        let endpoint_trust = if written == resolved {
            trust
        } else {
            Trust::Local
        };
        if let Some(config) = check_endpoint(path, &name, &resolved, endpoint_trust, problems) {
            endpoints.configs.insert(name.clone(), config);
            if let Some(snapshot) = resolved.snapshot() {
                endpoints.snapshots.insert(name, snapshot);
            }
        }
    }
    endpoints
}

impl EndpointFile {
    /// The stored form; an operator endpoint is stored resolved, so `None`.
    pub fn snapshot(&self) -> Option<EndpointTable> {
        match self {
            EndpointFile::Table(table) => Some(EndpointTable {
                mock: table.base_url.is_none(),
                ..(**table).clone()
            }),
            EndpointFile::Operator { .. } => None,
        }
    }

    /// This endpoint with an operator endpoint replaced by the operator's own
    /// (with this endpoint's temperature and top_p, when given). Problems are
    /// pushed for a name the operator does not offer, or when there is no operator.
    pub fn resolve(
        &self,
        file: &Path,
        field: &str,
        operators: Option<&OperatorEndpoints>,
        problems: &mut Vec<Problem>,
    ) -> Option<EndpointFile> {
        let EndpointFile::Operator {
            operator,
            temperature,
            top_p,
        } = self
        else {
            return Some(self.clone());
        };
        let Some(operators) = operators else {
            problems.push(Problem::at_field(
                file,
                &child(field, "operator"),
                format!(
                    "names operator endpoint '{operator}', but operator endpoints exist only in \
                     configs submitted to `sparring serve --endpoints FILE`; give base_url and \
                     model (or mock = true) instead"
                ),
            ));
            return None;
        };
        let Some(mut resolved) = operators.get(operator).cloned() else {
            problems.push(Problem::at_field(
                file,
                &child(field, "operator"),
                format!(
                    "'{operator}' is not an operator endpoint of this server; it offers: {}",
                    operators.names()
                ),
            ));
            return None;
        };
        if let EndpointFile::Table(table) = &mut resolved {
            table.temperature = temperature.or(table.temperature);
            table.top_p = top_p.or(table.top_p);
        }
        Some(resolved)
    }
}

/// Check one endpoint (already resolved: not an operator kind), pushing its
/// problems; the endpoint when it has none. Problems name `endpoints.NAME.FIELD`
/// (`prefix` = `endpoints`).
pub fn check_endpoint(
    file: &Path,
    name: &str,
    endpoint: &EndpointFile,
    trust: Trust<'_>,
    problems: &mut Vec<Problem>,
) -> Option<EndpointConfig> {
    let field = |f: &str| format!("endpoints.{name}.{f}");
    let before = problems.len();
    let s = match endpoint {
        EndpointFile::Operator { .. } => {
            problems.push(Problem::at_field(
                file,
                &field("operator"),
                "operator endpoints are resolved before they are checked",
            ));
            return None;
        }
        EndpointFile::Table(table) => table,
    };
    let azure = super::azure::check_azure(
        file,
        &field,
        s.azure_deployment.as_deref(),
        s.azure_api_version.as_deref(),
        problems,
    );
    let target = match &s.base_url {
        None => Some(Target::Mock),
        Some(url) if url.starts_with("http://") || url.starts_with("https://") => {
            if let Trust::Submitted(boundary) = trust {
                problems.extend(boundary.check_url(file, &field("base_url"), url));
            }
            Some(Target::Url(url.trim_end_matches('/').to_string()))
        }
        Some(url) => {
            problems.push(Problem::at_field(
                file,
                &field("base_url"),
                format!("'{url}' is not an http(s) URL; e.g. http://127.0.0.1:8000/v1"),
            ));
            None
        }
    };
    let api_key = match (&s.api_key_env, trust) {
        (None, _) => None,
        (Some(_), Trust::Submitted(boundary)) => {
            problems.push(Problem::at_field(
                file,
                &field("api_key_env"),
                format!(
                    "a config submitted to the service may not read the server's \
                     environment; to use a key the server holds, name one of its \
                     operator endpoints instead (operator = \"NAME\"; this server \
                     offers: {}), or remove api_key_env",
                    boundary.operators.names()
                ),
            ));
            None
        }
        (Some(var), Trust::Local) => match std::env::var(var) {
            Ok(key) if !key.is_empty() => Some(key),
            _ => {
                problems.push(Problem::at_field(
                    file,
                    &field("api_key_env"),
                    format!(
                        "environment variable {var} is not set (or empty); export it \
                         or remove api_key_env"
                    ),
                ));
                None
            }
        },
    };
    if s.model.trim().is_empty() {
        problems.push(Problem::at_field(
            file,
            &field("model"),
            "is empty; name the model the server serves",
        ));
    }
    check_settings(file, &field, s, problems);
    check_api(file, &field, s, azure.is_some(), problems);
    if problems.len() != before {
        return None;
    }
    Some(EndpointConfig {
        name: name.to_string(),
        target: target?,
        api_key,
        azure,
        ca_pem: None,
        settings: (**s).clone(),
    })
}

/// `api` and `capture_tokens` together: token capture asks a chat
/// completions server (vLLM) for its token fields, while a Responses API
/// server returns them by its own configuration; Azure deployments are
/// reached through chat completions only.
fn check_api(
    file: &Path,
    field: &dyn Fn(&str) -> String,
    s: &EndpointTable,
    azure: bool,
    problems: &mut Vec<Problem>,
) {
    if s.api == Api::Responses && s.capture_tokens {
        problems.push(Problem::at_field(
            file,
            &field("capture_tokens"),
            "applies to api = \"chat\" (it asks vLLM for token ids); a Responses API server \
             returns token fields when it is configured to (NeMo Gym's model servers with \
             return_token_id_information: true), and sparring reads them whenever they come; \
             remove capture_tokens",
        ));
    }
    if s.api == Api::Responses && azure {
        problems.push(Problem::at_field(
            file,
            &field("api"),
            "\"responses\" is not offered for Azure deployments here (they are called through \
             chat completions); remove api, or give the deployment's OpenAI-compatible base_url \
             without azure_deployment",
        ));
    }
    if s.api == Api::Responses && s.batch {
        problems.push(Problem::at_field(
            file,
            &field("batch"),
            "the Batch API path sends chat completions; an endpoint with api = \"responses\" \
             cannot judge through it; remove batch or api",
        ));
    }
}

/// Every number of an endpoint within its range.
fn check_settings(
    file: &Path,
    field: &dyn Fn(&str) -> String,
    s: &EndpointTable,
    problems: &mut Vec<Problem>,
) {
    if let Some(t) = s.temperature {
        problems.extend(ranges::TEMPERATURE.problem(file, &field("temperature"), f64::from(t)));
    }
    if let Some(p) = s.top_p {
        problems.extend(ranges::TOP_P.problem(file, &field("top_p"), f64::from(p)));
    }
    problems.extend(ranges::MAX_TOKENS.problem(file, &field("max_tokens"), s.max_tokens));
    problems.extend(ranges::TIMEOUT_SECS.problem(file, &field("timeout_secs"), s.timeout_secs));
    problems.extend(ranges::MAX_IN_FLIGHT.problem(file, &field("max_in_flight"), s.max_in_flight));
    problems.extend(ranges::MAX_RETRIES.problem(file, &field("max_retries"), s.max_retries));
    if let Some(rpm) = s.requests_per_minute {
        problems.extend(ranges::REQUESTS_PER_MINUTE.problem(
            file,
            &field("requests_per_minute"),
            rpm,
        ));
    }
    // llm::limiter lets one request take the whole of tokens_per_minute (it
    // then runs alone) and, until the server has reported usage, estimates a
    // request at a token per byte of its body, plus 256 for the chat
    // template, plus max_tokens.
    let least_tpm = u64::from(s.max_tokens) + 256;
    if let Some(tpm) = s.tokens_per_minute {
        if u64::from(tpm) < least_tpm {
            problems.push(Problem::at_field(
                file,
                &field("tokens_per_minute"),
                format!(
                    "{} leaves no room for a request: even an empty prompt is first \
                     estimated at 256 tokens plus max_tokens ({}); use at least {least_tpm} \
                     plus the prompt's bytes, or lower max_tokens",
                    tpm, s.max_tokens
                ),
            ));
        }
    }
    check_batch(file, field, s, problems);
    check_prices(
        file,
        field,
        ("input_price_per_million", "output_price_per_million"),
        (s.input_price_per_million, s.output_price_per_million),
        problems,
    );
}

/// A pair of prices: both in range, or neither given.
fn check_prices(
    file: &Path,
    field: &dyn Fn(&str) -> String,
    (input_key, output_key): (&str, &str),
    prices: (Option<f64>, Option<f64>),
    problems: &mut Vec<Problem>,
) {
    match prices {
        (Some(input), Some(output)) => {
            problems.extend(ranges::PRICE_PER_MILLION.problem(file, &field(input_key), input));
            problems.extend(ranges::PRICE_PER_MILLION.problem(file, &field(output_key), output));
        }
        (None, None) => {}
        _ => problems.push(Problem::at_field(
            file,
            &field(input_key),
            format!(
                "give both {input_key} and {output_key} (USD, {}), or neither",
                ranges::PRICE_PER_MILLION
            ),
        )),
    }
}

/// The batch keys: their ranges, both batch prices or neither, and no batch
/// key without `batch = true`.
fn check_batch(
    file: &Path,
    field: &dyn Fn(&str) -> String,
    s: &EndpointTable,
    problems: &mut Vec<Problem>,
) {
    problems.extend(ranges::BATCH_POLL_SECS.problem(
        file,
        &field("batch_poll_secs"),
        s.batch_poll_secs,
    ));
    problems.extend(ranges::BATCH_MAX_REQUESTS.problem(
        file,
        &field("batch_max_requests"),
        s.batch_max_requests,
    ));
    problems.extend(ranges::BATCH_MAX_ATTEMPTS.problem(
        file,
        &field("batch_max_attempts"),
        s.batch_max_attempts,
    ));
    check_prices(
        file,
        field,
        (
            "batch_input_price_per_million",
            "batch_output_price_per_million",
        ),
        (
            s.batch_input_price_per_million,
            s.batch_output_price_per_million,
        ),
        problems,
    );
    let batch_keys_set = s.batch_input_price_per_million.is_some()
        || s.batch_poll_secs != default_batch_poll_secs()
        || s.batch_max_requests != default_batch_max_requests()
        || s.batch_max_attempts != default_batch_max_attempts();
    if batch_keys_set && !s.batch {
        problems.push(Problem::at_field(
            file,
            &field("batch"),
            "batch keys are set but batch is not; set batch = true to judge through the \
             Batch API, or remove the batch_* keys",
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::service::Boundary;

    fn read(text: &str) -> (Option<EndpointFile>, Vec<Problem>) {
        let source = Source::toml("e.toml", text);
        let table = source.parse().unwrap();
        let node = Node::new(0..text.len(), DeValue::Table(table));
        let mut problems = Vec::new();
        let endpoint = read_endpoint(&source, "endpoints.e", node, &mut problems);
        (endpoint, problems)
    }

    #[test]
    fn the_kind_follows_from_the_keys() {
        let (e, p) = read("base_url = \"http://h/v1\"\nmodel = \"m\"\nmock = false");
        assert!(
            matches!(&e, Some(EndpointFile::Table(t)) if t.base_url.is_some() && !t.mock),
            "{p:?}"
        );
        let (e, _) = read("mock = true\nmodel = \"m\"\nhttp2 = true");
        assert!(matches!(&e, Some(EndpointFile::Table(t)) if t.base_url.is_none() && t.mock));
        let (e, _) = read("operator = \"gpt\"\ntemperature = 0.2");
        assert!(matches!(e, Some(EndpointFile::Operator { .. })));
    }

    #[test]
    fn keys_of_another_kind_are_each_reported_at_their_line() {
        let (e, p) =
            read("mock = true\nmodel = \"m\"\nbase_url = \"http://h\"\napi_key_env = \"K\"");
        assert!(e.is_none());
        assert_eq!(p.len(), 2, "{p:?}");
        assert_eq!(p[0].location.as_deref(), Some("line 4, column 1"));
        assert!(p[0].message.contains("no API key"), "{p:?}");
        assert!(p[1].message.contains("not both"), "{p:?}");
        let (_, p) = read("operator = \"gpt\"\nmodel = \"m\"\nbase_url = \"http://h\"");
        assert_eq!(p.len(), 2, "{p:?}");
        assert!(p[0].message.contains("is the operator's"), "{p:?}");
    }

    #[test]
    fn a_submitted_endpoint_may_not_name_a_key_variable() {
        let (e, _) = read("base_url = \"http://h/v1\"\nmodel = \"m\"\napi_key_env = \"HOME\"");
        let boundary = Boundary::new(std::env::temp_dir(), OperatorEndpoints::default());
        let mut problems = Vec::new();
        let config = check_endpoint(
            Path::new("body"),
            "e",
            &e.unwrap(),
            Trust::Submitted(&boundary),
            &mut problems,
        );
        assert!(config.is_none());
        assert_eq!(
            problems[0].location.as_deref(),
            Some("endpoints.e.api_key_env")
        );
        assert!(!problems[0]
            .message
            .contains(&std::env::var("HOME").unwrap()));
    }

    #[test]
    fn every_number_is_checked_against_its_range() {
        let (e, _) = read(
            "base_url = \"http://h/v1\"\nmodel = \"m\"\ntimeout_secs = 1e20\nmax_in_flight = 0\n\
             temperature = nan\ntop_p = 0.0\nmax_retries = 1000\nrequests_per_minute = 0\n\
             input_price_per_million = -1.0\noutput_price_per_million = inf",
        );
        let mut problems = Vec::new();
        check_endpoint(
            Path::new("e.toml"),
            "e",
            &e.unwrap(),
            Trust::Local,
            &mut problems,
        );
        let fields: Vec<&str> = problems
            .iter()
            .map(|p| p.location.as_deref().unwrap())
            .collect();
        assert_eq!(
            fields,
            [
                "endpoints.e.temperature",
                "endpoints.e.top_p",
                "endpoints.e.timeout_secs",
                "endpoints.e.max_in_flight",
                "endpoints.e.max_retries",
                "endpoints.e.requests_per_minute",
                "endpoints.e.input_price_per_million",
                "endpoints.e.output_price_per_million",
            ]
        );
    }

    fn checked(text: &str) -> (Option<EndpointConfig>, Vec<String>) {
        let (e, p) = read(text);
        assert!(p.is_empty(), "{p:?}");
        let mut problems = Vec::new();
        let config = check_endpoint(
            Path::new("e.toml"),
            "e",
            &e.unwrap(),
            Trust::Local,
            &mut problems,
        );
        let fields = problems
            .iter()
            .map(|p| p.location.clone().unwrap_or_default())
            .collect();
        (config, fields)
    }

    #[test]
    fn batch_keys_are_checked_against_their_ranges() {
        let (config, fields) = checked(
            "base_url = \"http://h/v1\"\nmodel = \"m\"\nbatch = true\nbatch_poll_secs = 0.0\n\
             batch_max_requests = 50001\nbatch_max_attempts = 0\n\
             batch_input_price_per_million = 1.0",
        );
        assert!(config.is_none());
        assert_eq!(
            fields,
            [
                "endpoints.e.batch_poll_secs",
                "endpoints.e.batch_max_requests",
                "endpoints.e.batch_max_attempts",
                "endpoints.e.batch_input_price_per_million",
            ]
        );
    }

    #[test]
    fn a_batch_endpoint_carries_its_settings_and_batch_prices() {
        let (config, fields) = checked(
            "base_url = \"http://h/v1\"\nmodel = \"m\"\nbatch = true\nbatch_poll_secs = 2\n\
             batch_max_requests = 1000\nbatch_input_price_per_million = 1.25\n\
             batch_output_price_per_million = 5.0",
        );
        assert!(fields.is_empty(), "{fields:?}");
        let batch = config.unwrap().batch().unwrap();
        assert_eq!(batch.poll, std::time::Duration::from_secs(2));
        assert_eq!(batch.max_requests, 1000);
        assert_eq!(batch.max_attempts, 3);
        assert_eq!(
            batch.prices,
            Some(crate::config::Prices {
                input_per_million: 1.25,
                output_per_million: 5.0
            })
        );
    }

    #[test]
    fn batch_keys_without_batch_are_a_problem_and_no_batch_keys_leave_the_snapshot_as_it_was() {
        let (_, fields) =
            checked("base_url = \"http://h/v1\"\nmodel = \"m\"\nbatch_max_requests = 10");
        assert_eq!(fields, ["endpoints.e.batch"]);
        let (e, _) = read("base_url = \"http://h/v1\"\nmodel = \"m\"");
        let text = serde_json::to_string(&e.unwrap().snapshot().unwrap()).unwrap();
        assert!(!text.contains("batch"), "{text}");
    }

    #[test]
    fn api_responses_is_read_kept_in_the_snapshot_and_refuses_capture_tokens_azure_and_batch() {
        let (config, fields) =
            checked("base_url = \"http://h/v1\"\nmodel = \"m\"\napi = \"responses\"");
        assert!(fields.is_empty(), "{fields:?}");
        assert_eq!(config.unwrap().settings.api, Api::Responses);
        let (e, _) = read("base_url = \"http://h/v1\"\nmodel = \"m\"\napi = \"responses\"");
        let stored = toml::to_string(&e.unwrap().snapshot().unwrap()).unwrap();
        assert!(stored.contains("api = \"responses\""), "{stored}");
        let (_, fields) = checked(
            "base_url = \"http://h/v1\"\nmodel = \"m\"\napi = \"responses\"\ncapture_tokens = true\n\
             batch = true",
        );
        assert_eq!(fields, ["endpoints.e.capture_tokens", "endpoints.e.batch"]);
        let (config, fields) =
            checked("base_url = \"http://h/v1\"\nmodel = \"m\"\ncapture_tokens = true");
        assert!(fields.is_empty(), "{fields:?}");
        assert!(config.unwrap().settings.capture_tokens);
        let (_, p) = read("base_url = \"http://h/v1\"\nmodel = \"m\"\napi = \"completions\"");
        assert!(p[0].message.contains("responses"), "{p:?}");
    }

    #[test]
    fn without_api_or_capture_tokens_the_snapshot_is_as_it_was() {
        let (e, _) = read("base_url = \"http://h/v1\"\nmodel = \"m\"");
        let text = serde_json::to_string(&e.unwrap().snapshot().unwrap()).unwrap();
        assert!(!text.contains("api") && !text.contains("capture"), "{text}");
    }

    #[test]
    fn batch_keys_survive_the_stored_snapshot_so_a_resumed_job_batches_the_same() {
        let text =
            "base_url = \"http://h/v1\"\nmodel = \"m\"\nbatch = true\nbatch_poll_secs = 2.5\n\
                    batch_max_attempts = 5\nbatch_input_price_per_million = 1.0\n\
                    batch_output_price_per_million = 2.0";
        let (written, _) = read(text);
        let written = written.unwrap();
        let stored = toml::to_string(&written.snapshot().unwrap()).unwrap();
        let (again, p) = read(&stored);
        assert!(p.is_empty(), "{p:?}");
        assert_eq!(again.unwrap(), written);
    }
}
