//! Telemetry, through the `sparring` binary as a user runs it: `/metrics` of a
//! `sparring serve` that ran the quickstart counts every model call by role as
//! the store does, in valid Prometheus text, and SIGTERM stops the server,
//! mid-job too, releasing its items for the job to resume.
//! (SIGTERM to `sparring run` and `sparring worker` is in resume.rs.)

use crate::common;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{job_toml, repo, sparring, text, JobSpec};
use serde_json::Value;

/// `sparring serve` with the repository as its data root (so the
/// quickstart's relative paths resolve against it, the default `?base=`) on
/// a free loopback port; killed if the test fails.
struct Served {
    child: Child,
    url: String,
    stderr: std::sync::mpsc::Receiver<String>,
}

impl Served {
    fn start(database: &str) -> Served {
        let mut child = Command::new(env!("CARGO_BIN_EXE_sparring"))
            .args(["serve", "--database", database, "--bind", "127.0.0.1:0"])
            // Submitted configs may use the repository's files (the data root).
            .args(["--data-root".as_ref(), repo().as_os_str()])
            .current_dir(repo().join("examples"))
            .env_remove("SPARRING_API_TOKEN")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (lines, stderr) = std::sync::mpsc::channel();
        let pipe = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                let _ = lines.send(line);
            }
        });
        let first = stderr.recv_timeout(Duration::from_secs(30)).unwrap();
        let url = first
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .unwrap_or_else(|| panic!("no address in {first:?}"))
            .to_string();
        Served { child, url, stderr }
    }

    async fn get(&self, path: &str) -> String {
        let response = reqwest::get(format!("{}{path}", self.url)).await.unwrap();
        assert_eq!(response.status(), 200, "GET {path}");
        response.text().await.unwrap()
    }

    async fn json(&self, path: &str) -> Value {
        serde_json::from_str(&self.get(path).await).unwrap()
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
    }
}

/// A sample of a Prometheus text page.
#[derive(Debug)]
struct Sample {
    name: String,
    labels: BTreeMap<String, String>,
    value: f64,
}

/// Parse a Prometheus text page, checking as it goes that every family has
/// one HELP and one TYPE, before its samples, and that every sample belongs
/// to the family declared last (histograms: `_bucket`, `_sum`, `_count`).
fn parse_exposition(page: &str) -> Vec<Sample> {
    let mut types: HashMap<String, String> = HashMap::new();
    let mut helps: HashSet<String> = HashSet::new();
    let mut current: Option<(String, String)> = None;
    let mut samples = Vec::new();
    for line in page.lines() {
        if let Some(rest) = line.strip_prefix("# HELP ") {
            let name = rest.split(' ').next().unwrap().to_string();
            assert!(helps.insert(name.clone()), "a second HELP for {name}");
            continue;
        }
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let mut words = rest.split(' ');
            let (name, kind) = (words.next().unwrap(), words.next().unwrap());
            assert!(["counter", "gauge", "histogram"].contains(&kind), "{line}");
            assert!(helps.contains(name), "TYPE before HELP for {name}");
            assert!(
                types.insert(name.into(), kind.into()).is_none(),
                "a second TYPE for {name}"
            );
            current = Some((name.into(), kind.into()));
            continue;
        }
        assert!(!line.starts_with('#') && !line.is_empty(), "{line:?}");
        let sample = parse_sample(line);
        let (family, kind) = current
            .as_ref()
            .unwrap_or_else(|| panic!("{line}: no TYPE"));
        let belongs = match kind.as_str() {
            "histogram" => ["_bucket", "_sum", "_count"]
                .iter()
                .any(|suffix| sample.name == format!("{family}{suffix}")),
            _ => &sample.name == family,
        };
        assert!(belongs, "{line}: not of the family {family} ({kind})");
        if kind == "counter" {
            assert!(family.ends_with("_total"), "counter {family}");
        }
        samples.push(sample);
    }
    samples
}

