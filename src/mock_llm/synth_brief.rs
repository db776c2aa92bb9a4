//! How `mock-synth` honours the brief its prompt carries: the outcome
//! (refusal and transfer kinds of task), a required tool (a kind that calls
//! it), multi-intent (two kinds that write with different tools, for one
//! user), the difficulty (how the user authenticates and whether they know
//! the order id) and target tags (a kind about them, else the tags added).
//! On some proposal numbers its first attempt forgets part of the brief, so
//! that the brief check rejects it and the feedback fixes it.

use serde_json::{json, Value};

use crate::synth::{Outcome, ProposalBrief};

use super::{between, pick, task_for, Task, REPEAT_BACK, TEMPLATES};

/// A damaged item or a price match: the agent must transfer.
const TRANSFER: usize = 8;
/// A new shipping address for a pending order.
const PENDING_ADDRESS: usize = 9;
/// A return of an order not delivered yet: the agent must refuse.
const REFUSE_RETURN: usize = 10;
/// The refusal kind of the default cycle (cancel a non-pending order).
const REFUSE_CANCEL: usize = 6;
/// A return refunded to the user's gift card.
const RETURN_TO_GIFT_CARD: usize = 11;
/// A return of every item of a delivered order.
const RETURN_WHOLE_ORDER: usize = 12;

/// Kinds that change the state, and the tool that does: a multi-intent
/// scenario pairs two with different tools.
const WRITE_KINDS: &[(usize, &str)] = &[
    (1, "cancel_pending_order"),
    (2, "return_delivered_order_items"),
    (3, "modify_user_address"),
    (PENDING_ADDRESS, "modify_pending_order_address"),
    (RETURN_TO_GIFT_CARD, "return_delivered_order_items"),
    (RETURN_WHOLE_ORDER, "return_delivered_order_items"),
];

/// The brief of a prompt (the JSON in `<brief>`); the empty brief when
/// there is none.
pub(super) fn read(prompt: &str) -> ProposalBrief {
    between(prompt, "<brief>", "</brief>")
        .and_then(|t| serde_json::from_str(t).ok())
        .unwrap_or_default()
}

/// The kinds to try, in order: a cycle turned to `start`, then the kinds
/// tried only when no kind of the cycle fits. The return variants join the
/// cycle when the brief asks for a tool or tag (so returns asked for spread
/// over them); otherwise they would make returns a third of all tasks.
fn kinds(brief: &ProposalBrief, start: usize) -> Vec<usize> {
    let returns = [RETURN_TO_GIFT_CARD, RETURN_WHOLE_ORDER];
    let targeted = !brief.tools.is_empty() || !brief.tags.is_empty();
    let (mut cycle, mut extra): (Vec<usize>, Vec<usize>) = match brief.outcome {
        None => ((0..TEMPLATES).collect(), vec![PENDING_ADDRESS]),
        Some(Outcome::Resolve) => (vec![0, 1, 2, 3, 4, 5, 7, PENDING_ADDRESS], vec![]),
        Some(Outcome::Refusal) => (vec![REFUSE_CANCEL, REFUSE_RETURN], vec![]),
        Some(Outcome::Transfer) => (vec![TRANSFER], vec![]),
    };
    if brief.outcome.is_none_or(|o| o == Outcome::Resolve) {
        match targeted {
            true => cycle.extend(returns),
            false => extra.extend(returns),
        }
    }
    let n = cycle.len();
    cycle.rotate_left(start % n);
    cycle.extend(extra);
    cycle
}

/// How strictly a candidate must fit the brief; the search relaxes in turn.
#[derive(Clone, Copy, PartialEq)]
enum Fit {
    /// Its tools and its tags.
    Whole,
    /// Its tools (the tags are added).
    Tools,
    /// Anything: the brief check will say what is missing.
    Any,
}

