//! A `simulated` environment's tool specs file: OpenAI function tools, each
//! optionally with an `output_schema` and `read_only`, as a list or as
//! `{"policy": "...", "tools": [...], "user_tools": [...]}`. Every schema is
//! checked against the JSON Schema metaschema (boon), with no reference
//! resolved outside the file; every problem of the file is reported at
//! once, each naming its tool and field.

use std::sync::Arc;

use serde_json::Value;

use crate::llm::message::ToolSpec;

/// One simulated tool: its spec and compiled schemas.
pub struct SimulatedTool {
    pub spec: ToolSpec,
    pub output_schema: Option<Value>,
    /// A read: a repeated call with the same arguments must return the same
    /// result while no other kind of call came between.
    pub read_only: bool,
    parameters: boon::SchemaIndex,
    output: Option<boon::SchemaIndex>,
}

/// Every tool of the file, both sides, with their compiled schemas.
pub struct ToolSpecs {
    pub policy_text: String,
    pub tools: Vec<SimulatedTool>,
    pub user_tools: Vec<SimulatedTool>,
    schemas: Arc<boon::Schemas>,
}

/// The policy text when the file gives none.
pub const DEFAULT_POLICY: &str = "You are a helpful support agent. Use the tools to look up and change what the customer asks about; never make up results.";

/// Refuses every `$ref` outside the file: a schema may not read files or URLs.
struct NoRemoteRefs;

impl boon::UrlLoader for NoRemoteRefs {
    fn load(&self, url: &str) -> Result<Value, Box<dyn std::error::Error>> {
        Err(format!("'{url}' is outside the tool specs file; refs must stay inside it").into())
    }
}

impl ToolSpecs {
    /// Parse and check `text` (the file's contents); each error names the
    /// tool (`tools[2] 'get_order'`), the field, and what is wrong, and every
    /// tool is checked, not only up to the first error.
    pub fn parse(text: &str) -> Result<ToolSpecs, Vec<String>> {
        let value: Value = serde_json::from_str(text).map_err(|e| {
            vec![format!(
                "is not valid JSON ({e}); write a list of OpenAI function tools"
            )]
        })?;
        let (policy_text, tools, user_tools) = match value {
            Value::Array(tools) => (None, tools, Vec::new()),
            Value::Object(mut map) => {
                let mut errors: Vec<String> = map
                    .keys()
                    .filter(|key| !["policy", "tools", "user_tools"].contains(&key.as_str()))
                    .map(|key| {
                        format!(
                            "has an unknown key '{key}'; the keys are policy, tools and user_tools"
                        )
                    })
                    .collect();
                let mut list = |key: &str| match map.remove(key) {
                    None => Vec::new(),
                    Some(Value::Array(list)) => list,
                    Some(_) => {
                        errors.push(format!("{key} is not a list of tools"));
                        Vec::new()
                    }
                };
                let (tools, user_tools) = (list("tools"), list("user_tools"));
                let policy = match map.remove("policy") {
                    None => None,
                    Some(Value::String(text)) => Some(text),
                    Some(_) => {
                        errors.push("policy is not a string".to_string());
                        None
                    }
                };
                if !errors.is_empty() {
                    return Err(errors);
                }
                (policy, tools, user_tools)
            }
            _ => {
                return Err(vec![
                    "is neither a list of tools nor an object with tools".to_string()
                ])
            }
        };
        if tools.is_empty() {
            return Err(vec![
                "has no tools; list at least one OpenAI function tool".to_string()
            ]);
        }
        let mut compiler = boon::Compiler::new();
        compiler.set_default_draft(boon::Draft::V2020_12);
        compiler.use_loader(Box::new(NoRemoteRefs));
        let mut schemas = boon::Schemas::new();
        let mut seen = std::collections::HashSet::new();
        let mut errors = Vec::new();
        let mut read = |side: &str, list: Vec<Value>| -> Vec<SimulatedTool> {
            let mut read = Vec::new();
            for (i, entry) in list.into_iter().enumerate() {
                let at = format!("{side}[{i}]");
                let twice = name_of(&entry).filter(|name| !seen.insert(name.to_string()));
                if let Some(name) = twice {
                    errors.push(format!(
                        "{at}: the name '{name}' is used twice; tool names must be unique"
                    ));
                }
                match read_tool(&at, entry, &mut compiler, &mut schemas) {
                    Ok(tool) => read.push(tool),
                    Err(problems) => errors.extend(problems),
                }
            }
            read
        };
        let tools = read("tools", tools);
        let user_tools = read("user_tools", user_tools);
        if !errors.is_empty() {
            return Err(errors);
        }
        Ok(ToolSpecs {
            policy_text: policy_text.unwrap_or_else(|| DEFAULT_POLICY.to_string()),
            tools,
            user_tools,
            schemas: Arc::new(schemas),
        })
    }