/// `name{key="value",...} value`, with escaped label values.
fn parse_sample(line: &str) -> Sample {
    let (series, value) = line.rsplit_once(' ').unwrap();
    let value = match value {
        "+Inf" => f64::INFINITY,
        v => v.parse().unwrap_or_else(|_| panic!("{line}: bad value")),
    };
    let Some((name, labels)) = series.split_once('{') else {
        return Sample {
            name: series.into(),
            labels: BTreeMap::new(),
            value,
        };
    };
    let mut map = BTreeMap::new();
    let mut chars = labels.strip_suffix('}').expect("labels end with }").chars();
    loop {
        let key: String = chars.by_ref().take_while(|&c| c != '=').collect();
        if key.is_empty() {
            break;
        }
        assert!(
            key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
            "{line}: label {key}"
        );
        assert_eq!(chars.next(), Some('"'), "{line}");
        let mut value = String::new();
        loop {
            match chars
                .next()
                .unwrap_or_else(|| panic!("{line}: unterminated"))
            {
                '\\' => match chars.next() {
                    Some('n') => value.push('\n'),
                    Some(c @ ('\\' | '"')) => value.push(c),
                    other => panic!("{line}: bad escape {other:?}"),
                },
                '"' => break,
                c => value.push(c),
            }
        }
        map.insert(key, value);
        match chars.next() {
            Some(',') => {}
            None => break,
            Some(c) => panic!("{line}: {c} after a label"),
        }
    }
    Sample {
        name: name.into(),
        labels: map,
        value,
    }
}

/// The sum of the samples named `name` whose labels include `with`.
fn total(samples: &[Sample], name: &str, with: &[(&str, &str)]) -> f64 {
    samples
        .iter()
        .filter(|s| s.name == name)
        .filter(|s| {
            with.iter()
                .all(|(k, v)| s.labels.get(*k).map(String::as_str) == Some(*v))
        })
        .map(|s| s.value)
        .sum()
}

#[test]
fn the_exposition_parser_rejects_what_prometheus_would() {
    let ok = "# HELP a_total A.\n# TYPE a_total counter\na_total{x=\"q\\\"\\n\"} 1\n";
    assert_eq!(parse_exposition(ok)[0].labels["x"], "q\"\n");
    for bad in [
        "a_total 1\n",
        "# HELP a_total A.\n# TYPE a_total counter\nb_total 1\n",
        "# HELP a A.\n# TYPE a gauge\n# HELP a A.\n# TYPE a gauge\n",
        "# HELP a A.\n# TYPE a gauge\na{x=\"1} 2\n",
    ] {
        let caught = std::panic::catch_unwind(|| parse_exposition(bad));
        assert!(caught.is_err(), "accepted {bad:?}");
    }
}

