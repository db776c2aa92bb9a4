//! Verification: reward components and their combination.
//!
//! A scenario names the components its reward is based on (`reward_basis`); the
//! reward is their product, and every component's score and detail is kept in the
//! breakdown so a reader can see why a conversation got its reward.

pub mod actions;
pub mod communicate;
pub mod held;
pub mod probe_spec;
pub mod probes;
pub mod rules;
pub mod solved;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::llm::message::Caller;

/// A reward component a scenario may name in `reward_basis`, written as its
/// name (`"db"`, `"exact"`, `"judge:correct"` ...).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Component {
    /// Environment state after the conversation equals the state after replaying
    /// the gold actions on a fresh session.
    Db,
    /// Every required fact was said by the policy.
    Communicate,
    /// The final answer equals `evaluation.expected_answer` (see [`rules`]).
    Exact,
    /// The letter picked from `evaluation.choice.options` is the expected one.
    Choice,
    /// The final answer matches `evaluation.regex.pattern`.
    Regex,
    /// The final answer is the expected number, within a tolerance.
    Numeric,
    /// The verdict of the job's judge of this name, run when the episode ends.
    /// Holds the component's whole name, `judge:NAME` (see [`Component::judge`]).
    Judge(String),
    /// Every probe (a tool call made after the conversation, on the same
    /// session) answered as the scenario expects. Scored by the episode
    /// engine, not by the session's own `verify`.
    Probes,
    /// The conversation's tool calls hold every gold action (see
    /// [`actions`]), whoever ran them: how a black-box agent is verified by
    /// its trace. Scored by the episode engine.
    Actions,
    /// A probe's agent held the line (see [`held`]). Scored by the episode
    /// engine from the state and the transcript, or settled by a judge.
    Held,
}

/// What a `judge:NAME` component starts with.
pub const JUDGE_PREFIX: &str = "judge:";

impl Component {
    /// The components named by a word alone, for messages.
    pub const NAMED: &'static [&'static str] = &[
        "db",
        "communicate",
        "probes",
        "actions",
        "held",
        "exact",
        "choice",
        "regex",
        "numeric",
    ];

    /// The component of the judge named `name`.
    pub fn judge(name: &str) -> Component {
        Component::Judge(format!("{JUDGE_PREFIX}{name}"))
    }

    pub fn as_str(&self) -> &str {
        match self {
            Component::Db => "db",
            Component::Communicate => "communicate",
            Component::Exact => "exact",
            Component::Choice => "choice",
            Component::Regex => "regex",
            Component::Numeric => "numeric",
            Component::Judge(whole) => whole,
            Component::Probes => "probes",
            Component::Actions => "actions",
            Component::Held => "held",
        }
    }

    /// Read a component's name; `None` for a name no component has.
    pub fn parse(name: &str) -> Option<Component> {
        Some(match name {
            "db" => Component::Db,
            "communicate" => Component::Communicate,
            "exact" => Component::Exact,
            "choice" => Component::Choice,
            "regex" => Component::Regex,
            "numeric" => Component::Numeric,
            "probes" => Component::Probes,
            "actions" => Component::Actions,
            "held" => Component::Held,
            other => {
                let judge = other.strip_prefix(JUDGE_PREFIX)?;
                if judge.trim().is_empty() {
                    return None;
                }
                Component::judge(judge)
            }
        })
    }

    /// Scored from the final answer by a rule (`exact`, `choice`, `regex`,
    /// `numeric`), by the episode engine for every kind of environment.
    pub fn is_rule(&self) -> bool {
        matches!(
            self,
            Component::Exact | Component::Choice | Component::Regex | Component::Numeric
        )
    }

    /// Scored after the session's own verification (rules, judges and
    /// probes), so a session's `combine` leaves them to those who score them.
    pub fn is_scored_after_session(&self) -> bool {
        self.is_rule()
            || self.judge_name().is_some()
            || matches!(
                self,
                Component::Probes | Component::Actions | Component::Held
            )
    }

    /// Whether the session's own `verify` scores this component.
    pub fn scored_by_session(&self) -> bool {
        !self.is_scored_after_session()
    }

    /// The judge a `judge:NAME` component names.
    pub fn judge_name(&self) -> Option<&str> {
        match self {
            Component::Judge(whole) => whole.strip_prefix(JUDGE_PREFIX),
            _ => None,
        }
    }
}

impl std::fmt::Display for Component {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Component {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Component {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = std::borrow::Cow::<'de, str>::deserialize(deserializer)?;
        Component::parse(&name).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "unknown reward component '{name}'; expected one of {}, or \"judge:NAME\" \
                 naming one of the job's [[judges]]",
                Component::NAMED
                    .iter()
                    .map(|n| format!("\"{n}\""))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })
    }
}

/// A tool call the scenario expects (gold action), with its arguments as JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Action {
    pub name: String,
    #[serde(default)]
    pub arguments: serde_json::Value,
    /// Who makes the call: the policy (the default), or, with dual control,
    /// the user (`"caller": "user"`) with one of the environment's user tools.
    #[serde(default, skip_serializing_if = "Caller::is_policy")]
    pub caller: Caller,
}

