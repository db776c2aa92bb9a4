//! The deterministic checks of the simulated user, through the binary and the
//! stored conversations: each catches the mock user's failure knob on the
//! seeds it fires and nowhere else, the clean mock user is never flagged, the
//! report and the A/B comparison show the flags, and exports drop them.

use std::path::Path;

use serde_json::Value;
use sparring::mock_llm::user::{first_person, ASSISTANTISH, PREMATURE_STOP};
use sparring::store::StoredConversation;
use sparring::user_checks::{UserChecks, UserFlag};

use crate::common::{repo, sparring, text, write_job, JobSpec};

/// Every conversation of job `job` in `database`, in id order.
async fn conversations(database: &str, job: i64) -> Vec<StoredConversation> {
    let store = sparring::store::open(database).await.unwrap();
    let page = store.conversations_page(job, 0, 1000).await.unwrap();
    store.close().await;
    page
}

fn checks(c: &StoredConversation) -> UserChecks {
    UserChecks::from_stored(c.conversation.user_checks.as_ref())
        .unwrap()
        .unwrap_or_else(|| panic!("conversation {} has no stored checks", c.conversation.id))
}

fn user_texts(c: &StoredConversation) -> Vec<&str> {
    c.messages
        .iter()
        .filter(|m| m.role == "user" && m.author == "user")
        .map(|m| m.content.as_str())
        .collect()
}

/// Run a 54-conversation retail job (27 scenarios × 2 personas) with this
/// user model; returns its database URL and job id.
fn run_job(dir: &Path, user_model: &str) -> (String, i64) {
    let spec = JobSpec {
        user_model: user_model.into(),
        personas_per_scenario: 2,
        name: user_model.replace('+', "-"),
        ..JobSpec::default()
    };
    let (config, database) = write_job(dir, &spec);
    let run = sparring(dir, &["run", config.to_str().unwrap(), "--quiet"]);
    assert!(
        run.status.success(),
        "{}{}",
        text(&run.stdout),
        text(&run.stderr)
    );
    (database, crate::common::job_id_from(&text(&run.stdout)))
}

/// Over a job of `user_model`: `flag` is raised exactly on the conversations
/// where `fired` says the knob fired (and some did), and no other flag is
/// raised anywhere. Returns how many fired.
async fn caught_exactly(
    user_model: &str,
    flag: UserFlag,
    fired: impl Fn(&StoredConversation) -> bool,
) -> usize {
    let dir = tempfile::tempdir().unwrap();
    let (database, job) = run_job(dir.path(), user_model);
    let all = conversations(&database, job).await;
    assert_eq!(all.len(), 54);
    let mut hits = 0;
    for c in &all {
        let checks = checks(c);
        let did = fired(c);
        hits += usize::from(did);
        assert_eq!(
            checks.is_flagged(flag),
            did,
            "{user_model}: conversation {} ({}) {flag}: {:?}\n{:#?}",
            c.conversation.id,
            c.conversation.item_key,
            checks.checks,
            user_texts(c)
        );
        let others: Vec<UserFlag> = checks
            .flagged()
            .into_iter()
            .filter(|f| *f != flag)
            .collect();
        assert!(
            others.is_empty(),
            "{user_model}: conversation {} raised {others:?}: {:?}\n{:#?}",
            c.conversation.item_key,
            checks.checks,
            user_texts(c)
        );
    }
    assert!(hits > 0, "{user_model}: the knob never fired");
    hits
}

