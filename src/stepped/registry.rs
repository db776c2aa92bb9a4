//! The open sessions of a server, by id, within two bounds: at most
//! `max_sessions` open at once (a WebSocket connection holds a slot for
//! its whole life, as OpenEnv's `max_concurrent_envs` counts them), and a
//! session idle for `idle` expires (its episode dropped, nothing stored).
//! Sessions closed or expired are remembered a while, so that a late step
//! is told which it was rather than that the id is unknown.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::error::SessionError;
use super::live::Live;
use super::observation::Observation;

/// A server's bounds on its sessions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Sessions open at once (OpenEnv's `max_concurrent_envs`).
    pub max_sessions: usize,
    /// A session without a request for this long expires.
    pub idle: Duration,
}

/// Sessions open at once unless the server is told otherwise.
pub const DEFAULT_MAX_SESSIONS: usize = 256;
/// Idle seconds before a session expires unless the server is told otherwise.
pub const DEFAULT_IDLE_SECS: u64 = 600;
/// The range a server may be given for each.
pub const MAX_SESSIONS: crate::config::ranges::Whole = crate::config::ranges::whole(1, 100_000);
pub const IDLE_SECS: crate::config::ranges::Whole = crate::config::ranges::whole(1, 86_400);
/// Closed and expired ids remembered (the oldest forgotten first).
const REMEMBERED: usize = 16_384;

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_sessions: DEFAULT_MAX_SESSIONS,
            idle: Duration::from_secs(DEFAULT_IDLE_SECS),
        }
    }
}

/// One of the `max_sessions` places, held by an open session or a
/// WebSocket connection; given back when dropped.
pub struct Slot {
    _permit: OwnedSemaphorePermit,
}

struct Entry {
    live: Arc<tokio::sync::Mutex<Live>>,
    last: Mutex<Instant>,
    _slot: Slot,
}

impl Entry {
    fn touch(&self) {
        *self.last.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
    }