/// The user and task that fit `brief` best: the kinds in turn, each with
/// every sampled user, first asking the whole brief, then its tools only,
/// then nothing.
pub(super) fn choose<'a>(
    users: &'a [Value],
    orders: &[Value],
    template: usize,
    brief: &ProposalBrief,
) -> Option<(&'a Value, Task)> {
    // A brief narrows the kinds, so the same few (kind, user, order) would
    // come back: with one, the first kind turns with every number, the first
    // user every 20 numbers, and the orders' round (`pick`) is scrambled.
    // Without one, the choice is the default cycle's.
    let cycle = template / 20;
    let (start, index, turn) = if brief == &ProposalBrief::default() {
        (cycle, template as u64, 0)
    } else {
        let scrambled = (template as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 54;
        (
            cycle + template,
            template as u64 + REPEAT_BACK * scrambled,
            cycle,
        )
    };
    let kinds = kinds(brief, start);
    for fit in [Fit::Whole, Fit::Tools, Fit::Any] {
        for &kind in &kinds {
            for k in 0..users.len() {
                let user = &users[(k + turn) % users.len()];
                let mine: Vec<&Value> = orders
                    .iter()
                    .filter(|o| o["user_id"] == user["user_id"])
                    .collect();
                let Some(task) = candidate(kind, user, &mine, index, brief) else {
                    continue;
                };
                if fits(fit, brief, &task) {
                    return Some((user, task));
                }
            }
        }
    }
    None
}

/// One kind's task for `user`, made multi-intent and shaped to the
/// brief's difficulty; `None` when the user's orders do not allow it.
fn candidate(
    kind: usize,
    user: &Value,
    orders: &[&Value],
    index: u64,
    brief: &ProposalBrief,
) -> Option<Task> {
    let mut task = task_of(kind, user, orders, index)?;
    if brief.multi_intent {
        task = with_second_request(task, kind, user, orders, index)?;
    }
    match brief.difficulty.as_deref() {
        Some("medium") => medium(&mut task),
        Some("hard") => hard(&mut task, user, orders)?,
        _ => {}
    }
    Some(task)
}

fn fits(fit: Fit, brief: &ProposalBrief, task: &Task) -> bool {
    let auth = match brief.difficulty.as_deref() {
        Some("medium" | "hard") => ["find_user_id_by_name_zip", "get_user_details"].as_slice(),
        _ => ["find_user_id_by_email"].as_slice(),
    };
    let calls = |tool: &str| {
        auth.contains(&tool)
            || task
                .actions
                .iter()
                .any(|a| a["name"].as_str() == Some(tool))
    };
    match fit {
        Fit::Whole => {
            brief.tools.iter().all(|t| calls(t))
                && brief.tags.iter().all(|t| task.tags.iter().any(|x| x == t))
        }
        Fit::Tools => brief.tools.iter().all(|t| calls(t)),
        Fit::Any => true,
    }
}

/// How the user proves who they are, and what they know about themselves:
/// by email (easy, or no difficulty asked), else by name and zip code.
pub(super) fn authenticate(user: &Value, difficulty: Option<&str>) -> Option<(Vec<Value>, String)> {
    let first = user["name"]["first_name"].as_str()?;
    let last = user["name"]["last_name"].as_str()?;
    match difficulty {
        Some("medium" | "hard") => {
            let zip = user["address"]["zip"].as_str()?;
            let user_id = user["user_id"].as_str()?;
            Some((
                vec![
                    json!({"name": "find_user_id_by_name_zip", "arguments": {"first_name": first, "last_name": last, "zip": zip}}),
                    json!({"name": "get_user_details", "arguments": {"user_id": user_id}}),
                ],
                format!("Your name is {first} {last}. Your zip code is {zip}."),
            ))
        }
        _ => {
            let email = user["email"].as_str()?;
            Some((
                vec![json!({"name": "find_user_id_by_email", "arguments": {"email": email}})],
                format!("Your name is {first} {last}. Your email is {email}."),
            ))
        }
    }
}

/// The scenario's tags: the task's, then any the brief asks for that the
/// task lacks.
pub(super) fn tags(task: &Task, brief: &ProposalBrief) -> Vec<String> {
    let mut tags: Vec<String> = task.tags.iter().map(|t| t.to_string()).collect();
    for t in &brief.tags {
        if !tags.contains(t) {
            tags.push(t.clone());
        }
    }
    tags
}

/// What a user who authenticates by name and zip code says instead of
/// giving their email.
fn without_email(task: &mut Task) {
    task.instructions = task.instructions.replace(
        "give your email when asked",
        "give your name and zip code when asked",
    );
}

fn medium(task: &mut Task) {
    without_email(task);
    task.instructions
        .push_str(" You do not remember which email you used: give your name and zip code.");
}

/// Hard: authenticated by name and zip, and the user does not know the
/// order id, so the agent goes through their orders to find it.
fn hard(task: &mut Task, user: &Value, orders: &[&Value]) -> Option<()> {
    let id = task.order.take()?;
    // A multi-intent task holds two ids; the user describes each by its
    // status and items.
    let ids: Vec<&str> = id.split(" and ").collect();
    let mut lookups = Vec::new();
    for order_id in user["orders"].as_array()? {
        let order_id = order_id.as_str()?;
        if !ids.contains(&order_id) {
            lookups.push(json!({"name": "get_order_details", "arguments": {"order_id": order_id}}));
        }
    }
    for one in &ids {
        let order = orders.iter().find(|o| o["order_id"] == *one)?;
        let items: Vec<&str> = order["items"]
            .as_array()?
            .iter()
            .filter_map(|i| i["name"].as_str())
            .collect();
        let status = order["status"].as_str()?;
        let hint = format!("your {status} order with the {}", items.join(" and the "));
        for text in [&mut task.reason, &mut task.instructions] {
            *text = text
                .replace(&format!("order {one}"), &hint)
                .replace(one, &hint);
        }
    }
    without_email(task);
    task.unknown
        .push_str(" You do not remember the order id; you know what you ordered.");
    task.instructions.push_str(
        " You do not remember your email or the order id: give your name and zip code, and describe the order by what is in it.",
    );
    lookups.append(&mut task.actions);
    task.actions = lookups;
    Some(())
}

/// `task` (of `kind`) and a second request of the same user that writes
/// with another tool, as one scenario tagged multi-intent.
fn with_second_request(
    first: Task,
    kind: usize,
    user: &Value,
    orders: &[&Value],
    index: u64,
) -> Option<Task> {
    let (_, tool) = WRITE_KINDS.iter().find(|(k, _)| *k == kind)?;
    let start = usize::try_from(index / 20).unwrap_or(0);
    let second = (0..WRITE_KINDS.len())
        .map(|k| WRITE_KINDS[(start + k) % WRITE_KINDS.len()])
        .filter(|(_, t)| t != tool)
        .find_map(|(k, _)| {
            // The next round's order when the first took this one.
            [index, index + REPEAT_BACK, index + 2 * REPEAT_BACK]
                .into_iter()
                .filter_map(|i| task_of(k, user, orders, i))
                .find(|t| t.order.is_none() || t.order != first.order)
        })?;
    let order = match (first.order, second.order) {
        (Some(a), Some(b)) => Some(format!("{a} and {b}")),
        (a, b) => a.or(b),
    };
    let mut tags = first.tags;
    for t in second.tags.into_iter().chain(["multi-intent"]) {
        if !tags.contains(&t) {
            tags.push(t);
        }
    }
    let mut actions = first.actions;
    actions.extend(second.actions);
    let mut communicate = first.communicate;
    communicate.extend(second.communicate);
    Some(Task {
        description: format!("{} And: {}", first.description, second.description),
        difficulty: "hard",
        tags,
        reason: format!("{} You also want this: {}", first.reason, second.reason),
        unknown: format!("{} {}", first.unknown, second.unknown),
        instructions: format!(
            "{} Then, in the same conversation: {}",
            first.instructions, second.instructions
        ),
        order,
        actions,
        communicate,
    })
}

/// The task of any kind: the default cycle's, or one only a brief reaches.
fn task_of(kind: usize, user: &Value, orders: &[&Value], index: u64) -> Option<Task> {
    let details = |id: &str| json!({"name": "get_order_details", "arguments": {"order_id": id}});
    match kind {
        TRANSFER => {
            let order = pick(orders, index, |o| o["status"] == "delivered")?;
            let id = order["order_id"].as_str()?;
            let items = order["items"].as_array()?;
            let item = items.get((index as usize / 20) % items.len().max(1))?["name"].as_str()?;
            let user_id = user["user_id"].as_str()?;
            let first = user["name"]["first_name"].as_str()?;
            let (reason, wants, tag) = if (index / 20).is_multiple_of(2) {
                (
                    format!("The {item} from order {id} arrived damaged."),
                    "compensation without sending it back",
                    "damaged-item",
                )
            } else {
                (
                    format!("You saw the {item} from order {id} for less at another store."),
                    "the price difference refunded",
                    "price-match",
                )
            };
            Some(Task {
                description: format!("{tag} on order {id}: out of scope, transfer."),
                difficulty: "medium",
                tags: vec!["retail", "transfer", tag, "synthesized"],
                reason: format!("{reason} You want {wants}."),
                unknown: "You do not know how such requests are handled.".into(),
                instructions: format!("Explain what happened with the {item} and ask for {wants}. Do not accept a normal return. If the agent transfers you to a human, end the conversation."),
                order: Some(id.into()),
                actions: vec![
                    details(id),
                    json!({"name": "transfer_to_human_agents", "arguments": {"summary": format!("{first} ({user_id}): {tag} for the {item} of delivered order {id}; wants {wants}.")}}),
                ],
                communicate: vec![],
            })
        }
        PENDING_ADDRESS => {
            let order = pick(orders, index, |o| o["status"] == "pending")?;
            let id = order["order_id"].as_str()?;
            let street = format!("{} Juniper Court", 20 + index % 870);
            Some(Task {
                description: format!("Ship pending order {id} to another address."),
                difficulty: "medium",
                tags: vec!["retail", "write", "address", "synthesized"],
                reason: format!("You want order {id} shipped to your office instead."),
                unknown: "You do not know whether it can still be changed.".into(),
                instructions: format!("Ask to ship order {id} to {street}, Suite 4, Seattle, WA 98101, USA. Confirm with 'yes' when asked."),
                order: Some(id.into()),
                actions: vec![
                    details(id),
                    json!({"name": "modify_pending_order_address", "arguments": {"order_id": id, "address1": street, "address2": "Suite 4", "city": "Seattle", "state": "WA", "country": "USA", "zip": "98101"}}),
                ],
                communicate: vec![],
            })
        }
        REFUSE_RETURN => {
            let order = pick(orders, index, |o| {
                o["status"] == "pending" || o["status"] == "processed"
            })?;
            let id = order["order_id"].as_str()?;
            let status = order["status"].as_str()?;
            let item = order["items"][0]["name"].as_str()?;
            Some(Task {
                description: format!("Refuse to return items of order {id}, which is {status}."),
                difficulty: "medium",
                tags: vec!["retail", "refusal", "return", "synthesized"],
                reason: format!("You want to return the {item} from order {id}."),
                unknown: "You do not know whether the order can be returned yet.".into(),
                instructions: "Ask to return the item for a refund; accept the refusal and end the conversation.".into(),
                order: Some(id.into()),
                actions: vec![details(id)],
                communicate: vec![status.into()],
            })
        }
        RETURN_TO_GIFT_CARD => {
            let gift = user["payment_methods"]
                .as_object()?
                .values()
                .find(|p| p["source"] == "gift_card")?["id"]
                .as_str()?;
            let order = pick(orders, index, |o| o["status"] == "delivered")?;
            let id = order["order_id"].as_str()?;
            let items = order["items"].as_array()?;
            let item = items.get((index as usize / 20) % items.len().max(1))?;
            let name = item["name"].as_str()?;
            Some(Task {
                description: format!("Return the {name} of order {id} to the gift card."),
                difficulty: "medium",
                tags: vec!["retail", "write", "return", "gift-card", "synthesized"],
                reason: format!("The {name} from order {id} is not what you hoped; you want to send it back for store credit."),
                unknown: "You do not know the item id.".into(),
                instructions: format!("Ask to return the {name} only, with the refund on your gift card. Confirm with 'yes' when asked."),
                order: Some(id.into()),
                actions: vec![
                    details(id),
                    json!({"name": "return_delivered_order_items", "arguments": {"order_id": id, "item_ids": [item["item_id"]], "payment_method_id": gift}}),
                ],
                communicate: vec![],
            })
        }
        RETURN_WHOLE_ORDER => {
            let order = pick(orders, index, |o| {
                o["status"] == "delivered" && o["items"].as_array().is_some_and(|i| i.len() >= 2)
            })?;
            let id = order["order_id"].as_str()?;
            let items = order["items"].as_array()?;
            let names: Vec<&str> = items.iter().filter_map(|i| i["name"].as_str()).collect();
            let payment = order["payment_history"][0]["payment_method_id"].as_str()?;
            Some(Task {
                description: format!("Return every item of order {id}."),
                difficulty: "medium",
                tags: vec!["retail", "write", "return", "synthesized"],
                reason: format!("You want to send back everything from order {id}: {}.", names.join(", ")),
                unknown: "You do not know the item ids.".into(),
                instructions: "Ask to return all the items of the order, refunded the way you paid. Confirm with 'yes' when asked.".into(),
                order: Some(id.into()),
                actions: vec![
                    details(id),
                    json!({"name": "return_delivered_order_items", "arguments": {"order_id": id, "item_ids": items.iter().map(|i| i["item_id"].clone()).collect::<Vec<_>>(), "payment_method_id": payment}}),
                ],
                communicate: vec![],
            })
        }
        _ => task_for(kind, user, orders, index),
    }
}

/// On some proposal numbers the first attempt forgets part of the brief:
/// its difficulty, else its tags, else its outcome's or multi-intent's tag.
/// The brief check names what is missing and the retry restores it.
pub(super) fn forget_on_first_attempt(index: u64, brief: &ProposalBrief, scenario: &mut Value) {
    if index % 7 != 3 {
        return;
    }
    if let Some(wanted) = &brief.difficulty {
        let other = if wanted == "easy" { "medium" } else { "easy" };
        scenario["difficulty"] = json!(other);
        return;
    }
    let drop: Vec<&str> = if !brief.tags.is_empty() {
        brief.tags.iter().map(String::as_str).collect()
    } else {
        match brief.outcome {
            Some(Outcome::Refusal) => vec!["refusal"],
            Some(Outcome::Transfer) => vec!["transfer"],
            _ if brief.multi_intent => vec!["multi-intent"],
            _ => vec![],
        }
    };
    if let Some(tags) = scenario["tags"].as_array_mut() {
        tags.retain(|t| !t.as_str().is_some_and(|t| drop.contains(&t)));
    }
}
