//! Running one judgment: render the prompt of each order, make the calls the
//! cache does not already hold, read them, and combine them. Every model call
//! becomes a [`JudgeCall`] record for the store; a failed call is status
//! `failed` and an unreadable output `unparseable`, never a loss or a zero.

use serde::{Deserialize, Serialize};

use super::combine::{
    combine_equivalence, combine_pairwise, combine_samples, needs_swapped_call, Reading,
};
use super::definition::{Judge, Mode};
use super::error::JudgeError;
use super::hash::sha256_hex;
use super::parse::{parse, ParseRules};
use super::render::{render_prompt, JudgeInputs};
use super::verdict::{Order, Verdict};
use crate::llm::message::Message;
use crate::llm::{ChatModel, ChatRequest, Role, Usage};

/// The status of a call or a judgment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JudgeStatus {
    Ok,
    /// The output had no readable verdict. Excluded from aggregates; retryable.
    Unparseable,
    /// The model call failed after the endpoint's retries. Excluded; retryable.
    Failed,
}

impl JudgeStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            JudgeStatus::Ok => "ok",
            JudgeStatus::Unparseable => "unparseable",
            JudgeStatus::Failed => "failed",
        }
    }

    pub fn parse(s: &str) -> Option<JudgeStatus> {
        Some(match s {
            "ok" => JudgeStatus::Ok,
            "unparseable" => JudgeStatus::Unparseable,
            "failed" => JudgeStatus::Failed,
            _ => return None,
        })
    }
}

/// One model call of a judgment, as stored. With the judge's config hash and the
/// conversation ids, `(order, sample)` is its cache key.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JudgeCall {
    pub order: Order,
    /// 0-based, below the judge's `samples`.
    pub sample: u32,
    /// sha256 (hex) of the rendered prompt. A cached call whose prompt has changed
    /// since (e.g. the scenario file was edited) is made again.
    pub prompt_hash: String,
    /// The model that answered.
    pub model: String,
    /// The output as the model wrote it (empty when the call failed).
    pub raw_output: String,
    /// The verdict read from it, in this call's own order (`A` = shown first).
    pub parsed: Option<Verdict>,
    pub status: JudgeStatus,
    /// Why the call failed (`class: message`), or why its output is unparseable.
    pub error: Option<String>,
    pub usage: Usage,
    pub latency_ms: u64,
    /// Answered through a provider's Batch API.
    pub batch: bool,
}

impl JudgeCall {
    fn reading(&self) -> Reading {
        match (self.status, &self.parsed) {
            (JudgeStatus::Ok, Some(v)) => Reading::Verdict(v.clone()),
            (JudgeStatus::Failed, _) => {
                Reading::Failed(self.error.clone().unwrap_or_else(|| "failed".into()))
            }
            _ => Reading::Unparseable(self.error.clone().unwrap_or_else(|| "unparseable".into())),
        }
    }
}

/// What a judgment concluded.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JudgeOutcome {
    pub status: JudgeStatus,
    /// Present exactly when the status is `ok`. Pairwise verdicts are in the
    /// original order: `A` is the judged conversation, `B` the other.
    pub verdict: Option<Verdict>,
    /// Swap-checked judgments: whether both orders agreed. `None` when only one
    /// order was judged (no swap check, or equivalence that said not equal first).
    pub consistent: Option<bool>,
    /// For `failed` and `unparseable`: why.
    pub reason: Option<String>,
}

impl JudgeOutcome {
    fn from_reading(reading: Reading, consistent: Option<bool>) -> Self {
        let (status, verdict, reason) = match reading {
            Reading::Verdict(v) => (JudgeStatus::Ok, Some(v), None),
            Reading::Unparseable(r) => (JudgeStatus::Unparseable, None, Some(r)),
            Reading::Failed(r) => (JudgeStatus::Failed, None, Some(r)),
        };
        JudgeOutcome {
            status,
            verdict,
            consistent,
            reason,
        }
    }

    /// The score for statistics and `--min-judge` filters (see [`Verdict::score`]).
    pub fn score(&self) -> Option<f64> {
        self.verdict.as_ref().and_then(Verdict::score)
    }

    /// A pass/fail judgment that failed: score below 0.5 (for several samples
    /// averaged, most said fail). Never true without a verdict.
    pub fn flagged(&self) -> bool {
        self.status == JudgeStatus::Ok && self.score().is_some_and(|s| s < 0.5)
    }
}

