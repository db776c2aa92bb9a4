use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;

use super::committee::*;
use super::execute::ExecutedCall;
use crate::config::synth::committee::{CommitteeRule, VoteRule};
use crate::env::{ToolCall, ToolOutput};
use crate::judge::render::render_prompt;
use crate::judge::{Builtin, Judge, JudgeInputs, JudgeStatus, Order};
use crate::llm::message::Message;
use crate::llm::{ChatModel, ChatRequest, ChatResponse, LlmError, Usage};
use crate::persona::scenario::Scenario;

/// A model that always answers the same, or always fails.
struct Fixed(Result<&'static str, u16>);

#[async_trait]
impl ChatModel for Fixed {
    fn model(&self) -> &str {
        "fixed"
    }
    async fn complete(&self, _req: ChatRequest) -> Result<ChatResponse, LlmError> {
        match self.0 {
            Err(status) => Err(LlmError::Server {
                status,
                message: "down".into(),
            }),
            Ok(text) => Ok(ChatResponse {
                message: Message::assistant(text),
                finish_reason: Some("stop".into()),
                usage: Usage {
                    prompt_tokens: 100,
                    completion_tokens: 20,
                },
                latency_ms: 1,
                tokens: None,
            }),
        }
    }
}

const PASS: &str = "POLICY: 5 - fine\nFEASIBILITY: 5 - fine\nKNOWLEDGE: 5 - fine\nREALISM: 4 - fine\nOverall: [[4]]";
const FAIL: &str = "POLICY: 5 - fine\nFEASIBILITY: 5 - fine\nKNOWLEDGE: 1 - no email in known_info\nREALISM: 4 - fine\nOverall: [[1]]";
const GARBLED: &str = "It looks fine to me overall.";

fn scenario() -> Scenario {
    serde_json::from_value(serde_json::json!({
        "id": "synth-0-000007",
        "description": "Cancel pending order #LL1.",
        "difficulty": "medium",
        "tags": ["retail", "write", "cancel"],
        "user": {
            "reason_for_contact": "You want to cancel order #LL1.",
            "known_info": "Your name is Mia Kim. Your email is mia.k@example.com.",
            "unknown_info": "You do not know when the refund arrives.",
            "task_instructions": "Confirm with 'yes' when asked."
        },
        "evaluation": {
            "actions": [],
            "communicate": ["5 to 7 business days"],
            "reward_basis": ["db", "communicate"]
        }
    }))
    .unwrap()
}

fn executed() -> Vec<ExecutedCall> {
    let call = |i: usize, name: &str, arguments: &str, output: &str| ExecutedCall {
        call: ToolCall {
            id: format!("gold_{i}"),
            name: name.into(),
            arguments: arguments.into(),
        },
        output: ToolOutput::ok(output),
    };
    vec![
        call(
            0,
            "find_user_id_by_email",
            r#"{"email":"mia.k@example.com"}"#,
            "mia_kim_1",
        ),
        call(
            1,
            "cancel_pending_order",
            r##"{"order_id":"#LL1","reason":"no longer needed"}"##,
            r##"{"order_id": "#LL1", "status": "cancelled"}"##,
        ),
    ]
}

fn committee(replies: &[Result<&'static str, u16>], rule: CommitteeRule) -> Committee {
    let mut models: HashMap<String, Arc<dyn ChatModel>> = HashMap::new();
    let mut judges = Vec::new();
    for (i, reply) in replies.iter().enumerate() {
        let endpoint = format!("e{i}");
        models.insert(endpoint.clone(), Arc::new(Fixed(*reply)));
        judges.push(
            Judge::from_builtin(&format!("r{i}"), &endpoint, Builtin::BlueprintReview).unwrap(),
        );
    }
    let rule = VoteRule {
        rule,
        pass_score: 4.0,
        min_mean: 3.0,
        quorum: replies.len() / 2 + 1,
    };
    Committee::new(judges, &models, rule).unwrap()
}

#[test]
fn the_template_shows_the_gold_actions_with_their_real_outputs_the_goal_facts_and_policy() {
    let s = scenario();
    let conversation = blueprint_conversation(&s, &executed());
    let inputs = JudgeInputs {
        scenario: Some(&s),
        domain_policy: Some("Authenticate the user by email or by name and zip."),
        ..JudgeInputs::new(&conversation)
    };
    let judge = Judge::from_builtin("r", "e", Builtin::BlueprintReview).unwrap();
    assert_eq!(judge.range.map(|r| (r.low, r.high)), Some((1.0, 5.0)));
    let text = render_prompt(&judge, &inputs, Order::Single).unwrap();
    assert!(
        text.starts_with(&Builtin::BlueprintReview.marker()),
        "{text}"
    );
    for expected in [
        "<gold_actions>\nAssistant: → tool find_user_id_by_email({\"email\":\"mia.k@example.com\"})\n← result: mia_kim_1",
        "→ tool cancel_pending_order(",
        "\"status\": \"cancelled\"",
        "<known_info>\nYour name is Mia Kim. Your email is mia.k@example.com.\n</known_info>",
        "<goal>\nYou want to cancel order #LL1.\n</goal>",
        "<communicate>\n- 5 to 7 business days\n</communicate>",
        "<reward_basis>\ndb, communicate\n</reward_basis>",
        "retail, write, cancel (difficulty: medium)",
        "Authenticate the user by email or by name and zip.",
        "KNOWLEDGE: <1-5>",
    ] {
        assert!(text.contains(expected), "{expected:?} missing from:\n{text}");
    }
    assert!(!text.contains("{{") && !text.contains("{%"));
    let without_policy = JudgeInputs {
        scenario: Some(&s),
        ..JudgeInputs::new(&conversation)
    };
    let err = render_prompt(&judge, &without_policy, Order::Single).unwrap_err();
    assert!(err.to_string().contains("domain policy"), "{err}");
}

#[test]
fn the_same_blueprint_is_shown_with_the_same_seed_and_another_with_another() {
    let s = scenario();
    let a = blueprint_conversation(&s, &executed());
    let b = blueprint_conversation(&s, &executed());
    assert_eq!(a.conversation.seed, b.conversation.seed);
    let other = Scenario {
        id: "synth-0-000008".into(),
        ..scenario()
    };
    assert_ne!(
        a.conversation.seed,
        blueprint_conversation(&other, &executed())
            .conversation
            .seed
    );
    assert_eq!(a.messages.len(), 4);
    assert_eq!(a.messages[1].tool_call_id.as_deref(), Some("gold_0"));
}

#[tokio::test]
async fn a_majority_accepts_and_every_verdict_keeps_its_reasons_and_tokens() {
    let c = committee(&[Ok(PASS), Ok(FAIL), Ok(PASS)], CommitteeRule::Majority);
    let review = c.review(&scenario(), &executed(), "policy").await.unwrap();
    assert!(review.accepted);
    assert_eq!(review.figure, 2.0 / 3.0);
    let scores: Vec<Option<f64>> = review.reviewers.iter().map(|r| r.score).collect();
    assert_eq!(scores, [Some(4.0), Some(1.0), Some(4.0)]);
    assert_eq!(review.reviewers[1].passed, Some(false));
    assert_eq!(review.reviewers[1].reasons, FAIL);
    assert_eq!(review.reviewers[1].name, "r1");
    assert_eq!(
        review.usage(),
        Usage {
            prompt_tokens: 300,
            completion_tokens: 60
        }
    );
    // Stored as JSON, read back the same.
    let json = serde_json::to_string(&review).unwrap();
    assert_eq!(serde_json::from_str::<Review>(&json).unwrap(), review);
}

#[tokio::test]
async fn a_majority_rejection_says_which_criterion_failed() {
    let c = committee(&[Ok(FAIL), Ok(FAIL), Ok(PASS)], CommitteeRule::Majority);
    let review = c.review(&scenario(), &executed(), "policy").await.unwrap();
    assert!(!review.accepted);
    let reason = c.rejection_reason(&review);
    assert!(
        reason.contains("1 of 3 reviewers")
            && reason.contains("KNOWLEDGE 1: no email in known_info (r0, r1)"),
        "{reason}"
    );
}

#[tokio::test]
async fn the_mean_rule_accepts_on_the_mean_whatever_the_majority() {
    // 4, 1, 4: mean 3 reaches min_mean 3.
    let c = committee(&[Ok(PASS), Ok(FAIL), Ok(PASS)], CommitteeRule::Mean);
    let review = c.review(&scenario(), &executed(), "policy").await.unwrap();
    assert!(review.accepted);
    assert_eq!((review.rule, review.figure), (CommitteeRule::Mean, 3.0));
    let c = committee(&[Ok(FAIL), Ok(FAIL), Ok(PASS)], CommitteeRule::Mean);
    let review = c.review(&scenario(), &executed(), "policy").await.unwrap();
    assert!(!review.accepted, "mean 2 is below 3");
}

#[tokio::test]
async fn a_reviewer_whose_call_fails_fails_the_review_instead_of_rejecting() {
    let c = committee(&[Ok(PASS), Err(503), Ok(PASS)], CommitteeRule::Majority);
    let err = c
        .review(&scenario(), &executed(), "policy")
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ReviewError::Failed { reviewer, .. } if reviewer == "r1"),
        "{err}"
    );
    assert!(err.to_string().contains("503"), "{err}");
}