#[tokio::test]
async fn the_clean_mock_user_is_never_flagged_over_the_quickstarts_54_conversations() {
    let cwd = tempfile::tempdir().unwrap();
    let quickstart = repo().join("quickstart.toml");
    let run = sparring(
        cwd.path(),
        &["run", quickstart.to_str().unwrap(), "--quiet"],
    );
    assert!(run.status.success(), "{}", text(&run.stderr));
    let job = crate::common::job_id_from(&text(&run.stdout)).to_string();
    let stats = sparring(cwd.path(), &["stats", "--job", &job, "--json"]);
    assert!(stats.status.success(), "{}", text(&stats.stderr));
    let report: Value = serde_json::from_slice(&stats.stdout).unwrap();
    let users = &report["simulated_user"];
    assert_eq!(users["checked"], 54, "{users:#}");
    assert_eq!(users["unchecked"], 0);
    for flag in users["flags"].as_array().unwrap() {
        assert_eq!(flag["flagged"], 0, "{flag:#}");
        // 0 of n: a Wilson interval from 0 with a width.
        let ci = &flag["rate"]["ci95"];
        if flag["known"].as_u64().unwrap() > 0 {
            assert_eq!(ci[0], 0.0);
            assert!(ci[1].as_f64().unwrap() > 0.0, "{flag:#}");
        }
    }
    assert_eq!(
        users["flags"].as_array().unwrap().len(),
        UserFlag::ALL.len()
    );
    assert_eq!(users["any_flag"]["flagged"], 0);
    // premature_stop runs where the scenario has writes or facts to say.
    let premature = &users["flags"][0];
    assert_eq!(premature["flag"], "premature_stop");
    assert!(premature["known"].as_u64().unwrap() >= 40, "{premature:#}");
    let per_persona: u64 = users["by_persona"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["checked"].as_u64().unwrap())
        .sum();
    assert_eq!(per_persona, 54, "{users:#}");
    assert_eq!(users["by_scenario"].as_array().unwrap().len(), 27);
    // The quickstart's user_fidelity judge looked at all 54 too, and agrees.
    let agreement = &users["judge_agreement"][0];
    assert_eq!(agreement["judge"], "user_fidelity");
    assert_eq!(agreement["conversations"], 54);
    assert_eq!(agreement["neither"], 54);
    assert_eq!(agreement["agreement"]["mean"], 1.0);

    let plain = sparring(cwd.path(), &["stats", "--job", &job]);
    let plain = text(&plain.stdout);
    assert!(
        plain.contains("Simulated user (deterministic checks)"),
        "{plain}"
    );
    assert!(plain.contains("role_confusion"), "{plain}");
    assert!(
        plain.contains("judge 'user_fidelity' vs the checks"),
        "{plain}"
    );
}

#[tokio::test]
async fn premature_stop_catches_the_user_who_leaves_before_the_agent_acts() {
    let fired = |c: &StoredConversation| {
        let stop = PREMATURE_STOP.trim_end_matches("###STOP###").trim();
        let said_it = user_texts(c).last() == Some(&stop);
        // Scenarios with only reads and nothing to say cannot be checked.
        said_it
            && checks(c).outcome(UserFlag::PrematureStop) != sparring::user_checks::Outcome::Unknown
    };
    caught_exactly("mock-user+premature", UserFlag::PrematureStop, fired).await;
}

#[tokio::test]
async fn role_confusion_catches_the_user_who_speaks_the_agents_lines() {
    let fired = |c: &StoredConversation| user_texts(c).iter().any(|t| t.starts_with(ASSISTANTISH));
    caught_exactly("mock-user+assistantish", UserFlag::RoleConfusion, fired).await;
}

#[tokio::test]
async fn instruction_leak_catches_the_user_who_says_its_instructions() {
    let scenarios: Vec<sparring::persona::Scenario> =
        std::fs::read_to_string(repo().join("data/retail/scenarios.jsonl"))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
    let fired = |c: &StoredConversation| {
        let s = scenarios
            .iter()
            .find(|s| s.id == c.conversation.scenario_id)
            .unwrap();
        let told = first_person(&s.user.task_instructions);
        user_texts(c).iter().any(|t| t.contains(&told))
    };
    caught_exactly("mock-user+leaky", UserFlag::InstructionLeak, fired).await;
}

#[tokio::test]
async fn invented_fact_catches_the_user_who_makes_up_an_order_number() {
    let fired = |c: &StoredConversation| user_texts(c).iter().any(|t| t.contains("#ZZ"));
    caught_exactly("mock-user+inventive", UserFlag::InventedFact, fired).await;
}

#[tokio::test]
async fn repetition_and_control_token_misuse_catch_the_looping_and_talking_past_stop_users() {
    // +nonstop asks the same thing again each time the agent is done.
    let again = "Hmm, one more thing: can you double-check that?";
    let repeated =
        |c: &StoredConversation| user_texts(c).iter().filter(|t| **t == again).count() > 1;
    caught_exactly("mock-user+nonstop", UserFlag::Repetition, repeated).await;
    // +stop-midtext keeps talking after ###STOP###, as small models do.
    let past_stop = |c: &StoredConversation| {
        c.conversation.termination == "user_stop"
            && user_texts(c)
                .last()
                .is_some_and(|t| t.starts_with("Perfect, thank you"))
    };
    caught_exactly(
        "mock-user+stop-midtext",
        UserFlag::ControlTokenMisuse,
        past_stop,
    )
    .await;
}

