//! `sparring evaluate`: one job config run once per policy through the real
//! binary. The example's three mock policies come out in order of quality;
//! running the file again does no work, and a policy added to it runs alone;
//! a SIGKILL in the middle of a 3-policy evaluation, then a resume, gives
//! every item once per policy (SQLite and, with `SPARRING_TEST_POSTGRES`,
//! Postgres); the service answers the stored evaluation's leaderboard.

use crate::common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{databases, repo, sparring, text, unique_name, write_job, JobSpec, Service};
use sparring::store::{self, Store};

/// An evaluation named `name` of the job at `job` with these policies
/// (name, policy model), written beside it.
fn write_evaluation(dir: &Path, name: &str, job: &Path, policies: &[(&str, &str)]) -> String {
    let mut text = format!(
        "[evaluation]\nname = \"{name}\"\njob = \"{}\"\n",
        job.display()
    );
    for (policy, model) in policies {
        text.push_str(&format!(
            "\n[[policies]]\nname = \"{policy}\"\nmodel = \"{model}\"\n"
        ));
    }
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

async fn status_of(service: &Service, path: &str) -> u16 {
    service.get(path).send().await.unwrap().status().as_u16()
}

/// Conversations of each job, and the item ids stored more than once.
async fn conversations_of(store: &dyn Store, job: i64) -> (usize, usize) {
    let conversations = store.conversations_page(job, 0, 100_000).await.unwrap();
    let mut items: Vec<i64> = conversations
        .iter()
        .map(|c| c.conversation.item_id)
        .collect();
    items.sort();
    let all = items.len();
    items.dedup();
    (all, all - items.len())
}

#[tokio::test]
async fn the_example_ranks_three_mock_policies_a_rerun_does_no_work_and_a_new_policy_runs_alone() {
    let dir = tempfile::tempdir().unwrap();
    let example = repo().join("examples/leaderboard.toml");
    let out = sparring(
        dir.path(),
        &["evaluate", example.to_str().unwrap(), "--quiet", "--json"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let table: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let policies = table["policies"].as_array().unwrap();
    let names: Vec<&str> = policies
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "three-mock-policies: always-right",
            "three-mock-policies: as-shipped",
            "three-mock-policies: always-wrong"
        ],
        "listed in the file's order"
    );
    let reward = |i: usize| policies[i]["mean_reward"]["mean"].as_f64().unwrap();
    assert!(reward(0) > reward(1) && reward(1) > reward(2), "{table}");
    let rating = |i: usize| policies[i]["rating"]["rating"].as_f64().unwrap();
    assert!(rating(0) > rating(1) && rating(1) > rating(2), "{table}");
    assert_eq!(table["shared_items"], 54);
    // The baseline is as-shipped: its row has no paired test, the others do.
    assert_eq!(table["baseline"], policies[1]["job_id"]);
    assert!(policies[1]["against_baseline"].is_null());
    assert!(
        policies[0]["against_baseline"]["mcnemar_p"]
            .as_f64()
            .unwrap()
            < 0.05
    );

    let db = format!("sqlite://{}", dir.path().join("sparring.db").display());
    let store = store::open(&db).await.unwrap();
    // The pairwise judge compared each policy with the baseline on every
    // item: 2 × 54 verdicts, the win rates as the stored verdicts give them.
    let judged = &table["judged"];
    assert_eq!(judged["judge"], "preference");
    assert_eq!(judged["battles"], 108, "{judged}");
    let right = policies[0]["job_id"].as_i64().unwrap();
    let (mut won, mut games) = (0.0, 0.0);
    for j in store.judgments_of_job(right).await.unwrap() {
        if j.judge_name != "preference" || j.status != "ok" {
            continue;
        }
        games += 1.0;
        won += match j.verdict.as_ref().and_then(|v| v["preference"].as_str()) {
            Some("A") => 1.0,
            Some("tie") => 0.5,
            _ => 0.0,
        };
    }
    assert_eq!(games, 54.0);
    let served_rate = judged["win_rates"][0][1].as_f64().unwrap();
    assert!((served_rate - won / games).abs() < 1e-12, "{judged}");
    assert!(
        judged["win_rates"][0][2].is_null(),
        "not judged against each other"
    );
    let judge_rating = |i: usize| policies[i]["judge_rating"]["rating"].as_f64().unwrap();
    assert!(judge_rating(1) > judge_rating(2), "{table}");
    let jobs_before = store.all_jobs().await.unwrap().len();
    let again = sparring(
        dir.path(),
        &["evaluate", example.to_str().unwrap(), "--quiet", "--json"],
    );
    assert!(again.status.success(), "{}", text(&again.stderr));
    let said = text(&again.stderr);
    assert_eq!(said.matches("(resumed)").count(), 3, "{said}");
    assert_eq!(store.all_jobs().await.unwrap().len(), jobs_before);

    // A fourth policy, the as-shipped one again: only it runs. With the mock
    // user (no sampling) its table equals as-shipped's item for item.
    let mut four = std::fs::read_to_string(&example).unwrap();
    four = four.replace(
        "job = \"../quickstart.toml\"",
        &format!("job = \"{}\"", repo().join("quickstart.toml").display()),
    );
    four = four.replace(
        "judges = \"pairwise-judge.toml\"",
        &format!(
            "judges = \"{}\"",
            repo().join("examples/pairwise-judge.toml").display()
        ),
    );
    four.push_str(
        "\n[[policies]]\nname = \"as-shipped-again\"\nmodel = \"mock-policy\"\n\
         [policies.endpoint]\ninput_price_per_million = 0.4\noutput_price_per_million = 1.6\n",
    );
    let four_path = dir.path().join("four.toml");
    std::fs::write(&four_path, four).unwrap();
    let added = sparring(
        dir.path(),
        &["evaluate", four_path.to_str().unwrap(), "--quiet", "--json"],
    );
    assert!(added.status.success(), "{}", text(&added.stderr));
    let said = text(&added.stderr);
    assert_eq!(said.matches("(resumed)").count(), 3, "{said}");
    assert_eq!(said.matches("(new)").count(), 1, "{said}");
    let table: serde_json::Value = serde_json::from_slice(&added.stdout).unwrap();
    let rows = table["policies"].as_array().unwrap();
    assert_eq!(rows.len(), 4);
    let again = &rows[3]["against_baseline"];
    assert_eq!(again["only_this_passed"], 0);
    assert_eq!(again["only_baseline_passed"], 0);

    // The stored evaluation now holds four policies, in the file's order,
    // and `leaderboard --evaluation` prints it without running anything.
    let stored = store
        .find_evaluation_by_name("three-mock-policies")
        .await
        .unwrap()
        .expect("stored");
    let order: Vec<&str> = stored.policies.iter().map(|p| p.policy.as_str()).collect();
    assert_eq!(
        order,
        [
            "always-right",
            "as-shipped",
            "always-wrong",
            "as-shipped-again"
        ]
    );
    assert_eq!(stored.baseline.as_deref(), Some("as-shipped"));
    let printed = sparring(
        dir.path(),
        &[
            "leaderboard",
            "--evaluation",
            "three-mock-policies",
            "--markdown",
        ],
    );
    assert!(printed.status.success(), "{}", text(&printed.stderr));
    assert!(text(&printed.stdout).contains("as-shipped-again (job"));

    // The service answers the same table, and refuses what it cannot do.
    let service = Service::over(&db, None, tempfile::tempdir().unwrap()).await;
    let path = format!("/v1/evaluations/{}/leaderboard", stored.id);
    let served = service.json(&path).await;
    assert_eq!(served["policies"].as_array().unwrap().len(), 4);
    assert_eq!(served["baseline"], rows[1]["job_id"]);
    let status = |query: &str| {
        let request = service.get(&format!("{path}{query}"));
        async move { request.send().await.unwrap().status().as_u16() }
    };
    assert_eq!(status("?baseline=always-wrong").await, 200);
    assert_eq!(status("?baseline=nobody").await, 422);
    assert_eq!(status("?resamples=5").await, 422);
    assert_eq!(status("?resamples=many").await, 400);
    assert_eq!(status("?pass_threshold=NaN").await, 422);
    // The UI's page: the table with a link to each policy's job, the three
    // pictures (and the judge's heat map), the disagreements linked to both
    // conversations, sortable; listed on the jobs page.
    let page = service.text(&format!("/evaluations/{}", stored.id)).await;
    for row in rows {
        assert!(
            page.contains(&format!("href=\"/jobs/{}\"", row["job_id"])),
            "{page}"
        );
    }
    assert_eq!(
        page.matches("<svg").count(),
        4,
        "reward, frontier, two heat maps"
    );
    let first = &rows[0]["against_baseline"]["disagreements"][0];
    for side in ["conversation", "baseline_conversation"] {
        let link = format!("href=\"/conversations/{}\"", first[side]);
        assert!(page.contains(&link), "{link} in {page}");
    }
    let by_cost = service
        .text(&format!("/evaluations/{}?sort=cost", stored.id))
        .await;
    let cheapest = by_cost.find(">always-wrong</a>").unwrap();
    let dearest = by_cost.find(">always-right</a>").unwrap();
    assert!(cheapest < dearest, "cheapest first");
    assert_eq!(
        status_of(&service, &format!("/evaluations/{}?sort=bogus", stored.id)).await,
        400
    );
    assert_eq!(status_of(&service, "/evaluations/999999").await, 404);
    assert!(service
        .text("/")
        .await
        .contains(&format!("href=\"/evaluations/{}\"", stored.id)));
    let missing = service
        .get("/v1/evaluations/999999/leaderboard")
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status().as_u16(), 404);
    store.close().await;
}

