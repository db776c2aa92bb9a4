//! A batch as the Batch API describes it.

use serde::Deserialize;

/// Where a batch is. Unknown statuses are kept by name and treated as not
/// finished, so a new status never ends a batch early.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BatchStatus {
    Validating,
    InProgress,
    Finalizing,
    Completed,
    Failed,
    Expired,
    Cancelling,
    Cancelled,
    Other(String),
}

impl BatchStatus {
    pub fn parse(s: &str) -> BatchStatus {
        match s {
            "validating" => BatchStatus::Validating,
            "in_progress" => BatchStatus::InProgress,
            "finalizing" => BatchStatus::Finalizing,
            "completed" => BatchStatus::Completed,
            "failed" => BatchStatus::Failed,
            "expired" => BatchStatus::Expired,
            "cancelling" => BatchStatus::Cancelling,
            "cancelled" => BatchStatus::Cancelled,
            other => BatchStatus::Other(other.to_string()),
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            BatchStatus::Validating => "validating",
            BatchStatus::InProgress => "in_progress",
            BatchStatus::Finalizing => "finalizing",
            BatchStatus::Completed => "completed",
            BatchStatus::Failed => "failed",
            BatchStatus::Expired => "expired",
            BatchStatus::Cancelling => "cancelling",
            BatchStatus::Cancelled => "cancelled",
            BatchStatus::Other(s) => s,
        }
    }

    /// Whether the batch will change no more: its files can be read, and
    /// what they do not answer was not answered.
    pub fn is_terminal(&self) -> bool {
        matches!(
            self,
            BatchStatus::Completed
                | BatchStatus::Failed
                | BatchStatus::Expired
                | BatchStatus::Cancelled
        )
    }
}

/// `request_counts` of a batch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
pub struct RequestCounts {
    #[serde(default)]
    pub total: u64,
    #[serde(default)]
    pub completed: u64,
    #[serde(default)]
    pub failed: u64,
}

/// The fields of a batch object sparring reads.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct BatchObject {
    pub id: String,
    pub status: String,
    #[serde(default)]
    pub input_file_id: Option<String>,
    #[serde(default)]
    pub output_file_id: Option<String>,
    #[serde(default)]
    pub error_file_id: Option<String>,
    #[serde(default)]
    pub request_counts: Option<RequestCounts>,
    /// Why a batch failed validation: `{"data": [{"code", "message", "line"}]}`.
    #[serde(default)]
    pub errors: Option<serde_json::Value>,
}

impl BatchObject {
    pub fn status(&self) -> BatchStatus {
        BatchStatus::parse(&self.status)
    }

    /// The first of `errors`, as `code: message (line N)`.
    pub fn first_error(&self) -> Option<String> {
        let first = self.errors.as_ref()?.get("data")?.get(0)?;
        let text = |key: &str| first.get(key).and_then(|v| v.as_str()).unwrap_or("");
        let line = first
            .get("line")
            .and_then(serde_json::Value::as_u64)
            .map_or(String::new(), |n| format!(" (line {n})"));
        Some(format!("{}: {}{line}", text("code"), text("message")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_four_final_statuses_are_terminal_and_names_round_trip() {
        for name in [
            "validating",
            "in_progress",
            "finalizing",
            "completed",
            "failed",
            "expired",
            "cancelling",
            "cancelled",
            "paused",
        ] {
            let status = BatchStatus::parse(name);
            assert_eq!(status.as_str(), name);
            assert_eq!(
                status.is_terminal(),
                matches!(name, "completed" | "failed" | "expired" | "cancelled"),
                "{name}"
            );
        }
    }

    #[test]
    fn a_batch_object_reads_with_missing_optional_fields() {
        let b: BatchObject = serde_json::from_str(
            r#"{"id":"batch_1","object":"batch","status":"in_progress","output_file_id":null,
                "request_counts":{"total":3,"completed":1,"failed":0}}"#,
        )
        .unwrap();
        assert_eq!(b.status(), BatchStatus::InProgress);
        assert_eq!(b.request_counts.unwrap().completed, 1);
        assert_eq!(b.output_file_id, None);
        assert_eq!(b.first_error(), None);
    }

    #[test]
    fn a_failed_batch_says_its_first_error() {
        let b: BatchObject = serde_json::from_str(
            r#"{"id":"b","status":"failed","errors":{"object":"list","data":[
                {"code":"duplicate_custom_id","message":"used twice","line":3,"param":null}]}}"#,
        )
        .unwrap();
        assert_eq!(
            b.first_error().as_deref(),
            Some("duplicate_custom_id: used twice (line 3)")
        );
    }
}