#[tokio::test]
async fn compare_users_shows_the_premature_stops_and_the_pass_rate_they_cost() {
    let dir = tempfile::tempdir().unwrap();
    let (a_dir, b_dir) = (dir.path().join("a"), dir.path().join("b"));
    std::fs::create_dir_all(&a_dir).unwrap();
    std::fs::create_dir_all(&b_dir).unwrap();
    let database = format!("sqlite://{}", dir.path().join("ab.db").display());
    let mut ids = Vec::new();
    for (folder, model) in [(&a_dir, "mock-user"), (&b_dir, "mock-user+premature")] {
        let spec = JobSpec {
            user_model: model.into(),
            personas_per_scenario: 2,
            name: model.replace('+', "-"),
            database: Some(database.clone()),
            ..JobSpec::default()
        };
        let (config, _) = write_job(folder, &spec);
        let run = sparring(folder, &["run", config.to_str().unwrap(), "--quiet"]);
        assert!(run.status.success(), "{}", text(&run.stderr));
        ids.push(crate::common::job_id_from(&text(&run.stdout)).to_string());
    }
    let db = ["--database", database.as_str()];
    let args = |json: bool| {
        let mut a = vec!["compare-users", ids[0].as_str(), ids[1].as_str()];
        a.extend(db);
        if json {
            a.push("--json");
        }
        a
    };
    let out = sparring(dir.path(), &args(true));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let c: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(c["matched"], 54, "{c:#}");
    assert_eq!(c["seed_mismatches"], 0);
    assert_eq!(c["b"]["user_models"][0], "mock-user+premature");
    let premature = &c["flags"][0];
    assert_eq!(premature["flag"], "premature_stop");
    assert_eq!(premature["a_flagged"], 0);
    let b_flagged = premature["b_flagged"].as_u64().unwrap();
    assert!(b_flagged >= 5, "{premature:#}");
    let difference = &premature["difference"];
    assert!(difference["mean"].as_f64().unwrap() > 0.0);
    assert!(
        difference["ci95"][0].as_f64().unwrap() > 0.0,
        "{difference:#}"
    );
    // The users that left early cost the policy its reward.
    assert!(
        c["reward"]["difference"]["mean"].as_f64().unwrap() < 0.0,
        "{c:#}"
    );
    let pass1 = &c["pass_hat_k"][0];
    assert_eq!(pass1["k"], 1);
    assert!(
        pass1["b"].as_f64().unwrap() < pass1["a"].as_f64().unwrap(),
        "{pass1:#}"
    );
    assert!(pass1["difference"].as_f64().unwrap() < 0.0);

    let plain = text(&sparring(dir.path(), &args(false)).stdout);
    assert!(
        plain.contains("Simulated users compared (B − A)"),
        "{plain}"
    );
    assert!(plain.contains("premature_stop"), "{plain}");
    assert!(plain.contains("pass^k"), "{plain}");

    // Export B without its premature stops; the count says why they went.
    let mut export = vec![
        "export",
        "--job",
        ids[1].as_str(),
        "--out",
        "b.jsonl",
        "--drop-user-flag",
        "premature_stop",
    ];
    export.extend(db);
    let out = sparring(dir.path(), &export);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let said = text(&out.stdout);
    assert!(
        said.contains(&format!("{b_flagged} with a --drop-user-flag flag")),
        "{said}"
    );
    let lines = std::fs::read_to_string(dir.path().join("b.jsonl"))
        .unwrap()
        .lines()
        .count();
    let all = conversations(&database, ids[1].parse().unwrap()).await;
    let kept = all
        .iter()
        .filter(|c| {
            c.conversation.reward.is_some() && !checks(c).is_flagged(UserFlag::PrematureStop)
        })
        .count();
    assert_eq!(lines, kept);
}

