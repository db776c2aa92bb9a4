//! The leaderboard as text or Markdown: one block (or row) per policy, best
//! mean reward first, then the win-rate matrices.

use crate::evaluation::cells::{mean, pass_hat, rating};
use crate::evaluation::table::{Leaderboard, PolicyRow};

fn cells(p: &PolicyRow, baseline: i64) -> Vec<String> {
    let against = match &p.against_baseline {
        None if p.job_id == baseline => "baseline".into(),
        None => "–".into(),
        Some(a) => {
            let reward = a.reward_difference.map_or("–".into(), |d| {
                format!(
                    "{:+.3} [{:+.3}, {:+.3}] p={:.3}",
                    d.mean, d.low, d.high, d.p_value
                )
            });
            format!(
                "+{}/−{} McNemar p={:.3}; reward {reward}",
                a.only_this_passed, a.only_baseline_passed, a.mcnemar_p
            )
        }
    };
    vec![
        format!("{} (job {})", p.name, p.job_id),
        p.policy.clone(),
        mean(&p.mean_reward),
        mean(&p.pass_rate),
        pass_hat(&p.pass_hat),
        rating(&p.rating),
        rating(&p.judge_rating),
        mean(&p.user_flag_rate),
        p.tokens_per_conversation
            .map_or("–".into(), |t| format!("{t:.0}")),
        p.cost_per_conversation
            .map_or("–".into(), |c| format!("${c:.4}")),
        p.policy_latency_ms
            .map_or("–".into(), |t| format!("{t:.0} ms")),
        p.latency_per_turn_ms
            .map_or("–".into(), |t| format!("{t:.0} ms")),
        if p.on_frontier { "yes" } else { "" }.into(),
        p.terminations
            .iter()
            .map(|(t, s)| format!("{t} {:.0}%", s * 100.0))
            .collect::<Vec<_>>()
            .join(", "),
        against,
    ]
}

const HEADERS: [&str; 15] = [
    "policy",
    "model",
    "mean reward",
    "pass rate",
    "pass^k",
    "rating (BT)",
    "rating (judge)",
    "user flags",
    "tokens/conv",
    "cost/conv",
    "latency/call",
    "latency/turn",
    "frontier",
    "terminations",
    "against the baseline",
];

pub fn render(table: &Leaderboard, markdown: bool) -> String {
    let mut rows: Vec<&PolicyRow> = table.policies.iter().collect();
    rows.sort_by(|a, b| {
        let m = |p: &PolicyRow| p.mean_reward.map_or(f64::NEG_INFINITY, |m| m.mean);
        m(b).total_cmp(&m(a))
    });
    let mut out = format!(
        "{} policies over {} shared items; pass at reward ≥ {}; baseline job {}\n",
        table.policies.len(),
        table.shared_items,
        table.pass_threshold,
        table.baseline
    );
    if markdown {
        out.push('\n');
        out.push_str(&format!("| {} |\n", HEADERS.join(" | ")));
        out.push_str(&format!("|{}\n", "---|".repeat(HEADERS.len())));
        for p in rows {
            out.push_str(&format!("| {} |\n", cells(p, table.baseline).join(" | ")));
        }
    } else {
        for p in rows {
            out.push('\n');
            for (header, cell) in HEADERS.iter().zip(cells(p, table.baseline)) {
                out.push_str(&format!("  {header:<22}{cell}\n"));
            }
        }
    }
    if let Some(why) = &table.ratings_refused {
        out.push_str(&format!("\nno ratings: {why}\n"));
    }
    out.push_str(&format!(
        "\nthe frontier weighs mean reward against {} per conversation\n",
        table.frontier_by
    ));
    out.push_str(&matrix(
        "win rates by reward (row beat column on the shared items; a tie counts half)",
        &table.policies,
        &table.win_rates,
        markdown,
    ));
    if let Some(judged) = &table.judged {
        out.push_str(&matrix(
            &format!(
                "win rates by judge '{}' ({} verdicts, {} inconsistent across the swap)",
                judged.judge, judged.battles, judged.inconsistent
            ),
            &table.policies,
            &judged.win_rates,
            markdown,
        ));
        if let Some(why) = &judged.ratings_refused {
            out.push_str(&format!("\nno judge ratings: {why}\n"));
        }
    }
    out
}

/// A win-rate matrix, rows and columns in the table's policy order.
fn matrix(
    title: &str,
    policies: &[PolicyRow],
    rates: &[Vec<Option<f64>>],
    markdown: bool,
) -> String {
    let cell = |r: &Option<f64>| r.map_or("–".to_string(), |r| format!("{r:.2}"));
    let mut out = format!("\n{title}:\n");
    if markdown {
        out.push('\n');
        let names: Vec<&str> = policies.iter().map(|p| p.name.as_str()).collect();
        out.push_str(&format!("| | {} |\n", names.join(" | ")));
        out.push_str(&format!("|{}\n", "---|".repeat(names.len() + 1)));
        for (p, row) in policies.iter().zip(rates) {
            let cells: Vec<String> = row.iter().map(cell).collect();
            out.push_str(&format!("| {} | {} |\n", p.name, cells.join(" | ")));
        }
    } else {
        for (at, p) in policies.iter().enumerate() {
            out.push_str(&format!("  [{}] {}\n", at + 1, p.name));
        }
        let header: Vec<String> = (1..=policies.len())
            .map(|i| format!("{:>6}", format!("[{i}]")))
            .collect();
        out.push_str(&format!("  {:>5} {}\n", "", header.join("")));
        for (at, row) in rates.iter().enumerate() {
            let cells: Vec<String> = row.iter().map(|r| format!("{:>6}", cell(r))).collect();
            out.push_str(&format!(
                "  {:>5} {}\n",
                format!("[{}]", at + 1),
                cells.join("")
            ));
        }
    }
    out
}
