//! Read tools: authentication lookups and details of users, orders, products.
//! None of them changes the state.

use serde::Serialize;
use serde_json::{json, Map, Value};

use super::db::Database;

pub fn to_json<T: Serialize>(value: &T) -> Result<Value, String> {
    serde_json::to_value(value).map_err(|e| format!("cannot show the result: {e}"))
}

pub fn find_user_id_by_email(db: &Database, email: &str) -> Result<Value, String> {
    let wanted = email.trim().to_lowercase();
    db.users
        .values()
        .find(|u| u.email.to_lowercase() == wanted)
        .map(|u| json!({ "user_id": u.user_id }))
        .ok_or_else(|| {
            format!(
                "no user with email '{email}'; check the spelling or try find_user_id_by_name_zip"
            )
        })
}

pub fn find_user_id_by_name_zip(
    db: &Database,
    first_name: &str,
    last_name: &str,
    zip: &str,
) -> Result<Value, String> {
    let first = first_name.trim().to_lowercase();
    let last = last_name.trim().to_lowercase();
    let zip = zip.trim();
    db.users
        .values()
        .find(|u| {
            u.name.first_name.to_lowercase() == first
                && u.name.last_name.to_lowercase() == last
                && u.address.zip == zip
        })
        .map(|u| json!({ "user_id": u.user_id }))
        .ok_or_else(|| {
            format!("no user named '{first_name} {last_name}' with zip '{zip}'; check the spelling or try find_user_id_by_email")
        })
}

pub fn get_user_details(db: &Database, user_id: &str) -> Result<Value, String> {
    to_json(db.user(user_id)?)
}

pub fn get_order_details(db: &Database, order_id: &str) -> Result<Value, String> {
    to_json(db.order(order_id)?)
}

pub fn get_product_details(db: &Database, product_id: &str) -> Result<Value, String> {
    to_json(db.product(product_id)?)
}

pub fn list_product_types(db: &Database) -> Value {
    let types: Map<String, Value> = db
        .products
        .values()
        .map(|p| (p.name.clone(), Value::from(p.product_id.clone())))
        .collect();
    Value::Object(types)
}