/// A judgment's outcome and the calls it rests on.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JudgeRun {
    pub outcome: JudgeOutcome,
    /// Calls made now: store these.
    pub made: Vec<JudgeCall>,
    /// Calls taken from the cache.
    pub reused: Vec<JudgeCall>,
}

impl JudgeRun {
    /// Every call the outcome rests on, in order (`ab` before `ba`, by sample).
    pub fn calls(&self) -> Vec<&JudgeCall> {
        let mut all: Vec<&JudgeCall> = self.made.iter().chain(&self.reused).collect();
        all.sort_by_key(|c| (c.order, c.sample));
        all
    }
}

/// Judge one conversation (or pair). `cached` holds the calls already stored
/// for this judge's config hash and these conversations; those with status
/// `ok` and the same prompt are reused, the rest (failed, unparseable, missing)
/// are made. Calls go in these orders:
/// - pointwise, assertions: `single`;
/// - pairwise: `ab`, and with `swap_check` also `ba` (at the same time);
/// - equivalence: `ab`, and with `swap_check` `ba` only when `ab` says equal.
///
/// Each order makes `samples` calls. Fails only when the prompt cannot be
/// rendered (nothing is called then).
pub async fn run(
    judge: &Judge,
    model: &dyn ChatModel,
    inputs: &JudgeInputs<'_>,
    cached: &[JudgeCall],
) -> Result<JudgeRun, JudgeError> {
    run_reusing(judge, model, inputs, cached, Reuse::Ok).await
}

/// Which cached calls a judgment reuses instead of making them again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reuse {
    /// Those that came out `ok`: a failed or unparseable call is made again.
    Ok,
    /// Those, and every call answered through a batch: the batch already
    /// sent a failed request again as often as it may, and an unparseable
    /// answer is the answer (`--retry-failed` makes it again).
    Settled,
}

impl Reuse {
    fn reuses(self, call: &JudgeCall) -> bool {
        call.status == JudgeStatus::Ok || (self == Reuse::Settled && call.batch)
    }
}

/// [`run`], reusing the cached calls `reuse` says.
pub async fn run_reusing(
    judge: &Judge,
    model: &dyn ChatModel,
    inputs: &JudgeInputs<'_>,
    cached: &[JudgeCall],
    reuse: Reuse,
) -> Result<JudgeRun, JudgeError> {
    inputs.check(judge)?;
    let ctx = Ctx {
        judge,
        model,
        inputs,
        cached,
        reuse,
    };
    let (reading, consistent, calls) = match judge.mode {
        Mode::Pointwise | Mode::Assertions => {
            let single = ctx.order(Order::Single).await?;
            (single.reading, None, vec![single.calls])
        }
        Mode::Pairwise if judge.swap_check => {
            let (ab, ba) = tokio::join!(ctx.order(Order::Ab), ctx.order(Order::Ba));
            let (ab, ba) = (ab?, ba?);
            let (reading, consistent) =
                combine_pairwise(ab.reading, Some(ba.reading), judge.on_inconsistent);
            (reading, consistent, vec![ab.calls, ba.calls])
        }
        Mode::Pairwise => {
            let ab = ctx.order(Order::Ab).await?;
            (ab.reading, None, vec![ab.calls])
        }
        Mode::Equivalence => {
            let ab = ctx.order(Order::Ab).await?;
            if judge.swap_check && needs_swapped_call(&ab.reading) {
                let ba = ctx.order(Order::Ba).await?;
                let (reading, consistent) = combine_equivalence(ab.reading, Some(ba.reading));
                (reading, consistent, vec![ab.calls, ba.calls])
            } else {
                let (reading, consistent) = combine_equivalence(ab.reading, None);
                (reading, consistent, vec![ab.calls])
            }
        }
    };
    let mut made = Vec::new();
    let mut reused = Vec::new();
    for (call, fresh) in calls.into_iter().flatten() {
        if fresh {
            made.push(call);
        } else {
            reused.push(call);
        }
    }
    Ok(JudgeRun {
        outcome: JudgeOutcome::from_reading(reading, consistent),
        made,
        reused,
    })
}

struct Ctx<'a> {
    judge: &'a Judge,
    model: &'a dyn ChatModel,
    inputs: &'a JudgeInputs<'a>,
    cached: &'a [JudgeCall],
    reuse: Reuse,
}

fn parse_rules<'a>(judge: &'a Judge, inputs: &JudgeInputs<'_>) -> ParseRules<'a> {
    ParseRules {
        parser: &judge.parser,
        mode: judge.mode,
        range: judge.range,
        assertions: inputs.assertions().len(),
    }
}

