//! `sparring import` through the binary, on a real SQLite file and on
//! Postgres: each conversation stored once however often (or however
//! interrupted) the import runs, every invalid line said before anything is
//! stored, and an imported job judged, checked and exported as a generated
//! one is.

use std::collections::HashSet;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::common::{databases, job_id_from, mock_judges, sparring, text, unique_name};
use sparring::store::{self, JobKind, Store};

/// An `openai` line: a system prompt, a user asking for order `i`, a tool
/// call and its result, and the answer.
fn order_row(i: usize) -> String {
    json!({
        "messages": [
            {"role": "system", "content": "You help with orders."},
            {"role": "user", "content": format!("Where is order #{i}?")},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
                "function": {"name": "get_order", "arguments": format!("{{\"id\": \"#{i}\"}}")}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "shipped"},
            {"role": "assistant", "content": format!("Order #{i} has shipped.")}
        ],
        "tools": [{"type": "function", "function": {"name": "get_order",
            "description": "Look up an order", "parameters": {"type": "object",
            "properties": {"id": {"type": "string"}}}}}]
    })
    .to_string()
}

fn write_rows(path: &Path, n: usize) {
    let mut jsonl = String::with_capacity(n * 600);
    for i in 0..n {
        jsonl.push_str(&order_row(i));
        jsonl.push('\n');
    }
    std::fs::write(path, jsonl).unwrap();
}

fn db_url(dir: &Path, database: &Option<String>) -> String {
    database
        .clone()
        .unwrap_or_else(|| format!("sqlite://{}", dir.join("imports.db").display()))
}

/// Every conversation of `job` once: as many conversations as items, each
/// item one conversation.
async fn assert_each_once(store: &dyn Store, job: i64) -> usize {
    let counts = store.item_counts(job).await.unwrap();
    assert_eq!(
        counts.pending + counts.leased + counts.failed,
        0,
        "{counts:?}"
    );
    let conversations = store.conversations_page(job, 0, 1_000_000).await.unwrap();
    let items: HashSet<i64> = conversations
        .iter()
        .map(|c| c.conversation.item_id)
        .collect();
    assert_eq!(
        items.len(),
        conversations.len(),
        "an item with two conversations"
    );
    assert_eq!(conversations.len() as i64, counts.done);
    conversations.len()
}

#[tokio::test]
async fn an_import_stores_each_conversation_once_with_its_calls_and_again_adds_nothing() {
    let dir = tempfile::tempdir().unwrap();
    for database in databases(dir.path(), "import once") {
        let db = db_url(dir.path(), &database);
        let name = unique_name("orders");
        let file = dir.path().join("orders.jsonl");
        write_rows(&file, 50);

        let first = sparring(
            dir.path(),
            &["import", "orders.jsonl", "--name", &name, "--database", &db],
        );
        assert!(first.status.success(), "{}", text(&first.stderr));
        let said = text(&first.stderr);
        assert!(
            said.contains("orders.jsonl: reading it as openai (told from its first line)"),
            "{said}"
        );
        let out = text(&first.stdout);
        assert!(
            out.contains("50 conversations as openai (detected), 50 added"),
            "{out}"
        );
        let id = job_id_from(&out);

        let store = store::open(&db).await.unwrap();
        let job = store.get_job(id).await.unwrap().unwrap();
        assert_eq!(job.kind, JobKind::Import);
        assert_eq!(job.status.as_str(), "done");
        assert_eq!(assert_each_once(store.as_ref(), id).await, 50);
        let stored = store.conversations_page(id, 0, 1).await.unwrap().remove(0);
        let roles: Vec<&str> = stored.messages.iter().map(|m| m.role.as_str()).collect();
        assert_eq!(roles, ["system", "user", "assistant", "tool", "assistant"]);
        assert_eq!(
            stored.messages[2].tool_calls.as_ref().unwrap()[0]["name"],
            "get_order"
        );
        assert_eq!(stored.messages[3].tool_call_id.as_deref(), Some("c1"));
        assert_eq!(stored.conversation.tools[0]["name"], "get_order");
        assert_eq!(
            stored.conversation.metadata["import"]["file"],
            "orders.jsonl"
        );
        assert_eq!(stored.conversation.metadata["import"]["line"], 1);

        // The same file, and a second one holding the first's conversations
        // in another order with one more: only that one is added.
        let again = sparring(
            dir.path(),
            &["import", "orders.jsonl", "--name", &name, "--database", &db],
        );
        assert!(again.status.success(), "{}", text(&again.stderr));
        assert!(text(&again.stdout).contains("0 added, 50 already in the job"));
        let mut rows: Vec<String> = (0..51).map(order_row).collect();
        rows.reverse();
        std::fs::write(dir.path().join("more.jsonl"), rows.join("\n")).unwrap();
        let more = sparring(
            dir.path(),
            &[
                "import",
                "more.jsonl",
                "--name",
                &name,
                "--database",
                &db,
                "--format",
                "openai",
            ],
        );
        assert!(more.status.success(), "{}", text(&more.stderr));
        let out = text(&more.stdout);
        assert!(
            out.contains("51 conversations as openai, 1 added, 50 already"),
            "{out}"
        );
        assert_eq!(job_id_from(&out), id);
        assert_eq!(assert_each_once(store.as_ref(), id).await, 51);
        store.close().await;
    }
}

