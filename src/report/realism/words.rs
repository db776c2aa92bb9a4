//! The words of a user turn, as every measure counts them: lower-cased runs
//! of letters, digits, `_`, `'`, `@` and `.` inside a word (so `mia_li_3668`,
//! `don't`, `a@b.com` and `12.50` are one word each), trimmed of the
//! punctuation around them.

/// The words of `text`, lower-cased, in order.
pub fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '\'' | '@' | '.' | '-')))
        .map(|w| w.trim_matches(|c: char| matches!(c, '\'' | '.' | '-')))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_emails_and_contractions_stay_whole_and_punctuation_goes() {
        assert_eq!(
            words("Hi! My id is mia_li_3668, email a@b.com. Don't wait..."),
            [
                "hi",
                "my",
                "id",
                "is",
                "mia_li_3668",
                "email",
                "a@b.com",
                "don't",
                "wait"
            ]
        );
    }

    #[test]
    fn no_words_in_punctuation_alone() {
        assert!(words(" ?! ... ").is_empty());
    }
}
