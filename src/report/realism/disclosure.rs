//! The order in which a user discloses the facts it knows. The scenario's
//! `known_info` is split into facts (at `.`, `,`, `;`, line ends, and the
//! words `with` and `and`); a fact's markers are its words that hold a
//! digit, `_` or `@` (ids, numbers, emails) or are capitalised, not all
//! capitals, and not the first of their fact (names, places); a fact without
//! markers is left out. A fact is disclosed
//! at the first user turn that holds one of its markers. The score of a
//! conversation is Spearman's rank correlation between the facts' listed
//! order and the turn each was first disclosed at (ties get mean ranks):
//! 1 when the user gives them in the listed order, −1 in reverse; `None`
//! with fewer than two facts disclosed or all at the same turn.

use super::words::words;

/// Each fact's markers, lower-cased, in the listed order.
pub fn facts(known_info: &str) -> Vec<Vec<String>> {
    known_info
        .replace(" with ", "\n")
        .replace(" and ", "\n")
        .split(['.', ',', '\n', ';'])
        .filter_map(|fact| {
            let markers: Vec<String> = fact
                .split_whitespace()
                .enumerate()
                .filter_map(|(i, raw)| {
                    let w = raw.trim_matches(|c: char| !c.is_alphanumeric() && c != '_');
                    let id_like = w
                        .chars()
                        .any(|c| c.is_ascii_digit() || c == '_' || c == '@');
                    let named = i > 0
                        && w.chars().next().is_some_and(char::is_uppercase)
                        && w.chars().any(char::is_lowercase);
                    (w.len() >= 2 && (id_like || named)).then(|| w.to_lowercase())
                })
                .collect();
            (!markers.is_empty()).then_some(markers)
        })
        .collect()
}

/// The turn (0-based) each fact is first disclosed at, `None` if never.
pub fn first_mentions(facts: &[Vec<String>], user_turns: &[String]) -> Vec<Option<usize>> {
    let turn_words: Vec<Vec<String>> = user_turns.iter().map(|t| words(t)).collect();
    facts
        .iter()
        .map(|markers| {
            turn_words.iter().position(|ws| {
                markers.iter().any(|m| {
                    ws.iter()
                        .any(|w| w == m || (m.contains('@') && w.starts_with(m.as_str())))
                })
            })
        })
        .collect()
}

fn ranks(values: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|a, b| values[*a].total_cmp(&values[*b]));
    let mut ranks = vec![0.0; values.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && values[order[j + 1]] == values[order[i]] {
            j += 1;
        }
        let mean_rank = (i + j) as f64 / 2.0 + 1.0;
        for k in &order[i..=j] {
            ranks[*k] = mean_rank;
        }
        i = j + 1;
    }
    ranks
}

/// Spearman's rank correlation of two equal-length series (Pearson over
/// ranks); `None` when either has no spread.
pub fn spearman(x: &[f64], y: &[f64]) -> Option<f64> {
    if x.len() != y.len() || x.len() < 2 {
        return None;
    }
    let (rx, ry) = (ranks(x), ranks(y));
    let n = rx.len() as f64;
    let (mx, my) = (rx.iter().sum::<f64>() / n, ry.iter().sum::<f64>() / n);
    let cov: f64 = rx.iter().zip(&ry).map(|(a, b)| (a - mx) * (b - my)).sum();
    let vx: f64 = rx.iter().map(|a| (a - mx).powi(2)).sum();
    let vy: f64 = ry.iter().map(|b| (b - my).powi(2)).sum();
    (vx > 0.0 && vy > 0.0).then(|| (cov / (vx * vy).sqrt()).clamp(-1.0, 1.0))
}

/// The disclosure-order score of one conversation (see the module's text).
pub fn disclosure_order(known_info: &str, user_turns: &[String]) -> Option<f64> {
    let facts = facts(known_info);
    let (listed, at): (Vec<f64>, Vec<f64>) = first_mentions(&facts, user_turns)
        .into_iter()
        .enumerate()
        .filter_map(|(i, turn)| Some((i as f64, turn? as f64)))
        .unzip();
    spearman(&listed, &at)
}

#[cfg(test)]
mod tests {
    use super::*;

    const KNOWN: &str = "Your name is Mia Li. Your user id is mia_li_3668. Your zip code is 10001.";

    fn turns(texts: &[&str]) -> Vec<String> {
        texts.iter().map(|t| t.to_string()).collect()
    }

    #[test]
    fn facts_are_found_by_their_names_ids_and_numbers() {
        assert_eq!(
            facts(KNOWN),
            vec![vec!["mia", "li"], vec!["mia_li_3668"], vec!["10001"]]
        );
        assert!(facts("you want a refund").is_empty());
        assert_eq!(
            facts("You are John Smith with phone number 555-123-2002, ID card"),
            vec![vec!["john", "smith"], vec!["555-123-2002"]]
        );
    }

    #[test]
    fn listed_order_scores_one_and_reverse_minus_one() {
        let in_order = turns(&["I'm Mia Li", "id mia_li_3668", "zip 10001"]);
        assert_eq!(disclosure_order(KNOWN, &in_order), Some(1.0));
        let reverse = turns(&["zip 10001", "id mia_li_3668", "I'm Mia Li"]);
        assert_eq!(disclosure_order(KNOWN, &reverse), Some(-1.0));
    }

    #[test]
    fn all_at_once_or_one_fact_says_nothing_about_order() {
        assert_eq!(
            disclosure_order(KNOWN, &turns(&["Mia Li, mia_li_3668, 10001"])),
            None
        );
        assert_eq!(
            disclosure_order(KNOWN, &turns(&["zip 10001", "thanks"])),
            None
        );
    }

    #[test]
    fn ties_get_mean_ranks() {
        assert_eq!(ranks(&[1.0, 0.0, 1.0]), vec![2.5, 1.0, 2.5]);
        assert!(spearman(&[0.0, 1.0, 2.0], &[0.0, 1.0, 1.0]).unwrap() > 0.8);
    }
}
