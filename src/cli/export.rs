//! `sparring export --job ID --format openai|hf|sharegpt|nemo_gym|dpo|scenarios
//! --out FILE [--split FRACTION] [filters]`

use std::io::{BufWriter, Write};
use std::path::PathBuf;

use crate::export::curate::CurationRequest;
use crate::export::dpo::DpoShape;
use crate::export::groups::Advantage;
use crate::export::paths::ExportPaths;
use crate::export::prepare::PreparedExport;
use crate::export::request::{CheckedRequest, ExportRequest, FilterRequest, SplitRequest};
use crate::export::sink::{Output, Outputs};
use crate::export::target::ExportTarget;
use crate::export::writing::{self, Written};
use crate::export::MinJudge;
use crate::store::browse::HeldOrBroken;
use crate::store::{self, Store};
use crate::user_checks::UserFlag;

use super::export_said::{print_notices, progress_line, refuse, said};
use super::progress::Counter;
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
    /// `sparring run` reads: the curated dataset; with --keep-unsolved the
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
    #[arg(long, value_name = "FRACTION", value_parser = crate::cli::number_flags::parse_split)]
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
    #[arg(long, value_parser = crate::cli::number_flags::parse_finite)]
    min_reward: Option<f64>,
    /// Keep only probe conversations (scenarios with a `probe` block) whose
    /// agent held the line (held: examples of refusing well) or broke it
    /// (broken); every other conversation is dropped.
    #[arg(long, value_name = "held|broken", value_parser = HeldOrBroken::parse)]
    probe_outcome: Option<HeldOrBroken>,
    /// --format dpo: pairs from probes instead of a judge's verdicts: in each
    /// probe scenario, every conversation whose agent broke the line against
    /// the conversation that held it and shares the longest prompt with it
    /// (chosen: held; rejected: broken).
    #[arg(long, conflicts_with = "judge")]
    probe_pairs: bool,
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
    /// (left out by default; `sparring stats` lists them). With --format
    /// scenarios: write the unsolved scenarios too.
    #[arg(long)]
    keep_unsolved: bool,
    /// Curate: apply a profile's quality gates in order (reward, judges,
    /// simulated-user flags, turn and length bounds, near-duplicate
    /// conversations, caps per stratum, a holdout share by scenario) and
    /// write manifest.json (the funnel, every dropped conversation and why)
    /// and a Hugging Face dataset card README.md beside --out. strict,
    /// generous or a TOML file written as profiles/strict.toml is. A flag
    /// that sets what a profile key sets wins (--min-reward, --split,
    /// --stratify-by, a --min-judge of the same judge); lists add up
    /// (--drop-flagged, --drop-user-flag, --min-judge of other judges).
    #[arg(long, value_name = "strict|generous|FILE.toml")]
    profile: Option<String>,
    /// The strata of --profile's caps and of the manifest's counts: persona,
    /// scenario or metadata.KEY (a key of the conversations' stored
    /// metadata). Wins over the profile's strata.by.
    #[arg(
        long,
        value_name = "persona|scenario|metadata.KEY",
        requires = "profile"
    )]
    stratify_by: Option<String>,
    /// The pairwise judge whose verdicts make --format dpo's pairs.
    #[arg(long, value_name = "NAME")]
    judge: Option<String>,
    /// Each row's advantage in its rollout group (the job's conversations of
    /// its scenario, filtered or not): centered (reward minus the group's
    /// mean reward; the default) or normalized (that, divided by the group's
    /// standard deviation when it is not 0). Written with group_id,
    /// group_size, group_reward_mean and group_reward_std: nemo_gym rows at
    /// the top level, the others in their metadata (openai: the sidecar).
    #[arg(long, value_name = "centered|normalized", value_parser = parse_advantage)]
    advantage: Option<Advantage>,
    #[arg(long, env = "SPARRING_DATABASE", default_value = DEFAULT_DATABASE)]
    database: String,
}

fn parse_advantage(text: &str) -> Result<Advantage, String> {
    Advantage::parse(text).ok_or_else(|| {
        format!(
            "'{text}' is not an advantage; one of: {}",
            Advantage::CHOICES
        )
    })
}

fn parse_dpo_shape(text: &str) -> Result<String, String> {
    DpoShape::parse(text)
        .map(|shape| shape.as_str().to_string())
        .ok_or_else(|| format!("'{text}' is not a DPO shape; one of: turn, trajectory"))
}

