//! One export request, whoever asks: `sparring export` fills it from its
//! flags, the service's `GET /v1/jobs/{id}/export` from its query string.
//! [`ExportRequest::check`] refuses what cannot be asked without reading the
//! store (a format and the flags it does not take, output files), and
//! [`super::prepare`] completes the rest against the store (the job, the
//! job's own filters, the judges that must exist). Each refusal is a
//! [`RequestError`] that names what was wrong by [`Field`]; the edges word it
//! in their own vocabulary (`--min-judge` or `min_judge`).

use std::path::PathBuf;

use crate::store::browse::HeldOrBroken;
use crate::store::StoreError;
use crate::user_checks::UserFlag;

use crate::config::Problem;

use super::curate::{combine::combine, Curation, CurationRequest, ProfileSource, StratifyBy};
use super::dpo::DpoShape;
use super::groups::Advantage;
pub use super::kind::{ExportKind, PairSource};
use super::paths::ExportPaths;
use super::target::{ExportTarget, TargetError};
use super::{CorruptJudgment, ExportError, Format, MinJudge, UnjudgedJudges};

/// What was asked, as the edge read it.
#[derive(Debug, Clone, Default)]
pub struct ExportRequest {
    pub job: i64,
    /// The format's name as given: openai, hf, sharegpt, nemo_gym, dpo or
    /// scenarios.
    pub format: String,
    /// The pairwise judge whose verdicts make `dpo`'s pairs.
    pub judge: Option<String>,
    /// `dpo`'s pairs from probes: a held against a broken conversation of
    /// the same scenario, instead of a judge's verdicts.
    pub probe_pairs: bool,
    /// `dpo`'s shape, when given (turn otherwise). Given with `scenarios`, it
    /// is refused as a filter that does not apply.
    pub dpo_shape: Option<DpoShape>,
    /// Keep the simulated user's own tool calls (`hf` only).
    pub user_tools: bool,
    pub filters: FilterRequest,
    /// The file to write (`-`: standard output); `None` when the caller
    /// takes the rows itself (the service's response).
    pub out: Option<PathBuf>,
    /// Split by scenario into train and validation files.
    pub split: Option<SplitRequest>,
    /// `--profile` (and `--stratify-by`): curate with quality gates.
    pub curation: Option<CurationRequest>,
    /// How the rows' advantages are written, when given (centred
    /// otherwise); rows of one conversation each only.
    pub advantage: Option<Advantage>,
}

/// The conditions on the exported conversations, as asked.
#[derive(Debug, Clone, Default)]
pub struct FilterRequest {
    pub min_reward: Option<f64>,
    pub max_reward: Option<f64>,
    pub termination: Option<String>,
    pub scenario: Option<String>,
    pub persona: Option<String>,
    /// Probe conversations that held the line, or broke it.
    pub probe_outcome: Option<HeldOrBroken>,
    pub min_judge: Vec<MinJudge>,
    pub drop_flagged: Vec<String>,
    /// Keep what the job's own `drop_flagged` judges flagged.
    pub keep_flagged: bool,
    pub drop_user_flags: Vec<UserFlag>,
    /// Keep what the job's `[user_simulator] drop_flagged` checks flagged.
    pub keep_user_flagged: bool,
    /// Keep the conversations of unsolved synthesized scenarios (with
    /// `scenarios`: write the unsolved scenarios too).
    pub keep_unsolved: bool,
    /// Values the edge could not read (a query's `min_judge=high`): refused
    /// with the filter, once the job is found, each field's together.
    pub malformed: Vec<Malformed>,
    /// Lists given without a value in them (a query's `drop_flagged=,`):
    /// they filter nothing, yet count as given where no filter applies.
    pub empty_lists: Vec<Field>,
}

/// A value of `field` that does not read, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Malformed {
    pub field: Field,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SplitRequest {
    /// The share of scenarios that goes to train.
    pub fraction: f64,
    pub seed: u64,
}

/// What a request names, for refusals to point at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    MinReward,
    MaxReward,
    Termination,
    Scenario,
    Persona,
    ProbeOutcome,
    MinJudge,
    DropFlagged,
    KeepFlagged,
    UserTools,
    DropUserFlag,
    KeepUserFlagged,
    Judge,
    ProbePairs,
    DpoShape,
    Advantage,
}

