//! The simulated-user checks measured on conversations nobody here made:
//! the real-user corpus (`tests/data/real_users/`: a tau2-bench airline run
//! whose user was gpt-4.1, tau-bench's historical airline trajectories whose
//! user was gpt-4o, NeMo Gym's shipped rollouts of simulated users), with a
//! hand label per check for every conversation a check flags and for a
//! sample of the others (`labels.toml`, with the rule of each label).
//!
//! For each check: its false-positive rate on the conversations labelled
//! clean for it (at most [`MAX_FALSE_POSITIVE_RATE`]), and its recall on
//! defects planted into them by code (`real_users/plant.rs`, at least
//! [`MIN_RECALL`]). A flag on a conversation without a label for that check
//! fails too: the labels cover every flag. The figures are printed (the
//! table in BENCHMARKS.md).
//!
//! The two shared files are read where `SPARRING_REAL_USERS_DIR` says
//! (default: `../shared/data/real-users` beside the repository), NeMo Gym's
//! rollouts from the installed wheel (`SPARRING_NEMO_GYM_DIR`).

mod confirmation;
mod curation;
mod import;
mod plant;

use std::collections::{BTreeMap, BTreeSet};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use sparring::import::{Format, ImportedConversation, Source};
use sparring::jobs::import::checks_of;
use sparring::user_checks::{Outcome, UserChecks, UserFlag};

use crate::common::repo;

/// The most a check may flag of the conversations labelled clean for it.
const MAX_FALSE_POSITIVE_RATE: f64 = 0.05;
/// The least a check must find of the defects planted for it.
const MIN_RECALL: f64 = 0.90;