#[tokio::test]
async fn unreadable_verdicts_are_left_out_until_the_quorum_is_lost() {
    let c = committee(&[Ok(FAIL), Ok(GARBLED), Ok(FAIL)], CommitteeRule::Majority);
    let review = c.review(&scenario(), &executed(), "policy").await.unwrap();
    assert!(!review.accepted);
    assert_eq!(review.reviewers[1].status, JudgeStatus::Unparseable);
    assert_eq!(review.reviewers[1].score, None);
    assert_eq!(review.reviewers[1].reasons, GARBLED);
    let c = committee(
        &[Ok(GARBLED), Ok(GARBLED), Ok(FAIL)],
        CommitteeRule::Majority,
    );
    let err = c
        .review(&scenario(), &executed(), "policy")
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            ReviewError::NoQuorum {
                readable: 1,
                reviewers: 3,
                quorum: 2,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn a_reviewer_naming_an_endpoint_not_connected_is_an_error() {
    let judge = Judge::from_builtin("r", "nowhere", Builtin::BlueprintReview).unwrap();
    let rule = VoteRule {
        rule: CommitteeRule::Majority,
        pass_score: 4.0,
        min_mean: 4.0,
        quorum: 1,
    };
    let err = Committee::new(vec![judge], &HashMap::new(), rule)
        .err()
        .unwrap();
    assert!(err.to_string().contains("'nowhere'"), "{err}");
}
