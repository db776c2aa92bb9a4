//! Mining (issue 30 §4, `sparring mine`): each conversation of an import job
//! turned by a model into a scenario and a persona that writes as the
//! customer wrote, private values replaced by consistent fakes on the way in
//! and on the way out, every pair held to the loaders' and the environment's
//! checks and near-duplicates removed. No store is opened and nothing is
//! printed here: the caller passes the store, the model and a progress
//! callback, and writes the result (`output`).

pub mod check;
pub mod output;
pub mod private;
pub mod prompt;
pub mod reply;

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Serialize;
use tokio::sync::Semaphore;

use crate::env::Environment;
use crate::llm::message::Message;
use crate::llm::{ChatModel, ChatRequest, LlmError, Role};
use crate::persona::{Persona, Scenario};
use crate::prompt::PromptRegistry;
use crate::store::{
    ConversationStore, JobKind, JobRow, JobStore, Store, StoreError, StoredConversation,
};
use crate::synth::dedup::DedupIndex;

use check::{environment_problems, format_problems, kept_index, unshown_facts, Rejection};
use private::{PrivacyError, PrivacyRules, Redactor};
use prompt::{Turn, MINE};
use reply::{read_answer, Mined};

/// Conversations read from the store at a time.
const PAGE: u32 = 256;

/// What to mine, and how.
#[derive(Debug, Clone)]
pub struct MineRequest {
    pub job_id: i64,
    /// How the environment is named in the prompt and the job config.
    pub environment: String,
    pub privacy: PrivacyRules,
    /// Model calls in flight at most (1..=256, checked by the caller).
    pub concurrency: usize,
}

/// A conversation that gave no scenario, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rejected {
    pub conversation_id: i64,
    pub rejection: Rejection,
    pub reason: String,
}

/// What mining gave.
#[derive(Debug)]
pub struct MineOutcome {
    pub job: JobRow,
    pub conversations: usize,
    /// Kept, in conversation order.
    pub mined: Vec<Mined>,
    pub rejected: Vec<Rejected>,
    /// Distinct private values replaced by fakes.
    pub private_values_replaced: usize,
}

impl MineOutcome {
    pub fn scenarios(&self) -> impl Iterator<Item = &Scenario> {
        self.mined.iter().map(|m| &m.scenario)
    }

    pub fn personas(&self) -> impl Iterator<Item = &Persona> {
        self.mined.iter().map(|m| &m.persona)
    }

    /// Rejections by class, with counts.
    pub fn rejections(&self) -> BTreeMap<Rejection, usize> {
        let mut counts = BTreeMap::new();
        for r in &self.rejected {
            *counts.entry(r.rejection).or_insert(0) += 1;
        }
        counts
    }
}

