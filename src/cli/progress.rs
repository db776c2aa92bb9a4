//! How the CLI shows a job's progress: a bar on a terminal, whose clock runs
//! even while nothing finishes; off a terminal (CI logs, files) a line at
//! least every 10 seconds. Both show calls in flight and retries so far.

use std::io::IsTerminal;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::jobs::{Notice, ProgressSink, ProgressSnapshot};

/// Off a terminal, the longest time between two progress lines.
pub const LINE_EVERY: Duration = Duration::from_secs(10);

pub struct CliProgress {
    /// No bar or lines; notices that matter are still shown.
    quiet: bool,
    terminal: bool,
    /// Put before notices, e.g. `worker`.
    label: &'static str,
    bar: Mutex<Option<ProgressBar>>,
    last_line: Mutex<Option<Instant>>,
}

impl CliProgress {
    pub fn new(quiet: bool, label: &'static str) -> Arc<CliProgress> {
        Arc::new(CliProgress {
            quiet,
            terminal: std::io::stderr().is_terminal(),
            label,
            bar: Mutex::new(None),
            last_line: Mutex::new(None),
        })
    }

    fn new_bar(total: u64) -> ProgressBar {
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
        let style = ProgressStyle::with_template(
            "{bar:30.cyan/blue} {pos}/{len} [{elapsed_precise}] {msg}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar());
        bar.set_style(style);
        // Redraws the clock while no item finishes.
        bar.enable_steady_tick(Duration::from_secs(1));
        bar
    }

    fn line(s: &ProgressSnapshot) {
        let secs = s.elapsed.as_secs();
        eprintln!(
            "progress: {}/{} [{:02}:{:02}:{:02}] {}",
            s.position(),
            s.total,
            secs / 3600,
            secs / 60 % 60,
            secs % 60,
            s.summary()
        );
    }

    /// Print `text` without breaking the bar.
    fn say(&self, text: &str) {
        let bar = self.bar.lock().ok().and_then(|b| b.clone());
        match bar {
            Some(bar) => bar.suspend(|| eprintln!("{text}")),
            None => eprintln!("{text}"),
        }
    }
}

impl ProgressSink for CliProgress {
    fn update(&self, s: &ProgressSnapshot) {
        if self.quiet {
            return;
        }
        if self.terminal {
            let Ok(mut bar) = self.bar.lock() else { return };
            let bar = bar.get_or_insert_with(|| Self::new_bar(s.total));
            bar.set_position(s.position());
            bar.set_message(s.summary());
            return;
        }
        let Ok(mut last) = self.last_line.lock() else {
            return;
        };
        if last.is_none_or(|t| t.elapsed() >= LINE_EVERY) {
            *last = Some(Instant::now());
            Self::line(s);
        }
    }

    fn finished(&self, s: &ProgressSnapshot) {
        if self.quiet {
            return;
        }
        if let Some(bar) = self.bar.lock().ok().and_then(|mut b| b.take()) {
            bar.finish_and_clear();
        } else if !self.terminal {
            Self::line(s);
        }
        if let Ok(mut last) = self.last_line.lock() {
            *last = None;
        }
    }

    fn notice(&self, notice: &Notice) {
        let always = matches!(
            notice,
            Notice::InputsChanged { .. } | Notice::Tripped { .. }
        );
        if self.quiet && !always {
            return;
        }
        if self.label.is_empty() {
            self.say(&notice.to_string());
        } else {
            self.say(&format!("{}: {notice}", self.label));
        }
    }
}

/// The progress of a command that is not a job (`mine`, `export`): how many
/// things are done, of how many when that is known. On a terminal a bar (a
/// spinner without a total) that is cleared at the end; off one, a line
/// once 10 s have passed since the last (none for a command done sooner) and
/// one when the last thing is done.
pub struct Counter {
    label: &'static str,
    quiet: bool,
    bar: Option<ProgressBar>,
    last: Mutex<Instant>,
}

impl Counter {
    pub fn new(label: &'static str, quiet: bool) -> Counter {
        let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            let style = ProgressStyle::with_template("{spinner} [{elapsed_precise}] {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner());
            bar.set_style(style);
            bar.enable_steady_tick(Duration::from_secs(1));
            bar
        });
        Counter {
            label,
            quiet,
            bar,
            last: Mutex::new(Instant::now()),
        }
    }

    /// `done` things of `total`, said as `message`.
    pub fn show(&self, done: u64, total: Option<u64>, message: &str) {
        if let Some(bar) = &self.bar {
            if let Some(total) = total.filter(|_| bar.length().is_none()) {
                bar.set_length(total);
                if let Ok(style) = ProgressStyle::with_template(
                    "{bar:30.cyan/blue} {pos}/{len} [{elapsed_precise}] {msg}",
                ) {
                    bar.set_style(style);
                }
            }
            bar.set_position(done);
            bar.set_message(message.to_string());
            return;
        }
        if self.quiet {
            return;
        }
        let Ok(mut last) = self.last.lock() else {
            return;
        };
        if last.elapsed() >= LINE_EVERY || total == Some(done) {
            eprintln!("{}: {message}", self.label);
            *last = Instant::now();
        }
    }

    /// The bar cleared, so what the command prints next stands alone.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
