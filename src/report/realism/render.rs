//! The plain-text report `sparring compare-users SIM REAL --realism` prints.

use std::fmt;

use super::super::render::{cells, pairs, table};
use super::comparison::Section;
use super::Realism;

fn number(x: Option<f64>) -> String {
    x.map_or_else(|| "n/a".to_string(), |x| format!("{x:.3}"))
}

fn signed(x: Option<f64>) -> String {
    x.map_or_else(|| "n/a".to_string(), |x| format!("{x:+.3}"))
}

fn section(out: &mut String, title: &str, s: &Section) {
    out.push_str(&format!(
        "\n{title} ({} simulated, {} real conversations; difference = simulated − real)\n",
        s.sim_conversations, s.real_conversations
    ));
    let mut rows = vec![cells(&[
        "measure",
        "simulated",
        "real",
        "difference",
        "95% CI",
        "gap",
    ])];
    for m in &s.measures {
        rows.push(vec![
            m.measure.to_string(),
            number(m.sim),
            number(m.real),
            signed(m.difference),
            m.ci95.map_or_else(
                || "n/a".to_string(),
                |(lo, hi)| format!("[{lo:+.3}, {hi:+.3}]"),
            ),
            number(m.normalised_gap),
        ]);
    }
    table(out, "  ", &rows);
}

impl fmt::Display for Realism {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::from("Simulated users held against real ones\n");
        let job = |j: &super::ComparedJob| {
            let models = match j.user_models.is_empty() {
                true => "not recorded".to_string(),
                false => j.user_models.join(", "),
            };
            format!("job {} '{}' (user model {models})", j.id, j.name)
        };
        let m = &self.measured;
        pairs(
            &mut out,
            "  ",
            &[
                vec!["simulated".to_string(), job(&self.sim)],
                vec!["real".to_string(), job(&self.real)],
                vec![
                    "matched".to_string(),
                    format!("{} scenario ids in both jobs", m.scenarios_in_both),
                ],
                vec![
                    "intervals".to_string(),
                    format!("bootstrap, {} resamples, seed {}", m.resamples, m.seed),
                ],
            ],
        );
        if let Some(matched) = &m.matched {
            section(&mut out, "Matched by scenario", matched);
        }
        section(&mut out, "As distributions", &m.distributions);
        out.push_str(&format!(
            "\nRealism ({}): mean normalised gap {} (0 = as real, 1 = as far as can be)\n",
            m.summary.basis,
            number(m.summary.mean_gap)
        ));
        for (i, g) in m.summary.largest_gaps.iter().enumerate() {
            out.push_str(&format!(
                "  {}. {} gap {:.3} (difference {:+.3})\n",
                i + 1,
                g.measure,
                g.normalised_gap,
                g.difference
            ));
        }
        write!(f, "{out}")
    }
}
