//! Judge calls between the judge's types and the store's rows: a judging
//! job's items and `judge:NAME` rewards store their calls, and reuse the
//! calls stored for the same judge hash and conversations.

use crate::judge::{JudgeCall, JudgeStatus, Order, Verdict};
use crate::llm::Usage;
use crate::store::{JudgeCallRow, NewJudgeCall};

/// A judge call as the store keeps it, read back (none when a stored field
/// is not one this version knows).
pub fn to_call(row: JudgeCallRow) -> Option<JudgeCall> {
    let c = row.call;
    Some(JudgeCall {
        order: Order::parse(&c.order)?,
        sample: u32::try_from(c.sample).ok()?,
        prompt_hash: c.prompt_hash,
        model: c.model,
        raw_output: c.raw_output,
        parsed: c
            .parsed
            .and_then(|v| serde_json::from_value::<Verdict>(v).ok()),
        status: JudgeStatus::parse(&c.status)?,
        error: c.error,
        usage: Usage {
            prompt_tokens: c.prompt_tokens.max(0) as u64,
            completion_tokens: c.completion_tokens.max(0) as u64,
        },
        latency_ms: c.latency_ms.max(0) as u64,
        batch: c.batch,
    })
}

/// A judge call as the store keeps it.
pub fn from_call(call: &JudgeCall) -> NewJudgeCall {
    NewJudgeCall {
        order: call.order.as_str().to_string(),
        sample: i64::from(call.sample),
        prompt_hash: call.prompt_hash.clone(),
        model: call.model.clone(),
        raw_output: call.raw_output.clone(),
        parsed: call
            .parsed
            .as_ref()
            .and_then(|v| serde_json::to_value(v).ok()),
        status: call.status.as_str().to_string(),
        error: call.error.clone(),
        prompt_tokens: call.usage.prompt_tokens as i64,
        completion_tokens: call.usage.completion_tokens as i64,
        latency_ms: call.latency_ms as i64,
        batch: call.batch,
    }
}
