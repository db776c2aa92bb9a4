//! A server process sparring started (stdio) and the conversation's folder it
//! was given: ended together, always. [`ServerProcess::end`] lets the server
//! finish (its input closed, a moment to exit) before it is killed; dropping
//! it without that, on any path (a conversation that failed, a server that
//! stopped answering, `validate` returning, the CLI exiting right after),
//! kills the process and removes the folder then and there, with no task
//! left to a runtime that may be gone.

use std::time::Duration;

use tokio::process::Child;

use super::session_dir::SessionDir;

/// How long a server whose input was closed may take to exit by itself.
const EXIT_GRACE: Duration = Duration::from_secs(2);

/// The process and its folder. Field order matters: on drop the process is
/// killed first (tokio's `kill_on_drop`, a synchronous signal), then the
/// folder removed.
pub struct ServerProcess {
    child: Child,
    dir: SessionDir,
}

impl ServerProcess {
    /// `child` must have been spawned with `kill_on_drop(true)`.
    pub fn new(child: Child, dir: SessionDir) -> ServerProcess {
        ServerProcess { child, dir }
    }

    pub fn dir(&self) -> &SessionDir {
        &self.dir
    }

    /// End a process whose input was closed: wait a moment for it to exit,
    /// kill it if it does not, then remove its folder.
    pub async fn end(mut self) {
        match tokio::time::timeout(EXIT_GRACE, self.child.wait()).await {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => tracing::debug!("waiting for an MCP server to exit: {e}"),
            Err(_) => {
                if let Err(e) = self.child.kill().await {
                    tracing::debug!("killing an MCP server: {e}");
                }
            }
        }
    }
}
