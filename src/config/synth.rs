//! SYNTH.toml: a scenario-synthesis run. Endpoints and the environment are
//! read by the job config's own readers, so they are written and checked the
//! same way; the rest is the run's head.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::de::DeValue;

use super::dedup::DedupConfig;
use super::document::{fields_of, unknown_key_message, Node, Source};
use super::endpoint::read_endpoints;
use super::environment::{read_environment, EnvironmentFile};
use super::file::MockFile;
use super::job::EndpointConfig;
use super::load::mock_config;
use super::paths::{Resolver, Want};
use super::problem::Problem;
use super::ranges;
use super::service::Trust;
use super::synth_committee::{read_committee, CommitteeConfig, CommitteeInputs};
use super::synth_diversity::{read_diversity, DiversityConfig};
use super::EnvironmentConfig;
use super::MockConfig;

const TABLES: &[&str] = &[
    "endpoints",
    "roles",
    "environment",
    "dedup",
    "mock",
    "reviewers",
    "committee",
    "diversity",
];

/// The keys of SYNTH.toml that are not tables, as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct SynthHead {
    name: String,
    #[serde(default)]
    seed: u64,
    /// `sqlite://PATH` (relative to the working directory) or `postgres://…`:
    /// where the synthesis job, its proposals and their verdicts are stored.
    #[serde(default = "super::file::default_database")]
    database: String,
    target: u64,
    #[serde(default = "default_max_attempts")]
    max_attempts: u64,
    #[serde(default = "default_records")]
    records_per_prompt: u64,
    /// Default: ten proposals per scenario wanted.
    #[serde(default)]
    max_proposals: Option<u64>,
    #[serde(default = "default_concurrency")]
    concurrency: u64,
    /// How long a process's claim on a proposal lasts without a heartbeat; a
    /// process that dies has its proposals redone this long after.
    #[serde(default = "default_lease_secs")]
    lease_secs: f64,
    /// Scenarios JSONL whose first `examples_shown` rows the prompt shows.
    #[serde(default)]
    examples: Option<PathBuf>,
    #[serde(default = "default_examples_shown")]
    examples_shown: u64,
    /// A file with the policy text; default: the environment's.
    #[serde(default)]
    policy: Option<PathBuf>,
    /// Where `usersim synthesize` writes the accepted scenarios; default
    /// `NAME.jsonl` beside the config. (The service writes no file: its
    /// `GET /v1/jobs/{id}/scenarios` serves them.)
    #[serde(default)]
    output: Option<PathBuf>,
}

fn default_max_attempts() -> u64 {
    3
}
fn default_records() -> u64 {
    3
}
fn default_concurrency() -> u64 {
    8
}
fn default_lease_secs() -> f64 {
    60.0
}
fn default_examples_shown() -> u64 {
    3
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct SynthRoles {
    generator: String,
    /// The default endpoint of a `[[reviewers]]` table that names none.
    #[serde(default)]
    reviewer: Option<String>,
    /// The endpoint whose model plays a `simulated` environment's tools when
    /// gold actions are validated by execution (required for that kind only).
    #[serde(default)]
    tools: Option<String>,
}

/// A synthesis run's config, checked, paths absolute.
#[derive(Debug, Clone)]
pub struct SynthConfig {
    pub name: String,
    pub source: PathBuf,
    pub seed: u64,
    pub database: String,
    pub target: usize,
    pub max_attempts: u32,
    pub records_per_prompt: usize,
    pub max_proposals: u64,
    pub concurrency: usize,
    pub lease: std::time::Duration,
    pub examples: Option<PathBuf>,
    pub examples_shown: usize,
    pub policy: Option<PathBuf>,
    pub output: PathBuf,
    pub environment: EnvironmentConfig,
    pub generator: EndpointConfig,
    pub reviewer: Option<EndpointConfig>,
    /// When two proposals are the same task (`[dedup]`).
    pub dedup: DedupConfig,
    /// The in-process mock's latency and faults (`[mock]`), for `mock = true` endpoints.
    pub mock: MockConfig,
    /// The config as a synthesis job stores it: the TOML as written with its
    /// `[endpoints]` as stored (operator endpoints resolved), read again
    /// with [`from_snapshot`] against `base`.
    pub snapshot: String,
    /// The folder relative paths resolve against.
    pub base: PathBuf,
    /// `[[reviewers]]` and `[committee]`: `None` reviews nothing.
    pub committee: Option<CommitteeConfig>,
    /// `[diversity]`: what the proposals' briefs ask for.
    pub diversity: DiversityConfig,
    /// Plays a `simulated` environment's tools (`open_environment_with`).
    pub tools: Option<EndpointConfig>,
}

/// Read and check SYNTH.toml at `path`; every problem at once.
pub fn load_synth(path: &Path) -> Result<SynthConfig, Vec<Problem>> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        vec![Problem::in_file(
            path,
            format!("cannot read the synthesis config: {e}"),
        )]
    })?;
    let base = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let base = std::path::absolute(base).map_err(|e| {
        vec![Problem::in_file(
            path,
            format!("cannot resolve its folder: {e}"),
        )]
    })?;
    from_toml(path, &text, &base, Trust::Local)
}

