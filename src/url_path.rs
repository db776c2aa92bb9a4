//! The path of an agent call, below the endpoint's `base_url`, in the one
//! form that is sent. Servers read a path differently: most decode `%2e%2e`
//! to `..`, some take `\` for `/`, Tomcat reads `..;x` as `..`, a proxy may
//! merge `//`. A call may not leave the base URL's path (the service's
//! egress allowlist checks only that), so every path is read here the way
//! the most generous server would read it: split at `/` and `\`, each
//! segment percent-decoded, `.` and `..` resolved, empty segments dropped.
//! A path whose `..` climbs above the base URL, or that hides a separator or
//! a dot segment where a server could find one (`%2f`, `%252e`, `..;x`), is
//! refused; any other is written back with only the characters that need
//! it percent-encoded, and exactly that is sent. The query (after `?`) is
//! kept as written.

use percent_encoding::{percent_decode, utf8_percent_encode, AsciiSet, CONTROLS};

/// Encoded in a path segment: all but RFC 3986's unreserved characters,
/// sub-delims, `:` and `@`.
const SEGMENT: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'/')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'[')
    .add(b'\\')
    .add(b']')
    .add(b'^')
    .add(b'`')
    .add(b'{')
    .add(b'|')
    .add(b'}');

/// Why a path is refused: the words after "the path ".
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathRefused {
    #[error(
        "climbs above the endpoint's base_url with `..` (read after percent-decoding, as a \
         server reads it); a call stays below its base_url: remove the `..`"
    )]
    LeavesPrefix,
    #[error(
        "has `{0}` inside a segment, which a server may read as a separator or a dot \
         segment; write the path without it"
    )]
    Hidden(String),
    #[error("has a `%` that is not followed by two hex digits; write a `%` as %25")]
    BadEscape,
    #[error("has a fragment (`#`), which is never sent; remove it")]
    Fragment,
    #[error("does not start with `/`; a path below the base_url starts with one")]
    Relative,
}

/// `path` (empty, or starting with `/`; a query may follow) as it is sent:
/// normalised, or refused. Normalising a normalised path gives it back.
pub fn normalize_path(path: &str) -> Result<String, PathRefused> {
    if path.contains('#') {
        return Err(PathRefused::Fragment);
    }
    let (path, query) = match path.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (path, None),
    };
    if path.is_empty() {
        return Ok(query.map_or(String::new(), |q| format!("?{q}")));
    }
    if !path.starts_with(['/', '\\']) {
        return Err(PathRefused::Relative);
    }
    let mut kept: Vec<String> = Vec::new();
    let raw: Vec<&str> = path.split(['/', '\\']).skip(1).collect();
    let mut trailing_slash = false;
    for (i, segment) in raw.iter().enumerate() {
        let last = i + 1 == raw.len();
        let decoded = decode(segment)?;
        let text = String::from_utf8_lossy(&decoded);
        let head = text.split(';').next().unwrap_or("");
        match text.as_ref() {
            "" => trailing_slash = last,
            "." => trailing_slash = last,
            ".." => {
                if kept.pop().is_none() {
                    return Err(PathRefused::LeavesPrefix);
                }
                trailing_slash = last;
            }
            _ if head == "." || head == ".." => {
                return Err(PathRefused::Hidden(format!("{head};")));
            }
            _ => {
                if let Some(hidden) = hidden_in(&decoded) {
                    return Err(PathRefused::Hidden(hidden.into()));
                }
                kept.push(encode(&decoded));
                trailing_slash = false;
            }
        }
    }
    let mut out = String::with_capacity(path.len());
    for segment in &kept {
        out.push('/');
        out.push_str(segment);
    }
    if trailing_slash || kept.is_empty() {
        out.push('/');
    }
    if let Some(query) = query {
        out.push('?');
        out.push_str(query);
    }
    Ok(out)
}

/// A segment's bytes, its `%XX` escapes decoded once.
fn decode(segment: &str) -> Result<Vec<u8>, PathRefused> {
    let bytes = segment.as_bytes();
    for (i, b) in bytes.iter().enumerate() {
        if *b == b'%'
            && !(bytes.get(i + 1).is_some_and(u8::is_ascii_hexdigit)
                && bytes.get(i + 2).is_some_and(u8::is_ascii_hexdigit))
        {
            return Err(PathRefused::BadEscape);
        }
    }
    Ok(percent_decode(bytes).collect())
}

