//! The mock judge's review of a synthesized blueprint (`blueprint_review`):
//! it checks what it can of the blueprint it is shown, as the retail policy
//! asks. KNOWLEDGE: the customer's known info holds what the gold actions
//! identify them by (the email, or the name and zip). POLICY: the gold
//! actions identify the customer before touching an account or order, and a
//! blueprint tagged as a refusal does not ask to cancel an order the tools
//! show as pending (which the policy allows). The overall score is the
//! lowest criterion's.

use serde_json::Value;

use super::behaviour::stable_hash;

/// A gold action read back from the transcript: `→ tool name(arguments)`.
struct Action {
    name: String,
    arguments: Value,
}

/// The gold actions of a transcript, in order, and every tool result's text.
fn actions_and_results(transcript: &str) -> (Vec<Action>, Vec<&str>) {
    let mut actions = Vec::new();
    let mut results = Vec::new();
    for line in transcript.lines() {
        let line = line.trim_start_matches("Assistant: ");
        if let Some(call) = line.strip_prefix("→ tool ") {
            let Some((name, rest)) = call.split_once('(') else {
                continue;
            };
            let arguments = rest
                .strip_suffix(')')
                .and_then(|a| serde_json::from_str(a).ok())
                .unwrap_or(Value::Null);
            actions.push(Action {
                name: name.to_string(),
                arguments,
            });
        } else if let Some(result) = line.strip_prefix("← result: ") {
            results.push(result);
        }
    }
    (actions, results)
}

const IDENTIFY: [&str; 2] = ["find_user_id_by_email", "find_user_id_by_name_zip"];

/// What the customer must know for the identification the gold actions
/// make: the email, or the first name, last name and zip.
fn identity_needed(action: &Action) -> Vec<String> {
    let field = |k: &str| action.arguments[k].as_str().unwrap_or("").to_string();
    match action.name.as_str() {
        "find_user_id_by_email" => vec![field("email")],
        "find_user_id_by_name_zip" => vec![field("first_name"), field("last_name"), field("zip")],
        _ => Vec::new(),
    }
}

fn knowledge(actions: &[Action], known_info: &str) -> (u8, String) {
    let known = known_info.to_lowercase();
    for action in actions
        .iter()
        .filter(|a| IDENTIFY.contains(&a.name.as_str()))
    {
        let missing: Vec<String> = identity_needed(action)
            .into_iter()
            .filter(|v| v.is_empty() || !known.contains(&v.to_lowercase()))
            .collect();
        if !missing.is_empty() {
            return (
                1,
                format!(
                    "the policy requires identifying the customer by email or by name and zip, and the gold actions do it with {} ({}), but the known info does not give {}; the agent could not authenticate this customer, so add it to known_info",
                    action.name,
                    missing.join(", "),
                    if missing.len() == 1 { "it" } else { "them" }
                ),
            );
        }
    }
    (5, "the customer knows how to identify themselves".into())
}

fn policy(actions: &[Action], results: &[&str], goal: &str, tags: &str) -> (u8, String) {
    let touches_account =
        |a: &Action| a.arguments.get("user_id").is_some() || a.arguments.get("order_id").is_some();
    let identified_at = actions
        .iter()
        .position(|a| IDENTIFY.contains(&a.name.as_str()));
    if let Some((i, first)) = actions.iter().enumerate().find(|(_, a)| touches_account(a)) {
        if identified_at.is_none_or(|at| at > i) {
            return (
                2,
                format!(
                    "the gold actions call {} before identifying the customer, which the policy forbids",
                    first.name
                ),
            );
        }
    }
    let pending = results
        .iter()
        .any(|r| r.replace(' ', "").contains("\"status\":\"pending\""));
    if tags.contains("refusal") && goal.to_lowercase().contains("cancel") && pending {
        return (
            1,
            "the blueprint is a refusal, but the customer asks to cancel an order the tools show as pending, which the policy allows".into(),
        );
    }
    (5, "the gold actions are what the policy prescribes".into())
}

