//! The one printer of error chains. Each error's `Display` holds only its own
//! layer's context; its causes are its `source()`s, written here after it,
//! `: `-separated. By default a cause whose text its parent already printed
//! (some dependencies, e.g. sqlx's I/O error, put their source in their own
//! message) is not written again, so no cause appears twice; [`Repeats::Written`]
//! writes every cause as it is, for callers whose messages were always worded so.

use std::error::Error;

/// What the printer does with a cause whose text is already in the chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Repeats {
    /// Left out, as is an empty cause.
    Skipped,
    /// Written again: every cause, each after `: `.
    Written,
}

/// `e` and its causes, outermost first, `: `-separated, each cause once.
pub fn error_chain(e: &(dyn Error + 'static)) -> String {
    error_chain_with(e, Repeats::Skipped)
}

/// `e` and its causes, outermost first, `: `-separated; `repeats` says
/// whether a cause already said is written again.
pub fn error_chain_with(e: &(dyn Error + 'static), repeats: Repeats) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        let said = cause.to_string();
        let repeated = said.is_empty() || text.contains(&said);
        if repeats == Repeats::Written || !repeated {
            text.push_str(": ");
            text.push_str(&said);
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("cannot open database sqlite://x.db")]
    struct Open(#[source] Io);

    #[derive(Debug, thiserror::Error)]
    #[error("error communicating with database: {0}")]
    struct Io(#[source] std::io::Error);

    #[test]
    fn each_cause_is_written_once_after_its_parent() {
        let refused = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused");
        let e = Open(Io(refused));
        assert_eq!(
            error_chain(&e),
            "cannot open database sqlite://x.db: error communicating with database: refused"
        );
    }

    #[test]
    fn with_repeats_written_every_cause_is_written_as_it_is() {
        let refused = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused");
        let e = Open(Io(refused));
        assert_eq!(
            error_chain_with(&e, Repeats::Written),
            "cannot open database sqlite://x.db: error communicating with database: refused: \
             refused"
        );
    }
}
