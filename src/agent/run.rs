//! `/run`: a run request to a verified, stored rollout, answered as NeMo
//! Gym's `BaseVerifyResponse`.

use std::sync::atomic::Ordering;

use serde_json::{json, Map, Value};

use crate::jobs::seed::item_seed;
use crate::jobs::work::Outcome;
use crate::persona::nemo_gym::REQUEST_FIELD;
use crate::store::{ItemRow, ItemStatus, NewConversation, NewItem};
use crate::user_checks::ScenarioBasis;

use super::error::RunFailure;
use super::open::Agent;
use super::output::{rollout, row_request};
use super::request::RunRequest;

/// How many keys one run tries when its key is taken (the same task and
/// repeat indices, collected again), from the first one not known taken.
const KEY_TRIES: u32 = 10_000;

impl Agent {
    /// One rollout for `request`: run, verified, stored, answered.
    pub async fn run(&self, request: &RunRequest) -> Result<Value, RunFailure> {
        let scenario = self.scenario_of(request)?;
        let suffix = match (request.task_index(), request.rollout_index()) {
            (Some(task), Some(repeat)) => format!("t{task}.r{repeat}"),
            (Some(task), None) => format!("t{task}"),
            _ => format!(
                "run{}-{}",
                crate::store::now_ms(),
                self.runs.fetch_add(1, Ordering::Relaxed)
            ),
        };
        let seed_key = format!("{}/{suffix}", scenario.id);
        let seed = item_seed(self.job.seed, &seed_key);
        let persona = self.persona_of(request, seed)?;
        let key = format!("{}/{}/{suffix}", scenario.id, persona.id);
        let item = ItemRow {
            id: 0,
            job_id: self.job_row.id,
            key: key.clone(),
            scenario_id: scenario.id.clone(),
            persona_id: persona.id.clone(),
            sample: request.rollout_index().map_or(0, |r| r as i64),
            seed: seed as i64,
            status: ItemStatus::Leased,
            attempts: 1,
            lease_owner: None,
            lease_expires_at: None,
            last_error: None,
        };
        let basis = ScenarioBasis::of(&scenario.user);
        let conversation = match self
            .generation
            .converse(&item, &scenario, persona, &basis)
            .await
        {
            Outcome::Conversation(c) => *c,
            Outcome::Failed { class, message } => {
                return Err(RunFailure::Rollout { class, message })
            }
            // `open` refuses scenarios with judge rewards; the others are
            // not what a generation item answers.
            Outcome::Judged(..) | Outcome::Finished | Outcome::Proposal(_) => {
                return Err(RunFailure::Rollout {
                    class: "internal".into(),
                    message: "the episode answered with something other than a conversation".into(),
                })
            }
        };
        let mut conversation = conversation;
        let conversation_id = self.store_rollout(&item, &mut conversation).await?;
        let base_request = if scenario.prelude.is_empty() {
            row_request(&request.row)
        } else {
            // The row's input as far as the conversation's prelude (with a
            // simulated user, later user turns became its goal).
            scenario
                .initial_state
                .get(REQUEST_FIELD)
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_else(|| row_request(&request.row))
        };
        let response_id = format!(
            "resp_sparring_{}_{}",
            self.job_row.id, conversation.item_key
        );
        let (rcp, response) = rollout(
            &base_request,
            &conversation,
            scenario.prelude.len(),
            &response_id,
        );
        Ok(self.answer(request, &conversation, conversation_id, rcp, response))
    }

    /// Store the rollout as a done item of the agent's job with its
    /// conversation, under its key or, when that is taken (the same indices
    /// collected again), the first free `KEY#n`; the conversation's id.
    /// The search starts after the last copy this process stored, so a
    /// trainer that sends the same indices every step costs one insert a
    /// rollout, not one per earlier step.
    async fn store_rollout(
        &self,
        item: &ItemRow,
        conversation: &mut NewConversation,
    ) -> Result<i64, RunFailure> {
        let first = self.first_untried_copy(&item.key);
        for n in first..first.saturating_add(KEY_TRIES) {
            let key = if n == 1 {
                item.key.clone()
            } else {
                format!("{}#{n}", item.key)
            };
            conversation.item_key = key.clone();
            let new_item = NewItem {
                key,
                scenario_id: item.scenario_id.clone(),
                persona_id: item.persona_id.clone(),
                sample: item.sample,
                seed: item.seed,
            };
            let stored = self
                .store
                .store_rollout(self.job_row.id, &new_item, conversation)
                .await?;
            if let Some(id) = stored {
                if n > 1 || first > 1 {
                    self.remember_copy(&item.key, n);
                }
                return Ok(id);
            }
        }
        Err(RunFailure::Rollout {
            class: "store".into(),
            message: format!("item key '{}' and {KEY_TRIES} variants are taken", item.key),
        })
    }

    /// The copy number to try first for `key`: 1 (the key itself) unless a
    /// copy of it was stored by this process.
    fn first_untried_copy(&self, key: &str) -> u32 {
        let copies = self.next_copy.lock().unwrap_or_else(|e| e.into_inner());
        copies.get(key).copied().unwrap_or(1)
    }

    /// Copy `n` of `key` is stored: later runs start after it.
    fn remember_copy(&self, key: &str, n: u32) {
        let mut copies = self.next_copy.lock().unwrap_or_else(|e| e.into_inner());
        let next = copies.entry(key.to_string()).or_insert(1);
        *next = (*next).max(n.saturating_add(1));
    }

    /// The `BaseVerifyResponse`: the row's fields as sent, the verifier's
    /// own fields, `responses_create_params`, `response` and `reward`, and
    /// what sparring stored under `sparring`.
    fn answer(
        &self,
        request: &RunRequest,
        conversation: &NewConversation,
        conversation_id: i64,
        rcp: Value,
        response: Value,
    ) -> Value {
        let mut answer: Map<String, Value> = request.row.clone();
        let record = conversation
            .metadata
            .get(crate::export::nemo_gym::RECORD_KEY)
            .and_then(Value::as_object);
        for (name, value) in record.into_iter().flatten() {
            if !answer.contains_key(name) && !matches!(name.as_str(), "response" | "reward") {
                answer.insert(name.clone(), value.clone());
            }
        }
        answer.insert(REQUEST_FIELD.into(), rcp);
        answer.insert("response".into(), response);
        match conversation.reward {
            Some(reward) => {
                answer.insert("reward".into(), json!(reward));
            }
            None => {
                // Not a measurement of the policy (e.g. the verifier masked
                // it): NeMo Gym's way to say so, never a silent 0.
                answer.insert("reward".into(), json!(0.0));
                answer.insert("mask_sample".into(), json!(true));
            }
        }
        answer.insert(
            "sparring".into(),
            json!({
                "job_id": self.job_row.id,
                "conversation_id": conversation_id,
                "item_key": conversation.item_key,
                "scenario_id": conversation.scenario_id,
                "persona_id": conversation.persona_id,
                "termination": conversation.termination,
                "reward_breakdown": conversation.reward_breakdown,
                "user_checks": conversation.user_checks,
            }),
        );
        Value::Object(answer)
    }
}
