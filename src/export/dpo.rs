//! DPO preference pairs from a pairwise judge's verdicts: one row per `ok`,
//! consistent (or not swap-checked), non-tie judgment of two stored
//! conversations, as `{prompt, chosen, rejected, tools, metadata}`.
//!
//! Two shapes ([`DpoShape`]):
//!
//! - `turn` (the default), the pair DPO trains on: the prompt is the whole
//!   prefix the two conversations share (tool-call ids aside), which may end
//!   in a tool result; `chosen` and `rejected` are the first assistant turn
//!   where they differ, up to the next tool result or user message. DPO
//!   scores every token after the prompt, so neither side holds a user or
//!   tool message the policy did not write. Messages are in the `hf` shape
//!   (object arguments, uniform keys), which TRL's templates render. A pair
//!   that first differs at a user or tool message (the simulated user or the
//!   environment went another way, not the policy) is skipped.
//! - `trajectory`, the older whole-rollout form: the prompt is cut back to the
//!   last shared user message, and each side is the rest of its conversation
//!   up to the policy's last reply, tool results and later user turns
//!   included. DPO then trains on text the policy did not write; kept for
//!   trainers with their own assistant masks.
//!
//! Either way messages are in the `hf` shape (object arguments, uniform
//! keys) and every row has `tools`, so the rows of both shapes have one
//! set of features; a pair that differs before its first user message has
//! no shared prompt and is skipped.

use std::collections::HashMap;
use std::fmt;

use serde::Serialize;
use serde_json::{json, Value};

use super::judgments::{newest_judgments, ok_verdict, JudgmentIndex};
use super::sink::{Row, RowSink};
use super::{hf, openai, trim, write_counts, ExportError, Filter};
use crate::judge::{Preference, Verdict};
use crate::store::{ConversationStore, JudgmentRow, JudgmentStore, Store, StoredConversation};

/// What happened to each judgment of the judge.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct DpoCounts {
    /// Judgments by the judge whose conversation A is in the job.
    pub judgments: u64,
    pub written: u64,
    /// Unparseable or failed: no verdict.
    pub not_ok: u64,
    /// A verdict that is not a preference (the judge is not pairwise).
    pub not_pairwise: u64,
    /// The two orders of a swap check disagreed, whatever they were resolved to.
    pub inconsistent: u64,
    pub ties: u64,
    /// Judged against a reference text, not a stored conversation.
    pub against_reference: u64,
    /// One of the two conversations is left out by the export's filters.
    pub filtered: u64,
    /// The conversations differ before their first user message.
    pub no_shared_prompt: u64,
    /// Nothing after the prompt tells the two apart.
    pub same_continuation: u64,
    /// (`turn`) They first differ at a user or tool message, or one ends there.
    pub not_at_policy: u64,
    /// (`turn`) A tool call's arguments are not a JSON object.
    pub arguments_not_an_object: u64,
    /// (probe pairs) A conversation that broke the line whose scenario has
    /// no conversation that held it.
    pub no_held: u64,
}

/// `--dpo-shape`: what a pair's prompt and sides hold (see the module doc).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum DpoShape {
    #[default]
    Turn,
    Trajectory,
}

impl DpoShape {
    pub fn parse(s: &str) -> Option<DpoShape> {
        match s {
            "turn" => Some(DpoShape::Turn),
            "trajectory" => Some(DpoShape::Trajectory),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            DpoShape::Turn => "turn",
            DpoShape::Trajectory => "trajectory",
        }
    }
}

impl DpoCounts {
    pub fn skipped(&self) -> u64 {
        self.judgments - self.written
    }
}

/// The reasons judgments were skipped: `3 ties, 1 inconsistent`, or `none`.
impl fmt::Display for DpoCounts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_counts(
            f,
            &[
                (
                    self.inconsistent,
                    "inconsistent (the swapped orders disagreed)",
                ),
                (self.ties, "ties"),
                (self.not_ok, "unparseable or failed"),
                (self.not_pairwise, "not pairwise verdicts"),
                (
                    self.against_reference,
                    "against a reference, not a conversation",
                ),
                (self.filtered, "left out by the filters"),
                (self.no_shared_prompt, "without a shared prompt"),
                (self.same_continuation, "with identical continuations"),
                (
                    self.not_at_policy,
                    "first differing at a user or tool message, not a policy turn",
                ),
                (
                    self.arguments_not_an_object,
                    "with tool-call arguments that are not a JSON object",
                ),
                (
                    self.no_held,
                    "broke the line in a scenario where no conversation held it",
                ),
            ],
        )
    }
}

