//! The one way a process is asked to stop: Ctrl-C (SIGINT) or SIGTERM, which
//! is what `kill`, systemd, Docker and Kubernetes send. `sparring run`, `worker`
//! and `serve` all stop on it the same way: no new leases, conversations in
//! flight dropped, their items released to be redone on resume.

/// Which signal asked the process to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shutdown {
    Interrupt,
    Terminate,
}

impl Shutdown {
    pub fn name(self) -> &'static str {
        match self {
            Shutdown::Interrupt => "Ctrl-C",
            Shutdown::Terminate => "SIGTERM",
        }
    }

    /// A shell's exit code for a process ended by the signal (128 + its number).
    pub fn exit_code(self) -> i32 {
        match self {
            Shutdown::Interrupt => 130,
            Shutdown::Terminate => 143,
        }
    }
}

/// Resolves on the first Ctrl-C or SIGTERM after it is first polled. Once
/// polled, the process no longer dies of these signals by default: whoever
/// awaits this decides what stopping means.
pub async fn shutdown_signal() -> Shutdown {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut terminate) => tokio::select! {
                _ = tokio::signal::ctrl_c() => Shutdown::Interrupt,
                _ = terminate.recv() => Shutdown::Terminate,
            },
            Err(e) => {
                tracing::warn!("cannot listen for SIGTERM ({e}); only Ctrl-C stops gracefully");
                interrupt().await
            }
        }
    }
    #[cfg(not(unix))]
    {
        interrupt().await
    }
}

async fn interrupt() -> Shutdown {
    if let Err(e) = tokio::signal::ctrl_c().await {
        // Without a signal handler nothing can ask for a graceful stop.
        tracing::warn!("cannot listen for Ctrl-C: {e}");
        std::future::pending::<()>().await;
    }
    Shutdown::Interrupt
}
