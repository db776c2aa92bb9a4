//! Server-Sent Events, as an agent that streams answers them
//! (`Content-Type: text/event-stream`): the `data` of each event, read from
//! the whole body once the stream has ended. Events are separated by a
//! blank line; an event's `data:` lines are joined by new lines; `event:`,
//! `id:`, `retry:` and comment lines (`:`) carry nothing sparring reads. A
//! line break is `\n`, `\r\n` or `\r`.

/// Whether a `Content-Type` value is an event stream.
pub fn is_event_stream(content_type: Option<&str>) -> bool {
    content_type.is_some_and(|t| {
        t.split(';')
            .next()
            .is_some_and(|m| m.trim().eq_ignore_ascii_case("text/event-stream"))
    })
}

/// The data of each event of `body`, in order; an event without data
/// (a comment, a keep-alive) gives none.
pub fn event_data(body: &str) -> Vec<String> {
    let mut events = Vec::new();
    let mut data: Option<String> = None;
    let normalized = body.replace("\r\n", "\n").replace('\r', "\n");
    for line in normalized.split('\n') {
        if line.is_empty() {
            events.extend(data.take());
            continue;
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        if field == "data" {
            match &mut data {
                Some(text) => {
                    text.push('\n');
                    text.push_str(value);
                }
                None => data = Some(value.to_string()),
            }
        }
    }
    events.extend(data);
    events
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn events_are_read_whatever_their_line_breaks_and_other_fields() {
        let body = ": keep-alive\r\n\r\nevent: update\r\nid: 1\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\ndata:{\"b\":2}\n\ndata: [DONE]";
        assert_eq!(event_data(body), ["{\"a\":\n1}", "{\"b\":2}", "[DONE]"]);
        assert!(event_data("").is_empty());
        assert!(event_data("retry: 10\n\n").is_empty());
    }

    #[test]
    fn only_event_streams_are_event_streams() {
        assert!(is_event_stream(Some("text/event-stream; charset=utf-8")));
        assert!(is_event_stream(Some("Text/Event-Stream")));
        assert!(!is_event_stream(Some("application/json")));
        assert!(!is_event_stream(None));
    }

    proptest! {
        #[test]
        fn any_text_reads_without_panicking_and_each_event_came_from_a_data_line(body in "(?s).{0,200}") {
            let events = event_data(&body);
            prop_assert!(events.len() <= body.matches("data").count());
        }
    }
}
