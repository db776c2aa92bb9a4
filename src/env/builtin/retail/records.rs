//! Real records a scenario generator grounds its proposals in: a few users
//! of the seed database, chosen by a seed, with their orders and the products
//! those orders hold. Nothing here is invented.

use std::collections::BTreeSet;

use serde_json::{json, Value};

use super::db::Database;
use super::reads::to_json;

/// Up to `n` users (at least one) starting at a place `seed` picks, in user-id
/// order, with all their orders and the products in them.
pub fn sample(db: &Database, seed: u64, n: usize) -> Result<Value, String> {
    let users: Vec<_> = db.users.values().collect();
    if users.is_empty() {
        return Ok(json!({"users": [], "orders": [], "products": []}));
    }
    let n = n.clamp(1, users.len());
    let start = usize::try_from(seed % users.len() as u64).unwrap_or(0);
    let chosen: Vec<_> = (0..n).map(|k| users[(start + k) % users.len()]).collect();
    let mut orders = Vec::new();
    let mut product_ids = BTreeSet::new();
    for user in &chosen {
        for order_id in &user.orders {
            if let Some(order) = db.orders.get(order_id.as_str()) {
                product_ids.extend(order.items.iter().map(|i| i.product_id.clone()));
                orders.push(to_json(order.as_ref())?);
            }
        }
    }
    let products = product_ids
        .iter()
        .filter_map(|id| db.products.get(id.as_str()))
        .map(|p| to_json(p.as_ref()))
        .collect::<Result<Vec<_>, _>>()?;
    let users = chosen
        .iter()
        .map(|u| to_json(u.as_ref()))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(json!({"users": users, "orders": orders, "products": products}))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::builtin::retail::RetailEnvironment;

    #[test]
    fn sampled_orders_and_products_belong_to_the_sampled_users() {
        let env = RetailEnvironment::new().unwrap();
        let db = env.open_session(&Default::default()).unwrap();
        let records = sample(db.state(), 7, 3).unwrap();
        let users = records["users"].as_array().unwrap();
        assert_eq!(users.len(), 3);
        let ids: Vec<&str> = users
            .iter()
            .map(|u| u["user_id"].as_str().unwrap())
            .collect();
        for order in records["orders"].as_array().unwrap() {
            assert!(ids.contains(&order["user_id"].as_str().unwrap()));
            let oid = order["order_id"].as_str().unwrap();
            assert!(db.state().orders.contains_key(oid));
        }
        assert!(!records["products"].as_array().unwrap().is_empty());
    }

    #[test]
    fn the_same_seed_gives_the_same_records_and_another_seed_others() {
        let env = RetailEnvironment::new().unwrap();
        let db = env.open_session(&Default::default()).unwrap();
        let a = sample(db.state(), 1, 2).unwrap();
        assert_eq!(a, sample(db.state(), 1, 2).unwrap());
        assert_ne!(a["users"], sample(db.state(), 2, 2).unwrap()["users"]);
    }
}
