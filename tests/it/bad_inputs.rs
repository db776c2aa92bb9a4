//! The bad-input corpus: every folder in `tests/bad_inputs/` is one input a user or an
//! attacker could give sparring, with `case.toml` saying how to give it and what must
//! come back. For each case, the test asserts:
//! - the exit code (CLI) or HTTP status;
//! - that the message names what it must (the file and line, or the field, and what
//!   would be right): every string of `mentions` appears in stderr or the body;
//! - that nothing panicked;
//! - that nothing was written: the case's folder holds exactly the files it held
//!   before, byte for byte (no database file, no output, no `.partial` file),
//!   and over HTTP the server's database has no job.
//!
//! A command that stores (`run`, `submit`, `synthesize`, `judge`) reads and
//! checks all its input before it opens a database, so each such case is also
//! given with an existing database (`sparring.db`, holding job 1: a generation
//! job with conversations) in its folder, which must be left as it was. A
//! `validate` case is given to `run` and `submit` too, both ways, with the
//! same exit code and message.
//!
//! `case.toml`:
//! ```toml
//! about = "what the input is and what went wrong with it before"
//! copy = ["data/retail/scenarios.jsonl"]   # repository paths copied into the case folder first
//! cli = ["validate", "job.toml"]           # run `sparring` with these args in the case folder
//! exit = 2
//! # or, against `sparring serve` in this process, its data root holding the case folder:
//! # http = { method = "POST", path = "/v1/jobs?base={case}", body = "job.toml", content_type = "application/toml" }
//! # status = 422
//! mentions = ["job.toml", "line 4", "concurrency"]
//! # existing_database = true   # give it only with the existing sparring.db (e.g. `judge --job 1`)
//! # fifo = ["pipe.jsonl"]      # named pipes made in the case folder (git holds none)
//! # nest = [{ file = "job.toml", open = "(", close = ")", times = 100000 }]
//! #                            # in that file, @OPEN@ and @CLOSE@ become open and close
//! #                            # repeated `times` (git holds no 100,000-deep file)
//! ```
//!
//! Every command is given 60 s: one that hangs fails its case (and is killed).
//! `{case}` in `cli` is the case folder's path; in `path`, the case folder
//! relative to the service's data root (the service's folder, which holds it).

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use serde::Deserialize;

use crate::common::{self, Service};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    about: String,
    #[serde(default)]
    copy: Vec<String>,
    #[serde(default)]
    cli: Option<Vec<String>>,
    #[serde(default)]
    exit: Option<i32>,
    #[serde(default)]
    http: Option<HttpCall>,
    #[serde(default)]
    status: Option<u16>,
    mentions: Vec<String>,
    /// The command needs the existing database (a judging job of job 1).
    #[serde(default)]
    existing_database: bool,
    /// Named pipes to make in the case folder.
    #[serde(default)]
    fifo: Vec<String>,
    /// Text made at run time in a file of the case.
    #[serde(default)]
    nest: Vec<Nest>,
}

/// In `file`, `@OPEN@` and `@CLOSE@` replaced by `open` and `close`
/// repeated `times`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Nest {
    file: String,
    open: String,
    #[serde(default)]
    close: String,
    times: usize,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct HttpCall {
    method: String,
    path: String,
    /// A file of the case folder sent as the body.
    #[serde(default)]
    body: Option<String>,
    #[serde(default)]
    content_type: Option<String>,
}

fn corpus() -> PathBuf {
    common::repo().join("tests/bad_inputs")
}

fn cases() -> Vec<(String, Case)> {
    let mut cases = Vec::new();
    for entry in std::fs::read_dir(corpus()).unwrap() {
        let dir = entry.unwrap().path();
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(dir.join("case.toml"))
            .unwrap_or_else(|e| panic!("{name}/case.toml: {e}"));
        let case: Case = toml::from_str(&text).unwrap_or_else(|e| panic!("{name}/case.toml: {e}"));
        assert!(
            case.cli.is_some() != case.http.is_some(),
            "{name}: give either `cli` or `http`"
        );
        assert!(
            !case.mentions.is_empty(),
            "{name}: say what the message must name"
        );
        cases.push((name, case));
    }
    cases.sort_by(|a, b| a.0.cmp(&b.0));
    cases
}

