//! A stratum's value and the cell it falls in: text values each their own
//! cell, numbers binned, the missing in a cell of their own.
//!
//! **Binning.** A numeric attribute (every value given is a number) with
//! more distinct values than `bins` is cut into at most `bins` bins of about
//! equal counts of conversations: a distinct value whose first place in the
//! sorted values is `i` (of `n`) goes to bin ⌊i · bins / n⌋, so equal values
//! always share a bin, a bin may hold more than n / bins, and there may be
//! fewer than `bins` bins. Each bin is labelled with the smallest and largest value it holds (`18–34`). A
//! numeric attribute with at most `bins` distinct values keeps a cell per value.

use serde_json::Value;

/// The label of the cell of conversations whose persona has no such
/// attribute (or a null), or that drew no such knob.
pub const MISSING: &str = "(missing)";

/// A conversation's value of the attribute.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Stratum {
    Missing,
    Number(f64),
    Text(String),
}

impl Stratum {
    pub(super) fn of_json(value: Option<&Value>) -> Stratum {
        match value {
            None | Some(Value::Null) => Stratum::Missing,
            Some(Value::Number(n)) => n.as_f64().map_or(Stratum::Missing, Stratum::Number),
            Some(Value::String(s)) => Stratum::Text(s.clone()),
            Some(other) => Stratum::Text(other.to_string()),
        }
    }
}

/// A cell's place in the natural order (values sorted, numbers as numbers,
/// the missing last) and its label and bounds.
#[derive(Debug, Clone)]
pub(super) struct CellKey {
    pub rank: (u8, f64, String),
    pub bounds: Option<(f64, f64)>,
}

impl PartialEq for CellKey {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}
impl Eq for CellKey {}
impl PartialOrd for CellKey {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for CellKey {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        let (a, b) = (&self.rank, &other.rank);
        a.0.cmp(&b.0)
            .then(a.1.total_cmp(&b.1))
            .then_with(|| a.2.cmp(&b.2))
    }
}

/// Each value's cell, and whether numbers were binned.
pub(super) fn cell_labels(values: &[Stratum], bins: u64) -> (Vec<CellKey>, bool) {
    let numbers: Vec<f64> = values
        .iter()
        .filter_map(|v| match v {
            Stratum::Number(n) => Some(*n),
            _ => None,
        })
        .collect();
    let all_numbers = values
        .iter()
        .all(|v| matches!(v, Stratum::Number(_) | Stratum::Missing));
    let ranges = if all_numbers {
        bin_ranges(&numbers, bins)
    } else {
        None
    };
    let keys = values
        .iter()
        .map(|v| match v {
            Stratum::Missing => CellKey {
                rank: (2, 0.0, MISSING.into()),
                bounds: None,
            },
            Stratum::Number(n) => match ranges
                .as_ref()
                .and_then(|r| r.iter().find(|(lo, hi)| lo <= n && n <= hi).copied())
            {
                Some((lo, hi)) => CellKey {
                    rank: (0, lo, format!("{}–{}", number(lo), number(hi))),
                    bounds: Some((lo, hi)),
                },
                None => CellKey {
                    rank: (0, *n, number(*n)),
                    bounds: None,
                },
            },
            Stratum::Text(t) => CellKey {
                rank: (1, 0.0, t.clone()),
                bounds: None,
            },
        })
        .collect();
    (keys, ranges.is_some())
}

/// A number as a label: whole numbers without a point, others to 3 places.
fn number(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{n:.0}")
    } else {
        let text = format!("{n:.3}");
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// The bins of `values` (see the module's documentation) as (smallest,
/// largest) value of each, in order; `None` when there are no more distinct
/// values than `bins` (each value is then its own cell).
pub fn bin_ranges(values: &[f64], bins: u64) -> Option<Vec<(f64, f64)>> {
    let mut sorted: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len() as u64;
    let mut distinct = sorted.clone();
    distinct.dedup();
    if distinct.len() as u64 <= bins {
        return None;
    }
    let mut ranges: Vec<(u64, f64, f64)> = Vec::new();
    let mut i = 0usize;
    while i < sorted.len() {
        let value = sorted[i];
        let bin = (i as u64).saturating_mul(bins) / n;
        match ranges.last_mut() {
            Some((b, _, hi)) if *b == bin => *hi = value,
            _ => ranges.push((bin, value, value)),
        }
        while i < sorted.len() && sorted[i] == value {
            i += 1;
        }
    }
    Some(ranges.into_iter().map(|(_, lo, hi)| (lo, hi)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_binned_by_quantiles_with_ties_kept_together() {
        let values: Vec<f64> = (1..=8).map(f64::from).collect();
        assert_eq!(
            bin_ranges(&values, 4),
            Some(vec![(1.0, 2.0), (3.0, 4.0), (5.0, 6.0), (7.0, 8.0)])
        );
        // Six 1s: the first bin holds them all (6 of 10, where a quarter
        // was due), the second is never started, and only three bins remain.
        let tied = [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 2.0, 3.0, 4.0, 9.0];
        assert_eq!(
            bin_ranges(&tied, 4),
            Some(vec![(1.0, 1.0), (2.0, 3.0), (4.0, 9.0)])
        );
        // No more distinct values than bins: each value is its own cell.
        assert_eq!(bin_ranges(&[3.0, 3.0, 5.0], 4), None);
        assert_eq!(bin_ranges(&[], 4), None);
    }

    #[test]
    fn bins_are_labelled_with_their_bounds_and_the_missing_have_a_cell() {
        let values: Vec<Stratum> = [18.0, 25.0, 34.5, 40.0, 51.0, 70.0]
            .into_iter()
            .map(Stratum::Number)
            .chain([Stratum::Missing])
            .collect();
        let (keys, binned) = cell_labels(&values, 2);
        assert!(binned);
        let labels: Vec<&str> = keys.iter().map(|k| k.rank.2.as_str()).collect();
        assert_eq!(
            labels,
            [
                "18–34.5",
                "18–34.5",
                "18–34.5",
                "40–70",
                "40–70",
                "40–70",
                MISSING
            ]
        );
        assert_eq!(keys[3].bounds, Some((40.0, 70.0)));
    }
}
