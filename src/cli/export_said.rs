//! What `sparring export` (and `sparring conversations`, which shares its
//! filters) says: an export request's refusals with their exit codes, the
//! notices of what preparing it added, its progress and its result, in the
//! words of the command line's flags.

use crate::export::prepare::{Notice, PreparedExport};
use crate::export::request::{ExportKind, Field, PairSource, RequestError};
use crate::export::split::with_part;
use crate::export::target::{ExportTarget, TargetError};
use crate::export::writing::{Report, Written};
use crate::export::{Format, SUPPORTED_FORMATS};

use super::{EXIT_INVALID, EXIT_NOT_FOUND};

/// The flag of `field`.
fn flag(field: Field) -> &'static str {
    match field {
        Field::MinReward => "--min-reward",
        Field::MaxReward => "--max-reward",
        Field::Termination => "--termination",
        Field::Scenario => "--scenario",
        Field::Persona => "--persona",
        Field::ProbeOutcome => "--probe-outcome",
        Field::MinJudge => "--min-judge",
        Field::DropFlagged => "--drop-flagged",
        Field::KeepFlagged => "--keep-flagged",
        Field::UserTools => "--user-tools",
        Field::DropUserFlag => "--drop-user-flag",
        Field::KeepUserFlagged => "--keep-user-flagged",
        Field::Judge => "--judge",
        Field::ProbePairs => "--probe-pairs",
        Field::DpoShape => "--dpo-shape",
        Field::Advantage => "--advantage",
    }
}

/// Say why the request is refused (on stderr) and return the exit code;
/// the store's and the file system's failures are errors (exit 1).
pub fn refuse(e: RequestError, database: &str) -> anyhow::Result<i32> {
    let said = match e {
        RequestError::UnknownFormat(format) => {
            format!("--format {format} is not supported; supported formats: {SUPPORTED_FORMATS}")
        }
        RequestError::DpoNeedsJudge => {
            "--format dpo needs --judge NAME (the pairwise judge whose verdicts make the pairs) or --probe-pairs (a probe conversation that held the line against one that broke it)"
                .into()
        }
        RequestError::ProbePairsNotDpo => "--probe-pairs applies to --format dpo only; to export the probes that held the line use --probe-outcome held".into(),
        RequestError::JudgeAndProbePairs => "--format dpo takes its pairs from --judge NAME or from --probe-pairs, not both: leave one out".into(),
        RequestError::AdvantageNotDpo => "--advantage applies to rows of one conversation (openai, hf, sharegpt, nemo_gym), each in its scenario's rollout group; --format dpo writes pairs: leave --advantage out".into(),
        RequestError::JudgeNotDpo => "--judge applies to --format dpo only; to filter by a judge's score use --min-judge NAME=SCORE".into(),
        RequestError::NotForScenarios(given) => {
            let given: Vec<&str> = given.into_iter().map(flag).collect();
            format!(
                "--format scenarios writes the job's synthesized scenarios, not its conversations, so {} do{} not apply; leave {} out",
                given.join(", "),
                if given.len() == 1 { "es" } else { "" },
                if given.len() == 1 { "it" } else { "them" }
            )
        }
        RequestError::UserToolsNotHf { format } if Format::parse(&format) == Some(Format::OpenAi) => {
            "--user-tools keeps the simulated user's own tool calls, which --format openai has \
             no place for: OpenAI's fine-tuning takes tool_calls on assistant messages only (and \
             no user_tools key), so it would reject the file; use --format hf --user-tools (user \
             messages with tool_calls, the tool messages answering them, and the user's tools in \
             a user_tools column)"
                .into()
        }
        RequestError::UserToolsNotHf { format } => format!(
            "--user-tools applies to --format hf only: --format {format} has no place for the \
             simulated user's own tool calls"
        ),
        RequestError::Out(e @ TargetError::NotRegular { .. }) => {
            format!("--out {e}, or - for standard output")
        }
        RequestError::Out(e) => return Err(e.into()),
        RequestError::SplitToStdout => "--split writes two files named after --out (FILE.train.jsonl and FILE.validation.jsonl); give a file, not - for standard output".into(),
        RequestError::Writes { out, error } => format!("{error} (--out {} writes it)", out.display()),
        RequestError::NoJob(job) => {
            eprintln!("job {job} is not in {database}");
            return Ok(EXIT_NOT_FOUND);
        }
        RequestError::NotNemoGym(e) => e.to_string(),
        RequestError::Malformed(malformed) => malformed
            .iter()
            .map(|m| format!("{}: {}", flag(m.field), m.message))
            .collect::<Vec<_>>()
            .join("\n"),
        RequestError::Unjudged { job, unjudged } => {
            let listed = unjudged.listed(job);
            unjudged
                .min_judge
                .iter()
                .map(|judge| format!("--min-judge {judge}=…: no judgments by '{judge}', so no conversation would be kept; {listed}"))
                .collect::<Vec<_>>()
                .join("\n")
        }
        RequestError::Store(e) => return Err(e.into()),
        RequestError::Corrupt(e) => return Err(e.into()),
        RequestError::Profile(problems) => {
            let mut lines: Vec<String> = problems.iter().map(|p| p.to_string()).collect();
            lines.push("--profile takes strict, generous or a TOML profile (docs/exports.md lists its keys); nothing was written".into());
            lines.join("\n")
        }
        RequestError::StratifyBy(message) => format!("--stratify-by {message}"),
        RequestError::Curate(e) => return Err(e.into()),
        RequestError::NotOurs(path) => format!(
            "--profile writes manifest.json and README.md beside --out, and {} exists and was not written by a curated export, so it is left alone; give --out a folder of its own (e.g. --out dataset/data.jsonl)",
            path.display()
        ),
        RequestError::CurateScenarios => "--profile applies to conversations; --format scenarios writes synthesized scenarios, which no gate applies to: leave --profile out".into(),
    };
    eprintln!("{said}");
    Ok(EXIT_INVALID)
}

