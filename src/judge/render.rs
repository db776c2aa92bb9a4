//! What a judge's template sees: the conversation as a readable transcript, the
//! other conversation or reference (pairwise), the expected answer
//! (equivalence), the assertions, the scenario, the persona and the domain policy.

use std::collections::BTreeMap;

use serde::Serialize;
use tera::Context;

use super::builtin::Builtin;
use super::definition::{Judge, Mode};
use super::error::JudgeError;
use super::transcript::{final_answer, first_user_message, readable_transcript};
use super::verdict::Order;
use crate::persona::{Persona, ResolvedPersona, Scenario};
use crate::store::StoredConversation;
use crate::verify::RewardBasis;

/// What a pairwise judge compares the conversation with.
#[derive(Debug, Clone, Copy)]
pub enum Other<'a> {
    /// A conversation for the same scenario, persona and sample from another job.
    Conversation(&'a StoredConversation),
    /// A reference answer, shown as it is.
    Reference(&'a str),
}

/// Everything one judgment may be rendered from. Only `conversation` is always
/// needed; [`JudgeInputs::check`] says what else a judge needs.
#[derive(Debug, Clone, Copy)]
pub struct JudgeInputs<'a> {
    pub conversation: &'a StoredConversation,
    /// Pairwise: the other side (B in order `ab`).
    pub other: Option<Other<'a>>,
    pub scenario: Option<&'a Scenario>,
    pub persona: Option<&'a ResolvedPersona>,
    /// The domain policy text the agent was given (policy adherence).
    pub domain_policy: Option<&'a str>,
    /// Instead of the scenario's `evaluation.expected_answer`.
    pub expected_answer: Option<&'a str>,
    /// Instead of the scenario's `evaluation.nl_assertions`.
    pub assertions: Option<&'a [String]>,
}

impl<'a> JudgeInputs<'a> {
    pub fn new(conversation: &'a StoredConversation) -> Self {
        JudgeInputs {
            conversation,
            other: None,
            scenario: None,
            persona: None,
            domain_policy: None,
            expected_answer: None,
            assertions: None,
        }
    }

    /// The expected answer: given, or the scenario's.
    pub fn expected_answer(&self) -> Option<&'a str> {
        self.expected_answer
            .or_else(|| self.scenario?.evaluation.expected_answer.as_deref())
            .filter(|a| !a.trim().is_empty())
    }

    /// The assertions: given, or the scenario's (possibly none).
    pub fn assertions(&self) -> &'a [String] {
        match (self.assertions, self.scenario) {
            (Some(given), _) => given,
            (None, Some(scenario)) => &scenario.evaluation.nl_assertions,
            (None, None) => &[],
        }
    }

    /// Fails, naming what is missing, when `judge` cannot be rendered from these.
    pub fn check(&self, judge: &Judge) -> Result<(), JudgeError> {
        let missing = |what: &str| {
            Err(JudgeError::MissingInput {
                judge: judge.name.clone(),
                what: what.to_string(),
            })
        };
        match judge.mode {
            Mode::Pairwise if self.other.is_none() => {
                return missing("the other conversation or a reference answer (pairwise)")
            }
            Mode::Equivalence if self.expected_answer().is_none() => {
                return missing(
                    "an expected answer (the scenario's evaluation.expected_answer); this \
                     scenario has none",
                )
            }
            Mode::Assertions if self.assertions().is_empty() => {
                return missing(
                    "assertions (the scenario's evaluation.nl_assertions); this scenario has none",
                )
            }
            _ => {}
        }
        match judge.builtin {
            Some(Builtin::PolicyAdherence) if self.domain_policy.is_none() => {
                missing("the domain policy text the agent was given")
            }
            Some(Builtin::UserFidelity) if self.scenario.is_none() => {
                missing("the scenario the simulated user was playing")
            }
            Some(Builtin::BlueprintReview) if self.scenario.is_none() => {
                missing("the blueprint's scenario (user goal, known info, facts to communicate)")
            }
            Some(Builtin::BlueprintReview) if self.domain_policy.is_none() => {
                missing("the domain policy text the blueprint must follow")
            }
            _ => Ok(()),
        }
    }
}