/// The shared files, by name in `SPARRING_REAL_USERS_DIR`.
const TAU2_FILE: &str = "tau2-airline-claude-sonnet-4-5-user-gpt-4.1.json";
const TAU_BENCH_FILE: &str = "tau-bench-v1-airline-gpt-4o.json";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Labels {
    rules: BTreeMap<String, String>,
    files: Vec<CorpusFile>,
    conversations: Vec<Labelled>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CorpusFile {
    key: String,
    /// Its path under where it is found.
    path: String,
    /// `shared` (`SPARRING_REAL_USERS_DIR`) or `nemo_gym` (the wheel).
    from: String,
    format: String,
    /// The sample of it read whole, every check labelled (the rest are
    /// labelled where a check flags them).
    sample: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Labelled {
    /// `FILE/TASK/TRIAL`.
    at: String,
    /// The checks whose defect it has.
    #[serde(default)]
    defects: Vec<String>,
    /// The checks whose defect it does not have; `all`: every check not in
    /// `defects`.
    #[serde(default)]
    clean: Vec<String>,
    #[serde(default)]
    note: String,
}

impl Labelled {
    fn label(&self, flag: UserFlag) -> Option<bool> {
        let name = flag.as_str();
        if self.defects.iter().any(|d| d == name) {
            Some(true)
        } else if self.clean.iter().any(|c| c == name || c == "all") {
            Some(false)
        } else {
            None
        }
    }
}

fn labels() -> Labels {
    let path = repo().join("tests/data/real_users/labels.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let labels: Labels = toml::from_str(&text).unwrap();
    for flag in UserFlag::ALL {
        assert!(
            labels.rules.contains_key(flag.as_str()),
            "labels.toml has no rule for {flag}"
        );
    }
    for f in &labels.files {
        assert!(
            !f.sample.trim().is_empty(),
            "{}: say which sample was read",
            f.key
        );
    }
    for c in &labels.conversations {
        assert!(
            !c.note.trim().is_empty(),
            "{}: a label says what was seen",
            c.at
        );
        for name in c.defects.iter().chain(&c.clean) {
            assert!(
                name == "all" || UserFlag::parse(name).is_some(),
                "{}: '{name}' is no check",
                c.at
            );
        }
    }
    labels
}

/// Where the shared real-user files are.
fn shared_dir() -> PathBuf {
    std::env::var_os("SPARRING_REAL_USERS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("../shared/data/real-users"))
}

/// The nemo-gym wheel's site-packages, from `SPARRING_NEMO_GYM_DIR`.
fn nemo_gym_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("SPARRING_NEMO_GYM_DIR")?;
    Some(Path::new(&dir).join(".."))
}

/// One conversation of the corpus, with its checks as imported.
struct Read {
    key: String,
    conversation: ImportedConversation,
    checks: UserChecks,
}

fn read_file(file: &CorpusFile, dir: &Path) -> Vec<Read> {
    let source = Source::file(dir.join(&file.path), file.path.clone());
    let format = Format::parse(&file.format).unwrap();
    let (detected, _) = source.format(None).unwrap();
    assert_eq!(detected, format, "{}: --format auto", file.path);
    let mut out = Vec::new();
    source
        .read(format, |line, read| {
            let conversation = read.unwrap_or_else(|p| panic!("{}: {p}", file.path));
            let task = conversation
                .origin
                .scenario_id
                .clone()
                .unwrap_or_else(|| format!("line{line}"));
            let key = format!(
                "{}/{task}/{}",
                file.key,
                conversation.origin.trial.unwrap_or(0)
            );
            let checks = checks_of(&conversation);
            out.push(Read {
                key,
                conversation,
                checks,
            });
            ControlFlow::Continue(())
        })
        .unwrap();
    out
}

/// One check's figures.
#[derive(Default)]
struct Figures {
    unknown: usize,
    clean: usize,
    false_positives: Vec<String>,
    defects: usize,
    found: usize,
    planted: usize,
    caught: usize,
    missed: Vec<String>,
}

impl Figures {
    fn fp_rate(&self) -> f64 {
        self.false_positives.len() as f64 / self.clean.max(1) as f64
    }
    fn recall(&self) -> f64 {
        self.caught as f64 / self.planted.max(1) as f64
    }
}

#[test]
fn every_user_check_keeps_its_false_positives_and_recall_within_the_bars_on_real_users() {
    let labels = labels();
    let shared = shared_dir();
    if !shared.is_dir() {
        println!(
            "SKIPPED: the real-user corpus: {} is not there (set SPARRING_REAL_USERS_DIR)",
            shared.display()
        );
        return;
    }
    let nemo_gym = nemo_gym_dir();
    let mut corpus: Vec<Read> = Vec::new();
    for file in &labels.files {
        let dir = match file.from.as_str() {
            "shared" => shared.clone(),
            "nemo_gym" => match &nemo_gym {
                Some(dir) => dir.clone(),
                None => {
                    println!(
                        "SKIPPED: {} of the real-user corpus: SPARRING_NEMO_GYM_DIR is not set (scripts/nemo-gym dir)",
                        file.path
                    );
                    continue;
                }
            },
            other => panic!("{}: from '{other}'", file.key),
        };
        corpus.extend(read_file(file, &dir));
    }
    let keys: BTreeSet<&str> = corpus.iter().map(|r| r.key.as_str()).collect();
    assert_eq!(keys.len(), corpus.len(), "conversation keys are not unique");
    let labelled: BTreeMap<&str, &Labelled> = labels
        .conversations
        .iter()
        .map(|l| (l.at.as_str(), l))
        .collect();
    assert_eq!(labelled.len(), labels.conversations.len(), "a label twice");
    let read_files: BTreeSet<&str> = corpus
        .iter()
        .map(|r| r.key.split('/').next().unwrap())
        .collect();
    for at in labelled.keys() {
        let file = at.split('/').next().unwrap();
        assert!(
            !read_files.contains(file) || keys.contains(at),
            "label {at}: no such conversation"
        );
    }

    let mut figures: BTreeMap<UserFlag, Figures> = BTreeMap::new();
    let mut unlabelled = Vec::new();
    for read in &corpus {
        let label = labelled.get(read.key.as_str());
        for flag in UserFlag::ALL {
            let f = figures.entry(flag).or_default();
            let outcome = read.checks.outcome(flag);
            if outcome == Outcome::Unknown {
                // The check cannot run on it (no gold, no simulated user).
                f.unknown += 1;
                continue;
            }
            let flagged = outcome == Outcome::Flagged;
            match label.and_then(|l| l.label(flag)) {
                None if flagged => unlabelled.push(format!("{} {flag}", read.key)),
                None => {}
                Some(true) => {
                    f.defects += 1;
                    f.found += usize::from(flagged);
                }
                Some(false) => {
                    f.clean += 1;
                    if flagged {
                        f.false_positives.push(read.key.clone());
                    }
                    for (what, planted) in plant::plant(flag, &read.key, &read.conversation) {
                        let outcome = checks_of(&planted).outcome(flag);
                        assert_ne!(outcome, Outcome::Unknown, "{}: {what}", read.key);
                        f.planted += 1;
                        if outcome == Outcome::Flagged {
                            f.caught += 1;
                        } else {
                            f.missed.push(format!("{}: {what}", read.key));
                        }
                    }
                }
            }
        }
    }

    println!("real-user corpus: {} conversations", corpus.len());
    for f in &labels.files {
        println!("  {}: {} (read: {})", f.key, f.path, f.sample);
    }
    println!(
        "| check | cannot run | labelled clean | flagged of them | false-positive rate | labelled defects | found | planted | caught | recall |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for (flag, f) in &figures {
        println!(
            "| {flag} | {} | {} | {} | {:.1}% | {} | {} | {} | {} | {:.1}% |",
            f.unknown,
            f.clean,
            f.false_positives.len(),
            100.0 * f.fp_rate(),
            f.defects,
            f.found,
            f.planted,
            f.caught,
            100.0 * f.recall()
        );
    }
    for (flag, f) in &figures {
        for fp in &f.false_positives {
            println!("false positive: {flag}: {fp}");
        }
        for missed in &f.missed {
            println!("missed: {flag}: {missed}");
        }
    }
    assert!(
        unlabelled.is_empty(),
        "flags without a label in labels.toml (read them and label them): {unlabelled:#?}"
    );
    for (flag, f) in &figures {
        assert!(
            f.clean >= 30,
            "{flag}: only {} conversations labelled clean",
            f.clean
        );
        assert!(
            f.planted >= 30,
            "{flag}: only {} defects planted",
            f.planted
        );
        assert!(
            f.fp_rate() <= MAX_FALSE_POSITIVE_RATE,
            "{flag}: false-positive rate {:.1}% > {:.0}%: {:?}",
            100.0 * f.fp_rate(),
            100.0 * MAX_FALSE_POSITIVE_RATE,
            f.false_positives
        );
        assert!(
            f.recall() >= MIN_RECALL,
            "{flag}: recall {:.1}% < {:.0}% on planted defects: {:#?}",
            100.0 * f.recall(),
            100.0 * MIN_RECALL,
            f.missed
        );
    }
}
