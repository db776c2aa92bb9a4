//! Nothing of the machine in training data: every shipped example's job, run
//! as a user runs it (the binary, the example's own config with only its
//! paths made absolute, its servers where the tests have them), exported in
//! every format, and every string of every row searched for what would give
//! the machine away: an absolute path, `/tmp/`, a session folder's process id
//! (`sparring-mcp-<pid>`), the repository (data root), the working directory or
//! the temporary folder.
//!
//! The examples' configs name `../prompts`, `../data`, …: here those become
//! the repository's absolute paths, so a path that leaked from a config into a
//! row would be found. Every process gets its own `TMPDIR`, so a session folder
//! left behind is found too.
//!
//! Which examples run: the mock-driven ones always; `mcp-memory` and
//! `synthesize-mcp-memory` with the installed memory server
//! (`SPARRING_MCP_MEMORY`); the NeMo Gym ones with their servers up
//! (`SPARRING_NEMO_GYM_*_URL`, as `.ci/run` starts them). `local-smollm2` needs
//! the local model and is not run here (its rows have the quickstart's shape).

use std::path::{Path, PathBuf};
use std::process::Output;

use regex::Regex;
use serde_json::Value;

use crate::common::{self, mock_judges, repo, text};

/// One shipped example and what it needs.
struct Example {
    /// Its path in the repository.
    file: &'static str,
    /// Environment variables naming its servers; skipped when one is unset.
    needs: &'static [&'static str],
    /// Its own text → the text run here (servers, sizes).
    adapt: fn(String) -> String,
    /// Extra `export` formats beyond openai, hf, sharegpt and dpo.
    formats: &'static [&'static str],
}

fn unchanged(text: String) -> String {
    text
}

/// The quickstart lives at the repository's root (`sparring init` writes it
/// beside its files): its paths as the examples' `../` ones.
fn from_the_root(text: String) -> String {
    ["prompts/", "data/", "personas\""]
        .iter()
        .fold(text, |text, relative| {
            text.replace(&format!("\"{relative}"), &format!("\"../{relative}"))
        })
}

fn env(var: &str) -> String {
    std::env::var(var).unwrap_or_default()
}

/// `from` in `text` replaced, insisting that the example still has it.
fn swap(text: String, from: &str, to: &str) -> String {
    assert!(text.contains(from), "the example no longer has {from}");
    text.replace(from, to)
}

fn memory_server(text: String) -> String {
    swap(
        text,
        "\"npx\", \"-y\", \"@modelcontextprotocol/server-memory@2026.8.31\"",
        &format!("\"{}\"", env("SPARRING_MCP_MEMORY")),
    )
}

fn nemo_gym(text: String, port: &str, var: &str) -> String {
    swap(text, &format!("http://127.0.0.1:{port}"), &env(var))
}

const EXAMPLES: &[Example] = &[
    Example {
        file: "quickstart.toml",
        needs: &[],
        adapt: from_the_root,
        formats: &[],
    },
    Example {
        file: "examples/phone.toml",
        needs: &[],
        adapt: unchanged,
        formats: &["hf --user-tools"],
    },
    Example {
        file: "examples/qa-mcqa.toml",
        needs: &[],
        adapt: unchanged,
        formats: &[],
    },
    Example {
        file: "examples/qa-math-judge.toml",
        needs: &[],
        adapt: unchanged,
        formats: &[],
    },
    Example {
        file: "examples/simulated-orders.toml",
        needs: &[],
        adapt: unchanged,
        formats: &[],
    },
    Example {
        file: "examples/mcp-memory.toml",
        needs: &["SPARRING_MCP_MEMORY"],
        adapt: memory_server,
        formats: &[],
    },
    Example {
        file: "examples/nemo-gym-workplace.toml",
        needs: &["SPARRING_NEMO_GYM_WORKPLACE_ASSISTANT_URL"],
        adapt: |t| nemo_gym(t, "18401", "SPARRING_NEMO_GYM_WORKPLACE_ASSISTANT_URL"),
        formats: &["nemo_gym"],
    },
    Example {
        file: "examples/nemo-gym-mcqa.toml",
        needs: &["SPARRING_NEMO_GYM_MCQA_URL"],
        adapt: |t| nemo_gym(t, "18402", "SPARRING_NEMO_GYM_MCQA_URL"),
        formats: &["nemo_gym"],
    },
    Example {
        file: "examples/nemo-gym-calendar.toml",
        needs: &["SPARRING_NEMO_GYM_CALENDAR_URL"],
        adapt: |t| nemo_gym(t, "18403", "SPARRING_NEMO_GYM_CALENDAR_URL"),
        formats: &["nemo_gym"],
    },
];

