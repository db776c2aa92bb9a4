//! Jensen–Shannon divergence between two distributions of words (or word
//! pairs), base 2, so it lies in [0, 1]: 0 for the same distribution, 1 for
//! distributions with no word in common.

/// JSD(P ‖ Q) of two count tables indexed by word id (a shorter table has
/// 0 for the ids past its end); `None` when either is empty.
pub fn jensen_shannon(p: &[u64], q: &[u64]) -> Option<f64> {
    let (np, nq) = (p.iter().sum::<u64>(), q.iter().sum::<u64>());
    if np == 0 || nq == 0 {
        return None;
    }
    let (np, nq) = (np as f64, nq as f64);
    // Σ over the union of ½ p log2(p/m) + ½ q log2(q/m), m = (p + q) / 2.
    let term = |x: f64, m: f64| if x > 0.0 { x * (x / m).log2() } else { 0.0 };
    let mut sum = 0.0;
    for i in 0..p.len().max(q.len()) {
        let x = p.get(i).map_or(0.0, |c| *c as f64 / np);
        let y = q.get(i).map_or(0.0, |c| *c as f64 / nq);
        let m = (x + y) / 2.0;
        sum += term(x, m) + term(y, m);
    }
    Some((sum / 2.0).clamp(0.0, 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_distributions_diverge_by_zero() {
        let (p, q) = ([3, 1], [6, 2, 0]);
        assert!(jensen_shannon(&p, &q).unwrap().abs() < 1e-12);
    }

    #[test]
    fn disjoint_distributions_diverge_by_one() {
        let (p, q) = ([3], [0, 1, 5]);
        assert!((jensen_shannon(&p, &q).unwrap() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn half_shared_lies_between_and_is_symmetric() {
        let (p, q) = ([1, 1, 0], [1, 0, 1]);
        let d = jensen_shannon(&p, &q).unwrap();
        assert!((d - 0.5).abs() < 1e-12, "{d}");
        assert_eq!(jensen_shannon(&q, &p), Some(d));
        assert_eq!(jensen_shannon(&p, &[]), None);
    }
}
