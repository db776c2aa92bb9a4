//! Looking at the job's batches not yet ingested, each from where it is:
//! unsent (upload it), uploaded (find the batch made of the file, or create
//! it), created (read its status; once it is final, ingest its files).

use crate::llm::batch::BatchError;
use crate::store::{BatchRow, BatchUpdate};

use super::super::super::error::RunError;
use super::BatchPhase;

/// What one look at the batches did.
#[derive(Debug, Default)]
pub(super) struct Polled {
    /// Batch API calls that failed (tried again at the next poll).
    pub errors: Vec<BatchError>,
    /// Batches whose answers were stored by this look.
    pub ingested: u64,
}

impl BatchPhase<'_> {
    pub(super) async fn poll_all(&self) -> Result<Polled, RunError> {
        let mut polled = Polled::default();
        for row in self.store.job_batches(self.job_id).await? {
            if row.status == "ingested" {
                continue;
            }
            match self.advance(&row).await {
                Ok(ingested) => polled.ingested += u64::from(ingested),
                Err(RunError::Batch(e)) => polled.errors.push(e),
                Err(other) => return Err(other),
            }
        }
        Ok(polled)
    }

    /// Move one batch on; `true` when it was ingested.
    async fn advance(&self, row: &BatchRow) -> Result<bool, RunError> {
        let Some(endpoint) = self.endpoints.get(&row.endpoint) else {
            // Its endpoint is no longer a batch endpoint of the judges: leave it.
            return Ok(false);
        };
        if row.batch_id.is_none() && !self.may_send(row.id) {
            // Another process is sending it.
            return Ok(false);
        }
        let Some(file_id) = &row.input_file_id else {
            let file = self.render_again(row).await?;
            self.upload_and_create(endpoint, row.id, file).await?;
            return Ok(false);
        };
        let Some(batch_id) = &row.batch_id else {
            match endpoint.client.find_by_input_file(file_id).await? {
                Some(found) => {
                    self.store
                        .update_batch(
                            row.id,
                            &BatchUpdate {
                                batch_id: Some(found.id),
                                status: Some(found.status),
                                ..BatchUpdate::default()
                            },
                        )
                        .await?
                }
                None => self.create(endpoint, row.id, file_id).await?,
            }
            return Ok(false);
        };
        let batch = endpoint.client.get(batch_id).await?;
        self.store
            .update_batch(
                row.id,
                &BatchUpdate {
                    output_file_id: batch.output_file_id.clone(),
                    error_file_id: batch.error_file_id.clone(),
                    status: Some(batch.status.clone()),
                    ..BatchUpdate::default()
                },
            )
            .await?;
        if !batch.status().is_terminal() {
            return Ok(false);
        }
        self.ingest(endpoint, row, &batch).await?;
        Ok(true)
    }
}
