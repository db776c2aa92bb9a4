//! The plain-text report `sparring stats` prints: sections with aligned columns.

use std::fmt::{self, Write as _};

use super::interval::{IntervalMethod, Mean};
use super::stats::{JudgeStats, StatsReport};

/// `gpt-4.1 (50)`, each model with its conversations; those that name none
/// as `not recorded (N)`.
fn models(named: &[(String, u64)], unrecorded: u64) -> String {
    let mut parts: Vec<String> = named.iter().map(|(m, n)| format!("{m} ({n})")).collect();
    if unrecorded > 0 {
        parts.push(format!("not recorded ({unrecorded})"));
    }
    parts.join(", ")
}

/// Numbers in [0, 1] (rewards, rates).
pub(super) fn rate(x: f64) -> String {
    format!("{x:.3}")
}

pub(super) fn opt_rate(x: Option<f64>) -> String {
    x.map_or_else(|| "n/a".to_string(), rate)
}

pub(super) fn interval(ci: Option<(f64, f64)>, digits: usize) -> String {
    match ci {
        Some((lo, hi)) => format!("[{lo:.digits$}, {hi:.digits$}]"),
        None => "n/a (one value)".to_string(),
    }
}

/// `[0.412, 0.788] (Wilson)`: the interval and how it was made.
pub(super) fn mean_interval(m: &Mean, digits: usize) -> String {
    match m.ci95 {
        Some(_) => format!("{} ({})", interval(m.ci95, digits), m.ci_method.label()),
        None => interval(None, digits),
    }
}

/// Columns padded to their widest cell; the first left-aligned, the rest right.
pub(super) fn table(out: &mut String, indent: &str, rows: &[Vec<String>]) {
    aligned(out, indent, rows, true);
}

/// Label and value pairs: both left-aligned.
pub(super) fn pairs(out: &mut String, indent: &str, rows: &[Vec<String>]) {
    aligned(out, indent, rows, false);
}

