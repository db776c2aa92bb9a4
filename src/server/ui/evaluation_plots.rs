//! The evaluation page's pictures, placed on the server: each policy's mean
//! reward with its interval, the reward–cost (or –tokens) frontier, and win
//! rates as a heat map. This file computes coordinates and labels only;
//! `evaluation.html` writes the SVG. No script.

use serde::Serialize;

use crate::evaluation::table::{Leaderboard, PolicyRow};

use super::plots::Tick;

const WIDTH: u32 = 560;
const LABEL_X: u32 = 190;
const PLOT_W: u32 = 300;
const ROW: u32 = 26;
const AXIS: u32 = 22;
/// Characters of a policy's label before it is cut (the whole is its title).
const LABEL_CHARS: usize = 26;

fn short(name: &str) -> String {
    if name.chars().count() <= LABEL_CHARS {
        return name.to_string();
    }
    let cut: String = name.chars().take(LABEL_CHARS - 1).collect();
    format!("{cut}…")
}

/// Where `value` in [lo, hi] falls on an axis `length` long from `start`.
fn place(value: f64, lo: f64, hi: f64, start: u32, length: u32) -> u32 {
    let share = if hi > lo {
        (value - lo) / (hi - lo)
    } else {
        0.5
    };
    start + (share.clamp(0.0, 1.0) * f64::from(length)).round() as u32
}

#[derive(Debug, Serialize)]
pub struct IntervalPlot {
    pub width: u32,
    pub height: u32,
    pub x0: u32,
    pub ticks: Vec<Tick>,
    pub dots: Vec<IntervalDot>,
}

#[derive(Debug, Serialize)]
pub struct IntervalDot {
    pub label: String,
    pub title: String,
    pub job_id: i64,
    pub y: u32,
    pub text_y: u32,
    pub x: u32,
    pub lo_x: u32,
    pub hi_x: u32,
    pub value_x: u32,
    pub value: String,
}

/// Each policy's mean reward (dot) with its 95% interval (line), on [0, 1]
/// or the rewards' own range when they leave it.
pub fn reward_plot(policies: &[&PolicyRow]) -> IntervalPlot {
    let means: Vec<(f64, f64, f64)> = policies
        .iter()
        .map(|p| match p.mean_reward {
            Some(m) => {
                let (lo, hi) = m.ci95.unwrap_or((m.mean, m.mean));
                (m.mean, lo, hi)
            }
            None => (f64::NAN, f64::NAN, f64::NAN),
        })
        .collect();
    let finite = || {
        means
            .iter()
            .flat_map(|(m, l, h)| [*m, *l, *h])
            .filter(|v| v.is_finite())
    };
    let lo = finite().fold(0.0f64, f64::min);
    let hi = finite().fold(1.0f64, f64::max);
    let ticks = (0..=4)
        .map(|i| {
            let v = lo + (hi - lo) * f64::from(i) / 4.0;
            Tick {
                x: place(v, lo, hi, LABEL_X, PLOT_W),
                label: format!("{v:.2}"),
            }
        })
        .collect();
    let dots = policies
        .iter()
        .zip(&means)
        .enumerate()
        .filter(|(_, (_, (m, _, _)))| m.is_finite())
        .map(|(at, (p, (m, l, h)))| {
            let y = 12 + at as u32 * ROW;
            let hi_x = place(*h, lo, hi, LABEL_X, PLOT_W);
            IntervalDot {
                label: short(&p.name),
                title: format!("{}: {m:.3} [{l:.3}, {h:.3}]", p.name),
                job_id: p.job_id,
                y,
                text_y: y + 4,
                x: place(*m, lo, hi, LABEL_X, PLOT_W),
                lo_x: place(*l, lo, hi, LABEL_X, PLOT_W),
                hi_x,
                value_x: hi_x + 6,
                value: format!("{m:.3}"),
            }
        })
        .collect();
    IntervalPlot {
        width: WIDTH,
        height: 12 + policies.len() as u32 * ROW + AXIS,
        x0: LABEL_X,
        ticks,
        dots,
    }
}