#[tokio::test]
async fn a_bad_evaluation_file_is_refused_whole_and_creates_no_database() {
    let dir = tempfile::tempdir().unwrap();
    let (job, db) = write_job(dir.path(), &JobSpec::default());
    let path = dir.path().join("bad.toml");
    std::fs::write(
        &path,
        format!(
            "[evaluation]\nname = \"bad\"\njob = \"{}\"\nbaseline = \"c\"\n\
             [[policies]]\nname = \"a\"\nmodel = \"mock-policy\"\n\
             [[policies]]\nname = \"b\"\n[policies.endpoint]\nmax_tokens = 0\n",
            job.display()
        ),
    )
    .unwrap();
    let out = sparring(dir.path(), &["evaluate", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let said = text(&out.stderr);
    assert!(said.contains("evaluation.baseline"), "{said}");
    let db_file = db.trim_start_matches("sqlite://");
    assert!(!Path::new(db_file).exists(), "nothing was created");
    // The baseline fixed, the policy's bad endpoint key is named with the
    // policy it belongs to.
    let fixed = std::fs::read_to_string(&path)
        .unwrap()
        .replace("baseline = \"c\"\n", "");
    std::fs::write(&path, fixed).unwrap();
    let out = sparring(dir.path(), &["evaluate", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let said = text(&out.stderr);
    assert!(
        said.contains("policy 'b'") && said.contains("max_tokens"),
        "{said}"
    );
    assert!(!Path::new(db_file).exists(), "nothing was created");
    // A pairwise judge that is not one is found before any policy runs.
    let judges = dir.path().join("judges.toml");
    std::fs::write(
        &judges,
        "[endpoints.judge]\nmock = true\nmodel = \"mock-judge\"\n\n[[judges]]\n\
         name = \"helpful\"\nendpoint = \"judge\"\nbuiltin = \"helpfulness\"\n",
    )
    .unwrap();
    let pairwise = format!(
        "[evaluation.pairwise]\njudges = \"{}\"\njudge = \"helpful\"\n\n[[policies]]",
        judges.display()
    );
    let fixed = std::fs::read_to_string(&path)
        .unwrap()
        .replace("max_tokens = 0", "max_tokens = 64")
        .replacen("[[policies]]", &pairwise, 1);
    std::fs::write(&path, &fixed).unwrap();
    let out = sparring(dir.path(), &["evaluate", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let said = text(&out.stderr);
    assert!(
        said.contains("evaluation.pairwise.judge") && said.contains("not a pairwise judge"),
        "{said}"
    );
    assert!(!Path::new(db_file).exists(), "nothing was created");
}

#[tokio::test]
async fn sigkill_in_the_middle_of_a_three_policy_evaluation_then_a_resume_stores_each_item_once_per_policy(
) {
    let dir = tempfile::tempdir().unwrap();
    for database in databases(dir.path(), "evaluation sigkill") {
        let name = unique_name("evaluation");
        let spec = JobSpec {
            name: name.clone(),
            database,
            extra: "lease_secs = 1.0\n\n[mock]\nlatency_ms = 30\n".into(),
            ..JobSpec::default()
        };
        let (job, db) = write_job(dir.path(), &spec);
        let policies = [
            ("right", "mock-policy+perfect"),
            ("shipped", "mock-policy"),
            ("wrong", "mock-policy+wrong"),
        ];
        let evaluation = write_evaluation(dir.path(), &name, &job, &policies);
        let store = store::open(&db).await.unwrap();
        let mut kills = 0;
        for wait_for in [0usize, 1] {
            let child = Command::new(env!("CARGO_BIN_EXE_sparring"))
                .args(["evaluate", &evaluation, "--quiet"])
                .current_dir(dir.path())
                .env_remove("SPARRING_DATABASE")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            // Once the policy after `wait_for` finished ones has its job
            // stored, a moment into its work.
            let job_name = format!("{name}: {}", policies[wait_for].0);
            let deadline = Instant::now() + Duration::from_secs(120);
            while store.find_job_by_name(&job_name).await.unwrap().is_none()
                && Instant::now() < deadline
            {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            tokio::time::sleep(Duration::from_millis(700)).await;
            let killed = Command::new("kill")
                .args(["-KILL", &child.id().to_string()])
                .status()
                .unwrap();
            let out = child.wait_with_output().unwrap();
            if killed.success() && !out.status.success() {
                kills += 1;
            }
        }
        assert!(kills >= 1, "at least one run was killed mid-evaluation");
        let mut done_before = 0;
        for (policy, _) in policies {
            if let Some(job) = store
                .find_job_by_name(&format!("{name}: {policy}"))
                .await
                .unwrap()
            {
                done_before += store.item_counts(job.id).await.unwrap().done;
            }
        }
        assert!(done_before < 3 * 27, "the kills interrupted the evaluation");
        let last = sparring(dir.path(), &["evaluate", &evaluation, "--quiet", "--json"]);
        assert!(last.status.success(), "{}", text(&last.stderr));
        let table: serde_json::Value = serde_json::from_slice(&last.stdout).unwrap();
        assert_eq!(table["policies"].as_array().unwrap().len(), 3);
        for (policy, _) in policies {
            let job = store
                .find_job_by_name(&format!("{name}: {policy}"))
                .await
                .unwrap()
                .expect("each policy's job");
            let counts = store.item_counts(job.id).await.unwrap();
            assert_eq!(counts.done, 27, "{policy} on {db}: {counts:?}");
            let (conversations, twice) = conversations_of(store.as_ref(), job.id).await;
            assert_eq!((conversations, twice), (27, 0), "{policy} on {db}");
        }
        store.close().await;
    }
}
