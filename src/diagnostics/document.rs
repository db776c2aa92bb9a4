//! A TOML document read with the position of every key, so that each problem
//! names its line: every unknown key (serde stops at the first; this reports
//! them all, with a "did you mean"), the first type error of each table, and
//! checks made after parsing.
//!
//! A config sent as JSON is rendered as TOML first ([`json_as_toml`]); its
//! problems then name the field path instead of a line of that rendering.

use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use toml::de::{DeTable, DeValue, ValueDeserializer};
use toml::Spanned;

use super::problem::{line_col, Problem};

/// A value of the document with its span.
pub type Node<'t> = Spanned<DeValue<'t>>;

/// The text problems are reported against.
#[derive(Debug, Clone)]
pub struct Source<'t> {
    pub file: PathBuf,
    pub text: &'t str,
    /// Problems name lines (a file a person wrote) or field paths (a rendering).
    by_line: bool,
}

impl<'t> Source<'t> {
    /// TOML as a person wrote it: problems name its lines.
    pub fn toml(file: impl AsRef<Path>, text: &'t str) -> Self {
        Source {
            file: file.as_ref().to_path_buf(),
            text,
            by_line: true,
        }
    }

    /// TOML rendered from another format (a JSON body): problems name fields.
    pub fn rendered(file: impl AsRef<Path>, text: &'t str) -> Self {
        Source {
            by_line: false,
            ..Source::toml(file, text)
        }
    }

    /// Whether problems name lines (not a rendering).
    pub fn by_line(&self) -> bool {
        self.by_line
    }

    /// The document's top-level table, or the syntax error.
    pub fn parse(&self) -> Result<DeTable<'t>, Vec<Problem>> {
        match DeTable::parse(self.text) {
            Ok(table) => Ok(table.into_inner()),
            Err(e) => Err(vec![Problem::from_toml_error(&self.file, self.text, &e)]),
        }
    }

    /// A problem about `field`, placed at the line of `span` when the text is
    /// the user's own.
    pub fn at(&self, span: Range<usize>, field: &str, message: impl Into<String>) -> Problem {
        self.placed(span, field, message.into(), true)
    }

    /// [`Source::at`], the field left out of a message placed at a line when
    /// the message names it already (an unknown key).
    fn at_key(&self, span: Range<usize>, field: &str, message: String) -> Problem {
        self.placed(span, field, message, false)
    }

    fn placed(
        &self,
        span: Range<usize>,
        field: &str,
        message: String,
        name_field: bool,
    ) -> Problem {
        // A span over the whole text (e.g. a missing top-level key) has no useful line.
        let whole = span.start == 0 && span.end >= self.text.trim_end().len();
        if self.by_line && !span.is_empty() && !whole {
            let (line, col) = line_col(self.text, span.start);
            let message = if field.is_empty() || !name_field {
                message
            } else {
                format!("{field}: {message}")
            };
            Problem::new(
                &self.file,
                Some(format!("line {line}, column {col}")),
                message,
            )
        } else if field.is_empty() {
            Problem::in_file(&self.file, message)
        } else {
            Problem::at_field(&self.file, field, message)
        }
    }

    /// A serde error met while reading `node` (found at `field`).
    fn error(&self, err: &toml::de::Error, field: &str, node: &Node<'_>) -> Problem {
        let message = err.message().trim().to_string();
        match err.span() {
            Some(span) => {
                let inner = field_at(node, &span, field);
                self.at(span, &inner, message)
            }
            None => self.at(node.span(), field, message),
        }
    }
}

/// The path of the deepest key under `node` whose key or value holds `span`.
fn field_at(node: &Node<'_>, span: &Range<usize>, prefix: &str) -> String {
    let join = |key: &str| {
        if prefix.is_empty() {
            key.to_string()
        } else {
            format!("{prefix}.{key}")
        }
    };
    match node.get_ref() {
        DeValue::Table(table) => {
            for (key, value) in table.iter() {
                let holds = |r: Range<usize>| r.start <= span.start && span.end <= r.end;
                if holds(value.span()) || holds(key.span()) {
                    return field_at(value, span, &join(key.get_ref()));
                }
            }
            prefix.to_string()
        }
        DeValue::Array(items) => {
            for (i, value) in items.iter().enumerate() {
                let r = value.span();
                if r.start <= span.start && span.end <= r.end {
                    return field_at(value, span, &format!("{prefix}[{i}]"));
                }
            }
            prefix.to_string()
        }
        _ => prefix.to_string(),
    }
}

