//! Scenario synthesis told through real interfaces: the `mock-synth` model
//! over HTTP proposes scenarios from retail's real records, the retail
//! environment executes their gold actions, and `sparring run` plays what was
//! written.

use std::collections::BTreeSet;
use std::sync::Arc;

use sparring::config::MockConfig;
use sparring::env::builtin::retail::RetailEnvironment;
use sparring::env::Environment;
use sparring::llm::Endpoint;
use sparring::persona::Scenario;
use sparring::synth::propose::{Proposal, Proposer};
use sparring::synth::{prompt, ProposalBrief, Stage};

use crate::common::{endpoint_config, mock, repo, sparring, text, write_job, JobSpec};

async fn proposer(server: &sparring::mock_llm::MockServer, max_attempts: u32) -> Proposer {
    proposer_of(server, "mock-synth", max_attempts)
}

fn proposer_of(
    server: &sparring::mock_llm::MockServer,
    model: &str,
    max_attempts: u32,
) -> Proposer {
    let config = endpoint_config("generator", &server.base_url(), model);
    let environment = Arc::new(RetailEnvironment::new().unwrap());
    Proposer {
        policy: environment.policy_text().to_string(),
        environment,
        generator: Arc::new(Endpoint::new(&config, &server.base_url()).unwrap()),
        prompts: prompt::registry().unwrap(),
        examples: Vec::new(),
        records_per_prompt: 3,
        max_attempts,
        seed: 0,
        committee: None,
    }
}

async fn proposals(max_attempts: u32, n: u64) -> Vec<Proposal> {
    let server = mock(MockConfig::default()).await;
    let proposer = proposer(&server, max_attempts).await;
    let mut out = Vec::new();
    for index in 0..n {
        out.push(
            proposer
                .propose(index, &ProposalBrief::default())
                .await
                .unwrap(),
        );
    }
    out
}

fn first_rejected_at(proposals: &[Proposal], stage: Stage) -> Option<&Proposal> {
    proposals.iter().find(|p| {
        p.attempts[0]
            .rejection
            .as_ref()
            .is_some_and(|r| r.stage == stage)
    })
}

#[tokio::test]
async fn every_rejection_the_executor_owns_is_reached_and_fixed_by_the_feedback_retry() {
    let all = proposals(3, 60).await;
    for stage in [
        Stage::Format,
        Stage::Execution,
        Stage::State,
        Stage::UnknownId,
        Stage::Communicate,
        Stage::AnswerLeak,
    ] {
        let p = first_rejected_at(&all, stage)
            .unwrap_or_else(|| panic!("no proposal was rejected at {stage:?}"));
        let reason = &p.attempts[0].rejection.as_ref().unwrap().reason;
        assert!(!reason.is_empty());
        assert_eq!(p.attempts.len(), 2, "{stage:?}: {:?}", p.attempts);
        assert!(
            p.attempts[1].rejection.is_none(),
            "{stage:?}: the retry was rejected too"
        );
        let (scenario, executed) = p.scenario.as_ref().unwrap();
        assert_eq!(executed.len(), scenario.evaluation.actions.len());
        assert!(scenario.tags.iter().any(|t| t == "synthesized"));
    }
    let format = first_rejected_at(&all, Stage::Format).unwrap();
    assert!(format.attempts[0]
        .rejection
        .as_ref()
        .unwrap()
        .reason
        .contains("line 1 column"));
    let unknown = first_rejected_at(&all, Stage::UnknownId).unwrap();
    let reason = &unknown.attempts[0].rejection.as_ref().unwrap().reason;
    assert!(
        reason.contains("#LL99999") || reason.contains("LOYAL_77x"),
        "{reason}"
    );
    // The user was told the answer: the feedback names the field, and the
    // fixed proposal's user knows and says none of its facts.
    let leak = first_rejected_at(&all, Stage::AnswerLeak).unwrap();
    let reason = &leak.attempts[0].rejection.as_ref().unwrap().reason;
    assert!(reason.contains("is in user.known_info"), "{reason}");
    let (fixed, _) = leak.scenario.as_ref().unwrap();
    assert!(!fixed.evaluation.communicate.is_empty());
    for fact in &fixed.evaluation.communicate {
        for field in [
            &fixed.user.reason_for_contact,
            &fixed.user.known_info,
            &fixed.user.task_instructions,
        ] {
            assert!(
                !sparring::verify::communicate::says_fact(field, fact),
                "{fact:?} in {field:?}"
            );
        }
    }
}

