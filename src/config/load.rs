//! Loading a job config: parse the TOML, check every field, resolve paths
//! relative to the config file, and report every problem found at once.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::file::{EndpointFile, JobFile};
use super::job::{
    CircuitBreakerConfig, DatasetConfig, EndpointConfig, Job, MockConfig, MockFault, PolicyConfig,
    Prices, Target, UserSimulatorConfig,
};
use super::problem::{line_col, Problem};

/// Read and validate a job config. Files it names (dataset, templates) are checked
/// to exist here; their contents are checked by the modules that own them.
pub fn load(path: &Path) -> Result<Job, Vec<Problem>> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        vec![Problem::in_file(
            path,
            format!("cannot read the job config: {e}"),
        )]
    })?;
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let base = parent
        .canonicalize()
        .or_else(|_| std::path::absolute(parent))
        .map_err(|e| {
            vec![Problem::in_file(
                path,
                format!("cannot resolve its folder: {e}"),
            )]
        })?;
    from_text(path, &text, &base)
}

/// The job a stored snapshot describes. Snapshots are written with absolute
/// paths, so they load the same from any working directory (workers, `--resume`).
pub fn from_snapshot(label: &str, snapshot: &str) -> Result<Job, Vec<Problem>> {
    from_text(Path::new(label), snapshot, Path::new("/"))
}

/// A job config given as TOML text rather than a file (e.g. the body of an HTTP
/// request): `label` names it in problems, relative paths resolve against `base`.
pub fn from_toml(label: &str, text: &str, base: &Path) -> Result<Job, Vec<Problem>> {
    from_text(Path::new(label), text, base)
}

/// [`from_toml`] for a config written as JSON (the same fields and tables).
pub fn from_json(label: &str, text: &str, base: &Path) -> Result<Job, Vec<Problem>> {
    let path = Path::new(label);
    let file = serde_json::from_str::<JobFile>(text).map_err(|e| {
        let location = (e.line() > 0).then(|| format!("line {}, column {}", e.line(), e.column()));
        // serde_json appends " at line L column C"; the location says it already.
        let message = e.to_string();
        let message = match message.rfind(" at line ") {
            Some(at) if location.is_some() => message[..at].to_string(),
            _ => message,
        };
        vec![Problem::new(path, location, message)]
    })?;
    from_file(path, file, base)
}

fn from_text(path: &Path, text: &str, base: &Path) -> Result<Job, Vec<Problem>> {
    let file = parse(path, text)?;
    from_file(path, file, base)
}

