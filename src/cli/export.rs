//! `usersim export --job ID --format openai|hf|sharegpt|nemo_gym|dpo|scenarios
//! --out FILE [--split FRACTION] [filters]`

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::export::dpo::DpoShape;
use crate::export::file_set::FileSet;
use crate::export::scenarios::ScenariosError;
use crate::export::sink::{Output, Outputs};
use crate::export::split::{with_part, Side, Split};
use crate::export::target::{ExportTarget, TargetError};
use crate::export::{self, dpo, ExportError, Filter, Format, MinJudge, SUPPORTED_FORMATS};
use crate::fidelity::UserFlag;
use crate::store::{self, Store};

use super::{DEFAULT_DATABASE, EXIT_INVALID};

#[derive(clap::Args)]
pub struct ExportArgs {
    /// The job whose conversations are exported (for dpo: conversation A of
    /// each pair).
    #[arg(long)]
    job: i64,
    /// Output format, one line per conversation (or pair):
    /// openai (OpenAI chat fine-tuning: messages + tools, arguments as JSON
    /// strings; metadata in the sidecar FILE.metadata.jsonl, same line order);
    /// hf (Hugging Face chat templates / TRL: arguments as objects, every
    /// message with role, content, tool_calls, tool_call_id; a metadata
    /// column); sharegpt (LLaMA-Factory: conversations of from/value with
    /// human, gpt, function_call, observation; system and tools at the top;
    /// a metadata column); nemo_gym (NeMo Gym rollouts of a nemo_gym job);
    /// dpo (preference pairs from --judge's pairwise verdicts, see
    /// --dpo-shape; ties and inconsistent swap checks are skipped; filters
    /// apply to both sides); scenarios (not conversations: the job's
    /// synthesized scenarios its policy solved, as a scenarios JSONL that
    /// `usersim run` reads: the curated dataset; with --keep-unsolved the
    /// unsolved ones too). openai, hf and sharegpt end each conversation
    /// on the policy's last reply.
    #[arg(long, default_value = "openai")]
    format: String,
    /// Output file (written as FILE.partial, then renamed over FILE; an
    /// existing FILE must be a regular file), or - for standard output (no
    /// split, and no openai metadata sidecar).
    #[arg(long)]
    out: PathBuf,
    /// Split by scenario: this share of the job's scenarios (0.01 to 0.99)
    /// goes to train, the rest to validation, never one scenario on both
    /// sides. Writes FILE's name with .train and .validation before its
    /// extension: --out data.jsonl makes data.train.jsonl and
    /// data.validation.jsonl (and data.train.metadata.jsonl, ... for openai).
    #[arg(long, value_name = "FRACTION", value_parser = crate::config::ranges::parse_split)]
    split: Option<f64>,
    /// The seed of --split: the same seed and scenarios give the same split.
    #[arg(long, default_value_t = 0, requires = "split")]
    split_seed: u64,
    /// --format dpo: turn (prompt = every message both conversations share,
    /// possibly ending in a tool result; chosen / rejected = the first
    /// assistant turn where they differ, up to the next tool result or user
    /// message: what DPO trains on), or trajectory (the older whole-rollout
    /// form: prompt up to the last shared user message, each side the rest
    /// of its conversation with tool results and user turns, which DPO would
    /// train on as if the policy wrote them).
    #[arg(long, default_value = "turn", value_parser = parse_dpo_shape)]
    dpo_shape: String,
    /// Keep only conversations with at least this reward.
    #[arg(long, value_parser = crate::config::ranges::parse_finite)]
    min_reward: Option<f64>,
    /// Keep only conversations judge NAME scored at least SCORE (an ok
    /// judgment; unjudged conversations are dropped). Repeatable: all must hold.
    #[arg(long, value_name = "NAME=SCORE")]
    min_judge: Vec<MinJudge>,
    /// Drop conversations pass/fail judge NAME failed (an ok judgment scoring
    /// below 0.5, e.g. a user-fidelity judge's 0). Repeatable. Unjudged,
    /// unparseable and failed judgments drop nothing. The job's own judges
    /// with `drop_flagged = true` are added unless --keep-flagged.
    #[arg(long, value_name = "NAME")]
    drop_flagged: Vec<String>,
    /// Keep conversations the job's `drop_flagged` judges flagged.
    #[arg(long)]
    keep_flagged: bool,
    /// Keep the simulated user's own tool calls and their results (dual
    /// control) in --format hf, as user messages with tool_calls, the tool
    /// messages answering them, and the user's tools in a user_tools column.
    /// Left out by default: the policy never saw them, so they are not its
    /// training data. The other formats have no place for them (OpenAI
    /// rejects a user message with tool_calls): refused there.
    #[arg(long)]
    user_tools: bool,
    /// Drop conversations whose simulated user this deterministic check
    /// flagged (premature_stop, role_confusion, instruction_leak,
    /// invented_fact, repetition, control_token_misuse). Repeatable. The
    /// job's `[user_simulator] drop_flagged` flags are added unless
    /// --keep-user-flagged. Conversations stored before the checks existed
    /// are kept.
    #[arg(long, value_name = "NAME")]
    drop_user_flag: Vec<UserFlag>,
    /// Keep conversations the job's `[user_simulator] drop_flagged` checks flagged.
    #[arg(long)]
    keep_user_flagged: bool,
    /// Keep the conversations of unsolved synthesized scenarios: scenarios
    /// tagged `synthesized` that every planned attempt of this job failed
    /// (left out by default; `usersim stats` lists them). With --format
    /// scenarios: write the unsolved scenarios too.
    #[arg(long)]
    keep_unsolved: bool,
    /// The pairwise judge whose verdicts make --format dpo's pairs.
    #[arg(long, value_name = "NAME")]
    judge: Option<String>,
    #[arg(long, env = "USERSIM_DATABASE", default_value = DEFAULT_DATABASE)]
    database: String,
}

