//! Records for a scenario generator cut from a whole state (what an MCP or
//! NeMo Gym environment's `state_probes` read): every collection cut to a
//! few elements starting at a place the seed picks, long texts shortened, so
//! that the prompt stays bounded whatever the server holds. Nothing is
//! invented or reordered within what is kept.

use serde_json::{Map, Value};

/// An object with more keys than this is a collection keyed by id (cut like
/// an array); fewer, a record (kept whole).
const RECORD_KEYS: usize = 32;
/// Characters of one string kept.
const STRING_CHARS: usize = 400;

/// `state` with every array (and every object of more than `RECORD_KEYS`
/// keys) cut to `n` elements (at least one) from a place `seed` picks,
/// wrapping around, and every string cut to `STRING_CHARS` characters.
pub fn bounded(state: &Value, seed: u64, n: usize) -> Value {
    let n = n.max(1);
    match state {
        Value::Array(items) => Value::Array(
            window(items.len(), seed, n)
                .map(|i| bounded(&items[i], seed, n))
                .collect(),
        ),
        Value::Object(map) if map.len() > RECORD_KEYS => {
            let entries: Vec<(&String, &Value)> = map.iter().collect();
            Value::Object(
                window(entries.len(), seed, n)
                    .map(|i| (entries[i].0.clone(), bounded(entries[i].1, seed, n)))
                    .collect(),
            )
        }
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), bounded(v, seed, n)))
                .collect::<Map<String, Value>>(),
        ),
        Value::String(text) if text.chars().count() > STRING_CHARS => Value::String(format!(
            "{}…",
            text.chars().take(STRING_CHARS).collect::<String>()
        )),
        other => other.clone(),
    }
}

/// The indices of `n` elements of `len` from the place `seed` picks, in order,
/// wrapping around (all of them, in order, when `len <= n`).
fn window(len: usize, seed: u64, n: usize) -> impl Iterator<Item = usize> {
    let (start, take) = if len <= n {
        (0, len)
    } else {
        (usize::try_from(seed % len as u64).unwrap_or(0), n)
    };
    (0..take).map(move |k| (start + k) % len.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    #[test]
    fn a_long_list_is_cut_to_n_from_the_seeded_place_and_its_records_kept_whole() {
        let graph = json!({"entities": [
            {"name": "A", "observations": ["x"]}, {"name": "B"}, {"name": "C"}, {"name": "D"}
        ], "relations": []});
        let cut = bounded(&graph, 2, 2);
        assert_eq!(cut["entities"], json!([{"name": "C"}, {"name": "D"}]));
        let wrapped = bounded(&graph, 3, 2);
        assert_eq!(wrapped["entities"][1]["name"], "A");
        assert_eq!(wrapped["entities"][1]["observations"], json!(["x"]));
        assert_eq!(bounded(&graph, 0, 10), graph);
    }

    #[test]
    fn a_map_keyed_by_id_is_a_collection_and_long_text_is_shortened() {
        let many: Map<String, Value> = (0..40).map(|i| (format!("k{i:02}"), json!(i))).collect();
        let cut = bounded(&Value::Object(many), 0, 3);
        assert_eq!(cut, json!({"k00": 0, "k01": 1, "k02": 2}));
        let long = "é".repeat(1000);
        let short = bounded(&json!(long), 0, 3);
        assert_eq!(short.as_str().unwrap().chars().count(), STRING_CHARS + 1);
    }

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            (-1000i64..1000).prop_map(|n| json!(n)),
            "[a-z]{0,8}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 64, 12, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..12).prop_map(Value::Array),
                prop::collection::btree_map("[a-z]{1,3}", inner, 0..40)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    fn arrays_at_most(v: &Value, n: usize) -> bool {
        match v {
            Value::Array(items) => items.len() <= n && items.iter().all(|i| arrays_at_most(i, n)),
            Value::Object(map) => map.values().all(|i| arrays_at_most(i, n)),
            _ => true,
        }
    }

    fn has_collection_map(v: &Value) -> bool {
        match v {
            Value::Array(items) => items.iter().any(has_collection_map),
            Value::Object(map) => map.len() > RECORD_KEYS || map.values().any(has_collection_map),
            _ => false,
        }
    }

    proptest! {
        #[test]
        fn every_list_of_the_records_is_at_most_n_long(
            v in json_value(), seed in any::<u64>(), n in 1usize..6
        ) {
            prop_assert!(arrays_at_most(&bounded(&v, seed, n), n));
        }

        #[test]
        fn a_state_within_the_bounds_is_kept_as_it_is(
            v in json_value(), seed in any::<u64>(), n in 1usize..16
        ) {
            prop_assume!(arrays_at_most(&v, n) && !has_collection_map(&v));
            prop_assert_eq!(bounded(&v, seed, n), v);
        }
    }
}