#[derive(Debug, Serialize)]
pub struct FrontierPlot {
    pub width: u32,
    pub height: u32,
    /// What the x axis is: `cost per conversation (USD)` or `tokens per
    /// conversation`.
    pub x_label: String,
    pub x_ticks: Vec<Tick>,
    pub y_ticks: Vec<YTick>,
    pub points: Vec<Point>,
    /// The frontier's points joined, left to right, as an SVG `points` list.
    pub line: String,
    pub left: u32,
    pub bottom: u32,
}

#[derive(Debug, Serialize)]
pub struct YTick {
    pub y: u32,
    pub label: String,
}

#[derive(Debug, Serialize)]
pub struct Point {
    pub x: u32,
    pub y: u32,
    /// Where the label starts and which way it runs: right of a point in
    /// the left half, left of one in the right half.
    pub label_x: u32,
    pub anchor: &'static str,
    pub label: String,
    pub title: String,
    pub job_id: i64,
    pub on_frontier: bool,
}

const F_LEFT: u32 = 50;
const F_WIDTH: u32 = 420;
const F_TOP: u32 = 12;
const F_HEIGHT: u32 = 220;

/// Mean reward (up) against what a conversation spends (right); the
/// Pareto-optimal policies marked and joined.
pub fn frontier_plot(table: &Leaderboard, policies: &[&PolicyRow]) -> FrontierPlot {
    let by_cost = table.frontier_by == "cost";
    let spent = |p: &PolicyRow| {
        if by_cost {
            p.cost_per_conversation
        } else {
            p.tokens_per_conversation
        }
    };
    let placed: Vec<(&PolicyRow, f64, f64)> = policies
        .iter()
        .filter_map(|p| Some((*p, spent(p)?, p.mean_reward?.mean)))
        .collect();
    let x_hi = placed.iter().map(|(_, x, _)| *x).fold(0.0f64, f64::max) * 1.1;
    let x_hi = if x_hi > 0.0 { x_hi } else { 1.0 };
    let y_lo = placed.iter().map(|(_, _, y)| *y).fold(0.0f64, f64::min);
    let y_hi = placed.iter().map(|(_, _, y)| *y).fold(1.0f64, f64::max);
    let bottom = F_TOP + F_HEIGHT;
    // Room above the best point for its label.
    let y_hi = y_hi + (y_hi - y_lo) * 0.08;
    let y_of = |v: f64| bottom - place(v, y_lo, y_hi, 0, F_HEIGHT);
    let x_label = |v: f64| {
        if by_cost {
            format!("${v:.4}")
        } else {
            format!("{v:.0}")
        }
    };
    let mut points: Vec<Point> = placed
        .iter()
        .map(|(p, x, y)| {
            let px = place(*x, 0.0, x_hi, F_LEFT, F_WIDTH);
            let right_half = px > F_LEFT + F_WIDTH / 2;
            Point {
                x: px,
                y: y_of(*y),
                label_x: if right_half { px - 8 } else { px + 8 },
                anchor: if right_half { "end" } else { "start" },
                label: short(&p.name),
                title: format!(
                    "{}: reward {y:.3}, {} per conversation",
                    p.name,
                    x_label(*x)
                ),
                job_id: p.job_id,
                on_frontier: p.on_frontier,
            }
        })
        .collect();
    points.sort_by_key(|p| p.x);
    let line = points
        .iter()
        .filter(|p| p.on_frontier)
        .map(|p| format!("{},{}", p.x, p.y))
        .collect::<Vec<_>>()
        .join(" ");
    FrontierPlot {
        width: WIDTH,
        height: bottom + 36,
        x_label: if by_cost {
            "cost per conversation (USD)".into()
        } else {
            "tokens per conversation".into()
        },
        x_ticks: (0..=4)
            .map(|i| {
                let v = x_hi * f64::from(i) / 4.0;
                Tick {
                    x: place(v, 0.0, x_hi, F_LEFT, F_WIDTH),
                    label: x_label(v),
                }
            })
            .collect(),
        y_ticks: (0..=4)
            .map(|i| {
                let v = y_lo + (y_hi - y_lo) * f64::from(i) / 4.0;
                YTick {
                    y: y_of(v),
                    label: format!("{v:.2}"),
                }
            })
            .collect(),
        points,
        line,
        left: F_LEFT,
        bottom,
    }
}

