//! Why a job, of any kind, could not be submitted or worked.

use crate::config::Problem;
use crate::store::StoreError;

use super::models::ModelsError;

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("the job's inputs have problems")]
    Invalid(Vec<Problem>),
    #[error(
        "job '{name}' (id {id}) already exists with a different config or dataset (stored hash {stored}…, now {now}…). \
         Run with --new-job to start a new job from this config, or `sparring run --resume {id}` to finish the old one as it was"
    )]
    ConfigChanged {
        name: String,
        id: i64,
        stored: String,
        now: String,
    },
    #[error("job {0} is not in the database")]
    NoSuchJob(i64),
    #[error(
        "job {id} '{name}' is an import job: its conversations are stored as they are read, so          there is nothing to work; `sparring import FILE… --name '{name}'` adds what is missing"
    )]
    NothingToWork { id: i64, name: String },
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Models(#[from] ModelsError),
    #[error("the Batch API: {0}")]
    Batch(#[from] crate::llm::batch::BatchError),
}
