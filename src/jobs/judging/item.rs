//! The judging item runner: one judgment per item, with the model calls it
//! made; calls already stored for the same judge hash and conversations are
//! reused.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use async_trait::async_trait;

use crate::judge::{
    resolved_persona, run_reusing, Judge, JudgeCall, JudgeInputs, JudgeOutcome, JudgeStatus, Other,
    Reuse,
};
use crate::llm::ChatModel;
use crate::persona::{Persona, ResolvedPersona, Scenario};
use crate::store::{self, ItemRow, JudgmentStore, NewJudgment, Store, StoredConversation};

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
    /// Endpoints whose calls go through the Batch API.
    batch_endpoints: HashSet<String>,
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
        let batch_endpoints = loaded
            .used_endpoints()
            .filter(|e| e.batch().is_some())
            .map(|e| e.name.clone())
            .collect();
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
            batch_endpoints,
            calls_made: Default::default(),
        }
    }

    /// Judgments per judge that this job stored: [ok, unparseable, failed].
    pub(super) async fn outcomes(
        &self,
        store: &dyn JudgmentStore,
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

/// One item's judge and what it judges, loaded.
pub(super) struct Prepared<'j> {
    pub(super) judge: &'j Judge,
    pub(super) hash: &'j str,
    pub(super) a: i64,
    pub(super) b: Option<i64>,
    conversation: StoredConversation,
    other: Option<StoredConversation>,
    scenario: Option<&'j Scenario>,
    /// The scenario an imported conversation carries, when the judged job's
    /// scenarios do not have it.
    imported: Option<Scenario>,
    persona: Option<ResolvedPersona>,
    policy_text: Option<String>,
}

impl Prepared<'_> {
    pub(super) fn inputs(&self) -> JudgeInputs<'_> {
        let mut inputs = JudgeInputs::new(&self.conversation);
        inputs.other = self.other.as_ref().map(Other::Conversation);
        inputs.scenario = self.scenario.or(self.imported.as_ref());
        inputs.persona = self.persona.as_ref();
        inputs.domain_policy = self.policy_text.as_deref();
        inputs
    }

    /// The calls stored for this judge and these conversations.
    pub(super) async fn cached(
        &self,
        store: &dyn JudgmentStore,
    ) -> Result<Vec<JudgeCall>, Outcome> {
        match store.judge_calls(self.hash, self.a, self.b).await {
            Ok(rows) => Ok(rows.into_iter().filter_map(to_call).collect()),
            Err(e) => Err(Outcome::failed("store", e.to_string())),
        }
    }
}

impl Judging {
    /// The endpoint configs of the judges, by endpoint name.
    pub(super) fn judge_endpoint(&self, judge: &Judge) -> Option<&Arc<dyn ChatModel>> {
        self.models.get(&judge.endpoint)
    }

    /// Load what item `key` judges.
    pub(super) async fn prepare(&self, key: &str) -> Result<Prepared<'_>, Outcome> {
        let Some((name, a, b)) = parse_key(key) else {
            return Err(Outcome::failed(
                "dataset",
                format!("'{key}' is not a judging item"),
            ));
        };
        let Some((judge, hash)) = self.judges.get(name) else {
            return Err(Outcome::failed(
                "dataset",
                format!("judge '{name}' is no longer in the judges file"),
            ));
        };
        let conversation = self.conversation(a).await?;
        let other = match b {
            Some(b) => Some(self.conversation(b).await?),
            None => None,
        };
        let scenario = self.scenarios.get(&conversation.conversation.scenario_id);
        // An imported conversation carries the scenario its user played.
        let imported = scenario
            .is_none()
            .then(|| imported_scenario(&conversation))
            .flatten();
        let persona = self
            .personas
            .get(&conversation.conversation.persona_id)
            .map(|p| resolved_persona(p, &conversation));
        let policy_text = conversation
            .messages
            .iter()
            .find(|m| m.role == "system")
            .map(|m| m.content.clone());
        Ok(Prepared {
            judge,
            hash,
            a,
            b,
            conversation,
            other,
            scenario,
            imported,
            persona,
            policy_text,
        })
    }
}

#[async_trait]
impl ItemRunner for Judging {
    async fn run(&self, item: &ItemRow) -> Outcome {
        let prepared = match self.prepare(&item.key).await {
            Ok(p) => p,
            Err(outcome) => return outcome,
        };
        let judge = prepared.judge;
        let Some(model) = self.judge_endpoint(judge) else {
            return Outcome::failed(
                "config",
                format!(
                    "judge '{}': endpoint '{}' is not connected",
                    judge.name, judge.endpoint
                ),
            );
        };
        let cached = match prepared.cached(self.store.as_ref()).await {
            Ok(cached) => cached,
            Err(outcome) => return outcome,
        };
        // A batch endpoint's calls were sent through batches before the items
        // ran; what a batch answered (or gave up on) stands.
        let reuse = if self.batch_endpoints.contains(&judge.endpoint) {
            Reuse::Settled
        } else {
            Reuse::Ok
        };
        let inputs = prepared.inputs();
        let ran = match run_reusing(judge, model.as_ref(), &inputs, &cached, reuse).await {
            Ok(ran) => ran,
            Err(e) => return Outcome::failed("judge_input", e.to_string()),
        };
        self.calls_made
            .fetch_add(ran.made.len() as u64, std::sync::atomic::Ordering::Relaxed);
        let outcome: &JudgeOutcome = &ran.outcome;
        let (a, b, hash) = (prepared.a, prepared.b, prepared.hash);
        let judgment = NewJudgment {
            job_id: self.job_id,
            judge_name: judge.name.clone(),
            judge_hash: hash.to_string(),
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