fn from_file(path: &Path, file: JobFile, base: &Path) -> Result<Job, Vec<Problem>> {
    let mut problems = Vec::new();
    let resolve = |p: &Path| -> PathBuf {
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            base.join(p)
        }
    };

    if file.name.trim().is_empty() {
        problems.push(Problem::at_field(
            path,
            "name",
            "is empty; give the job a name, e.g. name = \"retail-v1\"",
        ));
    }
    let database = file.database.as_str();
    if !(database.starts_with("sqlite:")
        || database.starts_with("postgres://")
        || database.starts_with("postgresql://"))
    {
        problems.push(Problem::at_field(
            path,
            "database",
            format!(
                "'{database}' is not a supported database URL; use sqlite://PATH, e.g. \
                 sqlite://usersim.db, or postgres://USER@HOST:PORT/DATABASE (postgresql:// \
                 works too), e.g. postgres://postgres@127.0.0.1:5432/usersim"
            ),
        ));
    }
    if file.concurrency == 0 {
        problems.push(Problem::at_field(path, "concurrency", "must be at least 1"));
    }
    if file.max_turns == 0 {
        problems.push(Problem::at_field(path, "max_turns", "must be at least 1"));
    }
    if file.policy.max_steps_per_turn == 0 {
        problems.push(Problem::at_field(
            path,
            "policy.max_steps_per_turn",
            "must be at least 1",
        ));
    }
    if file.dataset.samples_per_scenario == 0 {
        problems.push(Problem::at_field(
            path,
            "dataset.samples_per_scenario",
            "must be at least 1",
        ));
    }
    if file.dataset.personas_per_scenario == Some(0) {
        problems.push(Problem::at_field(
            path,
            "dataset.personas_per_scenario",
            "must be at least 1 (or left out to pair every persona with every scenario)",
        ));
    }

    let mut endpoints = BTreeMap::new();
    if file.endpoints.is_empty() {
        problems.push(Problem::at_field(
            path,
            "endpoints",
            "no endpoints are defined; add e.g. [endpoints.policy] with base_url and model",
        ));
    }
    for (name, e) in &file.endpoints {
        if let Some(endpoint) = check_endpoint(path, name, e, &mut problems) {
            endpoints.insert(name.clone(), endpoint);
        }
    }
    for (role, endpoint) in [("policy", &file.roles.policy), ("user", &file.roles.user)] {
        if !file.endpoints.contains_key(endpoint) {
            let known: Vec<&str> = file.endpoints.keys().map(String::as_str).collect();
            problems.push(Problem::at_field(
                path,
                &format!("roles.{role}"),
                format!(
                    "names endpoint '{endpoint}', which is not defined; defined endpoints: {}",
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    }
                ),
            ));
        }
    }

    let mut existing = |field: &str, p: &Path, want_dir: Option<bool>| -> PathBuf {
        let resolved = resolve(p);
        match std::fs::metadata(&resolved) {
            Err(_) => problems.push(Problem::at_field(
                path,
                field,
                format!(
                    "{} does not exist (paths are relative to the config file's folder {})",
                    resolved.display(),
                    base.display()
                ),
            )),
            Ok(meta) if want_dir == Some(false) && meta.is_dir() => {
                problems.push(Problem::at_field(
                    path,
                    field,
                    format!("{} is a folder; a file is expected", resolved.display()),
                ))
            }
            Ok(_) => {}
        }
        resolved
    };
    let scenarios = existing("dataset.scenarios", &file.dataset.scenarios, Some(false));
    let personas = existing("dataset.personas", &file.dataset.personas, None);
    let user_template = file
        .user_simulator
        .template
        .as_deref()
        .map(|t| existing("user_simulator.template", t, Some(false)));
    let policy_template = file
        .policy
        .template
        .as_deref()
        .map(|t| existing("policy.template", t, Some(false)));

    let breaker = &file.circuit_breaker;
    if breaker.window == 0 {
        problems.push(Problem::at_field(
            path,
            "circuit_breaker.window",
            "must be at least 1",
        ));
    }
    if !(breaker.max_error_rate > 0.0 && breaker.max_error_rate <= 1.0) {
        problems.push(Problem::at_field(
            path,
            "circuit_breaker.max_error_rate",
            format!(
                "{} is out of range; use a share in (0, 1], e.g. 0.5",
                breaker.max_error_rate
            ),
        ));
    }
    if !(file.lease_secs.is_finite() && file.lease_secs >= 0.5) {
        problems.push(Problem::at_field(
            path,
            "lease_secs",
            "must be at least 0.5 seconds",
        ));
    }
    let mut faults = Vec::new();
    for (i, name) in file.mock.faults.iter().enumerate() {
        match MockFault::parse(name) {
            Some(f) => faults.push(f),
            None => problems.push(Problem::at_field(
                path,
                &format!("mock.faults[{i}]"),
                format!(
                    "'{name}' is not a mock fault; use one of {}",
                    MockFault::NAMES.join(", ")
                ),
            )),
        }
    }
    if !(0.0..=1.0).contains(&file.mock.fault_rate) {
        problems.push(Problem::at_field(
            path,
            "mock.fault_rate",
            "must be between 0 and 1",
        ));
    } else if file.mock.fault_rate > 0.0 && file.mock.faults.is_empty() {
        problems.push(Problem::at_field(
            path,
            "mock.faults",
            format!(
                "fault_rate is set but no faults are listed; list some of {}",
                MockFault::NAMES.join(", ")
            ),
        ));
    }

    if !problems.is_empty() {
        return Err(problems);
    }
    // What is stored with the job: the config as parsed, every path absolute.
    let mut resolved = file.clone();
    resolved.dataset.scenarios = scenarios.clone();
    resolved.dataset.personas = personas.clone();
    resolved.user_simulator.template = user_template.clone();
    resolved.policy.template = policy_template.clone();
    for table in &mut resolved.judges {
        if let Some(toml::Value::String(template)) = table.get_mut("template") {
            if !Path::new(template.as_str()).is_absolute() {
                *template = resolve(Path::new(template.as_str())).display().to_string();
            }
        }
    }
    let snapshot = toml::to_string(&resolved).map_err(|e| {
        vec![Problem::in_file(
            path,
            format!("cannot write the config snapshot: {e}"),
        )]
    })?;
    Ok(Job {
        judges: resolved.judges,
        circuit_breaker: CircuitBreakerConfig {
            window: breaker.window,
            max_error_rate: breaker.max_error_rate,
        },
        lease: Duration::from_secs_f64(file.lease_secs),
        mock: MockConfig {
            latency: Duration::from_millis(file.mock.latency_ms),
            latency_jitter: Duration::from_millis(file.mock.latency_jitter_ms),
            fault_rate: file.mock.fault_rate,
            faults,
        },
        name: file.name,
        source: path.to_path_buf(),
        snapshot,
        seed: file.seed,
        database: file.database,
        concurrency: file.concurrency,
        max_turns: file.max_turns,
        endpoints,
        policy_endpoint: file.roles.policy,
        user_endpoint: file.roles.user,
        user_simulator: UserSimulatorConfig {
            template: user_template,
            opens: file.user_simulator.opens,
            greeting: file.user_simulator.greeting,
        },
        policy: PolicyConfig {
            template: policy_template,
            max_steps_per_turn: file.policy.max_steps_per_turn,
        },
        environment: file.environment.name,
        dataset: DatasetConfig {
            scenarios,
            personas,
            samples_per_scenario: file.dataset.samples_per_scenario,
            personas_per_scenario: file.dataset.personas_per_scenario,
        },
    })
}

