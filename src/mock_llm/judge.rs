//! The mock judge: answers each built-in judge template deterministically from
//! the prompt it receives, in that judge's output format. It knows which judge
//! it is answering from the template's marker line; a prompt without one gets
//! the old fixed reply. Modifiers: `+biased` (pairwise: always prefers whichever
//! answer is shown first), `+garbled` (every reply has no label), `+garbled-once`
//! (the first request for the model name has none).

use crate::judge::builtin::Builtin;

use super::behaviour::{stable_hash, Modifiers};
use super::policy::is_read;

/// The reply to a prompt that is not a built-in judge's.
pub const FALLBACK: &str = "The response is reasonable and complete. Rating: [[7]]";

/// A reply with no label any judge parser reads.
pub const GARBLED: &str =
    "I have read the conversation carefully. Overall it seems fine, although I would rather not commit to a verdict.";

/// The judge's reply. `seen` is the 1-based count of requests for this model name.
pub fn respond(prompt: &str, modifiers: &Modifiers, seen: u64) -> String {
    if modifiers.garbled || (modifiers.garbled_once && seen == 1) {
        return GARBLED.to_string();
    }
    let Some(builtin) = Builtin::from_prompt(prompt) else {
        return FALLBACK.to_string();
    };
    let section = |tag: &str| section(prompt, tag).unwrap_or("");
    match builtin {
        Builtin::Helpfulness => helpfulness(section("conversation")),
        Builtin::PairwisePreference => pairwise(
            section("conversation_a"),
            section("conversation_b"),
            modifiers.biased,
        ),
        Builtin::Equivalence => equivalence(section("answer_a"), section("answer_b")),
        Builtin::PolicyAdherence => policy_adherence(section("conversation")),
        Builtin::UserFidelity => user_fidelity(section("conversation")),
        Builtin::Assertions => assertions(section("conversation"), section("assertions")),
        Builtin::BlueprintReview => super::review::blueprint_review(
            section("goal"),
            section("known_info"),
            section("tags"),
            section("gold_actions"),
        ),
    }
}

/// The text between `<tag>` and `</tag>` lines.
fn section<'p>(prompt: &'p str, tag: &str) -> Option<&'p str> {
    let open = format!("<{tag}>\n");
    let close = format!("\n</{tag}>");
    let start = prompt.find(&open)? + open.len();
    let len = prompt[start..].find(&close)?;
    Some(&prompt[start..start + len])
}

/// The transcript's paragraphs (`User: ...`, `Assistant: ...`).
fn paragraphs(transcript: &str) -> Vec<&str> {
    transcript
        .split("\n\n")
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect()
}

fn tool_calls(transcript: &str) -> Vec<&str> {
    transcript
        .lines()
        .filter_map(|l| {
            let rest = l
                .trim_start_matches("Assistant: ")
                .strip_prefix("→ tool ")?;
            rest.split('(').next()
        })
        .collect()
}

/// 3 to 10: a base of 3, up to 3 for tool results that are not errors, 1 for
/// asking for confirmation, 1 for a final answer of some substance, and 0-1
/// from a hash of the text, so different conversations get different scores.
/// A conversation where the assistant never wrote anything gets 2.
fn helpfulness(transcript: &str) -> String {
    let results = transcript
        .lines()
        .filter(|l| l.starts_with("← result:") && !l.starts_with("← result: Error"))
        .count();
    let assistant_text: Vec<&str> = paragraphs(transcript)
        .into_iter()
        .filter_map(|p| p.strip_prefix("Assistant: "))
        .filter(|t| !t.starts_with("→ tool") && *t != "(empty message)")
        .collect();
    let score = match assistant_text.last() {
        None => 2,
        Some(last) => {
            let confirmed = assistant_text
                .iter()
                .any(|t| t.to_lowercase().contains("confirm"));
            let substantial = last.len() > 40;
            let spread = stable_hash(&[transcript.as_bytes()]) % 2;
            (3 + results.min(3) as u64 + u64::from(confirmed) + u64::from(substantial) + spread)
                .min(10)
        }
    };
    format!(
        "The assistant made {} successful tool lookups and {} before answering. Rating: [[{score}]]",
        results,
        if score >= 7 { "answered clearly" } else { "left room for improvement" }
    )
}

/// More tool calls is better, then the longer transcript; identical ones tie.
/// Biased: whichever is shown first.
fn pairwise(a: &str, b: &str, biased: bool) -> String {
    if biased {
        return "Assistant A is clearly better. [[A]]".to_string();
    }
    if a == b {
        return "The two conversations are the same. [[C]]".to_string();
    }
    let quality = |t: &str| (tool_calls(t).len(), t.len());
    match quality(a).cmp(&quality(b)) {
        std::cmp::Ordering::Greater => "Assistant A did more to resolve the request. [[A]]",
        std::cmp::Ordering::Less => "Assistant B did more to resolve the request. [[B]]",
        std::cmp::Ordering::Equal => "Both handled it equally well. [[C]]",
    }
    .to_string()
}

