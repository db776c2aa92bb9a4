//! The retail tools as the policy sees them: names, descriptions and JSON
//! Schemas of their arguments. The argument checker reads these same schemas,
//! so what is documented is what is enforced.

use serde_json::{json, Map, Value};

use crate::env::ToolSpec;

pub const FIND_USER_ID_BY_EMAIL: &str = "find_user_id_by_email";
pub const FIND_USER_ID_BY_NAME_ZIP: &str = "find_user_id_by_name_zip";
pub const GET_USER_DETAILS: &str = "get_user_details";
pub const GET_ORDER_DETAILS: &str = "get_order_details";
pub const GET_PRODUCT_DETAILS: &str = "get_product_details";
pub const LIST_PRODUCT_TYPES: &str = "list_product_types";
pub const CANCEL_PENDING_ORDER: &str = "cancel_pending_order";
pub const MODIFY_PENDING_ORDER_ADDRESS: &str = "modify_pending_order_address";
pub const MODIFY_PENDING_ORDER_ITEMS: &str = "modify_pending_order_items";
pub const MODIFY_USER_ADDRESS: &str = "modify_user_address";
pub const RETURN_DELIVERED_ORDER_ITEMS: &str = "return_delivered_order_items";
pub const EXCHANGE_DELIVERED_ORDER_ITEMS: &str = "exchange_delivered_order_items";
pub const CALCULATE: &str = "calculate";
pub const TRANSFER_TO_HUMAN_AGENTS: &str = "transfer_to_human_agents";

/// Tools that change the store's state.
pub const WRITE_TOOLS: &[&str] = &[
    CANCEL_PENDING_ORDER,
    MODIFY_PENDING_ORDER_ADDRESS,
    MODIFY_PENDING_ORDER_ITEMS,
    MODIFY_USER_ADDRESS,
    RETURN_DELIVERED_ORDER_ITEMS,
    EXCHANGE_DELIVERED_ORDER_ITEMS,
];

/// The reasons `cancel_pending_order` accepts.
pub const CANCEL_REASONS: &[&str] = &["no longer needed", "ordered by mistake"];

pub fn is_write(tool: &str) -> bool {
    WRITE_TOOLS.contains(&tool)
}

fn string(description: &str) -> Value {
    json!({"type": "string", "description": description})
}

fn string_list(description: &str) -> Value {
    json!({"type": "array", "items": {"type": "string"}, "description": description})
}

fn order_id() -> Value {
    string("The order id, including the leading '#', e.g. '#LL40568'.")
}

fn user_id() -> Value {
    string("The user id, e.g. 'maya.okafor.55', as returned by find_user_id_by_email or find_user_id_by_name_zip.")
}

/// An object schema; every property is required unless listed in `optional`.
fn object(properties: &[(&str, Value)], optional: &[&str]) -> Value {
    let mut props = Map::new();
    let mut required = Vec::new();
    for (name, schema) in properties {
        props.insert((*name).to_string(), schema.clone());
        if !optional.contains(name) {
            required.push(Value::from(*name));
        }
    }
    json!({
        "type": "object",
        "properties": props,
        "required": required,
        "additionalProperties": false,
    })
}

