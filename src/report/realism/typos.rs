//! Typos, by a heuristic that needs no dictionary (docs/realism.md): a word
//! of letters only is a likely typo when it is a known misspelling, repeats
//! a letter three times (`pleeease`), has no vowel (and no `y`) in four or
//! more letters, or repeats the word before it (`the the`); a lone lower-case
//! `i` counts too. The rate is likely typos over words. It undercounts
//! (a swapped letter that makes a word is missed) the same way for both jobs.

use super::words::words;

/// Common misspellings.
pub const MISSPELLINGS: [&str; 30] = [
    "teh",
    "recieve",
    "recieved",
    "adress",
    "adres",
    "wich",
    "thier",
    "untill",
    "becuase",
    "beacuse",
    "definately",
    "seperate",
    "occured",
    "tommorow",
    "tomorow",
    "accomodate",
    "wierd",
    "alot",
    "ur",
    "pls",
    "plz",
    "thx",
    "thanx",
    "wat",
    "dont",
    "cant",
    "wont",
    "im",
    "ive",
    "didnt",
];

fn is_likely_typo(word: &str, before: Option<&str>) -> bool {
    if !word.chars().all(|c| c.is_alphabetic()) {
        return false;
    }
    let chars: Vec<char> = word.chars().collect();
    let tripled = chars.windows(3).any(|w| w[0] == w[1] && w[1] == w[2]);
    let no_vowel = chars.len() >= 4 && !chars.iter().any(|c| "aeiouy".contains(*c));
    MISSPELLINGS.contains(&word) || tripled || no_vowel || before == Some(word)
}

/// (likely typos, words) of one turn; `original` keeps its case for the lone `i`.
pub fn typos(original: &str) -> (u64, u64) {
    let words = words(original);
    let lone_i = original
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        .filter(|w| *w == "i")
        .count() as u64;
    let mut before: Option<&str> = None;
    let mut flagged = 0u64;
    for w in &words {
        flagged += u64::from(is_likely_typo(w, before));
        before = Some(w);
    }
    (
        (flagged + lone_i).min(words.len() as u64),
        words.len() as u64,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_text_has_no_typos() {
        assert_eq!(typos("I would like to return my order."), (0, 7));
    }

    #[test]
    fn misspellings_stretched_letters_vowelless_words_and_repeats_are_typos() {
        assert_eq!(typos("teh"), (1, 1));
        assert_eq!(typos("pleeease"), (1, 1));
        assert_eq!(typos("hgfd"), (1, 1));
        assert_eq!(typos("the the box"), (1, 3));
        assert_eq!(typos("i want it"), (1, 3));
    }

    #[test]
    fn ids_and_numbers_are_not_typos() {
        assert_eq!(typos("order W2378156 zip 10001"), (0, 4));
    }
}
