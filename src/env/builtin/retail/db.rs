//! The store's state: users, products with their variants, orders. Loading
//! from JSON (with a reference check), the canonical hash used by the `db`
//! reward component, and a readable account of how two states differ.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::money::Money;

/// Records by id, shared until written (see [`Database`]).
pub type Table<T> = Arc<BTreeMap<Arc<str>, Arc<T>>>;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Database {
    // Tables and records are shared between a session's state and the seed
    // it was copied from: a write copies the one table it changes (pointers,
    // keys by reference count) and the one record, not the whole store. A
    // thousand conversations in flight each hold a store. See `Arc::make_mut`
    // in writes.rs.
    pub users: Table<User>,
    pub products: Table<Product>,
    pub orders: Table<Order>,
    /// Handoffs to a human agent in this conversation. Part of the state so that a
    /// needed transfer that never happened (or one that was not needed) fails `db`.
    #[serde(default)]
    pub transfers_to_human: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct User {
    pub user_id: String,
    pub name: PersonName,
    pub email: String,
    pub address: Address,
    pub payment_methods: BTreeMap<String, PaymentMethod>,
    pub orders: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PersonName {
    pub first_name: String,
    pub last_name: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Address {
    pub address1: String,
    pub address2: String,
    pub city: String,
    pub state: String,
    pub country: String,
    pub zip: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "source", rename_all = "snake_case", deny_unknown_fields)]
pub enum PaymentMethod {
    CreditCard {
        id: String,
        brand: String,
        last_four: String,
    },
    GiftCard {
        id: String,
        balance: Money,
    },
    Paypal {
        id: String,
    },
}

impl PaymentMethod {
    pub fn id(&self) -> &str {
        match self {
            PaymentMethod::CreditCard { id, .. }
            | PaymentMethod::GiftCard { id, .. }
            | PaymentMethod::Paypal { id } => id,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Product {
    pub product_id: String,
    pub name: String,
    pub description: String,
    pub variants: BTreeMap<String, Variant>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Variant {
    pub item_id: String,
    pub options: BTreeMap<String, String>,
    pub price: Money,
    pub available: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Order {
    pub order_id: String,
    pub user_id: String,
    pub address: Address,
    pub items: Vec<OrderItem>,
    pub status: OrderStatus,
    #[serde(default)]
    pub fulfillments: Vec<Fulfillment>,
    #[serde(default)]
    pub payment_history: Vec<Transaction>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancel_reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub return_request: Option<ReturnRequest>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exchange_request: Option<ExchangeRequest>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OrderItem {
    pub item_id: String,
    pub product_id: String,
    pub name: String,
    pub options: BTreeMap<String, String>,
    pub price: Money,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum OrderStatus {
    #[serde(rename = "pending")]
    Pending,
    #[serde(rename = "processed")]
    Processed,
    #[serde(rename = "delivered")]
    Delivered,
    #[serde(rename = "cancelled")]
    Cancelled,
    #[serde(rename = "return requested")]
    ReturnRequested,
    #[serde(rename = "exchange requested")]
    ExchangeRequested,
}

impl OrderStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            OrderStatus::Pending => "pending",
            OrderStatus::Processed => "processed",
            OrderStatus::Delivered => "delivered",
            OrderStatus::Cancelled => "cancelled",
            OrderStatus::ReturnRequested => "return requested",
            OrderStatus::ExchangeRequested => "exchange requested",
        }
    }
}

impl fmt::Display for OrderStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fulfillment {
    pub carrier: String,
    pub tracking_id: String,
    pub item_ids: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TransactionType {
    Payment,
    Refund,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Transaction {
    pub transaction_type: TransactionType,
    pub amount: Money,
    pub payment_method_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReturnRequest {
    pub item_ids: Vec<String>,
    pub payment_method_id: String,
    pub refund_amount: Money,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExchangeRequest {
    pub item_ids: Vec<String>,
    pub new_item_ids: Vec<String>,
    pub payment_method_id: String,
    /// New items minus old items: positive was charged, negative was refunded.
    pub price_difference: Money,
}

impl Database {
    /// Parse a state from JSON and check that its references hold together.
    pub fn from_value(value: Value) -> Result<Database, String> {
        let db: Database = serde_json::from_value(value).map_err(|e| e.to_string())?;
        db.check_references()?;
        Ok(db)
    }

    /// Every map key equals the id inside its entry, every order belongs to a
    /// user who lists it, every item of an order is a variant of its product.
    fn check_references(&self) -> Result<(), String> {
        for (key, user) in self.users.iter() {
            if **key != *user.user_id {
                return Err(format!("users.{key} has user_id '{}'", user.user_id));
            }
            for (pm_key, pm) in &user.payment_methods {
                if pm_key != pm.id() {
                    return Err(format!(
                        "users.{key}.payment_methods.{pm_key} has id '{}'",
                        pm.id()
                    ));
                }
            }
            for order_id in &user.orders {
                match self.orders.get(order_id.as_str()) {
                    Some(order) if *order.user_id == **key => {}
                    Some(order) => {
                        return Err(format!(
                            "users.{key} lists order {order_id}, which belongs to '{}'",
                            order.user_id
                        ))
                    }
                    None => {
                        return Err(format!("users.{key} lists unknown order {order_id}"));
                    }
                }
            }
        }
        for (key, product) in self.products.iter() {
            if **key != *product.product_id {
                return Err(format!(
                    "products.{key} has product_id '{}'",
                    product.product_id
                ));
            }
            for (item_key, variant) in &product.variants {
                if item_key != &variant.item_id {
                    return Err(format!(
                        "products.{key}.variants.{item_key} has item_id '{}'",
                        variant.item_id
                    ));
                }
            }
        }
        for (key, order) in self.orders.iter() {
            if **key != *order.order_id {
                return Err(format!("orders.{key} has order_id '{}'", order.order_id));
            }
            let Some(user) = self.users.get(order.user_id.as_str()) else {
                return Err(format!(
                    "orders.{key} belongs to unknown user '{}'",
                    order.user_id
                ));
            };
            if !user.orders.iter().any(|o| **o == **key) {
                return Err(format!(
                    "orders.{key} belongs to '{}', who does not list it",
                    order.user_id
                ));
            }
            for item in &order.items {
                let known = self
                    .products
                    .get(item.product_id.as_str())
                    .is_some_and(|p| p.variants.contains_key(&item.item_id));
                if !known {
                    return Err(format!(
                        "orders.{key} has item {} which is not a variant of product '{}'",
                        item.item_id, item.product_id
                    ));
                }
            }
        }
        Ok(())
    }

    /// The state as JSON text with object keys sorted (serde_json's map is a
    /// BTreeMap in this crate), so equal states give equal text.
    pub fn canonical_json(&self) -> String {
        match serde_json::to_value(self) {
            Ok(value) => value.to_string(),
            // Not reachable: every key is a string and every number finite.
            Err(e) => format!("unserializable state: {e}"),
        }
    }

    /// sha256 of [`Database::canonical_json`], lower-case hex.
    pub fn canonical_hash(&self) -> String {
        let digest = Sha256::digest(self.canonical_json().as_bytes());
        digest.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// One line per user, product or order that differs from `other`, naming
    /// the fields that differ, e.g. `order #LL46560: payment_history, status`.
    pub fn differences(&self, other: &Database) -> Vec<String> {
        let mut out = Vec::new();
        diff_section("user", &self.users, &other.users, &mut out);
        diff_section("product", &self.products, &other.products, &mut out);
        diff_section("order", &self.orders, &other.orders, &mut out);
        if self.transfers_to_human != other.transfers_to_human {
            out.push(format!(
                "transfers to a human agent: {} (gold: {})",
                self.transfers_to_human, other.transfers_to_human
            ));
        }
        out
    }

    /// The user or an error a model can act on.
    pub fn user(&self, user_id: &str) -> Result<&User, String> {
        self.users.get(user_id).map(Arc::as_ref).ok_or_else(|| {
            format!(
                "user '{user_id}' not found; look the user up by email or by name and zip first"
            )
        })
    }

    pub fn order(&self, order_id: &str) -> Result<&Order, String> {
        self.orders
            .get(order_id)
            .map(Arc::as_ref)
            .ok_or_else(|| unknown_order_message(order_id, self))
    }

    pub fn product(&self, product_id: &str) -> Result<&Product, String> {
        self.products
            .get(product_id)
            .map(Arc::as_ref)
            .ok_or_else(|| {
                format!(
                    "product '{product_id}' not found; list_product_types gives every product id"
                )
            })
    }

    /// The product and variant of an item id.
    pub fn variant(&self, item_id: &str) -> Option<(&Product, &Variant)> {
        self.products
            .values()
            .find_map(|p| p.variants.get(item_id).map(|v| (p.as_ref(), v)))
    }
}

fn unknown_order_message(order_id: &str, db: &Database) -> String {
    let prefixed = format!("#{order_id}");
    if !order_id.starts_with('#') && db.orders.contains_key(prefixed.as_str()) {
        format!(
            "order '{order_id}' not found; order ids start with '#', did you mean '{prefixed}'?"
        )
    } else {
        format!("order '{order_id}' not found")
    }
}

fn diff_section<T: Serialize>(
    kind: &str,
    mine: &BTreeMap<Arc<str>, T>,
    theirs: &BTreeMap<Arc<str>, T>,
    out: &mut Vec<String>,
) {
    let keys: BTreeSet<&Arc<str>> = mine.keys().chain(theirs.keys()).collect();
    for key in keys {
        match (mine.get(key), theirs.get(key)) {
            (Some(a), Some(b)) => {
                let fields = differing_fields(a, b);
                if !fields.is_empty() {
                    out.push(format!("{kind} {key}: {}", fields.join(", ")));
                }
            }
            (Some(_), None) => out.push(format!("{kind} {key}: only in this state")),
            (None, Some(_)) => out.push(format!("{kind} {key}: missing from this state")),
            (None, None) => {}
        }
    }
}

fn differing_fields<T: Serialize>(a: &T, b: &T) -> Vec<String> {
    match (serde_json::to_value(a), serde_json::to_value(b)) {
        (Ok(Value::Object(a)), Ok(Value::Object(b))) => {
            let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            keys.into_iter()
                .filter(|k| a.get(*k) != b.get(*k))
                .map(|k| k.to_string())
                .collect()
        }
        (Ok(a), Ok(b)) if a == b => Vec::new(),
        _ => vec!["(whole entry)".to_string()],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::builtin::retail::SEED_JSON;

    fn seed() -> Database {
        Database::from_value(serde_json::from_str(SEED_JSON).unwrap()).unwrap()
    }

    #[test]
    fn seed_database_parses_and_has_a_realistic_size() {
        let db = seed();
        assert!((18..=24).contains(&db.users.len()), "{}", db.users.len());
        assert!((10..=14).contains(&db.products.len()));
        assert!((38..=50).contains(&db.orders.len()));
        let sources: BTreeSet<&str> = db
            .users
            .values()
            .flat_map(|u| u.payment_methods.values())
            .map(|pm| match pm {
                PaymentMethod::CreditCard { .. } => "credit_card",
                PaymentMethod::GiftCard { .. } => "gift_card",
                PaymentMethod::Paypal { .. } => "paypal",
            })
            .collect();
        assert_eq!(sources.len(), 3);
        for status in [
            OrderStatus::Pending,
            OrderStatus::Processed,
            OrderStatus::Delivered,
            OrderStatus::Cancelled,
            OrderStatus::ReturnRequested,
            OrderStatus::ExchangeRequested,
        ] {
            assert!(
                db.orders.values().any(|o| o.status == status),
                "no {status} order in the seed"
            );
        }
    }

    #[test]
    fn shipped_orders_have_tracking_and_unshipped_ones_do_not() {
        for order in seed().orders.values() {
            let shipped = !matches!(order.status, OrderStatus::Pending | OrderStatus::Cancelled);
            assert_eq!(
                !order.fulfillments.is_empty(),
                shipped,
                "{}",
                order.order_id
            );
        }
    }

    #[test]
    fn seed_round_trips_through_json_unchanged() {
        let db = seed();
        let again = Database::from_value(serde_json::to_value(&db).unwrap()).unwrap();
        assert_eq!(db, again);
        assert_eq!(db.canonical_hash(), again.canonical_hash());
    }

    #[test]
    fn canonical_json_has_sorted_keys() {
        let json = seed().canonical_json();
        let orders = json.find("\"orders\"").unwrap();
        let products = json.find("\"products\"").unwrap();
        let users = json.find("\"users\"").unwrap();
        assert!(orders < products && products < users);
    }

    #[test]
    fn a_broken_reference_is_reported_with_its_path() {
        let mut value: Value = serde_json::from_str(SEED_JSON).unwrap();
        let first_order = value["orders"]
            .as_object()
            .unwrap()
            .keys()
            .next()
            .unwrap()
            .clone();
        value["orders"][&first_order]["user_id"] = Value::from("nobody");
        let err = Database::from_value(value).unwrap_err();
        assert!(
            err.contains(&first_order) && err.contains("nobody"),
            "{err}"
        );
    }

    #[test]
    fn differences_name_the_entry_and_the_fields() {
        let a = seed();
        let mut b = a.clone();
        let id = b.orders.keys().next().unwrap().clone();
        if let Some(order) = Arc::make_mut(&mut b.orders).get_mut(&id).map(Arc::make_mut) {
            order.status = OrderStatus::Cancelled;
            order.cancel_reason = Some("no longer needed".into());
        }
        let diff = a.differences(&b);
        assert_eq!(diff, vec![format!("order {id}: cancel_reason, status")]);
        assert!(a.differences(&a).is_empty());
    }

    #[test]
    fn an_order_id_without_its_hash_sign_gets_a_suggestion() {
        let db = seed();
        let id = db.orders.keys().next().unwrap().clone();
        let err = db.order(id.trim_start_matches('#')).unwrap_err();
        assert!(err.contains(&format!("did you mean '{id}'")), "{err}");
    }
}
