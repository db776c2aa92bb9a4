//! One rule for query values across the JSON API (`/v1/…`): a value that
//! does not parse is a 400 naming its parameter, and a blank value (`?after=`,
//! `?min_reward=`, `?termination=%20`) is one: a parameter not wanted is left
//! out, never sent empty. A value that parses but is out of range, or filters
//! that contradict each other, are a 422 naming the field. The web UI's pages
//! are not under this rule: an HTML form sends its blank fields, which there
//! mean "any".

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::ApiError;

/// What problems with a query string name as their file.
pub const QUERY_LABEL: &str = "query string";

/// The query parameter only auth reads (a browser's one-time `?token=`).
const AUTH_PARAMETER: &str = "token";

/// Refuse a request to the API whose query string holds a blank value.
pub async fn refuse_blank_values(request: Request, next: Next) -> Response {
    if let Some(field) = blank_parameter(request.uri().query()) {
        return ApiError::BadRequest(format!(
            "query parameter `{field}` is empty: give it a value, or leave `{field}` out \
             (a blank value is not read as \"not given\")"
        ))
        .into_response();
    }
    next.run(request).await
}

/// The first parameter of `query` given without a value, or with only spaces.
fn blank_parameter(query: Option<&str>) -> Option<String> {
    let pairs: Vec<(String, String)> = serde_urlencoded::from_str(query?).ok()?;
    pairs
        .into_iter()
        .find(|(key, value)| key != AUTH_PARAMETER && is_blank(value))
        .map(|(key, _)| key)
}

/// Whether `value` is only white space as the OpenAPI document means it: a
/// text parameter's schema has the pattern `\S`, and a JSON Schema pattern
/// is an ECMAScript regex, whose `\s` is not Rust's `char::is_whitespace`:
/// it holds U+FEFF (the byte-order mark) and not U+0085 (next line).
pub fn is_blank(value: &str) -> bool {
    value.chars().all(is_pattern_space)
}

/// A character ECMAScript's `\s` matches: WhiteSpace and LineTerminator.
fn is_pattern_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202f}'
                | '\u{205f}'
                | '\u{3000}'
                | '\u{feff}'
    )
}

/// What a number in the query string must read as.
#[derive(Debug, Clone, Copy)]
pub enum Number {
    /// A whole number within 64 bits.
    Whole,
    /// Any number (`NaN` and infinities read, and are then out of range).
    Real,
}

/// A 400 for the first of `fields` given with a value that is not a number
/// of its kind (`what` says what would do); range checks, 422s, come later.
pub fn refuse_unparsed(fields: &[(&str, &Option<String>, Number, &str)]) -> Result<(), ApiError> {
    for (field, value, number, what) in fields {
        let Some(text) = value.as_deref().map(str::trim) else {
            continue;
        };
        let reads = match number {
            Number::Whole => text.parse::<i64>().is_ok(),
            Number::Real => text.parse::<f64>().is_ok(),
        };
        if !reads {
            return Err(ApiError::BadRequest(format!(
                "query parameter `{field}`: '{text}' is not a number; give {what}, or leave \
                 `{field}` out"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_blank_value_is_found_whatever_its_parameter() {
        assert_eq!(blank_parameter(Some("after=")), Some("after".into()));
        assert_eq!(
            blank_parameter(Some("limit=2&min_reward=")),
            Some("min_reward".into())
        );
        assert_eq!(blank_parameter(Some("a=1&new_job")), Some("new_job".into()));
        assert_eq!(
            blank_parameter(Some("termination=%20+")),
            Some("termination".into())
        );
        assert_eq!(blank_parameter(Some("token=&limit=2")), None);
        // As the document's pattern \S reads them: U+0085 is text, U+FEFF space.
        assert_eq!(blank_parameter(Some("base=%C2%85")), None);
        assert_eq!(
            blank_parameter(Some("base=%EF%BB%BF%E2%80%A8")),
            Some("base".into())
        );
        for c in ['\u{85}', '\u{180e}', '\u{200b}', 'x'] {
            assert!(!is_blank(&c.to_string()), "{c:?}");
        }
        for c in ['\u{a0}', '\u{3000}', '\u{feff}', '\u{2029}', '\u{b}'] {
            assert!(is_blank(&c.to_string()), "{c:?}");
        }
        assert_eq!(blank_parameter(Some("limit=2&scenario=s1")), None);
        assert_eq!(blank_parameter(None), None);
    }

    #[test]
    fn a_number_that_does_not_read_is_refused_and_one_out_of_range_is_not() {
        let bad = Some("abc".to_string());
        let nan = Some("NaN".to_string());
        let negative = Some("-1".to_string());
        let huge = Some("99999999999999999999".to_string());
        assert!(refuse_unparsed(&[("min_reward", &nan, Number::Real, "a reward")]).is_ok());
        assert!(refuse_unparsed(&[("limit", &negative, Number::Whole, "a page size")]).is_ok());
        let Err(ApiError::BadRequest(message)) = refuse_unparsed(&[
            ("limit", &None, Number::Whole, "a page size"),
            ("min_reward", &bad, Number::Real, "a reward such as 0.5"),
        ]) else {
            panic!("abc is read as a number");
        };
        assert!(
            message.contains("`min_reward`: 'abc' is not a number; give a reward such as 0.5"),
            "{message}"
        );
        assert!(refuse_unparsed(&[("after", &huge, Number::Whole, "an id")]).is_err());
    }
}
