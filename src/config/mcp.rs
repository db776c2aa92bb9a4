//! `[environment] kind = "mcp"`: an MCP server, started for each conversation
//! (`command`, over stdio) or reached over streamable HTTP (`url`). Read and
//! checked here; `env::mcp` runs it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::environment_name::name_problem;
use super::problem::Problem;
use super::ranges;
use super::state_calls::{self, StateCall};
use super::trust::Trust;

/// In a `command` argument or an `env` value: the conversation's own folder,
/// made empty for each session and removed after it.
pub const SESSION_DIR: &str = "{session_dir}";

const DEFAULT_MAX_PROCESSES: u64 = 8;
const DEFAULT_TIMEOUT_SECS: f64 = 60.0;
const DEFAULT_STARTUP_SECS: f64 = 30.0;

/// The keys of `[environment]` with `kind = "mcp"`.
#[derive(Debug, Deserialize)]
pub struct McpKeys {
    #[serde(default)]
    #[allow(dead_code)]
    kind: Option<String>,
    /// The server's program and arguments (stdio).
    #[serde(default)]
    pub command: Option<Vec<String>>,
    /// The server's streamable-HTTP endpoint, e.g. `http://127.0.0.1:3001/mcp`.
    #[serde(default)]
    pub url: Option<String>,
    /// The folder the server runs in (default: the config's folder;
    /// `"{session_dir}"`: the conversation's own folder).
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    /// Environment variables of the server process.
    #[serde(default)]
    pub env: Option<BTreeMap<String, String>>,
    /// What the policy's prompt calls the environment (default: the name the
    /// server gives itself in `initialize`).
    #[serde(default)]
    pub name: Option<String>,
    /// The tools offered to the policy (default: every tool the server lists).
    #[serde(default)]
    pub allowed_tools: Option<Vec<String>>,
    /// The tools a scenario's probes may call (default: the policy's tools and
    /// the `state_probes`' tools).
    #[serde(default)]
    pub probe_tools: Option<Vec<String>>,
    /// Server processes alive at once (default 8, range 1 to 1,000).
    #[serde(default)]
    pub max_processes: Option<u64>,
    /// Seconds one request may take (default 60).
    #[serde(default)]
    pub timeout_secs: Option<f64>,
    /// Seconds the server may take to start and answer `initialize` (default 30).
    #[serde(default)]
    pub startup_timeout_secs: Option<f64>,
    /// Tool calls that read a session's state (e.g. `read_graph`): what
    /// scenario synthesis compares and shows its generator.
    #[serde(default)]
    pub state_probes: Option<Vec<StateCall>>,
    /// Tool calls made on every fresh session before anything else, so
    /// each starts from the same state (e.g. `create_entities`).
    #[serde(default)]
    pub seed_calls: Option<Vec<StateCall>>,
}

/// How sparring reaches the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpTransport {
    /// A fresh process per conversation, speaking over its stdin and stdout.
    Stdio {
        /// The program (resolved: absolute, or a name found on `PATH`) and its
        /// arguments, `{session_dir}` not yet replaced.
        command: Vec<String>,
        /// The folder the process starts in; `{session_dir}` (as a path):
        /// the conversation's own folder.
        cwd: PathBuf,
        env: BTreeMap<String, String>,
    },
    /// A fresh MCP session (its own `Mcp-Session-Id`) per conversation.
    Http { url: String },
}

/// An MCP server as a job's environment.
#[derive(Debug, Clone, PartialEq)]
pub struct McpConfig {
    pub transport: McpTransport,
    /// What the policy's prompt calls it; `None`: the server's own name.
    pub name: Option<String>,
    /// `None`: every tool the server lists.
    pub allowed_tools: Option<Vec<String>>,
    /// `None`: the policy's tools and the `state_probes`' tools.
    pub probe_tools: Option<Vec<String>>,
    pub max_processes: usize,
    pub timeout: Duration,
    pub startup_timeout: Duration,
    /// Empty: the state cannot be read (no synthesis over this server).
    pub state_probes: Vec<StateCall>,
    pub seed_calls: Vec<StateCall>,
}

