//! The plain-text report `sparring compare-users` prints.

use std::fmt;

use super::compare_users::{ComparedJob, UserComparison};
use super::interval::Mean;
use super::render::{cells, interval, opt_rate, pairs, rate, table};

fn signed(x: f64) -> String {
    format!("{x:+.3}")
}

/// `+0.250 [+0.080, +0.420]`, or `n/a`.
fn difference(m: Option<&Mean>) -> String {
    match m {
        Some(m) => match m.ci95 {
            Some((lo, hi)) => format!("{} [{}, {}]", signed(m.mean), signed(lo), signed(hi)),
            None => format!("{} {}", signed(m.mean), interval(None, 3)),
        },
        None => "n/a".to_string(),
    }
}

fn job_line(label: &str, j: &ComparedJob) -> Vec<String> {
    vec![
        label.to_string(),
        format!(
            "job {} '{}' (user model {})",
            j.id,
            j.name,
            j.user_models.join(", ")
        ),
    ]
}

impl fmt::Display for UserComparison {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::new();
        out.push_str("Simulated users compared (B − A)\n");
        let mut head = vec![
            job_line("A", &self.a),
            job_line("B", &self.b),
            vec![
                "matched".to_string(),
                format!(
                    "{} conversations by scenario / persona / sample ({} only in A, {} only in B)",
                    self.matched, self.only_a, self.only_b
                ),
            ],
        ];
        if self.seed_mismatches > 0 {
            head.push(vec![
                "warning".to_string(),
                format!(
                    "{} matched pairs have different seeds: the jobs' seeds differ",
                    self.seed_mismatches
                ),
            ]);
        }
        pairs(&mut out, "  ", &head);

        out.push_str("\nFlags (pairs where both ran the check; paired difference, 95% CI)\n");
        let mut rows = vec![cells(&["flag", "pairs", "A", "B", "B − A [95% CI]"])];
        for d in &self.flags {
            rows.push(vec![
                d.flag.clone(),
                d.pairs.to_string(),
                opt_rate(d.a_rate.map(|m| m.mean)),
                opt_rate(d.b_rate.map(|m| m.mean)),
                difference(d.difference.as_ref()),
            ]);
        }
        table(&mut out, "  ", &rows);

        out.push_str("\nReward (pairs where both are scored)\n");
        match &self.reward {
            Some(r) => {
                let rows = vec![
                    vec!["pairs".to_string(), r.pairs.to_string()],
                    vec!["mean A".to_string(), rate(r.a_mean)],
                    vec!["mean B".to_string(), rate(r.b_mean)],
                    vec!["B − A".to_string(), difference(Some(&r.difference))],
                ];
                pairs(&mut out, "  ", &rows);
            }
            None => out.push_str("  n/a: no pair where both are scored\n"),
        }

        out.push_str("\npass^k over the scored pairs (success = full reward)\n");
        let mut rows = vec![cells(&["k", "A", "B", "B − A", "scenarios with ≥ k pairs"])];
        for p in &self.pass_hat_k {
            rows.push(vec![
                p.k.to_string(),
                opt_rate(p.a),
                opt_rate(p.b),
                p.difference.map_or_else(|| "n/a".to_string(), signed),
                p.scenarios.to_string(),
            ]);
        }
        table(&mut out, "  ", &rows);
        let _ = write!(f, "{out}");
        Ok(())
    }
}