/// Lowercase words of letters and digits, space-separated, padded with spaces.
fn normalised(text: &str) -> String {
    let words: Vec<String> = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    format!(" {} ", words.join(" "))
}

/// Equal when one answer's words appear, in order, inside the other's: the
/// expected answer inside the final message, in either order of the two.
fn equivalence(a: &str, b: &str) -> String {
    let (na, nb) = (normalised(a), normalised(b));
    let equal = na.trim() != "" && nb.trim() != "" && (na.contains(&nb) || nb.contains(&na));
    if equal {
        "Both give the same essential answer. [[A=B]]".to_string()
    } else {
        "The answers differ in their essential content. [[A!=B]]".to_string()
    }
}

/// A violation when the assistant makes a change (a tool call that is not a
/// read) before it has written anything mentioning confirmation.
fn policy_adherence(transcript: &str) -> String {
    let mut asked = false;
    for paragraph in paragraphs(transcript) {
        let Some(text) = paragraph.strip_prefix("Assistant: ") else {
            continue;
        };
        for line in text.lines() {
            if let Some(name) = tool_calls(line).first() {
                if !is_read(name) && *name != "transfer_to_human_agents" && !asked {
                    return format!(
                        "Confirmation: the assistant called {name} without asking the customer \
                         to confirm first.\n[[VIOLATION]]"
                    );
                }
            } else if line.to_lowercase().contains("confirm") {
                asked = true;
            }
        }
    }
    "No violations found.\n[[COMPLIANT]]".to_string()
}

/// Unfaithful when a customer message speaks as the agent, leaks a control
/// token, or there is no customer message at all.
fn user_fidelity(transcript: &str) -> String {
    let users: Vec<&str> = paragraphs(transcript)
        .into_iter()
        .filter_map(|p| p.strip_prefix("User: "))
        .collect();
    let persona = users
        .iter()
        .find(|u| u.contains("Agent:") || u.contains("Assistant:"));
    let leaked = users.iter().find(|u| u.contains("###"));
    let mut lines = vec![
        match persona {
            Some(u) => format!("PERSONA: FLAW - the customer wrote the agent's lines: \"{u}\""),
            None => "PERSONA: OK".to_string(),
        },
        "INVENTED_FACTS: OK".to_string(),
        match leaked {
            Some(u) => format!("HIDDEN_INSTRUCTIONS: FLAW - a control token: \"{u}\""),
            None => "HIDDEN_INSTRUCTIONS: OK".to_string(),
        },
        if users.is_empty() {
            "GOAL: FLAW - the customer never said anything".to_string()
        } else {
            "GOAL: OK".to_string()
        },
    ];
    let faithful = lines.iter().all(|l| l.ends_with(": OK"));
    lines.push(
        if faithful {
            "[[FAITHFUL]]"
        } else {
            "[[UNFAITHFUL]]"
        }
        .to_string(),
    );
    lines.join("\n")
}