/// The case's files copied into `into`, with the repository paths it asks
/// for, its nested text made and its named pipes.
fn lay_out(name: &str, case: &Case, into: &Path) {
    copy_tree(&corpus().join(name), into);
    for nest in &case.nest {
        let path = into.join(&nest.file);
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{name}: {}: {e}", nest.file))
            .replace("@OPEN@", &nest.open.repeat(nest.times))
            .replace("@CLOSE@", &nest.close.repeat(nest.times));
        std::fs::write(&path, text).unwrap();
    }
    for fifo in &case.fifo {
        let made = std::process::Command::new("mkfifo")
            .arg(into.join(fifo))
            .status()
            .unwrap();
        assert!(made.success(), "{name}: mkfifo {fifo}");
    }
    for path in &case.copy {
        let from = common::repo().join(path);
        let to = into.join(path);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        if from.is_dir() {
            copy_tree(&from, &to);
        } else {
            std::fs::copy(&from, &to).unwrap_or_else(|e| panic!("{name}: copy {path}: {e}"));
        }
    }
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        let kind = entry.file_type().unwrap();
        if kind.is_symlink() {
            // A link stays a link (`cli-init-symlink-forced`).
            std::os::unix::fs::symlink(std::fs::read_link(entry.path()).unwrap(), target).unwrap();
        } else if kind.is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// Every file under `dir` with its size and a hash of its bytes: what
/// "nothing was written" compares.
fn listing(dir: &Path) -> BTreeMap<PathBuf, (u64, u64)> {
    crate::common::entries_below(dir)
        .into_iter()
        .filter(|(_, meta)| !meta.is_dir())
        .map(|(relative, meta)| {
            // A named pipe of the case is never read (it would block).
            let seen = if meta.is_file() {
                (meta.len(), content_hash(&dir.join(&relative)))
            } else {
                (0, 0)
            };
            (relative, seen)
        })
        .collect()
}

fn content_hash(path: &Path) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    std::fs::read(path).unwrap_or_default().hash(&mut hasher);
    hasher.finish()
}

/// Commands that create or open a database.
const STORING: &[&str] = &["run", "submit", "synthesize", "judge"];

/// The commands one CLI case is given as, each with whether the existing
/// database is laid out first: the case's own; a `validate` case's config
/// through `run` and `submit` as well; each storing command both without a
/// database and with the existing one (unless the case needs that one).
fn variants(case: &Case, args: &[String]) -> Vec<(Vec<String>, bool)> {
    let mut commands = vec![args.to_vec()];
    if let [command, config] = args {
        if command == "validate" {
            commands.push(vec!["run".into(), config.clone(), "--quiet".into()]);
            commands.push(vec!["submit".into(), config.clone()]);
        }
    }
    let mut out = Vec::new();
    for command in commands {
        let storing = command
            .first()
            .is_some_and(|c| STORING.contains(&c.as_str()));
        if !case.existing_database {
            out.push((command.clone(), false));
        }
        if storing || case.existing_database {
            out.push((command, true));
        }
    }
    out
}

/// A database as `sparring run` left it: job 1, a generation job over two
/// retail scenarios with the mock, its conversations stored. Made once.
fn existing_database() -> &'static Path {
    static MADE: std::sync::OnceLock<(tempfile::TempDir, PathBuf)> = std::sync::OnceLock::new();
    let (_, path) = MADE.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let spec = common::JobSpec {
            scenarios: common::first_scenarios(dir.path(), 2),
            database: Some("sqlite://sparring.db".into()),
            ..Default::default()
        };
        let (job, _) = common::write_job(dir.path(), &spec);
        let out = common::sparring(dir.path(), &["run", job.to_str().unwrap(), "--quiet"]);
        assert!(
            out.status.success(),
            "the existing database: {}{}",
            common::text(&out.stdout),
            common::text(&out.stderr)
        );
        let path = dir.path().join("sparring.db");
        assert!(path.exists() && !dir.path().join("sparring.db-wal").exists());
        (dir, path)
    });
    path
}

