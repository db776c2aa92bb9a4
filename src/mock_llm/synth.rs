//! `mock-synth`: a scenario generator that reads the synthesis prompt's real
//! records, brief and proposal number, and proposes retail scenarios from
//! templates over those records. On some proposal numbers its first attempt
//! is deliberately broken (a reply that is not JSON, a tool error, a missing
//! write, an unknown ID, a fact in no output, a fact the user already
//! knows, an exact repeat of an earlier proposal, a customer the agent cannot
//! identify, which only the review committee catches); when the prompt
//! carries feedback, it proposes the fixed one (and takes the facts to
//! communicate out of what the user knows and says, where a hard task's
//! description of an order by its status put one). How it honours the brief (and forgets part of it on some first
//! attempts) is in `synth_brief.rs`.

use serde_json::{json, Value};

use crate::synth::ProposalBrief;

#[path = "synth_brief.rs"]
mod brief;

/// Kinds of task the mock proposes, tried in turn from the proposal number
/// until one fits the sampled user's orders.
const TEMPLATES: usize = 8;

/// How far back a deliberate repeat reaches: a multiple of both the number
/// of task kinds and the retail seed's 20 users.
const REPEAT_BACK: u64 = 160;

/// What the mock breaks on a first attempt, by proposal number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flaw {
    None,
    Format,
    ToolError,
    MissingWrite,
    UnknownId,
    UncommunicableFact,
    /// The user's known info holds the first fact to communicate: the
    /// `answer_leak` stage rejects it.
    AnswerLeak,
    Repeat,
    /// The known info drops the email the gold actions identify the user
    /// by: it passes validation by execution, and the committee rejects it.
    Unidentifiable,
}

fn flaw(index: u64) -> Flaw {
    if index % 13 == 12 && index >= REPEAT_BACK {
        return Flaw::Repeat;
    }
    match index % 11 {
        2 => Flaw::Format,
        4 => Flaw::ToolError,
        6 => Flaw::MissingWrite,
        7 => Flaw::AnswerLeak,
        8 => Flaw::UnknownId,
        10 => Flaw::UncommunicableFact,
        _ if index % 17 == 5 => Flaw::Unidentifiable,
        _ => Flaw::None,
    }
}

/// `known` without the sentence that identifies the customer (their email,
/// or their zip code beside their name).
fn without_identification(known: &str) -> String {
    let mut out = known.to_string();
    for lead in [" Your email is ", " Your zip code is "] {
        if let Some(start) = out.find(lead) {
            let end = out[start + 1..]
                .find(". ")
                .map_or(out.len(), |at| start + 1 + at + 1);
            out.replace_range(start..end, "");
        }
    }
    out
}

/// The scenario with its facts to communicate taken out of what the user
/// knows and says, as the `answer_leak` feedback asks: a hard task's "your
/// processed order with the lamp" becomes "your order with the lamp".
fn without_answers(scenario: &mut Value) {
    let facts: Vec<String> = scenario["evaluation"]["communicate"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| f.as_str().map(str::to_string))
        .collect();
    for field in ["reason_for_contact", "known_info", "task_instructions"] {
        let Some(text) = scenario["user"][field].as_str() else {
            continue;
        };
        let mut text = text.to_string();
        for fact in &facts {
            text = text.replace(&format!(" {fact} "), " ");
        }
        scenario["user"][field] = json!(text);
    }
}

fn between<'a>(text: &'a str, open: &str, close: &str) -> Option<&'a str> {
    let start = text.rfind(open)? + open.len();
    let end = text[start..].find(close)? + start;
    Some(text[start..end].trim())
}

