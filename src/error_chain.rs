//! The one printer of error chains. Each error's `Display` holds only its own
//! layer's context; its causes are its `source()`s, written here after it,
//! `: `-separated. By default a cause whose text its parent already printed
//! (some dependencies, e.g. sqlx's I/O error, put their source in their own
//! message) is not written again, so no cause appears twice; [`Repeats::Written`]
//! writes every cause as it is, for callers whose messages were always worded so.
//! [`error_chain_lines`] writes every message on its own line, for callers that
//! read a dependency's multi-line message (tera's ` --> line:column`) back.

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
    join(e, repeats, ": ")
}

/// `e` and its causes, outermost first, each on its own line, every cause
/// written and each message's own newlines kept.
pub fn error_chain_lines(e: &(dyn Error + 'static)) -> String {
    join(e, Repeats::Written, "\n")
}

fn join(e: &(dyn Error + 'static), repeats: Repeats, separator: &str) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        let said = cause.to_string();
        let repeated = said.is_empty() || text.contains(&said);
        if repeats == Repeats::Written || !repeated {
            text.push_str(separator);
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

    #[test]
    fn as_lines_every_message_keeps_its_own_line_breaks() {
        let refused = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused\n  here");
        let e = Open(Io(refused));
        assert_eq!(
            error_chain_lines(&e),
            "cannot open database sqlite://x.db\nerror communicating with database: refused\n  \
             here\nrefused\n  here"
        );
    }
}
