//! Write tools: cancel, modify and address changes of pending orders, returns
//! and exchanges of delivered ones, the user's default address. Each checks
//! everything it needs before it changes anything, and says what was wrong in
//! terms a model can act on.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use super::db::{
    Address, Database, ExchangeRequest, Order, OrderItem, OrderStatus, PaymentMethod,
    ReturnRequest, Transaction, TransactionType,
};
use super::money::Money;
use super::reads::to_json;
use super::specs::CANCEL_REASONS;

pub fn cancel_pending_order(
    db: &mut Database,
    order_id: &str,
    reason: &str,
) -> Result<Value, String> {
    if !CANCEL_REASONS.contains(&reason) {
        return Err(format!(
            "reason must be 'no longer needed' or 'ordered by mistake', not '{reason}'"
        ));
    }
    let order = db.order(order_id)?;
    require_status(order, OrderStatus::Pending, "cancelled")?;
    let user_id = order.user_id.clone();

    let mut paid: BTreeMap<String, Money> = BTreeMap::new();
    for t in &order.payment_history {
        let net = paid.entry(t.payment_method_id.clone()).or_default();
        match t.transaction_type {
            TransactionType::Payment => *net += t.amount,
            TransactionType::Refund => *net -= t.amount,
        }
    }
    let refunds: Vec<Transaction> = paid
        .into_iter()
        .filter(|(_, amount)| amount.is_positive())
        .map(|(payment_method_id, amount)| Transaction {
            transaction_type: TransactionType::Refund,
            amount,
            payment_method_id,
        })
        .collect();

    for refund in &refunds {
        credit_gift_card(db, &user_id, &refund.payment_method_id, refund.amount);
    }
    let order = order_mut(db, order_id)?;
    order.status = OrderStatus::Cancelled;
    order.cancel_reason = Some(reason.to_string());
    order.payment_history.extend(refunds);
    to_json(order)
}

pub fn modify_pending_order_address(
    db: &mut Database,
    order_id: &str,
    address: Address,
) -> Result<Value, String> {
    check_address(&address)?;
    require_status(
        db.order(order_id)?,
        OrderStatus::Pending,
        "given a new address",
    )?;
    let order = order_mut(db, order_id)?;
    order.address = address;
    to_json(order)
}

pub fn modify_user_address(
    db: &mut Database,
    user_id: &str,
    address: Address,
) -> Result<Value, String> {
    check_address(&address)?;
    db.user(user_id)?;
    let user = Arc::make_mut(&mut db.users)
        .get_mut(user_id)
        .map(Arc::make_mut)
        .ok_or_else(|| format!("user '{user_id}' not found"))?;
    user.address = address;
    to_json(user)
}

pub fn modify_pending_order_items(
    db: &mut Database,
    order_id: &str,
    item_ids: &[String],
    new_item_ids: &[String],
    payment_method_id: &str,
) -> Result<Value, String> {
    let swap = Swap::of(
        db,
        order_id,
        (item_ids, new_item_ids),
        OrderStatus::Pending,
        "modified",
    )?;
    let transaction = settle(db, &swap.user_id, payment_method_id, swap.difference)?;

    let order = order_mut(db, order_id)?;
    for (at, new) in swap.replacements {
        order.items[at] = new;
    }
    order.payment_history.extend(transaction);
    to_json(order)
}

pub fn return_delivered_order_items(
    db: &mut Database,
    order_id: &str,
    item_ids: &[String],
    payment_method_id: &str,
) -> Result<Value, String> {
    let order = db.order(order_id)?;
    require_status(order, OrderStatus::Delivered, "returned")?;
    let positions = pick_items(order, item_ids)?;
    let user_id = order.user_id.clone();
    let method = owned_payment_method(db, &user_id, payment_method_id)?;
    let original: Vec<&str> = order
        .payment_history
        .iter()
        .filter(|t| t.transaction_type == TransactionType::Payment)
        .map(|t| t.payment_method_id.as_str())
        .collect();
    let is_gift_card = matches!(method, PaymentMethod::GiftCard { .. });
    if !is_gift_card && !original.contains(&payment_method_id) {
        return Err(format!(
            "refunds for order {order_id} go to its original payment method ({}) or to one of the user's gift cards; '{payment_method_id}' is neither",
            original.join(", ")
        ));
    }
    let refund_amount: Money = positions.iter().map(|at| order.items[*at].price).sum();
    let returned: Vec<String> = positions
        .iter()
        .map(|at| order.items[*at].item_id.clone())
        .collect();

    credit_gift_card(db, &user_id, payment_method_id, refund_amount);
    let order = order_mut(db, order_id)?;
    order.status = OrderStatus::ReturnRequested;
    order.return_request = Some(ReturnRequest {
        item_ids: returned,
        payment_method_id: payment_method_id.to_string(),
        refund_amount,
    });
    order.payment_history.push(Transaction {
        transaction_type: TransactionType::Refund,
        amount: refund_amount,
        payment_method_id: payment_method_id.to_string(),
    });
    to_json(order)
}