impl ExportArgs {
    /// The flags as the library's request.
    fn request(&self) -> ExportRequest {
        ExportRequest {
            job: self.job,
            format: self.format.clone(),
            judge: self.judge.clone(),
            probe_pairs: self.probe_pairs,
            // --dpo-shape has a default, so it counts as given only where it
            // applies (and `scenarios` never refuses it).
            dpo_shape: DpoShape::parse(&self.dpo_shape).filter(|_| self.format == "dpo"),
            user_tools: self.user_tools,
            filters: FilterRequest {
                min_reward: self.min_reward,
                probe_outcome: self.probe_outcome,
                min_judge: self.min_judge.clone(),
                drop_flagged: self.drop_flagged.clone(),
                keep_flagged: self.keep_flagged,
                drop_user_flags: self.drop_user_flag.clone(),
                keep_user_flagged: self.keep_user_flagged,
                keep_unsolved: self.keep_unsolved,
                ..Default::default()
            },
            out: Some(self.out.clone()),
            split: self.split.map(|fraction| SplitRequest {
                fraction,
                seed: self.split_seed,
            }),
            curation: self.profile.as_ref().map(|profile| CurationRequest {
                profile: profile.clone(),
                stratify_by: self.stratify_by.clone(),
            }),
            advantage: self.advantage,
        }
    }
}

pub async fn export(args: ExportArgs) -> anyhow::Result<i32> {
    let checked = match args.request().check() {
        Ok(checked) => checked,
        Err(e) => return refuse(e, &args.database),
    };
    let database = &args.database;
    if let Some(code) = super::refuse_missing_database(database) {
        return Ok(code);
    }
    let store = store::open(database).await?;
    let code = export_from(store.as_ref(), database, checked).await;
    // SQLite folds its write-ahead log back into the file, and removes it, only
    // when the last connection closes: an export leaves nothing beside it.
    store.close().await;
    code
}

/// The export, once the store is open.
async fn export_from(
    store: &dyn Store,
    database: &str,
    checked: CheckedRequest,
) -> anyhow::Result<i32> {
    let mut notices = Vec::new();
    let prepared = checked.prepare(store, &mut notices).await;
    print_notices(&notices);
    let prepared = match prepared {
        Ok(prepared) => prepared,
        Err(e) => return refuse(e, database),
    };
    let Some(target) = prepared.target.clone() else {
        anyhow::bail!("no output file to write to");
    };
    let progress = Counter::new("export", false);
    let mut show = |written: Written| {
        if let Some((done, line)) = progress_line(&written) {
            progress.show(done, None, &line)
        }
    };
    let written = match &target {
        ExportTarget::Stdout => {
            if prepared.kind.metadata_in_sidecar() {
                eprintln!("note: the openai export's metadata goes to a sidecar file, which standard output has no room for; give --out FILE to get FILE.metadata.jsonl");
            }
            write_stdout(store, &prepared, &mut show).await
        }
        ExportTarget::File(out) => writing::write_files(store, &prepared, out, &mut show).await,
    };
    progress.finish();
    match written {
        // Said only once the export is where it belongs; on stderr when the
        // export itself is on stdout.
        Ok(report) => {
            let said = said(&prepared, &report, &target);
            match &target {
                ExportTarget::Stdout => eprintln!("{said}"),
                ExportTarget::File(out) => {
                    println!("{said}");
                    let mut paths = ExportPaths::of(out, &prepared.kind, prepared.split.is_some());
                    if prepared.curated.is_some() {
                        paths = paths.with_curation(out);
                    }
                    if let Some((manifest, card)) = &paths.curated {
                        println!(
                            "curated: {} (the gates' counts and every dropped conversation), dataset card {} (the folder uploads to the Hugging Face Hub as it is)",
                            manifest.display(),
                            card.display()
                        );
                    }
                    if let Some(features) = &paths.features {
                        println!(
                            "datasets features: {} (pass them to load_dataset as features=Features.from_dict(...) to load several files in one call)",
                            features.display()
                        );
                    }
                    println!(
                        "sha256 of every file written: {} (check with sha256sum -c in its folder)",
                        paths.manifest.display()
                    );
                }
            }
            Ok(0)
        }
        Err(e) if e.is_refusal() => {
            eprintln!("{e}");
            Ok(EXIT_INVALID)
        }
        Err(e) => Err(e.into()),
    }
}

/// Write the export to standard output.
async fn write_stdout(
    store: &dyn Store,
    prepared: &PreparedExport,
    show: &mut (dyn FnMut(Written) + Send),
) -> Result<writing::Report, writing::WriteError> {
    let mut writer = BufWriter::new(std::io::stdout());
    let mut outputs = Outputs::One(Output::new(&mut writer, None));
    let written = writing::write_to(store, prepared, &mut outputs, show).await;
    drop(outputs);
    written.and_then(|w| Ok(writer.flush().map(|()| w)?))
}
