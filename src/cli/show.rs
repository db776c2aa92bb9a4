//! `sparring show CONVERSATION_ID`

use crate::store;

pub async fn show(database: &str, id: i64) -> anyhow::Result<i32> {
    if let Some(code) = super::refuse_missing_database(database) {
        return Ok(code);
    }
    let store = store::open(database).await?;
    let Some(stored) = store.get_conversation(id).await? else {
        eprintln!("conversation {id} is not in {database}");
        return Ok(super::EXIT_NOT_FOUND);
    };
    let c = &stored.conversation;
    println!(
        "conversation {} (job {}, item {})",
        c.id, c.job_id, c.item_key
    );
    println!(
        "scenario {}  persona {}  sample {}  seed {}",
        c.scenario_id, c.persona_id, c.sample, c.seed as u64
    );
    println!("policy {}  user {}", c.policy_model, c.user_model);
    if let Some(knobs) = c.metadata.get("persona_knobs").and_then(|k| k.as_object()) {
        let drawn: Vec<String> = knobs
            .iter()
            .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or("?")))
            .collect();
        if !drawn.is_empty() {
            println!("persona knobs {}", drawn.join(", "));
        }
    }
    println!(
        "termination {}  reward {}",
        c.termination,
        c.reward
            .map_or("n/a (not scored)".to_string(), |r| format!("{r}"))
    );
    println!();
    for m in &stored.messages {
        let who = match (m.role.as_str(), m.author.as_str()) {
            ("system", _) => "SYSTEM",
            ("assistant", "system") => "AGENT (greeting)",
            ("assistant", _) => "AGENT",
            ("user", _) => "USER",
            ("tool", "user_tool") => "TOOL (user's call)",
            ("tool", "agent_tool") => "TOOL (run by the agent)",
            ("tool", _) => "TOOL",
            _ => "?",
        };
        if m.role == "system" {
            let first = m.content.lines().next().unwrap_or("");
            println!("[{who}] {first} … ({} chars)", m.content.len());
            continue;
        }
        if !m.content.is_empty() {
            let tag = m
                .tool_call_id
                .as_deref()
                .map(|id| format!(" {id}"))
                .unwrap_or_default();
            println!("[{who}{tag}] {}", m.content);
        }
        if let Some(calls) = m.tool_calls.as_ref().and_then(|v| v.as_array()) {
            for call in calls {
                println!(
                    "[{who} → tool {}] {}({})",
                    call.get("id").and_then(|v| v.as_str()).unwrap_or("?"),
                    call.get("name").and_then(|v| v.as_str()).unwrap_or("?"),
                    call.get("arguments").and_then(|v| v.as_str()).unwrap_or("")
                );
            }
        }
    }
    println!();
    if let Some(parts) = c.reward_breakdown.as_object() {
        println!("reward breakdown:");
        for (name, part) in parts {
            println!(
                "  {name}: {} — {}",
                part.get("score").map_or("?".to_string(), |s| s.to_string()),
                part.get("detail").and_then(|d| d.as_str()).unwrap_or("")
            );
        }
    }
    for u in &stored.usage {
        println!(
            "usage {}: {} calls, {} prompt + {} completion tokens, {} ms",
            u.role, u.calls, u.prompt_tokens, u.completion_tokens, u.latency_ms
        );
    }
    Ok(0)
}
