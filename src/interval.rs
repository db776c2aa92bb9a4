//! 95% confidence intervals that stay inside what the values can be. A
//! normal interval (mean ± 1.96 s/√n) leaves [0, 1] near the ends: a reward
//! of 0.95 over 20 conversations gave [0.883, 1.006]. So a pass rate (every
//! value 0 or 1) gets the Wilson score interval, which is inside [0, 1] by
//! construction and sensible at 0 of n, n of n and n = 1; a mean of values in
//! [0, 1] gets the normal interval clamped to [0, 1]; only values with no
//! known bounds (a judge's rubric scores) keep the plain normal interval.
//! Each interval says which it is. Shared by `report` (stats) and
//! `export::curate` (the dataset card's flag rates).

use serde::Serialize;

/// z for a two-sided 95% normal interval.
const Z95: f64 = 1.959_963_984_540_054;

/// How an interval was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum IntervalMethod {
    /// The Wilson score interval of a share of successes (values 0 or 1).
    Wilson,
    /// Mean ± 1.96 · s / √n, clamped to [0, 1] (values in [0, 1]).
    NormalClamped,
    /// Mean ± 1.96 · s / √n (values with no known bounds).
    Normal,
}

impl IntervalMethod {
    /// As the text report names it.
    pub fn label(self) -> &'static str {
        match self {
            IntervalMethod::Wilson => "Wilson",
            IntervalMethod::NormalClamped => "normal, clamped to [0, 1]",
            IntervalMethod::Normal => "normal",
        }
    }
}

/// A mean with its 95% interval, and how that interval was made.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Mean {
    pub n: usize,
    pub mean: f64,
    /// `None` when the values say nothing about spread: one value, for a
    /// normal interval (Wilson's is defined from n = 1).
    pub ci95: Option<(f64, f64)>,
    pub ci_method: IntervalMethod,
}

impl Mean {
    /// Of values that lie in [0, 1] (rewards, their components): Wilson
    /// when every value is 0 or 1, else normal clamped to [0, 1]. Values
    /// outside [0, 1] get the plain normal interval. `None` for no values.
    pub fn of_unit(values: &[f64]) -> Option<Mean> {
        if values.iter().all(|v| *v == 0.0 || *v == 1.0) {
            let successes = values.iter().filter(|v| **v == 1.0).count() as u64;
            return Mean::of_share(successes, values.len() as u64);
        }
        if values.iter().all(|v| (0.0..=1.0).contains(v)) {
            let mut mean = Mean::of_unbounded(values)?;
            mean.ci95 = mean.ci95.map(|(lo, hi)| (lo.max(0.0), hi.min(1.0)));
            mean.ci_method = IntervalMethod::NormalClamped;
            return Some(mean);
        }
        Mean::of_unbounded(values)
    }

    /// Of a share: `successes` of `n`, with the Wilson interval. `None` for n = 0.
    pub fn of_share(successes: u64, n: u64) -> Option<Mean> {
        let ci95 = wilson(successes, n)?;
        Some(Mean {
            n: usize::try_from(n).unwrap_or(usize::MAX),
            mean: successes as f64 / n as f64,
            ci95: Some(ci95),
            ci_method: IntervalMethod::Wilson,
        })
    }

    /// Of values with no known bounds: the normal interval. `None` for no values.
    pub fn of_unbounded(values: &[f64]) -> Option<Mean> {
        let n = values.len();
        if n == 0 {
            return None;
        }
        let mean = values.iter().sum::<f64>() / n as f64;
        let ci95 = (n > 1).then(|| {
            let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
            let half = Z95 * variance.sqrt() / (n as f64).sqrt();
            (mean - half, mean + half)
        });
        Some(Mean {
            n,
            mean,
            ci95,
            ci_method: IntervalMethod::Normal,
        })
    }
}