/// Why an export cannot be made as asked.
#[derive(Debug, thiserror::Error)]
pub enum RequestError {
    #[error("format {0} is not supported")]
    UnknownFormat(String),
    #[error("dpo needs the pairwise judge whose verdicts make the pairs, or probe pairs")]
    DpoNeedsJudge,
    #[error("a judge applies to dpo only")]
    JudgeNotDpo,
    /// Probe pairs asked of a format that is not dpo.
    #[error("probe pairs apply to dpo only")]
    ProbePairsNotDpo,
    /// Both a judge and probe pairs: dpo's pairs come from one of them.
    #[error("dpo's pairs come from a judge or from probes, not both")]
    JudgeAndProbePairs,
    /// `advantage` with `dpo`, whose rows are pairs, not rollouts of a group.
    #[error("advantage applies to rows of one conversation, not dpo's pairs")]
    AdvantageNotDpo,
    /// `scenarios` writes no conversations: these filters were given.
    #[error("scenarios takes no conversation filter")]
    NotForScenarios(Vec<Field>),
    /// The user's tool calls were asked for in a format other than hf.
    #[error("only hf keeps the user's tool calls")]
    UserToolsNotHf { format: String },
    /// The output file itself cannot be written.
    #[error(transparent)]
    Out(TargetError),
    #[error("a split writes two files, not standard output")]
    SplitToStdout,
    /// Another file the export writes beside `out` is no regular file.
    #[error("{error}")]
    Writes { out: PathBuf, error: TargetError },
    #[error("job {0} does not exist")]
    NoJob(i64),
    /// `nemo_gym` of a job that is not a NeMo Gym job (or the store failed
    /// finding out).
    #[error(transparent)]
    NotNemoGym(ExportError),
    #[error("query values do not read")]
    Malformed(Vec<Malformed>),
    /// `min_judge` judges without any judgments of the job: nothing would
    /// be kept.
    #[error("judges without judgments")]
    Unjudged { job: i64, unjudged: UnjudgedJudges },
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Corrupt(#[from] CorruptJudgment),
    /// The profile does not read: each problem with its file and line.
    #[error("the curation profile does not read")]
    Profile(Vec<Problem>),
    /// `--stratify-by` names no stratum (the message says what would).
    #[error("{0}")]
    StratifyBy(String),
    /// A curated export's `README.md` or `manifest.json` would replace a
    /// file no curated export wrote (a project's own README).
    #[error("{} exists and was not written by a curated export", .0.display())]
    NotOurs(PathBuf),
    /// The curation's pass over the store failed.
    #[error(transparent)]
    Curate(ExportError),
    /// A curated export of synthesized scenarios (they are not conversations).
    #[error("scenarios are not curated: a profile's gates apply to conversations")]
    CurateScenarios,
}

/// A request whose format and outputs are checked; what is left needs the
/// store ([`CheckedRequest::prepare`]).
#[derive(Debug, Clone)]
pub struct CheckedRequest {
    pub job: i64,
    pub kind: ExportKind,
    pub filters: FilterRequest,
    pub target: Option<ExportTarget>,
    pub split: Option<SplitRequest>,
    pub curation: Option<Curation>,
    pub advantage: Advantage,
}

impl ExportRequest {
    /// The format and the flags it takes, then the output files: what can
    /// be refused before the store is opened.
    pub fn check(mut self) -> Result<CheckedRequest, RequestError> {
        let kind = self.kind()?;
        let target = match &self.out {
            Some(out) => Some(ExportTarget::check(out).map_err(RequestError::Out)?),
            None => None,
        };
        let curation = self.curation(&kind, &target)?;
        if self.split.is_some() && target == Some(ExportTarget::Stdout) {
            return Err(RequestError::SplitToStdout);
        }
        if let Some(ExportTarget::File(out)) = &target {
            let mut paths = ExportPaths::of(out, &kind, self.split.is_some());
            if curation.is_some() {
                paths = paths.with_curation(out);
            }
            for path in paths.curated.iter().flat_map(|(m, c)| [m, c]) {
                if !super::curate::card::replaceable(path) {
                    return Err(RequestError::NotOurs(path.clone()));
                }
            }
            for path in paths.all() {
                if let Err(error @ TargetError::NotRegular { .. }) = ExportTarget::check(&path) {
                    return Err(RequestError::Writes {
                        out: out.clone(),
                        error,
                    });
                }
            }
        }
        Ok(CheckedRequest {
            job: self.job,
            kind,
            filters: self.filters,
            target,
            split: self.split,
            curation,
            advantage: self.advantage.unwrap_or_default(),
        })
    }

