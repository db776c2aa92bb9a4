//! `mock-synth` over an environment that is not retail: records keyed by the
//! state probe that read them (an MCP or NeMo Gym environment's
//! `state_probes`, e.g. `{"read_graph": {"entities": [...]}}`) and the tools
//! the prompt lists. Even proposal numbers are write tasks: a write tool
//! (a `create…` one first) called with arguments filled from its JSON
//! schema, checked afterwards by a probe of what it stored. Odd numbers are
//! read-only tasks: a probe tool the policy has, asked about one record, the
//! fact to tell being another string of the same record.
//!
//! On some numbers the first attempt is broken on purpose, so that every
//! rejection validation owns is reached offline: a tool that does not exist
//! (execution), a write task without its write (state), an ID no record has
//! (unknown ID), a fact in no output (communicate). With feedback in the
//! prompt, the fixed proposal comes back.

use serde_json::{json, Map, Value};

/// What the first attempt of proposal `index` breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flaw {
    None,
    UnknownTool,
    MissingWrite,
    UnknownId,
    UncommunicableFact,
}

fn flaw(index: u64) -> Flaw {
    match index % 9 {
        1 => Flaw::UnknownId,
        3 => Flaw::UncommunicableFact,
        4 => Flaw::UnknownTool,
        6 => Flaw::MissingWrite,
        _ => Flaw::None,
    }
}

/// A tool as the prompt lists it.
#[derive(Debug, Clone)]
struct Tool {
    name: String,
    parameters: Value,
}

/// The tools of the prompt's tools section: `- NAME: DESCRIPTION` lines,
/// each followed (maybe after more description) by `  parameters: JSON`.
fn tools(prompt: &str) -> Vec<Tool> {
    let mut out = Vec::new();
    let mut name: Option<String> = None;
    for line in prompt.lines() {
        if let Some(rest) = line.strip_prefix("- ") {
            name = rest.split(':').next().map(|n| n.trim().to_string());
        } else if let Some(json) = line.strip_prefix("  parameters: ") {
            if let (Some(n), Ok(parameters)) = (name.take(), serde_json::from_str(json)) {
                out.push(Tool {
                    name: n,
                    parameters,
                });
            }
        }
    }
    out
}

fn is_read(name: &str) -> bool {
    ["read", "search", "get", "list", "open", "find", "check"]
        .iter()
        .any(|p| name.starts_with(p))
}

/// The reply to a synthesis prompt whose records are not retail's.
pub fn respond(prompt: &str, records: &Value, index: u64, retry: bool) -> String {
    let flaw = if retry { Flaw::None } else { flaw(index) };
    let tools = tools(prompt);
    let Some(probes) = records.as_object().filter(|r| !r.is_empty()) else {
        return "I cannot propose a scenario: the prompt shows no records read by a probe.".into();
    };
    let read = index % 2 == 1 || flaw == Flaw::UncommunicableFact;
    let proposal = if read && flaw != Flaw::MissingWrite {
        read_task(probes, &tools, index).or_else(|| write_task(probes, &tools, index))
    } else {
        write_task(probes, &tools, index).or_else(|| read_task(probes, &tools, index))
    };
    let Some(mut scenario) = proposal else {
        return "I cannot propose a scenario: no tool fits the records.".into();
    };
    match flaw {
        Flaw::UnknownTool => scenario["evaluation"]["actions"]
            .as_array_mut()
            .into_iter()
            .for_each(|a| a.insert(0, json!({"name": "undo_everything", "arguments": {}}))),
        Flaw::MissingWrite => {
            if let Some(actions) = scenario["evaluation"]["actions"].as_array_mut() {
                actions.retain(|a| is_read(a["name"].as_str().unwrap_or_default()));
            }
        }
        Flaw::UnknownId => {
            let known = scenario["user"]["known_info"].as_str().unwrap_or_default();
            scenario["user"]["known_info"] =
                json!(format!("{known} Your reference is REF{index}Q9."));
        }
        Flaw::UncommunicableFact => {
            if let Some(facts) = scenario["evaluation"]["communicate"].as_array_mut() {
                facts.push(json!(format!("ZQ{index} confirmed")));
            }
        }
        Flaw::None => {}
    }
    format!("```json\n{scenario}\n```")
}

/// The probe name and arguments of a records key (`tool` or `tool {args}`).
fn probe_call(key: &str) -> (String, Value) {
    match key.split_once(' ') {
        Some((tool, args)) => (
            tool.to_string(),
            serde_json::from_str(args).unwrap_or(json!({})),
        ),
        None => (key.to_string(), json!({})),
    }
}

/// A probe of the records whose tool the policy has.
fn policy_probes<'a>(
    probes: &'a Map<String, Value>,
    tools: &[Tool],
) -> Vec<(String, Value, &'a Value)> {
    probes
        .iter()
        .map(|(key, output)| {
            let (tool, args) = probe_call(key);
            (tool, args, output)
        })
        .filter(|(tool, _, _)| tools.iter().any(|t| &t.name == tool))
        .collect()
}