/// `prefix.key`, or `key` at the top level.
pub fn child(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_string()
    } else {
        format!("{prefix}.{key}")
    }
}

/// The fields a derived struct reads (serde's `FIELDS`), empty for other types.
pub fn fields_of<T: DeserializeOwned>() -> &'static [&'static str] {
    serde_aux::serde_introspection::serde_introspect::<T>()
}

/// The known key closest to `key`, when it is close enough to be a typo.
pub fn suggestion<'k>(key: &str, known: &[&'k str]) -> Option<&'k str> {
    known
        .iter()
        .map(|k| (strsim::normalized_damerau_levenshtein(key, k), *k))
        .filter(|(score, _)| *score >= 0.6)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, k)| k)
}

/// "unknown field `x`; did you mean `y`?" and the known keys.
pub fn unknown_key_message(key: &str, known: &[&str]) -> String {
    let hint = match suggestion(key, known) {
        Some(k) => format!("; did you mean `{k}`?"),
        None => String::new(),
    };
    let mut sorted: Vec<&str> = known.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    format!(
        "unknown field `{key}`{hint} (known here: {})",
        sorted.join(", ")
    )
}

/// A config file's text and the folder its relative paths resolve against
/// (after symlinks where it can be); `what` names the file in the problem.
pub fn read_config_file(path: &Path, what: &str) -> Result<(String, PathBuf), Vec<Problem>> {
    let text = crate::regular_file::read_to_string(path)
        .map_err(|e| vec![Problem::in_file(path, format!("cannot read {what}: {e}"))])?;
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let base = parent
        .canonicalize()
        .or_else(|_| std::path::absolute(parent))
        .map_err(|e| {
            vec![Problem::in_file(
                path,
                format!("cannot resolve its folder: {e}"),
            )]
        })?;
    Ok((text, base))
}

impl<'t> Source<'t> {
    /// Remove from the table `node` every key not in `known`, reporting each
    /// at its line; `explain` may say more about a key (e.g. that it belongs
    /// to another kind of table). Returns whether any key was removed.
    pub fn drop_unknown_keys(
        &self,
        field: &str,
        node: &mut Node<'t>,
        known: &[&str],
        explain: &dyn Fn(&str) -> Option<String>,
        problems: &mut Vec<Problem>,
    ) -> bool {
        let DeValue::Table(table) = node.get_mut() else {
            return false;
        };
        let unknown: Vec<(String, Range<usize>)> = table
            .iter()
            .filter(|(key, _)| !known.contains(&key.get_ref().as_ref()))
            .map(|(key, _)| (key.get_ref().to_string(), key.span()))
            .collect();
        for (name, span) in &unknown {
            let message = explain(name).unwrap_or_else(|| unknown_key_message(name, known));
            problems.push(self.at_key(span.clone(), &child(field, name), message));
            table.remove(name.as_str());
        }
        !unknown.is_empty()
    }

    /// Deserialize `T` from `node` as it is (no key check); the first type
    /// error, at its line, when it does not fit.
    /// The keys of `root` that are not `tables`, as `T`: an unknown one is a
    /// problem at its line, with the known keys and tables suggested.
    pub fn read_head<T: DeserializeOwned>(
        &self,
        root: DeTable<'t>,
        tables: &[&str],
        problems: &mut Vec<Problem>,
    ) -> Option<T> {
        let known: Vec<&str> = fields_of::<T>().iter().chain(tables).copied().collect();
        let mut head = Node::new(0..self.text.len(), DeValue::Table(root));
        self.drop_unknown_keys(
            "",
            &mut head,
            &known,
            &|key| Some(unknown_key_message(key, &known)),
            problems,
        );
        self.deserialize("", &head, problems)
    }

    pub fn deserialize<T: DeserializeOwned>(
        &self,
        field: &str,
        node: &Node<'t>,
        problems: &mut Vec<Problem>,
    ) -> Option<T> {
        match T::deserialize(ValueDeserializer::from(node.clone())) {
            Ok(value) => Some(value),
            Err(e) => {
                problems.push(self.error(&e, field, node));
                None
            }
        }
    }

