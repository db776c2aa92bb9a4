//! The HTTP of the Batch API: upload a request file, create, find and read
//! a batch, download a file's content. Nothing here retries (see
//! [`BatchError`]).

use std::time::Duration;

use serde::Deserialize;

use super::error::BatchError;
use super::status::BatchObject;
use crate::config::EndpointConfig;
use crate::llm::transport::http_client::client_for;

/// Every step waits at most this long (an upload of a 200 MB file included).
const STEP_TIMEOUT: Duration = Duration::from_secs(600);
/// The multipart boundary: a JSONL file holds no `\r`, so `\r\n--` and this
/// never occur inside it.
const BOUNDARY: &str = "sparring-batch-file-boundary-7f3a9c";

/// A client of one endpoint's Batch API.
#[derive(Clone)]
pub struct BatchClient {
    // The transport's shared client (llm::transport::http_client): batch
    // steps are file transfers and polls, not model calls, so llm::retry's
    // policy does not apply; a failed step is tried again at the next poll.
    #[allow(clippy::disallowed_types)]
    http: reqwest::Client,
    /// `http://HOST:PORT/v1`: paths are appended to it.
    base_url: String,
    api_key: Option<String>,
}

#[derive(Deserialize)]
struct FileObject {
    id: String,
}

#[derive(Deserialize)]
struct BatchList {
    #[serde(default)]
    data: Vec<BatchObject>,
    #[serde(default)]
    has_more: bool,
}

impl BatchClient {
    /// The client of `config`'s server at `base_url` (its URL, or the mock's).
    pub fn new(config: &EndpointConfig, base_url: &str) -> Result<BatchClient, BatchError> {
        let http = client_for(config.settings.http2, config.ca_pem.as_deref()).map_err(|e| {
            BatchError::Connection {
                what: "HTTP client",
                message: e.to_string(),
            }
        })?;
        Ok(BatchClient {
            http,
            base_url: base_url.trim_end_matches('/').to_string(),
            api_key: config.api_key.clone(),
        })
    }

    fn request(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        let builder = self
            .http
            .request(method, format!("{}{path}", self.base_url))
            .timeout(STEP_TIMEOUT);
        match &self.api_key {
            Some(key) => builder.bearer_auth(key),
            None => builder,
        }
    }

    async fn send(
        what: &'static str,
        builder: reqwest::RequestBuilder,
    ) -> Result<Vec<u8>, BatchError> {
        let response = builder.send().await.map_err(|e| BatchError::Connection {
            what,
            message: crate::error_chain::error_chain(&e),
        })?;
        let status = response.status();
        let body = response.bytes().await.map_err(|e| BatchError::Connection {
            what,
            message: crate::error_chain::error_chain(&e),
        })?;
        if !status.is_success() {
            let text = String::from_utf8_lossy(&body);
            let message = serde_json::from_slice::<serde_json::Value>(&body)
                .ok()
                .and_then(|v| {
                    v.pointer("/error/message")
                        .and_then(|m| m.as_str())
                        .map(str::to_string)
                })
                .unwrap_or_else(|| text.chars().take(300).collect());
            return Err(BatchError::Status {
                what,
                status: status.as_u16(),
                message,
            });
        }
        Ok(body.to_vec())
    }

    fn read<T: serde::de::DeserializeOwned>(
        what: &'static str,
        body: &[u8],
    ) -> Result<T, BatchError> {
        serde_json::from_slice(body).map_err(|e| BatchError::Malformed {
            what,
            message: e.to_string(),
        })
    }

    /// `POST /files` (multipart, purpose `batch`): the file's id.
    pub async fn upload(&self, filename: &str, content: Vec<u8>) -> Result<String, BatchError> {
        let mut body = Vec::with_capacity(content.len() + 400);
        body.extend_from_slice(
            format!(
                "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\nbatch\r\n\
                 --{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{filename}\"\r\n\
                 Content-Type: application/jsonl\r\n\r\n"
            )
            .as_bytes(),
        );
        body.extend_from_slice(&content);
        body.extend_from_slice(format!("\r\n--{BOUNDARY}--\r\n").as_bytes());
        let builder = self
            .request(reqwest::Method::POST, "/files")
            .header(
                reqwest::header::CONTENT_TYPE,
                format!("multipart/form-data; boundary={BOUNDARY}"),
            )
            .body(body);
        let answer = Self::send("upload the batch file", builder).await?;
        Ok(Self::read::<FileObject>("upload the batch file", &answer)?.id)
    }

    /// `POST /batches` over an uploaded file, for chat completions, 24 h.
    pub async fn create(&self, input_file_id: &str) -> Result<BatchObject, BatchError> {
        let builder = self
            .request(reqwest::Method::POST, "/batches")
            .json(&serde_json::json!({
                "input_file_id": input_file_id,
                "endpoint": "/v1/chat/completions",
                "completion_window": "24h",
                "metadata": {"made_by": "sparring"},
            }));
        let answer = Self::send("create the batch", builder).await?;
        Self::read("create the batch", &answer)
    }

    /// `GET /batches/{id}`.
    pub async fn get(&self, batch_id: &str) -> Result<BatchObject, BatchError> {
        let builder = self.request(reqwest::Method::GET, &format!("/batches/{batch_id}"));
        let answer = Self::send("read the batch", builder).await?;
        Self::read("read the batch", &answer)
    }

    /// The batch made of `input_file_id`, if any (`GET /batches`, newest
    /// first, page by page): a job stopped between creating a batch and
    /// storing its id finds it here instead of creating another.
    pub async fn find_by_input_file(
        &self,
        input_file_id: &str,
    ) -> Result<Option<BatchObject>, BatchError> {
        let mut after: Option<String> = None;
        // At most 100 pages of 100: the batches of the last days.
        for _ in 0..100 {
            let path = match &after {
                Some(id) => format!("/batches?limit=100&after={id}"),
                None => "/batches?limit=100".to_string(),
            };
            let answer = Self::send(
                "list the batches",
                self.request(reqwest::Method::GET, &path),
            )
            .await?;
            let list: BatchList = Self::read("list the batches", &answer)?;
            if let Some(found) = list
                .data
                .iter()
                .find(|b| b.input_file_id.as_deref() == Some(input_file_id))
            {
                return Ok(Some(found.clone()));
            }
            match list.data.last() {
                Some(last) if list.has_more => after = Some(last.id.clone()),
                _ => return Ok(None),
            }
        }
        Ok(None)
    }

    /// `GET /files/{id}/content`, as text.
    pub async fn content(&self, file_id: &str) -> Result<String, BatchError> {
        let builder = self.request(reqwest::Method::GET, &format!("/files/{file_id}/content"));
        let answer = Self::send("download a batch file", builder).await?;
        String::from_utf8(answer).map_err(|e| BatchError::Malformed {
            what: "download a batch file",
            message: e.to_string(),
        })
    }
}
