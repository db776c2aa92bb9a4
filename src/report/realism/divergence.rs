//! Jensen–Shannon divergence between two distributions of words (or word
//! pairs), base 2, so it lies in [0, 1]: 0 for the same distribution, 1 for
//! distributions with no word in common.

use std::collections::HashMap;
use std::hash::Hash;

/// JSD(P ‖ Q) of two count tables; `None` when either is empty.
pub fn jensen_shannon<K: Eq + Hash>(p: &HashMap<K, u64>, q: &HashMap<K, u64>) -> Option<f64> {
    let (np, nq) = (p.values().sum::<u64>(), q.values().sum::<u64>());
    if np == 0 || nq == 0 {
        return None;
    }
    let (np, nq) = (np as f64, nq as f64);
    // Σ over the union of ½ p log2(p/m) + ½ q log2(q/m), m = (p + q) / 2.
    let term = |x: f64, m: f64| if x > 0.0 { x * (x / m).log2() } else { 0.0 };
    let mut sum = 0.0;
    for (k, count) in p {
        let x = *count as f64 / np;
        let y = q.get(k).map_or(0.0, |c| *c as f64 / nq);
        let m = (x + y) / 2.0;
        sum += term(x, m) + term(y, m);
    }
    for (k, count) in q {
        if !p.contains_key(k) {
            let y = *count as f64 / nq;
            sum += term(y, y / 2.0);
        }
    }
    Some((sum / 2.0).clamp(0.0, 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(words: &[(&'static str, u64)]) -> HashMap<&'static str, u64> {
        words.iter().copied().collect()
    }

    #[test]
    fn identical_distributions_diverge_by_zero() {
        let p = table(&[("order", 3), ("return", 1)]);
        let q = table(&[("order", 6), ("return", 2)]);
        assert!(jensen_shannon(&p, &q).unwrap().abs() < 1e-12);
    }

    #[test]
    fn disjoint_distributions_diverge_by_one() {
        let p = table(&[("order", 3)]);
        let q = table(&[("refund", 1), ("lamp", 5)]);
        assert!((jensen_shannon(&p, &q).unwrap() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn half_shared_lies_between_and_is_symmetric() {
        let p = table(&[("a", 1), ("b", 1)]);
        let q = table(&[("a", 1), ("c", 1)]);
        let d = jensen_shannon(&p, &q).unwrap();
        assert!((d - 0.5).abs() < 1e-12, "{d}");
        assert_eq!(jensen_shannon(&q, &p), Some(d));
        assert_eq!(jensen_shannon(&p, &HashMap::new()), None);
    }
}
