//! The request lines of a batch input file, and their split into files
//! within the Batch API's limits.

use serde::Serialize;

/// Requests one batch file may hold.
pub const MAX_REQUESTS_PER_FILE: usize = 50_000;
/// Bytes one batch file may hold (the API's limit is 200 MB).
pub const MAX_FILE_BYTES: usize = 200 * 1000 * 1000;

#[derive(Serialize)]
struct Line<'a, B: Serialize> {
    custom_id: &'a str,
    method: &'static str,
    url: &'static str,
    body: &'a B,
}

/// One line of a batch input file: a chat completion `body` named `custom_id`
/// (without the newline).
pub fn request_line(custom_id: &str, body: &impl Serialize) -> Result<String, serde_json::Error> {
    serde_json::to_string(&Line {
        custom_id,
        method: "POST",
        url: "/v1/chat/completions",
        body,
    })
}

/// `lines` in order, split into files of at most `max_requests` lines and
/// `max_bytes` bytes (a newline after each line). A line longer than
/// `max_bytes` on its own is in a file of its own (the API will refuse it,
/// and say so in the batch's errors).
pub fn split_files<T>(
    lines: Vec<(T, String)>,
    max_requests: usize,
    max_bytes: usize,
) -> Vec<Vec<(T, String)>> {
    let max_requests = max_requests.max(1);
    let mut files = Vec::new();
    let mut current: Vec<(T, String)> = Vec::new();
    let mut bytes = 0;
    for (key, line) in lines {
        let size = line.len() + 1;
        if !current.is_empty() && (current.len() >= max_requests || bytes + size > max_bytes) {
            files.push(std::mem::take(&mut current));
            bytes = 0;
        }
        bytes += size;
        current.push((key, line));
    }
    if !current.is_empty() {
        files.push(current);
    }
    files
}

/// A file's bytes: each line and a newline.
pub fn file_bytes<T>(lines: &[(T, String)]) -> Vec<u8> {
    let mut out = Vec::with_capacity(lines.iter().map(|(_, l)| l.len() + 1).sum());
    for (_, line) in lines {
        out.extend_from_slice(line.as_bytes());
        out.push(b'\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_line_names_its_id_method_url_and_body() {
        let body =
            serde_json::json!({"model": "m", "messages": [{"role": "user", "content": "hi\n"}]});
        let line = request_line("j1-2-0-single-0-ab-1", &body).unwrap();
        assert!(!line.contains('\n'), "one line: {line}");
        let back: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(back["custom_id"], "j1-2-0-single-0-ab-1");
        assert_eq!(back["method"], "POST");
        assert_eq!(back["url"], "/v1/chat/completions");
        assert_eq!(back["body"], body);
    }

    #[test]
    fn files_split_at_the_request_count_and_at_the_byte_limit() {
        let lines: Vec<(usize, String)> = (0..7).map(|i| (i, "x".repeat(9))).collect();
        let by_count = split_files(lines.clone(), 3, MAX_FILE_BYTES);
        assert_eq!(
            by_count.iter().map(Vec::len).collect::<Vec<_>>(),
            vec![3, 3, 1]
        );
        // Each line is 10 bytes with its newline: 25 bytes hold two.
        let by_bytes = split_files(lines, 100, 25);
        assert_eq!(by_bytes.len(), 4);
        assert!(by_bytes.iter().all(|f| file_bytes(f).len() <= 25));
        let order: Vec<usize> = by_bytes.into_iter().flatten().map(|(k, _)| k).collect();
        assert_eq!(order, (0..7).collect::<Vec<_>>());
    }

    #[test]
    fn a_line_over_the_byte_limit_goes_alone() {
        let lines = vec![(0, "a".into()), (1, "b".repeat(50)), (2, "c".into())];
        let files = split_files(lines, 100, 10);
        assert_eq!(files.len(), 3);
    }
}
