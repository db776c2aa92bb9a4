//! A row to a [`Persona`]: each field is a column, or a template over the row
//! (Tera, sandboxed as every sparring template is: it reaches only the row)
//! when its text holds `{{` or `{%`. `[persona_table.derived]` templates add
//! attributes (e.g. `age_band`) that the fields' templates may use too.
//! Every column and every derived attribute is kept in `attributes`.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;
use tera::{Context, Tera};

use crate::config::file::PersonaTableFile;
use crate::error_chain::error_chain;
use crate::prompt::{check_calls, check_nesting, outside_calls, sandboxed_tera};

use super::super::Persona;
use super::{Columns, Row, TableError};

const DEFAULT_SPEAKING_STYLE: &str = "Writes plainly, in their own words.";
const DEFAULT_LANGUAGE: &str = "English";

/// How a field is read from a row.
enum Source {
    Column(String),
    /// The template's name in the mapping's tera instance.
    Template(String),
}

pub struct Mapping {
    config: std::path::PathBuf,
    tera: Tera,
    id_column: String,
    fields: BTreeMap<String, Source>,
    /// Derived attribute → its template's name, rendered in name order.
    derived: Vec<String>,
}

fn is_template(text: &str) -> bool {
    text.contains("{{") || text.contains("{%")
}

impl Mapping {
    pub fn new(config: &Path, settings: &PersonaTableFile) -> Result<Mapping, TableError> {
        let mut tera = sandboxed_tera();
        let mut add = |key: String, text: &str| -> Result<(), TableError> {
            if let Err(too_deep) = check_nesting(text) {
                let (line, column) = too_deep.position(text);
                return Err(TableError::config(
                    config,
                    &key,
                    format!(
                        "template line {line}, column {column}: {}",
                        too_deep.message(&key)
                    ),
                ));
            }
            tera.add_raw_template(&key, text).map_err(|e| {
                TableError::config(
                    config,
                    &key,
                    format!("is not a valid template: {}", error_chain(&e)),
                )
            })?;
            if let Ok(template) = tera.get_template(&key) {
                if let Some(call) = outside_calls(template, text).first() {
                    return Err(TableError::config(config, &key, call.message(&key)));
                }
            }
            Ok(())
        };
        let mut fields = BTreeMap::new();
        for (field, text) in &settings.fields {
            let key = format!("persona_table.fields.{field}");
            let source = if is_template(text) {
                add(key.clone(), text)?;
                Source::Template(key)
            } else {
                Source::Column(text.clone())
            };
            fields.insert(field.clone(), source);
        }
        let mut derived = Vec::new();
        for (name, text) in &settings.derived {
            let key = format!("persona_table.derived.{name}");
            add(key.clone(), text)?;
            derived.push(key);
        }
        let names: Vec<&str> = fields
            .values()
            .filter_map(|source| match source {
                Source::Template(key) => Some(key.as_str()),
                Source::Column(_) => None,
            })
            .chain(derived.iter().map(String::as_str))
            .collect();
        let parsed: Vec<(&str, &tera::Template)> = names
            .iter()
            .filter_map(|name| Some((*name, tera.get_template(name).ok()?)))
            .collect();
        if let Some(call) = check_calls(&parsed).into_iter().next() {
            return Err(TableError::config(config, &call.template, call.message));
        }
        Ok(Mapping {
            config: config.to_path_buf(),
            tera,
            id_column: settings.id.clone(),
            fields,
            derived,
        })
    }

    /// Every column a field names is in `row`, and every template renders
    /// over it (a template over a column the table lacks fails here, once,
    /// rather than on every row).
    pub fn check_row(&self, table: &Path, row: &Row) -> Result<(), TableError> {
        for (field, source) in &self.fields {
            if let Source::Column(column) = source {
                if !row.columns.contains_key(column) {
                    return Err(super::sample::missing_column(
                        table,
                        row,
                        column,
                        &format!("[persona_table.fields] {field}"),
                    ));
                }
            }
        }
        self.persona(table, row).map(|_| ())
    }

    /// Add the derived attributes to `row`, in name order (each may use
    /// those before it).
    pub fn derive(&self, table: &Path, row: &mut Row) -> Result<(), TableError> {
        for key in &self.derived {
            let value = self.render(table, row, key, &row.columns)?;
            let name = key.trim_start_matches("persona_table.derived.");
            row.columns
                .insert(name.to_string(), Value::String(value.trim().to_string()));
        }
        Ok(())
    }

    /// The persona of one row, its derived attributes already added (knobs
    /// are the caller's).
    pub fn persona(&self, table: &Path, row: &Row) -> Result<Persona, TableError> {
        let attributes: &Columns = &row.columns;
        let text = |field: &str, default: Option<&str>| -> Result<Option<String>, TableError> {
            match self.fields.get(field) {
                Some(Source::Column(c)) => Ok(Some(match attributes.get(c) {
                    Some(Value::String(s)) => s.clone(),
                    Some(Value::Null) | None => String::new(),
                    Some(other) => other.to_string(),
                })),
                Some(Source::Template(key)) => self.render(table, row, key, attributes).map(Some),
                None => Ok(default.map(str::to_string)),
            }
        };
        let id = match text("id", None)? {
            Some(id) => id,
            None => match attributes.get(&self.id_column) {
                Some(Value::String(s)) => s.clone(),
                Some(other) => other.to_string(),
                None => String::new(),
            },
        };
        let traits = match self.fields.get("traits") {
            Some(Source::Column(c)) => match attributes.get(c) {
                Some(Value::Array(items)) => items
                    .iter()
                    .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
                    .collect(),
                Some(Value::String(s)) => split_list(s),
                _ => Vec::new(),
            },
            Some(Source::Template(key)) => split_list(&self.render(table, row, key, attributes)?),
            None => Vec::new(),
        };
        Ok(Persona {
            name: text("name", Some(&id))?.unwrap_or_default(),
            background: text("background", Some(""))?.unwrap_or_default(),
            speaking_style: text("speaking_style", Some(DEFAULT_SPEAKING_STYLE))?
                .unwrap_or_default(),
            language: text("language", Some(DEFAULT_LANGUAGE))?.unwrap_or_default(),
            id,
            traits,
            knobs: BTreeMap::new(),
            attributes: attributes
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        })
    }

    fn render(
        &self,
        table: &Path,
        row: &Row,
        key: &str,
        attributes: &Columns,
    ) -> Result<String, TableError> {
        let context = Context::from_serialize(attributes).map_err(|e| {
            TableError::table(table, Some(row.place), format!("cannot be rendered: {e}"))
        })?;
        self.tera.render(key, &context).map_err(|e| {
            let columns: Vec<&str> = attributes.keys().map(String::as_str).collect();
            TableError::config(
                &self.config,
                key,
                format!(
                    "cannot be rendered over {} of {}: {}; the row's columns are: {}",
                    row.place,
                    table.display(),
                    error_chain(&e),
                    columns.join(", ")
                ),
            )
        })
    }
}

/// `a, b; c` as `[a, b, c]`.
fn split_list(text: &str) -> Vec<String> {
    text.split([',', ';'])
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}