fn parse_dpo_shape(text: &str) -> Result<String, String> {
    DpoShape::parse(text)
        .map(|shape| shape.as_str().to_string())
        .ok_or_else(|| format!("'{text}' is not a DPO shape; one of: turn, trajectory"))
}

/// The formats `--format` takes.
enum Chosen {
    /// The format, and whether to keep the user's own tool calls.
    Lines(Format, bool),
    Dpo(String, DpoShape),
    /// The synthesized scenarios, and whether to keep the unsolved ones.
    Scenarios(bool),
}

pub async fn export(args: ExportArgs) -> anyhow::Result<i32> {
    let chosen = match (args.format.as_str(), args.judge.clone()) {
        ("dpo", Some(judge)) => {
            Chosen::Dpo(judge, DpoShape::parse(&args.dpo_shape).unwrap_or_default())
        }
        ("dpo", None) => {
            eprintln!(
                "--format dpo needs --judge NAME: the pairwise judge whose verdicts make the pairs"
            );
            return Ok(EXIT_INVALID);
        }
        ("scenarios", _) => match conversation_flags(&args) {
            given if given.is_empty() => Chosen::Scenarios(args.keep_unsolved),
            given => {
                eprintln!(
                    "--format scenarios writes the job's synthesized scenarios, not its conversations, so {} do{} not apply; leave {} out",
                    given.join(", "),
                    if given.len() == 1 { "es" } else { "" },
                    if given.len() == 1 { "it" } else { "them" }
                );
                return Ok(EXIT_INVALID);
            }
        },
        (format, judge) => {
            match Format::parse(format) {
                Some(_) if judge.is_some() => {
                    eprintln!("--judge applies to --format dpo only; to filter by a judge's score use --min-judge NAME=SCORE");
                    return Ok(EXIT_INVALID);
                }
                Some(format) => Chosen::Lines(format, args.user_tools),
                None => {
                    eprintln!("--format {format} is not supported; supported formats: {SUPPORTED_FORMATS}");
                    return Ok(EXIT_INVALID);
                }
            }
        }
    };
    if let Some(refusal) = refuse_user_tools(&args, &chosen) {
        eprintln!("{refusal}");
        return Ok(EXIT_INVALID);
    }
    let target = match ExportTarget::check(&args.out) {
        Ok(target) => target,
        Err(e @ TargetError::NotRegular { .. }) => {
            eprintln!("--out {e}, or - for standard output");
            return Ok(EXIT_INVALID);
        }
        Err(e) => return Err(e.into()),
    };
    if args.split.is_some() && target == ExportTarget::Stdout {
        eprintln!("--split writes two files named after --out (FILE.train.jsonl and FILE.validation.jsonl); give a file, not - for standard output");
        return Ok(EXIT_INVALID);
    }
    if let ExportTarget::File(out) = &target {
        let mut paths = output_paths(out, &chosen, args.split.is_some());
        paths.extend(features_of(&chosen).map(|_| features_path(out)));
        for path in paths.iter().chain([&manifest_path(out)]) {
            if let Err(e @ TargetError::NotRegular { .. }) = ExportTarget::check(path) {
                eprintln!("{e} (--out {} writes it)", out.display());
                return Ok(EXIT_INVALID);
            }
        }
    }
    let database = &args.database;
    if let Some(code) = super::refuse_missing_database(database) {
        return Ok(code);
    }
    let store = store::open(database).await?;
    let code = export_from(store.as_ref(), args, chosen, target).await;
    // SQLite folds its write-ahead log back into the file, and removes it, only
    // when the last connection closes: an export leaves nothing beside it.
    store.close().await;
    code
}

