//! The OpenAI Batch API: a JSONL file of chat-completion requests is
//! uploaded (`POST /v1/files`, purpose `batch`), a batch is made of it
//! (`POST /v1/batches`, 24 h window), polled (`GET /v1/batches/{id}`), and
//! its output and error files are read (`GET /v1/files/{id}/content`).
//!
//! `request_file` writes the request lines and splits them into files within
//! the API's limits, `output` reads the answer and error lines, `client`
//! speaks the HTTP, `status` is a batch as the API describes it. What is sent
//! and what becomes of the answers is the judging job's (`jobs::judging`).

pub mod client;
pub mod error;
pub mod output;
pub mod request_file;
pub mod status;

pub use client::BatchClient;
pub use error::BatchError;
pub use output::{parse_line, LineOutcome, OutputLine};
pub use request_file::{
    file_bytes, request_line, split_files, MAX_FILE_BYTES, MAX_REQUESTS_PER_FILE,
};
pub use status::{BatchObject, BatchStatus, RequestCounts};