/// How a conversation is scored; part of a scenario.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Criteria {
    /// Gold actions, in order. Reads may be listed too; replaying them changes nothing.
    #[serde(default)]
    pub actions: Vec<Action>,
    /// Facts the policy must state, matched case-insensitively ignoring punctuation
    /// differences such as `$` and `,` in numbers.
    #[serde(default)]
    pub communicate: Vec<String>,
    /// The components the reward is the product of, or `"none"`.
    #[serde(default)]
    pub reward_basis: RewardBasis,
    /// The answer the conversation should reach, for `equivalence` judges
    /// (compared with the assistant's final message).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_answer: Option<String>,
    /// Statements about the conversation in plain language, each judged met or
    /// not met by an `assertions` judge, e.g. "The agent asks for confirmation
    /// before cancelling the order."
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nl_assertions: Vec<String>,
    /// A final reply known to score (or recorded with its score), e.g. from a
    /// NeMo Gym rollout; the mock policy replays it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_reply: Option<String>,
    /// `exact`: how the answer is compared with `expected_answer`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exact: Option<rules::ExactRule>,
    /// `choice`: the options of a multiple-choice question.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub choice: Option<rules::ChoiceRule>,
    /// `regex`: the pattern the final message must match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regex: Option<rules::RegexRule>,
    /// `numeric`: how close the answer's number must be to `expected_answer`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub numeric: Option<rules::NumericRule>,
    /// Tool calls made after the conversation on the same session, their
    /// outputs compared with what is expected (the `probes` component).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub probes: Vec<probes::Probe>,
}

/// What a scenario's reward is made of: a list of components (the reward is
/// their product), or `"none"` for unscored generation, which stores no
/// reward at all. An empty list scores nothing, so a job refuses it
/// (`sparring validate` says so) rather than counting it as a pass.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum RewardBasis {
    Components(Vec<Component>),
    #[default]
    Unset,
    /// `"none"`: the conversations are generated, not scored.
    Unscored,
}

impl RewardBasis {
    pub const NONE: &'static str = "none";

    /// The components named (none for `"none"`).
    pub fn components(&self) -> &[Component] {
        match self {
            RewardBasis::Components(list) => list,
            RewardBasis::Unset | RewardBasis::Unscored => &[],
        }
    }

    /// `"none"`: no reward is stored.
    pub fn is_unscored(&self) -> bool {
        matches!(self, RewardBasis::Unscored)
    }

    /// No way to score: left out, or an empty list.
    pub fn is_missing(&self) -> bool {
        match self {
            RewardBasis::Components(list) => list.is_empty(),
            RewardBasis::Unset => true,
            RewardBasis::Unscored => false,
        }
    }
}

impl std::ops::Deref for RewardBasis {
    type Target = [Component];

    fn deref(&self) -> &[Component] {
        self.components()
    }
}

impl From<Vec<Component>> for RewardBasis {
    fn from(list: Vec<Component>) -> Self {
        RewardBasis::Components(list)
    }
}

impl PartialEq<Vec<Component>> for RewardBasis {
    fn eq(&self, other: &Vec<Component>) -> bool {
        matches!(self, RewardBasis::Components(list) if list == other)
    }
}

impl Serialize for RewardBasis {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            RewardBasis::Unscored => serializer.serialize_str(Self::NONE),
            other => other.components().serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for RewardBasis {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Basis;
        impl<'de> serde::de::Visitor<'de> for Basis {
            type Value = RewardBasis;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(
                    "a list of reward components (\"db\", \"communicate\", \"probes\", \"held\", \"exact\", \
                     \"choice\", \"regex\", \"numeric\", \"judge:NAME\") or \"none\"",
                )
            }

            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<RewardBasis, E> {
                if v == RewardBasis::NONE {
                    Ok(RewardBasis::Unscored)
                } else {
                    Err(E::invalid_value(serde::de::Unexpected::Str(v), &self))
                }
            }

            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                seq: A,
            ) -> Result<RewardBasis, A::Error> {
                Vec::<Component>::deserialize(serde::de::value::SeqAccessDeserializer::new(seq))
                    .map(RewardBasis::Components)
            }
        }
        deserializer.deserialize_any(Basis)
    }
}

/// One component's outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ComponentScore {
    pub score: f64,
    pub detail: String,
}

/// The reward and its breakdown.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Verification {
    pub reward: f64,
    pub components: BTreeMap<Component, ComponentScore>,
    /// Components an outside verifier reported under its own names (a NeMo
    /// Gym `/verify` reply's numeric fields besides `reward`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub reported: BTreeMap<String, f64>,
    /// Why the conversation has no valid reward although verification ran
    /// (e.g. the verifier masked the sample: its infrastructure failed). Such
    /// a conversation is stored without a reward, never with 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unscored: Option<String>,
    /// What the verifier was sent and answered, kept with the conversation for
    /// exports in the verifier's own format (NeMo Gym rollouts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record: Option<serde_json::Value>,
    /// A probe's outcome (see [`held`]), kept in the conversation's metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe: Option<probe_spec::ProbeOutcome>,
}

