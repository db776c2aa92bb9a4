//! McNemar's exact test on paired pass/fail outcomes: of the items where
//! the two policies disagree, `b` passed only with the first and `c` only
//! with the second; under the null each disagreement is a fair coin, so the
//! two-sided p-value is twice the binomial tail of the smaller count
//! (capped at 1). The exact form, as statsmodels' `mcnemar(exact=True)` and
//! scipy's `binomtest(b, b + c)` compute it.

/// The two-sided exact p-value for `b` and `c` discordant pairs; 1 when
/// there is none.
pub fn exact_p(b: u64, c: u64) -> f64 {
    let n = b + c;
    if n == 0 {
        return 1.0;
    }
    let low = b.min(c);
    // Σ_{i ≤ low} C(n, i) / 2^n, in logs so large n neither overflows nor
    // underflows to 0 too early.
    let ln_half_n = n as f64 * 0.5f64.ln();
    let mut ln_choose = 0.0; // ln C(n, 0)
    let mut tail = 0.0;
    for i in 0..=low {
        if i > 0 {
            ln_choose += ((n - i + 1) as f64).ln() - (i as f64).ln();
        }
        tail += (ln_choose + ln_half_n).exp();
    }
    (2.0 * tail).min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exact_p_value_is_the_binomial_tail_doubled() {
        // b = 1, c = 5: 2 · (C(6,0) + C(6,1)) / 64 = 14/64.
        assert!((exact_p(1, 5) - 14.0 / 64.0).abs() < 1e-12);
        assert!((exact_p(5, 1) - 14.0 / 64.0).abs() < 1e-12);
        assert_eq!(exact_p(0, 0), 1.0);
        assert_eq!(exact_p(3, 3), 1.0);
        // b = 0, c = 10: 2 / 1024.
        assert!((exact_p(0, 10) - 2.0 / 1024.0).abs() < 1e-15);
        // Large counts stay finite and in range.
        let p = exact_p(400, 600);
        assert!(p > 0.0 && p < 1e-9, "{p}");
    }
}