pub fn exchange_delivered_order_items(
    db: &mut Database,
    order_id: &str,
    item_ids: &[String],
    new_item_ids: &[String],
    payment_method_id: &str,
) -> Result<Value, String> {
    let swap = Swap::of(
        db,
        order_id,
        (item_ids, new_item_ids),
        OrderStatus::Delivered,
        "exchanged",
    )?;
    let transaction = settle(db, &swap.user_id, payment_method_id, swap.difference)?;

    let order = order_mut(db, order_id)?;
    order.status = OrderStatus::ExchangeRequested;
    order.exchange_request = Some(ExchangeRequest {
        item_ids: swap.old_ids,
        new_item_ids: swap
            .replacements
            .into_iter()
            .map(|(_, new)| new.item_id)
            .collect(),
        payment_method_id: payment_method_id.to_string(),
        price_difference: swap.difference,
    });
    order.payment_history.extend(transaction);
    to_json(order)
}

/// Items of an order swapped for other variants of the same products, as a
/// pending order's modification and a delivered order's exchange both do:
/// checked, not yet written.
struct Swap {
    user_id: String,
    /// The ids of the items swapped out, in the order given.
    old_ids: Vec<String>,
    /// Each swapped item's position in the order and what replaces it.
    replacements: Vec<(usize, OrderItem)>,
    /// What the new items cost more (or, below zero, less) than the old.
    difference: Money,
}

impl Swap {
    /// `verb` completes "only pending orders can be ...".
    fn of(
        db: &Database,
        order_id: &str,
        (item_ids, new_item_ids): (&[String], &[String]),
        status: OrderStatus,
        verb: &str,
    ) -> Result<Swap, String> {
        let order = db.order(order_id)?;
        require_status(order, status, verb)?;
        let positions = pick_items(order, item_ids)?;
        let replacements = replacements(db, order, &positions, new_item_ids)?;
        Ok(Swap {
            user_id: order.user_id.clone(),
            old_ids: positions
                .iter()
                .map(|at| order.items[*at].item_id.clone())
                .collect(),
            difference: replacements
                .iter()
                .map(|(at, new)| new.price - order.items[*at].price)
                .sum(),
            replacements,
        })
    }
}

fn order_mut<'a>(db: &'a mut Database, order_id: &str) -> Result<&'a mut Order, String> {
    Arc::make_mut(&mut db.orders)
        .get_mut(order_id)
        .map(Arc::make_mut)
        .ok_or_else(|| format!("order '{order_id}' not found"))
}

/// `verb` completes "only pending orders can be ...".
fn require_status(order: &Order, wanted: OrderStatus, verb: &str) -> Result<(), String> {
    if order.status == wanted {
        Ok(())
    } else {
        Err(format!(
            "order {} is {}; only {wanted} orders can be {verb}",
            order.order_id, order.status
        ))
    }
}

fn check_address(address: &Address) -> Result<(), String> {
    let required = [
        ("address1", &address.address1),
        ("city", &address.city),
        ("state", &address.state),
        ("country", &address.country),
        ("zip", &address.zip),
    ];
    for (field, value) in required {
        if value.trim().is_empty() {
            return Err(format!("field '{field}' of the address is empty"));
        }
    }
    Ok(())
}

fn describe_item(item_id: &str, name: &str, options: &BTreeMap<String, String>) -> String {
    let options: Vec<String> = options.iter().map(|(k, v)| format!("{k} {v}")).collect();
    if options.is_empty() {
        format!("{item_id} ({name})")
    } else {
        format!("{item_id} ({name}, {})", options.join(", "))
    }
}