/// Write a row per usable judgment by `judge` over the conversations of job
/// `job_id` (as conversation A), in order of conversation A then B, shaped
/// as `shape` says, to `sink` (a split goes by conversation A's scenario).
/// Both conversations of a pair must pass `filter`. `on_progress` is called
/// now and then with the counts so far.
pub async fn write(
    store: &dyn Store,
    job_id: i64,
    judge: &str,
    shape: DpoShape,
    filter: &Filter,
    sink: &mut (dyn RowSink + Send),
    on_progress: &mut (dyn FnMut(DpoCounts) + Send),
) -> Result<DpoCounts, ExportError> {
    let all = newest_judgments(store.judgments_of_job(job_id).await?);
    let mut mine: Vec<JudgmentRow> = all
        .iter()
        .filter(|row| row.judge_name == judge)
        .cloned()
        .collect();
    if mine.is_empty() {
        let mut present: Vec<String> = all.into_iter().map(|row| row.judge_name).collect();
        present.sort();
        present.dedup();
        return Err(ExportError::NoJudgments {
            judge: judge.to_string(),
            job: job_id,
            present,
        });
    }
    if let Some(mode) = not_pairwise(&mine)? {
        let mut pairwise = Vec::new();
        for row in &all {
            let preference = ok_verdict(row)?.and_then(|v| v.preference());
            if preference.is_some() && !pairwise.contains(&row.judge_name) {
                pairwise.push(row.judge_name.clone());
            }
        }
        pairwise.sort();
        return Err(ExportError::NotPairwise {
            judge: judge.to_string(),
            job: job_id,
            mode,
            pairwise,
        });
    }
    mine.sort_by_key(|row| (row.conversation_a, row.conversation_b, row.id));
    // Judgments per job, for the filters: conversation B may be another job's.
    let mut indexes: HashMap<i64, JudgmentIndex> = HashMap::new();
    if filter.needs_judgments() {
        indexes.insert(job_id, JudgmentIndex::build(all)?);
    }

    let mut counts = DpoCounts {
        judgments: mine.len() as u64,
        ..DpoCounts::default()
    };
    for (done, row) in mine.iter().enumerate() {
        if done % 100 == 0 {
            on_progress(counts);
        }
        let Some(verdict) = ok_verdict(row)? else {
            counts.not_ok += 1;
            continue;
        };
        let Some(preference) = verdict.preference() else {
            counts.not_pairwise += 1;
            continue;
        };
        if row.consistent == Some(false) {
            counts.inconsistent += 1;
            continue;
        }
        let a_won = match preference {
            Preference::A => true,
            Preference::B => false,
            Preference::Tie => {
                counts.ties += 1;
                continue;
            }
        };
        let Some(b_id) = row.conversation_b else {
            counts.against_reference += 1;
            continue;
        };
        let a = conversation(store, row, row.conversation_a).await?;
        let b = conversation(store, row, b_id).await?;
        if !passes(store, filter, &mut indexes, &a).await?
            || !passes(store, filter, &mut indexes, &b).await?
        {
            counts.filtered += 1;
            continue;
        }
        let (chosen, rejected) = if a_won { (&a, &b) } else { (&b, &a) };
        let pair = shape_pair(shape, chosen, rejected)?;
        let (prompt, chosen_side, rejected_side) = match pair {
            Ok(pair) => pair,
            Err(skip) => {
                skip.count(&mut counts);
                continue;
            }
        };
        let mut line = json!({
            "prompt": prompt,
            "chosen": chosen_side,
            "rejected": rejected_side,
            "metadata": {
                "shape": shape.as_str(),
                "source": "judge",
                "scenario": a.conversation.scenario_id,
                "persona": a.conversation.persona_id,
                "sample": a.conversation.sample,
                "judge": row.judge_name,
                "judgment": row.id,
                "winner": preference.as_str(),
                "swap_checked": row.consistent.is_some(),
                "conversation_a": a.conversation.id,
                "conversation_b": b.conversation.id,
                "chosen_conversation": chosen.conversation.id,
                "rejected_conversation": rejected.conversation.id,
                "chosen_reward": chosen.conversation.reward,
                "rejected_reward": rejected.conversation.reward,
                // A probe pair's (see `probe_pairs`): one set of columns.
                "family": null,
                "strategy": null,
                "turn_of_flip": null,
            },
        });
        line["tools"] = Value::Array(openai::tools(chosen));
        sink.write_row(&Row {
            line,
            sidecar: None,
            scenario: a.conversation.scenario_id.clone(),
        })?;
        counts.written += 1;
    }
    on_progress(counts);
    sink.flush()?;
    Ok(counts)
}

