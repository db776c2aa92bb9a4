//! The service's stepped sessions: one registry for the server (its
//! `--max-sessions` and `--session-timeout`), and the job configs they play,
//! each opened once (its inputs checked, its models connected, its job
//! found by its config hash) and shared by its sessions.

use std::collections::HashMap;
use std::sync::{Arc, Once};

use crate::config::Job;
use crate::jobs::generation::setup::config_hash_of;
use crate::jobs::Context;
use crate::stepped::{Host, Limits, SessionError, Sessions};

/// Job configs with sessions a server holds at once.
pub const MAX_HOSTS: usize = 32;

pub struct SessionService {
    pub sessions: Arc<Sessions>,
    /// Held while a config is opened, so that two sessions of one new
    /// config open it once.
    hosts: tokio::sync::Mutex<HashMap<String, Arc<Host>>>,
    reaper: Once,
}

impl SessionService {
    pub fn new(limits: Limits) -> Arc<SessionService> {
        Arc::new(SessionService {
            sessions: Sessions::new(limits),
            hosts: tokio::sync::Mutex::new(HashMap::new()),
            reaper: Once::new(),
        })
    }

    /// Start expiring idle sessions (once, from within the runtime).
    pub fn start(&self) {
        self.reaper.call_once(|| self.sessions.spawn_reaper());
    }

    /// The host of `job`'s config: the one opened before for the same
    /// config hash, or a new one. A config no session holds any more
    /// makes room for a new one past [`MAX_HOSTS`].
    pub async fn host_for(&self, ctx: &Context, job: Job) -> Result<Arc<Host>, SessionError> {
        let hash = config_hash_of(&job).map_err(SessionError::Config)?;
        let mut hosts = self.hosts.lock().await;
        if let Some(host) = hosts.get(&hash) {
            return Ok(host.clone());
        }
        if hosts.len() >= MAX_HOSTS {
            // Held by no session: only this map has it.
            hosts.retain(|_, host| Arc::strong_count(host) > 1);
            if hosts.len() >= MAX_HOSTS {
                return Err(SessionError::Configs { max: MAX_HOSTS });
            }
        }
        let host = Arc::new(Host::open(ctx, job).await?);
        hosts.insert(hash, host.clone());
        Ok(host)
    }
}
