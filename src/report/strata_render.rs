//! The plain-text strata `sparring stats --by ATTR` prints: the job's line,
//! then one table of cells (reward, difference from the job, pass^k, any
//! user flag), then the cells' termination shares and user flag rates.

use std::fmt::{self, Write as _};

use super::interval::Mean;
use super::render::{cells, interval, opt_rate, rate, table};
use super::strata::{Cell, StrataReport};

/// `0.250 [0.046, 0.699]`, or `n/a`.
fn with_interval(m: Option<&Mean>) -> String {
    m.map_or_else(
        || "n/a".into(),
        |m| format!("{} {}", rate(m.mean), interval(m.ci95, 3)),
    )
}

/// `40%`, of a share.
fn percent(m: Option<&Mean>) -> String {
    m.map_or_else(|| "–".into(), |m| format!("{:.0}%", 100.0 * m.mean))
}

fn signed(x: Option<f64>) -> String {
    x.map_or_else(|| "n/a".into(), |x| format!("{x:+.3}"))
}

impl fmt::Display for StrataReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "Job {} ({}) by {}: {} cell{}, a cell under {} conversation{} is too small",
            self.job.id,
            self.job.name,
            self.by,
            self.cells.len(),
            if self.cells.len() == 1 { "" } else { "s" },
            self.min_cell,
            if self.min_cell == 1 { "" } else { "s" },
        );
        let method = self
            .reward
            .as_ref()
            .map(|m| format!(" ({})", m.ci_method.label()))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "job: {} conversations, {} scored, mean reward {}{method}",
            self.conversations,
            self.scored,
            with_interval(self.reward.as_ref()),
        );
        if let Some(b) = &self.binning {
            let _ = writeln!(out, "binned into at most {} bins: {}", b.bins, b.rule);
        }
        // pass^k columns only for the k the job reaches.
        let ks: Vec<usize> = self
            .pass_hat_k
            .iter()
            .enumerate()
            .filter(|(_, v)| v.value.is_some())
            .map(|(i, _)| i)
            .collect();
        out.push('\n');
        let mut head = cells(&[
            &self.by,
            "convs",
            "scored",
            "mean reward [95% CI]",
            "vs job",
        ]);
        head.extend(ks.iter().map(|&i| format!("pass^{}", self.pass_hat_k[i].k)));
        head.push("any user flag".into());
        head.push(String::new());
        let mut rows = vec![head];
        rows.extend(self.cells.iter().map(|c| {
            let mut row = vec![
                c.value.clone(),
                c.conversations.to_string(),
                c.scored.to_string(),
                with_interval(c.reward.as_ref()),
                signed(c.difference),
            ];
            row.extend(
                ks.iter()
                    .map(|&i| opt_rate(c.pass_hat_k.get(i).and_then(|v| v.value))),
            );
            row.push(with_interval(
                c.simulated_user
                    .any_flag
                    .as_ref()
                    .and_then(|a| a.rate.as_ref()),
            ));
            row.push(if c.too_small {
                "too small".into()
            } else {
                String::new()
            });
            row
        }));
        table(&mut out, "", &rows);
        terminations(&mut out, self);
        let probes: Vec<(&str, &super::strata_probe::CellProbe)> = self
            .cells
            .iter()
            .filter_map(|c| c.probe.as_ref().map(|p| (c.value.as_str(), p)))
            .collect();
        super::strata_probe::render(&mut out, &self.by, &probes);
        flags(&mut out, self);
        f.write_str(&out)
    }
}

/// Each cell's share of each way its conversations ended.
fn terminations(out: &mut String, r: &StrataReport) {
    let mut reasons: Vec<&str> = Vec::new();
    for t in r.cells.iter().flat_map(|c| &c.terminations) {
        if !reasons.contains(&t.reason.as_str()) {
            reasons.push(&t.reason);
        }
    }
    out.push_str("\nTerminations (share of the cell's conversations)\n");
    let mut head = vec![r.by.clone()];
    head.extend(reasons.iter().map(|s| s.to_string()));
    let mut rows = vec![head];
    rows.extend(r.cells.iter().map(|c| {
        let mut row = vec![c.value.clone()];
        row.extend(reasons.iter().map(|reason| {
            percent(
                c.terminations
                    .iter()
                    .find(|t| t.reason == *reason)
                    .and_then(|t| t.share.as_ref()),
            )
        }));
        row
    }));
    table(out, "  ", &rows);
}

/// Each cell's rate of each simulated-user flag, of its checked conversations.
fn flags(out: &mut String, r: &StrataReport) {
    let Some(first) = r.cells.iter().find(|c| c.simulated_user.checked > 0) else {
        out.push_str("\nSimulated-user flags: no conversation has stored checks\n");
        return;
    };
    out.push_str("\nSimulated-user flags (share of the cell's checked conversations)\n");
    let mut head = vec![r.by.clone(), "checked".into()];
    head.extend(first.simulated_user.flags.iter().map(|f| f.flag.clone()));
    let mut rows = vec![head];
    rows.extend(r.cells.iter().map(|c: &Cell| {
        let mut row = vec![c.value.clone(), c.simulated_user.checked.to_string()];
        row.extend(
            c.simulated_user
                .flags
                .iter()
                .map(|f| percent(f.rate.as_ref())),
        );
        row
    }));
    table(out, "  ", &rows);
}
