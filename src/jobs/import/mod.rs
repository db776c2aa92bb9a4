//! `import` jobs: conversations sparring did not generate, stored as the
//! items of a job of their own so that judging, the user checks, stats, the
//! UI and every export take them as they take generated ones.
//!
//! An import reads its sources twice, one line in memory at a time: first
//! to find every invalid line (by default nothing is stored if there is
//! one), then to store the conversations in batches, each batch one
//! transaction. An item's key is its conversation's content hash, so
//! importing the same file again, or after a kill, stores each conversation
//! once.

mod stored_form;

use std::ops::ControlFlow;
use std::sync::Arc;
use std::time::Instant;

use sha2::{Digest, Sha256};
use tokio::sync::mpsc;

use crate::config::Problem;
use crate::import::pairing::unpaired;
use crate::import::probe;
use crate::import::{Format, ImportRequest, ImportedConversation, Source, INFERRED_TOOLS_KEY};
use crate::store::{JobKind, JobRow, JobStatus, NewConversation, NewItem, NewJob, Store};

use super::error::RunError;
use super::options::RunOptions;
use super::progress::{Notice, ProgressSnapshot};
use super::stored::{find_or_create, ByName};

pub use stored_form::{checks_of, Provenance, EVALUATION_KEY, SOURCE_KEY};

/// Conversations stored per transaction.
const BATCH: usize = 512;
/// Batches read ahead of the store: with [`BATCH`], what bounds memory.
const BATCHES_AHEAD: usize = 2;
/// How often the first pass says how far it has read a long file.
const CHECK_PROGRESS_EVERY: std::time::Duration = std::time::Duration::from_secs(10);
/// Invalid lines listed (all are counted).
pub const PROBLEMS_LISTED: usize = 1_000;
/// Invalid lines listed of a source none of whose lines reads.
const NOTHING_READ_LISTED: u64 = 5;

/// What an import did.
#[derive(Debug, Clone)]
pub struct ImportReport {
    pub job: JobRow,
    /// The job was made by this import (not added to).
    pub created: bool,
    pub sources: Vec<SourceReport>,
    /// The invalid lines skipped (`skip_invalid`), the first
    /// [`PROBLEMS_LISTED`] of them.
    pub skipped: Vec<Problem>,
    /// Stopped by Ctrl-C or SIGTERM before every source was stored; what was
    /// stored stays, and importing again adds the rest.
    pub interrupted: bool,
}

/// One source's part of an import.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceReport {
    pub shown: String,
    pub format: Format,
    /// Told from its first line (`auto`), not given.
    pub detected: bool,
    /// Valid conversations read.
    pub conversations: u64,
    /// Of those, how many the job did not hold yet.
    pub added: u64,
    /// Invalid lines (skipped).
    pub invalid: u64,
    /// Valid conversations whose tools were inferred from their calls
    /// (the source defines none of them), and those tools' names.
    pub inferred_tools: u64,
    pub inferred_tool_names: std::collections::BTreeSet<String>,
    /// Valid conversations checked against their task (`import::pairing`),
    /// and of those, how many never name one of its identifiers.
    pub pairing_checked: u64,
    pub unpaired: u64,
    /// Valid conversations read without a task: their simulation named none.
    pub taskless: u64,
}

impl SourceReport {
    /// What a person should know about this source although it was read:
    /// tools made up from the calls, simulations that seem paired with the
    /// wrong tasks.
    pub fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.inferred_tools > 0 {
            let names: Vec<&str> = self
                .inferred_tool_names
                .iter()
                .map(String::as_str)
                .collect();
            out.push(format!(
                "{}: {} of {} conversations call tools the file does not define; {} tool{} \
                 inferred from the calls, with an empty description and parameters \
                 {{\"type\": \"object\"}} ({}): an export's `tools` hold no more than that",
                self.shown,
                self.inferred_tools,
                self.conversations,
                names.len(),
                if names.len() == 1 { "" } else { "s" },
                names.join(", ")
            ));
        }
        if self.taskless > 0 {
            out.push(format!(
                "{}: {} of {} simulations name no task (`task_id`): read without a scenario or \
                 gold, so the user checks that need them cannot run on them",
                self.shown, self.taskless, self.conversations
            ));
        }
        if self.unpaired > 0 {
            out.push(format!(
                "{}: in {} of {} conversations checked against their task, the user never says \
                 one of the task's identifiers (its user id, reservation or order numbers, \
                 email, zip code){}; each conversation's `task_pairing` metadata says which",
                self.shown,
                self.unpaired,
                self.pairing_checked,
                if self.unpaired * 2 > self.pairing_checked {
                    ": the file seems to pair its simulations with the wrong tasks, and the \
                     user checks that read the scenario judge each user against another's task"
                } else {
                    ""
                }
            ));
        }
        out
    }
}

