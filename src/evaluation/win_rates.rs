//! The win-rate matrix of a set of battles: row i, column j is the share of
//! i's games against j that i won, a tie counting half (as the ratings count
//! it); `None` where the two never met, and on the diagonal.

use super::bradley_terry::Battle;

pub fn win_rates(players: usize, battles: &[Battle]) -> Vec<Vec<Option<f64>>> {
    let mut won = vec![vec![0.0f64; players]; players];
    let mut games = vec![vec![0u64; players]; players];
    for battle in battles {
        let (a, b, share) = match *battle {
            Battle::Won { winner, loser } => (winner, loser, 1.0),
            Battle::Tied(a, b) => (a, b, 0.5),
        };
        if a >= players || b >= players || a == b {
            continue;
        }
        won[a][b] += share;
        won[b][a] += 1.0 - share;
        games[a][b] += 1;
        games[b][a] += 1;
    }
    (0..players)
        .map(|i| {
            (0..players)
                .map(|j| (games[i][j] > 0).then(|| won[i][j] / games[i][j] as f64))
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_pair_is_the_share_won_with_ties_as_halves_and_the_two_sides_sum_to_one() {
        let battles = [
            Battle::Won {
                winner: 0,
                loser: 1,
            },
            Battle::Won {
                winner: 0,
                loser: 1,
            },
            Battle::Tied(0, 1),
            Battle::Won {
                winner: 1,
                loser: 0,
            },
            Battle::Won {
                winner: 2,
                loser: 0,
            },
        ];
        let m = win_rates(4, &battles);
        assert_eq!(m[0][1], Some(2.5 / 4.0));
        assert_eq!(m[1][0], Some(1.5 / 4.0));
        assert_eq!(m[2][0], Some(1.0));
        assert_eq!(m[0][2], Some(0.0));
        assert_eq!(m[1][2], None, "never met");
        assert_eq!(m[0][0], None);
        assert!(m[3].iter().all(Option::is_none));
    }
}