#[tokio::test]
async fn a_hard_task_that_names_the_order_by_the_status_to_communicate_is_fixed_on_feedback() {
    let server = mock(MockConfig::default()).await;
    let proposer = proposer(&server, 3).await;
    let hard = ProposalBrief {
        difficulty: Some("hard".into()),
        ..Default::default()
    };
    // Hard tasks describe the order by what is in it; on a first attempt
    // mock-synth also names its status, which a status task must communicate.
    let mut leaked = 0;
    for index in 0..40 {
        let p = proposer.propose(index, &hard).await.unwrap();
        let Some(rejection) = p.attempts[0].rejection.as_ref() else {
            continue;
        };
        if rejection.stage != Stage::AnswerLeak || !rejection.reason.contains("reason_for_contact")
        {
            continue;
        }
        leaked += 1;
        let (fixed, _) = p
            .scenario
            .as_ref()
            .unwrap_or_else(|| panic!("{index}: not fixed: {:#?}", p.attempts));
        assert!(
            fixed
                .user
                .reason_for_contact
                .contains("your order with the"),
            "{}",
            fixed.user.reason_for_contact
        );
    }
    assert!(leaked > 0, "no hard status task named its status");
}

#[tokio::test]
async fn without_feedback_rounds_a_broken_proposal_stays_rejected() {
    let all = proposals(1, 12).await;
    let broken: Vec<&Proposal> = all.iter().filter(|p| p.scenario.is_none()).collect();
    assert!(!broken.is_empty());
    for p in broken {
        assert_eq!(p.attempts.len(), 1);
        assert!(p.attempts[0].rejection.is_some());
    }
}

#[test]
fn synthesize_writes_distinct_scenarios_that_validate_and_run_with_rewards_of_one_and_zero() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("synth.jsonl");
    let config = dir.path().join("SYNTH.toml");
    std::fs::write(
        &config,
        format!(
            "name = \"t\"\ntarget = 30\nmax_proposals = 200\nconcurrency = 4\nexamples = \"{}\"\noutput = \"synth.jsonl\"\n\
             [endpoints.generator]\nmock = true\nmodel = \"mock-synth\"\n[roles]\ngenerator = \"generator\"\n\
             [environment]\nname = \"builtin:retail\"\n",
            repo().join("data/retail/scenarios.jsonl").display()
        ),
    )
    .unwrap();
    let run = sparring(
        dir.path(),
        &["synthesize", config.to_str().unwrap(), "--quiet"],
    );
    let stdout = text(&run.stdout);
    assert!(run.status.success(), "{stdout}\n{}", text(&run.stderr));
    assert!(stdout.contains("accepted 30 of 30"), "{stdout}");
    for stage in [
        "format",
        "execution",
        "state",
        "unknown_id",
        "communicate",
        "answer_leak",
    ] {
        assert!(
            stdout.contains(&format!("  {stage} ")),
            "{stage} missing from:\n{stdout}"
        );
    }
    let rows = read_scenarios(&out);
    assert_eq!(rows.len(), 30);
    let ids: BTreeSet<&str> = rows.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids.len(), 30);
    // The same config is the same job: a second run finds it done, proposes
    // nothing and writes the same file.
    let first = std::fs::read(&out).unwrap();
    assert!(sparring(
        dir.path(),
        &[
            "synthesize",
            config.to_str().unwrap(),
            "--quiet",
            "--concurrency",
            "1"
        ]
    )
    .status
    .success());
    assert_eq!(first, std::fs::read(&out).unwrap());

    validate_and_run_with_both_rewards(dir.path(), &out);
}