/// SYNTH.toml given as text; `label` names it, relative paths resolve against `base`.
pub fn from_toml(
    label: &Path,
    text: &str,
    base: &Path,
    trust: Trust<'_>,
) -> Result<SynthConfig, Vec<Problem>> {
    let source = Source::toml(label, text);
    let mut root = source.parse()?;
    let mut problems = Vec::new();
    let mut take = |name: &str| Source::take(&mut root, name).map(|(_, n)| n);
    let endpoints_node = take("endpoints");
    let roles_node = take("roles");
    let environment_node = take("environment");
    let dedup_node = take("dedup");
    let mock_node = take("mock");
    let committee_node = take("committee");
    let diversity_node = take("diversity");
    let reviewers_node = Source::take(&mut root, "reviewers");
    let known: Vec<&str> = fields_of::<SynthHead>()
        .iter()
        .chain(TABLES)
        .copied()
        .collect();
    let mut head_node = Node::new(0..text.len(), DeValue::Table(root));
    source.drop_unknown_keys(
        "",
        &mut head_node,
        &known,
        &|k| Some(unknown_key_message(k, &known)),
        &mut problems,
    );
    let head: Option<SynthHead> = source.deserialize("", &head_node, &mut problems);
    let diversity = diversity_node
        .map(|node| {
            read_diversity(
                &source,
                node,
                head.as_ref().map(|h| h.target),
                &mut problems,
            )
        })
        .unwrap_or_default();
    let missing = |name: &str, example: &str, problems: &mut Vec<Problem>| {
        problems.push(Problem::at_field(
            label,
            name,
            format!("is missing; add {example}"),
        ))
    };
    let endpoints = match endpoints_node {
        Some(node) => read_endpoints(&source, node, trust, &mut problems),
        None => {
            missing("endpoints", "[endpoints.generator] with base_url and model (or mock = true, model = \"mock-synth\")", &mut problems);
            Default::default()
        }
    };
    let roles: Option<SynthRoles> = match roles_node {
        Some(node) => source.typed("roles", node, &mut problems),
        None => {
            missing(
                "roles",
                "[roles] with generator = \"ENDPOINT\"",
                &mut problems,
            );
            None
        }
    };
    let environment: Option<EnvironmentFile> = match environment_node {
        Some(node) => read_environment(&source, node, base, trust, &mut problems),
        None => {
            missing(
                "environment",
                "[environment] with name = \"builtin:retail\"",
                &mut problems,
            );
            None
        }
    };
    let pick = |field: &str, name: &str, problems: &mut Vec<Problem>| {
        let found = endpoints.configs.get(name).cloned();
        if found.is_none() && !endpoints.names.iter().any(|n| n == name) {
            problems.push(Problem::at_field(
                label,
                field,
                format!("names endpoint '{name}', which is not defined; define [endpoints.{name}] or use one of: {}", endpoints.names.join(", ")),
            ));
        }
        found
    };
    let generator = roles
        .as_ref()
        .and_then(|r| pick("roles.generator", &r.generator, &mut problems));
    let reviewer = roles
        .as_ref()
        .and_then(|r| r.reviewer.as_ref())
        .map(|name| pick("roles.reviewer", name, &mut problems));
    let dedup: DedupConfig = match dedup_node {
        Some(node) => match source.typed::<DedupConfig>("dedup", node, &mut problems) {
            Some(d) => {
                problems.extend(d.problems(label, "dedup"));
                d
            }
            None => DedupConfig::default(),
        },
        None => DedupConfig::default(),
    };
    let mock = match mock_node {
        Some(node) => source
            .typed::<MockFile>("mock", node, &mut problems)
            .map(|m| mock_config(label, &m, &mut problems))
            .unwrap_or_default(),
        None => MockConfig::default(),
    };
    let tools = roles_tools(label, roles.as_ref(), environment.as_ref(), &mut problems)
        .map(|name| pick("roles.tools", name, &mut problems));
    let resolver = Resolver {
        file: label,
        base,
        trust,
    };
    let committee = read_committee(
        &source,
        committee_node,
        reviewers_node,
        &CommitteeInputs {
            file: label,
            text,
            default_endpoint: roles.as_ref().and_then(|r| r.reviewer.as_deref()),
            endpoints: &endpoints,
            resolver: &resolver,
        },
        &mut problems,
    );
    // A simulated environment's tool specs, relative to SYNTH.toml.
    let environment = environment.map(|e| match e {
        EnvironmentFile::Simulated { tools, name } => EnvironmentFile::Simulated {
            tools: resolver
                .existing("environment.tools", &tools, Want::File, &mut problems)
                .unwrap_or(tools),
            name,
        },
        other => other,
    });
    let mut paths = None;
    if let Some(h) = &head {
        for (field, n, range) in [
            ("target", h.target, ranges::SYNTH_TARGET),
            ("max_attempts", h.max_attempts, ranges::SYNTH_MAX_ATTEMPTS),
            (
                "records_per_prompt",
                h.records_per_prompt,
                ranges::SYNTH_RECORDS_PER_PROMPT,
            ),
            ("concurrency", h.concurrency, ranges::CONCURRENCY),
            ("examples_shown", h.examples_shown, ranges::SYNTH_EXAMPLES),
            (
                "max_proposals",
                h.max_proposals.unwrap_or(1),
                ranges::SYNTH_MAX_PROPOSALS,
            ),
        ] {
            problems.extend(range.problem(label, field, n));
        }
        problems.extend(ranges::LEASE_SECS.problem(label, "lease_secs", h.lease_secs));
        if h.name.trim().is_empty() {
            problems.push(Problem::at_field(
                label,
                "name",
                "is empty; give the synthesis job a name, e.g. name = \"retail-synth-v1\"",
            ));
        }
        let examples = h
            .examples
            .as_ref()
            .map(|p| resolver.existing("examples", p, Want::File, &mut problems));
        let policy = h
            .policy
            .as_ref()
            .map(|p| resolver.existing("policy", p, Want::File, &mut problems));
        let output = match &h.output {
            Some(path) => resolver.resolve("output", path, &mut problems),
            None => resolver.resolve(
                "output",
                Path::new(&format!("{}.jsonl", file_name_part(&h.name))),
                &mut problems,
            ),
        };
        paths = Some((examples.flatten(), policy.flatten(), output));
    }
    let (Some(h), Some(environment), Some(generator), Some((examples, policy, Some(output))), true) =
        (head, environment, generator, paths, problems.is_empty())
    else {
        return Err(problems);
    };
    let snapshot = match stored_text(text, &endpoints.snapshots) {
        Ok(snapshot) => snapshot,
        Err(e) => return Err(vec![Problem::in_file(label, e)]),
    };
    let max_proposals = h
        .max_proposals
        .unwrap_or(h.target.saturating_mul(10))
        .min(ranges::MAX_ITEMS);
    Ok(SynthConfig {
        name: h.name,
        source: label.to_path_buf(),
        seed: h.seed,
        database: h.database,
        target: usize::try_from(h.target).unwrap_or(usize::MAX),
        max_attempts: u32::try_from(h.max_attempts).unwrap_or(u32::MAX),
        records_per_prompt: usize::try_from(h.records_per_prompt).unwrap_or(usize::MAX),
        max_proposals,
        concurrency: usize::try_from(h.concurrency).unwrap_or(usize::MAX),
        lease: std::time::Duration::from_secs_f64(h.lease_secs),
        examples,
        examples_shown: usize::try_from(h.examples_shown).unwrap_or(usize::MAX),
        policy,
        output,
        environment: environment.config(),
        generator,
        reviewer: reviewer.flatten(),
        dedup,
        mock,
        snapshot,
        base: base.to_path_buf(),
        committee,
        diversity,
        tools: tools.flatten(),
    })
}