    /// Whether `value` fits the tool's arguments schema; the error says where not.
    pub fn check_arguments(&self, tool: &SimulatedTool, value: &Value) -> Result<(), String> {
        self.schemas
            .validate(value, tool.parameters)
            .map_err(|e| schema_error(&e))
    }

    /// Whether `value` fits the tool's output schema (any value without one).
    pub fn check_output(&self, tool: &SimulatedTool, value: &Value) -> Result<(), String> {
        match tool.output {
            None => Ok(()),
            Some(index) => self
                .schemas
                .validate(value, index)
                .map_err(|e| schema_error(&e)),
        }
    }
}

/// A validation error's causes, one line each, without boon's URL header.
fn schema_error(e: &boon::ValidationError<'_, '_>) -> String {
    let text = e.to_string();
    let lines: Vec<&str> = text.lines().skip(1).map(str::trim).collect();
    if lines.is_empty() {
        text
    } else {
        lines.join("; ")
    }
}

/// The name an entry gives its tool (OpenAI's nested form or the flat one).
fn name_of(entry: &Value) -> Option<String> {
    entry
        .get("function")
        .and_then(|f| f.get("name"))
        .or_else(|| entry.get("name"))
        .and_then(Value::as_str)
        .map(str::to_string)
}

/// One tool of the file; every problem it has.
fn read_tool(
    at: &str,
    entry: Value,
    compiler: &mut boon::Compiler,
    schemas: &mut boon::Schemas,
) -> Result<SimulatedTool, Vec<String>> {
    let Value::Object(mut entry) = entry else {
        return Err(vec![format!("{at} is not an object; write {{\"type\": \"function\", \"function\": {{\"name\": ..., \"parameters\": ...}}}}")]);
    };
    // OpenAI's form nests the function; the flat form is accepted too.
    let mut function = match entry.remove("function") {
        Some(Value::Object(f)) => f,
        Some(_) => return Err(vec![format!("{at}.function is not an object")]),
        None => entry.clone(),
    };
    let take = |key: &str,
                f: &mut serde_json::Map<String, Value>,
                e: &mut serde_json::Map<String, Value>| {
        f.remove(key).or_else(|| e.remove(key))
    };
    let name = match take("name", &mut function, &mut entry) {
        Some(Value::String(name)) if !name.trim().is_empty() => name,
        _ => return Err(vec![format!("{at} has no name; give each tool a \"name\"")]),
    };
    let at = format!("{at} '{name}'");
    let mut problems = Vec::new();
    let description = match take("description", &mut function, &mut entry) {
        None => String::new(),
        Some(Value::String(d)) => d,
        Some(_) => {
            problems.push(format!("{at}: description is not a string"));
            String::new()
        }
    };
    let parameters = take("parameters", &mut function, &mut entry)
        .unwrap_or_else(|| serde_json::json!({"type": "object", "properties": {}}));
    let output_schema = take("output_schema", &mut function, &mut entry);
    let read_only = match take("read_only", &mut function, &mut entry) {
        None => false,
        Some(Value::Bool(b)) => b,
        Some(_) => {
            problems.push(format!("{at}: read_only is not true or false"));
            false
        }
    };
    let parameters_index = if parameters.is_object() {
        compile(&at, "parameters", &parameters, compiler, schemas)
            .map_err(|e| problems.push(e))
            .ok()
    } else {
        problems.push(format!("{at}: parameters is not a JSON Schema object"));
        None
    };
    let output = match &output_schema {
        None => None,
        Some(schema) => compile(&at, "output_schema", schema, compiler, schemas)
            .map_err(|e| problems.push(e))
            .ok(),
    };
    match parameters_index {
        Some(parameters_index) if problems.is_empty() => Ok(SimulatedTool {
            spec: ToolSpec {
                name,
                description,
                parameters,
            },
            output_schema,
            read_only,
            parameters: parameters_index,
            output,
        }),
        _ => Err(problems),
    }
}