    /// The profile read and combined with the flags (see
    /// [`super::curate::combine`]); a holdout only where files are written.
    fn curation(
        &mut self,
        kind: &ExportKind,
        target: &Option<ExportTarget>,
    ) -> Result<Option<Curation>, RequestError> {
        let Some(asked) = &self.curation else {
            return Ok(None);
        };
        if matches!(kind, ExportKind::Scenarios { .. }) {
            return Err(RequestError::CurateScenarios);
        }
        let source = ProfileSource::parse(&asked.profile);
        let profile = source.load().map_err(RequestError::Profile)?;
        let stratify_by = match &asked.stratify_by {
            Some(text) => Some(StratifyBy::parse(text).map_err(RequestError::StratifyBy)?),
            None => profile.stratify_by.clone(),
        };
        let files = matches!(target, Some(ExportTarget::File(_)));
        combine(&profile, &mut self.filters, &mut self.split, files);
        Ok(Some(Curation {
            label: source.label(),
            profile,
            stratify_by,
        }))
    }

    fn kind(&self) -> Result<ExportKind, RequestError> {
        let kind = match (self.format.as_str(), &self.judge) {
            ("scenarios", _) => match self.conversation_filters() {
                given if given.is_empty() => ExportKind::Scenarios {
                    keep_unsolved: self.filters.keep_unsolved,
                },
                given => return Err(RequestError::NotForScenarios(given)),
            },
            ("dpo", Some(_)) if self.probe_pairs => return Err(RequestError::JudgeAndProbePairs),
            ("dpo", _)
                if self.advantage.is_some() && (self.judge.is_some() || self.probe_pairs) =>
            {
                return Err(RequestError::AdvantageNotDpo)
            }
            ("dpo", Some(judge)) => ExportKind::Dpo {
                pairs: PairSource::Judge(judge.clone()),
                shape: self.dpo_shape.unwrap_or_default(),
            },
            ("dpo", None) if self.probe_pairs => ExportKind::Dpo {
                pairs: PairSource::Probe,
                shape: self.dpo_shape.unwrap_or_default(),
            },
            ("dpo", None) => return Err(RequestError::DpoNeedsJudge),
            (other, judge) => match Format::parse(other) {
                None => return Err(RequestError::UnknownFormat(other.to_string())),
                Some(_) if judge.is_some() => return Err(RequestError::JudgeNotDpo),
                Some(_) if self.probe_pairs => return Err(RequestError::ProbePairsNotDpo),
                Some(format) => ExportKind::Lines {
                    format,
                    user_tools: self.user_tools,
                },
            },
        };
        // The user's own tool calls have a place in hf only.
        match &kind {
            ExportKind::Lines {
                format: Format::Hf, ..
            } => Ok(kind),
            _ if self.user_tools => Err(RequestError::UserToolsNotHf {
                format: self.format.clone(),
            }),
            _ => Ok(kind),
        }
    }