/// The scenario rows of a JSONL file.
fn read_scenarios(path: &std::path::Path) -> Vec<Scenario> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// `sparring validate` accepts a job over `scenarios`, and `sparring run` with
/// the mock policy stores conversations with rewards of both 1 and 0.
fn validate_and_run_with_both_rewards(dir: &std::path::Path, scenarios: &std::path::Path) {
    let spec = JobSpec {
        scenarios: scenarios.to_path_buf(),
        ..Default::default()
    };
    let (job, _db) = write_job(dir, &spec);
    let validate = sparring(dir, &["validate", job.to_str().unwrap()]);
    assert!(validate.status.success(), "{}", text(&validate.stderr));
    let run = sparring(dir, &["run", job.to_str().unwrap(), "--quiet"]);
    let stdout = text(&run.stdout);
    assert!(run.status.success(), "{stdout}\n{}", text(&run.stderr));
    let mean: f64 = stdout
        .split("mean reward: ")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no mean reward in:\n{stdout}"));
    // Rewards are 0 or 1 (db × communicate): a mean strictly between means both.
    assert!(mean > 0.0 && mean < 1.0, "mean reward {mean}");
}

/// A committee of `n` `blueprint_review` reviewers on the mock model `model`.
fn mock_committee(
    server: &sparring::mock_llm::MockServer,
    model: &str,
    n: usize,
) -> Arc<sparring::synth::committee::Committee> {
    use sparring::config::synth::committee::{CommitteeRule, VoteRule};
    use sparring::judge::{Builtin, Judge};
    let config = endpoint_config("reviewer", &server.base_url(), model);
    let endpoint: Arc<dyn sparring::llm::ChatModel> =
        Arc::new(Endpoint::new(&config, &server.base_url()).unwrap());
    let models = std::collections::HashMap::from([("reviewer".to_string(), endpoint)]);
    let judges = (0..n)
        .map(|i| {
            Judge::from_builtin(&format!("r{i}"), "reviewer", Builtin::BlueprintReview).unwrap()
        })
        .collect();
    let rule = VoteRule {
        rule: CommitteeRule::Majority,
        pass_score: 4.0,
        min_mean: 4.0,
        quorum: n / 2 + 1,
    };
    Arc::new(sparring::synth::committee::Committee::new(judges, &models, rule).unwrap())
}

#[tokio::test]
async fn the_committee_rejects_a_user_who_cannot_be_identified_keeps_its_reasons_and_the_feedback_retry_fixes_it(
) {
    let server = mock(MockConfig::default()).await;
    // mock-synth drops the user's email from proposal 5's first attempt.
    let unreviewed = proposer(&server, 3).await;
    let alone = unreviewed
        .propose(5, &ProposalBrief::default())
        .await
        .unwrap();
    assert_eq!(
        alone.attempts.len(),
        1,
        "validation by execution cannot see the flaw"
    );
    let (flawed, _) = alone.scenario.as_ref().unwrap();
    assert!(
        !flawed.user.known_info.contains('@'),
        "{}",
        flawed.user.known_info
    );

    let reviewed = Proposer {
        committee: Some(mock_committee(&server, "mock-judge", 3)),
        ..proposer(&server, 3).await
    };
    let p = reviewed
        .propose(5, &ProposalBrief::default())
        .await
        .unwrap();
    assert_eq!(p.attempts.len(), 2, "{:#?}", p.attempts);
    let first = &p.attempts[0];
    let rejection = first.rejection.as_ref().unwrap();
    assert_eq!(rejection.stage, Stage::Committee);
    assert!(
        rejection.reason.contains("0 of 3 reviewers")
            && rejection.reason.contains("KNOWLEDGE 1: ")
            && rejection.reason.contains("(r0, r1, r2)"),
        "{}",
        rejection.reason
    );
    let review = first.review.as_ref().unwrap();
    assert!(!review.accepted);
    assert_eq!(review.reviewers.len(), 3);
    for verdict in &review.reviewers {
        assert_eq!(verdict.score, Some(1.0));
        assert!(
            verdict.reasons.contains("KNOWLEDGE: 1 - "),
            "{}",
            verdict.reasons
        );
        assert!(verdict.usage.prompt_tokens > 0);
    }
    // The retry was shown the reasons, fixed the blueprint and passed.
    let second = &p.attempts[1];
    assert!(second.rejection.is_none());
    assert!(second.review.as_ref().unwrap().accepted);
    let (fixed, _) = p.scenario.as_ref().unwrap();
    assert!(
        fixed.user.known_info.contains('@'),
        "{}",
        fixed.user.known_info
    );
    // Reviewer tokens are counted apart from the generator's.
    let reviewed_tokens: u64 = p
        .attempts
        .iter()
        .flat_map(|a| &a.review)
        .map(|r| r.usage().prompt_tokens)
        .sum();
    assert_eq!(p.review_usage.prompt_tokens, reviewed_tokens);
    assert!(p.usage.prompt_tokens > 0 && p.usage.prompt_tokens != p.review_usage.prompt_tokens);
    // What the job stores reads back with the reviewers' reasons.
    let json = serde_json::to_string(&p.attempts).unwrap();
    let back: Vec<sparring::synth::propose::Attempt> = serde_json::from_str(&json).unwrap();
    assert_eq!(back, p.attempts);
    // A blueprint without the flaw passes the committee at once.
    let clean = reviewed
        .propose(0, &ProposalBrief::default())
        .await
        .unwrap();
    assert_eq!(clean.attempts.len(), 1);
    assert!(clean.attempts[0].review.as_ref().unwrap().accepted);
}