/// The export, once the store is open.
async fn export_from(
    store: &dyn Store,
    args: ExportArgs,
    chosen: Chosen,
    target: ExportTarget,
) -> anyhow::Result<i32> {
    let (database, job) = (&args.database, args.job);
    let Some(row) = store.get_job(job).await? else {
        eprintln!("job {job} is not in {database}");
        return Ok(super::EXIT_NOT_FOUND);
    };
    if let Chosen::Lines(Format::NemoGym, _) = chosen {
        if let Err(e) = export::nemo_gym::check_job(store, &row).await {
            eprintln!("{e}");
            return Ok(EXIT_INVALID);
        }
    }
    let mut drop_flagged = args.drop_flagged;
    if !args.keep_flagged {
        for name in crate::jobs::judging::drop_flagged_judges(&row) {
            if !drop_flagged.contains(&name) {
                eprintln!("dropping conversations judge '{name}' flagged (the job's drop_flagged; --keep-flagged keeps them)");
                drop_flagged.push(name);
            }
        }
    }
    let mut drop_user_flags = args.drop_user_flag;
    if !args.keep_user_flagged {
        for flag in crate::jobs::generation::drop_flagged_user_checks(&row) {
            if !drop_user_flags.contains(&flag) {
                eprintln!("dropping conversations the '{flag}' check flagged (the job's [user_simulator] drop_flagged; --keep-user-flagged keeps them)");
                drop_user_flags.push(flag);
            }
        }
    }
    let unsolved = match chosen {
        // The scenarios export decides for itself what to write.
        Chosen::Scenarios(_) => Default::default(),
        _ => super::filters::unsolved_for(store, &row, args.keep_unsolved).await?,
    };
    let filter = Filter {
        min_reward: args.min_reward,
        min_judge: args.min_judge,
        drop_flagged,
        conversations: Default::default(),
        drop_user_flags,
        unsolved,
    };
    if filter.needs_judgments() && !judges_exist(store, job, &filter).await? {
        return Ok(EXIT_INVALID);
    }
    let split = match args.split {
        Some(fraction) => {
            let keys = store.conversation_keys(job).await?;
            Some(Split::new(
                keys.iter().map(|k| k.scenario_id.as_str()),
                fraction,
                args.split_seed,
            ))
        }
        None => None,
    };
    let written = match &target {
        ExportTarget::Stdout => {
            if matches!(chosen, Chosen::Lines(f, _) if f.metadata_in_sidecar()) {
                eprintln!("note: the openai export's metadata goes to a sidecar file, which standard output has no room for; give --out FILE to get FILE.metadata.jsonl");
            }
            let mut writer = BufWriter::new(std::io::stdout());
            let mut outputs = Outputs::One(Output::new(&mut writer, None));
            let written = write_chosen(store, job, &chosen, &filter, &mut outputs, &target).await;
            drop(outputs);
            written.and_then(|w| Ok(writer.flush().map(|()| w)?))
        }
        ExportTarget::File(out) => {
            // Dropped on any error, the partial files are removed.
            let mut paths = output_paths(out, &chosen, split.is_some());
            let features = features_of(&chosen);
            paths.extend(features.as_ref().map(|_| features_path(out)));
            let mut files = FileSet::with_manifest(&paths, &manifest_path(out))?;
            let written = {
                let mut writers = files.writers();
                let mut next = |with_sidecar: bool| {
                    let lines = writers.next();
                    let sidecar = if with_sidecar { writers.next() } else { None };
                    lines.map(|lines| Output::new(lines, sidecar))
                };
                let sidecar = matches!(chosen, Chosen::Lines(f, _) if f.metadata_in_sidecar());
                let outputs = match split {
                    None => next(sidecar).map(Outputs::One),
                    Some(split) => {
                        next(sidecar)
                            .zip(next(sidecar))
                            .map(|(train, validation)| Outputs::Split {
                                split,
                                train,
                                validation,
                            })
                    }
                };
                let Some(mut outputs) = outputs else {
                    anyhow::bail!("no output file to write to");
                };
                write_chosen(store, job, &chosen, &filter, &mut outputs, &target).await
            };
            match written {
                Ok(said) => {
                    // The features file is the set's last.
                    if let (Some(features), Some(writer)) = (&features, files.writers().last()) {
                        serde_json::to_writer_pretty(&mut *writer, features)?;
                        writer.write_all(b"\n")?;
                    }
                    files.commit()?;
                    Ok(said)
                }
                Err(e) => Err(e),
            }
        }
    };
    match written {
        // Said only once the export is where it belongs; on stderr when the
        // export itself is on stdout.
        Ok(said) if target == ExportTarget::Stdout => {
            eprintln!("{said}");
            Ok(0)
        }
        Ok(said) => {
            println!("{said}");
            if let ExportTarget::File(out) = &target {
                if features_of(&chosen).is_some() {
                    println!(
                        "datasets features: {} (pass them to load_dataset as features=Features.from_dict(...) to load several files in one call)",
                        features_path(out).display()
                    );
                }
                println!(
                    "sha256 of every file written: {} (check with sha256sum -c in its folder)",
                    manifest_path(out).display()
                );
            }
            Ok(0)
        }
        Err(e) => match (
            e.downcast_ref::<ExportError>(),
            e.downcast_ref::<ScenariosError>(),
        ) {
            (Some(ExportError::NoJudgments { .. } | ExportError::NotPairwise { .. }), _)
            | (_, Some(ScenariosError::NotGeneration { .. } | ScenariosError::Unreadable { .. })) =>
            {
                eprintln!("{e}");
                Ok(EXIT_INVALID)
            }
            _ => Err(e),
        },
    }
}

