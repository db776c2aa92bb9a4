//! How deep a template nests, counted before tera sees it. tera's parser
//! (pest) and its renderer recurse once per level: a block inside a block, a
//! bracket inside a bracket, and an operator of a chain (`a + b + c` is a
//! tree as deep as the chain). A few hundred levels overflow a 2 MiB thread
//! stack and abort the whole process, so a template that nests deeper than
//! the limits here is a problem at the line it goes too deep, and tera never
//! parses it. The count is one pass over the text, without recursion: it
//! skips comments, `{% raw %}` blocks and the strings inside tags, as tera
//! reads them.

/// `{% if %}`, `{% for %}`, `{% macro %}`, `{% block %}` and `{% filter %}`
/// nested in each other at most this deep.
pub const MAX_BLOCK_DEPTH: usize = 32;
/// `(` and `[` nested in each other inside one tag at most this deep.
pub const MAX_BRACKET_DEPTH: usize = 32;
/// Operators (`+`, `~`, `==`, `and`, `not`, …) in one tag at most.
pub const MAX_OPERATORS: usize = 64;

/// Which limit a template goes past.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Nesting {
    Blocks,
    Brackets,
    Operators,
}

impl Nesting {
    fn limit(self) -> usize {
        match self {
            Nesting::Blocks => MAX_BLOCK_DEPTH,
            Nesting::Brackets => MAX_BRACKET_DEPTH,
            Nesting::Operators => MAX_OPERATORS,
        }
    }
}

/// A template past one of the limits, at the byte where it went past.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TooDeep {
    pub nesting: Nesting,
    /// Byte offset in the template's text.
    pub offset: usize,
}

impl TooDeep {
    /// 1-based line and column in `text`.
    pub fn position(&self, text: &str) -> (usize, usize) {
        crate::diagnostics::problem::line_col(text, self.offset)
    }

    pub fn message(&self, template: &str) -> String {
        let limit = self.nesting.limit();
        match self.nesting {
            Nesting::Blocks => format!(
                "template `{template}` nests blocks ({{% if %}}, {{% for %}}, {{% macro %}}, \
                 {{% block %}}, {{% filter %}}) more than {limit} deep, the limit: the template \
                 parser would run out of stack; flatten it (e.g. join conditions with `and`)"
            ),
            Nesting::Brackets => format!(
                "template `{template}` nests brackets `(` and `[` more than {limit} deep in one \
                 tag, the limit: the template parser would run out of stack; split the \
                 expression with {{% set %}}"
            ),
            Nesting::Operators => format!(
                "template `{template}` has more than {limit} operators in one tag, the limit: \
                 tera reads a chain of operators as a tree as deep as the chain; split the \
                 expression with {{% set %}}"
            ),
        }
    }
}

const OPENS: [&str; 5] = ["if", "for", "macro", "block", "filter"];
const CLOSES: [&str; 5] = ["endif", "endfor", "endmacro", "endblock", "endfilter"];
const OPERATOR_WORDS: [&str; 5] = ["and", "or", "not", "in", "is"];

/// The first place `text` nests past a limit, if any.
pub fn check_nesting(text: &str) -> Result<(), TooDeep> {
    let bytes = text.as_bytes();
    let mut blocks = 0usize;
    let mut at = 0;
    while let Some(open) = find(bytes, at, b"{") {
        match bytes.get(open + 1) {
            Some(b'#') => {
                at = match find(bytes, open + 2, b"#}") {
                    Some(end) => end + 2,
                    None => return Ok(()),
                };
            }
            Some(b'{') => {
                let Some(end) = scan_tag(bytes, open + 2, b"}}")? else {
                    return Ok(());
                };
                at = end + 2;
            }
            Some(b'%') => {
                let Some(end) = scan_tag(bytes, open + 2, b"%}")? else {
                    return Ok(());
                };
                let keyword = first_word(&text[open + 2..end]);
                at = end + 2;
                if keyword == "raw" {
                    match end_of_raw(text, at) {
                        Some(after) => at = after,
                        None => return Ok(()),
                    }
                } else if OPENS.contains(&keyword) {
                    blocks += 1;
                    if blocks > MAX_BLOCK_DEPTH {
                        return Err(TooDeep {
                            nesting: Nesting::Blocks,
                            offset: open,
                        });
                    }
                } else if CLOSES.contains(&keyword) {
                    blocks = blocks.saturating_sub(1);
                }
            }
            _ => at = open + 1,
        }
    }
    Ok(())
}

/// The inside of one tag from `from`: its brackets and operators counted,
/// strings skipped. The offset of `close`, or `None` when the text ends
/// first (tera then says what is missing).
fn scan_tag(bytes: &[u8], from: usize, close: &[u8; 2]) -> Result<Option<usize>, TooDeep> {
    let mut brackets = 0usize;
    let mut operators = 0usize;
    let mut i = from;
    let too_deep = |nesting, offset| Err(TooDeep { nesting, offset });
    while i < bytes.len() {
        let b = bytes[i];
        if bytes[i..].starts_with(close) {
            return Ok(Some(i));
        }
        match b {
            b'"' | b'\'' | b'`' => match find(bytes, i + 1, &[b]) {
                Some(end) => i = end + 1,
                None => return Ok(None),
            },
            b'(' | b'[' => {
                brackets += 1;
                if brackets > MAX_BRACKET_DEPTH {
                    return too_deep(Nesting::Brackets, i);
                }
                i += 1;
            }
            b')' | b']' => {
                brackets = brackets.saturating_sub(1);
                i += 1;
            }
            b'+' | b'-' | b'*' | b'/' | b'%' | b'~' | b'<' | b'>' | b'=' | b'!' => {
                operators += 1;
                if operators > MAX_OPERATORS {
                    return too_deep(Nesting::Operators, i);
                }
                // `==`, `<=`, `!=`, `//` are one operator.
                while i < bytes.len()
                    && b"+-*/~<>=!".contains(&bytes[i])
                    && !bytes[i..].starts_with(close)
                {
                    i += 1;
                }
                if bytes[i..].starts_with(b"%") && !bytes[i..].starts_with(close) {
                    i += 1;
                }
            }
            b if b.is_ascii_alphabetic() || b == b'_' => {
                let start = i;
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
                let word = std::str::from_utf8(&bytes[start..i]).unwrap_or("");
                if OPERATOR_WORDS.contains(&word) {
                    operators += 1;
                    if operators > MAX_OPERATORS {
                        return too_deep(Nesting::Operators, start);
                    }
                }
            }
            _ => i += 1,
        }
    }
    Ok(None)
}