/// The model call of `order` and `sample` a judgment would make now: its
/// prompt (and the prompt's hash) and the request. For sending it some other
/// way (a batch) and reading the answer with [`answered_call`].
pub fn call_request(
    judge: &Judge,
    inputs: &JudgeInputs<'_>,
    order: Order,
    sample: u32,
) -> Result<(String, ChatRequest), JudgeError> {
    let prompt = render_prompt(judge, inputs, order)?;
    let prompt_hash = sha256_hex(prompt.as_bytes());
    Ok((prompt_hash, request(judge, inputs, sample, &prompt)))
}

fn request(judge: &Judge, inputs: &JudgeInputs<'_>, sample: u32, prompt: &str) -> ChatRequest {
    let seed = (inputs.conversation.conversation.seed as u64).wrapping_add(u64::from(sample));
    ChatRequest {
        role: Role::Judge,
        messages: vec![Message::user(prompt)],
        seed: Some(seed),
        temperature: judge.temperature,
        max_tokens: judge.max_tokens,
        ..ChatRequest::default()
    }
}

/// A call's record from an answer that came another way (a batch): the
/// output read as [`run`] reads it.
pub fn answered_call(
    judge: &Judge,
    inputs: &JudgeInputs<'_>,
    blank: JudgeCall,
    content: &str,
    usage: Usage,
) -> JudgeCall {
    let mut call = blank;
    call.usage = usage;
    match parse(&parse_rules(judge, inputs), content) {
        Ok(verdict) => {
            call.parsed = Some(verdict);
            call.status = JudgeStatus::Ok;
            call.error = None;
        }
        Err(u) => {
            call.status = JudgeStatus::Unparseable;
            call.error = Some(u.reason);
        }
    }
    call.raw_output = content.to_string();
    call
}

impl JudgeCall {
    /// A call of `order` and `sample` not answered (yet): status `failed`.
    pub fn unanswered(order: Order, sample: u32, prompt_hash: &str, model: &str) -> JudgeCall {
        JudgeCall {
            order,
            sample,
            prompt_hash: prompt_hash.to_string(),
            model: model.to_string(),
            raw_output: String::new(),
            parsed: None,
            status: JudgeStatus::Failed,
            error: None,
            usage: Usage::default(),
            latency_ms: 0,
            batch: false,
        }
    }
}

/// One order's samples: what they came to, and each call with whether it was
/// made now (`true`) or reused.
struct OrderCalls {
    reading: Reading,
    calls: Vec<(JudgeCall, bool)>,
}