/// The files an export to `out` writes, in the order [`Outputs`] takes
/// them: per side (one, or train then validation), the lines, then the
/// sidecar when the format has one.
fn output_paths(out: &Path, chosen: &Chosen, split: bool) -> Vec<PathBuf> {
    let sides: Vec<PathBuf> = if split {
        [Side::Train, Side::Validation]
            .iter()
            .map(|side| with_part(out, side.name()))
            .collect()
    } else {
        vec![out.to_path_buf()]
    };
    let sidecar = matches!(chosen, Chosen::Lines(f, _) if f.metadata_in_sidecar());
    sides
        .into_iter()
        .flat_map(|lines| {
            let meta = sidecar.then(|| with_part(&lines, "metadata"));
            std::iter::once(lines).chain(meta)
        })
        .collect()
}

/// `--user-tools` keeps the simulated user's own tool calls, which only
/// `hf` has a place for: why it cannot be given here, if it cannot.
fn refuse_user_tools(args: &ExportArgs, chosen: &Chosen) -> Option<String> {
    match chosen {
        _ if !args.user_tools => None,
        Chosen::Lines(Format::Hf, _) => None,
        Chosen::Lines(Format::OpenAi, _) => Some(
            "--user-tools keeps the simulated user's own tool calls, which --format openai has \
             no place for: OpenAI's fine-tuning takes tool_calls on assistant messages only (and \
             no user_tools key), so it would reject the file; use --format hf --user-tools (user \
             messages with tool_calls, the tool messages answering them, and the user's tools in \
             a user_tools column)"
                .into(),
        ),
        _ => Some(format!(
            "--user-tools applies to --format hf only: --format {} has no place for the \
             simulated user's own tool calls",
            args.format
        )),
    }
}

