//! The job page's plots, drawn on the server as SVG: this file computes each
//! bar's place and label; `macros.html` writes the SVG elements. No script.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::judge::aggregate::{pass_hat_k, Trials};

use super::browse::Row;
use super::display;

/// A horizontal bar chart in a `WIDTH`-wide view box that scales to the page.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Chart {
    pub title: String,
    /// What the bars measure, said under the title.
    pub note: String,
    pub width: u32,
    pub height: u32,
    /// Where bars start (labels end there).
    pub bar_x: u32,
    pub bars: Vec<Bar>,
    /// Vertical grid lines at 0, ¼, ½, ¾ and the maximum.
    pub ticks: Vec<Tick>,
    /// Bars left out (the chart shows the first `MAX_BARS`).
    pub more: usize,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Bar {
    pub label: String,
    /// The whole label and value, shown on hover.
    pub title: String,
    pub value: String,
    pub y: u32,
    pub text_y: u32,
    pub width: u32,
    pub value_x: u32,
    /// `good`, `bad` or `plain`: the bar's colour.
    pub tone: &'static str,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Tick {
    pub x: u32,
    pub label: String,
}

pub const WIDTH: u32 = 480;
const BAR_X: u32 = 150;
const BAR_SPACE: u32 = 220;
const ROW: u32 = 24;
const TOP: u32 = 4;
/// Room for the tick labels under the bars.
const AXIS: u32 = 20;
/// Characters of a label before it is cut (the whole one is its title).
const LABEL_CHARS: usize = 20;
pub const MAX_BARS: usize = 40;
/// A trial succeeds with full reward, give or take rounding (the rule of
/// `sparring stats`).
pub const SUCCESS_REWARD: f64 = 1.0 - 1e-9;

/// One bar to draw: its label, value, and how to say and colour it.
pub struct Datum {
    pub label: String,
    pub value: f64,
    pub shown: String,
    pub tone: &'static str,
}

/// Bars of `data` scaled to `max` (at least the largest value); the ticks
/// of a chart of counts (`max` 0) are whole numbers.
pub fn chart(title: &str, note: &str, data: Vec<Datum>, max: f64) -> Chart {
    let counts = max == 0.0;
    let max = data
        .iter()
        .map(|d| d.value)
        .fold(max, f64::max)
        .max(f64::MIN_POSITIVE);
    let more = data.len().saturating_sub(MAX_BARS);
    let bars: Vec<Bar> = data
        .into_iter()
        .take(MAX_BARS)
        .enumerate()
        .map(|(i, d)| {
            let y = TOP + i as u32 * ROW;
            let width = ((d.value.max(0.0) / max) * f64::from(BAR_SPACE)).round() as u32;
            Bar {
                label: display::one_line(&d.label, LABEL_CHARS),
                title: format!("{}: {}", d.label, d.shown),
                value: d.shown,
                y,
                text_y: y + 13,
                width,
                value_x: BAR_X + width + 4,
                tone: d.tone,
            }
        })
        .collect();
    let height = TOP + bars.len() as u32 * ROW + AXIS;
    let mut ticks: Vec<Tick> = Vec::new();
    for f in [0.0, 0.25, 0.5, 0.75, 1.0] {
        let value = if counts { (f * max).round() } else { f * max };
        let x = BAR_X + (value / max * f64::from(BAR_SPACE)).round() as u32;
        if ticks.last().is_none_or(|t| t.x < x) {
            ticks.push(Tick {
                x,
                label: display::score(value),
            });
        }
    }
    Chart {
        title: title.into(),
        note: note.into(),
        width: WIDTH,
        height,
        bar_x: BAR_X,
        bars,
        ticks,
        more,
    }
}

fn reward_tone(r: f64) -> &'static str {
    if r >= SUCCESS_REWARD {
        "good"
    } else if r <= 0.0 {
        "bad"
    } else {
        "plain"
    }
}

/// The mean reward of each scenario's scored conversations.
pub fn reward_by_scenario(rows: &[Row]) -> Chart {
    let mut by: BTreeMap<&str, (f64, usize, usize)> = BTreeMap::new();
    for r in rows {
        let entry = by.entry(&r.scenario).or_default();
        entry.2 += 1;
        if let Some(reward) = r.reward {
            entry.0 += reward;
            entry.1 += 1;
        }
    }
    let data = by
        .into_iter()
        .filter(|(_, (_, scored, _))| *scored > 0)
        .map(|(scenario, (sum, scored, all))| {
            let mean = sum / scored as f64;
            Datum {
                label: scenario.to_string(),
                value: mean,
                shown: format!(
                    "{} (n={scored}{})",
                    display::score(mean),
                    unscored(all - scored)
                ),
                tone: reward_tone(mean),
            }
        })
        .collect();
    chart(
        "Reward by scenario",
        "mean reward of the scored conversations; n = how many",
        data,
        1.0,
    )
}

fn unscored(n: usize) -> String {
    if n == 0 {
        String::new()
    } else {
        format!(", {n} unscored")
    }
}

