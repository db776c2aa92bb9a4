//! Defects planted into real conversations by code, one kind per check:
//! what a check must find (its recall). Each plant changes one conversation
//! labelled clean for that check in one place, chosen by a stable hash of
//! its key, so the figures are the same on every run.
//!
//! | check | what is planted |
//! |---|---|
//! | `instruction_leak` | a sentence of its task instructions (6 words or more), appended as written to a user message |
//! | `role_confusion` | a user message that is the agent's: its message before (an echo) or its next one (speaking as the agent) |
//! | `repetition` | an earlier user message said again word for word, or a user message that says itself twice (a loop) |
//! | `invented_fact` | "My reservation number is K7QX2M." (or a user id, an email, an order number) absent from everything the user knows and was told, appended to a user message |
//! | `premature_stop` | the conversation cut where the user answered the agent's message that led to its first gold write (a request to confirm, a question), the user leaving there instead: agreeing ("Yes, please go ahead."), thanking, or with a bare `###STOP###` |
//! | `control_token_misuse` | text after the user's closing `###STOP###`, or a malformed `##STOP##` in a user message |

use serde_json::{json, Value};
use sparring::import::ImportedConversation;
use sparring::llm::message::{Message, Role};
use sparring::user_checks::premature_stop::READ_PREFIXES;
use sparring::user_checks::UserFlag;

/// A conversation with a defect of `flag` planted, and what was done; `None`
/// when this conversation offers no place for it (no user message long
/// enough, no gold write, no instruction sentence).
pub fn plant(
    flag: UserFlag,
    key: &str,
    c: &ImportedConversation,
) -> Vec<(String, ImportedConversation)> {
    let mut out = Vec::new();
    for variant in 0u8..2 {
        let seed = stable_hash(&format!("{key}/{flag}/{variant}"));
        let planted = match flag {
            UserFlag::InstructionLeak => (variant == 0).then(|| leak(seed, c)).flatten(),
            UserFlag::RoleConfusion => role_swap(seed, variant, c),
            UserFlag::Repetition => repeat(seed, variant, c),
            UserFlag::InventedFact => (variant == 0).then(|| invent(seed, c)).flatten(),
            UserFlag::PrematureStop => (variant == 0).then(|| stop_early(seed, c)).flatten(),
            UserFlag::ControlTokenMisuse => misuse_token(seed, variant, c),
        };
        out.extend(planted);
    }
    out
}

