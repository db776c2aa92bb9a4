//! Loading a job config: read each table with the position of its keys, check
//! every field and number, resolve paths relative to the config file (inside
//! the data root for a config submitted to the service), and report every
//! problem found at once.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use toml::de::DeTable;

use super::endpoint::{read_endpoints, Endpoints};
use super::environment::{check_dataset_format, read_environment};
use super::file::{
    CircuitBreakerFile, DatasetFile, JobHead, JobSnapshot, MockConfig, PersonaTableFile,
    PolicyFile, RolesFile, UserSimulatorFile,
};
use super::job::{EnvironmentConfig, Job, MockFault};
use super::paths::{Resolver, Want};
use super::policy::PolicyKind;
use super::ranges;
use super::service::Trust;
use super::tables::Tables;
use crate::diagnostics::document::{json_as_toml, read_config_file, Source};
use crate::diagnostics::problem::Problem;

/// The tables of a job config, besides the keys of [`JobHead`].
const TABLES: &[&str] = &[
    "endpoints",
    "roles",
    "user_simulator",
    "policy",
    "environment",
    "dataset",
    "persona_table",
    "circuit_breaker",
    "mock",
    "judges",
];

/// Read and validate a job config. Files it names (dataset, templates) are checked
/// to exist here; their contents are checked by the modules that own them.
pub fn load(path: &Path) -> Result<Job, Vec<Problem>> {
    let (text, base) = read_config_file(path, "the job config")?;
    from_source(Source::toml(path, &text), &base, Trust::Local)
}

/// The job a stored snapshot describes. Snapshots are written with absolute
/// paths, so they load the same from any working directory (workers, `--resume`).
pub fn from_snapshot(label: &str, snapshot: &str) -> Result<Job, Vec<Problem>> {
    from_source(Source::toml(label, snapshot), Path::new("/"), Trust::Local)
}

/// A job config given as TOML text rather than a file (e.g. the body of an HTTP
/// request): `label` names it in problems, relative paths resolve against `base`.
pub fn from_toml(
    label: &str,
    text: &str,
    base: &Path,
    trust: Trust<'_>,
) -> Result<Job, Vec<Problem>> {
    from_source(Source::toml(label, text), base, trust)
}

/// [`from_toml`] for a config written as JSON (the same fields and tables);
/// its problems name fields rather than lines.
pub fn from_json(
    label: &str,
    text: &str,
    base: &Path,
    trust: Trust<'_>,
) -> Result<Job, Vec<Problem>> {
    let rendered = json_as_toml(Path::new(label), text)?;
    from_source(Source::rendered(label, &rendered), base, trust)
}

/// Every table of a job config as written, each `None` when it had problems.
struct Written {
    head: Option<JobHead>,
    endpoints: Endpoints,
    roles: Option<RolesFile>,
    user_simulator: Option<UserSimulatorFile>,
    policy: Option<PolicyFile>,
    environment: Option<EnvironmentConfig>,
    dataset: Option<DatasetFile>,
    /// `Some(None)`: not given; `None`: given with problems.
    persona_table: Option<Option<PersonaTableFile>>,
    breaker: Option<CircuitBreakerFile>,
    mock: Option<MockConfig>,
    judges: Vec<toml::Table>,
}

/// Read every table of `root`, each with its own problems, so that a problem
/// in one table hides none in another.
fn read_tables<'t>(
    source: &Source<'t>,
    mut root: DeTable<'t>,
    base: &Path,
    trust: Trust<'_>,
    problems: &mut Vec<Problem>,
) -> Written {
    let path = source.file.as_path();
    let mut tables = Tables::take(&mut root, TABLES);
    let head: Option<JobHead> = source.read_head(root, TABLES, problems);
    let endpoints = match tables.required(
        path,
        "endpoints",
        "[endpoints.NAME] with base_url and model (or mock = true)",
        problems,
    ) {
        Some(node) => {
            let endpoints = read_endpoints(source, node, trust, problems);
            if endpoints.names.is_empty() {
                problems.push(Problem::at_field(
                    path,
                    "endpoints",
                    "no endpoints are defined; add e.g. [endpoints.policy] with base_url and model",
                ));
            }
            endpoints
        }
        None => Endpoints::default(),
    };
    let roles = tables
        .required(
            path,
            "roles",
            "[roles] with policy = \"ENDPOINT\" and user = \"ENDPOINT\"",
            problems,
        )
        .and_then(|node| source.typed("roles", node, problems));
    let user_simulator = tables.section(source, "user_simulator", problems);
    let policy = tables.section(source, "policy", problems);
    let environment = tables
        .required(
            path,
            "environment",
            "[environment] with name = \"builtin:retail\"",
            problems,
        )
        .and_then(|node| read_environment(source, node, base, trust, problems));
    let dataset = tables
        .required(
            path,
            "dataset",
            "[dataset] with scenarios and personas",
            problems,
        )
        .and_then(|node| source.typed("dataset", node, problems));
    let persona_table = match tables.optional("persona_table") {
        None => Some(None),
        Some(node) => source.typed("persona_table", node, problems).map(Some),
    };
    let breaker = tables.section(source, "circuit_breaker", problems);
    let mock = tables.section(source, "mock", problems);
    // As written: the judge module checks them.
    let judges = tables
        .section(source, "judges", problems)
        .unwrap_or_default();
    Written {
        head,
        endpoints,
        roles,
        user_simulator,
        policy,
        environment,
        dataset,
        persona_table,
        breaker,
        mock,
        judges,
    }
}

