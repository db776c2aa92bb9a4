//! Storing what a finished batch answered: each 200 answer becomes its judge
//! call (read as a synchronous call's output is); an error line, a non-200
//! status, or no line at all (an expired, failed or cancelled batch) is a
//! failed request, sent again by the next plan unless it used up its
//! attempts, when its failed call is stored and its judgment fails.

use std::collections::HashMap;

use crate::jsonl::JsonlReader;
use crate::judge::{answered_call, JudgeCall, Order};
use crate::llm::batch::{parse_line, BatchObject, LineOutcome};
use crate::store::{BatchAnswer, BatchRequestRow, BatchRow};

use super::super::super::error::RunError;
use super::super::super::judge_calls::from_call;
use super::super::plan::item_key;
use super::{BatchEndpoint, BatchPhase};

impl BatchPhase<'_> {
    pub(super) async fn ingest(
        &self,
        endpoint: &BatchEndpoint,
        row: &BatchRow,
        batch: &BatchObject,
    ) -> Result<(), RunError> {
        let mut lines: HashMap<String, LineOutcome> = HashMap::new();
        for file_id in [&batch.output_file_id, &batch.error_file_id]
            .into_iter()
            .flatten()
        {
            let content = endpoint.client.content(file_id).await?;
            let mut reader = JsonlReader::new(content.as_bytes());
            while let Some(next) = reader.next_line() {
                match next.map_err(|e| e.to_string()).and_then(|(n, line)| {
                    parse_line(line).map_err(|why| format!("line {n}: {why}"))
                }) {
                    Ok(read) => {
                        lines.insert(read.custom_id, read.outcome);
                    }
                    Err(why) => tracing::warn!(
                        job_id = self.job_id,
                        "batch {}: file {file_id}, {why}; skipped",
                        batch.id,
                    ),
                }
            }
        }
        let requests = self.store.batch_requests_of_job(self.job_id).await?;
        let mut answers = Vec::new();
        for request in requests
            .iter()
            .filter(|r| r.batch == row.id && r.status == "submitted")
        {
            let outcome = lines.remove(&request.request.custom_id);
            answers.push(self.answer(endpoint, request, outcome, batch).await);
        }
        self.store.ingest_batch(row.id, &answers).await?;
        Ok(())
    }

    async fn answer(
        &self,
        endpoint: &BatchEndpoint,
        stored: &BatchRequestRow,
        outcome: Option<LineOutcome>,
        batch: &BatchObject,
    ) -> BatchAnswer {
        let r = &stored.request;
        let order = Order::parse(&r.order).unwrap_or(Order::Single);
        let sample = u32::try_from(r.sample).unwrap_or(0);
        let mut blank = JudgeCall::unanswered(
            order,
            sample,
            &r.prompt_hash,
            &endpoint.config.settings.model,
        );
        blank.batch = true;
        let failure = match outcome {
            Some(LineOutcome::Answered { content, usage }) => {
                let key = item_key(&r.judge_name, r.conversation_a, r.conversation_b);
                match self.runner.prepare(&key).await {
                    Ok(prepared) => {
                        let call = answered_call(
                            prepared.judge,
                            &prepared.inputs(),
                            blank,
                            &content,
                            usage,
                        );
                        return BatchAnswer {
                            custom_id: r.custom_id.clone(),
                            status: "answered".into(),
                            error: None,
                            call: Some(from_call(&call)),
                        };
                    }
                    Err(_) => {
                        format!("batch_unreadable: the answer cannot be read: item {key} is gone")
                    }
                }
            }
            Some(LineOutcome::Failed(why)) => why,
            None => format!(
                "batch_unanswered: batch {} ended {} without answering it{}",
                batch.id,
                batch.status,
                batch
                    .first_error()
                    .map_or(String::new(), |e| format!(": {e}"))
            ),
        };
        let last = r.attempt >= i64::from(endpoint.settings.max_attempts);
        let call = last.then(|| {
            let mut call = blank;
            call.error = Some(format!(
                "{failure} (attempt {} of {})",
                r.attempt, endpoint.settings.max_attempts
            ));
            from_call(&call)
        });
        BatchAnswer {
            custom_id: r.custom_id.clone(),
            status: "failed".into(),
            error: Some(failure),
            call,
        }
    }
}
