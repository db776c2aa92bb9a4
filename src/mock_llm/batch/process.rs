//! A batch moving on when it is read: `validating` becomes `in_progress`;
//! once the completion delay has passed, its requests are answered by the
//! mock's own chat-completions route and it ends `completed`, `expired`
//! (half answered) or `cancelled` (nothing answered), as the config says.

use std::sync::Arc;
use std::time::SystemTime;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::HeaderMap;
use serde_json::json;

use super::super::behaviour::stable_hash;
use super::super::server::{chat_completions, MockState};
use super::{config, lock, Request};

pub fn unix_second() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
}

/// Whether the config fails this request, and how: `Some(true)` as an
/// error-file line, `Some(false)` as a 500 in the output file.
fn drawn_failure(custom_id: &str, share: f64) -> Option<bool> {
    let h = stable_hash(&[b"batch-fail", custom_id.as_bytes()]);
    let draw = (h % 1_000_000) as f64 / 1_000_000.0;
    (draw < share).then_some(h & (1 << 40) != 0)
}

/// What a batch came to: its output and error lines and counts.
#[derive(Default)]
struct Answered {
    output: Vec<String>,
    errors: Vec<String>,
    completed: u64,
    failed: u64,
}

async fn answer_all(state: &Arc<MockState>, requests: Vec<Request>, share: f64) -> Answered {
    let mut out = Answered::default();
    for (n, r) in requests.into_iter().enumerate() {
        let line_id = format!("batch_req_mock{n}");
        match drawn_failure(&r.custom_id, share) {
            Some(true) => {
                out.failed += 1;
                out.errors.push(json!({
                    "id": line_id, "custom_id": r.custom_id, "response": null,
                    "error": {"code": "server_error", "message": "the mock failed this request (batch fail share)"},
                }).to_string());
                continue;
            }
            Some(false) => {
                out.failed += 1;
                out.output.push(json!({
                    "id": line_id, "custom_id": r.custom_id,
                    "response": {"status_code": 500, "request_id": line_id,
                                 "body": {"error": {"message": "the mock failed this request (batch fail share)", "type": "server_error"}}},
                    "error": null,
                }).to_string());
                continue;
            }
            None => {}
        }
        let response = chat_completions(
            State(state.clone()),
            axum::http::Version::HTTP_11,
            HeaderMap::new(),
            Bytes::from(r.body.to_string()),
        )
        .await;
        let status = response.status().as_u16();
        let body = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .ok()
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
            .unwrap_or(serde_json::Value::Null);
        if status == 200 {
            out.completed += 1;
        } else {
            out.failed += 1;
        }
        out.output.push(
            json!({
                "id": line_id, "custom_id": r.custom_id,
                "response": {"status_code": status, "request_id": line_id, "body": body},
                "error": null,
            })
            .to_string(),
        );
    }
    out
}

/// Move batch `id` on and describe it; `None` when there is no such batch.
pub(super) async fn advance(state: &Arc<MockState>, id: &str) -> Option<serde_json::Value> {
    let cfg = config(state).clone();
    let (requests, final_status) = {
        let mut inner = lock(state);
        let batch = inner.batches.iter_mut().find(|b| b.id == id)?;
        if batch.status == "validating" {
            batch.status = "in_progress".into();
        }
        if batch.status == "cancelling" {
            batch.status = "cancelled".into();
            batch.requests.clear();
        }
        if batch.status != "in_progress" || batch.created.elapsed() < cfg.batch_completion_delay() {
            return Some(batch.object());
        }
        if cfg.batch_cancel.contains(&batch.number) {
            batch.status = "cancelled".into();
            batch.requests.clear();
            return Some(batch.object());
        }
        let mut requests = std::mem::take(&mut batch.requests);
        let status = if cfg.batch_expire.contains(&batch.number) {
            requests.truncate(requests.len() / 2);
            "expired"
        } else {
            "completed"
        };
        batch.status = "finalizing".into();
        (requests, status)
    };
    let answered = answer_all(state, requests, cfg.batch_fail_share).await;
    let mut inner = lock(state);
    let mut file = |lines: &[String]| {
        if lines.is_empty() {
            return None;
        }
        inner.next_file += 1;
        let file_id = format!("file-mock{}", inner.next_file);
        let mut bytes = lines.join("\n").into_bytes();
        bytes.push(b'\n');
        inner.files.insert(file_id.clone(), Arc::new(bytes));
        Some(file_id)
    };
    let output_file_id = file(&answered.output);
    let error_file_id = file(&answered.errors);
    let batch = inner.batches.iter_mut().find(|b| b.id == id)?;
    batch.output_file_id = output_file_id;
    batch.error_file_id = error_file_id;
    batch.completed = answered.completed;
    batch.failed = answered.failed;
    batch.status = final_status.into();
    Some(batch.object())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_failure_draw_follows_the_share_and_the_custom_id() {
        let ids: Vec<String> = (0..2000).map(|i| format!("j-{i}-1")).collect();
        let failed = ids
            .iter()
            .filter(|id| drawn_failure(id, 0.2).is_some())
            .count();
        assert!((300..500).contains(&failed), "{failed} of 2000 at 0.2");
        assert!(ids.iter().all(|id| drawn_failure(id, 0.0).is_none()));
        assert!(ids.iter().all(|id| drawn_failure(id, 1.0).is_some()));
        assert_eq!(drawn_failure("x-1", 0.5), drawn_failure("x-1", 0.5));
        let as_error_lines = ids
            .iter()
            .filter(|id| drawn_failure(id, 1.0) == Some(true))
            .count();
        assert!((800..1200).contains(&as_error_lines), "{as_error_lines}");
    }
}