#[tokio::test]
async fn a_reviewer_endpoint_that_fails_fails_the_proposal_rather_than_rejecting_it() {
    let server = mock(MockConfig::default()).await;
    for (model, says) in [
        ("mock-judge+malformed", "failed"),
        ("mock-judge+garbled", "readable verdict"),
    ] {
        let reviewed = Proposer {
            committee: Some(mock_committee(&server, model, 3)),
            ..proposer(&server, 3).await
        };
        let err = reviewed
            .propose(0, &ProposalBrief::default())
            .await
            .unwrap_err();
        assert!(
            matches!(err, sparring::synth::propose::ProposeError::Review(_)),
            "{model}: {err}"
        );
        assert!(err.is_model_failure(), "{model}: {err}");
        assert!(err.to_string().contains(says), "{model}: {err}");
    }
}

#[test]
fn synthesize_with_a_committee_reports_its_rejections_and_writes_only_reviewed_scenarios() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("SYNTH.toml");
    std::fs::write(
        &config,
        "name = \"t\"\ntarget = 20\nmax_proposals = 100\nconcurrency = 4\noutput = \"synth.jsonl\"\n\
         [endpoints.generator]\nmock = true\nmodel = \"mock-synth\"\n\
         [endpoints.judge]\nmock = true\nmodel = \"mock-judge\"\n\
         [roles]\ngenerator = \"generator\"\nreviewer = \"judge\"\n\
         [environment]\nname = \"builtin:retail\"\n\
         [committee]\nrule = \"mean\"\nmin_mean = 4\n\
         [[reviewers]]\nname = \"r1\"\nbuiltin = \"blueprint_review\"\n\
         [[reviewers]]\nname = \"r2\"\nbuiltin = \"blueprint_review\"\n",
    )
    .unwrap();
    let run = sparring(
        dir.path(),
        &["synthesize", config.to_str().unwrap(), "--quiet"],
    );
    let stdout = text(&run.stdout);
    assert!(run.status.success(), "{stdout}\n{}", text(&run.stderr));
    assert!(stdout.contains("accepted 20 of 20"), "{stdout}");
    assert!(stdout.contains("  committee "), "{stdout}");
    assert!(stdout.contains("KNOWLEDGE #: "), "{stdout}");
    let rows = read_scenarios(&dir.path().join("synth.jsonl"));
    assert_eq!(rows.len(), 20);
    assert!(rows.iter().all(|s| s.user.known_info.contains('@')));
    // A mistake in a reviewer table is reported at its line, before any call.
    let broken = std::fs::read_to_string(&config)
        .unwrap()
        .replace("name = \"r2\"", "name = \"r2\"\nsample = 2");
    std::fs::write(&config, broken).unwrap();
    let run = sparring(
        dir.path(),
        &["synthesize", config.to_str().unwrap(), "--quiet"],
    );
    let stderr = text(&run.stderr);
    assert!(!run.status.success());
    assert!(
        stderr.contains("line 25") && stderr.contains("did you mean `samples`"),
        "{stderr}"
    );
}

fn tagged(s: &Scenario, tag: &str) -> bool {
    s.tags.iter().any(|t| t == tag)
}

fn calls(s: &Scenario, tool: &str) -> bool {
    s.evaluation.actions.iter().any(|a| a.name == tool)
}

