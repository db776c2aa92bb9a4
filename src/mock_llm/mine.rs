//! `mock-miner`: answers the mining prompt (`prompts/mine/scenario.tera`)
//! with a scenario and a persona read from the conversation it was sent, the
//! same answer for the same conversation:
//!
//! - `reason_for_contact`: the customer's first message;
//! - `known_info`: every word of the customer's that holds a digit or an `@`
//!   (ids, order numbers, amounts, emails, already fakes);
//! - `communicate`: the dollar amounts the agent said (at most two);
//! - knobs from how the customer wrote: `verbosity` by words per message
//!   (under 8 terse, over 30 chatty), `mood` frustrated and `patience` low
//!   when a message holds `!` or a word of annoyance, `formality` casual when
//!   a message starts in lower case, `typos` none, `tech_comfort` medium.
//!
//! With `+garbled` it answers prose, which mining counts as unparseable.

use serde_json::json;

const NAMES: &[&str] = &[
    "Robin Hale",
    "Sam Okafor",
    "Jordan Reyes",
    "Alex Novak",
    "Casey Lund",
    "Morgan Pike",
];

const ANNOYED: &[&str] = &[
    "ridiculous",
    "unacceptable",
    "again",
    "still",
    "angry",
    "annoyed",
    "frustrated",
    "useless",
];

pub fn respond(prompt: &str, garbled: bool) -> String {
    if garbled {
        return "I read the conversation; the customer wanted help.".into();
    }
    let mut inside = false;
    let mut id = 0u64;
    let (mut customer, mut agent) = (Vec::new(), Vec::new());
    for line in prompt.lines() {
        if let Some(rest) = line.strip_prefix("<conversation id=\"") {
            inside = true;
            id = rest.trim_end_matches("\">").parse().unwrap_or(0);
        } else if line.starts_with("</conversation>") {
            inside = false;
        } else if inside {
            if let Some(text) = line.strip_prefix("[customer] ") {
                customer.push(text);
            } else if let Some(text) = line.strip_prefix("[agent] ") {
                agent.push(text);
            }
        }
    }
    let first = customer.first().copied().unwrap_or_default();
    let known: Vec<&str> = customer
        .iter()
        .flat_map(|t| t.split_whitespace())
        .map(|w| w.trim_end_matches(['.', ',', '!', '?', ';', ':', ')']))
        .filter(|w| w.contains('@') || w.chars().any(|c| c.is_ascii_digit()))
        .collect();
    let facts: Vec<String> = agent
        .iter()
        .flat_map(|t| t.split_whitespace())
        .filter(|w| w.starts_with('$') && w.len() > 1)
        .map(|w| {
            w.trim_end_matches(['.', ',', '!', '?', ';', ':'])
                .to_string()
        })
        .take(2)
        .collect();
    let words: usize = customer.iter().map(|t| t.split_whitespace().count()).sum();
    let per_message = words / customer.len().max(1);
    let annoyed = customer.iter().any(|t| {
        let lower = t.to_lowercase();
        t.contains('!') || ANNOYED.iter().any(|w| lower.contains(w))
    });
    let casual = customer
        .iter()
        .any(|t| t.chars().next().is_some_and(char::is_lowercase));
    let verbosity = match per_message {
        0..=7 => "terse",
        8..=30 => "normal",
        _ => "chatty",
    };
    let style = format!(
        "{} messages of about {per_message} words{}{}.",
        customer.len(),
        if casual {
            ", often starting in lower case"
        } else {
            ""
        },
        if annoyed { ", impatient" } else { "" },
    );
    let short: String = first.chars().take(60).collect();
    json!({
        "scenario": {
            "description": format!("Mined: {short}"),
            "reason_for_contact": first,
            "known_info": match known.is_empty() {
                true => String::new(),
                false => format!("You know: {}.", known.join(", ")),
            },
            "unknown_info": "",
            "task_instructions": format!(
                "Ask for what you need as the customer did, in {} messages or so; answer the \
                 agent's questions from what you know; end the conversation once the agent has \
                 answered.",
                customer.len().max(1)
            ),
            "communicate": facts,
        },
        "persona": {
            "name": NAMES[(id % NAMES.len() as u64) as usize],
            "background": "A customer who wrote to support; mined from a real conversation.",
            "speaking_style": style,
            "traits": if annoyed { vec!["impatient"] } else { vec!["matter-of-fact"] },
            "knobs": {
                "verbosity": verbosity,
                "patience": if annoyed { "low" } else { "medium" },
                "typos": "none",
                "formality": if casual { "casual" } else { "neutral" },
                "tech_comfort": "medium",
                "mood": if annoyed { "frustrated" } else { "calm" },
            },
        },
    })
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROMPT: &str =
        "intro\n<conversation id=\"7\">\n[customer] my order #W0000001 never came!\n\
        [agent] Refunded $12.50 to you.\n[customer] thanks\n</conversation>\n";

    #[test]
    fn the_answer_reads_the_conversation_it_was_sent() {
        let answer: serde_json::Value = serde_json::from_str(&respond(PROMPT, false)).unwrap();
        let s = &answer["scenario"];
        assert_eq!(s["reason_for_contact"], "my order #W0000001 never came!");
        assert_eq!(s["known_info"], "You know: #W0000001.");
        assert_eq!(s["communicate"], json!(["$12.50"]));
        let knobs = &answer["persona"]["knobs"];
        assert_eq!(knobs["mood"], "frustrated");
        assert_eq!(knobs["formality"], "casual");
        assert_eq!(knobs["verbosity"], "terse");
        assert_eq!(respond(PROMPT, false), respond(PROMPT, false));
    }

    #[test]
    fn garbled_is_not_json() {
        assert!(serde_json::from_str::<serde_json::Value>(&respond(PROMPT, true)).is_err());
    }
}