/// The 95% Wilson score interval of `successes` out of `n`; `None` for n = 0.
/// Always inside [0, 1], and never of zero width at 0 of n or n of n.
pub fn wilson(successes: u64, n: u64) -> Option<(f64, f64)> {
    if n == 0 {
        return None;
    }
    let n = n as f64;
    let p = successes.min(n as u64) as f64 / n;
    let z2 = Z95 * Z95;
    let denominator = 1.0 + z2 / n;
    let center = (p + z2 / (2.0 * n)) / denominator;
    let half = Z95 / denominator * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    Some(((center - half).max(0.0), (center + half).min(1.0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 5e-5
    }

    fn assert_interval(got: Option<(f64, f64)>, want: (f64, f64)) {
        let (lo, hi) = got.unwrap();
        assert!(
            close(lo, want.0) && close(hi, want.1),
            "[{lo}, {hi}] vs {want:?}"
        );
    }

    #[test]
    fn wilson_matches_published_values() {
        // 10 of 10: [0.7225, 1]; 0 of 10: [0, 0.2775]; 5 of 10: [0.2366, 0.7634].
        assert_interval(wilson(10, 10), (0.722_48, 1.0));
        assert_interval(wilson(0, 10), (0.0, 0.277_52));
        assert_interval(wilson(5, 10), (0.236_59, 0.763_41));
    }

    #[test]
    fn a_pass_rate_where_all_pass_or_none_pass_keeps_a_width_inside_0_1() {
        let all = Mean::of_unit(&[1.0; 20]).unwrap();
        assert_eq!(all.ci_method, IntervalMethod::Wilson);
        assert_eq!(all.mean, 1.0);
        let (lo, hi) = all.ci95.unwrap();
        assert!(lo > 0.8 && lo < 1.0 && hi == 1.0, "[{lo}, {hi}]");
        let none = Mean::of_unit(&[0.0; 20]).unwrap();
        let (lo, hi) = none.ci95.unwrap();
        assert!(lo == 0.0 && hi > 0.0 && hi < 0.2, "[{lo}, {hi}]");
    }

    #[test]
    fn one_conversation_has_a_wilson_interval_and_no_normal_one() {
        // 1 of 1: [0.2065, 1]; 0 of 1: [0, 0.7935].
        let one = Mean::of_unit(&[1.0]).unwrap();
        assert_eq!(one.n, 1);
        assert_interval(one.ci95, (0.206_55, 1.0));
        assert_interval(Mean::of_unit(&[0.0]).unwrap().ci95, (0.0, 0.793_45));
        let half = Mean::of_unit(&[0.5]).unwrap();
        assert_eq!(
            half.ci95, None,
            "one fractional value says nothing of spread"
        );
        assert_eq!(Mean::of_unit(&[]), None);
        assert_eq!(wilson(0, 0), None);
    }

    #[test]
    fn means_of_values_in_0_1_are_clamped_where_the_normal_interval_leaves_it() {
        // The mean reward 0.125 seen with [-0.120, 0.370]: 7 × 0 and 1 × 1.0
        // would be Wilson; with a fractional value it is a clamped normal.
        let values = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.5, 0.5];
        let m = Mean::of_unit(&values).unwrap();
        assert_eq!(m.ci_method, IntervalMethod::NormalClamped);
        let (lo, hi) = m.ci95.unwrap();
        assert_eq!(lo, 0.0);
        assert!(hi > m.mean && hi < 1.0, "{hi}");
        let near_one = [1.0, 1.0, 1.0, 0.9, 1.0, 1.0];
        let (_, hi) = Mean::of_unit(&near_one).unwrap().ci95.unwrap();
        assert_eq!(hi, 1.0);
    }

    #[test]
    fn one_rubric_score_has_no_interval_and_identical_ones_a_point() {
        let one = Mean::of_unbounded(&[7.0]).unwrap();
        assert_eq!((one.n, one.mean, one.ci95), (1, 7.0, None));
        assert_eq!(Mean::of_unbounded(&[]), None);
        assert_eq!(
            Mean::of_unbounded(&[5.0, 5.0]).unwrap().ci95,
            Some((5.0, 5.0))
        );
    }

    #[test]
    fn rubric_scores_keep_the_plain_normal_interval() {
        // 4, 6, 8: mean 6, s = 2, half-width 1.959964 · 2 / √3 = 2.263172.
        let m = Mean::of_unit(&[4.0, 6.0, 8.0]).unwrap();
        assert_eq!(m.ci_method, IntervalMethod::Normal);
        assert_interval(m.ci95, (3.736_828, 8.263_172));
    }
}
