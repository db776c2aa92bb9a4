//! An evaluation file (docs/leaderboard.md): one job config and the
//! policies it is run with, each a job with the same items. Read and checked
//! here, every problem at once; each policy's job config is the job's own
//! TOML with that policy's changes, which `config::load` then checks as it
//! checks any job.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::config::Problem;
use crate::diagnostics::document::read_config_file;

/// Policies an evaluation compares: at least two, at most as many as the
/// leaderboard takes.
pub const MAX_POLICIES: usize = 64;
/// Characters in an evaluation's or a policy's name, at most.
pub const MAX_NAME: usize = 100;

#[derive(Debug, Clone, PartialEq)]
pub struct EvaluationFile {
    pub name: String,
    /// The job config every policy runs, absolute.
    pub job: PathBuf,
    /// One of the policies' names; `None`: the first.
    pub baseline: Option<String>,
    pub policies: Vec<PolicyEntry>,
    /// Pairwise judging of the policies' conversations, when asked for.
    pub pairwise: Option<Pairwise>,
}

/// `[evaluation.pairwise]`: which pairs of policies a pairwise judge
/// compares, item by item, once their jobs are done.
#[derive(Debug, Clone, PartialEq)]
pub struct Pairwise {
    /// The judges file (absolute), as `sparring judge --pairwise` takes it.
    pub judges: PathBuf,
    /// Its pairwise judge whose verdicts rate the policies.
    pub judge: String,
    /// Every pair, or each policy against the baseline (Arena-Hard's way).
    pub all_pairs: bool,
}