/// The mode of a judge none of whose `ok` verdicts is a preference (it is
/// not pairwise; `None` when one is, or when no verdict is ok).
fn not_pairwise(judgments: &[JudgmentRow]) -> Result<Option<&'static str>, ExportError> {
    let mut mode = None;
    for row in judgments {
        match ok_verdict(row)? {
            Some(Verdict::Preference { .. }) => return Ok(None),
            Some(Verdict::Score { .. }) => mode = mode.or(Some("pointwise")),
            Some(Verdict::Equivalence { .. }) => mode = mode.or(Some("equivalence")),
            Some(Verdict::Assertions { .. }) => mode = mode.or(Some("assertions")),
            None => {}
        }
    }
    Ok(mode)
}

/// Why a pair of conversations makes no row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PairSkip {
    NoSharedPrompt,
    SameContinuation,
    NotAtPolicy,
    ArgumentsNotAnObject,
}

impl PairSkip {
    pub(super) fn count(self, counts: &mut DpoCounts) {
        match self {
            PairSkip::NoSharedPrompt => counts.no_shared_prompt += 1,
            PairSkip::SameContinuation => counts.same_continuation += 1,
            PairSkip::NotAtPolicy => counts.not_at_policy += 1,
            PairSkip::ArgumentsNotAnObject => counts.arguments_not_an_object += 1,
        }
    }
}

/// A row's prompt, chosen side and rejected side.
pub(super) type Pair = (Vec<Value>, Vec<Value>, Vec<Value>);

/// The pair of `chosen` and `rejected` in `shape`, or why they make none.
pub(super) fn shape_pair(
    shape: DpoShape,
    chosen: &StoredConversation,
    rejected: &StoredConversation,
) -> Result<Result<Pair, PairSkip>, ExportError> {
    match shape {
        DpoShape::Turn => turn_pair(chosen, rejected),
        DpoShape::Trajectory => trajectory_pair(chosen, rejected),
    }
}

/// The chosen and the rejected conversation's messages.
type Both = (Vec<Value>, Vec<Value>);

/// Both conversations' messages in the `hf` shape (assistant messages with
/// their weights, see [`trim::take_weights`]).
fn both_as_hf(
    chosen: &StoredConversation,
    rejected: &StoredConversation,
) -> Result<Result<Both, PairSkip>, ExportError> {
    let as_hf = |c| {
        openai::messages(c).map(|m| hf::messages(&m).map_err(|_| PairSkip::ArgumentsNotAnObject))
    };
    Ok(match (as_hf(chosen)?, as_hf(rejected)?) {
        (Ok(c), Ok(r)) => Ok((c, r)),
        (Err(skip), _) | (_, Err(skip)) => Err(skip),
    })
}

/// The pair's three parts, without the messages' weights.
fn pair(prompt: &[Value], chosen: &[Value], rejected: &[Value]) -> Pair {
    let part = |messages: &[Value]| {
        let mut messages = messages.to_vec();
        trim::take_weights(&mut messages);
        messages
    };
    (part(prompt), part(chosen), part(rejected))
}

fn turn_pair(
    chosen: &StoredConversation,
    rejected: &StoredConversation,
) -> Result<Result<Pair, PairSkip>, ExportError> {
    let (chosen, rejected) = match both_as_hf(chosen, rejected)? {
        Ok(both) => both,
        Err(skip) => return Ok(Err(skip)),
    };
    Ok(
        split_at_first_differing_turn(&chosen, &rejected).map(|(cut, c_end, r_end)| {
            pair(&chosen[..cut], &chosen[cut..c_end], &rejected[cut..r_end])
        }),
    )
}