#[derive(Debug, Serialize)]
pub struct HeatMap {
    pub title: String,
    pub width: u32,
    pub height: u32,
    pub labels: Vec<HeatLabel>,
    pub cells: Vec<HeatCell>,
    pub cell: u32,
}

#[derive(Debug, Serialize)]
pub struct HeatLabel {
    pub text: String,
    pub title: String,
    pub x: u32,
    pub y: u32,
}

#[derive(Debug, Serialize)]
pub struct HeatCell {
    pub x: u32,
    pub y: u32,
    pub text_x: u32,
    pub text_y: u32,
    /// `hsl(…)`: blue where the row lost, red where it won; grey where the
    /// two were not compared.
    pub fill: String,
    pub value: String,
    pub title: String,
    /// A dark cell, whose value is written in white.
    pub dark: bool,
}

const H_LEFT: u32 = 200;
const H_TOP: u32 = 26;
const H_CELL: u32 = 44;

/// Win rates (row beat column) as a heat map, rows and columns in the
/// table's policy order; columns are numbered, their names in the rows.
pub fn heat_map(title: &str, policies: &[PolicyRow], rates: &[Vec<Option<f64>>]) -> HeatMap {
    let n = policies.len() as u32;
    let mut labels = Vec::new();
    let mut cells = Vec::new();
    for (i, p) in policies.iter().enumerate() {
        let row = i as u32;
        labels.push(HeatLabel {
            text: format!("[{}] {}", i + 1, short(&p.name)),
            title: p.name.clone(),
            x: H_LEFT - 6,
            y: H_TOP + row * H_CELL + H_CELL / 2 + 4,
        });
        labels.push(HeatLabel {
            text: format!("[{}]", i + 1),
            title: p.name.clone(),
            x: H_LEFT + row * H_CELL + H_CELL / 2,
            y: H_TOP - 8,
        });
        for (j, rate) in rates.get(i).into_iter().flatten().enumerate() {
            let j32 = j as u32;
            let dark = rate.is_some_and(|r| (r - 0.5).abs() > 0.3);
            let (fill, value) = match rate {
                Some(r) => {
                    // 0.5 white; towards 1 red, towards 0 blue.
                    let hue = if *r >= 0.5 { 0 } else { 220 };
                    let light = 100.0 - (r - 0.5).abs() * 2.0 * 55.0;
                    (format!("hsl({hue}, 70%, {light:.0}%)"), format!("{r:.2}"))
                }
                None => ("#eee".to_string(), "–".to_string()),
            };
            cells.push(HeatCell {
                x: H_LEFT + j32 * H_CELL,
                y: H_TOP + row * H_CELL,
                text_x: H_LEFT + j32 * H_CELL + H_CELL / 2,
                text_y: H_TOP + row * H_CELL + H_CELL / 2 + 4,
                fill,
                title: format!(
                    "{} against {}: {value}",
                    p.name,
                    policies.get(j).map_or("", |q| q.name.as_str())
                ),
                value,
                dark,
            });
        }
    }
    HeatMap {
        title: title.to_string(),
        width: H_LEFT + n * H_CELL + 10,
        height: H_TOP + n * H_CELL + 10,
        labels,
        cells,
        cell: H_CELL,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_is_placed_on_its_axis_and_kept_inside_it() {
        assert_eq!(place(0.5, 0.0, 1.0, 10, 100), 60);
        assert_eq!(place(2.0, 0.0, 1.0, 10, 100), 110);
        assert_eq!(place(-1.0, 0.0, 1.0, 10, 100), 10);
        assert_eq!(
            place(3.0, 3.0, 3.0, 10, 100),
            60,
            "an empty range: the middle"
        );
    }

    #[test]
    fn a_long_label_is_cut_and_a_short_one_kept() {
        assert_eq!(short("as-shipped"), "as-shipped");
        let long = "x".repeat(40);
        assert_eq!(short(&long).chars().count(), LABEL_CHARS);
        assert!(short(&long).ends_with('…'));
    }
}