/// A folder of the test: `work` is the processes' working directory (the
/// configs are in `work/examples`), `tmp` their `TMPDIR`.
struct Place {
    _dir: tempfile::TempDir,
    work: PathBuf,
    tmp: PathBuf,
}

impl Place {
    fn new() -> Place {
        let dir = tempfile::tempdir().unwrap();
        let work = dir.path().join("work");
        let tmp = dir.path().join("tmp");
        for d in [&work, &tmp, &work.join("examples"), &work.join("out")] {
            std::fs::create_dir_all(d).unwrap();
        }
        // As in the repository, where the examples run from: a job without a
        // template of its own reads the default from `prompts/`.
        common::copy_into(&repo().join("prompts"), &work.join("prompts"));
        Place {
            work: work.canonicalize().unwrap(),
            tmp: tmp.canonicalize().unwrap(),
            _dir: dir,
        }
    }

    /// `sparring ARGS` in `work`, with `TMPDIR` = `tmp`; must succeed.
    fn sparring(&self, args: &[&str]) -> String {
        let out: Output = std::process::Command::new(env!("CARGO_BIN_EXE_sparring"))
            .args(args)
            .current_dir(&self.work)
            .env("TMPDIR", &self.tmp)
            .env_remove("SPARRING_DATABASE")
            .output()
            .unwrap();
        let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
        assert!(out.status.success(), "sparring {args:?}:\n{said}");
        said
    }

    /// The example's config in `work/examples`, its `../` paths made the
    /// repository's absolute ones (except `../out/`, the test's own).
    fn config(&self, name: &str, text: &str) -> PathBuf {
        let repo = repo().display().to_string();
        let text = text
            .replace("\"../out/", "\"OUT_FOLDER/")
            .replace("\"../", &format!("\"{repo}/"))
            .replace(
                "OUT_FOLDER/",
                &format!("{}/", self.work.join("out").display()),
            );
        let path = self.work.join("examples").join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    /// Session folders (or anything else) sparring left in its `TMPDIR`.
    fn left_in_tmp(&self) -> Vec<String> {
        std::fs::read_dir(&self.tmp)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect()
    }

    /// What would give this machine away, as literal strings.
    fn machine_strings(&self) -> Vec<String> {
        let mut known = vec![
            repo().display().to_string(),
            self.work.display().to_string(),
            self.tmp.display().to_string(),
            std::env::temp_dir().display().to_string(),
            "/tmp/".to_string(),
        ];
        if let Ok(resolved) = repo().canonicalize() {
            known.push(resolved.display().to_string());
        }
        if let Ok(home) = std::env::var("HOME") {
            if home.len() > 1 {
                known.push(home);
            }
        }
        // A server's address is the machine's too: environments are labelled
        // by name (`nemo_gym:mcqa`), never by URL.
        known.extend(
            std::env::vars()
                .filter(|(k, _)| k.starts_with("SPARRING_NEMO_GYM_") && k.ends_with("_URL"))
                .map(|(_, url)| url),
        );
        known.retain(|k| k.len() > 1);
        known.sort();
        known.dedup();
        known
    }
}

/// A path that starts at the root: `/` then two or more segments, after the
/// start of the text, a space, a quote, a bracket, `=`, `,`, `;` or `:` (so
/// `simulated:/home/x/tools.json` is one, `http://host/a/b` and `and/or` are not).
fn absolute_path() -> Regex {
    Regex::new(r#"(?:^|[\s"'(\[=,;:])((?:/[A-Za-z0-9._~+@-]+){2,})"#).unwrap()
}

fn process_folder() -> Regex {
    Regex::new(r"sparring-mcp-\d+").unwrap()
}

/// Each string (and key) of a JSON value, with where it is.
fn strings<'a>(value: &'a Value, at: String, out: &mut Vec<(String, &'a str)>) {
    match value {
        Value::String(s) => out.push((at, s)),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                strings(item, format!("{at}[{i}]"), out);
            }
        }
        Value::Object(map) => {
            for (key, item) in map {
                out.push((format!("{at} (key)"), key));
                strings(item, format!("{at}.{key}"), out);
            }
        }
        _ => {}
    }
}

