//! Progress of a running job: a bar on a terminal, a line every few seconds
//! otherwise (CI logs, files), both with done/failed/rate/ETA.
// Still prints to stderr until these lines go through the CLI's progress sink
// (issue 13 §1); the lint that forbids it in the library is waived here only.
#![allow(clippy::print_stderr)]

use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

#[derive(Clone)]
pub struct Progress {
    inner: Arc<Inner>,
}

struct Inner {
    total: u64,
    already_done: u64,
    done: AtomicU64,
    failed: AtomicU64,
    started: Instant,
    bar: Option<ProgressBar>,
    last_line: std::sync::Mutex<Instant>,
    quiet: bool,
}

impl Progress {
    /// `total` items, of which `already_done` were done before this run.
    pub fn new(total: u64, already_done: u64, quiet: bool) -> Self {
        let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
            let style = ProgressStyle::with_template(
                "{bar:30.cyan/blue} {pos}/{len} {msg} [{elapsed_precise}, ETA {eta}]",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar());
            bar.set_style(style);
            bar.set_position(already_done);
            bar
        });
        Progress {
            inner: Arc::new(Inner {
                total,
                already_done,
                done: AtomicU64::new(0),
                failed: AtomicU64::new(0),
                started: Instant::now(),
                bar,
                last_line: std::sync::Mutex::new(Instant::now()),
                quiet,
            }),
        }
    }

    pub fn item_done(&self) {
        self.inner.done.fetch_add(1, Ordering::Relaxed);
        self.update();
    }

    pub fn item_failed(&self) {
        self.inner.failed.fetch_add(1, Ordering::Relaxed);
        self.update();
    }

    fn status(&self) -> (u64, String) {
        let i = &self.inner;
        let done = i.done.load(Ordering::Relaxed);
        let failed = i.failed.load(Ordering::Relaxed);
        let finished = done + failed;
        let secs = i.started.elapsed().as_secs_f64().max(1e-3);
        let per_min = done as f64 / secs * 60.0;
        let remaining = i.total.saturating_sub(i.already_done + finished);
        let eta = if finished > 0 {
            format!("{:.0}s", remaining as f64 * secs / finished as f64)
        } else {
            "?".into()
        };
        (
            i.already_done + finished,
            format!("done {done} failed {failed} | {per_min:.1} conv/min | ETA {eta}"),
        )
    }

    fn update(&self) {
        let (position, message) = self.status();
        if let Some(bar) = &self.inner.bar {
            bar.set_position(position);
            bar.set_message(message);
            return;
        }
        if self.inner.quiet {
            return;
        }
        let Ok(mut last) = self.inner.last_line.lock() else {
            return;
        };
        if last.elapsed() >= Duration::from_secs(5) || position == self.inner.total {
            *last = Instant::now();
            eprintln!("progress: {position}/{} {message}", self.inner.total);
        }
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.inner.bar {
            bar.finish_and_clear();
        }
    }
}
