//! Which formats read a source, for the error that suggests one: a
//! suggestion is made only when it works for that file. Each format is
//! tried on the source until it reads one conversation, or has met
//! [`PROBE_LIMIT`] lines (or elements) that it cannot read.

use std::ops::ControlFlow;

use super::{Format, Source};

/// Lines (or list elements) a format may fail on before it is judged not
/// to read the source.
pub const PROBE_LIMIT: usize = 100;

/// The formats, other than `except`, that read at least one conversation of
/// `source` among its first [`PROBE_LIMIT`] lines or elements, in
/// [`Format::ALL`] order.
pub fn formats_that_read(source: &Source, except: Option<Format>) -> Vec<Format> {
    Format::ALL
        .into_iter()
        .filter(|f| Some(*f) != except && reads(source, *f))
        .collect()
}

/// Whether `format` reads a conversation of `source` before
/// [`PROBE_LIMIT`] problems.
fn reads(source: &Source, format: Format) -> bool {
    let mut tried = 0;
    let mut read = false;
    let _ = source.read(format, |_, conversation| {
        tried += 1;
        read = conversation.is_ok();
        if read || tried >= PROBE_LIMIT {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    });
    read
}

/// "give --format X (or Y)" for the formats that read `source`, or, when
/// none does, what it would take.
pub fn suggestion(source: &Source, except: Option<Format>) -> String {
    let formats = formats_that_read(source, except);
    match formats.as_slice() {
        [] => format!(
            "no format sparring reads ({}) reads a conversation of it",
            Format::ALL.map(Format::as_str).join(", ")
        ),
        [one] => format!("--format {} reads it", one.as_str()),
        more => format!(
            "it reads as --format {}",
            more.iter()
                .map(|f| f.as_str())
                .collect::<Vec<_>>()
                .join(" or --format ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_format_that_reads_the_source_is_suggested() {
        let sharegpt = Source::text(
            "{\"conversations\": [{\"from\": \"human\", \"value\": \"hi\"}]}\n",
            "x.jsonl",
        );
        assert_eq!(formats_that_read(&sharegpt, None), [Format::ShareGpt]);
        assert_eq!(
            suggestion(&sharegpt, Some(Format::Openai)),
            "--format sharegpt reads it"
        );
        let list = Source::text(
            "[{\"task_id\": 1, \"traj\": [{\"role\": \"user\", \"content\": \"hi\"}]}]",
            "runs.json",
        );
        assert_eq!(formats_that_read(&list, None), [Format::TauBench]);
        let nothing = Source::text("[1, 2]\n", "x.json");
        assert!(suggestion(&nothing, None).starts_with("no format sparring reads"));
    }
}
