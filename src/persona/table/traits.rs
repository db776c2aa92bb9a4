//! Interaction style from traits: numeric columns (the OCEAN personality
//! traits of Nemotron-Personas, or any others) shift the weights of the
//! knobs a persona draws per item (`persona::knobs`, unchanged).
//!
//! Every row starts from the base weights (`[persona_table] knobs`, or
//! [`base_knobs`]). A rule names a column, a knob, and the knob's values
//! favoured at the low and at the high end of the column's scale: with the
//! cell at `x` of the way from `scale[0]` to `scale[1]` (clamped to 0..1),
//! it adds `strength × (1 − x)` to the `low` value's weight and
//! `strength × x` to the `high` value's. A cell that is not a number leaves
//! the row at its base weights. Without `knob_rules`, [`OCEAN_RULES`] apply
//! for the trait columns the table has, on a 0..1 scale with strength 6.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::config::file::{KnobRuleFile, PersonaTableFile};

use super::Columns;

/// The built-in rules: (column, knob, value when low, value when high).
pub const OCEAN_RULES: [(&str, &str, &str, &str); 6] = [
    ("agreeableness", "patience", "low", "high"),
    ("extraversion", "verbosity", "terse", "chatty"),
    ("conscientiousness", "typos", "frequent", "none"),
    ("conscientiousness", "formality", "casual", "formal"),
    ("neuroticism", "mood", "calm", "anxious"),
    ("openness", "tech_comfort", "low", "high"),
];

pub const DEFAULT_STRENGTH: f64 = 6.0;
pub const DEFAULT_SCALE: [f64; 2] = [0.0, 1.0];

pub type Knobs = BTreeMap<String, BTreeMap<String, f64>>;

/// The base weights of every row when `[persona_table] knobs` is absent: the
/// knobs and values of the shipped personas, the middle value most likely.
pub fn base_knobs() -> Knobs {
    let knob = |values: &[(&str, f64)]| -> BTreeMap<String, f64> {
        values.iter().map(|(v, w)| (v.to_string(), *w)).collect()
    };
    [
        (
            "verbosity",
            knob(&[("terse", 1.0), ("normal", 2.0), ("chatty", 1.0)]),
        ),
        (
            "patience",
            knob(&[("low", 1.0), ("medium", 2.0), ("high", 1.0)]),
        ),
        (
            "typos",
            knob(&[("none", 2.0), ("occasional", 2.0), ("frequent", 1.0)]),
        ),
        (
            "formality",
            knob(&[("casual", 1.0), ("neutral", 2.0), ("formal", 1.0)]),
        ),
        (
            "tech_comfort",
            knob(&[("low", 1.0), ("medium", 2.0), ("high", 1.0)]),
        ),
        (
            "mood",
            knob(&[
                ("calm", 2.0),
                ("neutral", 2.0),
                ("frustrated", 1.0),
                ("anxious", 1.0),
            ]),
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

pub struct KnobRules {
    base: Knobs,
    rules: Vec<KnobRuleFile>,
}

impl KnobRules {
    /// The rules of `settings`; the built-in ones for the OCEAN columns
    /// `columns` (a row of the table) has when it gives none.
    pub fn new(settings: &PersonaTableFile, columns: &Columns) -> KnobRules {
        let rules = match &settings.knob_rules {
            Some(rules) => rules.clone(),
            None => OCEAN_RULES
                .iter()
                .filter(|(column, ..)| columns.contains_key(*column))
                .map(|(column, knob, low, high)| KnobRuleFile {
                    column: column.to_string(),
                    knob: knob.to_string(),
                    low: low.to_string(),
                    high: high.to_string(),
                    scale: None,
                    strength: None,
                })
                .collect(),
        };
        KnobRules {
            base: settings.knobs.clone().unwrap_or_else(base_knobs),
            rules,
        }
    }

    /// The columns the rules read.
    pub fn columns(&self) -> impl Iterator<Item = &str> {
        self.rules.iter().map(|r| r.column.as_str())
    }

    /// A row's knob weights.
    pub fn weights(&self, row: &Columns) -> Knobs {
        let mut knobs = self.base.clone();
        for rule in &self.rules {
            let Some(x) = row.get(&rule.column).and_then(number) else {
                continue;
            };
            let [min, max] = rule.scale.unwrap_or(DEFAULT_SCALE);
            let x = ((x - min) / (max - min)).clamp(0.0, 1.0);
            let strength = rule.strength.unwrap_or(DEFAULT_STRENGTH);
            let values = knobs.entry(rule.knob.clone()).or_default();
            *values.entry(rule.low.clone()).or_default() += strength * (1.0 - x);
            *values.entry(rule.high.clone()).or_default() += strength * x;
        }
        knobs
    }
}

fn number(cell: &Value) -> Option<f64> {
    let x = match cell {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }?;
    x.is_finite().then_some(x)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn settings() -> PersonaTableFile {
        toml::from_str("id = \"uuid\"\nfields = { background = \"persona\" }").unwrap()
    }

    #[test]
    fn low_agreeableness_weighs_patience_towards_low() {
        let row = json!({"agreeableness": 0.1}).as_object().unwrap().clone();
        let rules = KnobRules::new(&settings(), &row);
        let patience = &rules.weights(&row)["patience"];
        // Base low 1, medium 2, high 1; + 6 × 0.9 to low, + 6 × 0.1 to high.
        assert!((patience["low"] - 6.4).abs() < 1e-9, "{patience:?}");
        assert!((patience["high"] - 1.6).abs() < 1e-9, "{patience:?}");
        assert_eq!(patience["medium"], 2.0);
        // Knobs without a trait column keep their base weights.
        assert_eq!(rules.weights(&row)["verbosity"], base_knobs()["verbosity"]);
    }

    #[test]
    fn a_configured_rule_reads_its_scale_and_a_non_number_leaves_the_base() {
        let mut s = settings();
        s.knob_rules = Some(vec![KnobRuleFile {
            column: "calm".into(),
            knob: "mood".into(),
            low: "angry".into(),
            high: "calm".into(),
            scale: Some([1.0, 5.0]),
            strength: Some(8.0),
        }]);
        let row = json!({"calm": 5}).as_object().unwrap().clone();
        let rules = KnobRules::new(&s, &row);
        let mood = &rules.weights(&row)["mood"];
        assert_eq!(mood["calm"], 10.0);
        assert_eq!(mood["angry"], 0.0);
        let blank = json!({"calm": ""}).as_object().unwrap().clone();
        assert_eq!(rules.weights(&blank), base_knobs());
    }
}