/// `[user_simulator] drop_flagged` names only flags the checks raise.
fn check_user_flags(path: &Path, names: &[String], problems: &mut Vec<Problem>) {
    for name in names {
        if !super::file::USER_FLAG_NAMES.contains(&name.as_str()) {
            problems.push(Problem::at_field(
                path,
                "user_simulator.drop_flagged",
                format!(
                    "'{name}' is not a simulated-user flag; the flags are: {}",
                    super::file::USER_FLAG_NAMES.join(", ")
                ),
            ));
        }
    }
}

impl Written {
    /// What can be checked of each table that was read: names and numbers;
    /// and the policy's kind, read once here for the job to be assembled with.
    fn check(&self, path: &Path, problems: &mut Vec<Problem>) -> Option<PolicyKind> {
        let mut policy_kind = None;
        if let Some(head) = &self.head {
            check_head(path, head, problems);
        }
        if let Some(roles) = &self.roles {
            check_roles(path, roles, &self.endpoints.names, problems);
            if let Some(environment) = &self.environment {
                check_tools_role(path, roles, environment, problems);
            }
        }
        if let Some(user_simulator) = &self.user_simulator {
            check_user_flags(path, &user_simulator.drop_flagged, problems);
        }
        if let Some(policy) = &self.policy {
            problems.extend(ranges::MAX_STEPS_PER_TURN.problem(
                path,
                "policy.max_steps_per_turn",
                policy.max_steps_per_turn,
            ));
            policy_kind = policy.kind(path, problems);
        }
        if let Some(dataset) = &self.dataset {
            check_dataset(path, dataset, problems);
            let mode = self
                .user_simulator
                .as_ref()
                .and_then(|u| u.mode)
                .unwrap_or_default();
            let nemo_gym = self
                .environment
                .as_ref()
                .map(|e| matches!(e, EnvironmentConfig::NemoGym(_)));
            check_dataset_format(path, dataset, nemo_gym, mode, problems);
            if let Some(table) = &self.persona_table {
                super::persona_table::check(path, dataset, table.as_ref(), problems);
            }
        }
        if let Some(breaker) = &self.breaker {
            problems.extend(ranges::BREAKER_WINDOW.problem(
                path,
                "circuit_breaker.window",
                breaker.window,
            ));
            if let Some(mut problem) = ranges::BREAKER_RATE.problem(
                path,
                "circuit_breaker.max_error_rate",
                breaker.max_error_rate,
            ) {
                problem
                    .message
                    .push_str(", a share of the window, e.g. 0.5");
                problems.push(problem);
            }
        }
        if let Some(mock) = &self.mock {
            check_mock(path, mock, problems);
        }
        policy_kind
    }
}

