//! The cost frontier: a policy is on it when no other policy has a reward
//! at least as high at a cost at most as low, and is better in one of them.

/// For each `(reward, cost)`, whether it is on the frontier.
pub fn frontier(points: &[(f64, f64)]) -> Vec<bool> {
    points
        .iter()
        .map(|&(reward, cost)| {
            !points
                .iter()
                .any(|&(r, c)| r >= reward && c <= cost && (r > reward || c < cost))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dominated_policy_is_off_the_frontier_and_ties_stay_on() {
        let points = [(0.9, 10.0), (0.7, 5.0), (0.6, 8.0), (0.9, 10.0), (0.5, 1.0)];
        assert_eq!(frontier(&points), [true, true, false, true, true]);
        assert_eq!(frontier(&[]), Vec::<bool>::new());
    }
}