/// What each string of the rows of `file` gives away: `file:line at: why`.
fn traces_in(file: &Path, known: &[String]) -> Vec<String> {
    let (absolute, pid) = (absolute_path(), process_folder());
    let mut found = Vec::new();
    let content = std::fs::read_to_string(file).unwrap();
    for (n, line) in content.lines().enumerate() {
        let row: Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("{}:{}: not JSON ({e})", file.display(), n + 1));
        let mut all = Vec::new();
        strings(&row, String::new(), &mut all);
        for (at, s) in all {
            let mut why: Vec<String> = known
                .iter()
                .filter(|k| s.contains(k.as_str()))
                .map(|k| format!("'{k}'"))
                .collect();
            why.extend(
                absolute
                    .captures_iter(s)
                    .map(|c| format!("path '{}'", &c[1])),
            );
            why.extend(pid.find_iter(s).map(|m| format!("'{}'", m.as_str())));
            if !why.is_empty() {
                let name = file.file_name().unwrap().to_string_lossy();
                let excerpt: String = s.chars().take(160).collect();
                found.push(format!(
                    "{name}:{} {at}: {} in \"{excerpt}\"",
                    n + 1,
                    why.join(", ")
                ));
            }
        }
    }
    found
}

/// Run one example twice (as shipped, and with the perfect mock policy as
/// job B), judge A against B pairwise, and export A in every format into
/// `work/out/NAME.FORMAT.jsonl`; the files written.
fn run_and_export(place: &Place, example: &Example) -> Vec<PathBuf> {
    let shipped = std::fs::read_to_string(repo().join(example.file)).unwrap();
    let text = (example.adapt)(shipped);
    let name = example
        .file
        .trim_start_matches("examples/")
        .trim_end_matches(".toml");
    let stem = name.to_string();
    let database = format!(
        "sqlite://{}",
        place.work.join(format!("{stem}.db")).display()
    );
    let text = swap(
        text,
        "database = \"sqlite://sparring.db\"",
        &format!("database = \"{database}\""),
    );
    let a = place.config(&format!("{stem}.toml"), &text);
    let b_text = swap(
        swap(
            text,
            &format!("name = \"{name}\""),
            &format!("name = \"{name}-b\""),
        ),
        "model = \"mock-policy\"",
        "model = \"mock-policy+perfect\"",
    );
    let b = place.config(&format!("{stem}-b.toml"), &b_text);
    let mut ids = Vec::new();
    for config in [&a, &b] {
        let said = place.sparring(&["run", config.to_str().unwrap(), "--quiet"]);
        ids.push(common::job_id_from(&said).to_string());
    }
    let judges = place.work.join("pairwise.toml");
    std::fs::write(
        &judges,
        mock_judges(
            "[[judges]]\nname = \"pref\"\nendpoint = \"judge\"\nbuiltin = \"pairwise_preference\"\n",
        ),
    )
    .unwrap();
    place.sparring(&[
        "judge",
        judges.to_str().unwrap(),
        "--pairwise",
        "--a",
        &ids[0],
        "--b",
        &ids[1],
        "--database",
        &database,
        "--quiet",
    ]);
    let mut formats: Vec<&str> = vec![
        "openai",
        "hf",
        "sharegpt",
        "dpo --judge pref",
        "dpo --judge pref --dpo-shape trajectory",
    ];
    formats.extend(example.formats);
    let mut files = Vec::new();
    for format in formats {
        let words: Vec<&str> = format.split(' ').collect();
        let out = place.work.join("out").join(format!(
            "{stem}.{}.jsonl",
            words.join("_").replace("--", "")
        ));
        let mut args = vec![
            "export",
            "--job",
            &ids[0],
            "--format",
            words[0],
            "--out",
            out.to_str().unwrap(),
            "--database",
            &database,
        ];
        args.extend(&words[1..]);
        place.sparring(&args);
        files.push(out);
    }
    // A curated export: its manifest and dataset card are shared as they are.
    let curated = place.work.join("out").join(format!("{stem}.curated"));
    place.sparring(&[
        "export",
        "--job",
        &ids[0],
        "--format",
        "hf",
        "--out",
        curated.join("data.jsonl").to_str().unwrap(),
        "--database",
        &database,
        "--profile",
        "strict",
    ]);
    files
}