/// How many conversations ended each way, most first.
pub fn terminations(rows: &[Row]) -> Chart {
    let mut by: BTreeMap<&str, usize> = BTreeMap::new();
    for r in rows {
        *by.entry(&r.termination).or_default() += 1;
    }
    let mut counts: Vec<(&str, usize)> = by.into_iter().collect();
    counts.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
    let total = rows.len().max(1);
    let data = counts
        .into_iter()
        .map(|(termination, n)| Datum {
            label: termination.to_string(),
            value: n as f64,
            shown: format!("{n} ({:.0}%)", 100.0 * n as f64 / total as f64),
            tone: match termination {
                "user_stop" => "good",
                "policy_error" | "user_error" | "env_error" | "timeout" => "bad",
                _ => "plain",
            },
        })
        .collect();
    chart("Terminations", "conversations by how they ended", data, 0.0)
}

/// For each judge that gave scores, how many conversations got each score.
pub fn judge_scores(rows: &[Row], judges: &[String]) -> Vec<Chart> {
    judges
        .iter()
        .filter_map(|judge| {
            let mut counts: BTreeMap<String, (f64, usize)> = BTreeMap::new();
            for cell in rows.iter().filter_map(|r| r.judges.get(judge)) {
                let entry = counts
                    .entry(cell.label.clone())
                    .or_insert((cell.value.unwrap_or(f64::NAN), 0));
                entry.1 += 1;
            }
            if counts.is_empty() {
                return None;
            }
            let mut by_value: Vec<(String, f64, usize)> =
                counts.into_iter().map(|(l, (v, n))| (l, v, n)).collect();
            by_value.sort_by(|a, b| a.1.total_cmp(&b.1));
            let data = by_value
                .into_iter()
                .map(|(label, _, n)| Datum {
                    label: format!("{judge}: {label}"),
                    value: n as f64,
                    shown: n.to_string(),
                    tone: "plain",
                })
                .collect();
            Some(chart(
                &format!("Judge {judge}"),
                "conversations by the judge's verdict (its newest ok judgment)",
                data,
                0.0,
            ))
        })
        .collect()
}

/// Largest k shown in the pass^k chart.
pub const MAX_K: u64 = 8;

/// pass^k for k = 1 up to the most trials any scenario has (at most
/// [`MAX_K`]): the chance that k trials of a scenario all succeed.
pub fn pass_hat(rows: &[Row]) -> Option<Chart> {
    let mut by: BTreeMap<&str, Trials> = BTreeMap::new();
    for r in rows {
        let Some(reward) = r.reward else { continue };
        let trials = by
            .entry(&r.scenario)
            .or_insert(Trials { n: 0, successes: 0 });
        trials.n += 1;
        trials.successes += u64::from(reward >= SUCCESS_REWARD);
    }
    let scenarios: Vec<Trials> = by.into_values().collect();
    let most = scenarios.iter().map(|t| t.n).max()?.min(MAX_K);
    let data = (1..=most)
        .filter_map(|k| {
            let value = pass_hat_k(&scenarios, k)?;
            let over = scenarios.iter().filter(|t| t.n >= k).count();
            Some(Datum {
                label: format!("k = {k}"),
                value,
                shown: format!("{} ({over} scenarios)", display::score(value)),
                tone: reward_tone(value),
            })
        })
        .collect();
    Some(chart(
        "pass^k",
        "chance that k trials of a scenario all succeed (reward 1), averaged over the scenarios with at least k",
        data,
        1.0,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: i64, scenario: &str, reward: Option<f64>, termination: &str) -> Row {
        Row {
            id,
            scenario: scenario.into(),
            persona: "p".into(),
            sample: 0,
            termination: termination.into(),
            reward,
            messages: 3,
            components: BTreeMap::new(),
            judges: BTreeMap::new(),
        }
    }

    #[test]
    fn bars_are_scaled_to_the_maximum_and_labelled_with_their_values() {
        let rows = [
            row(1, "refund", Some(1.0), "user_stop"),
            row(2, "refund", Some(0.0), "max_turns"),
            row(3, "exchange", Some(1.0), "user_stop"),
            row(4, "exchange", None, "user_error"),
        ];
        let by_scenario = reward_by_scenario(&rows);
        let bars: Vec<(&str, &str, u32)> = by_scenario
            .bars
            .iter()
            .map(|b| (b.label.as_str(), b.value.as_str(), b.width))
            .collect();
        assert_eq!(
            bars,
            [
                ("exchange", "1 (n=1, 1 unscored)", BAR_SPACE),
                ("refund", "0.5 (n=2)", BAR_SPACE / 2)
            ]
        );
        let ends = terminations(&rows);
        assert_eq!(ends.bars[0].label, "user_stop");
        assert_eq!(ends.bars[0].value, "2 (50%)");
        assert_eq!(ends.bars[0].width, BAR_SPACE);
        assert_eq!(ends.height, TOP + 3 * ROW + AXIS);
        // pass^1 = (1/2 + 1/1) / 2; pass^2 only over "refund": 0.
        let pass = pass_hat(&rows).unwrap();
        let values: Vec<&str> = pass.bars.iter().map(|b| b.value.as_str()).collect();
        assert_eq!(values, ["0.75 (2 scenarios)", "0 (1 scenarios)"]);
    }

    #[test]
    fn a_chart_of_many_scenarios_shows_the_first_forty_and_counts_the_rest() {
        let rows: Vec<Row> = (0..45)
            .map(|i| row(i, &format!("scenario-{i:02}"), Some(1.0), "user_stop"))
            .collect();
        let chart = reward_by_scenario(&rows);
        assert_eq!((chart.bars.len(), chart.more), (MAX_BARS, 5));
    }
}
