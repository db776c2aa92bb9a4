//! Which calls to send: for each unfinished item whose judge is on a batch
//! endpoint, the calls its judgment still needs (rendered as `run` would
//! make them), less those in flight, answered, or out of attempts.

use std::collections::HashMap;

use async_trait::async_trait;

use crate::judge::{call_request, run_reusing, Reuse};
use crate::llm::batch::{request_line, BatchError};
use crate::llm::wire::{to_request, Sampling};
use crate::llm::{ChatModel, ChatRequest, ChatResponse, LlmError};
use crate::store::NewBatchRequest;

use super::super::super::error::RunError;
use super::custom_id::{base_of, CallKey};
use super::{BatchEndpoint, BatchPhase};

/// A request to send, with its line of the batch file.
pub(super) struct Planned {
    pub endpoint: String,
    pub request: NewBatchRequest,
    pub line: String,
}

/// Stands in for the model while planning: every call "fails" at once, so
/// `run` names each call it would make (an equivalence judge's swapped call
/// only once the first is answered: the next round sends it).
struct Unsent;

#[async_trait]
impl ChatModel for Unsent {
    fn model(&self) -> &str {
        "batch"
    }
    async fn complete(&self, _: ChatRequest) -> Result<ChatResponse, LlmError> {
        Err(LlmError::InvalidRequest("to be sent in a batch".into()))
    }
}

/// The attempt to send a call as, given its earlier submissions (attempt,
/// status): none while one is in flight or answered, none once
/// `max_attempts` failed. Submissions up to attempt `since` are of earlier
/// runs that `--retry-failed` sets aside.
pub(super) fn next_attempt(history: &[(i64, &str)], since: i64, max_attempts: u32) -> Option<i64> {
    let current: Vec<&(i64, &str)> = history.iter().filter(|(a, _)| *a > since).collect();
    if current.iter().any(|(_, status)| *status != "failed") {
        return None;
    }
    if current.len() >= max_attempts as usize {
        return None;
    }
    let last = history
        .iter()
        .map(|(attempt, _)| *attempt)
        .max()
        .unwrap_or(0);
    Some(last.max(since) + 1)
}

/// The chat completion body of `request` on `endpoint`, as its `Endpoint`
/// would send it.
pub(super) fn body(endpoint: &BatchEndpoint, request: &ChatRequest) -> serde_json::Value {
    let config = &endpoint.config;
    let sampling = Sampling {
        temperature: config.settings.temperature,
        top_p: config.settings.top_p,
        max_tokens: Some(config.settings.max_tokens),
    };
    serde_json::to_value(to_request(&config.settings.model, &sampling, request))
        .unwrap_or(serde_json::Value::Null)
}

impl BatchPhase<'_> {
    pub(super) async fn plan(&self) -> Result<Vec<Planned>, RunError> {
        let stored = self.store.batch_requests_of_job(self.job_id).await?;
        let mut history: HashMap<&str, Vec<(i64, &str)>> = HashMap::new();
        for r in &stored {
            history
                .entry(base_of(&r.request.custom_id))
                .or_default()
                .push((r.request.attempt, r.status.as_str()));
        }
        let mut planned = Vec::new();
        for key in self.store.unfinished_item_keys(self.job_id).await? {
            // An item that cannot be prepared fails when it runs, with why.
            let Ok(prepared) = self.runner.prepare(&key).await else {
                continue;
            };
            let judge = prepared.judge;
            let Some(endpoint) = self.endpoints.get(&judge.endpoint) else {
                continue;
            };
            let Ok(cached) = prepared.cached(self.store).await else {
                continue;
            };
            let inputs = prepared.inputs();
            // With --retry-failed, what earlier runs' batches failed or could
            // not read is sent again; otherwise it stands.
            let reuse = if self.retry_from.is_some() {
                Reuse::Ok
            } else {
                Reuse::Settled
            };
            let Ok(ran) = run_reusing(judge, &Unsent, &inputs, &cached, reuse).await else {
                continue;
            };
            for call in &ran.made {
                let Ok((prompt_hash, request)) =
                    call_request(judge, &inputs, call.order, call.sample)
                else {
                    continue;
                };
                let call_key = CallKey {
                    judge_hash: prepared.hash.to_string(),
                    a: prepared.a,
                    b: prepared.b,
                    order: call.order,
                    sample: call.sample,
                    prompt_hash: prompt_hash.clone(),
                };
                let base = call_key.base();
                let earlier = history.get(base.as_str()).map_or(&[][..], Vec::as_slice);
                let since = self
                    .retry_from
                    .as_ref()
                    .and_then(|from| from.get(&base).copied())
                    .unwrap_or(0);
                let Some(attempt) = next_attempt(earlier, since, endpoint.settings.max_attempts)
                else {
                    continue;
                };
                let custom_id = call_key.custom_id(attempt);
                let line = request_line(&custom_id, &body(endpoint, &request)).map_err(|e| {
                    BatchError::Malformed {
                        what: "write the batch file",
                        message: e.to_string(),
                    }
                })?;
                planned.push(Planned {
                    endpoint: judge.endpoint.clone(),
                    request: NewBatchRequest {
                        custom_id,
                        judge_name: judge.name.clone(),
                        judge_hash: prepared.hash.to_string(),
                        conversation_a: prepared.a,
                        conversation_b: prepared.b,
                        order: call.order.as_str().to_string(),
                        sample: i64::from(call.sample),
                        prompt_hash,
                        attempt,
                    },
                    line,
                });
            }
        }
        Ok(planned)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_goes_again_only_after_failures_and_within_its_attempts() {
        assert_eq!(next_attempt(&[], 0, 3), Some(1));
        assert_eq!(next_attempt(&[(1, "failed")], 0, 3), Some(2));
        assert_eq!(next_attempt(&[(1, "failed"), (2, "failed")], 0, 3), Some(3));
        let used_up = [(1, "failed"), (2, "failed"), (3, "failed")];
        assert_eq!(next_attempt(&used_up, 0, 3), None);
        assert_eq!(next_attempt(&[(1, "submitted")], 0, 3), None, "in flight");
        assert_eq!(next_attempt(&[(1, "failed"), (2, "answered")], 0, 3), None);
        assert_eq!(next_attempt(&[(1, "failed")], 0, 1), None);
    }

    #[test]
    fn retry_failed_sets_earlier_runs_aside_but_never_reuses_an_id() {
        let used_up = [(1, "failed"), (2, "failed"), (3, "failed")];
        assert_eq!(next_attempt(&used_up, 3, 3), Some(4));
        let answered_unreadable = [(1, "answered")];
        assert_eq!(next_attempt(&answered_unreadable, 1, 3), Some(2));
        // This run's own attempts still count and stop.
        let this_run = [(1, "answered"), (2, "failed"), (3, "answered")];
        assert_eq!(next_attempt(&this_run, 1, 3), None);
        assert_eq!(next_attempt(&[], 5, 3), Some(6));
    }
}