/// `name` with every character a file name should not hold replaced by `_`.
fn file_name_part(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect::<String>()
        .trim_start_matches('.')
        .to_string()
}

/// `text` with its `[endpoints]` replaced by their stored form.
fn stored_text(
    text: &str,
    endpoints: &std::collections::BTreeMap<String, super::endpoint::EndpointSnapshot>,
) -> Result<String, String> {
    let mut table: toml::Table =
        toml::from_str(text).map_err(|e| format!("cannot store the config: {e}"))?;
    let stored = toml::Value::try_from(endpoints)
        .map_err(|e| format!("cannot store the config's endpoints: {e}"))?;
    table.insert("endpoints".to_string(), stored);
    toml::to_string(&table).map_err(|e| format!("cannot store the config: {e}"))
}

/// A synthesis job as its row stores it (`config_snapshot`, JSON): the
/// config's stored TOML and the folder its relative paths resolve against,
/// enough to rebuild the job in another process.
#[derive(Debug, Clone, PartialEq, serde::Serialize, Deserialize)]
pub struct SynthSpec {
    /// What problems in the stored config name as its file.
    pub label: String,
    pub base: PathBuf,
    pub toml: String,
}

impl SynthSpec {
    pub fn of(config: &SynthConfig) -> SynthSpec {
        SynthSpec {
            label: config.source.display().to_string(),
            base: config.base.clone(),
            toml: config.snapshot.clone(),
        }
    }