#[derive(Debug, thiserror::Error)]
pub enum MineError {
    #[error("job {0} is not in the database; `sparring jobs` lists the jobs")]
    NoSuchJob(i64),
    #[error(
        "job {id} '{name}' is a {kind} job; mining reads an import job's real conversations \
         (`sparring import FILE` makes one)"
    )]
    NotImport {
        id: i64,
        name: String,
        kind: &'static str,
    },
    #[error("import job {id} '{name}' holds no conversations; import some first")]
    Empty { id: i64, name: String },
    #[error(transparent)]
    Privacy(#[from] PrivacyError),
    #[error("the mining prompt: {0}")]
    Prompt(String),
    #[error("reading the job's conversations")]
    Store(#[from] StoreError),
}

/// Mine every conversation of import job `request.job_id` with `model`,
/// checked against `environment`. `progress(done, total)` after each call.
pub async fn mine(
    store: &dyn Store,
    model: Arc<dyn ChatModel>,
    environment: &dyn Environment,
    request: &MineRequest,
    progress: &(dyn Fn(usize, usize) + Send + Sync),
) -> Result<MineOutcome, MineError> {
    let job = import_job(store, request.job_id).await?;
    let total = usize::try_from(store.job_summary(job.id).await?.conversations).unwrap_or(0);
    let prompts = prompt::registry().map_err(|p| {
        MineError::Prompt(
            p.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; "),
        )
    })?;
    let mut redactor = Redactor::new(&request.privacy)?;
    learn_private_values(store, job.id, &mut redactor).await?;
    let mut outcome = MineOutcome {
        job,
        conversations: 0,
        mined: Vec::new(),
        rejected: Vec::new(),
        private_values_replaced: 0,
    };
    let mut kept = kept_index();
    let mut after = 0;
    loop {
        let page = store
            .conversations_page(outcome.job.id, after, PAGE)
            .await?;
        let Some(last) = page.last() else { break };
        after = last.conversation.id;
        let asked = ask(
            &page,
            &prompts,
            &mut redactor,
            &model,
            request,
            progress,
            (outcome.conversations, total),
        )
        .await?;
        outcome.conversations += page.len();
        for (conversation, (turns, answer)) in page.iter().zip(asked) {
            let id = conversation.conversation.id;
            let decided = match answer {
                Err(e) => Err((Rejection::ModelFailed, crate::error_chain::error_chain(&e))),
                Ok(answer) => {
                    decide(
                        &outcome.job,
                        id,
                        &turns,
                        &answer,
                        &mut redactor,
                        environment,
                        &mut kept,
                    )
                    .await
                }
            };
            match decided {
                Ok(mined) => outcome.mined.push(mined),
                // A reason may quote what the model wrote.
                Err((rejection, reason)) => outcome.rejected.push(Rejected {
                    conversation_id: id,
                    rejection,
                    reason: redactor.redact_answer(&reason),
                }),
            }
        }
    }
    if outcome.conversations == 0 {
        return Err(MineError::Empty {
            id: outcome.job.id,
            name: outcome.job.name,
        });
    }
    outcome.private_values_replaced = redactor.replaced();
    Ok(outcome)
}

/// Every conversation's own private values learned before the first is
/// sent: a value one conversation's records name is replaced in all of them.
async fn learn_private_values(
    store: &dyn ConversationStore,
    job_id: i64,
    redactor: &mut Redactor,
) -> Result<(), MineError> {
    let mut after = 0;
    loop {
        let page = store.conversations_page(job_id, after, PAGE).await?;
        let Some(last) = page.last() else {
            return Ok(());
        };
        after = last.conversation.id;
        for conversation in &page {
            redactor.learn(conversation);
        }
    }
}

async fn import_job(store: &dyn JobStore, id: i64) -> Result<JobRow, MineError> {
    let job = store.get_job(id).await?.ok_or(MineError::NoSuchJob(id))?;
    if job.kind != JobKind::Import {
        return Err(MineError::NotImport {
            id,
            name: job.name,
            kind: job.kind.as_str(),
        });
    }
    Ok(job)
}

type Asked = (Vec<Turn>, Result<String, LlmError>);

/// Each conversation of `page` redacted (in order, so the fakes do not
/// depend on which call returns first), then sent, `request.concurrency` at a
/// time; the answers in the page's order.
async fn ask(
    page: &[StoredConversation],
    prompts: &PromptRegistry,
    redactor: &mut Redactor,
    model: &Arc<dyn ChatModel>,
    request: &MineRequest,
    progress: &(dyn Fn(usize, usize) + Send + Sync),
    (done_before, total): (usize, usize),
) -> Result<Vec<Asked>, MineError> {
    let mut prompts_of_page = Vec::with_capacity(page.len());
    for conversation in page {
        let turns = prompt::turns(&conversation.messages, redactor);
        let ctx = prompt::context(conversation.conversation.id, &request.environment, &turns);
        let text = prompts
            .render(MINE, &ctx)
            .map_err(|e| MineError::Prompt(e.to_string()))?;
        prompts_of_page.push((turns, text));
    }
    let limit = Arc::new(Semaphore::new(request.concurrency.max(1)));
    let mut calls = tokio::task::JoinSet::new();
    for (i, (conversation, (_, text))) in page.iter().zip(&prompts_of_page).enumerate() {
        let model = Arc::clone(model);
        let limit = Arc::clone(&limit);
        let chat = ChatRequest {
            role: Role::Unspecified,
            messages: vec![Message::user(text.as_str())],
            seed: Some(request.privacy.seed ^ conversation.conversation.id as u64),
            ..Default::default()
        };
        calls.spawn(async move {
            let _permit = limit.acquire_owned().await;
            let answer = model
                .complete(chat)
                .await
                .map(|r| r.message.content.to_string());
            (i, answer)
        });
    }
    let mut answers: Vec<Option<Result<String, LlmError>>> =
        (0..page.len()).map(|_| None).collect();
    let mut done = done_before;
    while let Some(joined) = calls.join_next().await {
        let Ok((i, answer)) = joined else { continue };
        done += 1;
        progress(done, total.max(done));
        if let Some(slot) = answers.get_mut(i) {
            *slot = Some(answer);
        }
    }
    Ok(prompts_of_page
        .into_iter()
        .zip(answers)
        .map(|((turns, _), answer)| {
            let answer = answer.unwrap_or_else(|| {
                Err(LlmError::InvalidRequest(
                    "the call's task ended without an answer".into(),
                ))
            });
            (turns, answer)
        })
        .collect())
}

/// One answer read, redacted and checked; kept or the reason why not.
async fn decide(
    job: &JobRow,
    conversation_id: i64,
    turns: &[Turn],
    answer: &str,
    redactor: &mut Redactor,
    environment: &dyn Environment,
    kept: &mut DedupIndex,
) -> Result<Mined, (Rejection, String)> {
    let id = format!("mined-{}-{conversation_id}", job.id);
    let mined = read_answer(answer, &id).map_err(|reason| (Rejection::Unparseable, reason))?;
    let mined = redact_mined(mined, redactor).map_err(|reason| (Rejection::Format, reason))?;
    let problems = format_problems(&mined);
    if !problems.is_empty() {
        return Err((Rejection::Format, problems.join("; ")));
    }
    let problems = environment_problems(&mined.scenario, environment).await;
    if !problems.is_empty() {
        return Err((Rejection::Environment, problems.join("; ")));
    }
    let agent_said: Vec<&str> = turns
        .iter()
        .filter(|t| t.speaker == "agent")
        .map(|t| t.text.as_str())
        .collect();
    let unshown = unshown_facts(&mined.scenario, &agent_said.join("\n"));
    if !unshown.is_empty() {
        return Err((
            Rejection::UnshownFact,
            format!(
                "facts to communicate that no agent turn says: {}",
                unshown.join(", ")
            ),
        ));
    }
    if let Some(repeat) = kept.check(&mined.scenario) {
        return Err((
            Rejection::Duplicate,
            format!(
                "repeats scenario {} (goal similarity {:.2})",
                repeat.of, repeat.similarity
            ),
        ));
    }
    kept.insert(&mined.scenario);
    Ok(mined)
}

/// The model's scenario and persona with every private value it wrote
/// replaced (their ids are ours and stay).
fn redact_mined(mined: Mined, redactor: &mut Redactor) -> Result<Mined, String> {
    let id = mined.scenario.id.clone();
    let redo =
        |value: serde_json::Value, redactor: &mut Redactor| redactor.redact_answer_json(&value);
    let scenario = serde_json::to_value(&mined.scenario).map_err(|e| e.to_string())?;
    let persona = serde_json::to_value(&mined.persona).map_err(|e| e.to_string())?;
    let mut scenario: Scenario =
        serde_json::from_value(redo(scenario, redactor)).map_err(|e| e.to_string())?;
    let mut persona: Persona =
        serde_json::from_value(redo(persona, redactor)).map_err(|e| e.to_string())?;
    scenario.id.clone_from(&id);
    persona.id = id;
    Ok(Mined { scenario, persona })
}