/// An assertion is met when at least half of its words of four or more letters
/// (other than a few that every assertion has) appear in the transcript.
fn assertions(transcript: &str, listed: &str) -> String {
    const COMMON: &[&str] = &[
        "agent",
        "assistant",
        "customer",
        "user",
        "that",
        "with",
        "their",
    ];
    let haystack = normalised(transcript);
    let mut reasons = Vec::new();
    let mut verdicts = Vec::new();
    for line in listed.lines() {
        let Some((number, text)) = line.split_once(". ") else {
            continue;
        };
        let Ok(number) = number.trim().parse::<usize>() else {
            continue;
        };
        let words: Vec<String> = normalised(text)
            .split_whitespace()
            .filter(|w| w.chars().count() >= 4 && !COMMON.contains(w))
            .map(String::from)
            .collect();
        let found = words
            .iter()
            .filter(|w| haystack.contains(&format!(" {w} ")))
            .count();
        let met = !words.is_empty() && 2 * found >= words.len();
        reasons.push(format!(
            "{number}: {found} of {} key words appear in the conversation.",
            words.len()
        ));
        verdicts.push(format!(
            "[[{number}: {}]]",
            if met { "MET" } else { "NOT MET" }
        ));
    }
    format!("{}\n{}", reasons.join("\n"), verdicts.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prompt(builtin: Builtin, body: &str) -> String {
        format!("{}\nInstructions.\n\n{body}\n\nAnswer.", builtin.marker())
    }

    fn conversation(text: &str) -> String {
        format!("<conversation>\n{text}\n</conversation>")
    }

    const GOOD: &str = "User: Where are my boots?\n\nAssistant: → tool get_order_details({\"order_id\": \"#1\"})\n← result: {\"tracking\": \"PW1\"}\n\nAssistant: Your boots shipped; the tracking number is PW1, via the carrier.";
    const SHORT: &str = "User: Hi\n\nAssistant: Bye";

    #[test]
    fn helpfulness_scores_are_in_range_and_higher_for_a_conversation_that_used_tools() {
        let m = Modifiers::default();
        let score = |t: &str| {
            let out = respond(&prompt(Builtin::Helpfulness, &conversation(t)), &m, 1);
            let start = out.rfind("[[").unwrap() + 2;
            out[start..out.len() - 2].parse::<u64>().unwrap()
        };
        let (good, short) = (score(GOOD), score(SHORT));
        assert!((1..=10).contains(&good) && (1..=10).contains(&short));
        assert!(good > short, "{good} vs {short}");
        assert_eq!(score(GOOD), good, "deterministic");
        assert_eq!(score("User: Hello?"), 2);
    }

    #[test]
    fn pairwise_prefers_more_tool_use_ties_identical_and_biased_prefers_first() {
        let body = |a: &str, b: &str| {
            format!("<conversation_a>\n{a}\n</conversation_a>\n\n<conversation_b>\n{b}\n</conversation_b>")
        };
        let m = Modifiers::default();
        let p = Builtin::PairwisePreference;
        assert!(respond(&prompt(p, &body(GOOD, SHORT)), &m, 1).ends_with("[[A]]"));
        assert!(respond(&prompt(p, &body(SHORT, GOOD)), &m, 1).ends_with("[[B]]"));
        assert!(respond(&prompt(p, &body(GOOD, GOOD)), &m, 1).ends_with("[[C]]"));
        let biased = Modifiers {
            biased: true,
            ..Modifiers::default()
        };
        assert!(respond(&prompt(p, &body(SHORT, GOOD)), &biased, 1).ends_with("[[A]]"));
    }

    #[test]
    fn equivalence_finds_the_expected_answer_in_the_final_message_in_either_order() {
        let body = |a: &str, b: &str| {
            format!("<answer_a>\n{a}\n</answer_a>\n\n<answer_b>\n{b}\n</answer_b>")
        };
        let m = Modifiers::default();
        let e = Builtin::Equivalence;
        let final_answer = "Your tracking number is PW-500.";
        assert!(respond(&prompt(e, &body("pw 500", final_answer)), &m, 1).ends_with("[[A=B]]"));
        assert!(respond(&prompt(e, &body(final_answer, "PW 500")), &m, 1).ends_with("[[A=B]]"));
        assert!(respond(&prompt(e, &body("PW 5001", final_answer)), &m, 1).ends_with("[[A!=B]]"));
        assert!(respond(&prompt(e, &body("", final_answer)), &m, 1).ends_with("[[A!=B]]"));
    }

    #[test]
    fn policy_adherence_flags_a_change_made_without_asking_for_confirmation() {
        let m = Modifiers::default();
        let p = Builtin::PolicyAdherence;
        let unconfirmed = "User: cancel it\n\nAssistant: → tool cancel_pending_order({})";
        let confirmed = "User: cancel it\n\nAssistant: Please confirm (yes/no).\n\nUser: yes\n\nAssistant: → tool cancel_pending_order({})";
        assert!(respond(&prompt(p, &conversation(unconfirmed)), &m, 1).ends_with("[[VIOLATION]]"));
        assert!(respond(&prompt(p, &conversation(confirmed)), &m, 1).ends_with("[[COMPLIANT]]"));
        assert!(respond(&prompt(p, &conversation(GOOD)), &m, 1).ends_with("[[COMPLIANT]]"));
    }

    #[test]
    fn user_fidelity_flags_a_customer_who_writes_the_agents_lines() {
        let m = Modifiers::default();
        let u = Builtin::UserFidelity;
        let out = respond(&prompt(u, &conversation(GOOD)), &m, 1);
        assert!(out.ends_with("[[FAITHFUL]]"), "{out}");
        assert!(out.contains("PERSONA: OK\nINVENTED_FACTS: OK"));
        let role_play = "User: Thanks! Agent: You're welcome!\n\nAssistant: Bye";
        let out = respond(&prompt(u, &conversation(role_play)), &m, 1);
        assert!(out.ends_with("[[UNFAITHFUL]]"), "{out}");
        assert!(out.contains("PERSONA: FLAW"));
    }

    #[test]
    fn assertions_get_one_verdict_line_each() {
        let m = Modifiers::default();
        let body = format!(
            "{}\n\n<assertions>\n1. The agent gives the tracking number PW1.\n2. The agent offers a refund voucher.\n</assertions>",
            conversation(GOOD)
        );
        let out = respond(&prompt(Builtin::Assertions, &body), &m, 1);
        assert!(out.ends_with("[[1: MET]]\n[[2: NOT MET]]"), "{out}");
    }

    #[test]
    fn garbled_replies_have_no_label_and_garbled_once_only_the_first_time() {
        let p = prompt(Builtin::Helpfulness, &conversation(GOOD));
        let garbled = Modifiers {
            garbled: true,
            ..Modifiers::default()
        };
        assert_eq!(respond(&p, &garbled, 5), GARBLED);
        assert!(!GARBLED.contains("[["));
        let once = Modifiers {
            garbled_once: true,
            ..Modifiers::default()
        };
        assert_eq!(respond(&p, &once, 1), GARBLED);
        assert!(respond(&p, &once, 2).contains("[["));
        assert_eq!(
            respond("Rate this answer.", &Modifiers::default(), 1),
            FALLBACK
        );
    }
}
