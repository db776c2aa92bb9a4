//! `sparring bench-openenv`: C clients of OpenEnv's WebSocket protocol, each
//! one session, each waiting L (the trainer's generation) before every step,
//! against any OpenEnv server (`sparring openenv`, or one of OpenEnv's own
//! Python servers for the same-minutes comparison). Steps a second against
//! the ideal C ÷ L, each step's round trip (the server's overhead per step:
//! for sparring, the simulated user's turn and at the end the verification
//! and the store's write included), and the server's resident memory per
//! open session. Figures are printed by the CLI, never asserted.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::Message as Frame;

/// What to measure.
#[derive(Debug, Clone)]
pub struct OpenEnvBench {
    /// `HOST:PORT` of the server.
    pub addr: String,
    pub concurrency: usize,
    /// The wait before each step.
    pub think: Duration,
    /// How long steps are counted, after every client's first reset.
    pub duration: Duration,
    /// `reset`'s data (`seed` is set per episode).
    pub reset: Value,
    /// Each step's action.
    pub action: Value,
    /// The server's process, whose memory is read from `/proc`.
    pub server_pid: Option<u32>,
}

/// What was measured.
#[derive(Debug, Clone, serde::Serialize)]
pub struct OpenEnvReport {
    pub steps: u64,
    pub episodes: u64,
    pub errors: u64,
    pub window_secs: f64,
    pub steps_per_sec: f64,
    pub ideal_steps_per_sec: f64,
    pub ratio: f64,
    pub step_ms: Percentiles,
    /// The steps that went on (the simulated user's turn, or tool results).
    pub turn_ms: Percentiles,
    /// The steps that ended an episode (verification and its stored write).
    pub end_ms: Percentiles,
    pub reset_ms: Percentiles,
    /// The server's resident memory before the clients connected, and with
    /// every client's session open (KiB).
    pub rss_idle_kib: Option<u64>,
    pub rss_open_kib: Option<u64>,
    pub per_session_kib: Option<f64>,
}

#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct Percentiles {
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub max: f64,
}

fn percentiles(mut ms: Vec<f64>) -> Percentiles {
    if ms.is_empty() {
        return Percentiles::default();
    }
    ms.sort_by(f64::total_cmp);
    let at = |q: f64| ms[((ms.len() as f64 - 1.0) * q).round() as usize];
    Percentiles {
        p50: at(0.50),
        p90: at(0.90),
        p99: at(0.99),
        max: ms[ms.len() - 1],
    }
}