#[tokio::test]
async fn a_jobs_drop_flagged_checks_leave_exports_unless_kept() {
    let dir = tempfile::tempdir().unwrap();
    let spec = JobSpec {
        user_model: "mock-user+assistantish".into(),
        scenarios: crate::common::first_scenarios(dir.path(), 8),
        personas_per_scenario: 2,
        ..JobSpec::default()
    };
    let (config, database) = write_job(dir.path(), &spec);
    let toml = std::fs::read_to_string(&config).unwrap().replace(
        "[user_simulator]\n",
        "[user_simulator]\ndrop_flagged = [\"role_confusion\"]\n",
    );
    std::fs::write(&config, toml).unwrap();
    let run = sparring(dir.path(), &["run", config.to_str().unwrap(), "--quiet"]);
    assert!(run.status.success(), "{}", text(&run.stderr));
    let job = crate::common::job_id_from(&text(&run.stdout));
    let all = conversations(&database, job).await;
    let flagged = all
        .iter()
        .filter(|c| checks(c).is_flagged(UserFlag::RoleConfusion))
        .count();
    let scored = all
        .iter()
        .filter(|c| c.conversation.reward.is_some())
        .count();
    assert!(flagged > 0 && flagged < scored, "{flagged} of {scored}");
    let job = job.to_string();
    let export = |extra: &[&str]| {
        let mut args = vec![
            "export",
            "--job",
            job.as_str(),
            "--out",
            "x.jsonl",
            "--database",
            database.as_str(),
        ];
        args.extend(extra);
        let out = sparring(dir.path(), &args);
        assert!(out.status.success(), "{}", text(&out.stderr));
        (
            std::fs::read_to_string(dir.path().join("x.jsonl"))
                .unwrap()
                .lines()
                .count(),
            text(&out.stderr),
        )
    };
    let (dropped, said) = export(&[]);
    assert_eq!(dropped, scored - flagged);
    assert!(
        said.contains("the 'role_confusion' check flagged"),
        "{said}"
    );
    let (kept, _) = export(&["--keep-user-flagged"]);
    assert_eq!(kept, scored);
}

#[tokio::test]
async fn checks_are_stored_with_the_conversation_on_every_backend() {
    let dir = tempfile::tempdir().unwrap();
    for database in crate::common::databases(dir.path(), "user_checks") {
        let case = tempfile::tempdir().unwrap();
        let spec = JobSpec {
            user_model: "mock-user+inventive".into(),
            scenarios: crate::common::first_scenarios(case.path(), 4),
            database: database.clone(),
            name: crate::common::unique_name("checks"),
            ..JobSpec::default()
        };
        let (config, url) = write_job(case.path(), &spec);
        let run = sparring(case.path(), &["run", config.to_str().unwrap(), "--quiet"]);
        assert!(run.status.success(), "{}", text(&run.stderr));
        let job = crate::common::job_id_from(&text(&run.stdout));
        let page = conversations(&url, job).await;
        assert_eq!(page.len(), 4);
        let store = sparring::store::open(&url).await.unwrap();
        for c in &page {
            let one = store
                .get_conversation(c.conversation.id)
                .await
                .unwrap()
                .unwrap();
            assert_eq!(one.conversation.user_checks, c.conversation.user_checks);
            let checks = checks(&one);
            assert_eq!(checks.checks.len(), UserFlag::ALL.len(), "{url}");
            for result in checks.checks.iter().filter(|r| !r.evidence.is_empty()) {
                let at = result.evidence[0].message.unwrap();
                assert_eq!(one.messages[at].author, "user", "{result:?}");
            }
        }
        store.close().await;
    }
}

#[tokio::test]
async fn the_service_reports_the_checks_compares_users_and_drops_flagged_exports() {
    let service = crate::common::Service::start_with(None).await;
    let mut ids = Vec::new();
    for model in ["mock-user", "mock-user+premature"] {
        let toml = service.job_with(JobSpec {
            name: model.replace('+', "-"),
            user_model: model.into(),
            scenarios: crate::common::first_scenarios(service.dir.path(), 10),
            personas_per_scenario: 2,
            ..JobSpec::default()
        });
        let id = service.submit_toml(toml).await["id"].as_i64().unwrap();
        service.wait_until_done(id).await;
        ids.push(id);
    }
    let stats = service
        .json(&format!("/v1/jobs/{}/stats?k=1,2", ids[1]))
        .await;
    let premature = &stats["simulated_user"]["flags"][0];
    assert_eq!(premature["flag"], "premature_stop");
    let flagged = premature["flagged"].as_u64().unwrap();
    assert!(flagged > 0, "{premature:#}");
    assert_eq!(stats["pass_hat_k"]["values"][1]["k"], 2);

    let c = service
        .json(&format!("/v1/compare-users?a={}&b={}", ids[0], ids[1]))
        .await;
    assert_eq!(c["matched"], 20);
    assert_eq!(c["flags"][0]["b_flagged"].as_u64().unwrap(), flagged);

    let all = service.text(&format!("/v1/jobs/{}/export", ids[1])).await;
    let kept = service
        .text(&format!(
            "/v1/jobs/{}/export?drop_user_flag=premature_stop",
            ids[1]
        ))
        .await;
    assert_eq!(all.lines().count() - kept.lines().count(), flagged as usize);

    for bad in [
        format!("/v1/jobs/{}/export?drop_user_flag=premature", ids[1]),
        format!("/v1/jobs/{}/stats?k=0", ids[1]),
        format!("/v1/compare-users?a={}", ids[0]),
    ] {
        let response = service.get(&bad).send().await.unwrap();
        let status = response.status();
        let body = response.text().await.unwrap();
        assert_eq!(status, 422, "{bad}: {body}");
    }
    let missing = service.get("/v1/jobs/999/stats").send().await.unwrap();
    assert_eq!(missing.status(), 404);
}