impl ImportReport {
    pub fn added(&self) -> u64 {
        self.sources.iter().map(|s| s.added).sum()
    }
    pub fn conversations(&self) -> u64 {
        self.sources.iter().map(|s| s.conversations).sum()
    }
    pub fn invalid(&self) -> u64 {
        self.sources.iter().map(|s| s.invalid).sum()
    }
}

/// A request whose sources were read whole once: each one's format and
/// counts, and the invalid lines to skip.
#[derive(Debug, Clone)]
pub struct Checked {
    request: ImportRequest,
    formats: Vec<(Format, bool)>,
    sources: Vec<SourceReport>,
    skipped: Vec<Problem>,
}

impl Checked {
    /// Valid conversations in the sources.
    pub fn conversations(&self) -> u64 {
        self.sources.iter().map(|s| s.conversations).sum()
    }
}

/// The first pass over `request`'s sources, before any store is opened.
/// Invalid input is `RunError::Invalid` with every problem (the file and
/// line of each), unless `skip_invalid`.
pub async fn check(request: &ImportRequest, options: &RunOptions) -> Result<Checked, RunError> {
    // Off the async workers: telling a format reads the file.
    let formats = {
        let (request, options) = (request.clone(), options.clone());
        tokio::task::spawn_blocking(move || formats(&request, &options))
            .await
            .map_err(|e| RunError::Invalid(vec![Problem::in_file("import", e.to_string())]))??
    };
    let (sources, skipped) = read_whole(request, &formats, options).await?;
    Ok(Checked {
        request: request.clone(),
        formats,
        sources,
        skipped,
    })
}

/// Stores a checked import in its job (made on the first import of its
/// name).
pub async fn import(
    store: Arc<dyn Store>,
    checked: Checked,
    options: &RunOptions,
) -> Result<ImportReport, RunError> {
    let Checked {
        request,
        formats,
        mut sources,
        skipped,
    } = checked;
    let request = &request;
    let (job, created) = import_job(store.as_ref(), request, &formats).await?;
    store.set_job_status(job.id, JobStatus::Running).await?;
    let interrupted = store_all(&store, &job, request, &mut sources, options).await?;
    let status = if interrupted {
        JobStatus::Pending
    } else {
        JobStatus::Done
    };
    store.set_job_status(job.id, status).await?;
    let job = store.get_job(job.id).await?.unwrap_or(job);
    Ok(ImportReport {
        job,
        created,
        sources,
        skipped,
        interrupted,
    })
}

/// Each source's format: the request's, or told from its first line.
fn formats(request: &ImportRequest, options: &RunOptions) -> Result<Vec<(Format, bool)>, RunError> {
    let mut formats = Vec::new();
    let mut problems = Vec::new();
    for source in &request.sources {
        match source.format(request.format) {
            Ok((format, detected)) => {
                options.notice(Notice::Reading {
                    source: source.shown.clone(),
                    format: format.as_str(),
                    detected,
                });
                formats.push((format, detected));
            }
            Err(e) => problems.push(Problem::in_file(&source.shown, without_name(&e, source))),
        }
    }
    if problems.is_empty() {
        Ok(formats)
    } else {
        Err(RunError::Invalid(problems))
    }
}

/// A source error's text without the source's name (a problem names it).
fn without_name(e: &impl std::fmt::Display, source: &Source) -> String {
    let text = e.to_string();
    text.strip_prefix(&format!("{}: ", source.shown))
        .map_or(text.clone(), str::to_string)
}