/// What a decoded segment holds that a server could read as structure: a
/// separator, a NUL or another control character, or an escape left after
/// decoding (decoded again, `%252e` is `.`).
fn hidden_in(decoded: &[u8]) -> Option<&'static str> {
    if decoded.contains(&b'/') {
        Some("%2F")
    } else if decoded.contains(&b'\\') {
        Some("%5C")
    } else if decoded.iter().any(|b| b.is_ascii_control()) {
        Some("a control character")
    } else if decoded
        .windows(3)
        .any(|w| w[0] == b'%' && w[1].is_ascii_hexdigit() && w[2].is_ascii_hexdigit())
    {
        Some("%25")
    } else {
        None
    }
}

fn encode(decoded: &[u8]) -> String {
    match std::str::from_utf8(decoded) {
        Ok(text) => utf8_percent_encode(text, SEGMENT).to_string(),
        // Bytes that are not UTF-8 (an overlong `%c0%ae`) stay escaped.
        Err(_) => decoded
            .iter()
            .map(|&b| {
                if b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@".contains(&b) {
                    char::from(b).to_string()
                } else {
                    format!("%{b:02X}")
                }
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_plain_path_is_sent_as_written() {
        for path in [
            "",
            "/",
            "/v1/responses",
            "/threads/sparring-0123/runs/wait",
            "/a/b/",
            "/rpc?x=1&y=%2F..",
            "/a:b@c/~x_y-z.json",
            "/caf%C3%A9",
        ] {
            assert_eq!(normalize_path(path).as_deref(), Ok(path), "{path}");
        }
    }

    #[test]
    fn dot_segments_and_empty_segments_are_resolved_in_every_spelling() {
        for (path, sent) in [
            ("/a/./b", "/a/b"),
            ("/a/b/../c", "/a/c"),
            ("/a/%2e%2e/c", "/c"),
            ("/a/.%2E/c", "/c"),
            ("/a/%2E./c", "/c"),
            ("/a\\..\\c", "/c"),
            ("/a//b", "/a/b"),
            ("/a/b/..", "/a/"),
            ("/a/.", "/a/"),
            ("/a/..", "/"),
            ("/a%2Db", "/a-b"),
            ("/caf\u{e9}", "/caf%C3%A9"),
            ("/a b", "/a%20b"),
            ("/x/%c0%ae%c0%ae/y", "/x/%C0%AE%C0%AE/y"),
        ] {
            assert_eq!(normalize_path(path).as_deref(), Ok(sent), "{path}");
        }
    }

    #[test]
    fn a_path_that_leaves_its_prefix_or_hides_structure_is_refused() {
        for path in [
            "/../admin/secret",
            "/%2e%2e/admin/secret",
            "/.%2E/admin",
            "/%2E%2e/admin",
            "/a/../../admin",
            "/..\\admin",
            "\\..\\admin",
            "/a/%2e%2e/%2e%2e/admin",
            "/..",
        ] {
            assert_eq!(
                normalize_path(path),
                Err(PathRefused::LeavesPrefix),
                "{path}"
            );
        }
        for (path, why) in [
            ("/a%2f..%2f..%2fadmin", PathRefused::Hidden("%2F".into())),
            ("/a%5C..", PathRefused::Hidden("%5C".into())),
            ("/%252e%252e/admin", PathRefused::Hidden("%25".into())),
            ("/..;x/admin", PathRefused::Hidden("..;".into())),
            ("/a/%00", PathRefused::Hidden("a control character".into())),
            ("/a%zz", PathRefused::BadEscape),
            ("/a%2", PathRefused::BadEscape),
            ("/a#frag", PathRefused::Fragment),
        ] {
            assert_eq!(normalize_path(path), Err(why), "{path}");
        }
    }

    proptest! {
        #[test]
        fn a_sent_path_is_its_own_normal_form_and_never_climbs(
            segments in prop::collection::vec("([a-z]{1,3}|\\.|\\.\\.|%2[eE]|%2[eE]%2[eE]|\\.%2[eE]|)", 0..8),
            trailing in any::<bool>(),
        ) {
            let mut path = String::new();
            for s in &segments {
                path.push('/');
                path.push_str(s);
            }
            if trailing {
                path.push('/');
            }
            if let Ok(sent) = normalize_path(&path) {
                prop_assert_eq!(normalize_path(&sent), Ok(sent.clone()));
                prop_assert!(sent.is_empty() || sent.starts_with('/'));
                for segment in sent.split('/') {
                    let decoded = percent_decode(segment.as_bytes()).decode_utf8_lossy().into_owned();
                    prop_assert!(decoded != "." && decoded != "..", "{} from {}", sent, path);
                }
            }
        }
    }
}
