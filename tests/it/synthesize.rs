//! Scenario synthesis told through real interfaces: the `mock-synth` model
//! over HTTP proposes scenarios from retail's real records, the retail
//! environment executes their gold actions, and `usersim run` plays what was
//! written.

use std::collections::BTreeSet;
use std::sync::Arc;

use usersim::config::MockConfig;
use usersim::env::builtin::retail::RetailEnvironment;
use usersim::env::Environment;
use usersim::llm::Endpoint;
use usersim::persona::Scenario;
use usersim::synth::propose::{Proposal, Proposer};
use usersim::synth::{prompt, run, ProposalBrief, Stage};

use crate::common::{endpoint_config, mock, repo, text, usersim, write_job, JobSpec};

async fn proposer(server: &usersim::mock_llm::MockServer, max_attempts: u32) -> Proposer {
    proposer_of(server, "mock-synth", max_attempts)
}

fn proposer_of(server: &usersim::mock_llm::MockServer, model: &str, max_attempts: u32) -> Proposer {
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
        diversity: Default::default(),
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
}

#[tokio::test]
async fn an_exact_repeat_of_an_accepted_proposal_is_rejected_as_a_duplicate() {
    let server = mock(MockConfig::default()).await;
    let proposer = Arc::new(proposer(&server, 3).await);
    let mut finals = std::collections::BTreeMap::new();
    let (accepted, summary) = run::synthesize(proposer, 10_000, 170, 4, |p, rejection, _| {
        finals.insert(p.index, (p.scenario.clone(), rejection.cloned()));
    })
    .await
    .unwrap();
    // mock-synth repeats proposal 8 as proposal 168 (160 numbers back).
    let (original, _) = &finals[&8];
    let (repeat, rejection) = &finals[&168];
    assert_eq!(
        original.as_ref().unwrap().0.evaluation,
        repeat.as_ref().unwrap().0.evaluation
    );
    assert_eq!(rejection.as_ref().unwrap().stage, Stage::Duplicate);
    assert!(summary.rejected[&Stage::Duplicate] >= 1);
    assert!(accepted.iter().all(|s| !s.id.ends_with("000168")));
    assert_eq!(accepted.len() as u64, summary.accepted);
}

#[tokio::test]
async fn a_failed_generator_call_is_a_failed_proposal_not_a_rejection_and_a_dead_one_stops_the_run()
{
    let server = mock(MockConfig::default()).await;
    let once = Arc::new(proposer_of(&server, "mock-synth+error500-once", 3));
    let (accepted, summary) = run::synthesize(once, 3, 20, 1, |_, _, _| {}).await.unwrap();
    assert_eq!((accepted.len(), summary.failed), (3, 1));
    assert!(summary.rejected.values().sum::<u64>() <= summary.attempts);
    let dead = Arc::new(proposer_of(&server, "mock-synth+malformed", 3));
    let err = run::synthesize(dead, 3, 100, 2, |_, _, _| {})
        .await
        .unwrap_err();
    assert!(err.to_string().contains("generator"), "{err}");
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
    let run = usersim(
        dir.path(),
        &["synthesize", config.to_str().unwrap(), "--quiet"],
    );
    let stdout = text(&run.stdout);
    assert!(run.status.success(), "{stdout}\n{}", text(&run.stderr));
    assert!(stdout.contains("accepted 30 of 30"), "{stdout}");
    for stage in ["format", "execution", "state", "unknown_id", "communicate"] {
        assert!(
            stdout.contains(&format!("  {stage} ")),
            "{stage} missing from:\n{stdout}"
        );
    }
    let rows: Vec<Scenario> = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 30);
    let ids: BTreeSet<&str> = rows.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids.len(), 30);
    // Deterministic: a second run writes the same file.
    let first = std::fs::read(&out).unwrap();
    assert!(usersim(
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

    let spec = JobSpec {
        scenarios: out.clone(),
        ..Default::default()
    };
    let (job, _db) = write_job(dir.path(), &spec);
    let validate = usersim(dir.path(), &["validate", job.to_str().unwrap()]);
    assert!(validate.status.success(), "{}", text(&validate.stderr));
    let run = usersim(dir.path(), &["run", job.to_str().unwrap(), "--quiet"]);
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

fn tagged(s: &Scenario, tag: &str) -> bool {
    s.tags.iter().any(|t| t == tag)
}

fn calls(s: &Scenario, tool: &str) -> bool {
    s.evaluation.actions.iter().any(|a| a.name == tool)
}

#[tokio::test]
async fn each_kind_of_brief_is_proposed_by_the_mock_checked_by_execution_and_accepted() {
    use usersim::synth::brief_check::write_tools;
    use usersim::synth::Outcome;
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
    use usersim::synth::Outcome;
    let server = mock(MockConfig::default()).await;
    let proposer = proposer(&server, 3).await;
    // mock-synth forgets part of the brief on numbers 3 mod 7 that no other flaw takes.
    let cases = [
        (
            3,
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
    let run = usersim(
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
    let rows: Vec<Scenario> = std::fs::read_to_string(dir.path().join("synth.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 40);
    assert!(rows.iter().any(|s| tagged(s, "transfer")));
    assert!(rows.iter().any(|s| tagged(s, "multi-intent")));

    write("modify_order_address = 0.1");
    let bad = usersim(
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
