//! Gaps of different units made comparable, and the largest named. A gap is
//! normalised into [0, 1]: a share's or a divergence's as it is (their range
//! is 1), a rank correlation's over 2 (its range), a mean count's over the
//! larger of the two values (a relative gap: 4 turns against 8 is 0.5).

use super::measures::Unit;

/// The normalised gap of a measure whose values are `sim` and `real` and
/// whose difference is `difference`.
pub fn normalised(unit: Unit, sim: Option<f64>, real: Option<f64>, difference: f64) -> f64 {
    let gap = difference.abs();
    let scaled = match unit {
        Unit::Share | Unit::Divergence => gap,
        Unit::Correlation => gap / 2.0,
        Unit::Count => {
            let larger = sim.unwrap_or(0.0).abs().max(real.unwrap_or(0.0).abs());
            if larger > 0.0 {
                gap / larger
            } else {
                0.0
            }
        }
    };
    scaled.clamp(0.0, 1.0)
}

/// The indices of the `n` largest gaps, largest first (ties by position).
pub fn largest(gaps: &[Option<f64>], n: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..gaps.len()).filter(|i| gaps[*i].is_some()).collect();
    order.sort_by(|a, b| {
        gaps[*b]
            .unwrap_or(0.0)
            .total_cmp(&gaps[*a].unwrap_or(0.0))
            .then(a.cmp(b))
    });
    order.truncate(n);
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_unit_lands_in_zero_to_one() {
        assert_eq!(normalised(Unit::Count, Some(4.0), Some(8.0), -4.0), 0.5);
        assert_eq!(normalised(Unit::Count, Some(0.0), Some(0.0), 0.0), 0.0);
        assert_eq!(normalised(Unit::Share, Some(0.1), Some(0.4), -0.3), 0.3);
        assert_eq!(
            normalised(Unit::Correlation, Some(-1.0), Some(1.0), -2.0),
            1.0
        );
        assert_eq!(normalised(Unit::Divergence, None, None, 0.25), 0.25);
    }

    #[test]
    fn the_largest_come_first_and_unknowns_are_left_out() {
        let gaps = [Some(0.1), None, Some(0.7), Some(0.3), Some(0.7)];
        assert_eq!(largest(&gaps, 3), vec![2, 4, 3]);
        assert_eq!(largest(&[None, Some(0.2)], 3), vec![1]);
    }
}