/// Every curated export's `manifest.json` and `README.md` under `work/out`.
fn curated_files(place: &Place) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(place.work.join("out"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .flat_map(|d| [d.join("manifest.json"), d.join("README.md")])
        .collect();
    files.sort();
    files
}

/// What the text of `file` (a curated export's manifest or card) gives
/// away: `file at: why`.
fn traces_in_text(file: &Path, known: &[String]) -> Vec<String> {
    let content = std::fs::read_to_string(file).unwrap();
    let value = if file.extension().is_some_and(|e| e == "json") {
        serde_json::from_str(&content)
            .unwrap_or_else(|e| panic!("{}: not JSON ({e})", file.display()))
    } else {
        Value::String(content)
    };
    let dir = tempfile::tempdir().unwrap();
    let one_line = dir.path().join(format!(
        "{}-{}",
        file.parent()
            .unwrap()
            .file_name()
            .unwrap()
            .to_string_lossy(),
        file.file_name().unwrap().to_string_lossy()
    ));
    std::fs::write(&one_line, serde_json::to_string(&value).unwrap()).unwrap();
    traces_in(&one_line, known)
}

/// Every `.jsonl` under `work/out`: the exports, their sidecars, the
/// synthesized scenarios.
fn written(place: &Place) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(place.work.join("out"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    files
}

#[test]
fn no_exported_row_of_any_shipped_example_holds_a_path_a_temp_folder_or_a_process_id() {
    let place = Place::new();
    let mut ran: Vec<String> = Vec::new();
    let mut rows = 0usize;
    for example in EXAMPLES {
        let missing: Vec<&&str> = example.needs.iter().filter(|v| env(v).is_empty()).collect();
        if !missing.is_empty() {
            println!(
                "SKIPPED: {}: {missing:?} not set (source the test servers as .ci/run does)",
                example.file
            );
            continue;
        }
        for file in run_and_export(&place, example) {
            let n = std::fs::read_to_string(&file).unwrap().lines().count();
            let name = file.file_name().unwrap().to_string_lossy().into_owned();
            let is_pairs = name.contains(".dpo");
            assert!(n > 0 || is_pairs, "{name}: no rows");
            rows += n;
        }
        ran.push(example.file.to_string());
    }

    // The synthesis examples (their output is training data too: scenarios),
    // smaller than shipped, and the job that solves the retail ones.
    let retail = swap(
        swap(
            std::fs::read_to_string(repo().join("examples/synthesize-retail.toml")).unwrap(),
            "target = 200",
            "target = 24",
        ),
        "{ count = 20 }",
        "{ count = 3 }",
    );
    let synth = place.config("synthesize-retail.toml", &retail);
    place.sparring(&["synthesize", synth.to_str().unwrap(), "--quiet"]);
    let solve = Example {
        file: "examples/solve-synthesized.toml",
        needs: &[],
        adapt: unchanged,
        formats: &["scenarios"],
    };
    run_and_export(&place, &solve);
    ran.push("synthesize-retail.toml, solve-synthesized.toml".into());
    if env("SPARRING_MCP_MEMORY").is_empty() {
        println!("SKIPPED: examples/synthesize-mcp-memory.toml: SPARRING_MCP_MEMORY not set");
    } else {
        let memory = swap(
            memory_server(
                std::fs::read_to_string(repo().join("examples/synthesize-mcp-memory.toml"))
                    .unwrap(),
            ),
            "target = 20",
            "target = 6",
        );
        let synth = place.config("synthesize-mcp-memory.toml", &memory);
        place.sparring(&["synthesize", synth.to_str().unwrap(), "--quiet"]);
        ran.push("synthesize-mcp-memory.toml".into());
    }

    let known = place.machine_strings();
    let files = written(&place);
    let mut found = Vec::new();
    let mut pairs = 0;
    for file in &files {
        if file.to_string_lossy().contains(".dpo") {
            pairs += std::fs::read_to_string(file).unwrap().lines().count();
        }
        found.extend(traces_in(file, &known));
    }
    let curated = curated_files(&place);
    for file in &curated {
        found.extend(traces_in_text(file, &known));
    }
    println!(
        "scanned {} files ({rows} export rows, {pairs} DPO pairs) and {} manifests and dataset cards of {}",
        files.len(),
        curated.len(),
        ran.join(", ")
    );
    assert!(
        curated.len() >= 2 * EXAMPLES.iter().filter(|e| e.needs.is_empty()).count(),
        "not every example's curated export was scanned: {curated:?}"
    );
    assert!(
        pairs > 0,
        "no DPO pair was exported, so the dpo rows went unchecked"
    );
    assert!(
        found.is_empty(),
        "{} strings give the machine away:\n{}",
        found.len(),
        found
            .iter()
            .take(40)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    let left = place.left_in_tmp();
    assert!(left.is_empty(), "left in TMPDIR: {left:?}");
}

#[test]
fn the_scan_finds_paths_temp_folders_and_process_ids_and_passes_urls_and_prose() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rows.jsonl");
    let rows = [
        r#"{"m": "(environment: simulated:/home/ann/data/tools.json)"}"#,
        r#"{"m": "Error: cannot open /var/lib/x/memory.jsonl"}"#,
        r#"{"m": "sparring-mcp-4242-3/memory.jsonl"}"#,
        r#"{"m": "see \"/srv/data\" and http://127.0.0.1:18401/verify/x, and/or km/h, 12/05/2024"}"#,
        r#"{"m": "./memory.jsonl is in the session folder"}"#,
    ];
    std::fs::write(&file, rows.join("\n")).unwrap();
    let found = traces_in(&file, &["/tmp/".to_string()]);
    let lines: Vec<&str> = found.iter().map(|f| f.split(' ').next().unwrap()).collect();
    assert_eq!(
        lines,
        [
            "rows.jsonl:1",
            "rows.jsonl:2",
            "rows.jsonl:3",
            "rows.jsonl:4"
        ],
        "{found:#?}"
    );
    assert!(
        found[3].contains(": path '/srv/data' in"),
        "only the quoted path: {found:#?}"
    );
}

#[test]
fn the_scan_of_a_manifest_and_a_card_finds_a_path_in_either() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("x.curated");
    std::fs::create_dir(&folder).unwrap();
    std::fs::write(
        folder.join("manifest.json"),
        r#"{"files": [{"file": "data.train.jsonl"}], "dropped": [{"reason": "cannot open /var/lib/x/db.json"}]}"#,
    )
    .unwrap();
    std::fs::write(
        folder.join("README.md"),
        "---\nlicense: other\n---\n# job\n- `data.train.jsonl`: 3 rows\n",
    )
    .unwrap();
    let manifest = traces_in_text(&folder.join("manifest.json"), &[]);
    assert_eq!(manifest.len(), 1, "{manifest:#?}");
    assert!(
        manifest[0].contains("path '/var/lib/x/db.json'"),
        "{manifest:#?}"
    );
    assert!(traces_in_text(&folder.join("README.md"), &[]).is_empty());
    std::fs::write(folder.join("README.md"), "made in /home/ann/work\n").unwrap();
    assert_eq!(traces_in_text(&folder.join("README.md"), &[]).len(), 1);
}