#[tokio::test]
async fn a_sigkill_mid_import_then_the_same_import_stores_each_conversation_once() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("big.jsonl");
    write_rows(&file, 10_000);
    for database in databases(dir.path(), "import sigkill") {
        let db = db_url(dir.path(), &database);
        let name = unique_name("big");
        let store = store::open(&db).await.unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_sparring"))
            .args([
                "import",
                "big.jsonl",
                "--name",
                &name,
                "--database",
                &db,
                "--quiet",
            ])
            .current_dir(dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let started = Instant::now();
        let job = loop {
            if let Some(job) = store.find_job_by_name(&name).await.unwrap() {
                if store.item_counts(job.id).await.unwrap().done > 0 {
                    break job;
                }
            }
            assert!(
                started.elapsed() < Duration::from_secs(120),
                "nothing of {name} stored within 120 s"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        };
        let killed = Command::new("kill")
            .args(["-KILL", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        let _ = child.wait();
        let partial = store.item_counts(job.id).await.unwrap().done;

        let rerun = sparring(
            dir.path(),
            &["import", "big.jsonl", "--name", &name, "--database", &db],
        );
        assert!(rerun.status.success(), "{}", text(&rerun.stderr));
        let out = text(&rerun.stdout);
        if partial < 10_000 {
            let added = format!("{} added, {partial} already in the job", 10_000 - partial);
            assert!(out.contains(&added), "after {partial} stored: {out}");
        }
        assert_eq!(assert_each_once(store.as_ref(), job.id).await, 10_000);
        store.close().await;
    }
}

#[test]
fn every_invalid_line_is_said_with_its_file_and_line_and_nothing_is_stored() {
    let dir = tempfile::tempdir().unwrap();
    let lines = [
        order_row(0),
        "{\"messages\": [".to_string(),
        r#"{"messages": [{"role": "robot", "content": "beep"}]}"#.to_string(),
        r#"{"messages": [{"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "x", "content": "?"}]}"#.to_string(),
        r#"{"messages": []}"#.to_string(),
        order_row(1),
    ];
    std::fs::write(dir.path().join("bad.jsonl"), lines.join("\n")).unwrap();
    let db = format!("sqlite://{}", dir.path().join("never.db").display());

    let out = sparring(
        dir.path(),
        &["import", "bad.jsonl", "--name", "bad", "--database", &db],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let said = text(&out.stderr);
    for (line, why) in [
        (2, "invalid JSON"),
        (3, "robot"),
        (4, "which no earlier message made"),
        (5, "empty conversation"),
    ] {
        let at = format!("bad.jsonl: line {line}: ");
        let problem = said.lines().find(|l| l.starts_with(&at));
        assert!(
            problem.is_some_and(|p| p.contains(why)),
            "no `{at}…{why}` in:\n{said}"
        );
    }
    assert!(
        said.contains("4 invalid lines and nothing stored"),
        "{said}"
    );
    assert!(said.contains("--skip-invalid"), "{said}");
    assert!(
        !dir.path().join("never.db").exists(),
        "invalid input made a database"
    );

    let skipped = sparring(
        dir.path(),
        &[
            "import",
            "bad.jsonl",
            "--name",
            "bad",
            "--database",
            &db,
            "--skip-invalid",
        ],
    );
    assert!(skipped.status.success(), "{}", text(&skipped.stderr));
    let out = text(&skipped.stdout);
    assert!(
        out.contains("2 conversations as openai (detected), 2 added"),
        "{out}"
    );
    assert!(out.contains("4 invalid lines skipped"), "{out}");
    assert!(text(&skipped.stderr).contains("skipped: bad.jsonl: line 3:"));

    // Neither a file that is not there nor a format nobody has.
    let missing = sparring(
        dir.path(),
        &["import", "nope.jsonl", "--name", "x", "--database", &db],
    );
    assert_eq!(missing.status.code(), Some(2));
    assert!(text(&missing.stderr).starts_with("nope.jsonl: cannot read it"));
    let format = sparring(
        dir.path(),
        &["import", "bad.jsonl", "--name", "x", "--format", "csv"],
    );
    assert_eq!(format.status.code(), Some(2));
    assert!(text(&format.stderr).contains("unknown format 'csv'"));
}

#[tokio::test]
async fn an_import_does_not_add_to_a_job_of_another_kind() {
    let dir = tempfile::tempdir().unwrap();
    let (config, db) = crate::common::write_job(
        dir.path(),
        &crate::common::JobSpec {
            scenarios: crate::common::first_scenarios(dir.path(), 1),
            name: "generated".into(),
            ..Default::default()
        },
    );
    let run = sparring(dir.path(), &["run", config.to_str().unwrap(), "--quiet"]);
    assert!(run.status.success(), "{}", text(&run.stderr));
    write_rows(&dir.path().join("rows.jsonl"), 2);
    let out = sparring(
        dir.path(),
        &[
            "import",
            "rows.jsonl",
            "--name",
            "generated",
            "--database",
            &db,
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    let said = text(&out.stderr);
    assert!(
        said.contains("is a generation job; an import adds only to an import job"),
        "{said}"
    );
}

/// The quickstart, exported as `hf` and imported: judged by the mock's
/// judges, counted by stats, exported in every format.
#[tokio::test]
async fn an_imported_job_is_judged_counted_and_exported_as_a_generated_one() {
    let dir = tempfile::tempdir().unwrap();
    let (config, db) = crate::common::write_job(
        dir.path(),
        &crate::common::JobSpec {
            scenarios: crate::common::first_scenarios(dir.path(), 6),
            name: "source".into(),
            ..Default::default()
        },
    );
    let run = sparring(dir.path(), &["run", config.to_str().unwrap(), "--quiet"]);
    assert!(run.status.success(), "{}", text(&run.stderr));
    let source = job_id_from(&text(&run.stdout)).to_string();
    let export = sparring(
        dir.path(),
        &[
            "export",
            "--job",
            &source,
            "--format",
            "hf",
            "--out",
            "hf.jsonl",
            "--database",
            &db,
        ],
    );
    assert!(export.status.success(), "{}", text(&export.stderr));
    let imported = sparring(
        dir.path(),
        &["import", "hf.jsonl", "--name", "mine", "--database", &db],
    );
    assert!(imported.status.success(), "{}", text(&imported.stderr));
    let id = job_id_from(&text(&imported.stdout)).to_string();

    let judges = mock_judges(
        "[[judges]]\nname = \"helpfulness\"\nendpoint = \"judge\"\nbuiltin = \"helpfulness\"\n",
    );
    std::fs::write(dir.path().join("judges.toml"), judges).unwrap();
    let judged = sparring(
        dir.path(),
        &[
            "judge",
            "judges.toml",
            "--job",
            &id,
            "--database",
            &db,
            "--quiet",
        ],
    );
    assert!(judged.status.success(), "{}", text(&judged.stderr));
    assert!(
        text(&judged.stdout).contains("judge helpfulness: 6 ok"),
        "{}",
        text(&judged.stdout)
    );

    let stats = sparring(
        dir.path(),
        &["stats", "--job", &id, "--database", &db, "--json"],
    );
    assert!(stats.status.success(), "{}", text(&stats.stderr));
    let stats: Value = serde_json::from_slice(&stats.stdout).unwrap();
    assert_eq!(stats["job"]["kind"], "import");
    assert_eq!(stats["conversations"]["total"], 6, "{stats}");

    for format in ["openai", "hf", "sharegpt"] {
        let out = format!("{format}.out.jsonl");
        let export = sparring(
            dir.path(),
            &[
                "export",
                "--job",
                &id,
                "--format",
                format,
                "--out",
                &out,
                "--database",
                &db,
            ],
        );
        assert!(
            export.status.success(),
            "{format}: {}",
            text(&export.stderr)
        );
        let rows = std::fs::read_to_string(dir.path().join(&out)).unwrap();
        assert_eq!(rows.lines().count(), 6, "{format}");
    }
    // The hf rows read back as the ones imported, message for message.
    let again = std::fs::read_to_string(dir.path().join("hf.out.jsonl")).unwrap();
    let first = std::fs::read_to_string(dir.path().join("hf.jsonl")).unwrap();
    let messages = |jsonl: &str| -> Vec<Value> {
        jsonl
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap()["messages"].clone())
            .collect()
    };
    assert_eq!(messages(&again), messages(&first));
}

/// `POST /v1/imports`: files inside the data root, or NDJSON in the body;
/// the same answers and refusals as the command.
#[tokio::test]
async fn the_service_imports_files_in_its_data_root_and_ndjson_bodies() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("service.db").display());
    let root = tempfile::tempdir().unwrap();
    write_rows(&root.path().join("rows.jsonl"), 5);
    let service = crate::common::Service::over(&db, None, root).await;

    let created = service
        .post("/v1/imports")
        .json(&json!({"name": "logs", "files": ["rows.jsonl"]}))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 201);
    let report: Value = created.json().await.unwrap();
    assert_eq!(report["added"], 5, "{report}");
    assert_eq!(report["sources"][0]["source"], "rows.jsonl");
    assert_eq!(report["sources"][0]["format"], "openai");
    assert_eq!(report["job"]["kind"], "import");
    let id = report["job"]["id"].as_i64().unwrap();

    // The same lines as a body add nothing; a new one is added.
    let body: String = (0..6).map(|i| order_row(i) + "\n").collect();
    let added = service
        .post("/v1/imports?name=logs&format=openai")
        .header("content-type", "application/x-ndjson")
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(added.status(), 200);
    let report: Value = added.json().await.unwrap();
    assert_eq!(
        (report["conversations"].as_i64(), report["added"].as_i64()),
        (Some(6), Some(1))
    );
    assert_eq!(report["job"]["id"], id);

    // Outside the data root, a bad line, a bad format: 422, named.
    for (body, field) in [
        (json!({"name": "x", "files": ["../rows.jsonl"]}), "files[0]"),
        (json!({"name": "x", "files": ["/etc/passwd"]}), "files[0]"),
        (
            json!({"name": "x", "files": ["rows.jsonl"], "format": "csv"}),
            "format",
        ),
    ] {
        let refused = service
            .post("/v1/imports")
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(refused.status(), 422, "{body}");
        let problems: Value = refused.json().await.unwrap();
        assert_eq!(problems["errors"][0]["location"], field, "{problems}");
    }
    let bad = service
        .post("/v1/imports?name=bad")
        .header("content-type", "application/x-ndjson")
        .body(format!("{}\n{{\"messages\": 3}}\n", order_row(9)))
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 422);
    let problems: Value = bad.json().await.unwrap();
    assert_eq!(problems["errors"][0]["file"], "request body", "{problems}");
    assert_eq!(problems["errors"][0]["location"], "line 2", "{problems}");
    let jobs = service.json("/v1/jobs").await;
    assert!(
        !jobs.to_string().contains("\"bad\""),
        "a refused import made a job: {jobs}"
    );
}

/// Two models' answers to the same prompts, imported as two jobs in
/// different orders, pair by prompt: each pairwise judgment compares two
/// answers to one question, and the DPO export reads those judgments.
#[tokio::test]
async fn two_imported_jobs_pair_by_prompt_for_pairwise_judging_and_dpo() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("pairs.db").display());
    let answers = |model: &str, reverse: bool| {
        let mut rows: Vec<String> = (0..5)
            .map(|i| {
                json!({"messages": [
                    {"role": "system", "content": "Answer briefly."},
                    {"role": "user", "content": format!("What is {i} + {i}?")},
                    {"role": "assistant", "content": format!("{model} says {}", 2 * i)}
                ], "model": model})
                .to_string()
            })
            .collect();
        if reverse {
            rows.reverse();
        }
        rows.join("\n")
    };
    std::fs::write(dir.path().join("a.jsonl"), answers("alpha", false)).unwrap();
    std::fs::write(dir.path().join("b.jsonl"), answers("beta", true)).unwrap();
    let mut ids = Vec::new();
    for (file, name) in [("a.jsonl", "alpha"), ("b.jsonl", "beta")] {
        let out = sparring(
            dir.path(),
            &["import", file, "--name", name, "--database", &db],
        );
        assert!(out.status.success(), "{}", text(&out.stderr));
        ids.push(job_id_from(&text(&out.stdout)).to_string());
    }
    let judges = mock_judges(
        "[[judges]]\nname = \"pref\"\nendpoint = \"judge\"\nbuiltin = \"pairwise_preference\"\n",
    );
    std::fs::write(dir.path().join("pref.toml"), judges).unwrap();
    let judged = sparring(
        dir.path(),
        &[
            "judge",
            "pref.toml",
            "--pairwise",
            "--a",
            &ids[0],
            "--b",
            &ids[1],
            "--match-by",
            "prompt",
            "--database",
            &db,
            "--quiet",
        ],
    );
    assert!(judged.status.success(), "{}", text(&judged.stderr));
    assert!(
        text(&judged.stdout).contains("judge pref: 5 ok"),
        "{}",
        text(&judged.stdout)
    );

    let store = store::open(&db).await.unwrap();
    let judgments = store
        .judgments_of_job(ids[0].parse().unwrap())
        .await
        .unwrap();
    assert_eq!(judgments.len(), 5);
    for j in &judgments {
        let question = |id: i64| {
            let store = store.clone();
            async move {
                let c = store.get_conversation(id).await.unwrap().unwrap();
                c.messages
                    .iter()
                    .find(|m| m.role == "user")
                    .unwrap()
                    .content
                    .clone()
            }
        };
        let b = j.conversation_b.expect("a pair");
        assert_eq!(question(j.conversation_a).await, question(b).await);
    }
    store.close().await;

    let export = sparring(
        dir.path(),
        &[
            "export",
            "--job",
            &ids[0],
            "--format",
            "dpo",
            "--judge",
            "pref",
            "--out",
            "pairs.jsonl",
            "--database",
            &db,
        ],
    );
    assert!(export.status.success(), "{}", text(&export.stderr));
    assert!(
        text(&export.stdout).contains("from 5 judgments"),
        "{}",
        text(&export.stdout)
    );

    // A way of pairing that is none is refused before anything is judged.
    let bad = sparring(
        dir.path(),
        &[
            "judge",
            "pref.toml",
            "--pairwise",
            "--a",
            &ids[0],
            "--b",
            &ids[1],
            "--match-by",
            "metadata.",
            "--database",
            &db,
        ],
    );
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        text(&bad.stderr).contains("metadata.KEY"),
        "{}",
        text(&bad.stderr)
    );
}