/// `[environment]` of kind `mcp` as stored in a job's snapshot: the keys as
/// they read back, with the command and folder made absolute.
#[derive(Debug, Clone, Default, Serialize)]
pub struct McpSnapshot {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub env: Option<BTreeMap<String, String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allowed_tools: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub probe_tools: Option<Vec<String>>,
    pub max_processes: u64,
    pub startup_timeout_secs: f64,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub state_probes: Vec<StateCall>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub seed_calls: Vec<StateCall>,
}

impl McpConfig {
    /// As errors about the server show it to the person who wrote the
    /// config: `mcp:PROGRAM ARGS` or `mcp:URL` (never to the policy, which
    /// sees the environment's name).
    pub fn label(&self) -> String {
        match &self.transport {
            McpTransport::Stdio { command, .. } => {
                format!("mcp:{}", command.join(" "))
            }
            McpTransport::Http { url } => format!("mcp:{url}"),
        }
    }

    /// The config field problems with the server are reported at.
    pub fn field(&self) -> &'static str {
        match &self.transport {
            McpTransport::Stdio { .. } => "environment.command",
            McpTransport::Http { .. } => "environment.url",
        }
    }

    pub fn snapshot(&self) -> McpSnapshot {
        let mut snapshot = McpSnapshot {
            allowed_tools: self.allowed_tools.clone(),
            probe_tools: self.probe_tools.clone(),
            max_processes: self.max_processes as u64,
            startup_timeout_secs: self.startup_timeout.as_secs_f64(),
            state_probes: self.state_probes.clone(),
            seed_calls: self.seed_calls.clone(),
            ..McpSnapshot::default()
        };
        match &self.transport {
            McpTransport::Stdio { command, cwd, env } => {
                snapshot.command = Some(command.clone());
                snapshot.cwd = Some(cwd.clone());
                snapshot.env = (!env.is_empty()).then(|| env.clone());
            }
            McpTransport::Http { url } => snapshot.url = Some(url.clone()),
        }
        snapshot
    }
}

