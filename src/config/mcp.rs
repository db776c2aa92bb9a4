//! `[environment] kind = "mcp"`: an MCP server, started for each conversation
//! (`command`, over stdio) or reached over streamable HTTP (`url`). Read and
//! checked here; `env::mcp` runs it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::environment_name::name_problem;
pub use super::environment_table::{McpConfig, McpTransport, SESSION_DIR};
use super::ranges;
use super::state_calls;
use super::trust::Trust;
use crate::diagnostics::problem::Problem;

/// The MCP keys, checked, the command's program found and its folder made
/// absolute; `base` is the config's folder.
pub fn read_mcp(
    path: &Path,
    mut keys: McpConfig,
    base: &Path,
    trust: Trust<'_>,
    problems: &mut Vec<Problem>,
) -> Option<McpConfig> {
    let before = problems.len();
    let at = |field: &str, message: String| Problem::at_field(path, field, message);
    let transport_ok = match (keys.command.take(), &keys.url) {
        (Some(_), Some(_)) => {
            problems.push(at(
                "environment.url",
                "is given with command; an MCP server is either started (command, over stdio) \
                 or reached (url, over streamable HTTP): keep one"
                    .into(),
            ));
            false
        }
        (None, None) => {
            problems.push(at(
                "environment.command",
                "is missing; kind = \"mcp\" needs command = [\"npx\", \"-y\", \
                 \"@modelcontextprotocol/server-memory\"] (a server started for each \
                 conversation) or url = \"http://127.0.0.1:3001/mcp\" (streamable HTTP)"
                    .into(),
            ));
            false
        }
        (None, Some(url)) => {
            for (key, given) in [("env", !keys.env.is_empty()), ("cwd", keys.cwd.is_some())] {
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
                    problems.extend(boundary.check_url(path, "environment.url", url));
                }
                true
            } else {
                problems.push(at(
                    "environment.url",
                    format!(
                        "'{url}' is not an http(s) URL; give the server's streamable-HTTP \
                         endpoint, e.g. http://127.0.0.1:3001/mcp"
                    ),
                ));
                false
            }
        }
        (Some(_), None) if matches!(trust, Trust::Submitted(_)) => {
            problems.push(at(
                "environment.command",
                "a job submitted to the service may not start programs on it; give the \
                 url of an MCP server that is already running (streamable HTTP), or run \
                 this job with the sparring CLI"
                    .into(),
            ));
            false
        }
        (Some(command), None) => {
            let in_session = keys.cwd.as_deref() == Some(Path::new(SESSION_DIR));
            let cwd = match keys.cwd.take() {
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
            check_placeholders(path, &command, &keys.env, problems);
            // A relative program is found from the config's folder when the
            // server runs in the session's.
            let from = if in_session { base } else { cwd.as_path() };
            keys.command = resolve_command(path, command, from, problems);
            keys.cwd = Some(cwd);
            keys.command.is_some()
        }
    };
    for (key, tools, why) in [
        (
            "allowed_tools",
            &keys.allowed_tools,
            "is empty, so the policy would have no tools; list the tools to offer, or \
             leave it out to offer every tool the server lists",
        ),
        (
            "probe_tools",
            &keys.probe_tools,
            "is empty, so no probe could call anything; list the tools probes may call \
             (e.g. [\"read_graph\", \"open_nodes\"]), or leave it out for the policy's \
             tools and the state_probes' tools",
        ),
    ] {
        if tools.as_ref().is_some_and(Vec::is_empty) {
            problems.push(at(&format!("environment.{key}"), why.into()));
        }
    }
    if let Some(name) = &keys.name {
        problems.extend(name_problem(path, name));
    }
    problems.extend(ranges::MCP_MAX_PROCESSES.problem(
        path,
        "environment.max_processes",
        keys.max_processes,
    ));
    for (field, secs, range) in [
        ("timeout_secs", keys.timeout_secs, ranges::MCP_TIMEOUT_SECS),
        (
            "startup_timeout_secs",
            keys.startup_timeout_secs,
            ranges::MCP_STARTUP_SECS,
        ),
    ] {
        problems.extend(range.problem(path, &format!("environment.{field}"), secs));
    }
    for (field, calls) in [
        ("state_probes", &keys.state_probes),
        ("seed_calls", &keys.seed_calls),
    ] {
        problems.extend(state_calls::problems(
            path,
            &format!("environment.{field}"),
            calls,
        ));
    }
    (transport_ok && problems.len() == before).then_some(keys)
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

    fn keys(toml_text: &str) -> McpConfig {
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
        let McpTransport::Stdio { command, env, .. } = config.transport() else {
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
        let snapshot = toml::to_string(&config).unwrap();
        assert!(snapshot.contains("read_graph"), "{snapshot}");
        let p = read("url = \"http://x/mcp\"\nstate_probes = [{ tool = \" \" }]").unwrap_err();
        assert_eq!(
            p[0].location.as_deref(),
            Some("environment.state_probes[0].tool")
        );
    }
}