#[tokio::test]
async fn each_kind_of_brief_is_proposed_by_the_mock_checked_by_execution_and_accepted() {
    use sparring::synth::brief_check::write_tools;
    use sparring::synth::Outcome;
    let server = mock(MockConfig::default()).await;
    let proposer = proposer(&server, 3).await;
    let env = RetailEnvironment::new().unwrap();
    let brief = |f: &dyn Fn(&mut ProposalBrief)| {
        let mut b = ProposalBrief::default();
        f(&mut b);
        b
    };
    let briefs = [
        brief(&|b| b.outcome = Some(Outcome::Refusal)),
        brief(&|b| b.outcome = Some(Outcome::Transfer)),
        brief(&|b| {
            b.outcome = Some(Outcome::Resolve);
            b.multi_intent = true;
        }),
        brief(&|b| b.difficulty = Some("hard".into())),
        brief(&|b| b.difficulty = Some("medium".into())),
        brief(&|b| b.tools = vec!["modify_pending_order_address".into()]),
        brief(&|b| b.tags = vec!["gift-card".into()]),
        // A tool and a tag no one kind has: the tool's kind, the tag added.
        brief(&|b| {
            b.tools = vec!["return_delivered_order_items".into()];
            b.tags = vec!["cancel".into()];
        }),
    ];
    for (i, b) in briefs.iter().enumerate() {
        let index = 40 + i as u64;
        let p = proposer.propose(index, b).await.unwrap();
        let (s, _) = p
            .scenario
            .as_ref()
            .unwrap_or_else(|| panic!("{b:?} was not accepted: {:#?}", p.attempts));
        let writes = write_tools(&env, s).await.unwrap();
        match b.outcome {
            Some(Outcome::Refusal) => assert!(tagged(s, "refusal") && writes.is_empty(), "{s:?}"),
            Some(Outcome::Transfer) => {
                let last = s.evaluation.actions.last().unwrap();
                assert_eq!(last.name, "transfer_to_human_agents");
                assert!(tagged(s, "transfer"));
            }
            _ => {}
        }
        if b.multi_intent {
            assert!(tagged(s, "multi-intent"), "{s:?}");
            assert!(writes.len() >= 2, "{writes:?}");
        }
        if let Some(d) = &b.difficulty {
            assert_eq!(s.difficulty.as_ref(), Some(d));
            assert_eq!(s.evaluation.actions[0].name, "find_user_id_by_name_zip");
            if d == "hard" {
                assert!(!s.user.known_info.contains("#LL"), "{}", s.user.known_info);
            }
        }
        for tool in &b.tools {
            assert!(calls(s, tool), "{tool} not called in {s:?}");
        }
        for tag in &b.tags {
            assert!(tagged(s, tag), "{tag} missing in {:?}", s.tags);
        }
    }
}

#[tokio::test]
async fn a_first_attempt_that_forgets_its_brief_is_rejected_at_the_brief_stage_and_fixed_by_feedback(
) {
    use sparring::synth::Outcome;
    let server = mock(MockConfig::default()).await;
    let proposer = proposer(&server, 3).await;
    // mock-synth forgets part of the brief on numbers 3 mod 7 that no other
    // flaw takes (a hard task's first attempt may leak its answer first, at
    // the earlier answer_leak stage: 108's does not).
    let cases = [
        (
            108,
            ProposalBrief {
                difficulty: Some("hard".into()),
                ..Default::default()
            },
            "asks for a hard task, but the scenario's difficulty is \"easy\"",
        ),
        (
            31,
            ProposalBrief {
                tags: vec!["gift-card".into()],
                ..Default::default()
            },
            "lack \"gift-card\"",
        ),
        (
            38,
            ProposalBrief {
                outcome: Some(Outcome::Refusal),
                ..Default::default()
            },
            "not tagged \"refusal\"",
        ),
    ];
    for (index, brief, expected) in cases {
        let p = proposer.propose(index, &brief).await.unwrap();
        let first = p.attempts[0].rejection.as_ref().expect("a first rejection");
        assert_eq!(first.stage, Stage::Brief, "{first}");
        assert!(first.reason.contains(expected), "{}", first.reason);
        assert_eq!(p.attempts.len(), 2, "{:#?}", p.attempts);
        assert!(p.scenario.is_some());
    }
}