/// One policy: what it changes in the job config.
#[derive(Debug, Clone, PartialEq)]
pub struct PolicyEntry {
    pub name: String,
    /// Keys set in the job's policy endpoint (`[endpoints.NAME]` of
    /// `[roles] policy`), over what the job writes there.
    pub endpoint: toml::Table,
    /// The job's `[policy]` table in place of its own (an agent under test).
    pub policy: Option<toml::Table>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Written {
    evaluation: Head,
    #[serde(default)]
    policies: Vec<WrittenPolicy>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Head {
    name: String,
    job: PathBuf,
    #[serde(default)]
    baseline: Option<String>,
    #[serde(default)]
    pairwise: Option<WrittenPairwise>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct WrittenPairwise {
    judges: PathBuf,
    judge: String,
    #[serde(default = "baseline_pairs")]
    pairs: String,
}

fn baseline_pairs() -> String {
    "baseline".into()
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct WrittenPolicy {
    name: String,
    /// Shorthand for `endpoint.model`.
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    endpoint: Option<toml::Table>,
    #[serde(default)]
    policy: Option<toml::Table>,
}

/// Read and check the evaluation file at `path`.
pub fn read(path: &Path) -> Result<EvaluationFile, Vec<Problem>> {
    let (text, base) = read_config_file(path, "the evaluation file")?;
    let written: Written =
        toml::from_str(&text).map_err(|e| vec![Problem::from_toml_error(path, &text, &e)])?;
    check(path, &base, written)
}

fn check(path: &Path, base: &Path, written: Written) -> Result<EvaluationFile, Vec<Problem>> {
    let mut problems = Vec::new();
    let head = written.evaluation;
    check_name(path, "evaluation.name", &head.name, &mut problems);
    let job = base.join(&head.job);
    if !job.is_file() {
        problems.push(Problem::at_field(
            path,
            "evaluation.job",
            format!(
                "{} is not a file; name the job config every policy runs, relative to this file",
                job.display()
            ),
        ));
    }
    let count = written.policies.len();
    if !(2..=MAX_POLICIES).contains(&count) {
        problems.push(Problem::at_field(
            path,
            "policies",
            format!(
                "has {count} [[policies]]; an evaluation compares 2 to {MAX_POLICIES}, each \
                 with a `name` and what it changes (`model`, `endpoint`, `policy`)"
            ),
        ));
    }
    let mut seen = BTreeSet::new();
    let mut policies = Vec::with_capacity(count);
    for (i, p) in written.policies.into_iter().enumerate() {
        let field = format!("policies[{i}]");
        check_name(path, &format!("{field}.name"), &p.name, &mut problems);
        if !seen.insert(p.name.clone()) {
            problems.push(Problem::at_field(
                path,
                &format!("{field}.name"),
                format!(
                    "'{}' names an earlier policy too; give each its own name",
                    p.name
                ),
            ));
        }
        let mut endpoint = p.endpoint.unwrap_or_default();
        if let Some(model) = p.model {
            if endpoint.contains_key("model") {
                problems.push(Problem::at_field(
                    path,
                    &format!("{field}.model"),
                    "is given twice, here and as endpoint.model; keep one",
                ));
            }
            endpoint.insert("model".into(), toml::Value::String(model));
        }
        policies.push(PolicyEntry {
            name: p.name,
            endpoint,
            policy: p.policy,
        });
    }
    if let Some(baseline) = &head.baseline {
        if !seen.contains(baseline) {
            problems.push(Problem::at_field(
                path,
                "evaluation.baseline",
                format!(
                    "'{baseline}' is not one of the policies ({}); name one of them, or leave \
                     it out for the first",
                    seen.iter().cloned().collect::<Vec<_>>().join(", ")
                ),
            ));
        }
    }
    let pairwise = head.pairwise.map(|p| {
        let judges = base.join(&p.judges);
        if !judges.is_file() {
            problems.push(Problem::at_field(
                path,
                "evaluation.pairwise.judges",
                format!(
                    "{} is not a file; name a judges file with the pairwise judge, relative to                      this file",
                    judges.display()
                ),
            ));
        }
        if !matches!(p.pairs.as_str(), "baseline" | "all") {
            problems.push(Problem::at_field(
                path,
                "evaluation.pairwise.pairs",
                format!(
                    "'{}' is not a way to pair policies; write \"baseline\" (each against the \
                     baseline) or \"all\" (every pair)",
                    p.pairs
                ),
            ));
        }
        Pairwise {
            judges,
            judge: p.judge,
            all_pairs: p.pairs == "all",
        }
    });
    if !problems.is_empty() {
        return Err(problems);
    }
    Ok(EvaluationFile {
        name: head.name,
        job,
        baseline: head.baseline,
        policies,
        pairwise,
    })
}

fn check_name(path: &Path, field: &str, name: &str, problems: &mut Vec<Problem>) {
    let chars = name.chars().count();
    if name.trim().is_empty() || chars > MAX_NAME || name.chars().any(char::is_control) {
        problems.push(Problem::at_field(
            path,
            field,
            format!(
                "{name:?} is not a name: write 1 to {MAX_NAME} characters, no control characters"
            ),
        ));
    }
}

impl EvaluationFile {
    /// The pairs of policies (indices, the first as A) the pairwise judge
    /// compares: each against the baseline, or every pair.
    pub fn judged_pairs(&self) -> Vec<(usize, usize)> {
        let Some(pairwise) = &self.pairwise else {
            return Vec::new();
        };
        let n = self.policies.len();
        if pairwise.all_pairs {
            return (0..n)
                .flat_map(|a| (a + 1..n).map(move |b| (a, b)))
                .collect();
        }
        let baseline = self.baseline_index();
        (0..n)
            .filter(|at| *at != baseline)
            .map(|at| (at, baseline))
            .collect()
    }

    /// The baseline policy's index (the first when none is named).
    pub fn baseline_index(&self) -> usize {
        self.baseline
            .as_ref()
            .and_then(|b| self.policies.iter().position(|p| &p.name == b))
            .unwrap_or(0)
    }

    /// The job config `policy` runs: the job's own TOML (`job_text`) named
    /// `EVALUATION: POLICY`, with the policy's endpoint keys and `[policy]`
    /// table. `label` names the job file in problems.
    pub fn job_for(
        &self,
        policy: &PolicyEntry,
        job_text: &str,
        label: &Path,
    ) -> Result<String, Vec<Problem>> {
        let mut job: toml::Table = toml::from_str(job_text)
            .map_err(|e| vec![Problem::from_toml_error(label, job_text, &e)])?;
        job.insert(
            "name".into(),
            toml::Value::String(format!("{}: {}", self.name, policy.name)),
        );
        if !policy.endpoint.is_empty() {
            let role = job
                .get("roles")
                .and_then(|r| r.get("policy"))
                .and_then(toml::Value::as_str)
                .unwrap_or("policy")
                .to_string();
            let endpoint = job
                .get_mut("endpoints")
                .and_then(|e| e.get_mut(&role))
                .and_then(toml::Value::as_table_mut)
                .ok_or_else(|| {
                    vec![Problem::at_field(
                        label,
                        &format!("endpoints.{role}"),
                        format!(
                            "is not a table, so policy '{}' has no endpoint to change; write \
                             the job's policy endpoint, or change only `[policy]`",
                            policy.name
                        ),
                    )]
                })?;
            for (key, value) in &policy.endpoint {
                endpoint.insert(key.clone(), value.clone());
            }
        }
        if let Some(table) = &policy.policy {
            job.insert("policy".into(), toml::Value::Table(table.clone()));
        }
        toml::to_string(&job).map_err(|e| {
            vec![Problem::in_file(
                label,
                format!("cannot write policy '{}''s job config: {e}", policy.name),
            )]
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn written(text: &str) -> Written {
        toml::from_str(text).unwrap()
    }

    const JOB: &str = "name = \"q\"\n[endpoints.p]\nmock = true\nmodel = \"m\"\n\
                       [roles]\npolicy = \"p\"\nuser = \"p\"\n[policy]\ntemplate = \"t\"\n";

    fn file(dir: &Path, policies: &str) -> Result<EvaluationFile, Vec<Problem>> {
        std::fs::write(dir.join("job.toml"), JOB).unwrap();
        let text = format!("[evaluation]\nname = \"e\"\njob = \"job.toml\"\n{policies}");
        check(Path::new("eval.toml"), dir, written(&text))
    }

    #[test]
    fn each_policy_changes_the_jobs_policy_endpoint_and_name_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let eval = file(
            dir.path(),
            "[[policies]]\nname = \"a\"\nmodel = \"x\"\n[[policies]]\nname = \"b\"\n\
             [policies.endpoint]\ntemperature = 0.5\n[policies.policy]\nkind = \"http\"\n",
        )
        .unwrap();
        let a: toml::Table = toml::from_str(
            &eval
                .job_for(&eval.policies[0], JOB, Path::new("job.toml"))
                .unwrap(),
        )
        .unwrap();
        assert_eq!(a["name"].as_str(), Some("e: a"));
        assert_eq!(a["endpoints"]["p"]["model"].as_str(), Some("x"));
        assert_eq!(a["policy"]["template"].as_str(), Some("t"));
        let b: toml::Table = toml::from_str(
            &eval
                .job_for(&eval.policies[1], JOB, Path::new("job.toml"))
                .unwrap(),
        )
        .unwrap();
        assert_eq!(b["endpoints"]["p"]["model"].as_str(), Some("m"));
        assert_eq!(b["endpoints"]["p"]["temperature"].as_float(), Some(0.5));
        assert_eq!(b["policy"]["kind"].as_str(), Some("http"));
        assert!(b["policy"].get("template").is_none());
    }

    #[test]
    fn every_problem_is_named_by_its_field() {
        let dir = tempfile::tempdir().unwrap();
        let problems = file(
            dir.path(),
            "baseline = \"zzz\"\n[[policies]]\nname = \"a\"\nmodel = \"x\"\n\
             [policies.endpoint]\nmodel = \"y\"\n[[policies]]\nname = \"a\"\n",
        )
        .unwrap_err();
        let text: Vec<String> = problems.iter().map(|p| p.to_string()).collect();
        let all = text.join("\n");
        assert!(all.contains("policies[0].model"), "{all}");
        assert!(all.contains("policies[1].name"), "{all}");
        assert!(all.contains("evaluation.baseline"), "{all}");
        assert_eq!(problems.len(), 3, "{all}");
        let one = file(dir.path(), "[[policies]]\nname = \"a\"\n").unwrap_err();
        assert!(one[0].to_string().contains("2 to 64"), "{:?}", one);
        let nameless = file(
            dir.path(),
            "[[policies]]\nname = \" \"\n[[policies]]\nname = \"b\"\n",
        )
        .unwrap_err();
        assert!(nameless[0].to_string().contains("policies[0].name"));
    }

    #[test]
    fn pairs_are_each_against_the_baseline_or_every_pair() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("judges.toml"), "").unwrap();
        let three = "[[policies]]\nname = \"a\"\n[[policies]]\nname = \"b\"\n\
                     [[policies]]\nname = \"c\"\n";
        let text = |pairs: &str| {
            format!(
                "[evaluation]\nname = \"e\"\njob = \"job.toml\"\nbaseline = \"b\"\n\
                 [evaluation.pairwise]\njudges = \"judges.toml\"\njudge = \"pref\"\n{pairs}{three}"
            )
        };
        std::fs::write(dir.path().join("job.toml"), JOB).unwrap();
        let read = |pairs: &str| check(Path::new("eval.toml"), dir.path(), written(&text(pairs)));
        assert_eq!(read("").unwrap().judged_pairs(), vec![(0, 1), (2, 1)]);
        assert_eq!(
            read("pairs = \"all\"\n").unwrap().judged_pairs(),
            vec![(0, 1), (0, 2), (1, 2)]
        );
        let bad = read("pairs = \"some\"\n").unwrap_err();
        assert!(
            bad[0].to_string().contains("evaluation.pairwise.pairs"),
            "{bad:?}"
        );
    }

    #[test]
    fn a_missing_job_file_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let text = "[evaluation]\nname = \"e\"\njob = \"nope.toml\"\n[[policies]]\nname = \"a\"\n\
                    [[policies]]\nname = \"b\"\n";
        let problems = check(Path::new("eval.toml"), dir.path(), written(text)).unwrap_err();
        assert!(
            problems[0].to_string().contains("evaluation.job"),
            "{problems:?}"
        );
    }

    proptest! {
        /// Whatever an evaluation file holds, reading it gives the file or
        /// problems naming it, never a panic; and a file that reads keeps
        /// its policies' names in order, each once.
        #[test]
        fn any_text_reads_or_is_refused_with_problems(
            names in prop::collection::vec("[a-z \\-]{0,8}", 0..5),
            baseline in prop::option::of("[a-z]{0,3}"),
            pairs in prop::option::of("[a-z]{0,8}"),
            junk in "[\\[\\]=\"a-z \\n]{0,40}",
        ) {
            let dir = tempfile::tempdir().unwrap();
            std::fs::write(dir.path().join("job.toml"), JOB).unwrap();
            std::fs::write(dir.path().join("judges.toml"), "").unwrap();
            let mut text = String::from("[evaluation]\nname = \"e\"\njob = \"job.toml\"\n");
            if let Some(b) = &baseline {
                text.push_str(&format!("baseline = \"{b}\"\n"));
            }
            if let Some(p) = &pairs {
                text.push_str(&format!(
                    "[evaluation.pairwise]\njudges = \"judges.toml\"\njudge = \"j\"\npairs = \"{p}\"\n"
                ));
            }
            for name in &names {
                text.push_str(&format!("[[policies]]\nname = \"{name}\"\n"));
            }
            text.push_str(&junk);
            let path = dir.path().join("eval.toml");
            std::fs::write(&path, &text).unwrap();
            match read(&path) {
                Ok(file) => {
                    let read: Vec<&str> = file.policies.iter().map(|p| p.name.as_str()).collect();
                    prop_assert_eq!(read, names.iter().map(String::as_str).collect::<Vec<_>>());
                    prop_assert!((2..=MAX_POLICIES).contains(&file.policies.len()));
                }
                Err(problems) => {
                    prop_assert!(!problems.is_empty());
                    for problem in &problems {
                        prop_assert!(problem.to_string().contains("eval.toml"), "{}", problem);
                    }
                }
            }
        }
    }
}
