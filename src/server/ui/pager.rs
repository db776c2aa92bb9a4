//! A table shown a page at a time: which rows, and the links to the pages
//! before and after.

use std::ops::Range;

use serde::Serialize;

#[derive(Debug, Serialize, PartialEq)]
pub struct Pages {
    /// 1-based first row shown (0 when the page is empty).
    pub from: usize,
    pub to: usize,
    /// The query of the previous page, or of the next one.
    pub previous: Option<String>,
    pub next: Option<String>,
}

/// The rows of `len` shown from `offset`, `limit` at a time; `at(offset)` is
/// the query of the page that starts there.
pub fn page(
    len: usize,
    offset: usize,
    limit: usize,
    at: impl Fn(usize) -> String,
) -> (Range<usize>, Pages) {
    let from = offset.min(len);
    let to = from.saturating_add(limit).min(len);
    let pages = Pages {
        from: if from < to { from + 1 } else { 0 },
        to,
        previous: (from > 0).then(|| at(from.saturating_sub(limit))),
        next: (to < len).then(|| at(to)),
    };
    (from..to, pages)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_middle_page_links_both_ways_and_an_offset_past_the_end_shows_nothing() {
        let at = |offset: usize| format!("offset={offset}");
        let (rows, pages) = page(120, 50, 50, at);
        assert_eq!(rows, 50..100);
        assert_eq!(
            pages,
            Pages {
                from: 51,
                to: 100,
                previous: Some("offset=0".into()),
                next: Some("offset=100".into()),
            }
        );
        let (rows, pages) = page(10, 500, 50, at);
        assert_eq!(rows, 10..10);
        assert_eq!((pages.from, pages.next), (0, None));
        assert_eq!(pages.previous.as_deref(), Some("offset=0"));
        let (rows, pages) = page(0, 0, 50, at);
        assert_eq!((rows, pages.from, pages.previous), (0..0, 0, None));
    }
}