/// A persona with the knob values drawn for this conversation (stored in its
/// metadata as `persona_knobs`).
pub fn resolved_persona(persona: &Persona, conversation: &StoredConversation) -> ResolvedPersona {
    let resolved_knobs = conversation
        .conversation
        .metadata
        .get("persona_knobs")
        .and_then(|k| k.as_object())
        .map(|knobs| {
            knobs
                .iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                .collect()
        })
        .unwrap_or_default();
    ResolvedPersona {
        persona: persona.clone(),
        resolved_knobs,
    }
}

#[derive(Serialize)]
struct ScenarioView<'a> {
    id: &'a str,
    description: &'a str,
    reason_for_contact: &'a str,
    known_info: &'a str,
    unknown_info: &'a str,
    task_instructions: &'a str,
    difficulty: &'a str,
    tags: &'a [String],
    /// The facts the agent must say (`evaluation.communicate`).
    communicate: &'a [String],
    /// What the reward is the product of: component names, or `["none"]`.
    reward_basis: Vec<String>,
}

#[derive(Serialize)]
struct PersonaView<'a> {
    id: &'a str,
    name: &'a str,
    background: &'a str,
    traits: &'a [String],
    speaking_style: &'a str,
    language: &'a str,
    resolved_knobs: &'a BTreeMap<String, String>,
}

/// The variables of a judge template for one call in `order`:
///
/// - always: `conversation` (transcript of the judged conversation), `question`
///   (the user's first message), `final_answer` (the assistant's last text),
///   `termination`, `order` (`single`, `ab`, `ba`), `assertions` (a list,
///   possibly empty);
/// - pairwise: `conversation_a`, `conversation_b` in this call's order;
/// - equivalence: `expected_answer`, and `answer_a`, `answer_b` in this call's
///   order (`ab`: the expected answer first);
/// - when given: `scenario` (id, description, reason_for_contact, known_info,
///   unknown_info, task_instructions, difficulty, tags, communicate,
///   reward_basis), `persona` (id, name, background, traits,
///   speaking_style, language, resolved_knobs), `domain_policy`, and
///   `expected_answer` for any mode. Templates test them with `is defined`.
pub fn context(
    judge: &Judge,
    inputs: &JudgeInputs<'_>,
    order: Order,
) -> Result<Context, JudgeError> {
    inputs.check(judge)?;
    let messages = &inputs.conversation.messages;
    let transcript = readable_transcript(messages);
    let mut ctx = Context::new();
    ctx.insert("conversation", &transcript);
    ctx.insert("question", first_user_message(messages));
    ctx.insert("final_answer", final_answer(messages));
    ctx.insert("termination", &inputs.conversation.conversation.termination);
    ctx.insert("order", order.as_str());
    ctx.insert("assertions", inputs.assertions());
    if let Some(expected) = inputs.expected_answer() {
        ctx.insert("expected_answer", expected);
    }
    if judge.mode == Mode::Pairwise {
        let other = match inputs.other {
            Some(Other::Conversation(c)) => readable_transcript(&c.messages),
            Some(Other::Reference(text)) => text.trim().to_string(),
            None => String::new(),
        };
        let (a, b) = match order {
            Order::Ba => (other, transcript),
            Order::Ab | Order::Single => (transcript, other),
        };
        ctx.insert("conversation_a", &a);
        ctx.insert("conversation_b", &b);
    }
    if judge.mode == Mode::Equivalence {
        let expected = inputs.expected_answer().unwrap_or("");
        let answer = final_answer(messages);
        let (a, b) = match order {
            Order::Ba => (answer, expected),
            Order::Ab | Order::Single => (expected, answer),
        };
        ctx.insert("answer_a", a);
        ctx.insert("answer_b", b);
    }
    if let Some(s) = inputs.scenario {
        ctx.insert(
            "scenario",
            &ScenarioView {
                id: &s.id,
                description: &s.description,
                reason_for_contact: &s.user.reason_for_contact,
                known_info: &s.user.known_info,
                unknown_info: &s.user.unknown_info,
                task_instructions: &s.user.task_instructions,
                difficulty: s.difficulty.as_deref().unwrap_or(""),
                tags: &s.tags,
                communicate: &s.evaluation.communicate,
                reward_basis: reward_basis_names(&s.evaluation.reward_basis),
            },
        );
    }
    if let Some(p) = inputs.persona {
        ctx.insert(
            "persona",
            &PersonaView {
                id: &p.persona.id,
                name: &p.persona.name,
                background: &p.persona.background,
                traits: &p.persona.traits,
                speaking_style: &p.persona.speaking_style,
                language: &p.persona.language,
                resolved_knobs: &p.resolved_knobs,
            },
        );
    }
    if let Some(policy) = inputs.domain_policy {
        ctx.insert("domain_policy", policy);
    }
    Ok(ctx)
}