/// The MCP keys, checked; `base` is the config's folder.
pub fn read_mcp(
    path: &Path,
    keys: McpKeys,
    base: &Path,
    trust: Trust<'_>,
    problems: &mut Vec<Problem>,
) -> Option<McpConfig> {
    let before = problems.len();
    let at = |field: &str, message: String| Problem::at_field(path, field, message);
    let transport =
        match (keys.command, keys.url) {
            (Some(_), Some(_)) => {
                problems.push(at(
                    "environment.url",
                    "is given with command; an MCP server is either started (command, over stdio) \
                 or reached (url, over streamable HTTP): keep one"
                        .into(),
                ));
                None
            }
            (None, None) => {
                problems.push(at(
                    "environment.command",
                    "is missing; kind = \"mcp\" needs command = [\"npx\", \"-y\", \
                 \"@modelcontextprotocol/server-memory\"] (a server started for each \
                 conversation) or url = \"http://127.0.0.1:3001/mcp\" (streamable HTTP)"
                        .into(),
                ));
                None
            }
            (None, Some(url)) => {
                for (key, given) in [("env", keys.env.is_some()), ("cwd", keys.cwd.is_some())] {
                    if given {
                        problems.push(at(
                            &format!("environment.{key}"),
                            "is for a server sparring starts (command); a server at a url runs \
                         with its own; remove it"
                                .into(),
                        ));
                    }
                }
                if url.starts_with("http://") || url.starts_with("https://") {
                    if let Trust::Submitted(boundary) = trust {
                        problems.extend(boundary.check_url(path, "environment.url", &url));
                    }
                    Some(McpTransport::Http { url })
                } else {
                    problems.push(at(
                        "environment.url",
                        format!(
                            "'{url}' is not an http(s) URL; give the server's streamable-HTTP \
                         endpoint, e.g. http://127.0.0.1:3001/mcp"
                        ),
                    ));
                    None
                }
            }
            (Some(command), None) => {
                if let Trust::Submitted(_) = trust {
                    problems.push(at(
                        "environment.command",
                        "a job submitted to the service may not start programs on it; give the \
                     url of an MCP server that is already running (streamable HTTP), or run \
                     this job with the sparring CLI"
                            .into(),
                    ));
                    None
                } else {
                    let in_session = keys.cwd.as_deref() == Some(Path::new(SESSION_DIR));
                    let cwd = match keys.cwd {
                        _ if in_session => PathBuf::from(SESSION_DIR),
                        Some(dir) if dir.is_absolute() => dir,
                        Some(dir) => base.join(dir),
                        None => base.to_path_buf(),
                    };
                    if !in_session && !cwd.is_dir() {
                        problems.push(at(
                            "environment.cwd",
                            format!(
                                "{} is not a folder; give the server's folder, or \
                                 \"{SESSION_DIR}\" to run it in the conversation's own",
                                cwd.display()
                            ),
                        ));
                    }
                    let env = keys.env.unwrap_or_default();
                    check_placeholders(path, &command, &env, problems);
                    // A relative program is found from the config's folder
                    // when the server runs in the session's.
                    let from = if in_session { base } else { cwd.as_path() };
                    resolve_command(path, command, from, problems)
                        .map(|command| McpTransport::Stdio { command, cwd, env })
                }
            }
        };
    if let Some(tools) = &keys.allowed_tools {
        if tools.is_empty() {
            problems.push(at(
                "environment.allowed_tools",
                "is empty, so the policy would have no tools; list the tools to offer, or \
                 leave it out to offer every tool the server lists"
                    .into(),
            ));
        }
    }
    if let Some(tools) = &keys.probe_tools {
        if tools.is_empty() {
            problems.push(at(
                "environment.probe_tools",
                "is empty, so no probe could call anything; list the tools probes may call \
                 (e.g. [\"read_graph\", \"open_nodes\"]), or leave it out for the policy's \
                 tools and the state_probes' tools"
                    .into(),
            ));
        }
    }
    if let Some(name) = &keys.name {
        problems.extend(name_problem(path, name));
    }
    let max_processes = keys.max_processes.unwrap_or(DEFAULT_MAX_PROCESSES);
    problems.extend(ranges::MCP_MAX_PROCESSES.problem(
        path,
        "environment.max_processes",
        max_processes,
    ));
    let timeout_secs = keys.timeout_secs.unwrap_or(DEFAULT_TIMEOUT_SECS);
    problems.extend(ranges::MCP_TIMEOUT_SECS.problem(
        path,
        "environment.timeout_secs",
        timeout_secs,
    ));
    let startup_secs = keys.startup_timeout_secs.unwrap_or(DEFAULT_STARTUP_SECS);
    problems.extend(ranges::MCP_STARTUP_SECS.problem(
        path,
        "environment.startup_timeout_secs",
        startup_secs,
    ));
    let state_probes = keys.state_probes.unwrap_or_default();
    problems.extend(state_calls::problems(
        path,
        "environment.state_probes",
        &state_probes,
    ));
    let seed_calls = keys.seed_calls.unwrap_or_default();
    problems.extend(state_calls::problems(
        path,
        "environment.seed_calls",
        &seed_calls,
    ));
    let transport = transport?;
    (problems.len() == before).then(|| McpConfig {
        transport,
        name: keys.name,
        allowed_tools: keys.allowed_tools,
        probe_tools: keys.probe_tools,
        max_processes: usize::try_from(max_processes).unwrap_or(usize::MAX),
        timeout: Duration::from_secs_f64(timeout_secs),
        startup_timeout: Duration::from_secs_f64(startup_secs),
        state_probes,
        seed_calls,
    })
}

/// `{session_dir}` is the one placeholder; any other `{…}` is a typo.
fn check_placeholders(
    path: &Path,
    command: &[String],
    env: &BTreeMap<String, String>,
    problems: &mut Vec<Problem>,
) {
    let fields = command
        .iter()
        .enumerate()
        .map(|(i, arg)| (format!("environment.command[{i}]"), arg))
        .chain(
            env.iter()
                .map(|(key, value)| (format!("environment.env.{key}"), value)),
        );
    for (field, text) in fields {
        let rest = text.replace(SESSION_DIR, "");
        if let Some(start) = rest.find('{') {
            let name: String = rest[start..].chars().take_while(|c| *c != '}').collect();
            problems.push(Problem::at_field(
                path,
                &field,
                format!(
                    "'{name}}}' is not a placeholder sparring knows; the one placeholder is \
                     {SESSION_DIR} (the conversation's own empty folder), e.g. \
                     MEMORY_FILE_PATH = \"{SESSION_DIR}/memory.jsonl\""
                ),
            ));
        }
    }
}