/// The first pass: every source read whole, each valid conversation counted
/// and each invalid line kept (up to [`PROBLEMS_LISTED`]). With invalid
/// lines and without `skip_invalid`, the problems.
async fn read_whole(
    request: &ImportRequest,
    formats: &[(Format, bool)],
    options: &RunOptions,
) -> Result<(Vec<SourceReport>, Vec<Problem>), RunError> {
    let sources = request.sources.clone();
    let formats = formats.to_vec();
    let options = options.clone();
    let (reports, problems, invalid, noted, unreadable) = tokio::task::spawn_blocking(move || {
        let mut said = Instant::now();
        let mut reports = Vec::new();
        let mut problems = Vec::new();
        let mut invalid = 0u64;
        // Invalid lines said otherwise than one by one.
        let mut noted = 0u64;
        let mut unreadable = false;
        for (source, (format, detected)) in sources.iter().zip(formats) {
            let mut report = SourceReport {
                shown: source.shown.clone(),
                format,
                detected,
                conversations: 0,
                added: 0,
                invalid: 0,
                inferred_tools: 0,
                inferred_tool_names: Default::default(),
                pairing_checked: 0,
                unpaired: 0,
                taskless: 0,
            };
            let first = problems.len();
            let read = source.read(format, |_, read| {
                // A long file says how far the check has read, every 10 s.
                if (report.conversations + report.invalid).is_multiple_of(4096)
                    && said.elapsed() >= CHECK_PROGRESS_EVERY
                {
                    said = Instant::now();
                    options.notice(Notice::Checking {
                        source: source.shown.clone(),
                        read: report.conversations + report.invalid,
                    });
                }
                match read {
                    Ok(conversation) => {
                        report.conversations += 1;
                        count(&mut report, &conversation);
                    }
                    Err(problem) => {
                        report.invalid += 1;
                        if problems.len() < PROBLEMS_LISTED {
                            problems.push(problem.in_file(&source.shown));
                        }
                    }
                }
                ControlFlow::Continue(())
            });
            // Of a source no line of which reads, a few lines say enough.
            let listed_here = (problems.len() - first) as u64;
            if report.conversations == 0 && listed_here > NOTHING_READ_LISTED {
                problems.truncate(first + NOTHING_READ_LISTED as usize);
                problems.push(Problem::in_file(
                    &source.shown,
                    format!(
                        "… and {} more invalid lines: none of its lines reads as {}",
                        report.invalid - NOTHING_READ_LISTED,
                        format.as_str()
                    ),
                ));
                noted += report.invalid - NOTHING_READ_LISTED;
            }
            if let Err(e) = read {
                // A file that stops being readable is never skipped.
                unreadable |= matches!(e, crate::import::SourceError::Io { .. });
                problems.push(Problem::in_file(&source.shown, without_name(&e, source)));
                invalid += 1;
                noted += 1;
            }
            invalid += report.invalid;
            reports.push(report);
        }
        (reports, problems, invalid, noted, unreadable)
    })
    .await
    .map_err(|e| RunError::Invalid(vec![Problem::in_file("import", e.to_string())]))?;
    if unreadable {
        // A file that stops being readable is never skipped.
        return Err(RunError::Invalid(problems));
    }
    let valid: u64 = reports.iter().map(|r| r.conversations).sum();
    if invalid == 0 && valid > 0 {
        return Ok((reports, problems));
    }
    if valid > 0 && request.skip_invalid {
        return Ok((reports, problems));
    }
    let mut problems = problems;
    let listed = problems.len() as u64;
    if invalid > listed + noted {
        problems.push(Problem::in_file(
            "import",
            format!("… and {} more invalid lines", invalid - listed - noted),
        ));
    }
    problems.extend(unread_sources(request, &reports).await);
    let lines = |n: u64| format!("{n} invalid line{}", if n == 1 { "" } else { "s" });
    problems.push(Problem::in_file(
        "import",
        if valid == 0 {
            format!(
                "{}no valid conversation: nothing stored (an import that stores nothing is no \
                 success, with --skip-invalid or without)",
                if invalid > 0 {
                    format!("{} and ", lines(invalid))
                } else {
                    String::new()
                }
            )
        } else {
            format!(
                "{} and nothing stored; fix {} or pass --skip-invalid to store the {valid} \
                 valid conversation{} and count the rest",
                lines(invalid),
                if invalid == 1 { "it" } else { "them" },
                if valid == 1 { "" } else { "s" }
            )
        },
    ));
    Err(RunError::Invalid(problems))
}