/// Whether a key holds what names its record.
fn names_record(key: &str) -> bool {
    ["name", "title", "id"].iter().any(|k| key.ends_with(k))
}

/// Records with at least two short strings: the first names the record (a
/// `name`, `title` or `…id` field when there is one), the others are facts
/// about it.
fn records_with_facts(value: &Value, out: &mut Vec<Vec<String>>) {
    match value {
        Value::Array(items) => items.iter().for_each(|v| records_with_facts(v, out)),
        Value::Object(map) => {
            let mut strings = Vec::new();
            let naming = map.iter().filter(|(k, _)| names_record(k));
            let others = map.iter().filter(|(k, _)| !names_record(k));
            for (_, v) in naming.chain(others) {
                match v {
                    Value::String(s) => strings.push(s.clone()),
                    Value::Array(items) => {
                        strings.extend(items.iter().filter_map(Value::as_str).map(str::to_string))
                    }
                    _ => {}
                }
            }
            strings.retain(|s| (3..200).contains(&s.chars().count()));
            if strings.len() >= 2 {
                out.push(strings);
            }
            map.values().for_each(|v| records_with_facts(v, out));
        }
        _ => {}
    }
}

fn read_task(probes: &Map<String, Value>, tools: &[Tool], index: u64) -> Option<Value> {
    let candidates: Vec<(String, Value, Vec<String>)> = policy_probes(probes, tools)
        .into_iter()
        .flat_map(|(tool, args, output)| {
            let mut records = Vec::new();
            records_with_facts(output, &mut records);
            records
                .into_iter()
                .map(move |r| (tool.clone(), args.clone(), r))
        })
        .collect();
    let round = usize::try_from(index / 2).unwrap_or(0);
    let (tool, args, record) = candidates.get(round % candidates.len().max(1))?;
    let about = &record[0];
    let fact = &record[1 + round / candidates.len().max(1) % (record.len() - 1)];
    Some(json!({
        "id": format!("mock-synth-{index}"),
        "description": format!("What is on record about {about}."),
        "difficulty": "easy",
        "tags": ["read-only", "lookup"],
        "user": {
            "reason_for_contact": format!("You want to know what is on record about {about}."),
            "known_info": format!("You are asking about {about}."),
            "unknown_info": "You do not know what is on record.",
            "task_instructions": "Ask what is on record; end the conversation once you are told.",
        },
        "evaluation": {
            "actions": [{"name": tool, "arguments": args}],
            "communicate": [fact],
            "reward_basis": ["communicate"],
        },
    }))
}

fn write_task(probes: &Map<String, Value>, tools: &[Tool], index: u64) -> Option<Value> {
    let writes: Vec<&Tool> = {
        let creates: Vec<&Tool> = tools
            .iter()
            .filter(|t| t.name.starts_with("create"))
            .collect();
        if creates.is_empty() {
            tools.iter().filter(|t| !is_read(&t.name)).collect()
        } else {
            creates
        }
    };
    let tool = writes.get(usize::try_from(index / 2).unwrap_or(0) % writes.len().max(1))?;
    let mut strings = Vec::new();
    let arguments = fill(&tool.parameters, "value", index, 0, &mut strings);
    let marker = strings.first().cloned()?;
    let told = strings.join(", ");
    let check = policy_probes(probes, tools).into_iter().next();
    let mut actions = vec![json!({"name": tool.name, "arguments": arguments})];
    let mut evaluation = json!({"communicate": [], "reward_basis": ["db"]});
    if let Some((probe, args, _)) = check {
        evaluation["probes"] =
            json!([{"tool": probe, "arguments": args, "expect_regex": regex::escape(&marker)}]);
        evaluation["reward_basis"] = json!(["probes"]);
        actions.insert(0, json!({"name": probe, "arguments": args}));
    }
    evaluation["actions"] = Value::Array(actions);
    Some(json!({
        "id": format!("mock-synth-{index}"),
        "description": format!("Record {marker} with {}.", tool.name),
        "difficulty": "medium",
        "tags": ["write", "record"],
        "user": {
            "reason_for_contact": format!("You want a new record kept: {told}."),
            "known_info": format!("The details to record are: {told}."),
            "unknown_info": "",
            "task_instructions": "Give the details when asked, confirm, and end once it is recorded.",
        },
        "evaluation": evaluation,
    }))
}

