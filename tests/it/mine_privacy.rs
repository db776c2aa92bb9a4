//! Mining's privacy held to conversations nobody here made: the tau2-bench
//! airline run of the shared real-user folder (`SPARRING_REAL_USERS_DIR`, by
//! default `../shared/data/real-users` beside the repository; its README
//! gives the provenance). A value of every private kind is planted into its
//! conversations by the code below; none reaches the miner's prompts or its
//! output folder, while with `--private none` every one reaches both (so the
//! test can fail). The file's own private values reach no prompt, and the
//! share of ordinary words the redaction alters is measured and held under a
//! bar.
//!
//! Labels, and their rule: a value is the file's own private value when the
//! file holds it (in a tool result, a tool call's arguments, a task) under
//! one of `RECORD_KEYS` or a key ending in `_id` or `_ids` (not one naming a
//! step of the run: `call_id`, `task_id` ...), or it is a key with a digit
//! of a `payment_methods` object; or it is an email address; or it is one
//! of `BY_HAND`, read as private in a file whose records do not name it. A
//! word the redaction altered is a false replacement when it is none of
//! those values and holds none of them.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::{json, Value};

use crate::common::{job_id_from, repo, sparring, text};
use sparring::llm::message::Message;
use sparring::llm::{ChatModel, ChatRequest, ChatResponse, LlmError, Usage};
use sparring::mine::private::{PrivacyRules, PrivateKind};
use sparring::mine::{mine, MineRequest};
use sparring::store;

const TAU2_FILE: &str = "tau2-airline-claude-sonnet-4-5-user-gpt-4.1.json";

/// At most this share of ordinary words in the customer's and the agent's
/// turns is altered (measured: see BENCHMARKS.md).
const FALSE_REPLACEMENT_BAR: f64 = 0.001;

/// The shared real-user folder, or `None` (with a `SKIPPED` line) when the
/// tau2 file is not in it.
fn real_users(test: &str) -> Option<PathBuf> {
    let dir = std::env::var("SPARRING_REAL_USERS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| repo().join("../shared/data/real-users"));
    if dir.join(TAU2_FILE).is_file() {
        return Some(dir);
    }
    println!(
        "SKIPPED: {test}: {} is not in {} (set SPARRING_REAL_USERS_DIR to the shared real-user folder)",
        TAU2_FILE,
        dir.display()
    );
    None
}

/// One kind planted: what the customer says in their first message, the
/// values in it, and what the conversation's user record (a
/// `get_user_details` result) or its task's scenario gains.
struct Plant {
    kind: &'static str,
    said: &'static str,
    values: &'static [&'static str],
    record: Option<fn(&mut Value)>,
    known_info: Option<&'static str>,
}

const fn said(kind: &'static str, said: &'static str, values: &'static [&'static str]) -> Plant {
    Plant {
        kind,
        said,
        values,
        record: None,
        known_info: None,
    }
}

