//! A leaderboard's figures as the text of a table cell, the same in the
//! CLI's table and the UI's page: a mean with its interval, a rating with
//! its interval, pass^k; "–" for a figure there is none of (never 0).

use super::bradley_terry::Rating;
use crate::interval::Mean;

/// `0.870 [0.756, 0.936]`, or the mean alone when it has no interval.
pub fn mean(m: &Option<Mean>) -> String {
    match m {
        Some(Mean {
            mean,
            ci95: Some((lo, hi)),
            ..
        }) => format!("{mean:.3} [{lo:.3}, {hi:.3}]"),
        Some(m) => format!("{:.3}", m.mean),
        None => "–".into(),
    }
}

/// `+0.441 [+0.297, +0.604]`.
pub fn rating(r: &Option<Rating>) -> String {
    r.map_or("–".into(), |r| {
        format!("{:+.3} [{:+.3}, {:+.3}]", r.rating, r.low, r.high)
    })
}

/// `^1 0.870 ^2 0.741`.
pub fn pass_hat(pass_hat: &[(u64, f64)]) -> String {
    pass_hat
        .iter()
        .map(|(k, v)| format!("^{k} {v:.3}"))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_figure_is_a_dash_never_a_zero() {
        assert_eq!(mean(&None), "–");
        assert_eq!(rating(&None), "–");
        assert_eq!(pass_hat(&[]), "");
        let r = Rating {
            rating: 0.5,
            low: -0.25,
            high: 1.0,
        };
        assert_eq!(rating(&Some(r)), "+0.500 [-0.250, +1.000]");
        assert_eq!(pass_hat(&[(1, 0.5), (2, 0.25)]), "^1 0.500 ^2 0.250");
    }
}