/// The review, in the template's format.
pub fn blueprint_review(goal: &str, known_info: &str, tags: &str, gold_actions: &str) -> String {
    let (actions, results) = actions_and_results(gold_actions);
    let policy = policy(&actions, &results, goal, tags);
    let feasibility = if actions.is_empty() {
        (
            2,
            "there are no gold actions to reach an outcome with".to_string(),
        )
    } else {
        (5, "the gold actions reach the goal".to_string())
    };
    let knowledge = knowledge(&actions, known_info);
    let realism = (
        4 + (stable_hash(&[goal.as_bytes()]) % 2) as u8,
        "a plausible request".to_string(),
    );
    let overall = [policy.0, feasibility.0, knowledge.0, realism.0]
        .into_iter()
        .min()
        .unwrap_or(1);
    format!(
        "POLICY: {} - {}\nFEASIBILITY: {} - {}\nKNOWLEDGE: {} - {}\nREALISM: {} - {}\nOverall: [[{overall}]]",
        policy.0, policy.1, feasibility.0, feasibility.1, knowledge.0, knowledge.1, realism.0, realism.1
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const BY_EMAIL: &str = "Assistant: → tool find_user_id_by_email({\"email\": \"mia.k@example.com\"})\n← result: mia_k_1\n\nAssistant: → tool get_order_details({\"order_id\": \"#LL1\"})\n← result: {\"order_id\": \"#LL1\", \"status\": \"pending\"}";

    fn overall(review: &str) -> &str {
        review.rsplit("[[").next().unwrap().trim_end_matches("]]")
    }

    #[test]
    fn a_customer_who_knows_the_email_the_gold_actions_use_passes() {
        let out = blueprint_review(
            "You want to cancel order #LL1.",
            "Your email is Mia.K@example.com. The order id is #LL1.",
            "retail, write, cancel",
            BY_EMAIL,
        );
        assert!(out.contains("KNOWLEDGE: 5"), "{out}");
        assert!(["4", "5"].contains(&overall(&out)), "{out}");
    }

    #[test]
    fn a_customer_who_cannot_be_identified_fails_knowledge_and_overall() {
        let out = blueprint_review(
            "You want to cancel order #LL1.",
            "Your name is Mia Kim. The order id is #LL1.",
            "retail, write, cancel",
            BY_EMAIL,
        );
        assert!(out.contains("KNOWLEDGE: 1 - "), "{out}");
        assert!(out.contains("mia.k@example.com"), "{out}");
        assert_eq!(overall(&out), "1");
        let by_zip = "→ tool find_user_id_by_name_zip({\"first_name\": \"Mia\", \"last_name\": \"Kim\", \"zip\": \"97201\"})\n← result: mia_k_1";
        let known = "You are Mia Kim, zip code 97201.";
        let ok = blueprint_review("Hi.", known, "read-only", by_zip);
        assert!(ok.contains("KNOWLEDGE: 5"), "{ok}");
        let no_zip = blueprint_review("Hi.", "You are Mia Kim.", "read-only", by_zip);
        assert!(
            no_zip.contains("KNOWLEDGE: 1 - ") && no_zip.contains("97201"),
            "{no_zip}"
        );
    }

    #[test]
    fn a_refusal_to_cancel_a_pending_order_breaks_the_policy() {
        let out = blueprint_review(
            "You want to cancel order #LL1.",
            "Your email is mia.k@example.com.",
            "retail, refusal, cancel",
            BY_EMAIL,
        );
        assert!(out.contains("POLICY: 1 - "), "{out}");
        let delivered = BY_EMAIL.replace("pending", "delivered");
        let out = blueprint_review(
            "You want to cancel order #LL1.",
            "Your email is mia.k@example.com.",
            "retail, refusal, cancel",
            &delivered,
        );
        assert!(out.contains("POLICY: 5"), "{out}");
    }

    #[test]
    fn acting_on_an_order_before_identifying_the_customer_breaks_the_policy() {
        let out = blueprint_review(
            "Where is my order?",
            "Your email is mia.k@example.com.",
            "read-only",
            "→ tool get_order_details({\"order_id\": \"#LL1\"})\n← result: {}",
        );
        assert!(
            out.contains("POLICY: 2 - ") && out.contains("get_order_details"),
            "{out}"
        );
    }
}