    fn idle_for(&self) -> Duration {
        self.last
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .elapsed()
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Gone {
    Closed,
    Expired,
    /// The episode ended (stored, or failed): its last state, for `state`
    /// and for a late step's error. Its place was given back at once.
    Over(Value),
}

/// The sessions of one server.
pub struct Sessions {
    limits: Limits,
    slots: Arc<Semaphore>,
    open: Mutex<HashMap<String, Arc<Entry>>>,
    gone: Mutex<(HashMap<String, Gone>, VecDeque<String>)>,
}

impl Sessions {
    pub fn new(limits: Limits) -> Arc<Sessions> {
        Arc::new(Sessions {
            limits,
            slots: Arc::new(Semaphore::new(limits.max_sessions.max(1))),
            open: Mutex::new(HashMap::new()),
            gone: Mutex::new((HashMap::new(), VecDeque::new())),
        })
    }

    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Places taken: sessions open here and WebSocket connections.
    pub fn active(&self) -> usize {
        self.limits.max_sessions - self.slots.available_permits()
    }

    /// A fresh session id: `ses_` and 24 random hex digits.
    pub fn new_id() -> String {
        format!(
            "ses_{:016x}{:08x}",
            rand::random::<u64>(),
            rand::random::<u32>()
        )
    }

    /// Take a place, or say the server is full.
    pub fn reserve(&self) -> Result<Slot, SessionError> {
        match self.slots.clone().try_acquire_owned() {
            Ok(permit) => Ok(Slot { _permit: permit }),
            Err(_) => Err(SessionError::Capacity {
                open: self.active(),
                max: self.limits.max_sessions,
            }),
        }
    }

    /// Keep `live`, opened in `slot`, under its id.
    pub fn insert(&self, live: Live, slot: Slot) {
        let id = live.id().to_string();
        let entry = Arc::new(Entry {
            live: Arc::new(tokio::sync::Mutex::new(live)),
            last: Mutex::new(Instant::now()),
            _slot: slot,
        });
        self.open_map().insert(id, entry);
    }

    fn open_map(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Entry>>> {
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The entry of `id`, or why there is none.
    fn entry(&self, id: &str) -> Result<Arc<Entry>, SessionError> {
        if let Some(entry) = self.open_map().get(id) {
            return Ok(entry.clone());
        }
        let gone = self.gone.lock().unwrap_or_else(|e| e.into_inner());
        Err(match gone.0.get(id) {
            Some(Gone::Closed) => SessionError::Closed(id.to_string()),
            Some(Gone::Expired) => SessionError::Expired {
                id: id.to_string(),
                idle_secs: self.limits.idle.as_secs(),
            },
            Some(Gone::Over(state)) => over_error(state),
            None => SessionError::Unknown(id.to_string()),
        })
    }

    /// The last state of session `id` if its episode is over.
    fn over_state(&self, id: &str) -> Option<Value> {
        let gone = self.gone.lock().unwrap_or_else(|e| e.into_inner());
        match gone.0.get(id) {
            Some(Gone::Over(state)) => Some(state.clone()),
            _ => None,
        }
    }

    /// Step session `id` with `action`; a second step while one runs is
    /// `Busy`. The step runs as a task of its own: a caller that goes away
    /// (a dropped connection, a timeout) never leaves it half done.
    pub async fn step(&self, id: &str, action: &Value) -> Result<Observation, SessionError> {
        let entry = self.entry(id)?;
        let Ok(mut live) = entry.live.clone().try_lock_owned() else {
            return Err(SessionError::Busy(id.to_string()));
        };
        entry.touch();
        let action = action.clone();
        let stepped = tokio::spawn(async move {
            let observation = live.step(&action).await;
            (observation, live.ended_state())
        })
        .await;
        entry.touch();
        match stepped {
            Ok((observation, ended)) => {
                if let Some(state) = ended {
                    // Over: its place is free for the next session at once.
                    self.forget(id, Gone::Over(state));
                }
                observation
            }
            Err(e) => Err(SessionError::Failed {
                class: "internal".into(),
                message: format!("the step did not finish: {e}"),
            }),
        }
    }

    /// Keep `live`, opened in `slot`; an episode over as it opened (the
    /// user stopped at once) gives its place back at once.
    pub fn keep(&self, live: Live, slot: Slot) {
        match live.ended_state() {
            Some(state) => {
                let id = live.id().to_string();
                self.insert(live, slot);
                self.forget(&id, Gone::Over(state));
            }
            None => self.insert(live, slot),
        }
    }

    /// Session `id`'s state.
    pub async fn state(&self, id: &str) -> Result<Value, SessionError> {
        if let Some(state) = self.over_state(id) {
            return Ok(state);
        }
        let entry = self.entry(id)?;
        let live = entry.live.lock().await;
        entry.touch();
        Ok(live.state())
    }

    /// Close session `id`: its place is free at once; an episode that had
    /// not ended is dropped, nothing of it stored. Its last state.
    pub async fn close(&self, id: &str) -> Result<Value, SessionError> {
        if let Some(state) = self.over_state(id) {
            return Ok(state);
        }
        let entry = self.entry(id)?;
        self.forget(id, Gone::Closed);
        let live = entry.live.lock().await;
        Ok(live.state())
    }

    fn forget(&self, id: &str, why: Gone) {
        let removed = self.open_map().remove(id);
        if removed.is_none() {
            return;
        }
        let mut gone = self.gone.lock().unwrap_or_else(|e| e.into_inner());
        let (why_by_id, order) = &mut *gone;
        if why_by_id.insert(id.to_string(), why).is_none() {
            order.push_back(id.to_string());
        }
        while order.len() > REMEMBERED {
            if let Some(old) = order.pop_front() {
                why_by_id.remove(&old);
            }
        }
    }

    /// Expire every session idle past the limit and not in a step: the ids.
    pub fn reap(&self) -> Vec<String> {
        let idle = self.limits.idle;
        let stale: Vec<String> = self
            .open_map()
            .iter()
            .filter(|(_, e)| e.idle_for() > idle && e.live.try_lock().is_ok())
            .map(|(id, _)| id.clone())
            .collect();
        for id in &stale {
            tracing::info!(session = %id, "stepped session expired after {} s idle", idle.as_secs());
            self.forget(id, Gone::Expired);
        }
        stale
    }

    /// Reap every quarter of the idle limit (at least every second), for
    /// as long as the sessions exist.
    pub fn spawn_reaper(self: &Arc<Self>) {
        let weak: Weak<Sessions> = Arc::downgrade(self);
        let every =
            (self.limits.idle / 4).clamp(Duration::from_millis(250), Duration::from_secs(30));
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                let Some(sessions) = weak.upgrade() else {
                    return;
                };
                sessions.reap();
            }
        });
    }
}

/// A step on a session whose episode is over: ended, or failed.
fn over_error(state: &Value) -> SessionError {
    let end = &state["end"];
    match end.get("failed") {
        Some(failed) => SessionError::Failed {
            class: failed["class"].as_str().unwrap_or("").to_string(),
            message: failed["message"].as_str().unwrap_or("").to_string(),
        },
        None => SessionError::Ended {
            termination: end["termination"].as_str().unwrap_or("").to_string(),
            conversation_id: end["conversation_id"].as_i64().unwrap_or(0),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_run_out_at_the_limit_and_come_back_when_dropped() {
        let sessions = Sessions::new(Limits {
            max_sessions: 2,
            idle: Duration::from_secs(60),
        });
        let a = sessions.reserve().unwrap();
        let _b = sessions.reserve().unwrap();
        let full = sessions.reserve().err().unwrap();
        assert!(
            matches!(full, SessionError::Capacity { open: 2, max: 2 }),
            "{full:?}"
        );
        drop(a);
        assert_eq!(sessions.active(), 1);
        assert!(sessions.reserve().is_ok());
    }

    #[tokio::test]
    async fn an_unknown_id_is_told_apart_from_a_closed_or_expired_one() {
        let sessions = Sessions::new(Limits::default());
        let e = sessions.step("ses_nope", &Value::Null).await.unwrap_err();
        assert!(matches!(e, SessionError::Unknown(_)), "{e:?}");
        sessions
            .gone
            .lock()
            .unwrap()
            .0
            .insert("ses_old".into(), Gone::Expired);
        let e = sessions.state("ses_old").await.unwrap_err();
        assert!(matches!(e, SessionError::Expired { .. }), "{e:?}");
        assert_eq!(e.status(), 410);
    }

    #[test]
    fn ids_are_fresh_and_of_one_shape() {
        let a = Sessions::new_id();
        assert!(a.starts_with("ses_") && a.len() == 28, "{a}");
        assert_ne!(a, Sessions::new_id());
    }
}