/// Every conversation's stored checks rewritten as an older version made
/// them, with a flag the current version would not raise.
async fn age_checks(database: &str, job: i64) -> Vec<(i64, Value)> {
    let store = sparring::store::open(database).await.unwrap();
    let page = store.conversations_page(job, 0, 1000).await.unwrap();
    let current: Vec<(i64, Value)> = page
        .iter()
        .map(|c| {
            (
                c.conversation.id,
                c.conversation.user_checks.clone().unwrap(),
            )
        })
        .collect();
    let aged: Vec<(i64, Value)> = current
        .iter()
        .map(|(id, checks)| {
            let mut old = checks.clone();
            old["version"] = serde_json::json!(2);
            for r in old["checks"].as_array_mut().unwrap() {
                if r["flag"] == "instruction_leak" && r["outcome"] == "clear" {
                    r["outcome"] = serde_json::json!("flagged");
                    r["evidence"] = serde_json::json!([{"message": 1, "text": "x", "why": "v2"}]);
                }
            }
            (*id, old)
        })
        .collect();
    store.replace_user_checks(&aged).await.unwrap();
    store.close().await;
    current
}

#[tokio::test]
async fn checks_of_an_older_version_are_counted_and_made_again_by_recheck() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path();
    let db = format!("sqlite://{}", cwd.join("r.db").display());
    // A generated job (the mock's quickstart) and an import (a real tau2 run).
    let quickstart = repo().join("quickstart.toml");
    let run = sparring(
        cwd,
        &[
            "run",
            quickstart.to_str().unwrap(),
            "--quiet",
            "--database",
            &db,
        ],
    );
    assert!(run.status.success(), "{}", text(&run.stderr));
    let generated = crate::common::job_id_from(&text(&run.stdout));
    let tau2 = repo().join("tests/data/tau2/airline_real_run.json");
    let import = sparring(
        cwd,
        &[
            "import",
            tau2.to_str().unwrap(),
            "--name",
            "real",
            "--database",
            &db,
        ],
    );
    assert!(import.status.success(), "{}", text(&import.stderr));
    let imported = crate::common::job_id_from(&text(&import.stdout));
    for job in [generated, imported] {
        let fresh = age_checks(&db, job).await;
        let id = job.to_string();
        let stats = sparring(cwd, &["stats", "--job", &id, "--database", &db]);
        assert!(
            text(&stats.stdout).contains("older checks"),
            "{}",
            text(&stats.stdout)
        );
        let again = sparring(cwd, &["recheck", "--job", &id, "--database", &db]);
        let said = text(&again.stdout);
        assert!(again.status.success(), "{said}{}", text(&again.stderr));
        assert!(
            said.contains(&format!("{} conversations checked again", fresh.len())),
            "{said}"
        );
        let store = sparring::store::open(&db).await.unwrap();
        let page = store.conversations_page(job, 0, 1000).await.unwrap();
        store.close().await;
        for (c, (id, checks)) in page.iter().zip(&fresh) {
            assert_eq!(c.conversation.id, *id);
            assert_eq!(
                c.conversation.user_checks.as_ref(),
                Some(checks),
                "conversation {id} of job {job}"
            );
        }
        let again = sparring(cwd, &["recheck", "--job", &id, "--database", &db]);
        assert!(
            text(&again.stdout).contains("0 conversations checked again"),
            "{}",
            text(&again.stdout)
        );
    }
}