#[test]
fn synthesize_with_diversity_targets_prints_their_coverage_and_rejects_an_unknown_tool() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("SYNTH.toml");
    let write = |tools: &str| {
        std::fs::write(
            &config,
            format!(
                "name = \"t\"\ntarget = 40\nconcurrency = 4\noutput = \"synth.jsonl\"\n\
                 [endpoints.generator]\nmock = true\nmodel = \"mock-synth\"\n[roles]\ngenerator = \"generator\"\n\
                 [environment]\nname = \"builtin:retail\"\n\
                 [diversity]\nrefusal = 0.1\ntransfer = 0.1\nmulti_intent = 0.1\n\
                 difficulty = {{ easy = 0.5, medium = 0.3, hard = 0.2 }}\n\
                 [diversity.tools]\n{tools}\n"
            ),
        )
        .unwrap();
    };
    write("modify_pending_order_address = { count = 4 }");
    let run = sparring(
        dir.path(),
        &["synthesize", config.to_str().unwrap(), "--quiet"],
    );
    let stdout = text(&run.stdout);
    assert!(run.status.success(), "{stdout}\n{}", text(&run.stderr));
    assert!(stdout.contains("  brief "), "{stdout}");
    assert!(
        stdout.contains("coverage of 40 accepted scenarios: "),
        "{stdout}"
    );
    for row in ["refusal", "transfer", "hard", "target ≥ 4 scenarios"] {
        assert!(
            stdout
                .lines()
                .any(|l| l.contains(row) && l.contains("target")),
            "no {row} target in:\n{stdout}"
        );
    }
    let rows = read_scenarios(&dir.path().join("synth.jsonl"));
    assert_eq!(rows.len(), 40);
    assert!(rows.iter().any(|s| tagged(s, "transfer")));
    assert!(rows.iter().any(|s| tagged(s, "multi-intent")));

    write("modify_order_address = 0.1");
    let bad = sparring(
        dir.path(),
        &["synthesize", config.to_str().unwrap(), "--quiet"],
    );
    let stderr = text(&bad.stderr);
    assert_eq!(bad.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("line 18")
            && stderr.contains("no tool 'modify_order_address'")
            && stderr.contains("modify_pending_order_address"),
        "{stderr}"
    );
}

/// The shipped example, as a user runs it (only its output and database moved
/// into the test's folder): 200 distinct scenarios, each replaying on a fresh
/// store, every stage counted, and a `run` over them with both rewards.
#[test]
fn the_shipped_retail_example_writes_200_distinct_scenarios_that_validate_replay_and_run() {
    let dir = tempfile::tempdir().unwrap();
    let example = std::fs::read_to_string(repo().join("examples/synthesize-retail.toml")).unwrap();
    let moved = |text: String, from: &str, to: String| {
        assert!(text.contains(from), "the example no longer has {from}");
        text.replace(from, &to)
    };
    let example = moved(
        example,
        "examples = \"../data/retail/scenarios.jsonl\"",
        format!(
            "examples = \"{}\"",
            repo().join("data/retail/scenarios.jsonl").display()
        ),
    );
    let example = moved(
        example,
        "output = \"../out/synthesized-retail.jsonl\"",
        format!(
            "output = \"synth.jsonl\"\ndatabase = \"sqlite://{}/synth.db\"",
            dir.path().display()
        ),
    );
    let config = dir.path().join("synthesize-retail.toml");
    std::fs::write(&config, example).unwrap();
    let run = sparring(
        dir.path(),
        &["synthesize", config.to_str().unwrap(), "--quiet"],
    );
    let stdout = text(&run.stdout);
    assert!(run.status.success(), "{stdout}\n{}", text(&run.stderr));
    assert!(stdout.contains("accepted 200 of 200"), "{stdout}");
    // The summary counts the rejections of every stage the mock's deliberate
    // flaws reach, with their reasons.
    for stage in [
        "format",
        "execution",
        "state",
        "unknown_id",
        "communicate",
        "answer_leak",
        "committee",
    ] {
        assert!(
            stdout.contains(&format!("  {stage} ")),
            "{stage} missing from:\n{stdout}"
        );
    }
    let rows = read_scenarios(&dir.path().join("synth.jsonl"));
    assert_eq!(rows.len(), 200);
    let ids: BTreeSet<&str> = rows.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids.len(), 200);
    // Distinct as tasks, not only as ids: no two share both their goal and
    // their gold actions.
    let tasks: BTreeSet<String> = rows
        .iter()
        .map(|s| {
            format!(
                "{}|{}|{}",
                s.user.reason_for_contact,
                s.user.task_instructions,
                serde_json::to_string(&s.evaluation.actions).unwrap()
            )
        })
        .collect();
    assert_eq!(tasks.len(), 200);
    // Every scenario's gold actions replay on a fresh store and pass the
    // execution checks again, outside the job that accepted it.
    let environment = RetailEnvironment::new().unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    for scenario in &rows {
        let calls = runtime
            .block_on(sparring::synth::execute::validate(
                &environment,
                scenario,
                &ProposalBrief::default(),
            ))
            .unwrap_or_else(|e| panic!("{}: {e:?}", scenario.id));
        assert_eq!(
            calls.len(),
            scenario.evaluation.actions.len(),
            "{}",
            scenario.id
        );
    }

    validate_and_run_with_both_rewards(dir.path(), &dir.path().join("synth.jsonl"));
}

