//! Reading a value from an agent's answer at a JSON Pointer, as
//! `[policy.http]`'s `reply`, `trace`, `usage` and `session_create.id` name
//! it (`config::policy::check_pointer` checks the syntax).

/// The value at `pointer` in `value` ([`crate::config::policy::check_pointer`]'s syntax, `-N`
/// counting from an array's end).
pub fn resolve<'v>(value: &'v serde_json::Value, pointer: &str) -> Option<&'v serde_json::Value> {
    let mut at = value;
    for token in pointer.split('/').skip(1) {
        let token = token.replace("~1", "/").replace("~0", "~");
        at = match at {
            serde_json::Value::Object(map) => map.get(&token)?,
            serde_json::Value::Array(items) => {
                let index = match token.strip_prefix('-') {
                    Some(back) => {
                        let back: usize = back.parse().ok().filter(|&n| n > 0)?;
                        items.len().checked_sub(back)?
                    }
                    None => {
                        if token.len() > 1 && token.starts_with('0') {
                            return None;
                        }
                        token.parse().ok()?
                    }
                };
                items.get(index)?
            }
            _ => return None,
        };
    }
    Some(at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pointers_resolve_keys_indexes_and_indexes_from_the_end() {
        let v = json!({"messages": [{"content": "a"}, {"content": "b"}], "a/b": {"~": 1}});
        assert_eq!(resolve(&v, "/messages/-1/content"), Some(&json!("b")));
        assert_eq!(resolve(&v, "/messages/0/content"), Some(&json!("a")));
        assert_eq!(resolve(&v, "/messages/-2/content"), Some(&json!("a")));
        assert_eq!(resolve(&v, "/messages/-3/content"), None);
        assert_eq!(resolve(&v, "/messages/-0"), None);
        assert_eq!(resolve(&v, "/messages/01"), None);
        assert_eq!(resolve(&v, "/a~1b/~0"), Some(&json!(1)));
        assert_eq!(resolve(&v, ""), Some(&v));
        assert_eq!(resolve(&v, "/nothing"), None);
    }
}