fn trajectory_pair(
    chosen: &StoredConversation,
    rejected: &StoredConversation,
) -> Result<Result<Pair, PairSkip>, ExportError> {
    let (chosen_messages, rejected_messages) = match both_as_hf(chosen, rejected)? {
        Ok(both) => both,
        Err(skip) => return Ok(Err(skip)),
    };
    let Some(cut) = shared_prompt_len(&chosen_messages, &rejected_messages) else {
        return Ok(Err(PairSkip::NoSharedPrompt));
    };
    let (prompt, chosen_rest) = chosen_messages.split_at(cut);
    let chosen_rest = trim::to_last_policy_reply(chosen_rest);
    let rejected_rest = trim::to_last_policy_reply(&rejected_messages[cut..]);
    if chosen_rest.is_empty() || rejected_rest.is_empty() || chosen_rest == rejected_rest {
        return Ok(Err(PairSkip::SameContinuation));
    }
    Ok(Ok(pair(prompt, chosen_rest, rejected_rest)))
}

/// `(prompt length, end of chosen's turn, end of rejected's turn)`: the
/// prompt is the longest run both begin with (tool-call ids aside); each
/// side's turn is its assistant messages from there, up to the next
/// non-assistant message.
pub fn split_at_first_differing_turn(
    chosen: &[Value],
    rejected: &[Value],
) -> Result<(usize, usize, usize), PairSkip> {
    let cut = chosen
        .iter()
        .zip(rejected)
        .take_while(|(x, y)| without_call_ids(x) == without_call_ids(y))
        .count();
    if !chosen[..cut].iter().any(|m| trim::role(m) == "user") {
        return Err(PairSkip::NoSharedPrompt);
    }
    let turn_end = |messages: &[Value]| {
        cut + messages[cut..]
            .iter()
            .take_while(|m| trim::role(m) == "assistant")
            .count()
    };
    let (chosen_end, rejected_end) = (turn_end(chosen), turn_end(rejected));
    if chosen_end == cut || rejected_end == cut {
        return Err(PairSkip::NotAtPolicy);
    }
    Ok((cut, chosen_end, rejected_end))
}

/// A message with its tool calls' ids and its `tool_call_id` blanked: two
/// rollouts that made the same call under other ids made the same move.
fn without_call_ids(m: &Value) -> Value {
    let mut m = m.clone();
    if let Some(calls) = m.get_mut("tool_calls").and_then(Value::as_array_mut) {
        for call in calls {
            if let Some(id) = call.get_mut("id") {
                *id = Value::Null;
            }
        }
    }
    if let Some(id) = m.get_mut("tool_call_id") {
        *id = Value::Null;
    }
    m
}

/// How many leading messages the pair's prompt has: the longest run both
/// begin with, cut back to end at its last user message. `None` when that run
/// holds no user message.
pub fn shared_prompt_len(a: &[Value], b: &[Value]) -> Option<usize> {
    let shared = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    a[..shared]
        .iter()
        .rposition(|m| m.get("role").and_then(Value::as_str) == Some("user"))
        .map(|last_user| last_user + 1)
}

async fn conversation(
    store: &dyn ConversationStore,
    row: &JudgmentRow,
    id: i64,
) -> Result<StoredConversation, ExportError> {
    store
        .get_conversation(id)
        .await?
        .ok_or_else(|| ExportError::Corrupt {
            conversation: id,
            message: format!(
                "judgment {} (judge '{}') names it, but it is not stored",
                row.id, row.judge_name
            ),
        })
}

