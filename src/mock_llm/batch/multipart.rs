//! Just enough `multipart/form-data` to read a file upload: the parts of a
//! body, each with its field name, file name and bytes.

/// One part of a form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    pub name: String,
    pub filename: Option<String>,
    pub data: Vec<u8>,
}

/// The boundary a `Content-Type` header names.
pub fn boundary(content_type: &str) -> Option<&str> {
    let (kind, params) = content_type.split_once(';')?;
    if !kind.trim().eq_ignore_ascii_case("multipart/form-data") {
        return None;
    }
    params.split(';').find_map(|p| {
        let (key, value) = p.trim().split_once('=')?;
        key.trim()
            .eq_ignore_ascii_case("boundary")
            .then(|| value.trim().trim_matches('"'))
            .filter(|b| !b.is_empty())
    })
}

fn find(haystack: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    if needle.is_empty() || haystack.len() < needle.len() {
        return None;
    }
    (from..=haystack.len() - needle.len()).find(|&i| &haystack[i..i + needle.len()] == needle)
}

/// The parts of `body`, or why it is not a form.
pub fn parts(body: &[u8], boundary: &str) -> Result<Vec<Part>, String> {
    let opening = format!("--{boundary}");
    let separator = format!("\r\n--{boundary}");
    if !body.starts_with(opening.as_bytes()) {
        return Err("the body does not start with its boundary".into());
    }
    let mut at = opening.len();
    let mut parts = Vec::new();
    loop {
        if body[at..].starts_with(b"--") {
            return Ok(parts);
        }
        if !body[at..].starts_with(b"\r\n") {
            return Err("a boundary is not followed by a line break".into());
        }
        at += 2;
        let head_end = find(body, b"\r\n\r\n", at).ok_or("a part without a blank line")?;
        let head = String::from_utf8_lossy(&body[at..head_end]).into_owned();
        let data_start = head_end + 4;
        let data_end = find(body, separator.as_bytes(), data_start)
            .ok_or("a part without a closing boundary")?;
        let (name, filename) = disposition(&head).ok_or("a part without a form-data name")?;
        parts.push(Part {
            name,
            filename,
            data: body[data_start..data_end].to_vec(),
        });
        at = data_end + separator.len();
    }
}

/// `name` and `filename` of a part's `Content-Disposition`.
fn disposition(head: &str) -> Option<(String, Option<String>)> {
    let line = head
        .lines()
        .find(|l| l.to_ascii_lowercase().starts_with("content-disposition:"))?;
    let value = |key: &str| {
        line.split(';').find_map(|p| {
            let (k, v) = p.trim().split_once('=')?;
            (k.trim() == key).then(|| v.trim().trim_matches('"').to_string())
        })
    };
    Some((value("name")?, value("filename")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_and_a_field_are_read_back() {
        let body = b"--XyZ\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\nbatch\r\n\
--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.jsonl\"\r\n\
Content-Type: application/jsonl\r\n\r\n{\"a\":1}\n{\"b\":2}\n\r\n--XyZ--\r\n";
        let b = boundary("multipart/form-data; boundary=XyZ").unwrap();
        let parts = parts(body, b).unwrap();
        assert_eq!(parts.len(), 2);
        assert_eq!(parts[0].name, "purpose");
        assert_eq!(parts[0].data, b"batch");
        assert_eq!(parts[1].filename.as_deref(), Some("a.jsonl"));
        assert_eq!(parts[1].data, b"{\"a\":1}\n{\"b\":2}\n");
    }

    #[test]
    fn a_body_that_is_not_a_form_is_refused() {
        assert!(boundary("application/json").is_none());
        assert!(parts(b"hello", "X").is_err());
        assert!(parts(
            b"--X\r\nContent-Disposition: form-data; name=\"f\"\r\n\r\nno end",
            "X"
        )
        .is_err());
    }
}