fn address_properties(first: (&'static str, Value)) -> Vec<(&'static str, Value)> {
    vec![
        first,
        (
            "address1",
            string("Street address, e.g. '418 Alder Street'."),
        ),
        (
            "address2",
            string("Apartment, suite or unit, e.g. 'Apt 3'; an empty string if there is none."),
        ),
        ("city", string("City, e.g. 'Portland'.")),
        ("state", string("Two-letter state code, e.g. 'OR'.")),
        ("country", string("Country, e.g. 'USA'.")),
        ("zip", string("Five-digit zip code, e.g. '97214'.")),
    ]
}

fn spec(name: &str, description: &str, parameters: Value) -> ToolSpec {
    ToolSpec {
        name: name.to_string(),
        description: description.to_string(),
        parameters,
    }
}

/// Every tool of the retail domain, reads first.
pub fn tool_specs() -> Vec<ToolSpec> {
    vec![
        spec(
            FIND_USER_ID_BY_EMAIL,
            "Find a customer's user id by their email address. Use this to authenticate the customer.",
            object(&[("email", string("The customer's email address, e.g. 'maya.okafor@mailbox.example'."))], &[]),
        ),
        spec(
            FIND_USER_ID_BY_NAME_ZIP,
            "Find a customer's user id by first name, last name and the zip code of their address. Use this to authenticate a customer who does not remember their email.",
            object(
                &[
                    ("first_name", string("The customer's first name, e.g. 'Maya'.")),
                    ("last_name", string("The customer's last name, e.g. 'Okafor'.")),
                    ("zip", string("The zip code of the customer's address, e.g. '97214'.")),
                ],
                &[],
            ),
        ),
        spec(
            GET_USER_DETAILS,
            "Get a customer's profile: name, email, default address, payment methods (with gift card balances) and the ids of their orders.",
            object(&[("user_id", user_id())], &[]),
        ),
        spec(
            GET_ORDER_DETAILS,
            "Get an order: its items (item id, product id, options, price), status, shipping address, tracking (carrier and tracking id, for shipped orders) and payment history.",
            object(&[("order_id", order_id())], &[]),
        ),
        spec(
            GET_PRODUCT_DETAILS,
            "Get a product's description and all its variants: item id, options, price and whether it is available to order.",
            object(&[("product_id", string("The product id, e.g. 'P6530', from list_product_types or an order's items."))], &[]),
        ),
        spec(
            LIST_PRODUCT_TYPES,
            "List every product the store sells, as a map from product name to product id.",
            object(&[], &[]),
        ),
        spec(
            CANCEL_PENDING_ORDER,
            "Cancel a pending order. The full amount paid is refunded to the payment methods that paid for it (gift cards at once, other methods within 5 to 7 business days). Only pending orders can be cancelled. Get the customer's explicit confirmation first.",
            object(
                &[
                    ("order_id", order_id()),
                    (
                        "reason",
                        json!({
                            "type": "string",
                            "enum": CANCEL_REASONS,
                            "description": "Why the customer cancels: 'no longer needed' or 'ordered by mistake'.",
                        }),
                    ),
                ],
                &[],
            ),
        ),
        spec(
            MODIFY_PENDING_ORDER_ADDRESS,
            "Change the shipping address of a pending order. Get the customer's explicit confirmation first.",
            object(&address_properties(("order_id", order_id())), &[]),
        ),
        spec(
            MODIFY_PENDING_ORDER_ITEMS,
            "Swap items of a pending order for other variants of the same product (e.g. another size or colour). The price difference is charged to, or refunded to, the given payment method; a gift card must have enough balance to cover a charge. Get the customer's explicit confirmation first.",
            object(
                &[
                    ("order_id", order_id()),
                    ("item_ids", string_list("Item ids in the order to replace, e.g. ['798152']. List an id twice to replace two units of it.")),
                    ("new_item_ids", string_list("The new item ids, in the same order as item_ids; each must be an available variant of the same product.")),
                    ("payment_method_id", string("The customer's payment method that pays or receives the price difference, e.g. 'card_962922' or 'gift_104023'.")),
                ],
                &[],
            ),
        ),
        spec(
            MODIFY_USER_ADDRESS,
            "Change a customer's default address (used for future orders; existing orders keep their shipping address). Get the customer's explicit confirmation first.",
            object(&address_properties(("user_id", user_id())), &[]),
        ),
        spec(
            RETURN_DELIVERED_ORDER_ITEMS,
            "Request the return of items of a delivered order. The price of the returned items is refunded to the order's original payment method or to one of the customer's gift cards (gift cards are credited at once). The order's status becomes 'return requested'; an order can have one return or exchange only, so collect every item first. Get the customer's explicit confirmation first.",
            object(
                &[
                    ("order_id", order_id()),
                    ("item_ids", string_list("Item ids in the order to return, e.g. ['162655', '188272'].")),
                    ("payment_method_id", string("Where the refund goes: the order's original payment method or one of the customer's gift cards.")),
                ],
                &[],
            ),
        ),
        spec(
            EXCHANGE_DELIVERED_ORDER_ITEMS,
            "Request the exchange of items of a delivered order for other variants of the same product. The price difference is charged to, or refunded to, the given payment method; a gift card must have enough balance to cover a charge. The order's status becomes 'exchange requested'; an order can have one return or exchange only, so collect every item first. Get the customer's explicit confirmation first.",
            object(
                &[
                    ("order_id", order_id()),
                    ("item_ids", string_list("Item ids in the order to exchange.")),
                    ("new_item_ids", string_list("The new item ids, in the same order as item_ids; each must be an available variant of the same product.")),
                    ("payment_method_id", string("The customer's payment method that pays or receives the price difference.")),
                ],
                &[],
            ),
        ),
        spec(
            CALCULATE,
            "Evaluate an arithmetic expression with numbers, + - * / and parentheses, e.g. '22.56 + 34.68'. The result is rounded to 2 decimals.",
            object(&[("expression", string("The expression, e.g. '(118.49 - 20) * 2'."))], &[]),
        ),
        spec(
            TRANSFER_TO_HUMAN_AGENTS,
            "Transfer the customer to a human agent, with a summary of their issue. Only for requests you cannot handle with your tools and the policy allows, such as damaged-item claims or price matching. After calling it, tell the customer they are being transferred.",
            object(&[("summary", string("A short summary of the customer and their request for the human agent."))], &[]),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_has_an_object_schema_listing_its_required_fields() {
        let specs = tool_specs();
        assert!(specs.len() >= 10);
        for spec in &specs {
            assert_eq!(spec.parameters["type"], "object", "{}", spec.name);
            let props = spec.parameters["properties"].as_object().unwrap();
            let required = spec.parameters["required"].as_array().unwrap();
            assert_eq!(props.len(), required.len(), "{}", spec.name);
            for name in required {
                assert!(props.contains_key(name.as_str().unwrap()), "{}", spec.name);
            }
            assert!(spec.description.len() > 40, "{}", spec.name);
        }
    }

    #[test]
    fn tool_names_are_unique_and_every_write_tool_exists() {
        let specs = tool_specs();
        let mut names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), specs.len());
        for write in WRITE_TOOLS {
            assert!(names.contains(write));
        }
    }
}