pub(super) async fn passes(
    store: &dyn JudgmentStore,
    filter: &Filter,
    indexes: &mut HashMap<i64, JudgmentIndex>,
    c: &StoredConversation,
) -> Result<bool, ExportError> {
    let job = c.conversation.job_id;
    if filter.needs_judgments() && !indexes.contains_key(&job) {
        let index = JudgmentIndex::build(store.judgments_of_job(job).await?)?;
        indexes.insert(job, index);
    }
    let empty = JudgmentIndex::default();
    let index = indexes.get(&job).unwrap_or(&empty);
    Ok(filter.check(c, index).is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(role: &str, content: &str) -> Value {
        json!({"role": role, "content": content})
    }

    #[test]
    fn the_prompt_is_the_shared_start_cut_back_to_its_last_user_message() {
        let a = [
            m("system", "s"),
            m("user", "hi"),
            m("assistant", "hello"),
            m("user", "refund?"),
            m("assistant", "done"),
        ];
        let b = [
            m("system", "s"),
            m("user", "hi"),
            m("assistant", "hello"),
            m("user", "refund?"),
            m("assistant", "no"),
        ];
        assert_eq!(shared_prompt_len(&a, &b), Some(4));
        // The users diverge after a shared assistant reply: the prompt ends at
        // the first user message, and both continuations keep that reply.
        let c = [
            m("system", "s"),
            m("user", "hi"),
            m("assistant", "hello"),
            m("user", "cancel"),
        ];
        assert_eq!(shared_prompt_len(&a, &c), Some(2));
    }

    #[test]
    fn conversations_that_differ_before_a_user_message_share_no_prompt() {
        let a = [m("system", "policy one"), m("user", "hi")];
        let b = [m("system", "policy two"), m("user", "hi")];
        assert_eq!(shared_prompt_len(&a, &b), None);
        assert_eq!(shared_prompt_len(&[], &b), None);
    }

    fn call(id: &str, name: &str) -> Value {
        json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": id, "type": "function", "function": {"name": name, "arguments": {}}}
        ]})
    }

    fn result(id: &str) -> Value {
        json!({"role": "tool", "content": "ok", "tool_call_id": id})
    }

    #[test]
    fn a_turn_pair_shares_everything_up_to_the_first_differing_policy_turn() {
        // Same lookup under other call ids, then different actions.
        let chosen = [
            m("system", "s"),
            m("user", "refund order 1"),
            call("call_a", "get_order"),
            result("call_a"),
            call("call_b", "refund"),
            result("call_b"),
            m("assistant", "refunded"),
            m("user", "thanks ###STOP###"),
        ];
        let rejected = [
            m("system", "s"),
            m("user", "refund order 1"),
            call("call_x", "get_order"),
            result("call_x"),
            m("assistant", "I cannot refund it"),
            m("user", "why?"),
        ];
        let (cut, chosen_end, rejected_end) =
            split_at_first_differing_turn(&chosen, &rejected).unwrap();
        // The prompt ends in the tool result; each side is one assistant turn.
        assert_eq!(cut, 4);
        assert_eq!(trim::role(&chosen[cut - 1]), "tool");
        assert_eq!((chosen_end, rejected_end), (5, 5));
    }

    #[test]
    fn a_pair_that_first_differs_at_a_user_message_is_not_a_policy_choice() {
        let a = [
            m("user", "hi"),
            m("assistant", "hello"),
            m("user", "refund"),
        ];
        let b = [
            m("user", "hi"),
            m("assistant", "hello"),
            m("user", "cancel"),
        ];
        assert_eq!(
            split_at_first_differing_turn(&a, &b),
            Err(PairSkip::NotAtPolicy)
        );
        let ended = [m("user", "hi"), m("assistant", "hello")];
        let longer = [
            m("user", "hi"),
            m("assistant", "hello"),
            m("assistant", "more"),
        ];
        assert_eq!(
            split_at_first_differing_turn(&ended, &longer),
            Err(PairSkip::NotAtPolicy)
        );
        let other_system = [m("system", "x"), m("user", "hi"), m("assistant", "a")];
        let system = [m("system", "y"), m("user", "hi"), m("assistant", "a")];
        assert_eq!(
            split_at_first_differing_turn(&other_system, &system),
            Err(PairSkip::NoSharedPrompt)
        );
    }

    #[test]
    fn skip_reasons_read_as_a_list() {
        let counts = DpoCounts {
            judgments: 5,
            written: 2,
            ties: 2,
            inconsistent: 1,
            ..DpoCounts::default()
        };
        assert_eq!(counts.skipped(), 3);
        assert_eq!(
            counts.to_string(),
            "1 inconsistent (the swapped orders disagreed), 2 ties"
        );
    }
}