    /// `T` (a struct) from the table `node`: every key `T` does not know is
    /// reported, then the first type error. `None` when anything was wrong.
    pub fn typed<T: DeserializeOwned>(
        &self,
        field: &str,
        mut node: Node<'t>,
        problems: &mut Vec<Problem>,
    ) -> Option<T> {
        let known = fields_of::<T>();
        let before = problems.len();
        if !known.is_empty() && node.get_ref().is_table() {
            self.drop_unknown_keys(field, &mut node, known, &|_| None, problems);
        }
        let value = self.deserialize(field, &node, problems);
        if problems.len() == before {
            value
        } else {
            None
        }
    }

    /// The value of `key` in `table` with the span of its key, if present.
    pub fn take(table: &mut DeTable<'t>, key: &str) -> Option<(Range<usize>, Node<'t>)> {
        let span = table.get_key_value(key).map(|(k, _)| k.span())?;
        table.remove(key).map(|value| (span, value))
    }
}

/// A JSON text rendered as TOML (same keys and tables), for the TOML reader.
pub fn json_as_toml(file: &Path, text: &str) -> Result<String, Vec<Problem>> {
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| vec![Problem::from_json_error(file, &e)])?;
    let mut nulls = Vec::new();
    find_nulls(&value, "", &mut nulls);
    if !nulls.is_empty() {
        return Err(nulls
            .into_iter()
            .map(|field| {
                Problem::at_field(
                    file,
                    &field,
                    "is null; leave the key out for its default instead",
                )
            })
            .collect());
    }
    if !value.is_object() {
        return Err(vec![Problem::in_file(
            file,
            "is not a JSON object; send the config's tables as one object, e.g. {\"name\": \
             \"retail-v1\", \"endpoints\": {...}, ...}",
        )]);
    }
    let table =
        toml::Value::try_from(&value).map_err(|e| vec![Problem::in_file(file, e.to_string())])?;
    toml::to_string(&table).map_err(|e| vec![Problem::in_file(file, e.to_string())])
}

fn find_nulls(value: &serde_json::Value, at: &str, found: &mut Vec<String>) {
    match value {
        serde_json::Value::Null => found.push(at.to_string()),
        serde_json::Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                find_nulls(item, &format!("{at}[{i}]"), found);
            }
        }
        serde_json::Value::Object(map) => {
            for (key, item) in map {
                find_nulls(item, &child(at, key), found);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::*;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Table {
        #[allow(dead_code)]
        concurrency: u32,
        #[serde(default)]
        #[allow(dead_code)]
        max_turns: u32,
    }

    #[test]
    fn the_fields_of_a_struct_are_found_without_a_value() {
        assert_eq!(fields_of::<Table>(), ["concurrency", "max_turns"]);
        assert!(fields_of::<u32>().is_empty());
    }

    #[test]
    fn every_unknown_key_is_reported_at_its_line_with_a_suggestion() {
        let text = "concurency = 1\nconcurrency = 2\nmax_turnz = 3\n";
        let source = Source::toml("job.toml", text);
        let table = source.parse().unwrap();
        let node = Spanned::new(0..text.len(), DeValue::Table(table));
        let mut problems = Vec::new();
        assert!(source.typed::<Table>("", node, &mut problems).is_none());
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert_eq!(problems[0].location.as_deref(), Some("line 1, column 1"));
        assert!(problems[0].message.contains("did you mean `concurrency`"));
        assert_eq!(problems[1].location.as_deref(), Some("line 3, column 1"));
        assert!(problems[1].message.contains("unknown field `max_turnz`"));
    }

    #[test]
    fn a_type_error_in_a_rendering_names_the_field_not_a_line() {
        let text = json_as_toml(Path::new("body"), r#"{"concurrency": "many"}"#).unwrap();
        let source = Source::rendered("body", &text);
        let table = source.parse().unwrap();
        let node = Spanned::new(0..text.len(), DeValue::Table(table));
        let mut problems = Vec::new();
        assert!(source.typed::<Table>("", node, &mut problems).is_none());
        assert_eq!(problems[0].location.as_deref(), Some("concurrency"));
    }

    #[test]
    fn json_nulls_are_named_by_their_path() {
        let problems = json_as_toml(Path::new("body"), r#"{"a": {"b": [1, null]}}"#).unwrap_err();
        assert_eq!(problems[0].location.as_deref(), Some("a.b[1]"));
    }
}