impl Ctx<'_> {
    async fn order(&self, order: Order) -> Result<OrderCalls, JudgeError> {
        let prompt = render_prompt(self.judge, self.inputs, order)?;
        let prompt_hash = sha256_hex(prompt.as_bytes());
        let mut calls = Vec::new();
        for sample in 0..self.judge.samples {
            let hit = self.cached.iter().find(|c| {
                c.order == order
                    && c.sample == sample
                    && c.prompt_hash == prompt_hash
                    && self.reuse.reuses(c)
            });
            match hit {
                Some(call) => calls.push((call.clone(), false)),
                None => calls.push((self.call(order, sample, &prompt, &prompt_hash).await, true)),
            }
        }
        let readings: Vec<Reading> = calls.iter().map(|(c, _)| c.reading()).collect();
        Ok(OrderCalls {
            reading: combine_samples(&readings, self.judge.aggregate),
            calls,
        })
    }

    async fn call(&self, order: Order, sample: u32, prompt: &str, prompt_hash: &str) -> JudgeCall {
        let request = request(self.judge, self.inputs, sample, prompt);
        let mut call = JudgeCall::unanswered(order, sample, prompt_hash, self.model.model());
        match self.model.complete(request).await {
            Err(e) => {
                call.error = Some(format!("{}: {e}", e.class()));
                call
            }
            Ok(response) => {
                call.latency_ms = response.latency_ms;
                answered_call(
                    self.judge,
                    self.inputs,
                    call,
                    &response.message.content,
                    response.usage,
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::sync::Mutex;

    use async_trait::async_trait;

    use super::*;
    use crate::judge::builtin::Builtin;
    use crate::judge::render::tests::{scenario, tracking_conversation};
    use crate::judge::render::Other;
    use crate::judge::verdict::Preference;
    use crate::llm::{ChatResponse, LlmError};

    /// A model that answers from a script, in order, and records the prompts.
    struct Scripted {
        replies: Mutex<VecDeque<Result<String, LlmError>>>,
        prompts: Mutex<Vec<String>>,
    }

    impl Scripted {
        fn new(replies: Vec<Result<&str, LlmError>>) -> Self {
            Scripted {
                replies: Mutex::new(replies.into_iter().map(|r| r.map(String::from)).collect()),
                prompts: Mutex::new(Vec::new()),
            }
        }
        fn calls(&self) -> usize {
            self.prompts.lock().unwrap().len()
        }
    }

    #[async_trait]
    impl ChatModel for Scripted {
        fn model(&self) -> &str {
            "scripted"
        }
        async fn complete(&self, req: ChatRequest) -> Result<ChatResponse, LlmError> {
            self.prompts
                .lock()
                .unwrap()
                .push(req.messages[0].content.to_string());
            let reply = self
                .replies
                .lock()
                .unwrap()
                .pop_front()
                .expect("script ran out")?;
            Ok(ChatResponse {
                message: Message::assistant(reply),
                finish_reason: Some("stop".into()),
                usage: Usage {
                    prompt_tokens: 10,
                    completion_tokens: 2,
                },
                latency_ms: 5,
                tokens: None,
            })
        }
    }

    fn judge(builtin: Builtin) -> Judge {
        Judge::from_builtin(builtin.name(), "judge", builtin).unwrap()
    }

    fn server_error() -> LlmError {
        LlmError::Server {
            status: 500,
            message: "boom".into(),
        }
    }

    #[tokio::test]
    async fn a_pointwise_judgment_is_one_call_with_its_record() {
        let c = tracking_conversation(1);
        let model = Scripted::new(vec![Ok("Solid work. Rating: [[8]]")]);
        let run = run(
            &judge(Builtin::Helpfulness),
            &model,
            &JudgeInputs::new(&c),
            &[],
        )
        .await
        .unwrap();
        assert_eq!(run.outcome.status, JudgeStatus::Ok);
        assert_eq!(run.outcome.score(), Some(8.0));
        assert_eq!(run.made.len(), 1);
        let call = &run.made[0];
        assert_eq!((call.order, call.sample), (Order::Single, 0));
        assert_eq!(call.raw_output, "Solid work. Rating: [[8]]");
        assert_eq!(call.model, "scripted");
        assert_eq!(call.usage.completion_tokens, 2);
        let prompt = model.prompts.lock().unwrap()[0].clone();
        assert_eq!(call.prompt_hash, sha256_hex(prompt.as_bytes()));
    }

    #[tokio::test]
    async fn a_failed_call_is_a_failed_judgment_and_a_retry_redoes_only_that_sample() {
        let c = tracking_conversation(1);
        let mut j = judge(Builtin::Helpfulness);
        j.samples = 2;
        let model = Scripted::new(vec![Ok("[[6]]"), Err(server_error())]);
        let first = run(&j, &model, &JudgeInputs::new(&c), &[]).await.unwrap();
        assert_eq!(first.outcome.status, JudgeStatus::Failed);
        assert_eq!(first.outcome.score(), None, "a failure is not a zero");
        assert!(first
            .outcome
            .reason
            .as_deref()
            .unwrap()
            .contains("server_error"));
        assert_eq!(first.made[1].status, JudgeStatus::Failed);

        let model = Scripted::new(vec![Ok("[[9]]")]);
        let retry = run(&j, &model, &JudgeInputs::new(&c), &first.made)
            .await
            .unwrap();
        assert_eq!(model.calls(), 1, "sample 0 came from the cache");
        assert_eq!(retry.reused.len(), 1);
        assert_eq!(retry.made[0].sample, 1);
        // (6 + 9) / 2
        assert_eq!(retry.outcome.score(), Some(7.5));
    }

    #[tokio::test]
    async fn an_unparseable_output_is_recorded_with_its_reason_and_no_score() {
        let c = tracking_conversation(1);
        let model = Scripted::new(vec![Ok("I would rather not say.")]);
        let run = run(
            &judge(Builtin::Helpfulness),
            &model,
            &JudgeInputs::new(&c),
            &[],
        )
        .await
        .unwrap();
        assert_eq!(run.outcome.status, JudgeStatus::Unparseable);
        assert_eq!(run.outcome.verdict, None);
        assert_eq!(run.made[0].status, JudgeStatus::Unparseable);
        assert!(run.made[0].error.as_deref().unwrap().contains("no match"));
    }

    #[tokio::test]
    async fn a_swap_check_maps_the_ba_verdict_back_and_reports_consistency() {
        let a = tracking_conversation(1);
        let b = tracking_conversation(2);
        let inputs = JudgeInputs {
            other: Some(Other::Conversation(&b)),
            ..JudgeInputs::new(&a)
        };
        let j = judge(Builtin::PairwisePreference);
        // ab says A; ba says B (the original A): consistent.
        let model = Scripted::new(vec![Ok("[[A]]"), Ok("[[B]]")]);
        let r = run(&j, &model, &inputs, &[]).await.unwrap();
        assert_eq!(
            r.outcome.verdict,
            Some(Verdict::Preference {
                preference: Preference::A
            })
        );
        assert_eq!(r.outcome.consistent, Some(true));
        let orders: Vec<Order> = r.calls().iter().map(|c| c.order).collect();
        assert_eq!(orders, [Order::Ab, Order::Ba]);
        // The ba call's record keeps what it said in its own order.
        let ba = r.calls()[1].parsed.clone();
        assert_eq!(
            ba,
            Some(Verdict::Preference {
                preference: Preference::B
            })
        );
    }

    #[tokio::test]
    async fn equivalence_makes_the_swapped_call_only_after_equal() {
        let c = tracking_conversation(1);
        let s = scenario();
        let inputs = JudgeInputs {
            scenario: Some(&s),
            ..JudgeInputs::new(&c)
        };
        let j = judge(Builtin::Equivalence);
        let model = Scripted::new(vec![Ok("[[A!=B]]")]);
        let r = run(&j, &model, &inputs, &[]).await.unwrap();
        assert_eq!(model.calls(), 1);
        assert_eq!(
            r.outcome.verdict,
            Some(Verdict::Equivalence { equal: false })
        );
        assert_eq!(r.outcome.consistent, None);

        let model = Scripted::new(vec![Ok("[[A=B]]"), Ok("[[A!=B]]")]);
        let r = run(&j, &model, &inputs, &[]).await.unwrap();
        assert_eq!(model.calls(), 2);
        assert_eq!(
            r.outcome.verdict,
            Some(Verdict::Equivalence { equal: false })
        );
        assert_eq!(r.outcome.consistent, Some(false));
        let prompts = model.prompts.lock().unwrap();
        assert_ne!(prompts[0], prompts[1], "the answers swapped places");
    }

    #[tokio::test]
    async fn cached_calls_are_reused_only_for_the_same_prompt() {
        let c = tracking_conversation(1);
        let j = judge(Builtin::Helpfulness);
        let model = Scripted::new(vec![Ok("[[7]]")]);
        let first = run(&j, &model, &JudgeInputs::new(&c), &[]).await.unwrap();
        let again = Scripted::new(vec![]);
        let second = run(&j, &again, &JudgeInputs::new(&c), &first.made)
            .await
            .unwrap();
        assert_eq!(again.calls(), 0);
        assert_eq!(second.outcome, first.outcome);

        let mut changed = tracking_conversation(1);
        changed.messages.pop();
        let model = Scripted::new(vec![Ok("[[3]]")]);
        let third = run(&j, &model, &JudgeInputs::new(&changed), &first.made)
            .await
            .unwrap();
        assert_eq!(model.calls(), 1, "another prompt is another call");
        assert_eq!(third.outcome.score(), Some(3.0));
    }

    #[tokio::test]
    async fn a_missing_input_fails_before_any_call() {
        let c = tracking_conversation(1);
        let model = Scripted::new(vec![]);
        let err = run(
            &judge(Builtin::Assertions),
            &model,
            &JudgeInputs::new(&c),
            &[],
        )
        .await
        .unwrap_err();
        assert!(matches!(err, JudgeError::MissingInput { .. }));
        assert_eq!(model.calls(), 0);
    }

    #[test]
    fn a_pass_fail_outcome_is_flagged_only_when_it_fails() {
        let outcome = |status, score: Option<f64>| JudgeOutcome {
            status,
            verdict: score.map(|score| Verdict::Score { score }),
            consistent: None,
            reason: None,
        };
        assert!(outcome(JudgeStatus::Ok, Some(0.0)).flagged());
        assert!(outcome(JudgeStatus::Ok, Some(1.0 / 3.0)).flagged());
        assert!(!outcome(JudgeStatus::Ok, Some(1.0)).flagged());
        assert!(!outcome(JudgeStatus::Failed, None).flagged());
        assert!(!outcome(JudgeStatus::Unparseable, None).flagged());
    }
}