/// The features file of an export to `out`: `FILE.features.json`, the
/// `datasets` features of the format (see `export::features`).
fn features_path(out: &Path) -> PathBuf {
    let mut name = out.as_os_str().to_os_string();
    name.push(".features.json");
    PathBuf::from(name)
}

/// The `datasets` features of the chosen format, when it is meant for
/// `datasets`.
fn features_of(chosen: &Chosen) -> Option<serde_json::Value> {
    match chosen {
        Chosen::Lines(format, user_tools) => export::features::of(*format, *user_tools),
        Chosen::Dpo(..) => Some(export::features::dpo()),
        Chosen::Scenarios(_) => None,
    }
}

/// The manifest of an export to `out`: `FILE.sha256`, the sha256 of every
/// file it wrote, renamed into place after them (see `export::file_set`).
fn manifest_path(out: &Path) -> PathBuf {
    let mut name = out.as_os_str().to_os_string();
    name.push(".sha256");
    PathBuf::from(name)
}

/// Write the chosen format to `outputs`; returns what was written, to say
/// once the export is complete.
async fn write_chosen(
    store: &dyn Store,
    job: i64,
    chosen: &Chosen,
    filter: &Filter,
    outputs: &mut Outputs<'_>,
    target: &ExportTarget,
) -> anyhow::Result<String> {
    // A split's two files, as the message names them.
    let shown = match target {
        ExportTarget::File(out) if matches!(outputs, Outputs::Split { .. }) => {
            ExportTarget::File(with_part(out, "{train,validation}"))
        }
        _ => target.clone(),
    };
    let said = match chosen {
        Chosen::Lines(format, user_tools) => {
            let exporter = export::Exporter::new(store, job, *format, filter.clone())
                .with_user_tools(*user_tools);
            lines(exporter, outputs, &shown).await?
        }
        Chosen::Dpo(judge, shape) => {
            pairs(store, job, judge, *shape, filter, outputs, &shown).await?
        }
        Chosen::Scenarios(keep_unsolved) => {
            scenarios(store, job, *keep_unsolved, outputs, &shown).await?
        }
    };
    let sides = outputs.written();
    if sides.len() < 2 {
        return Ok(said);
    }
    let per_side: Vec<String> = sides
        .iter()
        .filter_map(|(side, n)| {
            let side = (*side)?;
            Some(match target {
                ExportTarget::File(out) => {
                    let file = with_part(out, side.name());
                    let name = file.file_name().unwrap_or(file.as_os_str());
                    format!("{n} to {}", name.to_string_lossy())
                }
                ExportTarget::Stdout => format!("{n} {}", side.name()),
            })
        })
        .collect();
    Ok(format!(
        "{said} (split by scenario: {})",
        per_side.join(", ")
    ))
}