fn parse(path: &Path, text: &str) -> Result<JobFile, Vec<Problem>> {
    toml::from_str::<JobFile>(text).map_err(|e| {
        let location = e.span().map(|span| {
            let (line, col) = line_col(text, span.start);
            format!("line {line}, column {col}")
        });
        vec![Problem::new(path, location, e.message().trim().to_string())]
    })
}

/// Check one `[endpoints.NAME]` table, pushing its problems; the endpoint when it has none.
/// Judges files define endpoints too, so this is shared.
pub fn check_endpoint(
    path: &Path,
    name: &str,
    e: &EndpointFile,
    problems: &mut Vec<Problem>,
) -> Option<EndpointConfig> {
    let field = |f: &str| format!("endpoints.{name}.{f}");
    let before = problems.len();
    let target = match (&e.base_url, e.mock) {
        (Some(_), true) => {
            problems.push(Problem::at_field(
                path,
                &field("mock"),
                "an endpoint is either a server (base_url) or the built-in mock (mock = true), not both",
            ));
            None
        }
        (None, false) => {
            problems.push(Problem::at_field(
                path,
                &field("base_url"),
                "is missing; set base_url = \"http://HOST:PORT/v1\" or mock = true for the built-in test double",
            ));
            None
        }
        (None, true) => Some(Target::Mock),
        (Some(url), false) => {
            if url.starts_with("http://") || url.starts_with("https://") {
                Some(Target::Url(url.trim_end_matches('/').to_string()))
            } else {
                problems.push(Problem::at_field(
                    path,
                    &field("base_url"),
                    format!("'{url}' is not an http(s) URL; e.g. http://127.0.0.1:8000/v1"),
                ));
                None
            }
        }
    };
    if e.model.trim().is_empty() {
        problems.push(Problem::at_field(
            path,
            &field("model"),
            "is empty; name the model the server serves",
        ));
    }
    let api_key = match &e.api_key_env {
        None => None,
        Some(var) => match std::env::var(var) {
            Ok(key) if !key.is_empty() => Some(key),
            _ => {
                problems.push(Problem::at_field(
                    path,
                    &field("api_key_env"),
                    format!("environment variable {var} is not set (or empty); export it or remove api_key_env"),
                ));
                None
            }
        },
    };
    if let Some(t) = e.temperature {
        if !(0.0..=2.0).contains(&t) {
            problems.push(Problem::at_field(
                path,
                &field("temperature"),
                format!("{t} is out of range; use 0.0 to 2.0"),
            ));
        }
    }
    if let Some(p) = e.top_p {
        if !(0.0..=1.0).contains(&p) || p == 0.0 {
            problems.push(Problem::at_field(
                path,
                &field("top_p"),
                format!("{p} is out of range; use a value in (0, 1]"),
            ));
        }
    }
    if e.max_tokens == 0 {
        problems.push(Problem::at_field(
            path,
            &field("max_tokens"),
            "must be at least 1",
        ));
    }
    if !(e.timeout_secs.is_finite() && e.timeout_secs > 0.0) {
        problems.push(Problem::at_field(
            path,
            &field("timeout_secs"),
            "must be a positive number of seconds",
        ));
    }
    if e.requests_per_minute == Some(0) {
        problems.push(Problem::at_field(
            path,
            &field("requests_per_minute"),
            "must be at least 1 (or left out for no limit)",
        ));
    }
    // llm::limiter lets one request take half of tokens_per_minute (so that no
    // 60 s window goes over) and estimates a request at a token per byte of its
    // body, plus 256 for the chat template, plus max_tokens.
    let least_tpm = 2 * (u64::from(e.max_tokens) + 256);
    let too_small = |tpm: &u32| u64::from(*tpm) < least_tpm;
    if let Some(tpm) = e.tokens_per_minute.filter(too_small) {
        problems.push(Problem::at_field(
            path,
            &field("tokens_per_minute"),
            format!(
                "{} leaves no room for a request: one request may take half of it, and even \
                 an empty prompt is estimated at 256 tokens plus max_tokens ({}); use at least \
                 {least_tpm} plus twice the prompt's bytes, or lower max_tokens",
                tpm, e.max_tokens
            ),
        ));
    }
    let prices = match (e.input_price_per_million, e.output_price_per_million) {
        (Some(input), Some(output)) if input >= 0.0 && output >= 0.0 => Some(Prices {
            input_per_million: input,
            output_per_million: output,
        }),
        (None, None) => None,
        _ => {
            problems.push(Problem::at_field(
                path,
                &field("input_price_per_million"),
                "give both input_price_per_million and output_price_per_million (USD, ≥ 0), or neither",
            ));
            None
        }
    };
    if e.max_in_flight == 0 {
        problems.push(Problem::at_field(
            path,
            &field("max_in_flight"),
            "must be at least 1",
        ));
    }
    if problems.len() != before {
        return None;
    }
    Some(EndpointConfig {
        name: name.to_string(),
        target: target?,
        model: e.model.clone(),
        api_key,
        temperature: e.temperature,
        top_p: e.top_p,
        max_tokens: e.max_tokens,
        timeout: Duration::from_secs_f64(e.timeout_secs),
        max_in_flight: e.max_in_flight,
        max_retries: e.max_retries,
        http2: e.http2,
        requests_per_minute: e.requests_per_minute,
        tokens_per_minute: e.tokens_per_minute,
        prices,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load_text(text: &str) -> Result<Job, Vec<Problem>> {
        let dir = std::env::temp_dir().join(format!("usersim-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("s.jsonl"), "").unwrap();
        let path = dir.join(format!("{}.toml", text.len()));
        std::fs::write(&path, text).unwrap();
        load(&path)
    }

    const MINIMAL: &str = r#"
name = "t"
[endpoints.e]
base_url = "http://127.0.0.1:1/v1"
model = "m"
[roles]
policy = "e"
user = "e"
[environment]
name = "builtin:chat"
[dataset]
scenarios = "s.jsonl"
personas = "s.jsonl"
"#;

    #[test]
    fn max_tokens_is_always_sent_because_llama_cpp_otherwise_fills_the_context() {
        let job = load_text(MINIMAL).unwrap();
        assert_eq!(job.endpoints["e"].max_tokens, 1024);
        assert_eq!(job.database, "sqlite://usersim.db");
    }

    #[test]
    fn a_stored_snapshot_rebuilds_the_same_job_from_any_directory() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/quickstart.toml");
        let job = load(&path).unwrap();
        assert!(job.dataset.scenarios.is_absolute());
        let again = from_snapshot("job 1", &job.snapshot).unwrap();
        assert_eq!(
            again.snapshot, job.snapshot,
            "a snapshot of a snapshot is itself"
        );
        let normalise = |mut j: Job| {
            j.source = PathBuf::new();
            j
        };
        assert_eq!(normalise(again), normalise(job));
    }

    #[test]
    fn judges_are_kept_as_written_with_absolute_template_paths() {
        let with_judges = format!(
            "{MINIMAL}\n[[judges]]\nname = \"mine\"\nendpoint = \"e\"\ntemplate = \"judges/mine.tera\"\nmode = \"pointwise\"\n"
        );
        let job = load_text(&with_judges).unwrap();
        assert_eq!(job.judges.len(), 1);
        let template = job.judges[0]["template"].as_str().unwrap();
        assert!(Path::new(template).is_absolute(), "{template}");
        assert!(template.ends_with("judges/mine.tera"));
        let again = from_snapshot("job 1", &job.snapshot).unwrap();
        assert_eq!(again.judges, job.judges);
    }

    #[test]
    fn an_endpoint_must_be_a_url_or_the_mock() {
        let bad = MINIMAL.replace(
            "base_url = \"http://127.0.0.1:1/v1\"",
            "base_url = \"127.0.0.1:1\"",
        );
        let problems = load_text(&bad).unwrap_err();
        assert_eq!(problems.len(), 1);
        assert_eq!(
            problems[0].location.as_deref(),
            Some("endpoints.e.base_url")
        );
        assert!(problems[0].message.contains("not an http(s) URL"));
    }

    #[test]
    fn a_tpm_limit_must_leave_room_for_a_request_of_max_tokens() {
        let small = MINIMAL.replace("model = \"m\"", "model = \"m\"\ntokens_per_minute = 2000");
        let problems = load_text(&small).unwrap_err();
        assert_eq!(
            problems[0].location.as_deref(),
            Some("endpoints.e.tokens_per_minute")
        );
        // Half of it must hold 256 + max_tokens (1024).
        let message = &problems[0].message;
        assert!(message.contains("at least 2560"), "{message}");
        let enough = MINIMAL.replace("model = \"m\"", "model = \"m\"\ntokens_per_minute = 2560");
        assert!(load_text(&enough).is_ok());
    }
}