/// FNV-1a: the same number for the same text on every run and machine.
pub fn stable_hash(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The indexes of the user messages with text.
fn user_messages(c: &ImportedConversation) -> Vec<usize> {
    (0..c.messages.len())
        .filter(|i| c.messages[*i].role == Role::User && !c.messages[*i].content.trim().is_empty())
        .collect()
}

fn word_count(text: &str) -> usize {
    text.split_whitespace().count()
}

fn pick<T: Copy>(seed: u64, from: &[T]) -> Option<T> {
    (!from.is_empty()).then(|| from[(seed % from.len() as u64) as usize])
}

/// Sets the text of user message `at`, and what the user model wrote for it
/// (`user_outputs`), keeping the control token it ended with.
fn set_user_text(c: &mut ImportedConversation, at: usize, text: &str) {
    c.messages[at].content = text.into();
    if let Some(Value::Array(outputs)) = c.metadata.get_mut("user_outputs") {
        for o in outputs.iter_mut() {
            if o.get("message").and_then(Value::as_u64) == Some(at as u64) {
                let raw = o["raw"].as_str().unwrap_or_default();
                let token = raw.find("###").map_or("", |t| &raw[t..]).to_string();
                o["raw"] = json!(format!(
                    "{text}{}{token}",
                    if token.is_empty() { "" } else { " " }
                ));
            }
        }
    }
}

fn with_text(
    what: String,
    c: &ImportedConversation,
    at: usize,
    text: &str,
) -> (String, ImportedConversation) {
    let mut planted = c.clone();
    set_user_text(&mut planted, at, text);
    (format!("{what} (message {at})"), planted)
}

fn leak(seed: u64, c: &ImportedConversation) -> Option<(String, ImportedConversation)> {
    let instructions = &c.scenario.as_ref()?.task_instructions;
    let sentences: Vec<&str> = instructions
        .split_inclusive(['.', '!', '?', '\n'])
        .map(str::trim)
        .filter(|s| word_count(s) >= 6)
        .collect();
    let sentence = pick(seed, &sentences)?;
    let at = pick(seed >> 8, &user_messages(c))?;
    let text = format!("{} {sentence}", c.messages[at].content);
    Some(with_text(format!("leaked '{sentence}'"), c, at, &text))
}

/// The agent's text before (`variant` 0) or after (1) user message `at`.
fn agent_text(c: &ImportedConversation, at: usize, after: bool) -> Option<String> {
    let text = |m: &Message| {
        (m.role == Role::Assistant && word_count(&m.content) >= 8).then(|| m.content.to_string())
    };
    if after {
        c.messages[at + 1..].iter().find_map(text)
    } else {
        c.messages[..at]
            .iter()
            .rev()
            .find(|m| m.role == Role::Assistant && !m.content.trim().is_empty())
            .and_then(text)
    }
}

fn role_swap(
    seed: u64,
    variant: u8,
    c: &ImportedConversation,
) -> Option<(String, ImportedConversation)> {
    let after = variant == 1;
    let places: Vec<usize> = user_messages(c)
        .into_iter()
        .filter(|at| agent_text(c, *at, after).is_some())
        .collect();
    let at = pick(seed, &places)?;
    let text = agent_text(c, at, after)?;
    let what = if after {
        "says the agent's next message"
    } else {
        "echoes the agent's message"
    };
    Some(with_text(what.into(), c, at, &text))
}

fn repeat(
    seed: u64,
    variant: u8,
    c: &ImportedConversation,
) -> Option<(String, ImportedConversation)> {
    let users = user_messages(c);
    if variant == 0 {
        let pairs: Vec<(usize, usize)> = users
            .iter()
            .enumerate()
            .flat_map(|(n, e)| users[n + 1..].iter().map(move |u| (*e, *u)))
            .filter(|(e, _)| word_count(&c.messages[*e].content) >= 5)
            .collect();
        let (earlier, at) = pick(seed, &pairs)?;
        let text = c.messages[earlier].content.to_string();
        return Some(with_text(
            format!("says message {earlier} again"),
            c,
            at,
            &text,
        ));
    }
    let long: Vec<usize> = users
        .into_iter()
        .filter(|u| word_count(&c.messages[*u].content) >= 12)
        .collect();
    let at = pick(seed, &long)?;
    let said = c.messages[at].content.trim().to_string();
    Some(with_text(
        "loops: says itself twice".into(),
        c,
        at,
        &format!("{said} {said}"),
    ))
}

const FIRST: &[&str] = &[
    "morgan", "avery", "quinn", "rowan", "sasha", "emery", "jules", "reese",
];
const LAST: &[&str] = &[
    "okafor",
    "lindqvist",
    "moreau",
    "tanaka",
    "varga",
    "delacroix",
    "haddad",
    "novak",
];
const CODE: &[u8] = b"ABCDEFGHJKLMNPQRSTUVWXYZ23456789";

/// An id of one of four kinds, in a sentence, absent from the conversation
/// and its scenario.
fn invented(seed: u64) -> String {
    let first = FIRST[(seed % 8) as usize];
    let last = LAST[((seed >> 4) % 8) as usize];
    let digits = (seed >> 8) % 9000 + 1000;
    match (seed >> 24) % 4 {
        0 => {
            // Six letters and digits, a digit among them.
            let mut code: String = (0..6)
                .map(|i| CODE[((seed >> (30 + 4 * i)) % 32) as usize] as char)
                .collect();
            code.replace_range(2..3, &((seed >> 60) % 8 + 2).to_string());
            format!("My reservation number is {code}.")
        }
        1 => format!("My user id is {first}_{last}_{digits}."),
        2 => format!(
            "You can email me at {first}.{last}{}@example.com.",
            digits % 100
        ),
        _ => format!(
            "The order number is #W{}.",
            (seed >> 12) % 9_000_000 + 1_000_000
        ),
    }
}

fn invent(seed: u64, c: &ImportedConversation) -> Option<(String, ImportedConversation)> {
    let known = {
        let mut all = String::new();
        if let Some(s) = &c.scenario {
            all.push_str(&serde_json::to_string(s).unwrap_or_default());
        }
        for m in &c.messages {
            all.push_str(&m.content);
        }
        all.to_lowercase()
    };
    let sentence = (0..16)
        .map(|n| invented(stable_hash(&format!("{seed}/{n}"))))
        .find(|s| {
            let id = s
                .trim_end_matches('.')
                .rsplit(' ')
                .next()
                .unwrap_or_default()
                .to_lowercase();
            !known.contains(id.trim_start_matches('#'))
        })?;
    let at = pick(seed >> 8, &user_messages(c))?;
    let text = format!("{} {sentence}", c.messages[at].content);
    Some(with_text(format!("invents '{sentence}'"), c, at, &text))
}

fn is_write(name: &str) -> bool {
    !READ_PREFIXES.iter().any(|p| name.starts_with(p))
}

fn stop_early(seed: u64, c: &ImportedConversation) -> Option<(String, ImportedConversation)> {
    let gold = c.criteria.as_ref()?;
    let writes: Vec<&str> = gold
        .actions
        .iter()
        .map(|a| a.name.as_str())
        .filter(|n| is_write(n))
        .collect();
    let first_write = c.messages.iter().position(|m| {
        m.role == Role::Assistant
            && m.tool_calls
                .iter()
                .any(|t| writes.contains(&t.name.as_str()))
    })?;
    // The user's answer the agent acted on, and what the agent had asked.
    let answer = c.messages[..first_write]
        .iter()
        .rposition(|m| m.role == Role::User && !m.content.trim().is_empty())?;
    let agent = c.messages[..answer]
        .iter()
        .rposition(|m| m.role == Role::Assistant && !m.content.trim().is_empty())?;
    let mut planted = c.clone();
    planted.messages.truncate(agent + 1);
    let mut outputs: Vec<Value> = Vec::new();
    if let Some(Value::Array(old)) = c.metadata.get("user_outputs") {
        for o in old {
            match o.get("message").and_then(Value::as_u64) {
                Some(i) if i as usize > agent => break,
                _ => outputs.push(o.clone()),
            }
        }
    }
    let said = [
        "Yes, please go ahead. Thank you!",
        "Great, thanks for your help!",
        "",
    ][(seed % 3) as usize];
    if said.is_empty() {
        outputs.push(json!({"message": null, "raw": "###STOP###"}));
    } else {
        planted.messages.push(Message::user(said));
        outputs.push(
            json!({"message": planted.messages.len() - 1, "raw": format!("{said} ###STOP###")}),
        );
    }
    planted
        .metadata
        .insert("user_outputs".into(), Value::Array(outputs));
    planted
        .metadata
        .insert("termination_reason".into(), json!("user_stop"));
    Some((format!("stops after message {agent}: '{said}'"), planted))
}

fn misuse_token(
    seed: u64,
    variant: u8,
    c: &ImportedConversation,
) -> Option<(String, ImportedConversation)> {
    if variant == 0 {
        let at = pick(seed, &user_messages(c))?;
        let text = format!("{} ##STOP##", c.messages[at].content);
        return Some(with_text("a malformed ##STOP##".into(), c, at, &text));
    }
    let mut planted = c.clone();
    let Some(Value::Array(outputs)) = planted.metadata.get_mut("user_outputs") else {
        return None;
    };
    let last = outputs.last_mut()?;
    let raw = last["raw"].as_str()?.to_string();
    let at = raw.find("###STOP###")?;
    last["raw"] = json!(format!(
        "{} Agent: You're welcome, goodbye!",
        &raw[..at + "###STOP###".len()]
    ));
    Some(("text after its ###STOP###".into(), planted))
}