/// The first word of a statement tag's inside (`-` of whitespace control left out).
fn first_word(content: &str) -> &str {
    let content = content.trim_start_matches(|c: char| c == '-' || c.is_whitespace());
    let end = content
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(content.len());
    &content[..end]
}

/// Just past the `{% endraw %}` that ends a raw block whose body starts at `from`.
fn end_of_raw(text: &str, from: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut at = from;
    loop {
        let open = find(bytes, at, b"{%")?;
        let end = find(bytes, open + 2, b"%}")?;
        if first_word(&text[open + 2..end]) == "endraw" {
            return Some(end + 2);
        }
        at = end + 2;
    }
}

fn find(bytes: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    if from >= bytes.len() {
        return None;
    }
    bytes[from..]
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|i| from + i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nesting(text: &str) -> Option<(Nesting, (usize, usize))> {
        check_nesting(text)
            .err()
            .map(|e| (e.nesting, e.position(text)))
    }

    #[test]
    fn templates_within_the_limits_pass() {
        for text in [
            "plain text { with braces } and }} and %}",
            "{% if a and not b %}{{ (x + 1) * [1, 2][0] }}{% endif %}",
            "{# {{ ((((( #}{% raw %}{{ (((((((( }}{% endraw %}{{ x }}",
            "{{ '((((((' ~ \"[[[[\" ~ `))` }}",
            "{% if a %}{% elif b %}{% else %}{% endif %}",
        ] {
            assert_eq!(nesting(text), None, "{text}");
        }
        let deep = |n: usize| format!("{}x{}", "{% if a %}".repeat(n), "{% endif %}".repeat(n));
        assert_eq!(nesting(&deep(MAX_BLOCK_DEPTH)), None);
        let siblings = "{% for i in x %}{% endfor %}".repeat(10_000);
        assert_eq!(nesting(&siblings), None);
        let parens = |n: usize| format!("{{{{ {}1{} }}}}", "(".repeat(n), ")".repeat(n));
        assert_eq!(nesting(&parens(MAX_BRACKET_DEPTH)), None);
        let chain = |n: usize| format!("{{{{ 1{} }}}}", " + 1".repeat(n));
        assert_eq!(nesting(&chain(MAX_OPERATORS)), None);
        // Filters are a list to tera, not a tree.
        assert_eq!(
            nesting(&format!("{{{{ 1{} }}}}", " | abs".repeat(1_000))),
            None
        );
    }

    #[test]
    fn each_kind_of_nesting_past_its_limit_is_found_where_it_goes_too_deep() {
        let blocks = format!(
            "line one\n{}{}",
            "{% if a %}".repeat(MAX_BLOCK_DEPTH),
            "{%- for i in x -%}"
        );
        assert_eq!(
            nesting(&blocks),
            Some((Nesting::Blocks, (2, 10 * MAX_BLOCK_DEPTH + 1)))
        );
        let parens = format!("{{{{ {}1 }}}}", "(".repeat(MAX_BRACKET_DEPTH + 1));
        assert_eq!(
            nesting(&parens),
            Some((Nesting::Brackets, (1, 4 + MAX_BRACKET_DEPTH)))
        );
        let lists = format!("{{% set a = {} %}}", "[".repeat(100_000));
        assert_eq!(nesting(&lists).map(|n| n.0), Some(Nesting::Brackets));
        let nots = format!("{{% if {}true %}}{{% endif %}}", "not ".repeat(100_000));
        assert_eq!(nesting(&nots).map(|n| n.0), Some(Nesting::Operators));
        let chain = format!("{{{{ 1{} }}}}", " ~ 1".repeat(100_000));
        assert_eq!(nesting(&chain).map(|n| n.0), Some(Nesting::Operators));
        let compare = format!("{{{{ 1{} }}}}", "<=1".repeat(MAX_OPERATORS + 1));
        assert_eq!(nesting(&compare).map(|n| n.0), Some(Nesting::Operators));
    }

    #[test]
    fn a_string_hiding_a_tag_end_does_not_hide_what_follows() {
        let text = format!(
            "{{{{ \"}}}}\" ~ {}1{} }}}}",
            "(".repeat(100),
            ")".repeat(100)
        );
        assert_eq!(nesting(&text).map(|n| n.0), Some(Nesting::Brackets));
    }

    #[test]
    fn the_message_names_the_limit() {
        let e = TooDeep {
            nesting: Nesting::Blocks,
            offset: 0,
        };
        let message = e.message("policy.http.body");
        assert!(
            message.contains("`policy.http.body`") && message.contains("more than 32 deep"),
            "{message}"
        );
    }
}