/// Positions in `order.items` of the listed ids; an id listed twice takes two
/// units of that item.
fn pick_items(order: &Order, item_ids: &[String]) -> Result<Vec<usize>, String> {
    if item_ids.is_empty() {
        return Err("item_ids is empty; list at least one item id of the order".to_string());
    }
    let mut taken = vec![false; order.items.len()];
    let mut positions = Vec::with_capacity(item_ids.len());
    for item_id in item_ids {
        let free = order
            .items
            .iter()
            .enumerate()
            .position(|(at, item)| !taken[at] && &item.item_id == item_id);
        match free {
            Some(at) => {
                taken[at] = true;
                positions.push(at);
            }
            None if order.items.iter().any(|item| &item.item_id == item_id) => {
                let listed = item_ids.iter().filter(|id| *id == item_id).count();
                let held = order.items.iter().filter(|i| &i.item_id == item_id).count();
                return Err(format!(
                    "item {item_id} is listed {listed} times but order {} has {held} of it",
                    order.order_id
                ));
            }
            None => {
                let items: Vec<String> = order
                    .items
                    .iter()
                    .map(|i| describe_item(&i.item_id, &i.name, &i.options))
                    .collect();
                return Err(format!(
                    "item '{item_id}' is not in order {}; its items are: {}",
                    order.order_id,
                    items.join("; ")
                ));
            }
        }
    }
    Ok(positions)
}

/// The new order items replacing the items at `positions`: each an available,
/// different variant of the same product.
fn replacements(
    db: &Database,
    order: &Order,
    positions: &[usize],
    new_item_ids: &[String],
) -> Result<Vec<(usize, OrderItem)>, String> {
    if positions.len() != new_item_ids.len() {
        return Err(format!(
            "item_ids has {} ids but new_item_ids has {}; give one new item id for each item",
            positions.len(),
            new_item_ids.len()
        ));
    }
    let mut out = Vec::with_capacity(positions.len());
    for (at, new_id) in positions.iter().zip(new_item_ids) {
        let old = &order.items[*at];
        let Some((product, variant)) = db.variant(new_id) else {
            return Err(format!(
                "item '{new_id}' does not exist; get_product_details lists the item ids of product {}",
                old.product_id
            ));
        };
        if product.product_id != old.product_id {
            return Err(format!(
                "item {new_id} is a {} but item {} is a {}; items can only be swapped for another variant of the same product",
                product.name, old.item_id, old.name
            ));
        }
        if variant.item_id == old.item_id {
            return Err(format!(
                "item {new_id} would be replaced by itself; choose a different variant"
            ));
        }
        if !variant.available {
            return Err(format!(
                "item {} is not available; choose an available variant of {}",
                describe_item(&variant.item_id, &product.name, &variant.options),
                product.product_id
            ));
        }
        out.push((
            *at,
            OrderItem {
                item_id: variant.item_id.clone(),
                product_id: product.product_id.clone(),
                name: product.name.clone(),
                options: variant.options.clone(),
                price: variant.price,
            },
        ));
    }
    Ok(out)
}

fn owned_payment_method<'a>(
    db: &'a Database,
    user_id: &str,
    payment_method_id: &str,
) -> Result<&'a PaymentMethod, String> {
    let user = db.user(user_id)?;
    user.payment_methods.get(payment_method_id).ok_or_else(|| {
        let owned: Vec<&str> = user.payment_methods.keys().map(String::as_str).collect();
        format!(
            "payment method '{payment_method_id}' does not belong to user {user_id}; their payment methods are: {}",
            owned.join(", ")
        )
    })
}

/// Charge (`amount` > 0) or refund (`amount` < 0) a price difference to one of
/// the user's payment methods. A gift card must cover a charge.
fn settle(
    db: &mut Database,
    user_id: &str,
    payment_method_id: &str,
    amount: Money,
) -> Result<Option<Transaction>, String> {
    let method = owned_payment_method(db, user_id, payment_method_id)?;
    if let PaymentMethod::GiftCard { balance, .. } = method {
        if amount > *balance {
            return Err(format!(
                "gift card {payment_method_id} has a balance of {balance}, not enough to pay the difference of {amount}; choose another payment method"
            ));
        }
    }
    if amount == Money::ZERO {
        return Ok(None);
    }
    credit_gift_card(db, user_id, payment_method_id, -amount);
    Ok(Some(Transaction {
        transaction_type: if amount.is_positive() {
            TransactionType::Payment
        } else {
            TransactionType::Refund
        },
        amount: amount.abs(),
        payment_method_id: payment_method_id.to_string(),
    }))
}

/// Add `amount` (negative: take it) to the balance of the user's gift card
/// `payment_method_id`; other payment methods keep no balance here.
fn credit_gift_card(db: &mut Database, user_id: &str, payment_method_id: &str, amount: Money) {
    let method = Arc::make_mut(&mut db.users)
        .get_mut(user_id)
        .map(Arc::make_mut)
        .and_then(|u| u.payment_methods.get_mut(payment_method_id));
    if let Some(PaymentMethod::GiftCard { balance, .. }) = method {
        *balance += amount;
    }
}
