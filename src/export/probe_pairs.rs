//! DPO pairs from probes (`sparring export --format dpo --probe-pairs`): in
//! each probe scenario of a job, every conversation whose agent broke the
//! line is paired with the conversation of the same scenario that held it
//! and shares the longest prompt with it. Chosen is the held side, rejected
//! the broken one, shaped as a judge's pairs are (see [`super::dpo`]): with
//! the `turn` shape, the two answers to the same user turn where one agent
//! refused and the other gave in. A broken conversation with no held one of
//! its scenario, or none that first differs at a policy turn, is skipped
//! and counted.

use std::collections::{BTreeMap, HashMap};

use serde_json::{json, Value};

use super::dpo::{passes, shape_pair, DpoCounts, DpoShape, Pair};
use super::sink::{Row, RowSink};
use super::{openai, ExportError, Filter, JudgmentIndex};
use crate::store::browse::HeldOrBroken;
use crate::store::pages::each_stored_conversation;
use crate::store::{Store, StoredConversation};

/// Write the probe pairs of job `job_id` to `sink`.
pub async fn write(
    store: &dyn Store,
    job_id: i64,
    shape: DpoShape,
    filter: &Filter,
    sink: &mut (dyn RowSink + Send),
    on_progress: &mut (dyn FnMut(DpoCounts) + Send),
) -> Result<DpoCounts, ExportError> {
    // scenario → (held ids, broken ids), from each conversation's metadata.
    let mut scenarios: BTreeMap<String, (Vec<i64>, Vec<i64>)> = BTreeMap::new();
    each_stored_conversation(store, job_id, |c| {
        let row = &c.conversation;
        let sides = scenarios.entry(row.scenario_id.clone()).or_default();
        if HeldOrBroken::Held.of(&row.metadata) {
            sides.0.push(row.id);
        } else if HeldOrBroken::Broken.of(&row.metadata) {
            sides.1.push(row.id);
        }
        Ok::<(), ExportError>(())
    })
    .await?;
    let mut counts = DpoCounts::default();
    let mut indexes: HashMap<i64, JudgmentIndex> = HashMap::new();
    for (held, broken) in scenarios.values() {
        if broken.is_empty() {
            continue;
        }
        counts.judgments += broken.len() as u64;
        let mut helds = Vec::new();
        for &id in held {
            let c = fetch(store, id).await?;
            if passes(store, filter, &mut indexes, &c).await? {
                helds.push(c);
            }
        }
        for &id in broken {
            on_progress(counts);
            let rejected = fetch(store, id).await?;
            if !passes(store, filter, &mut indexes, &rejected).await? {
                counts.filtered += 1;
                continue;
            }
            if helds.is_empty() {
                counts.no_held += 1;
                continue;
            }
            let mut best: Option<(usize, &StoredConversation, Pair)> = None;
            let mut skip = None;
            for chosen in &helds {
                match shape_pair(shape, chosen, &rejected)? {
                    Ok(pair) if best.as_ref().is_none_or(|(len, ..)| pair.0.len() > *len) => {
                        best = Some((pair.0.len(), chosen, pair));
                    }
                    Ok(_) => {}
                    Err(why) => skip = Some(why),
                }
            }
            let Some((_, chosen, (prompt, chosen_side, rejected_side))) = best else {
                if let Some(why) = skip {
                    why.count(&mut counts);
                }
                continue;
            };
            let probe = &rejected.conversation.metadata["probe"];
            let mut line = json!({
                "prompt": prompt,
                "chosen": chosen_side,
                "rejected": rejected_side,
                // The columns of a judge's pairs (`dpo`), a judge's own empty.
                "metadata": {
                    "shape": shape.as_str(),
                    "source": "probe",
                    "scenario": rejected.conversation.scenario_id,
                    "persona": rejected.conversation.persona_id,
                    "sample": rejected.conversation.sample,
                    "judge": null,
                    "judgment": null,
                    "winner": null,
                    "swap_checked": null,
                    "conversation_a": chosen.conversation.id,
                    "conversation_b": rejected.conversation.id,
                    "chosen_conversation": chosen.conversation.id,
                    "rejected_conversation": rejected.conversation.id,
                    "chosen_reward": chosen.conversation.reward,
                    "rejected_reward": rejected.conversation.reward,
                    "family": probe["family"],
                    "strategy": probe["strategy"],
                    "turn_of_flip": probe.get("turn_of_flip"),
                },
            });
            line["tools"] = Value::Array(openai::tools(chosen));
            sink.write_row(&Row {
                line,
                sidecar: None,
                scenario: rejected.conversation.scenario_id.clone(),
            })?;
            counts.written += 1;
        }
    }
    on_progress(counts);
    sink.flush()?;
    Ok(counts)
}

async fn fetch(store: &dyn Store, id: i64) -> Result<StoredConversation, ExportError> {
    store
        .get_conversation(id)
        .await?
        .ok_or_else(|| ExportError::Corrupt {
            conversation: id,
            message: "listed among the job's conversations, but not stored".into(),
        })
}
