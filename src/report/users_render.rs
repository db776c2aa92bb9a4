//! The "Simulated user" section of the text report.

use std::fmt::Write as _;

use super::interval::Mean;
use super::render::{cells, interval, pairs, rate, table};
use super::users::{FlagRate, GroupRate, UserReport};

/// `0.125 [0.035, 0.360]`, or `n/a`.
fn share(m: Option<&Mean>) -> String {
    match m {
        Some(m) => format!("{} {}", rate(m.mean), interval(m.ci95, 3)),
        None => "n/a".to_string(),
    }
}

fn flag_row(f: &FlagRate) -> Vec<String> {
    vec![
        f.flag.clone(),
        f.flagged.to_string(),
        f.known.to_string(),
        f.unknown.to_string(),
        share(f.rate.as_ref()),
    ]
}

fn group_rows(title: &str, groups: &[GroupRate]) -> Vec<Vec<String>> {
    let mut rows = vec![cells(&[
        title,
        "checked",
        "flagged",
        "rate [95% CI]",
        "flags",
    ])];
    for g in groups {
        let flags: Vec<String> = g.flags.iter().map(|(f, n)| format!("{f} {n}")).collect();
        rows.push(vec![
            g.group.clone(),
            g.checked.to_string(),
            g.flagged.to_string(),
            share(g.rate.as_ref()),
            flags.join(", "),
        ]);
    }
    rows
}

pub(super) fn section(out: &mut String, r: &UserReport) {
    out.push_str("\nSimulated user (deterministic checks)\n");
    if r.checked == 0 {
        let _ = writeln!(
            out,
            "  none checked: {} conversation{} stored before the checks existed",
            r.unchecked,
            if r.unchecked == 1 { " was" } else { "s were" }
        );
        return;
    }
    let mut head = vec![vec!["checked".to_string(), r.checked.to_string()]];
    if r.unchecked > 0 {
        head.push(vec![
            "unchecked".to_string(),
            format!(
                "{} (stored before the checks existed; left out)",
                r.unchecked
            ),
        ]);
    }
    if r.older_checks > 0 {
        head.push(vec![
            "older checks".to_string(),
            format!(
                "{} (checked by an older version of the checks, whose flags they keep; \
                 sparring recheck --job ID checks them again)",
                r.older_checks
            ),
        ]);
    }
    pairs(out, "  ", &head);
    let mut rows = vec![cells(&[
        "flag",
        "flagged",
        "checked",
        "unknown",
        "rate [95% CI, Wilson]",
    ])];
    rows.extend(r.flags.iter().map(flag_row));
    rows.extend(r.any_flag.iter().map(flag_row));
    table(out, "  ", &rows);

    out.push_str("\n  by persona\n");
    table(out, "    ", &group_rows("persona", &r.by_persona));
    out.push_str("\n  by scenario\n");
    table(out, "    ", &group_rows("scenario", &r.by_scenario));

    for a in &r.judge_agreement {
        let _ = writeln!(
            out,
            "\n  judge '{}' vs the checks ({} conversations both looked at)",
            a.judge, a.conversations
        );
        let rows = vec![
            vec!["both flag".to_string(), a.both_flag.to_string()],
            vec!["judge only".to_string(), a.judge_only.to_string()],
            vec!["checks only".to_string(), a.checks_only.to_string()],
            vec!["neither".to_string(), a.neither.to_string()],
            vec!["agreement".to_string(), share(a.agreement.as_ref())],
            vec![
                "Cohen's kappa".to_string(),
                a.kappa.map_or_else(
                    || "n/a (one answer throughout)".to_string(),
                    |k| format!("{k:.3}"),
                ),
            ],
        ];
        pairs(out, "    ", &rows);
    }
}