/// Resolve every path of `written` in place (the judges' templates too);
/// `false` when one could not be (a problem says why).
fn resolve_paths(
    resolver: &Resolver<'_>,
    written: &mut Written,
    problems: &mut Vec<Problem>,
) -> bool {
    let (scenarios, rows, personas, replay) = match written.dataset.as_mut() {
        Some(DatasetFile {
            scenarios,
            rows,
            personas,
            replay,
            ..
        }) => {
            // Rows are read only without scenarios (`check_dataset_format`
            // reports both).
            let rows = rows.as_mut().filter(|_| scenarios.is_none());
            (scenarios.as_mut(), rows, personas.as_mut(), replay.as_mut())
        }
        None => (None, None, None, None),
    };
    let tools = match written.environment.as_mut() {
        Some(EnvironmentConfig::Simulated(simulated)) => Some(&mut simulated.tools),
        _ => None,
    };
    let user_template = written
        .user_simulator
        .as_mut()
        .and_then(|u| u.template.as_mut());
    let policy_template = written.policy.as_mut().and_then(|p| p.template.as_mut());
    let mut ok = true;
    for (field, path, want) in [
        ("dataset.scenarios", scenarios, Want::File),
        ("dataset.rows", rows, Want::File),
        ("dataset.personas", personas, Want::FileOrFolder),
        ("dataset.replay", replay, Want::File),
        ("user_simulator.template", user_template, Want::File),
        ("policy.template", policy_template, Want::File),
        ("environment.tools", tools, Want::File),
    ] {
        let Some(path) = path else { continue };
        match resolver.existing(field, path, want, problems) {
            Some(resolved) => *path = resolved,
            None => ok = false,
        }
    }
    for (i, table) in written.judges.iter_mut().enumerate() {
        if let Some(toml::Value::String(template)) = table.get_mut("template") {
            let field = format!("judges[{i}].template");
            if let Some(resolved) = resolver.resolve(&field, Path::new(template.as_str()), problems)
            {
                *template = resolved.display().to_string();
            }
        }
    }
    ok
}

fn from_source(source: Source<'_>, base: &Path, trust: Trust<'_>) -> Result<Job, Vec<Problem>> {
    let path = source.file.as_path();
    let root = source.parse()?;
    let mut problems = Vec::new();
    let mut written = read_tables(&source, root, base, trust, &mut problems);
    let policy_kind = written.check(path, &mut problems);
    let resolver = Resolver {
        file: path,
        base,
        trust,
    };
    let paths_ok = resolve_paths(&resolver, &mut written, &mut problems);
    let Written {
        head: Some(head),
        endpoints,
        roles: Some(roles),
        user_simulator: Some(user_simulator),
        policy: Some(policy),
        environment: Some(mut environment),
        dataset: Some(dataset),
        persona_table: Some(persona_table),
        breaker: Some(breaker),
        mock: Some(mock),
        judges,
    } = written
    else {
        return Err(problems);
    };
    // Without scenarios or rows, `check_dataset_format` has said so.
    let data_given = dataset.scenarios.is_some() || dataset.rows.is_some();
    let (Some(policy_kind), true, true, true) =
        (policy_kind, data_given, paths_ok, problems.is_empty())
    else {
        return Err(problems);
    };

    if let EnvironmentConfig::NemoGym(c) = &mut environment {
        c.default_name = super::environment_name::name_of_rows(dataset.rows.as_deref());
    }
    // What is stored with the job: the config as parsed, every path absolute.
    let snapshot = JobSnapshot {
        name: head.name.clone(),
        seed: head.seed,
        database: head.database.clone(),
        concurrency: head.concurrency,
        max_turns: head.max_turns,
        endpoints: endpoints.snapshots,
        roles: roles.clone(),
        user_simulator: user_simulator.clone(),
        policy: policy.clone(),
        environment: environment.clone(),
        dataset: dataset.clone(),
        circuit_breaker: breaker,
        lease_secs: head.lease_secs,
        mock: mock.clone(),
        persona_table: persona_table.clone(),
        judges: judges.clone(),
    };
    let snapshot = toml::to_string(&snapshot).map_err(|e| {
        vec![Problem::in_file(
            path,
            format!("cannot write the config snapshot: {e}"),
        )]
    })?;
    Ok(Job {
        judges,
        text: Arc::from(source.text),
        text_is_rendered: !source.by_line(),
        base: base.to_path_buf(),
        circuit_breaker: breaker,
        lease: Duration::from_secs_f64(head.lease_secs),
        mock,
        name: head.name,
        source: path.to_path_buf(),
        snapshot,
        seed: head.seed,
        database: head.database,
        concurrency: head.concurrency,
        max_turns: head.max_turns,
        endpoints: endpoints.configs,
        policy_endpoint: roles.policy,
        user_endpoint: roles.user,
        tools_endpoint: roles.tools,
        user_simulator,
        policy: PolicyFile {
            checked: policy_kind,
            ..policy
        },
        environment,
        dataset: DatasetFile {
            persona_table,
            ..dataset
        },
    })
}

