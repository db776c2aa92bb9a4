//! `sparring leaderboard`: three jobs over the same retail items with mock
//! policies of known quality (always right, sometimes wrong, always wrong)
//! come out in that order, with paired tests that tell them apart; and the
//! statistics agree with the reference implementations: the Bradley–Terry
//! fit with choix's `ilsr_pairwise`, McNemar's exact p with scipy's
//! `binomtest` (both from scripts/trainer-frameworks' venv); and the pass-rate
//! intervals cover the truth at about their nominal rate.

use std::process::Command;

use common::{sparring, text, write_job, JobSpec};
use sparring::evaluation::bradley_terry::{fit, Battle};
use sparring::evaluation::mcnemar::exact_p;

use super::common;

fn run_job(dir: &std::path::Path, name: &str, policy: &str, db: &str) -> i64 {
    let sub = dir.join(name);
    std::fs::create_dir_all(&sub).unwrap();
    let spec = JobSpec {
        name: name.into(),
        policy_model: policy.into(),
        database: Some(db.into()),
        ..JobSpec::default()
    };
    let (path, _) = write_job(&sub, &spec);
    let out = sparring(&sub, &["run", path.to_str().unwrap(), "--quiet"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let said = text(&out.stdout);
    said.split_whitespace()
        .nth(1)
        .and_then(|id| id.parse().ok())
        .unwrap_or_else(|| panic!("no job id in {said}"))
}

#[test]
fn three_mock_policies_of_known_quality_come_out_in_order_with_paired_tests() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("eval.db").display());
    let right = run_job(dir.path(), "right", "mock-policy+perfect", &db);
    let plain = run_job(dir.path(), "plain", "mock-policy", &db);
    let wrong = run_job(dir.path(), "wrong", "mock-policy+wrong", &db);
    let jobs = format!("{wrong},{plain},{right}");
    let out = sparring(
        dir.path(),
        &["leaderboard", "--jobs", &jobs, "--database", &db, "--json"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let table: serde_json::Value = serde_json::from_str(&text(&out.stdout)).unwrap();
    assert_eq!(table["baseline"], wrong);
    let shared = table["shared_items"].as_u64().unwrap();
    assert!(shared >= 20, "{table}");
    let row = |job: i64| {
        table["policies"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["job_id"] == job)
            .unwrap()
            .clone()
    };
    let reward = |job: i64| row(job)["mean_reward"]["mean"].as_f64().unwrap();
    assert!(
        reward(right) > reward(plain) && reward(plain) > reward(wrong),
        "{table}"
    );
    assert_eq!(reward(right), 1.0, "{table}");
    // Against the always-wrong baseline, the always-right policy wins every
    // item it does not tie: McNemar and the bootstrap both exclude chance.
    let against = &row(right)["against_baseline"];
    assert_eq!(against["only_baseline_passed"], 0);
    assert!(against["mcnemar_p"].as_f64().unwrap() < 1e-3, "{against}");
    assert!(against["reward_difference"]["low"].as_f64().unwrap() > 0.0);
    assert!(row(wrong)["against_baseline"].is_null());
    let rating = |job: i64| row(job)["rating"]["rating"].as_f64();
    match (rating(right), rating(plain), rating(wrong)) {
        (Some(r), Some(p), Some(w)) => assert!(r > p && p > w, "{table}"),
        // An always-right policy never loses an item, so no maximum exists.
        _ => assert!(table["ratings_refused"].is_string(), "{table}"),
    }
    assert_eq!(row(right)["on_frontier"], true);

    let text_out = sparring(
        dir.path(),
        &[
            "leaderboard",
            "--jobs",
            &jobs,
            "--database",
            &db,
            "--markdown",
        ],
    );
    let shown = text(&text_out.stdout);
    assert!(shown.contains("| policy | model | mean reward"), "{shown}");
    assert_eq!(shown.matches("(job ").count(), 3, "{shown}");

    // Bad requests: a clear error and the exit code that says whose it is.
    let one = sparring(
        dir.path(),
        &["leaderboard", "--jobs", "1", "--database", &db],
    );
    assert_eq!(one.status.code(), Some(2), "{}", text(&one.stderr));
    assert!(text(&one.stderr).contains("at least two jobs"));
    let missing = sparring(
        dir.path(),
        &["leaderboard", "--jobs", "1,999", "--database", &db],
    );
    assert_eq!(missing.status.code(), Some(3));
    let baseline = sparring(
        dir.path(),
        &[
            "leaderboard",
            "--jobs",
            &jobs,
            "--baseline",
            "77",
            "--database",
            &db,
        ],
    );
    assert_eq!(baseline.status.code(), Some(2));
    assert!(text(&baseline.stderr).contains("not one of the jobs compared"));
    let threshold = sparring(
        dir.path(),
        &[
            "leaderboard",
            "--jobs",
            &jobs,
            "--pass-threshold",
            "NaN",
            "--database",
            &db,
        ],
    );
    assert_eq!(threshold.status.code(), Some(2));
}

/// Battles among 5 players of known strengths, seeded: every pair meets
/// 40 times and wins by its Bradley–Terry probability.
fn battles() -> Vec<(usize, usize)> {
    use rand::{Rng, SeedableRng};
    let strengths = [0.0f64, 0.4, -0.3, 1.1, -0.9];
    let mut rng = rand::rngs::StdRng::seed_from_u64(43);
    let mut out = Vec::new();
    for a in 0..strengths.len() {
        for b in a + 1..strengths.len() {
            for _ in 0..40 {
                let p = 1.0 / (1.0 + (strengths[b] - strengths[a]).exp());
                out.push(if rng.random::<f64>() < p {
                    (a, b)
                } else {
                    (b, a)
                });
            }
        }
    }
    out
}

#[test]
fn the_bradley_terry_fit_and_mcnemar_equal_choix_and_scipy() {
    let Ok(python) = std::env::var("SPARRING_TRAINER_FRAMEWORKS_PYTHON") else {
        println!(
            "SKIPPED: SPARRING_TRAINER_FRAMEWORKS_PYTHON is not set (scripts/trainer-frameworks \
             prints it)"
        );
        return;
    };
    let battles = battles();
    let ours = fit(
        5,
        &battles
            .iter()
            .map(|&(winner, loser)| Battle::Won { winner, loser })
            .collect::<Vec<_>>(),
    )
    .unwrap();
    let mcnemar_cases = [(1u64, 5u64), (0, 10), (7, 7), (30, 45), (400, 600)];
    let script = format!(
        "import json, choix, scipy.stats\n\
         data = {battles:?}\n\
         params = choix.ilsr_pairwise(5, data, alpha=0.0, tol=1e-14, max_iter=100000)\n\
         params = params - params.mean()\n\
         ps = [scipy.stats.binomtest(b, b + c, 0.5).pvalue if b + c else 1.0 for b, c in {mcnemar_cases:?}]\n\
         print(json.dumps({{'ratings': list(params), 'mcnemar': ps}}))\n"
    );
    let out = Command::new(&python)
        .arg("-c")
        .arg(&script)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let reference: serde_json::Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
    let theirs: Vec<f64> = reference["ratings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    println!("ratings: sparring {ours:?}\n         choix    {theirs:?}");
    for (a, b) in ours.iter().zip(&theirs) {
        assert!(
            (a - b).abs() < 1e-6,
            "sparring {ours:?} against choix {theirs:?}"
        );
    }
    for ((b, c), p) in mcnemar_cases
        .iter()
        .zip(reference["mcnemar"].as_array().unwrap())
    {
        let p = p.as_f64().unwrap();
        let ours = exact_p(*b, *c);
        assert!(
            (ours - p).abs() <= 1e-9 * p.max(1e-300) + 1e-12,
            "McNemar b={b} c={c}: sparring {ours}, scipy {p}"
        );
    }
}

/// Synthetic policies that pass each item with a known probability: over
/// 200 seeded evaluations of 54 items each, the pass-rate intervals the
/// table prints cover the true rate at about their nominal 95%, and the
/// policies come out in order (docs/leaderboard.md reports the rates).
#[test]
fn pass_rate_intervals_cover_the_true_rate_at_about_95_percent_over_200_evaluations() {
    use rand::{Rng, SeedableRng};
    use sparring::interval::Mean;
    let truths = [0.9f64, 0.7, 0.5];
    let items = 54u64;
    let evaluations = 200;
    let mut covered = [0usize; 3];
    let mut in_order = 0;
    for seed in 0..evaluations {
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let means: Vec<Mean> = truths
            .iter()
            .map(|p| {
                let passed = (0..items).filter(|_| rng.random::<f64>() < *p).count() as u64;
                Mean::of_share(passed, items).unwrap()
            })
            .collect();
        for (i, (m, p)) in means.iter().zip(truths).enumerate() {
            let (low, high) = m.ci95.unwrap();
            covered[i] += usize::from(low <= p && p <= high);
        }
        in_order += usize::from(means[0].mean > means[1].mean && means[1].mean > means[2].mean);
    }
    let rates: Vec<f64> = covered
        .iter()
        .map(|c| *c as f64 / evaluations as f64)
        .collect();
    println!(
        "coverage of the true pass rate over {evaluations} evaluations of {items} items: \
         p=0.9 {:.3}, p=0.7 {:.3}, p=0.5 {:.3}; in order {in_order}/{evaluations}",
        rates[0], rates[1], rates[2]
    );
    for (rate, p) in rates.iter().zip(truths) {
        assert!(
            (0.90..=0.99).contains(rate),
            "the 95% interval covered p={p} in {rate:.3} of the evaluations"
        );
    }
    assert!(in_order as f64 >= 0.95 * evaluations as f64, "{in_order}");
}