impl Verification {
    /// The reward to store: none when the verification says it is not valid.
    pub fn stored_reward(&self) -> Option<f64> {
        self.unscored.is_none().then_some(self.reward)
    }

    /// The breakdown to store: components, reported components, and why the
    /// conversation is unscored.
    pub fn breakdown(&self) -> serde_json::Value {
        let mut value = serde_json::json!(self.components);
        if let Some(map) = value.as_object_mut() {
            for (name, score) in &self.reported {
                map.insert(
                    name.clone(),
                    serde_json::json!({"score": score, "detail": "reported by the verifier"}),
                );
            }
            if let Some(reason) = &self.unscored {
                map.insert("unscored".into(), serde_json::json!(reason));
            }
        }
        value
    }
}

impl Verification {
    /// Combine component scores: the reward is the product of the components the
    /// scenario's `reward_basis` names (1.0 when it names none). Components scored
    /// but not named stay in the breakdown for information. Rule and judge
    /// components are left out here: they are scored after the session's own
    /// verification and multiplied in by [`Verification::add_scored`].
    pub fn combine(basis: &[Component], components: BTreeMap<Component, ComponentScore>) -> Self {
        let reward = basis
            .iter()
            .filter(|c| !c.is_scored_after_session())
            .map(|c| components.get(c).map_or(0.0, |s| s.score))
            .product();
        Verification {
            reward,
            components,
            ..Verification::default()
        }
    }

    /// Multiply in components scored after the session's verification (rules,
    /// judges), keeping each in the breakdown.
    pub fn add_scored(&mut self, parts: impl IntoIterator<Item = (Component, ComponentScore)>) {
        for (component, part) in parts {
            self.reward *= part.score;
            self.components.insert(component, part);
        }
    }
}

impl Verification {
    /// Add a component scored outside the session (probes): kept in the
    /// breakdown, and a factor of the reward when `basis` names it.
    pub fn include(&mut self, component: Component, score: ComponentScore, basis: &[Component]) {
        if basis.contains(&component) {
            self.reward *= score.score;
        }
        self.components.insert(component, score);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn score(v: f64) -> ComponentScore {
        ComponentScore {
            score: v,
            detail: String::new(),
        }
    }

    #[test]
    fn reward_is_the_product_of_the_named_components_only() {
        let mut parts = BTreeMap::new();
        parts.insert(Component::Db, score(1.0));
        parts.insert(Component::Communicate, score(0.0));
        assert_eq!(
            Verification::combine(&[Component::Db], parts.clone()).reward,
            1.0
        );
        assert_eq!(
            Verification::combine(&[Component::Db, Component::Communicate], parts).reward,
            0.0
        );
    }

    #[test]
    fn reward_basis_is_a_list_or_none_and_reads_back_as_written() {
        let none: Criteria = serde_json::from_str(r#"{"reward_basis": "none"}"#).unwrap();
        assert!(none.reward_basis.is_unscored());
        assert!(!none.reward_basis.is_missing());
        assert_eq!(
            serde_json::to_string(&none.reward_basis).unwrap(),
            "\"none\""
        );
        let empty: Criteria = serde_json::from_str(r#"{"reward_basis": []}"#).unwrap();
        assert!(empty.reward_basis.is_missing());
        assert!(Criteria::default().reward_basis.is_missing());
        let db: Criteria = serde_json::from_str(r#"{"reward_basis": ["db"]}"#).unwrap();
        assert_eq!(db.reward_basis, vec![Component::Db]);
        let wrong = serde_json::from_str::<Criteria>(r#"{"reward_basis": "all"}"#).unwrap_err();
        assert!(wrong.to_string().contains("or \"none\""), "{wrong}");
    }

    #[test]
    fn probes_scored_after_the_session_are_a_factor_of_the_reward_when_named() {
        let mut parts = BTreeMap::new();
        parts.insert(Component::Communicate, score(1.0));
        let basis = [Component::Communicate, Component::Probes];
        let mut v = Verification::combine(&basis, parts.clone());
        assert_eq!(v.reward, 1.0);
        v.include(Component::Probes, score(0.0), &basis);
        assert_eq!(v.reward, 0.0);
        assert!(v.components.contains_key(&Component::Probes));
        let mut v = Verification::combine(&[Component::Communicate], parts);
        v.include(Component::Probes, score(0.0), &[Component::Communicate]);
        assert_eq!(v.reward, 1.0, "probes not named are for information only");
    }

    #[test]
    fn a_named_component_that_was_not_scored_counts_as_zero() {
        assert_eq!(
            Verification::combine(&[Component::Db], BTreeMap::new()).reward,
            0.0
        );
        assert_eq!(Verification::combine(&[], BTreeMap::new()).reward, 1.0);
    }
}