    /// The conversation filters given: `scenarios` writes none and refuses
    /// them.
    fn conversation_filters(&self) -> Vec<Field> {
        let f = &self.filters;
        let given_anyway =
            |field| f.malformed.iter().any(|m| m.field == field) || f.empty_lists.contains(&field);
        [
            (f.min_reward.is_some(), Field::MinReward),
            (f.max_reward.is_some(), Field::MaxReward),
            (f.termination.is_some(), Field::Termination),
            (f.scenario.is_some(), Field::Scenario),
            (f.persona.is_some(), Field::Persona),
            (f.probe_outcome.is_some(), Field::ProbeOutcome),
            (!f.min_judge.is_empty(), Field::MinJudge),
            (!f.drop_flagged.is_empty(), Field::DropFlagged),
            (f.keep_flagged, Field::KeepFlagged),
            (self.user_tools, Field::UserTools),
            (!f.drop_user_flags.is_empty(), Field::DropUserFlag),
            (f.keep_user_flagged, Field::KeepUserFlagged),
            (self.judge.is_some(), Field::Judge),
            (self.probe_pairs, Field::ProbePairs),
            (self.dpo_shape.is_some(), Field::DpoShape),
            (self.advantage.is_some(), Field::Advantage),
        ]
        .into_iter()
        .filter_map(|(given, field)| (given || given_anyway(field)).then_some(field))
        .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asked(format: &str) -> ExportRequest {
        ExportRequest {
            job: 1,
            format: format.into(),
            ..Default::default()
        }
    }

    #[test]
    fn each_format_is_its_kind_and_dpo_needs_a_judge() {
        let kind = |r: ExportRequest| r.check().map(|c| c.kind);
        assert!(matches!(
            kind(asked("nemo-gym")),
            Ok(ExportKind::Lines {
                format: Format::NemoGym,
                user_tools: false
            })
        ));
        assert!(matches!(
            kind(asked("dpo")),
            Err(RequestError::DpoNeedsJudge)
        ));
        let judged = |format| ExportRequest {
            judge: Some("preference".into()),
            ..asked(format)
        };
        assert!(matches!(
            kind(judged("dpo")),
            Ok(ExportKind::Dpo {
                shape: DpoShape::Turn,
                ..
            })
        ));
        assert!(matches!(
            kind(judged("openai")),
            Err(RequestError::JudgeNotDpo)
        ));
        assert!(matches!(
            kind(judged("parquet")),
            Err(RequestError::UnknownFormat(f)) if f == "parquet"
        ));
    }

    #[test]
    fn the_user_tools_stay_in_hf_only() {
        let with_tools = |format| ExportRequest {
            user_tools: true,
            ..asked(format)
        };
        assert!(with_tools("hf").check().is_ok());
        for format in ["openai", "sharegpt", "nemo_gym"] {
            assert!(
                matches!(
                    with_tools(format).check(),
                    Err(RequestError::UserToolsNotHf { format: f }) if f == format
                ),
                "{format}"
            );
        }
    }

    #[test]
    fn scenarios_refuses_every_conversation_filter_given_in_one_order() {
        let request = ExportRequest {
            judge: Some("j".into()),
            dpo_shape: Some(DpoShape::Trajectory),
            filters: FilterRequest {
                persona: Some("p".into()),
                min_reward: Some(0.5),
                keep_flagged: true,
                malformed: vec![Malformed {
                    field: Field::DropUserFlag,
                    message: "no such flag".into(),
                }],
                empty_lists: vec![Field::MinJudge],
                ..Default::default()
            },
            ..asked("scenarios")
        };
        let Err(RequestError::NotForScenarios(given)) = request.check() else {
            panic!("scenarios took conversation filters");
        };
        assert_eq!(
            given,
            [
                Field::MinReward,
                Field::Persona,
                Field::MinJudge,
                Field::KeepFlagged,
                Field::DropUserFlag,
                Field::Judge,
                Field::DpoShape
            ]
        );
        let keep = ExportRequest {
            filters: FilterRequest {
                keep_unsolved: true,
                ..Default::default()
            },
            ..asked("scenarios")
        };
        assert!(matches!(
            keep.check().map(|c| c.kind),
            Ok(ExportKind::Scenarios {
                keep_unsolved: true
            })
        ));
    }

    #[test]
    fn a_split_needs_files_and_every_file_must_be_regular() {
        let dir = tempfile::tempdir().unwrap();
        let split = Some(SplitRequest {
            fraction: 0.5,
            seed: 0,
        });
        let to = |out: PathBuf, split| ExportRequest {
            out: Some(out),
            split,
            ..asked("openai")
        };
        assert!(matches!(
            to("-".into(), split).check(),
            Err(RequestError::SplitToStdout)
        ));
        let out = dir.path().join("data.jsonl");
        std::fs::create_dir(dir.path().join("data.validation.metadata.jsonl")).unwrap();
        assert!(to(out.clone(), None).check().is_ok());
        match to(out.clone(), split).check() {
            Err(RequestError::Writes { out: o, error }) => {
                assert_eq!(o, out);
                assert!(error.to_string().contains("data.validation.metadata.jsonl"));
            }
            other => panic!("{other:?}"),
        }
    }
}