/// What went wrong with one case given as `args`, or `None` when it held.
fn check_cli(name: &str, case: &Case, args: &[String], with_database: bool) -> Option<String> {
    let dir = tempfile::tempdir().unwrap();
    lay_out(name, case, dir.path());
    if with_database {
        std::fs::copy(existing_database(), dir.path().join("sparring.db")).unwrap();
    }
    let before = listing(dir.path());
    let args: Vec<String> = args
        .iter()
        .map(|a| a.replace("{case}", &dir.path().display().to_string()))
        .collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let Some(out) = sparring_within(dir.path(), &args, Duration::from_secs(60)) else {
        return Some(format!(
            "`sparring {}`: still running after 60 s (killed)",
            args.join(" ")
        ));
    };
    let stderr = common::text(&out.stderr);
    let mut wrong = Vec::new();
    if out.status.code() != case.exit {
        wrong.push(format!(
            "exit code {:?}, want {:?}",
            out.status.code(),
            case.exit
        ));
    }
    wrong.extend(missing(&case.mentions, &stderr));
    if stderr.contains("panicked") {
        wrong.push("it panicked".into());
    }
    let after = listing(dir.path());
    if after != before {
        let new: Vec<_> = after
            .iter()
            .filter(|(path, file)| before.get(*path) != Some(file))
            .map(|(path, _)| path.display().to_string())
            .collect();
        wrong.push(format!("it wrote {new:?}"));
    }
    (!wrong.is_empty()).then(|| {
        let database = if with_database {
            " with the existing database"
        } else {
            ""
        };
        format!(
            "`sparring {}`{database}: {}\n  stderr: {stderr}",
            args.join(" "),
            wrong.join("; ")
        )
    })
}

/// `sparring ARGS` in `cwd`, or `None` (killed) when it runs past `limit`.
fn sparring_within(cwd: &Path, args: &[&str], limit: Duration) -> Option<Output> {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_sparring"))
        .args(args)
        .current_dir(cwd)
        .env_remove("SPARRING_DATABASE")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let read = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            bytes
        })
    };
    let stdout = read(Box::new(child.stdout.take().unwrap()));
    let stderr = read(Box::new(child.stderr.take().unwrap()));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Some(Output {
        status,
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
    })
}

async fn check_http(name: &str, case: &Case, call: &HttpCall) -> Option<String> {
    let service = Service::start_with(None).await;
    let case_dir = service.dir.path().join("case");
    lay_out(name, case, &case_dir);
    let before = listing(service.dir.path());
    // The service's data root is its folder: `{case}` is the case folder relative to it.
    let path = call.path.replace("{case}", "case");
    let mut request = match call.method.as_str() {
        "GET" => service.get(&path),
        "POST" => service.post(&path),
        other => panic!("{name}: method {other} is not supported by the corpus"),
    };
    if let Some(body) = &call.body {
        request = request.body(std::fs::read(case_dir.join(body)).unwrap());
    }
    if let Some(content_type) = &call.content_type {
        request = request.header("content-type", content_type);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let body = response.text().await.unwrap();
    let mut wrong = Vec::new();
    if Some(status) != case.status {
        wrong.push(format!("status {status}, want {:?}", case.status));
    }
    wrong.extend(missing(&case.mentions, &body));
    let jobs = service.json("/v1/jobs").await;
    if jobs["jobs"].as_array().is_some_and(|jobs| !jobs.is_empty()) {
        wrong.push(format!("it stored a job: {jobs}"));
    }
    let after = listing(service.dir.path());
    let new: Vec<_> = after
        .keys()
        .filter(|path| !before.contains_key(*path) && !is_service_database(path))
        .map(|path| path.display().to_string())
        .collect();
    if !new.is_empty() {
        wrong.push(format!("it wrote {new:?}"));
    }
    (!wrong.is_empty()).then(|| format!("{}\n  body: {body}", wrong.join("; ")))
}

/// The service's own database (and its WAL files) lives beside the data.
fn is_service_database(path: &Path) -> bool {
    path.to_string_lossy().starts_with("service.db")
}

fn missing(mentions: &[String], text: &str) -> Vec<String> {
    mentions
        .iter()
        .filter(|m| !text.contains(m.as_str()))
        .map(|m| format!("the message does not mention {m:?}"))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_bad_input_in_the_corpus_gets_a_clear_error_and_writes_nothing() {
    let cases = cases();
    let mut failures = Vec::new();
    let mut given = 0;
    for (name, case) in &cases {
        let found: Vec<String> = match (&case.cli, &case.http) {
            (Some(args), _) => variants(case, args)
                .into_iter()
                .filter_map(|(args, with_database)| {
                    given += 1;
                    check_cli(name, case, &args, with_database)
                })
                .collect(),
            (None, Some(call)) => {
                given += 1;
                check_http(name, case, call).await.into_iter().collect()
            }
            (None, None) => unreachable!("checked in cases()"),
        };
        for failure in found {
            failures.push(format!("{name} ({}): {failure}", case.about));
        }
    }
    println!("bad-input corpus: {} cases given {given} ways", cases.len());
    assert!(
        failures.is_empty(),
        "{} of {given} ways of giving the {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}