/// The reply to a synthesis prompt.
pub fn respond(prompt: &str) -> String {
    let records: Value = between(prompt, "<records>", "</records>")
        .and_then(|t| serde_json::from_str(t).ok())
        .unwrap_or(Value::Null);
    let index: u64 = between(prompt, "Proposal number:", "\n")
        .and_then(|t| t.parse().ok())
        .unwrap_or(0);
    let retry = prompt.contains("<feedback");
    if records.get("users").is_none() {
        return super::synth_generic::respond(prompt, &records, index, retry);
    }
    let brief = brief::read(prompt);
    let flaw = if retry { Flaw::None } else { flaw(index) };
    if flaw == Flaw::Format {
        return "Here is a scenario: {\"id\": \"draft\", \"user\": {\"reason_for_contact\": "
            .into();
    }
    let template = match flaw {
        // The proposal made REPEAT_BACK numbers earlier: the same records
        // (the sampled users cycle every 20 numbers) and the same task kind.
        Flaw::Repeat => (index - REPEAT_BACK) as usize,
        _ => index as usize,
    };
    let mut scenario = propose(&records, template, &brief, index, flaw);
    if let Some(s) = scenario.as_mut().filter(|_| !retry && flaw == Flaw::None) {
        brief::forget_on_first_attempt(index, &brief, s);
    }
    if let Some(s) = scenario.as_mut().filter(|_| retry) {
        without_answers(s);
    }
    match scenario {
        Some(s) => format!("```json\n{s}\n```"),
        None => "I cannot propose a scenario: the prompt shows no user records.".into(),
    }
}

fn propose(
    records: &Value,
    template: usize,
    brief: &ProposalBrief,
    index: u64,
    flaw: Flaw,
) -> Option<Value> {
    let users = records["users"].as_array()?;
    let all_orders = records["orders"].as_array()?;
    // The sampled users cycle every 20 numbers; the kind changes with each
    // cycle, so every user meets every kind within REPEAT_BACK numbers. The
    // kind first, then the user: another sampled user who fits the kind
    // keeps proposals varied where the first user has no such order.
    let (user, mut task) = brief::choose(users, all_orders, template, brief)?;
    let (mut actions, mut known) = brief::authenticate(user, brief.difficulty.as_deref())?;
    actions.append(&mut task.actions);
    if let Some(order) = &task.order {
        match order.contains(' ') {
            true => known.push_str(&format!(" The order ids are {order}.")),
            false => known.push_str(&format!(" The order id is {order}.")),
        }
    }
    match flaw {
        Flaw::ToolError => actions
            .push(json!({"name": "get_order_details", "arguments": {"order_id": "#LL00000"}})),
        Flaw::MissingWrite => {
            let writes = actions.len();
            actions.retain(|a| !is_write(a["name"].as_str().unwrap_or_default()));
            if actions.len() == writes {
                known.push_str(" Your loyalty id is LOYAL_77x.");
            }
        }
        Flaw::UnknownId => known.push_str(" Your other order id is #LL99999."),
        Flaw::UncommunicableFact => task.communicate.push("refund of 999.99".into()),
        Flaw::AnswerLeak => {
            if let Some(fact) = task.communicate.first() {
                known.push_str(&format!(" You were told before that it is {fact}."));
            }
        }
        Flaw::Unidentifiable => known = without_identification(&known),
        _ => {}
    }
    let basis = if task.communicate.is_empty() {
        json!(["db"])
    } else {
        json!(["db", "communicate"])
    };
    Some(json!({
        "id": format!("mock-synth-{index}"),
        "description": task.description,
        "difficulty": brief.difficulty.as_deref().unwrap_or(task.difficulty),
        "tags": brief::tags(&task, brief),
        "user": {
            "reason_for_contact": task.reason,
            "known_info": known,
            "unknown_info": task.unknown,
            "task_instructions": task.instructions,
        },
        "evaluation": {"actions": actions, "communicate": task.communicate, "reward_basis": basis},
    }))
}

fn is_write(tool: &str) -> bool {
    crate::env::builtin::retail::specs::is_write(tool)
}