/// Each role names a defined endpoint.
fn check_roles(path: &Path, roles: &RolesFile, names: &[String], problems: &mut Vec<Problem>) {
    let roles_named = [
        ("policy", Some(&roles.policy)),
        ("user", Some(&roles.user)),
        ("tools", roles.tools.as_ref()),
    ];
    for (role, endpoint) in roles_named
        .into_iter()
        .filter_map(|(role, e)| e.map(|e| (role, e)))
    {
        if !names.contains(endpoint) {
            problems.push(Problem::at_field(
                path,
                &format!("roles.{role}"),
                format!(
                    "names endpoint '{endpoint}', which is not defined; defined endpoints: {}",
                    if names.is_empty() {
                        "none".to_string()
                    } else {
                        names.join(", ")
                    }
                ),
            ));
        }
    }
}

/// A `simulated` environment needs `[roles] tools`; nothing else uses it.
fn check_tools_role(
    path: &Path,
    roles: &RolesFile,
    environment: &EnvironmentConfig,
    problems: &mut Vec<Problem>,
) {
    let simulated = matches!(environment, EnvironmentConfig::Simulated(_));
    match (&roles.tools, simulated) {
        (None, true) => problems.push(Problem::at_field(
            path,
            "roles.tools",
            "is missing; [environment] kind = \"simulated\" needs an endpoint whose model \
             plays the tools, e.g. tools = \"policy\" (any endpoint of [endpoints])",
        )),
        (Some(_), false) => problems.push(Problem::at_field(
            path,
            "roles.tools",
            "is only used with [environment] kind = \"simulated\" (a model playing the \
             tools); remove it, or make the environment simulated",
        )),
        _ => {}
    }
}

/// The dataset's numbers.
fn check_dataset(path: &Path, dataset: &DatasetFile, problems: &mut Vec<Problem>) {
    problems.extend(ranges::SAMPLES_PER_SCENARIO.problem(
        path,
        "dataset.samples_per_scenario",
        dataset.samples_per_scenario,
    ));
    if let Some(n) = dataset.personas_per_scenario {
        if let Some(mut problem) =
            ranges::PERSONAS_PER_SCENARIO.problem(path, "dataset.personas_per_scenario", n)
        {
            problem
                .message
                .push_str(" (or leave it out to pair every persona with every scenario)");
            problems.push(problem);
        }
    }
}

/// The top-level numbers and names.
fn check_head(path: &Path, head: &JobHead, problems: &mut Vec<Problem>) {
    if head.name.trim().is_empty() {
        problems.push(Problem::at_field(
            path,
            "name",
            "is empty; give the job a name, e.g. name = \"retail-v1\"",
        ));
    }
    let database = head.database.as_str();
    if !(database.starts_with("sqlite:")
        || database.starts_with("postgres://")
        || database.starts_with("postgresql://"))
    {
        problems.push(Problem::at_field(
            path,
            "database",
            format!(
                "'{database}' is not a supported database URL; use sqlite://PATH, e.g. \
                 sqlite://sparring.db, or postgres://USER@HOST:PORT/DATABASE (postgresql:// \
                 works too), e.g. postgres://postgres@127.0.0.1:5432/sparring"
            ),
        ));
    }
    problems.extend(ranges::CONCURRENCY.problem(path, "concurrency", head.concurrency));
    problems.extend(ranges::MAX_TURNS.problem(path, "max_turns", head.max_turns));
    problems.extend(ranges::LEASE_SECS.problem(path, "lease_secs", head.lease_secs));
}