/// The command with its program found: a path (relative to `cwd`) that is a
/// file, or a name on `PATH`; a problem when there is no such program.
fn resolve_command(
    path: &Path,
    mut command: Vec<String>,
    cwd: &Path,
    problems: &mut Vec<Problem>,
) -> Option<Vec<String>> {
    let Some(program) = command.first() else {
        problems.push(Problem::at_field(
            path,
            "environment.command",
            "is empty; give the program and its arguments, e.g. [\"npx\", \"-y\", \
             \"@modelcontextprotocol/server-memory\"]",
        ));
        return None;
    };
    let found = if program.contains('/') {
        let candidate = cwd.join(program);
        candidate.is_file().then_some(candidate)
    } else {
        std::env::var_os("PATH").and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|dir| dir.join(program))
                .find(|candidate| candidate.is_file())
        })
    };
    match found {
        Some(found) => {
            command[0] = found.display().to_string();
            Some(command)
        }
        None => {
            let where_ = if program.contains('/') {
                format!("{} is not a file", cwd.join(program).display())
            } else {
                "it is on no folder of PATH".to_string()
            };
            problems.push(Problem::at_field(
                path,
                "environment.command[0]",
                format!(
                    "the program '{program}' does not exist ({where_}); install the server \
                     (e.g. scripts/mcp-servers install) or give its full path"
                ),
            ));
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(toml_text: &str) -> McpKeys {
        toml::from_str(toml_text).unwrap()
    }

    fn read(toml_text: &str) -> Result<McpConfig, Vec<Problem>> {
        let mut problems = Vec::new();
        let base = std::env::temp_dir();
        match read_mcp(
            Path::new("job.toml"),
            keys(toml_text),
            &base,
            Trust::Local,
            &mut problems,
        ) {
            Some(config) if problems.is_empty() => Ok(config),
            _ => Err(problems),
        }
    }

    #[test]
    fn a_command_is_found_on_path_and_made_absolute() {
        let config =
            read("command = [\"sh\", \"-c\", \"true\"]\nenv = { F = \"{session_dir}/m.jsonl\" }")
                .unwrap();
        let McpTransport::Stdio { command, env, .. } = &config.transport else {
            panic!("not stdio");
        };
        assert!(command[0].ends_with("/sh") && command[0].starts_with('/'));
        assert_eq!(env["F"], "{session_dir}/m.jsonl");
        assert_eq!(config.max_processes, 8);
    }

    #[test]
    fn a_missing_program_an_unknown_placeholder_and_both_transports_are_problems() {
        let p = read("command = [\"no-such-mcp-server-here\"]").unwrap_err();
        assert!(p[0].message.contains("does not exist"), "{p:?}");
        assert_eq!(p[0].location.as_deref(), Some("environment.command[0]"));
        let p = read("command = [\"sh\"]\nenv = { F = \"{sesion_dir}/m\" }").unwrap_err();
        assert!(p[0].message.contains("{sesion_dir}"), "{p:?}");
        let p = read("command = [\"sh\"]\nurl = \"http://x/mcp\"").unwrap_err();
        assert!(p[0].message.contains("keep one"), "{p:?}");
        let p = read("url = \"ftp://x\"").unwrap_err();
        assert!(p[0].message.contains("not an http(s) URL"), "{p:?}");
        let p = read("url = \"http://x/mcp\"\nmax_processes = 0").unwrap_err();
        assert!(p[0].message.contains("1 to 1,000"), "{p:?}");
    }

    #[test]
    fn state_probes_and_seed_calls_are_read_with_their_arguments_and_a_bad_one_is_named() {
        let config = read(
            "url = \"http://x/mcp\"\nstate_probes = [{ tool = \"read_graph\" }]\n\
             seed_calls = [{ tool = \"create_entities\", arguments = { entities = [] } }]",
        )
        .unwrap();
        assert_eq!(config.state_probes[0].tool, "read_graph");
        assert_eq!(
            config.seed_calls[0].arguments,
            serde_json::json!({"entities": []})
        );
        let snapshot = toml::to_string(&config.snapshot()).unwrap();
        assert!(snapshot.contains("read_graph"), "{snapshot}");
        let p = read("url = \"http://x/mcp\"\nstate_probes = [{ tool = \" \" }]").unwrap_err();
        assert_eq!(
            p[0].location.as_deref(),
            Some("environment.state_probes[0].tool")
        );
    }
}
