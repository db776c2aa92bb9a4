//! The one printer of error chains. Each error's `Display` holds only its own
//! layer's context; its causes are its `source()`s, written here after it,
//! `: `-separated. A cause whose text its parent already printed (some
//! dependencies, e.g. sqlx's I/O error, put their source in their own
//! message) is not written again, so no cause appears twice.

use std::error::Error;

/// `e` and its causes, outermost first, `: `-separated.
pub fn error_chain(e: &(dyn Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        let said = cause.to_string();
        if !said.is_empty() && !text.contains(&said) {
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
}