/// Every kind the issue lists, each in the forms people write it.
fn plants() -> Vec<Plant> {
    vec![
        said("email", "You can also write to priya.raman@fastmail.net.", &["priya.raman@fastmail.net"]),
        said("phone", "My cell is (503) 555-0172.", &["(503) 555-0172", "555-0172"]),
        said(
            "international phone",
            "From abroad call +44 20 7946 0958 or +33 1 42 68 53 00.",
            &["+44 20 7946 0958", "7946 0958", "+33 1 42 68 53 00", "42 68 53 00"],
        ),
        said(
            "UK phone",
            "In London I'm on 07700 900123 or 020 7946 0321.",
            &["07700 900123", "900123", "020 7946 0321", "7946 0321"],
        ),
        said("reservation id after a cue", "My other reservation number is QX7P2M.", &["QX7P2M"]),
        Plant {
            known_info: Some("Your other reservation is R7Q2ZD."),
            ..said("reservation id the scenario names", "Also R7Q2ZD needs a look.", &["R7Q2ZD"])
        },
        Plant {
            record: Some(|user| push(user, "reservations", json!("Z9K4TQ"))),
            ..said("reservation id a record holds", "Also Z9K4TQ needs a look.", &["Z9K4TQ"])
        },
        said(
            "payment ids",
            "Charge paypal_9182736, certificate_5550123 or voucher_88123.",
            &["paypal_9182736", "9182736", "certificate_5550123", "5550123", "voucher_88123", "88123"],
        ),
        said(
            "card numbers with spaces and dashes",
            "My card is 4242 4242 4242 4242, or 5555-5555-5555-4444.",
            &["4242 4242 4242 4242", "4242 4242", "5555-5555-5555-4444", "5555-4444"],
        ),
        said(
            "card numbers, security code, expiry",
            "Or the Amex 3782 822463 10005, or 4000056655665556, CVV 314, expiry 09/28.",
            &["3782 822463 10005", "822463", "4000056655665556", "314", "09/28"],
        ),
        said(
            "API keys",
            "The keys I pasted: sk-proj-4fGh7JkL9mNp2QrS5tUv8WxY, sk-ant-api03-Q1w2E3r4T5y6U7i8O9p0AsDf, AKIAJ7Q2XK5ZB3RTY4PL, ghp_9aZ8bY7cX6dW5eV4fU3gT2hS1iR0jQ9kP8lO.",
            &[
                "4fGh7JkL9mNp2QrS5tUv8WxY",
                "Q1w2E3r4T5y6U7i8O9p0AsDf",
                "AKIAJ7Q2XK5ZB3RTY4PL",
                "J7Q2XK5ZB3RTY4PL",
                "9aZ8bY7cX6dW5eV4fU3gT2hS1iR0jQ9kP8lO",
            ],
        ),
        said(
            "JWT",
            "My session: eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI0MjQyIn0.Xk3mQ9vL2pR8sT1uW4yZ7aB0cD5eF6gH9iJ",
            &["eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9", "eyJzdWIiOiI0MjQyIn0", "Xk3mQ9vL2pR8sT1uW4yZ7aB0cD5eF6gH9iJ"],
        ),
        said(
            "SSN",
            "My SSN is 219-09-9999 and my wife's social security number is 078051120.",
            &["219-09-9999", "078051120"],
        ),
        said(
            "IBAN",
            "Refund to GB82 WEST 1234 5698 7654 32 or DE89370400440532013000.",
            &["GB82 WEST 1234 5698 7654 32", "5698 7654", "DE89370400440532013000"],
        ),
        said(
            "IP addresses",
            "I was on 203.0.113.77, then on 2001:db8:4f2a::17.",
            &["203.0.113.77", "2001:db8:4f2a::17"],
        ),
        said(
            "password",
            "My password is Bl4ckB1rd!92 and the PIN: 8841.",
            &["Bl4ckB1rd!92", "8841"],
        ),
        said("ZIP code after a cue", "My zip code is 97214.", &["97214"]),
        said("ZIP code after a state", "Ship to Portland, OR 97201.", &["97201"]),
        said("name after a cue", "My name is Priya Raman.", &["Priya", "Raman"]),
        Plant {
            record: Some(|user| {
                push(
                    user,
                    "saved_passengers",
                    json!({"first_name": "Oksana", "last_name": "Varga", "dob": "1961-06-30"}),
                )
            }),
            ..said("name a record holds", "Oksana Varga flies with me.", &["Oksana", "Varga"])
        },
        said(
            "street address",
            "I live at 2245 Larkspur Lane, Apt 12C.",
            &["2245 Larkspur", "Larkspur", "12C"],
        ),
        Plant {
            record: Some(|user| user["address"]["address1"] = json!("17 Rue Oberkampf")),
            ..said("address a record holds", "Send it to 17 Rue Oberkampf.", &["17 Rue Oberkampf", "Oberkampf"])
        },
        said("date of birth after a cue", "My date of birth is 1979-08-14.", &["1979-08-14"]),
        Plant {
            record: Some(|user| user["dob"] = json!("1983-02-27")),
            ..said(
                "date of birth a record holds",
                "My papers say 02/27/1983, that is February 27th, 1983.",
                &["02/27/1983", "February 27th, 1983"],
            )
        },
    ]
}