#[tokio::test]
async fn metrics_count_every_model_call_by_role_as_the_store_does() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let dir = tempfile::tempdir().unwrap();
    let database = format!("sqlite://{}", dir.path().join("served.db").display());
    let served = Served::start(&database);
    let quickstart = std::fs::read_to_string(repo().join("quickstart.toml")).unwrap();
    let created = reqwest::Client::new()
        .post(format!("{}/v1/jobs", served.url))
        .header("content-type", "application/toml")
        .body(quickstart)
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 201);
    let job: Value = serde_json::from_str(&created.text().await.unwrap()).unwrap();
    let id = job["id"].as_i64().unwrap();

    // The generation job, then the judging job it starts, both done here.
    let started = Instant::now();
    loop {
        let jobs = served.json("/v1/jobs").await;
        let jobs = jobs["jobs"].as_array().unwrap().clone();
        let settled = jobs.len() == 2
            && jobs
                .iter()
                .all(|j| j["status"] == "done" && j["running_here"] == false);
        if settled {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(120), "{jobs:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    let page = served.get("/metrics").await;
    let samples = parse_exposition(&page);
    let view = served.json(&format!("/v1/jobs/{id}")).await;
    let usage = view["summary"]["usage"].as_array().unwrap();
    for role in ["policy", "user"] {
        let stored = usage.iter().find(|u| u["role"] == role).unwrap();
        let calls = stored["calls"].as_f64().unwrap();
        assert!(calls > 0.0);
        let ok = [("role", role), ("outcome", "ok")];
        assert_eq!(
            total(&samples, "sparring_model_calls_total", &ok),
            calls,
            "{role} calls"
        );
        assert_eq!(
            total(&samples, "sparring_model_calls_total", &[("role", role)]),
            calls,
            "no {role} call failed"
        );
        assert_eq!(
            total(
                &samples,
                "sparring_model_latency_seconds_count",
                &[("role", role)]
            ),
            calls,
            "one latency observation per {role} call"
        );
        for (kind, field) in [
            ("prompt", "prompt_tokens"),
            ("completion", "completion_tokens"),
        ] {
            assert_eq!(
                total(
                    &samples,
                    "sparring_model_tokens_total",
                    &[("role", role), ("kind", kind)]
                ),
                stored[field].as_f64().unwrap(),
                "{role} {kind} tokens"
            );
        }
    }

    // Each quickstart judge makes one call per conversation.
    let stats = sparring(
        dir.path(),
        &[
            "stats",
            "--json",
            "--job",
            &id.to_string(),
            "--database",
            &database,
        ],
    );
    assert!(stats.status.success(), "{}", text(&stats.stderr));
    let stats: Value = serde_json::from_slice(&stats.stdout).unwrap();
    let judged: f64 = stats["judges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["ok"].as_f64().unwrap() + j["unparseable"].as_f64().unwrap())
        .sum();
    assert_eq!(judged, 54.0 * 3.0);
    let judge_ok = [("role", "judge"), ("outcome", "ok")];
    assert_eq!(
        total(&samples, "sparring_model_calls_total", &judge_ok),
        judged
    );

    let done = [("outcome", "completed")];
    assert_eq!(total(&samples, "sparring_conversations_total", &done), 54.0);
    assert_eq!(
        total(&samples, "sparring_judging_items_total", &done),
        162.0
    );
    assert_eq!(
        total(&samples, "sparring_model_requests_in_flight", &[]),
        0.0
    );
    assert_eq!(total(&samples, "sparring_retries_total", &[]), 0.0);
    assert_eq!(
        total(
            &samples,
            "sparring_items",
            &[("name", "quickstart"), ("status", "done")]
        ),
        54.0
    );
    // Histogram buckets are cumulative and end at the count.
    let buckets: Vec<f64> = samples
        .iter()
        .filter(|s| s.name == "sparring_model_latency_seconds_bucket")
        .filter(|s| s.labels["role"] == "policy")
        .map(|s| s.value)
        .collect();
    assert!(buckets.windows(2).all(|w| w[0] <= w[1]), "{buckets:?}");
    let policy_calls = total(
        &samples,
        "sparring_model_calls_total",
        &[("role", "policy")],
    );
    assert_eq!(buckets.last(), Some(&policy_calls));
    assert!(
        page.contains("this server process"),
        "HELP says what is counted"
    );

    // SIGTERM stops the service as Ctrl-C does: exit 0, saying how to resume.
    let mut served = served;
    assert!(Command::new("kill")
        .args(["-TERM", &served.child.id().to_string()])
        .status()
        .unwrap()
        .success());
    let status = served.child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
    // The reader thread may not have passed on the last lines yet: read
    // until it ends at the pipe's end (or 10 s pass without a line).
    let said: Vec<String> =
        std::iter::from_fn(|| served.stderr.recv_timeout(Duration::from_secs(10)).ok()).collect();
    assert!(
        said.iter()
            .any(|l| l.contains("sparring stopped") && l.contains("resume")),
        "{said:?}"
    );
}

#[tokio::test]
async fn sigterm_stops_serve_mid_job_releasing_its_items_and_the_job_resumes() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let dir = tempfile::tempdir().unwrap();
    let database = format!("sqlite://{}", dir.path().join("served.db").display());
    let mut served = Served::start(&database);
    let slow = JobSpec {
        name: "sigterm-serve".into(),
        personas_per_scenario: 2,
        extra: "[mock]\nlatency_ms = 25\n".into(),
        ..JobSpec::default()
    };
    let created = reqwest::Client::new()
        .post(format!("{}/v1/jobs", served.url))
        .header("content-type", "application/toml")
        .body(job_toml(&slow, &dir.path().join("ignored.db")))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 201);
    let id = serde_json::from_str::<Value>(&created.text().await.unwrap()).unwrap()["id"]
        .as_i64()
        .unwrap();
    let store = sparring::store::open(&database).await.unwrap();
    let started = Instant::now();
    while store.item_counts(id).await.unwrap().done == 0 {
        assert!(started.elapsed() < Duration::from_secs(60), "no progress");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    assert!(Command::new("kill")
        .args(["-TERM", &served.child.id().to_string()])
        .status()
        .unwrap()
        .success());
    assert_eq!(served.child.wait().unwrap().code(), Some(0));
    let partial = store.item_counts(id).await.unwrap();
    assert_eq!(partial.leased, 0, "items in flight were released");
    assert!(
        partial.done < partial.total(),
        "stopped mid-job: {partial:?}"
    );
    let job = store.get_job(id).await.unwrap().unwrap();
    assert_eq!(job.status, sparring::store::JobStatus::Cancelled);

    let id_arg = id.to_string();
    let resumed = sparring(
        dir.path(),
        &[
            "run",
            "--resume",
            &id_arg,
            "--database",
            &database,
            "--quiet",
        ],
    );
    assert!(resumed.status.success(), "{}", text(&resumed.stderr));
    let counts = store.item_counts(id).await.unwrap();
    assert_eq!((counts.done, counts.total()), (54, 54), "{counts:?}");
    let stored = store.conversations_page(id, 0, 1000).await.unwrap();
    let items: HashSet<i64> = stored.iter().map(|c| c.conversation.item_id).collect();
    assert_eq!(
        (stored.len(), items.len()),
        (54, 54),
        "one conversation per item"
    );
}
