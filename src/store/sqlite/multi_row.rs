//! Multi-row INSERTs: SQLite has no arrays to bind, so many rows go in one
//! statement as many placeholder tuples, within the limit on parameters.

/// Most parameters one statement may bind: SQLITE_MAX_VARIABLE_NUMBER of the
/// bundled SQLite (3.32 and later).
const MAX_BOUND_PARAMETERS: usize = 32_766;

/// Most rows in one multi-row INSERT of a conversation's rows.
const MAX_ROWS_PER_INSERT: usize = 64;

/// How many rows of `parameters_per_row` bound parameters one INSERT may carry.
pub(super) fn rows_per_statement(parameters_per_row: usize) -> usize {
    (MAX_BOUND_PARAMETERS / parameters_per_row.max(1)).max(1)
}

/// `rows` in chunks whose sizes are powers of two, largest first (at most
/// [`MAX_ROWS_PER_INSERT`] and what the parameter limit allows). Every
/// distinct row count is a distinct statement that the connection prepares
/// and caches: one statement per conversation, sized to its message count,
/// filled the writer's statement cache with ~100 large programs over a long
/// job (2 MB); with chunk sizes 1, 2, 4 … 64 there are seven per table.
pub(super) fn power_of_two_chunks<T>(rows: &[T], parameters_per_row: usize) -> Vec<&[T]> {
    let most = rows_per_statement(parameters_per_row).min(MAX_ROWS_PER_INSERT);
    let most = 1usize << most.ilog2();
    let mut chunks = Vec::new();
    let mut rest = rows;
    while !rest.is_empty() {
        let size = most.min(1usize << rest.len().ilog2());
        let (chunk, tail) = rest.split_at(size);
        chunks.push(chunk);
        rest = tail;
    }
    chunks
}

/// `head`, then `rows` copies of the placeholder tuple `row` separated by
/// commas, then `tail`. Only placeholders are spliced in, never values.
pub(super) fn multi_row_sql(head: &str, row: &str, rows: usize, tail: &str) -> String {
    let mut sql = String::with_capacity(head.len() + rows * (row.len() + 2) + tail.len());
    sql.push_str(head);
    for n in 0..rows {
        if n > 0 {
            sql.push_str(", ");
        }
        sql.push_str(row);
    }
    sql.push_str(tail);
    sql
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multi_row_sql_repeats_the_placeholder_tuple() {
        assert_eq!(
            multi_row_sql(
                "INSERT INTO t (a, b) VALUES ",
                "(?, ?)",
                3,
                " ON CONFLICT DO NOTHING"
            ),
            "INSERT INTO t (a, b) VALUES (?, ?), (?, ?), (?, ?) ON CONFLICT DO NOTHING"
        );
    }

    #[test]
    fn rows_go_in_power_of_two_chunks_largest_first() {
        let rows: Vec<u32> = (0..75).collect();
        let sizes: Vec<usize> = power_of_two_chunks(&rows, 10)
            .iter()
            .map(|c| c.len())
            .collect();
        assert_eq!(sizes, vec![64, 8, 2, 1]);
        let again: Vec<u32> = power_of_two_chunks(&rows, 10).concat();
        assert_eq!(again, rows, "every row once, in order");
        assert!(power_of_two_chunks::<u32>(&[], 10).is_empty());
        let wide: Vec<usize> = power_of_two_chunks(&rows, 10_000)
            .iter()
            .map(|c| c.len())
            .collect();
        assert_eq!(
            wide,
            vec![2; 37].into_iter().chain([1]).collect::<Vec<_>>(),
            "3 rows fit: chunks of 2"
        );
    }

    #[test]
    fn rows_per_statement_stays_under_the_parameter_limit() {
        assert_eq!(rows_per_statement(10), 3_276);
        assert!(rows_per_statement(7) * 7 <= MAX_BOUND_PARAMETERS);
    }
}
