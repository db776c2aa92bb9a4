//! Logs: `tracing` to stderr, filtered by `SPARRING_LOG` (or `RUST_LOG`), e.g.
//! `sparring=debug` for the tree of job, item and model-call spans; as text,
//! or one JSON object per line with `SPARRING_LOG_FORMAT=json`.

use tracing_subscriber::EnvFilter;

/// Errors, and the first retried model call of each job (so that a job whose
/// calls time out again and again does not look frozen).
pub const DEFAULT_FILTER: &str = "error,sparring::jobs::progress=warn";

pub fn init_logging() {
    let filter = EnvFilter::try_from_env("SPARRING_LOG")
        .or_else(|_| EnvFilter::try_from_default_env())
        .unwrap_or_else(|_| EnvFilter::new(DEFAULT_FILTER));
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match std::env::var("SPARRING_LOG_FORMAT").as_deref() {
        Ok("json") => logs
            .json()
            .with_current_span(true)
            .with_span_list(true)
            .init(),
        Ok("text") | Err(_) => logs.init(),
        Ok(other) => {
            logs.init();
            eprintln!(
                "warning: SPARRING_LOG_FORMAT={other:?} is not a log format; use \"text\" \
                 (the default) or \"json\". Logging as text."
            );
        }
    }
}