fn compile(
    at: &str,
    field: &str,
    schema: &Value,
    compiler: &mut boon::Compiler,
    schemas: &mut boon::Schemas,
) -> Result<boon::SchemaIndex, String> {
    let location = format!(
        "urn:sparring:tools:{}:{field}",
        at.replace([' ', '\'', '[', ']'], "_")
    );
    let invalid =
        |e: &dyn std::fmt::Display| format!("{at}: {field} is not valid JSON Schema: {e}");
    compiler
        .add_resource(&location, schema.clone())
        .map_err(|e| invalid(&e))?;
    compiler.compile(&location, schemas).map_err(|e| match &e {
        boon::CompileError::ValidationError { src, .. } => invalid(&schema_error(src)),
        other => invalid(&format!("{other:#}")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openai_function_tools_with_output_schemas_are_read_and_checked() {
        let specs = ToolSpecs::parse(
            r#"[{"type": "function", "function": {"name": "get_order", "description": "d",
                 "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}},
                                "required": ["order_id"]}},
                 "output_schema": {"type": "object", "required": ["status"],
                                   "properties": {"status": {"enum": ["pending", "shipped"]}}},
                 "read_only": true}]"#,
        )
        .unwrap();
        let tool = &specs.tools[0];
        assert!(tool.read_only);
        assert!(specs
            .check_arguments(tool, &serde_json::json!({"order_id": "W1"}))
            .is_ok());
        let wrong = specs
            .check_arguments(tool, &serde_json::json!({"order_id": 5}))
            .unwrap_err();
        assert!(wrong.contains("order_id"), "{wrong}");
        assert!(specs
            .check_output(tool, &serde_json::json!({"status": "shipped"}))
            .is_ok());
        assert!(specs
            .check_output(tool, &serde_json::json!({"status": "lost"}))
            .is_err());
    }

    #[test]
    fn a_schema_that_is_not_valid_json_schema_is_named_with_its_tool_and_field() {
        let err = ToolSpecs::parse(
            r#"[{"name": "ok", "parameters": {"type": "object"}},
                {"name": "broken", "parameters": {"type": "objekt"}}]"#,
        )
        .err()
        .unwrap();
        assert_eq!(err.len(), 1, "{err:?}");
        assert!(err[0].contains("tools[1] 'broken'"), "{err:?}");
        assert!(
            err[0].contains("parameters is not valid JSON Schema"),
            "{err:?}"
        );
    }

    #[test]
    fn refs_outside_the_file_are_refused_and_names_must_be_unique() {
        let err =
            ToolSpecs::parse(r#"[{"name": "a", "parameters": {"$ref": "file:///etc/passwd"}}]"#)
                .err()
                .unwrap()
                .join("; ");
        assert!(
            err.contains("outside the tool specs file") || err.contains("not valid"),
            "{err}"
        );
        let err = ToolSpecs::parse(r#"{"tools": [{"name": "a"}], "user_tools": [{"name": "a"}]}"#)
            .err()
            .unwrap()
            .join("; ");
        assert!(err.contains("used twice"), "{err}");
    }

    #[test]
    fn every_problem_of_the_file_is_reported_at_once() {
        let err = ToolSpecs::parse(
            r#"[{"name": "a", "parameters": {"type": "objekt"}, "output_schema": {"minItems": -1}},
                {"name": "b", "read_only": "yes"},
                {"description": "no name"},
                {"name": "c", "parameters": {"type": "object"}},
                {"name": "c"}]"#,
        )
        .err()
        .unwrap();
        let at: Vec<&str> = err.iter().map(|e| e.split(':').next().unwrap()).collect();
        assert_eq!(
            at,
            [
                "tools[0] 'a'",
                "tools[0] 'a'",
                "tools[1] 'b'",
                "tools[2] has no name; give each tool a \"name\"",
                "tools[4]"
            ],
            "{err:#?}"
        );
        assert!(err[1].contains("output_schema"), "{err:#?}");
    }
}