fn aligned(out: &mut String, indent: &str, rows: &[Vec<String>], numbers_right: bool) {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|i| {
            rows.iter()
                .filter_map(|r| r.get(i))
                .map(|c| c.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for row in rows {
        let mut line = indent.to_string();
        for (i, cell) in row.iter().enumerate() {
            let pad = widths[i] - cell.chars().count();
            if i == 0 || !numbers_right {
                if i > 0 {
                    line.push_str("  ");
                }
                line.push_str(cell);
                line.push_str(&" ".repeat(pad));
            } else {
                line.push_str("  ");
                line.push_str(&" ".repeat(pad));
                line.push_str(cell);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
}

pub(super) fn cells(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

/// Rollout groups: how many, and how many are flat (no learning signal for
/// group-based RL), with what their rewards are.
fn groups_section(out: &mut String, g: &crate::export::groups::GroupCounts) {
    let sizes = if g.min_size == g.max_size {
        format!("{} rollouts each", g.min_size)
    } else {
        format!("{} to {} rollouts", g.min_size, g.max_size)
    };
    let _ = writeln!(
        out,
        "\nRollout groups (a scenario's scored conversations; {sizes})"
    );
    let mut rows = vec![
        vec!["groups".to_string(), g.groups.to_string()],
        vec![
            "flat".to_string(),
            format!(
                "{} ({:.1}%): every reward equal, no learning signal{}",
                g.flat,
                100.0 * g.flat_share,
                if g.max_size == 1 {
                    " (a group of one rollout always is)"
                } else {
                    ""
                }
            ),
        ],
    ];
    if let Some(mean) = g.flat_reward_mean {
        rows.push(vec![
            "flat groups' reward".to_string(),
            format!(
                "mean {}; {} all 0 (never solved), {} all 1 (always solved)",
                rate(mean),
                g.flat_at_zero,
                g.flat_at_one
            ),
        ]);
    }
    pairs(out, "  ", &rows);
}

/// The plain-text report `sparring stats` prints.
impl fmt::Display for StatsReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::new();
        let c = &self.conversations;
        // Writing to a String cannot fail.
        let _ = writeln!(
            out,
            "job {} '{}' ({}, {})",
            self.job.id,
            self.job.name,
            self.job.kind,
            self.job.status.as_str()
        );
        if let Some(synthesis) = &self.synthesis {
            let _ = write!(out, "{synthesis}");
            return f.write_str(&out);
        }
        out.push_str("\nConversations\n");
        let mut rows = vec![
            vec!["stored".to_string(), c.total.to_string()],
            vec!["scored".to_string(), c.scored.to_string()],
        ];
        if c.total > c.scored {
            rows.push(vec![
                "not scored".to_string(),
                format!(
                    "{} (simulator or environment broke them)",
                    c.total - c.scored
                ),
            ]);
        }
        rows.push(vec![
            "mean reward".to_string(),
            match &c.reward {
                Some(m) => format!("{}  95% CI {}", rate(m.mean), mean_interval(m, 3)),
                None => "n/a (nothing scored)".to_string(),
            },
        ]);
        if c.total > 0 {
            let m = &c.models;
            rows.push(vec![
                "policy model".to_string(),
                models(&m.policy, m.policy_unrecorded),
            ]);
            rows.push(vec![
                "user model".to_string(),
                models(&m.user, m.user_unrecorded),
            ]);
        }
        pairs(&mut out, "  ", &rows);
        if !c.warnings.is_empty() {
            out.push_str("\nWarnings\n");
            for w in &c.warnings {
                let _ = writeln!(
                    out,
                    "  {} of {} conversation{}: {}",
                    w.conversations,
                    c.total,
                    if c.total == 1 { "" } else { "s" },
                    w.warning
                );
            }
        }

        if !c.components.is_empty() {
            out.push_str("\nReward components\n");
            let mut rows = vec![cells(&["component", "n", "mean", "95% CI", "interval"])];
            for part in &c.components {
                rows.push(vec![
                    part.component.clone(),
                    part.score.n.to_string(),
                    rate(part.score.mean),
                    interval(part.score.ci95, 3),
                    part.score.ci_method.label().to_string(),
                ]);
            }
            table(&mut out, "  ", &rows);
        }

        if !c.terminations.is_empty() {
            out.push_str("\nTerminations\n");
            let mut rows = vec![cells(&["reason", "count", "scored", "mean reward"])];
            for t in &c.terminations {
                rows.push(vec![
                    t.reason.clone(),
                    t.count.to_string(),
                    t.scored.to_string(),
                    opt_rate(t.mean_reward),
                ]);
            }
            table(&mut out, "  ", &rows);
        }

        let p = &self.pass_hat_k;
        let _ = writeln!(
            out,
            "\npass^k per scenario (success = full reward; {} scenario{} with a scored conversation)",
            p.scenarios.len(),
            if p.scenarios.len() == 1 { "" } else { "s" }
        );
        let mut rows = vec![cells(&["k", "pass^k", "scenarios with ≥ k trials"])];
        for v in &p.values {
            rows.push(vec![
                v.k.to_string(),
                opt_rate(v.value),
                v.scenarios.to_string(),
            ]);
        }
        table(&mut out, "  ", &rows);
        if let Some(groups) = &c.groups {
            groups_section(&mut out, groups);
        }
        if let Some(synthesized) = &self.synthesized {
            super::synthesized::section(&mut out, synthesized);
        }

        out.push_str("\nJudges\n");
        if self.judges.is_empty() {
            out.push_str("  none: no judgments of this job's conversations\n");
        } else {
            let mut rows = vec![cells(&["judge", "ok", "unparseable", "failed"])];
            for j in &self.judges {
                rows.push(vec![
                    j.judge.clone(),
                    j.ok.to_string(),
                    j.unparseable.to_string(),
                    j.failed.to_string(),
                ]);
            }
            table(&mut out, "  ", &rows);
            out.push_str("  (only ok judgments count below)\n");
        }
        for j in &self.judges {
            judge_section(&mut out, j);
        }
        usage_section(&mut out, &self.usage);
        super::users_render::section(&mut out, &self.simulated_user);
        f.write_str(&out)
    }
}

fn usage_section(out: &mut String, usage: &[super::usage::RoleReport]) {
    out.push_str("\nUsage\n");
    if usage.is_empty() {
        out.push_str("  none: no model calls stored\n");
        return;
    }
    let mut rows = vec![cells(&[
        "role",
        "calls",
        "prompt tokens",
        "completion tokens",
        "latency p50 / p95 / p99 ms",
        "cost",
    ])];
    for r in usage {
        rows.push(vec![
            match &r.judge {
                Some(judge) => format!("judge {judge}"),
                None => r.role.clone(),
            },
            r.calls.to_string(),
            r.prompt_tokens.to_string(),
            r.completion_tokens.to_string(),
            r.latency.map_or("n/a".to_string(), |l| {
                format!("{} / {} / {}", l.p50, l.p95, l.p99)
            }),
            r.cost.to_string(),
        ]);
    }
    table(out, "  ", &rows);
    let _ = writeln!(
        out,
        "  cost (all roles): {}",
        super::usage::total_cost(usage)
    );
}

fn judge_section(out: &mut String, j: &JudgeStats) {
    if j.ok == 0 {
        let _ = writeln!(out, "\n{}: no ok judgments, nothing to report", j.judge);
        return;
    }
    if let Some(p) = &j.pointwise {
        let kind = if p.pass_rate.is_some() {
            "pass/fail: every score is 0 or 1"
        } else {
            "pointwise"
        };
        let _ = writeln!(out, "\n{} ({kind})", j.judge);
        let rows = match &p.pass_rate {
            Some(pass) => vec![vec![
                "pass rate".to_string(),
                format!(
                    "{}  95% CI {}  ({} of {} passed)",
                    rate(pass.rate),
                    match pass.ci95 {
                        Some(_) => format!(
                            "{} ({})",
                            interval(pass.ci95, 3),
                            IntervalMethod::Wilson.label()
                        ),
                        None => interval(None, 3),
                    },
                    pass.passed,
                    pass.judged
                ),
            ]],
            None => vec![vec![
                "mean score".to_string(),
                format!(
                    "{:.2}  95% CI {}  (n = {})",
                    p.score.mean,
                    mean_interval(&p.score, 2),
                    p.score.n
                ),
            ]],
        };
        pairs(out, "  ", &rows);
    }
    if let Some(p) = &j.pairwise {
        let _ = writeln!(
            out,
            "\n{} (pairwise: A = this job's conversation, B = the other)",
            j.judge
        );
        let w = &p.win_rate;
        let rows = vec![
            vec![
                "win / tie / loss".to_string(),
                format!(
                    "{} / {} / {}",
                    w.counts.wins, w.counts.ties, w.counts.losses
                ),
            ],
            vec![
                "win rate of A".to_string(),
                format!(
                    "{}  95% CI {}  (ties count half; bootstrap, {} resamples)",
                    rate(w.rate),
                    interval(Some(w.ci95), 3),
                    w.resamples
                ),
            ],
            vec!["tie rate".to_string(), rate(p.tie_rate)],
            vec![
                "position consistency".to_string(),
                match p.position_consistency {
                    Some(r) => format!(
                        "{}  ({} of {} swap-checked judgments agreed)",
                        rate(r),
                        p.consistent,
                        p.swap_checked
                    ),
                    None => "n/a (no swap-checked judgments)".to_string(),
                },
            ],
            vec![
                "first-position rate".to_string(),
                match p.first_position_rate {
                    Some(r) => format!(
                        "{}  ({} of {} decided calls chose the answer shown first; 0.5 = no bias)",
                        rate(r),
                        p.first_position_wins,
                        p.decided_calls
                    ),
                    None => "n/a (no call preferred either answer)".to_string(),
                },
            ],
        ];
        pairs(out, "  ", &rows);
    }
    if let Some(a) = &j.assertions {
        let _ = writeln!(out, "\n{} (assertions)", j.judge);
        pairs(
            out,
            "  ",
            &[vec![
                "assertions met".to_string(),
                format!(
                    "{}  ({} of {} in {} judgments)",
                    opt_rate(a.share_met),
                    a.met,
                    a.assertions,
                    a.judgments
                ),
            ]],
        );
    }
    if let Some(e) = &j.equivalence {
        let _ = writeln!(out, "\n{} (equivalence)", j.judge);
        pairs(
            out,
            "  ",
            &[vec![
                "equal".to_string(),
                format!("{}  ({} of {})", rate(e.share_equal), e.equal, e.judgments),
            ]],
        );
    }
}