fn push(user: &mut Value, key: &str, item: Value) {
    match user[key].as_array_mut() {
        Some(items) => items.push(item),
        None => user[key] = json!([item]),
    }
}

/// The conversation's user record (a `get_user_details` result), parsed.
fn user_record(simulation: &Value) -> Option<(usize, Value)> {
    simulation["messages"]
        .as_array()?
        .iter()
        .enumerate()
        .find_map(|(i, m)| {
            let content: Value = serde_json::from_str(m["content"].as_str()?).ok()?;
            (m["role"] == "tool"
                && content.get("user_id").is_some()
                && content.get("dob").is_some())
            .then_some((i, content))
        })
}

/// The tau2 document with one plant in each of its first conversations that
/// hold a user record.
fn planted(document: &Value) -> Value {
    let mut document = document.clone();
    let plants = plants();
    let task_of: BTreeMap<String, usize> = document["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .map(|(i, t)| (t["id"].as_str().unwrap().to_string(), i))
        .collect();
    let usable: Vec<usize> = document["simulations"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .filter(|(_, s)| user_record(s).is_some())
        .map(|(i, _)| i)
        .collect();
    assert!(
        usable.len() >= plants.len(),
        "{} conversations with a user record",
        usable.len()
    );
    for (plant, &s) in plants.iter().zip(&usable) {
        let simulation = &mut document["simulations"][s];
        let messages = simulation["messages"].as_array_mut().unwrap();
        let first = messages.iter_mut().find(|m| m["role"] == "user").unwrap();
        let content = first["content"].as_str().unwrap();
        first["content"] = json!(format!("{content} {}", plant.said));
        if let Some(change) = plant.record {
            let (at, mut user) = user_record(simulation).unwrap();
            change(&mut user);
            simulation["messages"][at]["content"] = json!(user.to_string());
        }
        if let Some(known) = plant.known_info {
            let task = task_of[simulation["task_id"].as_str().unwrap()];
            let instructions = &mut document["tasks"][task]["user_scenario"]["instructions"];
            let before = instructions["known_info"].as_str().unwrap_or_default();
            instructions["known_info"] = json!(format!("{before}\n{known}"));
        }
    }
    document
}

/// A model that answers as the mock miner does and keeps every prompt.
#[derive(Default)]
struct Recorder {
    prompts: Mutex<Vec<String>>,
}

#[async_trait]
impl ChatModel for Recorder {
    fn model(&self) -> &str {
        "mock-miner"
    }
    async fn complete(&self, req: ChatRequest) -> Result<ChatResponse, LlmError> {
        let prompt: String = req.messages.iter().map(|m| m.content.to_string()).collect();
        let answer = sparring::mock_llm::mine::respond(&prompt, false);
        self.prompts.lock().unwrap().push(prompt);
        Ok(ChatResponse {
            message: Message::assistant(answer),
            finish_reason: Some("stop".into()),
            usage: Usage::default(),
            latency_ms: 1,
            tokens: None,
        })
    }
}

/// The prompts mining `job` sends with `kinds` private, by conversation id.
async fn prompts(db: &str, job: i64, kinds: Vec<PrivateKind>) -> BTreeMap<i64, String> {
    let store = store::open(db).await.unwrap();
    let recorder = Arc::new(Recorder::default());
    let environment = sparring::env::builtin::open_builtin("builtin:chat").unwrap();
    let request = MineRequest {
        job_id: job,
        environment: "builtin:chat".into(),
        privacy: PrivacyRules {
            kinds,
            ..PrivacyRules::default()
        },
        concurrency: 4,
    };
    let model: Arc<dyn ChatModel> = recorder.clone();
    mine(
        store.as_ref(),
        model,
        environment.as_ref(),
        &request,
        &|_, _| {},
    )
    .await
    .unwrap();
    store.close().await;
    let prompts = recorder.prompts.lock().unwrap().clone();
    prompts
        .into_iter()
        .map(|p| {
            let id = p
                .split("<conversation id=\"")
                .nth(1)
                .and_then(|rest| rest.split('"').next())
                .and_then(|id| id.parse().ok())
                .unwrap();
            (id, p)
        })
        .collect()
}

/// Keys whose values in a record are the file's own private values.
const RECORD_KEYS: &[&str] = &[
    "user_id",
    "reservation_id",
    "reservations",
    "order_id",
    "orders",
    "payment_id",
    "payment_method_id",
    "first_name",
    "last_name",
    "dob",
    "email",
    "address1",
    "address2",
    "zip",
    "phone",
    "phone_number",
    "date_of_birth",
    "zip_code",
    "full_name",
    "street",
];

/// Values read by hand as private, by the rule: a person's name, contact,
/// or an id or code of theirs (a booking, a registration, a past event, a
/// verification code). From NeMo Gym's conversational_tool_use_simulation
/// rollouts, whose tools hold them in free text (`guardian_info`) or keys of
/// their own (`past_events`, `verification_value`). Its `EVT-12345`, a
/// format the agent gives as an example, is not one.
const BY_HAND: &[&str] = &[
    "Jennifer",
    "Miller",
    "EVT-123456",
    "EVT-234567",
    "847291",
    "SARAHJ_2023",
];

/// Keys ending in `_id` that name a step of the run, not a record.
const STEP_IDS: &[&str] = &[
    "call_id",
    "tool_call_id",
    "action_id",
    "task_id",
    "message_id",
    "response_id",
];

fn is_id_key(key: &str) -> bool {
    (key.ends_with("_id") || key.ends_with("_ids") || ["reservations", "orders"].contains(&key))
        && !STEP_IDS.contains(&key)
}

/// A field's value is a value of its key (an agent's JSON may hold
/// `"first_name": "Your first name"`): an id is one word, a name one to four
/// capitalised words, an email holds an `@`.
fn looks_like(key: &str, value: &str) -> bool {
    let words: Vec<&str> = value.split_whitespace().collect();
    let capitalised = |w: &&str| w.chars().next().is_some_and(char::is_uppercase);
    value.len() >= 2
        && match key {
            _ if is_id_key(key) => words.len() == 1,
            "first_name" | "last_name" | "full_name" => {
                words.len() <= 4 && words.iter().all(capitalised)
            }
            "email" => value.contains('@'),
            "zip" | "zip_code" => words.len() == 1,
            _ => true,
        }
}

fn is_record_key(key: &str) -> bool {
    RECORD_KEYS.contains(&key) || is_id_key(key)
}

/// The file's own private values, by key (the labels' rule above), from
/// anywhere in `document` (JSON inside strings read too).
pub fn record_values(document: &Value) -> BTreeMap<String, HashSet<String>> {
    fn walk(value: &Value, key: &str, out: &mut BTreeMap<String, HashSet<String>>) {
        match value {
            Value::Object(map) => {
                for (k, v) in map {
                    if let (true, Value::Object(methods)) = (k == "payment_methods", v) {
                        let ids = out.entry("payment_methods".into()).or_default();
                        let with_digit = |id: &&String| id.chars().any(|c| c.is_ascii_digit());
                        ids.extend(methods.keys().filter(with_digit).cloned());
                    }
                    walk(v, k, out);
                }
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, key, out)),
            Value::String(s) => match serde_json::from_str::<Value>(s) {
                Ok(parsed @ (Value::Object(_) | Value::Array(_))) => walk(&parsed, key, out),
                _ if is_record_key(key) && looks_like(key, s.trim()) => {
                    out.entry(key.into())
                        .or_default()
                        .insert(s.trim().to_string());
                }
                _ => {}
            },
            _ => {}
        }
    }
    let mut out = BTreeMap::new();
    walk(document, "", &mut out);
    out
}

/// Whether `value` stands in `text` as a whole word.
fn stands_in(text: &str, value: &str) -> bool {
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    text.match_indices(value).any(|(at, _)| {
        !word(text[..at].chars().next_back()) && !word(text[at + value.len()..].chars().next())
    })
}

/// The record values that stand in any prompt, by key.
fn leaked(
    values: &BTreeMap<String, HashSet<String>>,
    prompts: &BTreeMap<i64, String>,
) -> BTreeMap<String, Vec<String>> {
    let all: String = prompts.values().cloned().collect();
    let mut out = BTreeMap::new();
    for (key, set) in values {
        let mut found: Vec<String> = set.iter().filter(|v| stands_in(&all, v)).cloned().collect();
        found.sort();
        if !found.is_empty() {
            out.insert(key.clone(), found);
        }
    }
    out
}

fn import(dir: &Path, file: &Path, name: &str) -> i64 {
    let file = file.display().to_string();
    let out = sparring(dir, &["import", &file, "--name", name]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    job_id_from(&text(&out.stdout))
}

const ENDPOINTS: &str = "[endpoints.miner]\nmock = true\nmodel = \"mock-miner\"\n";

fn all_text(dir: &Path) -> String {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .collect()
}

#[tokio::test]
async fn every_kind_planted_in_real_conversations_reaches_neither_the_prompts_nor_the_mined_files()
{
    let Some(real) = real_users("mining real conversations with planted private values") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let document: Value =
        serde_json::from_str(&std::fs::read_to_string(real.join(TAU2_FILE)).unwrap()).unwrap();
    std::fs::write(d.join("planted.json"), planted(&document).to_string()).unwrap();
    std::fs::write(d.join("endpoints.toml"), ENDPOINTS).unwrap();
    let job = import(d, &d.join("planted.json"), "planted");
    let plants = plants();

    // Through the binary: nothing planted in the mined files, and with
    // nothing private every planted value in them (the plants reach them).
    for (private, out) in [("all", "mined"), ("none", "unprotected")] {
        let run = sparring(
            d,
            &[
                "mine",
                &job.to_string(),
                "--endpoints",
                "endpoints.toml",
                "--endpoint",
                "miner",
                "--out",
                out,
                "--private",
                private,
            ],
        );
        assert!(
            run.status.success(),
            "{}{}",
            text(&run.stdout),
            text(&run.stderr)
        );
        let written = all_text(&d.join(out));
        for plant in &plants {
            for value in plant.values {
                assert_eq!(
                    written.contains(value),
                    private == "none",
                    "{} ({}): '{value}' with --private {private}",
                    plant.kind,
                    plant.said
                );
            }
        }
    }

    // The prompts: no planted value, and none of the file's own.
    let db = format!("sqlite://{}", d.join("sparring.db").display());
    let sent = prompts(&db, job, PrivateKind::ALL.to_vec()).await;
    let unprotected = prompts(&db, job, Vec::new()).await;
    let all_sent: String = sent.values().cloned().collect();
    let all_unprotected: String = unprotected.values().cloned().collect();
    for plant in &plants {
        for value in plant.values {
            assert!(
                all_unprotected.contains(value),
                "{}: '{value}' not planted",
                plant.kind
            );
            assert!(
                !all_sent.contains(value),
                "{}: '{value}' reached a prompt",
                plant.kind
            );
        }
    }
    let own = record_values(&planted(&document));
    let leaks = leaked(&own, &sent);
    assert!(
        leaks.is_empty(),
        "the file's own private values reached the prompts: {leaks:?}"
    );
    let exposed = leaked(&own, &unprotected);
    let count = |m: &BTreeMap<String, Vec<String>>| m.values().map(Vec::len).sum::<usize>();
    println!(
        "mining privacy: {} kinds planted in {} real conversations, none reached a prompt or a mined file; \
         of the file's {} own private values {} stand in the unprotected prompts, 0 in the sent ones",
        plants.len(),
        plants.len(),
        own.values().map(HashSet::len).sum::<usize>(),
        count(&exposed)
    );
}

/// The words of a line: runs of letters, digits and the characters of
/// emails and ids (`@._-#'’`); JSON's quotes, commas and colons part them.
/// A fake keeps every other character, so a line and its redaction part
/// alike.
fn words(line: &str) -> Vec<&str> {
    line.split(|c: char| !(c.is_alphanumeric() || "@._-#'’".contains(c)))
        .filter(|w| !w.is_empty())
        .collect()
}

/// Words of the prompts' lines that start with one of `speakers`:
/// (altered ordinary words, ordinary words, altered by word).
fn false_replacements(
    own: &BTreeMap<String, HashSet<String>>,
    sent: &BTreeMap<i64, String>,
    unprotected: &BTreeMap<i64, String>,
    speakers: &[&str],
) -> (usize, usize, BTreeMap<String, usize>) {
    let private: HashSet<String> = own
        .values()
        .flatten()
        .flat_map(|v| v.split_whitespace())
        .chain(BY_HAND.iter().copied())
        .map(str::to_lowercase)
        .collect();
    // A word holds a value in any case, with a possessive or punctuation.
    let is_private = |word: &str| {
        let bare = word
            .trim_matches(|c: char| !c.is_alphanumeric())
            .to_lowercase();
        let bare = bare
            .strip_suffix("'s")
            .or_else(|| bare.strip_suffix("’s"))
            .unwrap_or(&bare);
        !bare.is_empty()
            && (bare.contains('@')
                || private.contains(bare)
                || private.iter().any(|p| {
                    p.len() >= 4
                        && bare.len() >= 4
                        && (p.contains(bare) || bare.contains(p.as_str()))
                }))
    };
    let (mut altered, mut ordinary) = (0, 0);
    let mut by_word = BTreeMap::new();
    for (id, real) in unprotected {
        let redacted = &sent[id];
        for (line, fake_line) in real.lines().zip(redacted.lines()) {
            if !speakers.iter().any(|s| line.starts_with(s)) {
                continue;
            }
            let reals: Vec<&str> = words(line);
            let fakes: Vec<&str> = words(fake_line);
            assert_eq!(reals.len(), fakes.len(), "{line}\n{fake_line}");
            for (word, fake) in reals.iter().zip(&fakes) {
                if is_private(word) {
                    continue;
                }
                ordinary += 1;
                if word != fake {
                    altered += 1;
                    *by_word.entry(word.to_string()).or_insert(0) += 1;
                }
            }
        }
    }
    (altered, ordinary, by_word)
}

/// What mining's redaction did to one real file's conversations.
struct Measured {
    conversations: usize,
    own: usize,
    /// The file's own private values left in a prompt, by key.
    leaked: BTreeMap<String, Vec<String>>,
    /// In the customer's and the agent's turns.
    altered: usize,
    ordinary: usize,
    most_altered: Vec<(String, usize)>,
    /// In the system prompts, tool calls and tool results.
    altered_rest: usize,
    ordinary_rest: usize,
    most_altered_rest: Vec<(String, usize)>,
    seconds_with: f64,
    seconds_without: f64,
}

impl Measured {
    fn rate(&self) -> f64 {
        self.altered as f64 / self.ordinary.max(1) as f64
    }

    fn say(&self, name: &str) {
        println!(
            "mining redaction on {} {name} conversations: {} of {} ordinary words of the \
             customer's and agent's turns altered ({:.3}%; most: {:?}); in the system prompts, \
             tool calls and results {} of {} ({:?}); of the file's {} own private values {} left \
             in a prompt {:?}; mining took {:.2} s with redaction, {:.2} s without",
            self.conversations,
            self.altered,
            self.ordinary,
            self.rate() * 100.0,
            self.most_altered,
            self.altered_rest,
            self.ordinary_rest,
            self.most_altered_rest,
            self.own,
            self.leaked.values().map(Vec::len).sum::<usize>(),
            self.leaked,
            self.seconds_with,
            self.seconds_without,
        );
    }
}

/// `file` (a JSON document, or JSON lines) imported and mined, with and
/// without privacy, its prompts compared.
async fn measure(file: &Path) -> Measured {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let job = import(d, file, "real");
    let db = format!("sqlite://{}", d.join("sparring.db").display());
    let started = std::time::Instant::now();
    let sent = prompts(&db, job, PrivateKind::ALL.to_vec()).await;
    let seconds_with = started.elapsed().as_secs_f64();
    let started = std::time::Instant::now();
    let unprotected = prompts(&db, job, Vec::new()).await;
    let seconds_without = started.elapsed().as_secs_f64();
    let raw = std::fs::read_to_string(file).unwrap();
    let document: Value = serde_json::from_str(&raw).unwrap_or_else(|_| {
        raw.lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .collect()
    });
    let own = record_values(&document);
    let top = |by_word: BTreeMap<String, usize>| {
        let mut top: Vec<(String, usize)> = by_word.into_iter().collect();
        top.sort_by_key(|w| std::cmp::Reverse(w.1));
        top.truncate(15);
        top
    };
    let turns = ["[customer] ", "[agent] "];
    let (altered, ordinary, by_word) = false_replacements(&own, &sent, &unprotected, &turns);
    let rest = ["[system] ", "[tool] ", "[agent calls] "];
    let (altered_rest, ordinary_rest, by_word_rest) =
        false_replacements(&own, &sent, &unprotected, &rest);
    Measured {
        conversations: sent.len(),
        own: own.values().map(HashSet::len).sum(),
        leaked: leaked(&own, &sent),
        altered,
        ordinary,
        most_altered: top(by_word),
        altered_rest,
        ordinary_rest,
        most_altered_rest: top(by_word_rest),
        seconds_with,
        seconds_without,
    }
}

#[tokio::test]
async fn on_real_conversations_redaction_alters_few_ordinary_words_and_leaves_no_record_value() {
    let Some(real) = real_users("false replacements of mining's redaction") else {
        return;
    };
    let mut files = vec![("tau2-bench airline", real.join(TAU2_FILE))];
    match std::env::var("SPARRING_NEMO_GYM_DIR") {
        Ok(gym) => {
            let site = Path::new(&gym).join("..");
            files.extend([
                ("NeMo Gym tau2 rollout", site.join("responses_api_agents/tau2/data/example_rollouts.jsonl")),
                ("NeMo Gym conversational_tool_use_simulation rollout", site.join("resources_servers/conversational_tool_use_simulation/data/example_rollouts.jsonl")),
                ("NeMo Gym nemo_user_sim rollout", site.join("resources_servers/nemo_user_sim/data/example_rollouts.jsonl")),
            ]);
        }
        Err(_) => println!(
            "SKIPPED: mining's redaction on NeMo Gym's shipped rollouts: SPARRING_NEMO_GYM_DIR is not set (scripts/nemo-gym dir)"
        ),
    }
    if let Ok(more) = std::env::var("SPARRING_MINE_MEASURE_FILES") {
        files.extend(more.split(',').map(|f| ("extra", PathBuf::from(f))));
    }
    for (name, file) in files {
        let measured = measure(&file).await;
        measured.say(name);
        assert!(measured.leaked.is_empty(), "{name}: {:?}", measured.leaked);
        assert!(
            measured.rate() <= FALSE_REPLACEMENT_BAR,
            "{name}: {} of {} ordinary words altered: {:?}",
            measured.altered,
            measured.ordinary,
            measured.most_altered
        );
    }
}