/// For each source of which no conversation was read, the formats that do
/// read it (or that none does): a suggestion only where it works.
async fn unread_sources(request: &ImportRequest, reports: &[SourceReport]) -> Vec<Problem> {
    let unread: Vec<(Source, Format)> = request
        .sources
        .iter()
        .zip(reports)
        .filter(|(_, r)| r.conversations == 0)
        .map(|(s, r)| (s.clone(), r.format))
        .collect();
    tokio::task::spawn_blocking(move || {
        unread
            .iter()
            .map(|(source, format)| {
                Problem::in_file(
                    &source.shown,
                    format!(
                        "no conversation of it reads as {}; {}",
                        format.as_str(),
                        probe::suggestion(source, Some(*format))
                    ),
                )
            })
            .collect()
    })
    .await
    .unwrap_or_default()
}

/// What the report counts of one valid conversation: inferred tools, the
/// check of its pairing with its task.
fn count(report: &mut SourceReport, c: &ImportedConversation) {
    if let Some(names) = c
        .metadata
        .get(INFERRED_TOOLS_KEY)
        .and_then(|v| v.as_array())
    {
        report.inferred_tools += 1;
        report
            .inferred_tool_names
            .extend(names.iter().filter_map(|n| n.as_str()).map(str::to_string));
    }
    if c.metadata.contains_key(crate::import::tau2::TASKLESS_KEY) {
        report.taskless += 1;
    }
    if let Some(pairing) = &c.pairing {
        report.pairing_checked += 1;
        report.unpaired += u64::from(unpaired(pairing));
    }
}

/// The import job of the request's name: the stored one, or a new one. A
/// job of another kind with that name is refused.
async fn import_job(
    store: &dyn Store,
    request: &ImportRequest,
    formats: &[(Format, bool)],
) -> Result<(JobRow, bool), RunError> {
    let name = request.name.trim();
    if let Some(row) = store.find_job_by_name(name).await? {
        if row.kind != JobKind::Import {
            return Err(RunError::Invalid(vec![Problem::in_file(
                "name",
                format!(
                    "job '{name}' (id {}) is a {} job; an import adds only to an import job: \
                     choose another name",
                    row.id, row.kind
                ),
            )]));
        }
    }
    let hash = import_hash(name);
    find_or_create(store, &hash, ByName::Ignored, false, || {
        Ok(NewJob {
            name: name.to_string(),
            kind: JobKind::Import,
            config_snapshot: snapshot(request, formats),
            config_hash: hash.clone(),
        })
    })
    .await
    .map(|(row, existed)| (row, !existed))
}