/// Say each notice on stderr, in order.
pub fn print_notices(notices: &[Notice]) {
    for notice in notices {
        eprintln!("{}", notice_line(notice));
    }
}

fn notice_line(notice: &Notice) -> String {
    match notice {
        Notice::JobFlaggedJudge(name) => format!("dropping conversations judge '{name}' flagged (the job's drop_flagged; --keep-flagged keeps them)"),
        Notice::JobUserCheck(flag) => format!("dropping conversations the '{flag}' check flagged (the job's [user_simulator] drop_flagged; --keep-user-flagged keeps them)"),
        Notice::UnsolvedUnreadable { job, reason } => format!("warning: cannot tell which of job {job}'s scenarios are synthesized, so no conversation is left out as unsolved: {reason}"),
        Notice::DroppingUnsolved { job, scenarios } => format!(
            "dropping the conversations of {scenarios} unsolved synthesized scenario{} (none of their attempts passed; `sparring stats --job {job}` lists them; --keep-unsolved keeps them)",
            if *scenarios == 1 { "" } else { "s" },
        ),
        Notice::DropsNothing { judge, listed } => format!("warning: --drop-flagged {judge}: no judgments by '{judge}', so it drops nothing; {listed}"),
    }
}

/// How many are written so far and the progress line that says so (none
/// for scenarios).
pub fn progress_line(written: &Written) -> Option<(u64, String)> {
    match written {
        Written::Lines(c) => Some((
            c.written,
            format!(
                "exported {} conversations ({} skipped)",
                c.written,
                c.skipped.total()
            ),
        )),
        Written::Pairs(c) => Some((
            c.written,
            format!("exported {} pairs ({} skipped)", c.written, c.skipped()),
        )),
        Written::Scenarios(_) => None,
    }
}

/// What the finished export wrote where.
pub fn said(export: &PreparedExport, report: &Report, target: &ExportTarget) -> String {
    // A split's two files, as the message names them.
    let shown = match target {
        ExportTarget::File(out) if report.sides.len() > 1 => {
            ExportTarget::File(with_part(out, "{train,validation}"))
        }
        _ => target.clone(),
    }
    .describe();
    let said = match &report.written {
        Written::Lines(counts) => format!(
            "wrote {} conversations to {shown}; skipped {}: {}",
            counts.written,
            counts.skipped.total(),
            counts.skipped
        ),
        Written::Pairs(counts) => {
            let (source, shape) = match &export.kind {
                ExportKind::Dpo { pairs, shape } => (
                    match pairs {
                        PairSource::Judge(judge) => format!("judgments by '{judge}'"),
                        PairSource::Probe => {
                            "probe conversations that broke the line, each paired with one that held it"
                                .into()
                        }
                    },
                    shape.as_str(),
                ),
                // Pairs come of dpo only.
                _ => (String::new(), ""),
            };
            format!(
                "wrote {} DPO pairs ({shape} shape) to {shown} from {} {source}; skipped {}: {}",
                counts.written,
                counts.judgments,
                counts.skipped(),
                counts
            )
        }
        Written::Scenarios(counts) => {
            let which = if keeps_unsolved(export) {
                "solved and unsolved"
            } else {
                "solved"
            };
            format!(
                "wrote {} {which} synthesized scenarios of job {} to {shown}; left out: {}",
                counts.written, export.row.id, counts
            )
        }
    };
    if report.sides.len() < 2 {
        return said;
    }
    let total: u64 = report.sides.iter().map(|(_, n)| *n).sum();
    let per_side: Vec<String> = report
        .sides
        .iter()
        .filter_map(|(side, n)| {
            let side = (*side)?;
            Some(match target {
                // An empty side is not written (`export::writing`).
                ExportTarget::File(_) if *n == 0 && total > 0 => {
                    format!("none to {} (its file is not written)", side.name())
                }
                ExportTarget::File(out) => {
                    let file = with_part(out, side.name());
                    let name = file.file_name().unwrap_or(file.as_os_str());
                    format!("{n} to {}", name.to_string_lossy())
                }
                ExportTarget::Stdout => format!("{n} {}", side.name()),
            })
        })
        .collect();
    format!("{said} (split by scenario: {})", per_side.join(", "))
}

fn keeps_unsolved(export: &PreparedExport) -> bool {
    matches!(
        export.kind,
        ExportKind::Scenarios {
            keep_unsolved: true
        }
    )
}
