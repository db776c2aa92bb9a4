//! Work a request does on files it names (a submitted config, the
//! scenarios, templates and tables it points at, the files of an import)
//! runs on tokio's blocking threads, never on the async workers that answer
//! every other request (`/healthz` included). Each such read opens only a
//! regular file without waiting (`crate::regular_file`), and the request's
//! deadline (the service's timeout layer) ends the request if the work takes
//! longer, whatever the thread is doing.

use std::future::Future;

use super::ApiError;

/// `work` driven to its end on a blocking thread.
pub async fn off_the_workers<T, F>(work: F) -> Result<T, ApiError>
where
    F: Future<Output = Result<T, ApiError>> + Send + 'static,
    T: Send + 'static,
{
    let runtime = tokio::runtime::Handle::current();
    tokio::task::spawn_blocking(move || runtime.block_on(work))
        .await
        .map_err(|e| ApiError::Internal(format!("a request's file work stopped: {e}")))?
}