/// An instance of `schema` whose strings name their property and a word for `index`
/// (collected in `strings`, in order); one element per array.
fn fill(
    schema: &Value,
    property: &str,
    index: u64,
    depth: usize,
    strings: &mut Vec<String>,
) -> Value {
    if depth > 6 {
        return Value::Null;
    }
    if let Some(first) = schema["enum"].as_array().and_then(|e| e.first()) {
        return first.clone();
    }
    match schema["type"].as_str().unwrap_or("string") {
        "object" => {
            let properties = schema["properties"]
                .as_object()
                .cloned()
                .unwrap_or_default();
            let required: Vec<&str> = schema["required"]
                .as_array()
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            Value::Object(
                properties
                    .iter()
                    .filter(|(name, _)| required.is_empty() || required.contains(&name.as_str()))
                    .map(|(name, s)| (name.clone(), fill(s, name, index, depth + 1, strings)))
                    .collect(),
            )
        }
        "array" => Value::Array(vec![fill(
            &schema["items"],
            property,
            index,
            depth + 1,
            strings,
        )]),
        "integer" | "number" => json!(1 + index % 5),
        "boolean" => json!(true),
        _ => {
            let text = format!("{property} {}", word(index));
            strings.push(text.clone());
            Value::String(text)
        }
    }
}

/// A made-up word for `index`, one syllable per base-16 digit: letters
/// only, so a new record's values never read as IDs the seed must have.
fn word(index: u64) -> String {
    const SYLLABLES: [&str; 16] = [
        "ka", "lo", "mi", "ne", "ru", "sa", "te", "vo", "ba", "di", "fu", "go", "ha", "ji", "pe",
        "zu",
    ];
    let mut n = index;
    let mut out = String::new();
    loop {
        out.insert_str(0, SYLLABLES[(n % 16) as usize]);
        n /= 16;
        if n == 0 {
            break;
        }
    }
    let mut chars = out.chars();
    chars
        .next()
        .map(|c| c.to_ascii_uppercase().to_string() + chars.as_str())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROMPT: &str = "# The tools (JSON schemas)
- read_graph: Read the whole graph
  parameters: {\"type\":\"object\",\"properties\":{}}
- create_entities: Create entities
  parameters: {\"type\":\"object\",\"properties\":{\"entities\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"},\"observations\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}}},\"required\":[\"name\",\"observations\"]}}},\"required\":[\"entities\"]}
";

    fn records() -> Value {
        json!({"read_graph": {"entities": [
            {"name": "Dana Reyes", "entityType": "member", "observations": ["allergic to peanuts"]}
        ], "relations": []}})
    }

    fn scenario(reply: &str) -> Value {
        let json = reply
            .trim()
            .strip_prefix("```json\n")
            .and_then(|r| r.strip_suffix("\n```"))
            .unwrap();
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn the_prompts_tools_are_read_with_their_schemas() {
        let t = tools(PROMPT);
        assert_eq!(t.len(), 2);
        assert_eq!(t[1].name, "create_entities");
        assert_eq!(t[1].parameters["required"][0], "entities");
    }

    #[test]
    fn an_even_number_writes_from_the_schema_and_probes_what_it_wrote() {
        let s = scenario(&respond(PROMPT, &records(), 0, false));
        let actions = &s["evaluation"]["actions"];
        assert_eq!(actions[1]["name"], "create_entities");
        assert_eq!(
            actions[1]["arguments"],
            json!({"entities": [{"name": "name Ka", "observations": ["observations Ka"]}]})
        );
        assert_eq!(s["evaluation"]["probes"][0]["expect_regex"], "name Ka");
        assert_eq!(s["tags"][0], "write");
    }

    #[test]
    fn an_odd_number_reads_a_record_and_tells_another_of_its_strings() {
        let s = scenario(&respond(PROMPT, &records(), 5, false));
        assert_eq!(s["evaluation"]["actions"][0]["name"], "read_graph");
        assert_eq!(s["tags"][0], "read-only");
        assert!(s["user"]["known_info"]
            .as_str()
            .unwrap()
            .contains("Dana Reyes"));
        let fact = s["evaluation"]["communicate"][0].as_str().unwrap();
        assert!(["member", "allergic to peanuts"].contains(&fact), "{fact}");
    }

    #[test]
    fn flawed_first_attempts_are_fixed_when_feedback_comes_back() {
        let first = scenario(&respond(PROMPT, &records(), 1, false));
        assert!(first["user"]["known_info"]
            .as_str()
            .unwrap()
            .contains("REF1Q9"));
        let again = scenario(&respond(PROMPT, &records(), 1, true));
        assert!(!again["user"]["known_info"]
            .as_str()
            .unwrap()
            .contains("REF1Q9"));
        let missing = scenario(&respond(PROMPT, &records(), 6, false));
        let names: Vec<&str> = missing["evaluation"]["actions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["read_graph"]);
        let unknown = scenario(&respond(PROMPT, &records(), 4, false));
        assert_eq!(
            unknown["evaluation"]["actions"][0]["name"],
            "undo_everything"
        );
    }

    #[test]
    fn each_number_gets_its_own_word_of_letters_only() {
        let words: std::collections::BTreeSet<String> = (0..300).map(word).collect();
        assert_eq!(words.len(), 300);
        assert!(words.iter().all(|w| w.chars().all(char::is_alphabetic)));
        assert_eq!(word(17), "Lolo");
    }

    #[test]
    fn records_not_read_by_probes_get_a_reply_that_is_no_scenario() {
        assert!(respond(PROMPT, &json!(null), 0, false).starts_with("I cannot"));
    }
}
