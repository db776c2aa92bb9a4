//! What a failure of an MCP server reached over HTTP may say: a short status
//! line of sparring's own words (`answered HTTP 404`, `its reply is not an
//! MCP message`), never what the server sent. A `url` in a submitted job can
//! name any HTTP service the server can reach; rmcp's messages quote a body
//! that is not JSON-RPC (`unrecognized JSON-RPC message: {…}`), so the
//! service would read that body back to whoever submitted the job.
//!
//! A server sparring started itself (stdio) is the operator's own program, so
//! its errors are shown in full: this module is for `url` servers only.

use std::error::Error;

use rmcp::service::{ClientInitializeError, ServiceError};
use rmcp::transport::streamable_http_client::{HttpStatusError, StreamableHttpError};

type HttpError = StreamableHttpError<reqwest::Error>;

/// Why `initialize` failed, without anything the server sent.
pub fn initialize_failure(e: &ClientInitializeError) -> String {
    match e {
        ClientInitializeError::TransportError { error, .. } => {
            transport_failure(error.error.as_ref())
        }
        ClientInitializeError::JsonRpcError(data) => {
            format!("refused `initialize` (JSON-RPC error {})", data.code.0)
        }
        ClientInitializeError::ConnectionClosed(_) => {
            "closed the connection before answering `initialize`".to_string()
        }
        ClientInitializeError::NoCompatibleProtocolVersion { .. } => {
            "speaks no MCP protocol version sparring speaks".to_string()
        }
        _ => "did not answer `initialize` as an MCP server does".to_string(),
    }
}

/// Why a request after `initialize` failed (a JSON-RPC error of a tool call
/// is an answer, not a failure, and is not handled here).
pub fn request_failure(e: &ServiceError) -> String {
    match e {
        ServiceError::TransportSend(error) => transport_failure(error.error.as_ref()),
        ServiceError::TransportClosed => "closed the connection".to_string(),
        ServiceError::UnexpectedResponse => {
            "answered with a message that does not answer the request".to_string()
        }
        ServiceError::Timeout { .. } => "did not answer in time".to_string(),
        ServiceError::McpError(error) => format!("answered JSON-RPC error {}", error.code.0),
        _ => "failed".to_string(),
    }
}

/// The transport's error, found in the chain of sources, as a status line.
fn transport_failure(error: &(dyn Error + Send + Sync + 'static)) -> String {
    let mut current: Option<&(dyn Error + 'static)> = Some(error);
    while let Some(e) = current {
        if let Some(http) = e.downcast_ref::<HttpError>() {
            return http_failure(http);
        }
        if let Some(status) = e.downcast_ref::<HttpStatusError>() {
            return format!("answered HTTP {}", status.status);
        }
        if let Some(client) = e.downcast_ref::<reqwest::Error>() {
            return client_failure(client);
        }
        current = e.source();
    }
    "failed to exchange MCP messages over streamable HTTP".to_string()
}

fn http_failure(e: &HttpError) -> String {
    let line = match e {
        StreamableHttpError::HttpStatus(status) => {
            return format!("answered HTTP {}", status.status)
        }
        StreamableHttpError::Client(client) => return client_failure(client),
        StreamableHttpError::AuthRequired(_) => "asks for authorization (HTTP 401)",
        StreamableHttpError::InsufficientScope(_) => "refused the request (HTTP 403)",
        StreamableHttpError::SessionExpired => "ended the MCP session (HTTP 404)",
        StreamableHttpError::UnexpectedContentType(_) => {
            "answered with a content type that is neither JSON nor server-sent events, so it is \
             not a streamable-HTTP MCP endpoint"
        }
        StreamableHttpError::UnexpectedServerResponse(_) | StreamableHttpError::Deserialize(_) => {
            "answered with a body that is not an MCP (JSON-RPC) message, so it is not a \
             streamable-HTTP MCP endpoint"
        }
        StreamableHttpError::ResponseBodyTooLarge { .. } => "answered with a body too large",
        StreamableHttpError::Sse(_) | StreamableHttpError::UnexpectedEndOfStream => {
            "sent a broken event stream"
        }
        StreamableHttpError::MissingSessionIdInResponse => "gave no MCP session id",
        StreamableHttpError::Io(_) | StreamableHttpError::TransportChannelClosed => {
            "closed the connection"
        }
        _ => "failed to exchange MCP messages over streamable HTTP",
    };
    line.to_string()
}

fn client_failure(e: &reqwest::Error) -> String {
    if let Some(status) = e.status() {
        format!("answered HTTP {}", status.as_u16())
    } else if e.is_timeout() {
        "did not answer in time".to_string()
    } else if e.is_connect() {
        "cannot be connected to".to_string()
    } else if e.is_body() || e.is_decode() {
        "sent a reply that could not be read".to_string()
    } else {
        "could not be reached over HTTP".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::ErrorData;

    #[test]
    fn a_body_the_server_sent_is_never_part_of_the_line() {
        let secret = "{\"db_password\": \"hunter2\"}";
        let body = HttpError::UnexpectedServerResponse(format!("expect json, got {secret}").into());
        let dynamic = rmcp::transport::DynamicTransportError::from_parts(
            "streamable-http",
            std::any::TypeId::of::<()>(),
            Box::new(body),
        );
        let init = ClientInitializeError::TransportError {
            error: dynamic,
            context: "send initialize request".into(),
        };
        let line = initialize_failure(&init);
        assert!(!line.contains("hunter2"), "{line}");
        assert!(line.contains("not an MCP (JSON-RPC) message"), "{line}");
        let refused = ClientInitializeError::JsonRpcError(ErrorData::internal_error(
            "hunter2".to_string(),
            None,
        ));
        let line = initialize_failure(&refused);
        assert!(
            !line.contains("hunter2") && line.contains("-32603"),
            "{line}"
        );
    }
}