/// Resident memory of process `pid` in KiB (Linux), if readable.
fn rss_of(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

#[derive(Debug, thiserror::Error)]
pub enum OpenEnvBenchError {
    #[error("cannot connect to ws://{addr}/ws: {message}")]
    Connect { addr: String, message: String },
}

#[derive(Default)]
struct Tally {
    steps: Vec<f64>,
    turns: Vec<f64>,
    ends: Vec<f64>,
    resets: Vec<f64>,
    counted: u64,
    episodes: u64,
    errors: u64,
}

// The bench is a client of the server it measures, not a model call: its
// connections are its own, outside llm::transport's pool.
#[allow(clippy::disallowed_types)]
type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

async fn round_trip(ws: &mut Ws, message: &Value) -> Option<Value> {
    ws.send(Frame::Text(message.to_string().into()))
        .await
        .ok()?;
    loop {
        match ws.next().await? {
            Ok(Frame::Text(text)) => return serde_json::from_str(&text).ok(),
            Ok(Frame::Close(_)) | Err(_) => return None,
            Ok(_) => continue,
        }
    }
}

/// Run the clients; the figures.
pub async fn bench_openenv(opts: OpenEnvBench) -> Result<OpenEnvReport, OpenEnvBenchError> {
    let rss_idle = opts.server_pid.and_then(rss_of);
    let url = format!("ws://{}/ws", opts.addr);
    let mut sockets = Vec::with_capacity(opts.concurrency);
    for _ in 0..opts.concurrency {
        let (ws, _) = tokio_tungstenite::connect_async(&url).await.map_err(|e| {
            OpenEnvBenchError::Connect {
                addr: opts.addr.clone(),
                message: e.to_string(),
            }
        })?;
        sockets.push(ws);
    }
    let opened = Arc::new(tokio::sync::Barrier::new(opts.concurrency + 1));
    let counting = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stop_at = Arc::new(AtomicU64::new(u64::MAX));
    let origin = Instant::now();
    let mut tasks = Vec::with_capacity(opts.concurrency);
    for (worker, mut ws) in sockets.into_iter().enumerate() {
        let opts = opts.clone();
        let opened = opened.clone();
        let counting = counting.clone();
        let stop_at = stop_at.clone();
        tasks.push(tokio::spawn(async move {
            let mut tally = Tally::default();
            let mut first = true;
            let mut episode = 0u64;
            'episodes: loop {
                let mut reset = opts.reset.clone();
                if let Some(map) = reset.as_object_mut() {
                    map.insert("seed".into(), json!(worker as u64 * 1_000_000 + episode));
                }
                episode += 1;
                let t = Instant::now();
                let answer = round_trip(&mut ws, &json!({"type": "reset", "data": reset})).await;
                tally.resets.push(t.elapsed().as_secs_f64() * 1e3);
                if first {
                    first = false;
                    opened.wait().await;
                }
                let Some(answer) = answer.filter(|a| a["type"] == "observation") else {
                    tally.errors += 1;
                    break;
                };
                let mut done = answer["data"]["done"] == true;
                while !done {
                    tokio::time::sleep(opts.think).await;
                    if origin.elapsed().as_millis() as u64 >= stop_at.load(Ordering::Relaxed) {
                        break 'episodes;
                    }
                    let t = Instant::now();
                    let answer =
                        round_trip(&mut ws, &json!({"type": "step", "data": opts.action})).await;
                    let ms = t.elapsed().as_secs_f64() * 1e3;
                    match answer.filter(|a| a["type"] == "observation") {
                        Some(a) => {
                            done = a["data"]["done"] == true;
                            if counting.load(Ordering::Relaxed) {
                                tally.steps.push(ms);
                                if done {
                                    tally.ends.push(ms);
                                } else {
                                    tally.turns.push(ms);
                                }
                                tally.counted += 1;
                            }
                        }
                        None => {
                            tally.errors += 1;
                            break 'episodes;
                        }
                    }
                }
                tally.episodes += 1;
            }
            let _ = ws
                .send(Frame::Text(json!({"type": "close"}).to_string().into()))
                .await;
            tally
        }));
    }
    opened.wait().await;
    // Every client holds an open session: the server's memory now.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let rss_open = opts.server_pid.and_then(rss_of);
    counting.store(true, Ordering::Relaxed);
    let window_start = Instant::now();
    tokio::time::sleep(opts.duration).await;
    counting.store(false, Ordering::Relaxed);
    let window = window_start.elapsed().as_secs_f64();
    stop_at.store(origin.elapsed().as_millis() as u64, Ordering::Relaxed);
    let mut all = Tally::default();
    for task in tasks {
        if let Ok(t) = task.await {
            all.steps.extend(t.steps);
            all.turns.extend(t.turns);
            all.ends.extend(t.ends);
            all.resets.extend(t.resets);
            all.counted += t.counted;
            all.episodes += t.episodes;
            all.errors += t.errors;
        }
    }
    let ideal = opts.concurrency as f64 / opts.think.as_secs_f64().max(1e-9);
    let steps_per_sec = all.counted as f64 / window;
    let per_session_kib = match (rss_idle, rss_open) {
        (Some(idle), Some(open)) => Some((open as f64 - idle as f64) / opts.concurrency as f64),
        _ => None,
    };
    Ok(OpenEnvReport {
        steps: all.counted,
        episodes: all.episodes,
        errors: all.errors,
        window_secs: window,
        steps_per_sec,
        ideal_steps_per_sec: ideal,
        ratio: steps_per_sec / ideal,
        step_ms: percentiles(all.steps),
        turn_ms: percentiles(all.turns),
        end_ms: percentiles(all.ends),
        reset_ms: percentiles(all.resets),
        rss_idle_kib: rss_idle,
        rss_open_kib: rss_open,
        per_session_kib,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_read_at_their_rank() {
        let p = percentiles((1..=100).map(f64::from).collect());
        assert_eq!((p.p50, p.p99, p.max), (51.0, 99.0, 100.0));
        assert_eq!(percentiles(Vec::new()).p99, 0.0);
    }
}
