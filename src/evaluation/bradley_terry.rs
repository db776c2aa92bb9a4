//! Bradley–Terry ratings by maximum likelihood: P(i beats j) = p_i / (p_i +
//! p_j). Fitted by Hunter's (2004) MM iteration, p_i ← W_i / Σ_j n_ij /
//! (p_i + p_j), to a change under 1e-12; a tie counts as half a win for
//! each side (as Arena-Hard does). Ratings are log-strengths with mean 0,
//! choix's normalisation (`tests/it/leaderboard.rs` holds the fit to
//! choix's `ilsr_pairwise` on the same battles). The maximum exists only
//! when every split of the players has a win (or tie) each way; otherwise
//! the fit is refused, saying who never lost or never won.

use serde::Serialize;

/// One game between two players, by index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Battle {
    Won { winner: usize, loser: usize },
    Tied(usize, usize),
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RatingError {
    #[error("no battle to rate")]
    NoBattles,
    #[error(
        "the ratings have no maximum: player {0} never lost (or never won) against some \
         group of the others, so its rating grows without bound; compare more items, or \
         policies closer in quality"
    )]
    Unbounded(usize),
}

/// A rating with its bootstrap interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Rating {
    pub rating: f64,
    pub low: f64,
    pub high: f64,
}

/// The log-strengths of `players` players, mean 0.
pub fn fit(players: usize, battles: &[Battle]) -> Result<Vec<f64>, RatingError> {
    if battles.is_empty() || players == 0 {
        return Err(RatingError::NoBattles);
    }
    let mut wins = vec![0.0f64; players];
    let mut games = vec![vec![0.0f64; players]; players];
    // beats[i][j]: i won or tied against j at least once.
    let mut beats = vec![vec![false; players]; players];
    for battle in battles {
        let (a, b, share) = match *battle {
            Battle::Won { winner, loser } => (winner, loser, 1.0),
            Battle::Tied(a, b) => (a, b, 0.5),
        };
        wins[a] += share;
        wins[b] += 1.0 - share;
        games[a][b] += 1.0;
        games[b][a] += 1.0;
        beats[a][b] = true;
        if share < 1.0 {
            beats[b][a] = true;
        }
    }
    if let Some(player) = unbounded(&beats) {
        return Err(RatingError::Unbounded(player));
    }
    let mut p = vec![1.0f64; players];
    for _ in 0..100_000 {
        let mut next = vec![0.0; players];
        for i in 0..players {
            let denominator: f64 = (0..players)
                .filter(|&j| j != i && games[i][j] > 0.0)
                .map(|j| games[i][j] / (p[i] + p[j]))
                .sum();
            next[i] = wins[i] / denominator;
        }
        let mean_log = next.iter().map(|x| x.ln()).sum::<f64>() / players as f64;
        let scale = (-mean_log).exp();
        next.iter_mut().for_each(|x| *x *= scale);
        let change = next
            .iter()
            .zip(&p)
            .map(|(a, b)| (a.ln() - b.ln()).abs())
            .fold(0.0, f64::max);
        p = next;
        if change < 1e-12 {
            break;
        }
    }
    Ok(p.iter().map(|x| x.ln()).collect())
}

/// The first player that cannot reach every other by wins (or ties), or
/// be reached: the beats graph is not strongly connected.
fn unbounded(beats: &[Vec<bool>]) -> Option<usize> {
    let n = beats.len();
    let reach = |forward: bool| {
        let mut seen = vec![false; n];
        let mut stack = vec![0];
        seen[0] = true;
        while let Some(i) = stack.pop() {
            for j in 0..n {
                let edge = if forward { beats[i][j] } else { beats[j][i] };
                if edge && !seen[j] {
                    seen[j] = true;
                    stack.push(j);
                }
            }
        }
        seen
    };
    let (out, back) = (reach(true), reach(false));
    (0..n).find(|&i| !out[i] || !back[i])
}

/// The ratings with 95% intervals from `resamples` bootstrap resamples of
/// the battles (seeded); resamples whose fit has no maximum are left out.
pub fn fit_with_intervals(
    players: usize,
    battles: &[Battle],
    resamples: u32,
    seed: u64,
) -> Result<Vec<Rating>, RatingError> {
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};
    let ratings = fit(players, battles)?;
    let mut rng = StdRng::seed_from_u64(seed);
    let mut draws: Vec<Vec<f64>> = vec![Vec::new(); players];
    for _ in 0..resamples {
        let sample: Vec<Battle> = (0..battles.len())
            .map(|_| battles[rng.random_range(0..battles.len())])
            .collect();
        if let Ok(fitted) = fit(players, &sample) {
            for (d, r) in draws.iter_mut().zip(fitted) {
                d.push(r);
            }
        }
    }
    Ok(ratings
        .into_iter()
        .zip(draws)
        .map(|(rating, mut d)| {
            d.sort_by(f64::total_cmp);
            let at = |q: f64| {
                d.get(((d.len().max(1) - 1) as f64 * q).round() as usize)
                    .copied()
                    .unwrap_or(rating)
            };
            Rating {
                rating,
                low: at(0.025),
                high: at(0.975),
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn won(winner: usize, loser: usize) -> Battle {
        Battle::Won { winner, loser }
    }

    #[test]
    fn two_players_rate_at_the_log_odds_of_their_record() {
        // 3 wins to 1: p0/p1 = 3, ratings ±ln(3)/2.
        let battles = [won(0, 1), won(0, 1), won(0, 1), won(1, 0)];
        let r = fit(2, &battles).unwrap();
        assert!((r[0] - 3f64.ln() / 2.0).abs() < 1e-9, "{r:?}");
        assert!((r[0] + r[1]).abs() < 1e-12);
    }

    #[test]
    fn ties_count_half_and_a_player_who_never_lost_is_refused() {
        let battles = [won(0, 1), Battle::Tied(0, 1)];
        let r = fit(2, &battles).unwrap();
        assert!((r[0] - 3f64.ln() / 2.0).abs() < 1e-9, "{r:?}");
        assert_eq!(
            fit(3, &[won(0, 1), won(1, 2), won(2, 1)]),
            Err(RatingError::Unbounded(1))
        );
        assert_eq!(fit(2, &[]), Err(RatingError::NoBattles));
    }

    #[test]
    fn intervals_hold_the_rating_and_are_seeded() {
        let mut battles = Vec::new();
        for i in 0..60 {
            battles.push(if i % 3 == 0 { won(1, 0) } else { won(0, 1) });
            battles.push(if i % 4 == 0 { won(2, 1) } else { won(1, 2) });
            battles.push(if i % 5 == 0 { won(2, 0) } else { won(0, 2) });
        }
        let r = fit_with_intervals(3, &battles, 200, 1).unwrap();
        assert!(r[0].rating > r[1].rating && r[1].rating > r[2].rating);
        for x in &r {
            assert!(x.low <= x.rating && x.rating <= x.high, "{x:?}");
        }
        assert_eq!(r, fit_with_intervals(3, &battles, 200, 1).unwrap());
    }
}
