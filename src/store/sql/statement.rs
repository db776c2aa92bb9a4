//! One SQL text per statement for both dialects, and the values bound to it.
//!
//! Placeholders are `$1`, `$2`, …: Postgres's own syntax, which sqlx's SQLite
//! driver binds by number too (a number used twice binds one value). Where the
//! dialects differ inside an otherwise shared statement, [`sql!`] takes a word
//! in place of the text: `NOW` (the database's clock in unix milliseconds,
//! fixed for the statement) and `BYTEWISE` (text compared byte by byte, as
//! SQLite always does and Postgres does with `COLLATE "C"`).

/// A statement's text in each dialect, both written once through [`sql!`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sql {
    pub sqlite: &'static str,
    pub postgres: &'static str,
}

/// Postgres's clock in unix milliseconds, fixed for the whole statement (a
/// macro, so it can be spliced into `concat!`ed SQL).
macro_rules! postgres_now_ms {
    () => {
        "FLOOR(EXTRACT(EPOCH FROM statement_timestamp()) * 1000)::BIGINT"
    };
}
pub(crate) use postgres_now_ms;

/// SQLite's clock in unix milliseconds: 'now' is fixed for one step of a
/// statement, and has millisecond precision (ROUND undoes the float).
macro_rules! sqlite_now_ms {
    () => {
        "CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER)"
    };
}
pub(crate) use sqlite_now_ms;

/// [`Sql`] from pieces of text, `NOW` and `BYTEWISE` (see the module's
/// documentation), separated by commas.
macro_rules! sql {
    (@munch [$($s:expr),*] [$($p:expr),*] NOW $(, $($rest:tt)*)?) => {
        $crate::store::sql::statement::sql!(@munch
            [$($s,)* $crate::store::sql::statement::sqlite_now_ms!()]
            [$($p,)* $crate::store::sql::statement::postgres_now_ms!()]
            $($($rest)*)?)
    };
    (@munch [$($s:expr),*] [$($p:expr),*] BYTEWISE $(, $($rest:tt)*)?) => {
        $crate::store::sql::statement::sql!(@munch
            [$($s,)* ""] [$($p,)* " COLLATE \"C\""] $($($rest)*)?)
    };
    (@munch [$($s:expr),*] [$($p:expr),*] $piece:expr $(, $($rest:tt)*)?) => {
        $crate::store::sql::statement::sql!(@munch
            [$($s,)* $piece] [$($p,)* $piece] $($($rest)*)?)
    };
    (@munch [$($s:expr),*] [$($p:expr),*]) => {
        $crate::store::sql::statement::Sql {
            sqlite: concat!($($s),*),
            postgres: concat!($($p),*),
        }
    };
    ($($pieces:tt)+) => {
        $crate::store::sql::statement::sql!(@munch [] [] $($pieces)+)
    };
}
pub(crate) use sql;

/// A value bound to a placeholder, as the schema types it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Param<'a> {
    Int(i64),
    OptInt(Option<i64>),
    OptReal(Option<f64>),
    OptBool(Option<bool>),
    Text(&'a str),
    OptText(Option<&'a str>),
    /// BLOB in SQLite, BYTEA in Postgres.
    Bytes(&'a [u8]),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_text_differs_only_where_a_dialect_word_stands() {
        const SET: Sql = sql!("UPDATE t SET at = ", NOW, " WHERE id = $1");
        assert_eq!(
            SET.sqlite,
            "UPDATE t SET at = CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER) WHERE id = $1"
        );
        assert_eq!(
            SET.postgres,
            "UPDATE t SET at = FLOOR(EXTRACT(EPOCH FROM statement_timestamp()) * 1000)::BIGINT \
             WHERE id = $1"
        );
        const ORDER: Sql = sql!("SELECT a FROM t ORDER BY a", BYTEWISE, ", b");
        assert_eq!(ORDER.sqlite, "SELECT a FROM t ORDER BY a, b");
        assert_eq!(
            ORDER.postgres,
            "SELECT a FROM t ORDER BY a COLLATE \"C\", b"
        );
    }
}
