//! Real records a scenario generator grounds its phone-desk proposals in: a
//! few customers of the seed state, chosen by a seed, with their lines, and
//! the customer's phone as the seed leaves it. Nothing here is invented.

use serde_json::{json, Value};

use super::state::PhoneState;

/// Up to `n` customers (at least one) starting at a place `seed` picks, in
/// customer-id order, with every line they hold and the device.
pub fn sample(state: &PhoneState, seed: u64, n: usize) -> Value {
    let customers: Vec<_> = state.customers.values().collect();
    if customers.is_empty() {
        return json!({"customers": [], "lines": [], "device": state.device});
    }
    let n = n.clamp(1, customers.len());
    let start = usize::try_from(seed % customers.len() as u64).unwrap_or(0);
    let chosen: Vec<_> = (0..n)
        .map(|k| customers[(start + k) % customers.len()])
        .collect();
    let lines: Vec<_> = chosen
        .iter()
        .flat_map(|c| c.line_ids.iter())
        .filter_map(|id| state.lines.get(id))
        .collect();
    json!({"customers": chosen, "lines": lines, "device": state.device})
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::builtin::phone::PhoneEnvironment;

    fn seed_state() -> PhoneState {
        PhoneEnvironment::new()
            .unwrap()
            .open_session(&Default::default())
            .unwrap()
            .state()
            .clone()
    }

    #[test]
    fn sampled_lines_belong_to_the_sampled_customers_and_exist() {
        let state = seed_state();
        let records = sample(&state, 1, 2);
        let customers = records["customers"].as_array().unwrap();
        assert_eq!(customers.len(), 2);
        let held: Vec<&str> = customers
            .iter()
            .flat_map(|c| c["line_ids"].as_array().unwrap())
            .map(|l| l.as_str().unwrap())
            .collect();
        let lines = records["lines"].as_array().unwrap();
        assert_eq!(lines.len(), held.len());
        for line in lines {
            let id = line["line_id"].as_str().unwrap();
            assert!(held.contains(&id) && state.lines.contains_key(id), "{id}");
        }
        assert_eq!(records["device"]["line_id"], state.device.line_id);
    }

    #[test]
    fn the_seed_picks_where_to_start_and_n_is_capped_by_the_customers() {
        let state = seed_state();
        assert_eq!(sample(&state, 4, 1), sample(&state, 4, 1));
        assert_ne!(
            sample(&state, 0, 1)["customers"],
            sample(&state, 1, 1)["customers"]
        );
        let all = sample(&state, 0, 99);
        assert_eq!(
            all["customers"].as_array().unwrap().len(),
            state.customers.len()
        );
    }
}
