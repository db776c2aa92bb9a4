//! The judging item runner: one judgment per item, with the model calls it
//! made; calls already stored for the same judge hash and conversations are
//! reused.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use async_trait::async_trait;

use crate::judge::{
    resolved_persona, run as run_judge, Judge, JudgeInputs, JudgeOutcome, JudgeStatus, Other,
};
use crate::llm::ChatModel;
use crate::persona::{Persona, Scenario};
use crate::store::{self, ItemRow, NewJudgment, Store, StoredConversation};

use super::super::judge_calls::{from_call, to_call};
use super::super::work::{ItemRunner, Outcome};
use super::load::Loaded;
use super::plan::parse_key;

/// The judging item runner.
pub(super) struct Judging {
    store: Arc<dyn Store>,
    job_id: i64,
    judges: HashMap<String, (Judge, String)>,
    models: HashMap<String, Arc<dyn ChatModel>>,
    scenarios: HashMap<String, Scenario>,
    personas: HashMap<String, Persona>,
    /// The job whose conversations are judged (A's, when pairwise).
    source_job: i64,
    pub(super) calls_made: std::sync::atomic::AtomicU64,
}

impl Judging {
    pub(super) fn new(
        store: Arc<dyn Store>,
        job_id: i64,
        source_job: i64,
        loaded: Loaded,
        models: HashMap<String, Arc<dyn ChatModel>>,
    ) -> Judging {
        let judges = loaded
            .judges
            .iter()
            .map(|j| (j.name.clone(), (j.clone(), loaded.judge_hash(j))))
            .collect();
        Judging {
            store,
            job_id,
            judges,
            models,
            scenarios: loaded
                .scenarios
                .into_iter()
                .map(|s| (s.id.clone(), s))
                .collect(),
            personas: loaded
                .personas
                .into_iter()
                .map(|p| (p.id.clone(), p))
                .collect(),
            source_job,
            calls_made: Default::default(),
        }
    }

    /// Judgments per judge that this job stored: [ok, unparseable, failed].
    pub(super) async fn outcomes(
        &self,
        store: &dyn Store,
    ) -> Result<BTreeMap<String, [u64; 3]>, store::StoreError> {
        let mut out: BTreeMap<String, [u64; 3]> = self
            .judges
            .keys()
            .map(|name| (name.clone(), [0; 3]))
            .collect();
        for j in store.judgments_of_job(self.source_job).await? {
            let ours = self
                .judges
                .get(&j.judge_name)
                .is_some_and(|(_, hash)| *hash == j.judge_hash);
            if j.job_id != self.job_id || !ours {
                continue;
            }
            let slot = match j.status.as_str() {
                "ok" => 0,
                "unparseable" => 1,
                _ => 2,
            };
            out.entry(j.judge_name).or_default()[slot] += 1;
        }
        Ok(out)
    }

    async fn conversation(&self, id: i64) -> Result<StoredConversation, Outcome> {
        match self.store.get_conversation(id).await {
            Ok(Some(c)) => Ok(c),
            Ok(None) => Err(Outcome::failed(
                "dataset",
                format!("conversation {id} is not in the database"),
            )),
            Err(e) => Err(Outcome::failed("store", e.to_string())),
        }
    }
}

#[async_trait]
impl ItemRunner for Judging {
    async fn run(&self, item: &ItemRow) -> Outcome {
        let Some((name, a, b)) = parse_key(&item.key) else {
            return Outcome::failed("dataset", format!("'{}' is not a judging item", item.key));
        };
        let Some((judge, hash)) = self.judges.get(name) else {
            return Outcome::failed(
                "dataset",
                format!("judge '{name}' is no longer in the judges file"),
            );
        };
        let Some(model) = self.models.get(&judge.endpoint) else {
            return Outcome::failed(
                "config",
                format!(
                    "judge '{name}': endpoint '{}' is not connected",
                    judge.endpoint
                ),
            );
        };
        let conversation = match self.conversation(a).await {
            Ok(c) => c,
            Err(outcome) => return outcome,
        };
        let other = match b {
            Some(b) => match self.conversation(b).await {
                Ok(c) => Some(c),
                Err(outcome) => return outcome,
            },
            None => None,
        };
        // An imported conversation carries the scenario its user played.
        let imported = imported_scenario(&conversation);
        let scenario = self
            .scenarios
            .get(&conversation.conversation.scenario_id)
            .or(imported.as_ref());
        let persona = self
            .personas
            .get(&conversation.conversation.persona_id)
            .map(|p| resolved_persona(p, &conversation));
        let policy_text = conversation
            .messages
            .iter()
            .find(|m| m.role == "system")
            .map(|m| m.content.clone());
        let mut inputs = JudgeInputs::new(&conversation);
        inputs.other = other.as_ref().map(Other::Conversation);
        inputs.scenario = scenario;
        inputs.persona = persona.as_ref();
        inputs.domain_policy = policy_text.as_deref();
        let cached = match self.store.judge_calls(hash, a, b).await {
            Ok(rows) => rows.into_iter().filter_map(to_call).collect::<Vec<_>>(),
            Err(e) => return Outcome::failed("store", e.to_string()),
        };
        let ran = match run_judge(judge, model.as_ref(), &inputs, &cached).await {
            Ok(ran) => ran,
            Err(e) => return Outcome::failed("judge_input", e.to_string()),
        };
        self.calls_made
            .fetch_add(ran.made.len() as u64, std::sync::atomic::Ordering::Relaxed);
        let outcome: &JudgeOutcome = &ran.outcome;
        let judgment = NewJudgment {
            job_id: self.job_id,
            judge_name: judge.name.clone(),
            judge_hash: hash.clone(),
            conversation_a: a,
            conversation_b: b,
            status: outcome.status.as_str().to_string(),
            verdict: outcome
                .verdict
                .as_ref()
                .and_then(|v| serde_json::to_value(v).ok()),
            score: outcome.score(),
            consistent: outcome.consistent,
            reason: outcome.reason.clone(),
            calls: ran.made.iter().map(from_call).collect(),
        };
        if let Err(e) = self.store.save_judgment(&judgment).await {
            return Outcome::failed("store", e.to_string());
        }
        match outcome.status {
            JudgeStatus::Ok => Outcome::Finished,
            // Kept as a judgment (never a loss or a zero) and the item failed,
            // so `--retry-failed` makes the missing calls again.
            JudgeStatus::Unparseable => Outcome::failed(
                "unparseable",
                outcome
                    .reason
                    .clone()
                    .unwrap_or_else(|| "no verdict".into()),
            ),
            JudgeStatus::Failed => Outcome::failed(
                "judge_call",
                outcome.reason.clone().unwrap_or_else(|| "failed".into()),
            ),
        }
    }
}

/// The hidden scenario an imported conversation's simulated user played
/// (its metadata's `scenario`), as a scenario of its own id.
fn imported_scenario(c: &StoredConversation) -> Option<Scenario> {
    let user = c.conversation.metadata.get("scenario")?;
    serde_json::from_value(serde_json::json!({
        "id": c.conversation.scenario_id,
        "user": user,
    }))
    .ok()
}
