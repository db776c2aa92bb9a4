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