    /// The text of the job row's `config_snapshot`.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}

/// The config of stored synthesis job `job_id`, from its row's `config_snapshot`.
pub fn from_stored(job_id: i64, config_snapshot: &str) -> Result<SynthConfig, Vec<Problem>> {
    let label = PathBuf::from(format!("job {job_id} (stored config)"));
    let spec: SynthSpec = serde_json::from_str(config_snapshot).map_err(|e| {
        vec![Problem::in_file(
            &label,
            format!("the stored synthesis job cannot be read: {e}"),
        )]
    })?;
    from_snapshot(&label, &spec.toml, &spec.base)
}

/// A synthesis job's stored config read back: `snapshot` as
/// [`SynthConfig::snapshot`] made it, paths resolved against `base` as when
/// it was submitted.
pub fn from_snapshot(
    label: &Path,
    snapshot: &str,
    base: &Path,
) -> Result<SynthConfig, Vec<Problem>> {
    from_toml(label, snapshot, base, Trust::Local)
}

/// `roles.tools`: required with a `simulated` environment (its gold actions
/// run only when a model plays its tools), refused with any other.
fn roles_tools<'r>(
    label: &Path,
    roles: Option<&'r SynthRoles>,
    environment: Option<&EnvironmentFile>,
    problems: &mut Vec<Problem>,
) -> Option<&'r str> {
    let (roles, environment) = (roles?, environment?);
    let simulated = matches!(environment, EnvironmentFile::Simulated { .. });
    match (&roles.tools, simulated) {
        (Some(name), true) => Some(name),
        (None, false) => None,
        (None, true) => {
            problems.push(Problem::at_field(
                label,
                "roles.tools",
                "is missing; a simulated environment's gold actions run only when a model \
                 plays its tools: add tools = \"ENDPOINT\" (e.g. an [endpoints.tools] with \
                 mock = true, model = \"mock-tools\")",
            ));
            None
        }
        (Some(_), false) => {
            problems.push(Problem::at_field(
                label,
                "roles.tools",
                "plays a simulated environment's tools, and this environment is not one; \
                 remove it",
            ));
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str) -> Result<SynthConfig, Vec<Problem>> {
        from_toml(
            Path::new("SYNTH.toml"),
            text,
            Path::new("/tmp"),
            Trust::Local,
        )
    }

    const GOOD: &str = r#"
name = "s"
target = 5
output = "out.jsonl"
[endpoints.generator]
mock = true
model = "mock-synth"
[roles]
generator = "generator"
[environment]
name = "builtin:retail"
"#;

    #[test]
    fn a_minimal_config_loads_with_its_defaults() {
        let c = load(GOOD).unwrap();
        assert_eq!((c.target, c.max_attempts, c.max_proposals), (5, 3, 50));
        assert_eq!(c.output, Path::new("/tmp/out.jsonl"));
        assert_eq!(c.generator.name, "generator");
    }

    #[test]
    fn the_stored_snapshot_reads_back_as_the_same_config_with_endpoints_resolved() {
        let c = load(GOOD).unwrap();
        assert!(
            c.snapshot.contains("[endpoints.generator]"),
            "{}",
            c.snapshot
        );
        assert!(c.snapshot.contains("max_tokens"), "{}", c.snapshot);
        let again = from_snapshot(Path::new("job 1"), &c.snapshot, &c.base).unwrap();
        assert_eq!(again.snapshot, c.snapshot);
        assert_eq!((again.target, again.output), (c.target, c.output));
        assert_eq!(again.generator.model, c.generator.model);
    }

    #[test]
    fn an_out_of_range_target_and_an_unknown_key_are_both_reported_with_where_and_what() {
        let text = GOOD.replace("target = 5", "target = 0\ntarget_count = 3");
        let problems = load(&text).unwrap_err();
        let all: Vec<String> = problems.iter().map(|p| p.to_string()).collect();
        assert!(
            all.iter()
                .any(|p| p.contains("target_count") && p.contains("line 4")),
            "{all:?}"
        );
        assert!(
            all.iter()
                .any(|p| p.contains("target") && p.contains("out of range")),
            "{all:?}"
        );
    }

    #[test]
    fn a_generator_naming_no_endpoint_says_which_exist() {
        let problems =
            load(&GOOD.replace("generator = \"generator\"", "generator = \"gen\"")).unwrap_err();
        assert!(problems[0].to_string().contains("'gen'"), "{problems:?}");
        assert!(
            problems[0].to_string().contains("generator"),
            "{problems:?}"
        );
    }

    const SIMULATED: &str = r#"
name = "s"
target = 5
output = "out.jsonl"
[endpoints.generator]
mock = true
model = "mock-synth"
[endpoints.tools]
mock = true
model = "mock-tools"
[roles]
generator = "generator"
tools = "tools"
[environment]
kind = "simulated"
tools = "TOOLS"
"#;

    fn simulated(text: &str) -> Result<SynthConfig, Vec<Problem>> {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
        from_toml(
            Path::new("SYNTH.toml"),
            &text.replace("TOOLS", "data/simulated/tools.json"),
            repo,
            Trust::Local,
        )
    }

    #[test]
    fn a_simulated_environment_takes_the_tools_role_and_its_specs_path_from_the_config_folder() {
        let c = simulated(SIMULATED).unwrap();
        assert_eq!(c.tools.unwrap().name, "tools");
        let EnvironmentConfig::Simulated(s) = &c.environment else {
            panic!("not simulated: {:?}", c.environment);
        };
        assert!(s.tools.is_absolute() && s.tools.is_file(), "{s:?}");
    }

    #[test]
    fn the_tools_role_is_required_for_a_simulated_environment_and_refused_for_others() {
        let p = simulated(&SIMULATED.replace("tools = \"tools\"\n", "")).unwrap_err();
        assert_eq!(p[0].location.as_deref(), Some("roles.tools"), "{p:?}");
        assert!(p[0].message.contains("is missing"), "{p:?}");
        let p = load(&GOOD.replace(
            "generator = \"generator\"",
            "generator = \"generator\"\ntools = \"generator\"",
        ))
        .unwrap_err();
        assert_eq!(p[0].location.as_deref(), Some("roles.tools"), "{p:?}");
        assert!(p[0].message.contains("not one"), "{p:?}");
        let p = simulated(&SIMULATED.replace("TOOLS", "nope.json")).unwrap_err();
        assert!(
            p.iter()
                .any(|p| p.location.as_deref() == Some("environment.tools")),
            "{p:?}"
        );
    }
}
