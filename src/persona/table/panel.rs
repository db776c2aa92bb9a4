//! A panel: a sample of a table written as JSONL, one row's columns a line,
//! in table order. A later job names the panel as its table, with no
//! `sample`, and so meets the same people (by id) as every other job over it:
//! matched pairs for `compare-users` and pairwise judging.

use std::io::Write;

use super::Row;

/// Write `rows` to `out` as a panel; the number written.
pub fn write_panel(rows: &[Row], out: &mut dyn Write) -> std::io::Result<usize> {
    for row in rows {
        serde_json::to_writer(&mut *out, &row.columns)?;
        out.write_all(b"\n")?;
    }
    out.flush()?;
    Ok(rows.len())
}
