//! DPO preference pairs from a pairwise judge's verdicts: one row per `ok`,
//! consistent (or not swap-checked), non-tie judgment of two stored
//! conversations, as `{prompt, chosen, rejected, tools, metadata}` with
//! messages in the chat format of the `openai` export (tool calls included).
//!
//! The prompt is what the two conversations share: the longest run of
//! messages both begin with, cut back to end at its last user message, so
//! `chosen` and `rejected` both begin with the policy's reply. That is at
//! least the system prompt and the first user turn; a pair that differs
//! before its first user message has no shared prompt and is skipped. User
//! messages after the policy's last reply end neither side: the policy never
//! answered them.

use std::collections::HashMap;
use std::fmt;
use std::io::Write;

use serde::Serialize;
use serde_json::{json, Value};

use super::judgments::{newest_judgments, ok_verdict, JudgmentIndex};
use super::{openai, ExportError, Filter};
use crate::judge::Preference;
use crate::store::{JudgmentRow, Store, StoredConversation};

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
}

impl DpoCounts {
    pub fn skipped(&self) -> u64 {
        self.judgments - self.written
    }
}

/// The reasons judgments were skipped: `3 ties, 1 inconsistent`, or `none`.
impl fmt::Display for DpoCounts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = [
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
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, why)| format!("{n} {why}"))
        .collect();
        if parts.is_empty() {
            f.write_str("none")
        } else {
            f.write_str(&parts.join(", "))
        }
    }
}

/// Write a row per usable judgment by `judge` over the conversations of job
/// `job_id` (as conversation A), in order of conversation A then B. Both
/// conversations of a pair must pass `filter`. `on_progress` is called now
/// and then with the counts so far.
pub async fn write(
    store: &dyn Store,
    job_id: i64,
    judge: &str,
    filter: &Filter,
    out: &mut (dyn Write + Send),
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
        let chosen_messages = openai::messages(chosen)?;
        let rejected_messages = openai::messages(rejected)?;
        let Some(cut) = shared_prompt_len(&chosen_messages, &rejected_messages) else {
            counts.no_shared_prompt += 1;
            continue;
        };
        let (prompt, chosen_rest) = chosen_messages.split_at(cut);
        let chosen_rest = without_trailing_user_messages(chosen_rest);
        let rejected_rest = without_trailing_user_messages(&rejected_messages[cut..]);
        if chosen_rest.is_empty() || rejected_rest.is_empty() || chosen_rest == rejected_rest {
            counts.same_continuation += 1;
            continue;
        }
        let mut line = json!({
            "prompt": prompt,
            "chosen": chosen_rest,
            "rejected": rejected_rest,
            "metadata": {
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
            },
        });
        let tools = openai::tools(chosen);
        if !tools.is_empty() {
            line["tools"] = Value::Array(tools);
        }
        serde_json::to_writer(&mut *out, &line).map_err(std::io::Error::from)?;
        out.write_all(b"\n")?;
        counts.written += 1;
    }
    on_progress(counts);
    out.flush()?;
    Ok(counts)
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

fn without_trailing_user_messages(messages: &[Value]) -> &[Value] {
    let end = messages
        .iter()
        .rposition(|m| m.get("role").and_then(Value::as_str) != Some("user"))
        .map_or(0, |last| last + 1);
    &messages[..end]
}

async fn conversation(
    store: &dyn Store,
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

async fn passes(
    store: &dyn Store,
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

    #[test]
    fn user_messages_after_the_last_reply_are_dropped() {
        let rest = [
            m("assistant", "done"),
            m("user", "thanks"),
            m("user", "bye"),
        ];
        assert_eq!(without_trailing_user_messages(&rest), &rest[..1]);
        let only_user = [m("user", "hello?")];
        assert!(without_trailing_user_messages(&only_user).is_empty());
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