/// A small mock synthesis job writing to `output` (as written in SYNTH.toml).
fn small_synth_config(dir: &std::path::Path, output: &str) -> std::path::PathBuf {
    let config = dir.join("SYNTH.toml");
    std::fs::write(
        &config,
        format!(
            "name = \"t\"\ntarget = 3\nmax_proposals = 30\noutput = \"{output}\"\n\
             [endpoints.generator]\nmock = true\nmodel = \"mock-synth\"\n[roles]\ngenerator = \"generator\"\n\
             [environment]\nname = \"builtin:retail\"\n"
        ),
    )
    .unwrap();
    config
}

fn file_names(dir: &std::path::Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

#[test]
fn synthesize_refuses_a_device_or_a_directory_as_output_before_any_work_and_leaves_it_as_it_was() {
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().unwrap();
    // A named pipe stands for a device node here (a rename would replace
    // either with a regular file); /dev/full itself is a bad-inputs case.
    let fifo = dir.path().join("pipe");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let folder = dir.path().join("folder");
    std::fs::create_dir(&folder).unwrap();
    for (output, kind) in [
        ("pipe", "a device or other special file"),
        ("folder", "a directory"),
    ] {
        let config = small_synth_config(dir.path(), output);
        let before = file_names(dir.path());
        let run = sparring(
            dir.path(),
            &["synthesize", config.to_str().unwrap(), "--quiet"],
        );
        let stderr = text(&run.stderr);
        assert_eq!(run.status.code(), Some(2), "{output}: {stderr}");
        assert!(
            stderr.contains(&format!("output: {}", dir.path().join(output).display()))
                && stderr.contains(kind)
                && stderr.contains("not a regular file"),
            "{stderr}"
        );
        // Nothing written: no database, no .partial, the node as it was.
        assert_eq!(file_names(dir.path()), before, "{output}");
    }
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());
    assert!(file_names(&folder).is_empty());
    // The device of the report, as root replaced by a regular file before.
    let config = small_synth_config(dir.path(), "/dev/full");
    let run = sparring(
        dir.path(),
        &["synthesize", config.to_str().unwrap(), "--quiet"],
    );
    let stderr = text(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("output: /dev/full is a device"), "{stderr}");
    assert!(std::fs::symlink_metadata("/dev/full")
        .unwrap()
        .file_type()
        .is_char_device());
}

#[test]
fn synthesize_replaces_a_symlinked_partial_file_without_writing_through_it() {
    let dir = tempfile::tempdir().unwrap();
    let outside = dir.path().join("outside.txt");
    std::fs::write(&outside, "not yours\n").unwrap();
    std::os::unix::fs::symlink(&outside, dir.path().join("synth.jsonl.partial")).unwrap();
    let config = small_synth_config(dir.path(), "synth.jsonl");
    let run = sparring(
        dir.path(),
        &["synthesize", config.to_str().unwrap(), "--quiet"],
    );
    assert!(run.status.success(), "{}", text(&run.stderr));
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "not yours\n");
    assert_eq!(read_scenarios(&dir.path().join("synth.jsonl")).len(), 3);
    assert!(!file_names(dir.path()).contains("synth.jsonl.partial"));
}