/// A reward basis as names a template can join: `["db", "communicate"]`, or
/// `["none"]` for an unscored scenario (empty when it was left out).
fn reward_basis_names(basis: &RewardBasis) -> Vec<String> {
    if basis.is_unscored() {
        return vec![RewardBasis::NONE.to_string()];
    }
    basis.iter().map(|c| c.as_str().to_string()).collect()
}

/// The prompt of one call: the template rendered for `order`.
pub fn render_prompt(
    judge: &Judge,
    inputs: &JudgeInputs<'_>,
    order: Order,
) -> Result<String, JudgeError> {
    let ctx = context(judge, inputs, order)?;
    judge
        .template
        .render(&ctx)
        .map_err(|source| JudgeError::Render {
            judge: judge.name.clone(),
            source,
        })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::judge::transcript::tests::{call, row};
    use crate::persona::UserScenario;
    use crate::store::{ConversationRow, MessageRow};
    use crate::verify::Criteria;

    pub(crate) fn conversation(id: i64, messages: Vec<MessageRow>) -> StoredConversation {
        StoredConversation {
            conversation: ConversationRow {
                id,
                job_id: 1,
                item_id: id,
                item_key: format!("s/p/{id}"),
                scenario_id: "s".into(),
                persona_id: "p".into(),
                sample: 0,
                seed: 7,
                policy_model: "mock-policy".into(),
                user_model: "mock-user".into(),
                termination: "user_stop".into(),
                reward: Some(1.0),
                reward_breakdown: serde_json::Value::Null,
                metadata: serde_json::json!({"persona_knobs": {"verbosity": "terse"}}),
                tools: serde_json::json!([]),
                started_at: 0,
                finished_at: 0,
                user_checks: None,
            },
            messages,
            usage: Vec::new(),
        }
    }

    pub(crate) fn tracking_conversation(id: i64) -> StoredConversation {
        conversation(
            id,
            vec![
                row("system", "SYSTEM PROMPT TEXT"),
                row("user", "Where are my boots? Order #LL21743."),
                call("get_order_details", r##"{"order_id": "#LL21743"}"##),
                row("tool", r#"{"tracking": "PW5005336661"}"#),
                row("assistant", "Your tracking number is PW5005336661."),
            ],
        )
    }

    pub(crate) fn scenario() -> Scenario {
        Scenario {
            id: "s".into(),
            description: "tracking".into(),
            difficulty: None,
            tags: Vec::new(),
            user: UserScenario {
                reason_for_contact: "You want to track your boots.".into(),
                known_info: "Order #LL21743.".into(),
                unknown_info: "The tracking number.".into(),
                task_instructions: "Ask for the tracking number, then stop.".into(),
                turns: Vec::new(),
                opening: None,
            },
            initial_state: serde_json::Value::Null,
            evaluation: Criteria {
                expected_answer: Some("PW5005336661".into()),
                nl_assertions: vec![
                    "The agent looks up the order.".into(),
                    "The agent gives the tracking number.".into(),
                ],
                ..Criteria::default()
            },
            prelude: Vec::new(),
            tools: None,
            probe: None,
        }
    }

    pub(crate) fn persona() -> Persona {
        Persona {
            id: "p".into(),
            name: "Theo".into(),
            background: "Hiker.".into(),
            traits: vec!["calm".into()],
            speaking_style: "Short.".into(),
            language: "English".into(),
            knobs: BTreeMap::new(),
            attributes: Default::default(),
        }
    }

    fn judge(builtin: Builtin) -> Judge {
        Judge::from_builtin(builtin.name(), "judge", builtin).unwrap()
    }

    #[test]
    fn pairwise_orders_swap_the_two_conversations() {
        let a = tracking_conversation(1);
        let b = conversation(2, vec![row("user", "Hi"), row("assistant", "Bye")]);
        let inputs = JudgeInputs {
            other: Some(Other::Conversation(&b)),
            ..JudgeInputs::new(&a)
        };
        let j = judge(Builtin::PairwisePreference);
        let ab = context(&j, &inputs, Order::Ab).unwrap();
        let ba = context(&j, &inputs, Order::Ba).unwrap();
        assert_eq!(ab.get("conversation_a"), ba.get("conversation_b"));
        assert_eq!(ab.get("conversation_b"), ba.get("conversation_a"));
        assert!(ab
            .get("conversation_b")
            .unwrap()
            .as_str()
            .unwrap()
            .contains("Bye"));
        let reference = JudgeInputs {
            other: Some(Other::Reference(" The number is PW5005336661. ")),
            ..JudgeInputs::new(&a)
        };
        let ab = context(&j, &reference, Order::Ab).unwrap();
        assert_eq!(
            ab.get("conversation_b").unwrap(),
            "The number is PW5005336661."
        );
    }

    #[test]
    fn equivalence_shows_the_expected_answer_first_in_order_ab() {
        let c = tracking_conversation(1);
        let s = scenario();
        let inputs = JudgeInputs {
            scenario: Some(&s),
            ..JudgeInputs::new(&c)
        };
        let j = judge(Builtin::Equivalence);
        let ab = context(&j, &inputs, Order::Ab).unwrap();
        assert_eq!(ab.get("answer_a").unwrap(), "PW5005336661");
        assert_eq!(
            ab.get("answer_b").unwrap(),
            "Your tracking number is PW5005336661."
        );
        let ba = context(&j, &inputs, Order::Ba).unwrap();
        assert_eq!(
            ba.get("answer_a").unwrap(),
            "Your tracking number is PW5005336661."
        );
        assert_eq!(ba.get("answer_b").unwrap(), "PW5005336661");
    }

    #[test]
    fn missing_inputs_are_named_before_any_call() {
        let c = tracking_conversation(1);
        let inputs = JudgeInputs::new(&c);
        for (builtin, what) in [
            (Builtin::PairwisePreference, "other conversation"),
            (Builtin::Equivalence, "expected answer"),
            (Builtin::Assertions, "nl_assertions"),
            (Builtin::PolicyAdherence, "domain policy"),
            (Builtin::UserFidelity, "scenario"),
        ] {
            let err = render_prompt(&judge(builtin), &inputs, Order::Single).unwrap_err();
            assert!(err.to_string().contains(what), "{builtin}: {err}");
        }
    }

    #[test]
    fn every_builtin_renders_with_full_inputs_and_shows_no_system_prompt() {
        let c = tracking_conversation(1);
        let other = conversation(2, vec![row("user", "Hi"), row("assistant", "Bye")]);
        let s = scenario();
        let p = resolved_persona(&persona(), &c);
        assert_eq!(p.resolved_knobs["verbosity"], "terse");
        let inputs = JudgeInputs {
            other: Some(Other::Conversation(&other)),
            scenario: Some(&s),
            persona: Some(&p),
            domain_policy: Some("Authenticate the user before any change."),
            ..JudgeInputs::new(&c)
        };
        for builtin in Builtin::ALL {
            let j = judge(builtin);
            let order = match j.mode {
                Mode::Pairwise | Mode::Equivalence => Order::Ab,
                _ => Order::Single,
            };
            let text = render_prompt(&j, &inputs, order).unwrap();
            assert!(text.starts_with(&builtin.marker()), "{builtin}: {text}");
            assert!(!text.contains("SYSTEM PROMPT TEXT"), "{builtin}");
            assert!(!text.contains("{{") && !text.contains("{%"), "{builtin}");
            match builtin {
                Builtin::Equivalence => assert!(text.contains("PW5005336661")),
                Builtin::Assertions => {
                    assert!(text.contains("1. The agent looks up the order."), "{text}")
                }
                Builtin::UserFidelity => {
                    assert!(text.contains("The tracking number.") && text.contains("Theo"))
                }
                Builtin::PolicyAdherence => {
                    assert!(text.contains("Authenticate the user before any change."))
                }
                _ => assert!(text.contains("→ tool get_order_details"), "{builtin}"),
            }
        }
    }

    #[test]
    fn the_persona_and_scenario_are_optional_for_helpfulness() {
        let c = tracking_conversation(1);
        let text = render_prompt(
            &judge(Builtin::Helpfulness),
            &JudgeInputs::new(&c),
            Order::Single,
        )
        .unwrap();
        assert!(text.contains("Your tracking number is PW5005336661."));
    }
}
