//! Sending planned requests: each batch file's requests are stored with their
//! batch first, then the file is uploaded and its id stored, then the batch
//! is created and its id stored. A run stopped between two steps resumes at
//! the next (see `poll`).

use std::collections::BTreeMap;

use crate::llm::batch::{file_bytes, split_files, BatchError, MAX_FILE_BYTES};
use crate::store::{BatchRow, BatchUpdate};

use super::super::super::error::RunError;
use super::plan::Planned;
use super::{BatchEndpoint, BatchPhase};

impl BatchPhase<'_> {
    /// Store and send `planned`, split per endpoint into files within the
    /// limits. Returns how many requests were sent.
    pub(super) async fn send_planned(&self, planned: Vec<Planned>) -> Result<u64, RunError> {
        let mut by_endpoint: BTreeMap<String, Vec<Planned>> = BTreeMap::new();
        for p in planned {
            by_endpoint.entry(p.endpoint.clone()).or_default().push(p);
        }
        let mut sent = 0;
        for (name, planned) in by_endpoint {
            let Some(endpoint) = self.endpoints.get(&name) else {
                continue;
            };
            let lines = planned.into_iter().map(|p| (p.request, p.line)).collect();
            let files = split_files(
                lines,
                endpoint.settings.max_requests as usize,
                MAX_FILE_BYTES,
            );
            for file in files {
                let requests: Vec<_> = file.iter().map(|(r, _)| r.clone()).collect();
                let Some((id, stored)) = self
                    .store
                    .create_batch(self.job_id, &name, &requests)
                    .await?
                else {
                    continue;
                };
                self.adopt([id]);
                let lines: Vec<((), String)> = file
                    .into_iter()
                    .filter(|(r, _)| stored.contains(&r.custom_id))
                    .map(|(_, line)| ((), line))
                    .collect();
                sent += lines.len() as u64;
                // A failure here leaves the batch stored, unsent: the next
                // poll uploads it again (nothing of it reached a batch).
                let file = (file_bytes(&lines), lines.len() as u64);
                if let Err(e) = self.upload_and_create(endpoint, id, file).await {
                    match e {
                        RunError::Batch(e) => tracing::warn!(
                            job_id = self.job_id,
                            "batch: {e}; trying again at the next poll"
                        ),
                        other => return Err(other),
                    }
                }
            }
        }
        Ok(sent)
    }

    /// Upload a stored batch's file of `requests` lines, store its id,
    /// create the batch.
    pub(super) async fn upload_and_create(
        &self,
        endpoint: &BatchEndpoint,
        id: i64,
        (file, requests): (Vec<u8>, u64),
    ) -> Result<(), RunError> {
        let filename = format!("sparring-job{}-batch{id}.jsonl", self.job_id);
        let file_id = endpoint.client.upload(&filename, file).await?;
        self.sent
            .fetch_add(requests, std::sync::atomic::Ordering::Relaxed);
        self.store
            .update_batch(
                id,
                &BatchUpdate {
                    input_file_id: Some(file_id.clone()),
                    status: Some("uploaded".into()),
                    ..BatchUpdate::default()
                },
            )
            .await?;
        self.create(endpoint, id, &file_id).await
    }

    /// Create the batch of an uploaded file and store its id.
    pub(super) async fn create(
        &self,
        endpoint: &BatchEndpoint,
        id: i64,
        file_id: &str,
    ) -> Result<(), RunError> {
        let batch = endpoint.client.create(file_id).await?;
        self.store
            .update_batch(
                id,
                &BatchUpdate {
                    batch_id: Some(batch.id.clone()),
                    status: Some(batch.status.clone()),
                    ..BatchUpdate::default()
                },
            )
            .await?;
        Ok(())
    }

    /// The file of a stored batch that was never uploaded (the run stopped
    /// first), rendered again from its requests.
    pub(super) async fn render_again(&self, row: &BatchRow) -> Result<(Vec<u8>, u64), RunError> {
        let Some(endpoint) = self.endpoints.get(&row.endpoint) else {
            return Ok((Vec::new(), 0));
        };
        let requests = self.store.batch_requests_of_job(self.job_id).await?;
        let mut lines = Vec::new();
        for r in requests.iter().filter(|r| r.batch == row.id) {
            let r = &r.request;
            let key =
                super::super::plan::item_key(&r.judge_name, r.conversation_a, r.conversation_b);
            let Ok(prepared) = self.runner.prepare(&key).await else {
                continue;
            };
            let Some(order) = crate::judge::Order::parse(&r.order) else {
                continue;
            };
            let Ok((_, request)) = crate::judge::call_request(
                prepared.judge,
                &prepared.inputs(),
                order,
                u32::try_from(r.sample).unwrap_or(0),
            ) else {
                continue;
            };
            let line = crate::llm::batch::request_line(
                &r.custom_id,
                &super::plan::body(endpoint, &request),
            )
            .map_err(|e| BatchError::Malformed {
                what: "write the batch file",
                message: e.to_string(),
            })?;
            lines.push(((), line));
        }
        Ok((file_bytes(&lines), lines.len() as u64))
    }
}