/// Whether the judges the filter names have judgments of the job: a
/// `--min-judge` judge without any would leave nothing to export (an error),
/// a `--drop-flagged` one drops nothing (a warning). Says which judges do.
async fn judges_exist(store: &dyn Store, job: i64, filter: &Filter) -> anyhow::Result<bool> {
    let unjudged = filter.judges_without_judgments(&export::judged_by(store, job).await?);
    let listed = unjudged.listed(job);
    for judge in &unjudged.drop_flagged {
        eprintln!("warning: --drop-flagged {judge}: no judgments by '{judge}', so it drops nothing; {listed}");
    }
    for judge in &unjudged.min_judge {
        eprintln!("--min-judge {judge}=…: no judgments by '{judge}', so no conversation would be kept; {listed}");
    }
    Ok(unjudged.min_judge.is_empty())
}

async fn lines(
    exporter: export::Exporter<'_>,
    outputs: &mut Outputs<'_>,
    target: &ExportTarget,
) -> anyhow::Result<String> {
    let progress = Progress::new();
    let counts = export::write_from(exporter, outputs, &mut |c| {
        progress.show(&format!(
            "exported {} conversations ({} skipped)",
            c.written,
            c.skipped.total()
        ))
    })
    .await?;
    progress.clear();
    Ok(format!(
        "wrote {} conversations to {}; skipped {}: {}",
        counts.written,
        target.describe(),
        counts.skipped.total(),
        counts.skipped
    ))
}

async fn pairs(
    store: &dyn Store,
    job: i64,
    judge: &str,
    shape: DpoShape,
    filter: &Filter,
    outputs: &mut Outputs<'_>,
    target: &ExportTarget,
) -> anyhow::Result<String> {
    let progress = Progress::new();
    let counts = dpo::write(store, job, judge, shape, filter, outputs, &mut |c| {
        progress.show(&format!(
            "exported {} pairs ({} skipped)",
            c.written,
            c.skipped()
        ))
    })
    .await?;
    progress.clear();
    Ok(format!(
        "wrote {} DPO pairs ({} shape) to {} from {} judgments by '{judge}'; skipped {}: {}",
        counts.written,
        shape.as_str(),
        target.describe(),
        counts.judgments,
        counts.skipped(),
        counts
    ))
}

/// The flags that filter conversations, given: `--format scenarios` writes
/// none and refuses them.
fn conversation_flags(args: &ExportArgs) -> Vec<&'static str> {
    [
        (args.min_reward.is_some(), "--min-reward"),
        (!args.min_judge.is_empty(), "--min-judge"),
        (!args.drop_flagged.is_empty(), "--drop-flagged"),
        (args.keep_flagged, "--keep-flagged"),
        (args.user_tools, "--user-tools"),
        (!args.drop_user_flag.is_empty(), "--drop-user-flag"),
        (args.keep_user_flagged, "--keep-user-flagged"),
        (args.judge.is_some(), "--judge"),
    ]
    .into_iter()
    .filter_map(|(given, flag)| given.then_some(flag))
    .collect()
}

async fn scenarios(
    store: &dyn Store,
    job: i64,
    keep_unsolved: bool,
    outputs: &mut Outputs<'_>,
    target: &ExportTarget,
) -> anyhow::Result<String> {
    let Some(row) = store.get_job(job).await? else {
        anyhow::bail!("job {job} is no longer in the database");
    };
    let counts = export::scenarios::write(store, &row, keep_unsolved, outputs).await?;
    let which = if keep_unsolved {
        "solved and unsolved"
    } else {
        "solved"
    };
    Ok(format!(
        "wrote {} {which} synthesized scenarios of job {job} to {}; left out: {}",
        counts.written,
        target.describe(),
        counts
    ))
}

/// The export's progress: one line on a terminal, rewritten in place and
/// cleared at the end, so the result is printed once (on stdout); nothing
/// when stderr is not a terminal.
struct Progress {
    terminal: bool,
}

impl Progress {
    fn new() -> Progress {
        use std::io::IsTerminal;
        Progress {
            terminal: std::io::stderr().is_terminal(),
        }
    }

    fn show(&self, line: &str) {
        if self.terminal {
            eprint!("\r\x1b[2K{line}");
        }
    }

    fn clear(&self) {
        if self.terminal {
            eprint!("\r\x1b[2K");
        }
    }
}