/// An import job is known by its name: every import of that name adds to it.
fn import_hash(name: &str) -> String {
    Sha256::digest(format!("sparring import\n{name}").as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// What the job's page shows as its config: the first import's sources (as
/// they were named) and formats.
fn snapshot(request: &ImportRequest, formats: &[(Format, bool)]) -> String {
    let sources: Vec<toml::Value> = request
        .sources
        .iter()
        .zip(formats)
        .map(|(source, (format, _))| {
            toml::Value::Table(toml::map::Map::from_iter([
                (
                    "source".to_string(),
                    toml::Value::String(source.shown.clone()),
                ),
                (
                    "format".to_string(),
                    toml::Value::String(format.as_str().into()),
                ),
            ]))
        })
        .collect();
    let import = toml::map::Map::from_iter([
        (
            "name".to_string(),
            toml::Value::String(request.name.trim().into()),
        ),
        (
            "skip_invalid".to_string(),
            toml::Value::Boolean(request.skip_invalid),
        ),
        ("sources".to_string(), toml::Value::Array(sources)),
    ]);
    let doc = toml::map::Map::from_iter([("import".to_string(), toml::Value::Table(import))]);
    format!(
        "# sparring import: conversations read from these sources\n{}",
        toml::to_string(&toml::Value::Table(doc)).unwrap_or_default()
    )
}

type Batch = (usize, Vec<(NewItem, NewConversation)>);

/// The second pass: every valid conversation stored, [`BATCH`] at a time,
/// while the next batches are read. Returns whether Ctrl-C or SIGTERM
/// stopped it.
async fn store_all(
    store: &Arc<dyn Store>,
    job: &JobRow,
    request: &ImportRequest,
    reports: &mut [SourceReport],
    options: &RunOptions,
) -> Result<bool, RunError> {
    let (sender, mut batches) = mpsc::channel::<Batch>(BATCHES_AHEAD);
    let sources = request.sources.clone();
    let formats: Vec<Format> = reports.iter().map(|r| r.format).collect();
    let job_id = job.id;
    let reader =
        tokio::task::spawn_blocking(move || read_batches(&sources, &formats, job_id, &sender));
    let total: u64 = reports.iter().map(|r| r.conversations).sum();
    let started = Instant::now();
    let mut done = 0u64;
    let snapshot = |done: u64| ProgressSnapshot {
        job_id,
        kind: JobKind::Import,
        total,
        already_done: 0,
        done,
        failed: 0,
        elapsed: started.elapsed(),
        calls_in_flight: 0,
        retries: 0,
    };
    let interrupt = super::shutdown::shutdown_signal();
    tokio::pin!(interrupt);
    let mut interrupted = false;
    loop {
        let next = tokio::select! {
            next = batches.recv() => next,
            _ = &mut interrupt => {
                interrupted = true;
                None
            }
        };
        let Some((source, batch)) = next else {
            break;
        };
        reports[source].added += store.store_imported(job_id, &batch).await?;
        done += batch.len() as u64;
        if let Some(sink) = &options.progress {
            sink.update(&snapshot(done));
        }
    }
    // Dropping the receiver stops the reader at its next batch.
    drop(batches);
    let read = reader.await;
    if let Some(sink) = &options.progress {
        sink.finished(&snapshot(done));
    }
    match read {
        Ok(Ok(())) => Ok(interrupted),
        Ok(Err(problem)) => Err(RunError::Invalid(vec![problem])),
        Err(e) => Err(RunError::Invalid(vec![Problem::in_file(
            "import",
            e.to_string(),
        )])),
    }
}

/// Reads every source again and sends its valid conversations in batches
/// (a batch holds one source's), until the receiver is gone. A source read
/// whole by the first pass that cannot be read now is an error; what was
/// sent of it is stored.
fn read_batches(
    sources: &[Source],
    formats: &[Format],
    job_id: i64,
    sender: &mpsc::Sender<Batch>,
) -> Result<(), Problem> {
    for (index, (source, &format)) in sources.iter().zip(formats).enumerate() {
        let file_name = file_name(&source.shown);
        let mut batch = Vec::with_capacity(BATCH);
        let mut gone = false;
        let read = source.read(format, |line, read| {
            let Ok(conversation) = read else {
                return ControlFlow::Continue(());
            };
            let from = Provenance {
                file_name: &file_name,
                line,
                format,
            };
            batch.push(stored_form::stored_form(&conversation, job_id, &from));
            if batch.len() == BATCH {
                let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH));
                if sender.blocking_send((index, full)).is_err() {
                    gone = true;
                    return ControlFlow::Break(());
                }
            }
            ControlFlow::Continue(())
        });
        if gone {
            return Ok(());
        }
        if !batch.is_empty() && sender.blocking_send((index, batch)).is_err() {
            return Ok(());
        }
        read.map_err(|e| Problem::in_file(&source.shown, without_name(&e, source)))?;
    }
    Ok(())
}

/// The last part of a source's name: the file's name without its folder.
fn file_name(shown: &str) -> String {
    std::path::Path::new(shown)
        .file_name()
        .map_or_else(|| shown.to_string(), |n| n.to_string_lossy().into_owned())
}