/// The mock's knobs.
pub(super) fn check_mock(path: &Path, mock: &MockConfig, problems: &mut Vec<Problem>) {
    problems.extend(ranges::MOCK_LATENCY_MS.problem(path, "mock.latency_ms", mock.latency_ms));
    problems.extend(ranges::MOCK_LATENCY_MS.problem(
        path,
        "mock.batch_completion_delay_ms",
        mock.batch_completion_delay_ms,
    ));
    problems.extend(ranges::MOCK_FAULT_RATE.problem(
        path,
        "mock.batch_fail_share",
        mock.batch_fail_share,
    ));
    for (key, list) in [
        ("mock.batch_expire", &mock.batch_expire),
        ("mock.batch_cancel", &mock.batch_cancel),
    ] {
        for (i, n) in list.iter().enumerate() {
            problems.extend(ranges::MOCK_BATCH_NUMBER.problem(path, &format!("{key}[{i}]"), *n));
        }
    }
    problems.extend(ranges::MOCK_LATENCY_MS.problem(
        path,
        "mock.latency_jitter_ms",
        mock.latency_jitter_ms,
    ));
    if let Some(problem) = ranges::MOCK_FAULT_RATE.problem(path, "mock.fault_rate", mock.fault_rate)
    {
        problems.push(problem);
    } else if mock.fault_rate > 0.0 && mock.faults.is_empty() {
        problems.push(Problem::at_field(
            path,
            "mock.faults",
            format!(
                "fault_rate is set but no faults are listed; list some of {}",
                MockFault::NAMES.join(", ")
            ),
        ));
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    fn load_text(text: &str) -> Result<Job, Vec<Problem>> {
        let dir = std::env::temp_dir().join(format!("sparring-config-{}", std::process::id()));
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

    fn locations(problems: &[Problem]) -> Vec<&str> {
        problems
            .iter()
            .map(|p| p.location.as_deref().unwrap_or(""))
            .collect()
    }

    #[test]
    fn max_tokens_is_always_sent_because_llama_cpp_otherwise_fills_the_context() {
        let job = load_text(MINIMAL).unwrap();
        assert_eq!(job.endpoints["e"].settings.max_tokens, 1024);
        assert_eq!(job.database, "sqlite://sparring.db");
    }

    #[test]
    fn a_stored_snapshot_rebuilds_the_same_job_from_any_directory() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("quickstart.toml");
        let job = load(&path).unwrap();
        assert!(job.dataset.data().is_absolute());
        let again = from_snapshot("job 1", &job.snapshot).unwrap();
        assert_eq!(
            again.snapshot, job.snapshot,
            "a snapshot of a snapshot is itself"
        );
        let normalise = |mut j: Job| {
            j.source = PathBuf::new();
            j.text = Arc::from("");
            j.base = PathBuf::new();
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
        let small = MINIMAL.replace("model = \"m\"", "model = \"m\"\ntokens_per_minute = 1279");
        let problems = load_text(&small).unwrap_err();
        assert_eq!(
            problems[0].location.as_deref(),
            Some("endpoints.e.tokens_per_minute")
        );
        // It must hold 256 + max_tokens (1024).
        let message = &problems[0].message;
        assert!(message.contains("at least 1280"), "{message}");
        let enough = MINIMAL.replace("model = \"m\"", "model = \"m\"\ntokens_per_minute = 1280");
        assert!(load_text(&enough).is_ok());
    }

    #[test]
    fn two_mistyped_keys_and_an_unknown_environment_are_reported_together() {
        let bad = MINIMAL
            .replace(
                "name = \"t\"",
                "name = \"t\"\nconcurency = 2\nmax_turnz = 3",
            )
            .replace("builtin:chat", "builtin:nowhere")
            .replace("model = \"m\"", "model = \"m\"\nmax_tokenz = 5");
        let problems = load_text(&bad).unwrap_err();
        let messages: Vec<&str> = problems.iter().map(|p| p.message.as_str()).collect();
        assert_eq!(problems.len(), 4, "{problems:?}");
        assert!(
            messages[0].contains("`concurency`; did you mean `concurrency`"),
            "{messages:?}"
        );
        assert!(messages[1].contains("`max_turnz`"), "{messages:?}");
        assert_eq!(
            locations(&problems)[..2],
            ["line 3, column 1", "line 4, column 1"]
        );
        assert!(
            messages.iter().any(|m| m.contains("`max_tokenz`")),
            "{messages:?}"
        );
        assert!(
            messages
                .iter()
                .any(|m| m.contains("'builtin:nowhere' is not known")),
            "{messages:?}"
        );
    }

    #[test]
    fn numbers_out_of_range_are_each_named() {
        let bad = MINIMAL.replace(
            "name = \"t\"",
            "name = \"t\"\nconcurrency = 1000000\nlease_secs = 1e20\nmax_turns = 0\n\
             [circuit_breaker]\nmax_error_rate = nan\nwindow = 0\n\
             [mock]\nfault_rate = 2.0\nlatency_ms = 100000000\n\
             [policy]\nmax_steps_per_turn = 0",
        )
        .replace("personas = \"s.jsonl\"", "personas = \"s.jsonl\"\nsamples_per_scenario = 4000000000\npersonas_per_scenario = 0");
        let problems = load_text(&bad).unwrap_err();
        assert_eq!(
            locations(&problems),
            [
                "concurrency",
                "max_turns",
                "lease_secs",
                "policy.max_steps_per_turn",
                "dataset.samples_per_scenario",
                "dataset.personas_per_scenario",
                "circuit_breaker.window",
                "circuit_breaker.max_error_rate",
                "mock.latency_ms",
                "mock.fault_rate",
            ],
            "{problems:?}"
        );
    }

    #[test]
    fn missing_tables_are_each_named_with_an_example() {
        let problems = load_text("name = \"t\"\n").unwrap_err();
        assert_eq!(
            locations(&problems),
            ["endpoints", "roles", "environment", "dataset"]
        );
    }
}