struct Task {
    description: String,
    difficulty: &'static str,
    tags: Vec<&'static str>,
    reason: String,
    unknown: String,
    instructions: String,
    order: Option<String>,
    actions: Vec<Value>,
    communicate: Vec<String>,
}

/// One of the orders that fit, chosen by the proposal's round (how many
/// times its first user met this kind before), so later rounds take other ones.
fn pick<'a>(orders: &[&'a Value], index: u64, fits: impl Fn(&Value) -> bool) -> Option<&'a Value> {
    let fitting: Vec<&Value> = orders.iter().copied().filter(|o| fits(o)).collect();
    let round = usize::try_from(index / REPEAT_BACK).unwrap_or(0);
    fitting.get(round % fitting.len().max(1)).copied()
}

fn task_for(template: usize, user: &Value, orders: &[&Value], index: u64) -> Option<Task> {
    let details = |id: &str| json!({"name": "get_order_details", "arguments": {"order_id": id}});
    match template {
        0 => {
            let order = pick(orders, index, |o| o["fulfillments"].get(0).is_some())?;
            let id = order["order_id"].as_str()?;
            let tracking = order["fulfillments"][0]["tracking_id"].as_str()?;
            let item = order["items"][0]["name"].as_str()?;
            Some(Task {
                description: format!("Tracking number of order {id}."),
                difficulty: "easy",
                tags: vec!["retail", "read-only", "tracking", "synthesized"],
                reason: format!("You want to know how to track the {item} you ordered (order {id})."),
                unknown: "You do not know the tracking number.".into(),
                instructions: "Ask for the tracking number; give your email when asked. End the conversation once you have it.".into(),
                order: Some(id.into()),
                actions: vec![details(id)],
                communicate: vec![tracking.into()],
            })
        }
        1 => {
            let order = pick(orders, index, |o| o["status"] == "pending")?;
            let id = order["order_id"].as_str()?;
            let reason =
                ["no longer needed", "ordered by mistake"][(index / REPEAT_BACK / 2 % 2) as usize];
            Some(Task {
                description: format!("Cancel pending order {id} ({reason})."),
                difficulty: "medium",
                tags: vec!["retail", "write", "cancel", "synthesized"],
                reason: format!("You want to cancel order {id}."),
                unknown: "You do not know when the refund arrives.".into(),
                instructions: format!("Ask to cancel order {id}; the reason is '{reason}'. Confirm with 'yes' when asked. Then end the conversation."),
                order: Some(id.into()),
                actions: vec![details(id), json!({"name": "cancel_pending_order", "arguments": {"order_id": id, "reason": reason}})],
                communicate: vec![],
            })
        }
        2 => {
            let order = pick(orders, index, |o| o["status"] == "delivered")?;
            let id = order["order_id"].as_str()?;
            let item = &order["items"][(index as usize) % order["items"].as_array()?.len().max(1)];
            let payment = order["payment_history"][0]["payment_method_id"].as_str()?;
            let item_name = item["name"].as_str()?;
            Some(Task {
                description: format!("Return the {item_name} of delivered order {id}."),
                difficulty: "medium",
                tags: vec!["retail", "write", "return", "synthesized"],
                reason: format!("You want to return the {item_name} from order {id}."),
                unknown: "You do not know the item id.".into(),
                instructions: "Ask to return that item only, refunded to the original payment method. Confirm with 'yes' when asked.".into(),
                order: Some(id.into()),
                actions: vec![details(id), json!({"name": "return_delivered_order_items", "arguments": {"order_id": id, "item_ids": [item["item_id"]], "payment_method_id": payment}})],
                communicate: vec![],
            })
        }
        3 => {
            let user_id = user["user_id"].as_str()?;
            let street = format!("{} Alder Row", 10 + index % 890);
            Some(Task {
                description: format!("Change the default address of {user_id}."),
                difficulty: "easy",
                tags: vec!["retail", "write", "address", "synthesized"],
                reason: "You moved and want your default address changed.".into(),
                unknown: "You do not know your user id.".into(),
                instructions: format!("Your new address is {street}, Portland, OR 97201, USA. Confirm with 'yes' when asked."),
                order: None,
                actions: vec![
                    json!({"name": "get_user_details", "arguments": {"user_id": user_id}}),
                    json!({"name": "modify_user_address", "arguments": {"user_id": user_id, "address1": street, "address2": "", "city": "Portland", "state": "OR", "country": "USA", "zip": "97201"}}),
                ],
                communicate: vec![],
            })
        }
        4 => {
            let user_id = user["user_id"].as_str()?;
            let gift = user["payment_methods"]
                .as_object()?
                .values()
                .find(|p| p["source"] == "gift_card")?;
            let balance = gift["balance"].as_f64()?;
            Some(Task {
                description: format!("Gift card balance of {user_id}."),
                difficulty: "easy",
                tags: vec!["retail", "read-only", "gift-card", "synthesized"],
                reason: format!(
                    "You want to know how much is left on your gift card ({}).",
                    gift["id"].as_str()?
                ),
                unknown: "You do not know the balance.".into(),
                instructions: "Ask for your gift card balance, then end the conversation.".into(),
                order: None,
                actions: vec![
                    json!({"name": "get_user_details", "arguments": {"user_id": user_id}}),
                ],
                communicate: vec![format!("{balance:.2}")],
            })
        }
        5 => {
            let order = pick(orders, index, |_| true)?;
            let items = order["items"].as_array()?;
            let item = items.get((index as usize) % items.len().max(1))?;
            let product = item["product_id"].as_str()?;
            let name = item["name"].as_str()?;
            Some(Task {
                description: format!("Which variants of the {name} exist."),
                difficulty: "easy",
                tags: vec!["retail", "read-only", "product-info", "synthesized"],
                reason: format!(
                    "You own a {name} and want to know which other options it comes in."
                ),
                unknown: "You do not know the product id.".into(),
                instructions: format!(
                    "Ask what options the {name} comes in. End the conversation when told."
                ),
                order: None,
                actions: vec![
                    json!({"name": "get_product_details", "arguments": {"product_id": product}}),
                ],
                communicate: vec![product.into()],
            })
        }
        6 => {
            let order = pick(orders, index, |o| {
                o["status"] != "pending" && o["status"] != "cancelled"
            })?;
            let id = order["order_id"].as_str()?;
            let status = order["status"].as_str()?;
            Some(Task {
                description: format!("Refuse to cancel order {id}, which is {status}."),
                difficulty: "medium",
                tags: vec!["retail", "refusal", "cancel", "synthesized"],
                reason: format!("You want to cancel order {id}."),
                unknown: "You do not know the order's status.".into(),
                instructions:
                    "Insist once on cancelling; accept the refusal and end the conversation.".into(),
                order: Some(id.into()),
                actions: vec![details(id)],
                communicate: vec![status.into()],
            })
        }
        _ => {
            let order = pick(orders, index, |_| true)?;
            let id = order["order_id"].as_str()?;
            let status = order["status"].as_str()?;
            Some(Task {
                description: format!("Status of order {id}."),
                difficulty: "easy",
                tags: vec!["retail", "read-only", "order-status", "synthesized"],
                reason: format!("You want to know the status of order {id}."),
                unknown: "You do not know the status.".into(),
                instructions: "Ask for the order's status, then end the conversation.".into(),
                order: Some(id.into()),
                actions: vec![details(id)],
                communicate: vec![status.into()],
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unidentifiable_customer_keeps_their_name_and_order_but_loses_email_or_zip() {
        assert_eq!(
            without_identification(
                "Your name is Ada Li. Your email is ada.li@x.com. The order id is #LL1."
            ),
            "Your name is Ada Li. The order id is #LL1."
        );
        assert_eq!(
            without_identification("Your name is Ada Li. Your zip code is 97201."),
            "Your name is Ada Li."
        );
    }
}
