//! `GET /v1/jobs/{id}/export`: the query string read into the library's
//! export request (`export::request`), its refusals as 400, 404 and 422
//! answers, and the export streamed (lines) or written whole (DPO pairs,
//! scenarios) as the response body.

use axum::body::{Body, Bytes};
use axum::extract::{Path as UrlPath, Query, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use crate::config::Problem;
use crate::export::curate::{CurationRequest, ProfileSource};
use crate::export::groups::Advantage;
use crate::export::prepare::PreparedExport;
use crate::export::request::{ExportKind, ExportRequest, Field, FilterRequest, Malformed};
use crate::export::sink::{Output, Outputs};
use crate::export::writing::{self, WriteError};
use crate::export::{self, ExportError, MinJudge};
use crate::store::browse::HeldOrBroken;
use crate::store::Store;
use crate::user_checks::UserFlag;

use super::export_refusal::{invalid, invalid_query, refusal};
use super::filters::{given, names, reward_bound, A_REWARD, QUERY_LABEL};
use super::query_values::{refuse_unparsed, Number};
use super::{ApiError, AppState};

#[derive(Debug, Deserialize)]
pub struct ExportQuery {
    pub format: Option<String>,
    /// Checked by [`ExportQuery::request`] (see
    /// [`super::filters::RawConversationsQuery`]).
    pub min_reward: Option<String>,
    pub max_reward: Option<String>,
    /// The conversation browser's filters, so that its download link
    /// exports what it shows.
    pub termination: Option<String>,
    pub scenario: Option<String>,
    pub persona: Option<String>,
    /// `held` or `broken`: probe conversations whose agent held the line, or not.
    pub probe_outcome: Option<String>,
    pub min_judge: Option<String>,
    pub drop_flagged: Option<String>,
    /// Keep conversations the job's own `drop_flagged` judges failed.
    #[serde(default)]
    pub keep_flagged: bool,
    /// Deterministic user checks whose flagged conversations are dropped,
    /// comma-separated (`sparring export --drop-user-flag`).
    pub drop_user_flag: Option<String>,
    /// Keep conversations the job's `[user_simulator] drop_flagged` checks flagged.
    #[serde(default)]
    pub keep_user_flagged: bool,
    /// Keep the conversations of unsolved synthesized scenarios (left out by
    /// default); `format=scenarios`: write the unsolved scenarios too.
    #[serde(default)]
    pub keep_unsolved: bool,
    /// The pairwise judge whose verdicts make `format=dpo`'s pairs.
    pub judge: Option<String>,
    /// `format=dpo`: pairs from probes (held against broken) instead.
    #[serde(default)]
    pub probe_pairs: bool,
    /// `format=dpo`: `turn` (the default) or `trajectory`.
    pub dpo_shape: Option<String>,
    /// Each row's advantage in its rollout group: `centered` (the default)
    /// or `normalized`.
    pub advantage: Option<String>,
    /// Curate with a built-in profile (`strict`, `generous`; a profile file
    /// is the CLI's).
    pub profile: Option<String>,
    /// With `profile`: the strata of its caps.
    pub stratify_by: Option<String>,
}

impl ExportQuery {
    pub fn format_name(&self) -> &str {
        self.format.as_deref().unwrap_or("openai")
    }

    /// The query as the library's request. A reward bound that is not a
    /// number is a 400 and one out of range a 422, as is an unknown
    /// `dpo_shape`: refused before the job is looked up. A malformed
    /// `drop_user_flag` or `min_judge` is refused by the request once the
    /// job is found.
    pub fn request(&self, job: i64) -> Result<ExportRequest, ApiError> {
        refuse_unparsed(&[
            ("min_reward", &self.min_reward, Number::Real, A_REWARD),
            ("max_reward", &self.max_reward, Number::Real, A_REWARD),
        ])?;
        let mut problems = Vec::new();
        let min_reward = reward_bound("min_reward", &self.min_reward, &mut problems);
        let max_reward = reward_bound("max_reward", &self.max_reward, &mut problems);
        if !problems.is_empty() {
            return Err(ApiError::Invalid(problems));
        }
        let dpo_shape = match given(&self.dpo_shape) {
            None => None,
            Some(text) => Some(export::dpo::DpoShape::parse(text).ok_or_else(|| {
                ApiError::Invalid(vec![Problem::at_field(
                    QUERY_LABEL,
                    "dpo_shape",
                    format!("'{text}' is not a DPO shape; one of: turn, trajectory"),
                )])
            })?),
        };
        let advantage = match given(&self.advantage) {
            None => None,
            Some(text) => Some(Advantage::parse(text).ok_or_else(|| {
                invalid(
                    "advantage",
                    format!(
                        "'{text}' is not an advantage; one of: {}",
                        Advantage::CHOICES
                    ),
                )
            })?),
        };
        let curation = self.curation()?;
        let mut malformed = Vec::new();
        let drop_user_flags = parsed(
            &self.drop_user_flag,
            Field::DropUserFlag,
            UserFlag::from_user,
            &mut malformed,
        );
        let min_judge = parsed(
            &self.min_judge,
            Field::MinJudge,
            |text| text.parse::<MinJudge>(),
            &mut malformed,
        );
        let probe_outcome = match given(&self.probe_outcome).map(HeldOrBroken::parse) {
            Some(Err(message)) => {
                malformed.push(Malformed {
                    field: Field::ProbeOutcome,
                    message,
                });
                None
            }
            Some(Ok(outcome)) => Some(outcome),
            None => None,
        };
        let text = |v: &Option<String>| given(v).map(str::to_string);
        let empty_lists = [
            (Field::MinJudge, &self.min_judge),
            (Field::DropFlagged, &self.drop_flagged),
            (Field::DropUserFlag, &self.drop_user_flag),
        ]
        .into_iter()
        .filter(|(_, list)| given(list).is_some() && names(list.as_deref()).is_empty())
        .map(|(field, _)| field)
        .collect();
        Ok(ExportRequest {
            job,
            format: self.format_name().to_string(),
            judge: self.judge.clone(),
            probe_pairs: self.probe_pairs,
            dpo_shape,
            user_tools: false,
            filters: FilterRequest {
                min_reward,
                max_reward,
                termination: text(&self.termination),
                scenario: text(&self.scenario),
                persona: text(&self.persona),
                probe_outcome,
                min_judge,
                drop_flagged: names(self.drop_flagged.as_deref()),
                keep_flagged: self.keep_flagged,
                drop_user_flags,
                keep_user_flagged: self.keep_user_flagged,
                keep_unsolved: self.keep_unsolved,
                malformed,
                empty_lists,
            },
            out: None,
            split: None,
            curation,
            advantage,
        })
    }

    /// `profile` (a built-in one only: the service reads no file it was
    /// not given inside its data root) and `stratify_by`.
    fn curation(&self) -> Result<Option<CurationRequest>, ApiError> {
        match (given(&self.profile), given(&self.stratify_by)) {
            (None, None) => Ok(None),
            (None, Some(_)) => Err(invalid("stratify_by", "stratify_by applies with profile=strict or profile=generous only")),
            (Some(profile), _) if ProfileSource::parse(profile) == ProfileSource::File(profile.into()) => Err(invalid(
                "profile",
                format!("'{profile}' is not a built-in profile; use strict or generous (a profile file is `sparring export --profile FILE.toml`'s)"),
            )),
            (Some(profile), stratify_by) => Ok(Some(CurationRequest {
                profile: profile.to_string(),
                stratify_by: stratify_by.map(str::to_string),
            })),
        }
    }
}

/// The comma-separated values of `text`, read by `read`; each that does not
/// read is malformed at `field`.
fn parsed<T>(
    text: &Option<String>,
    field: Field,
    read: impl Fn(&str) -> Result<T, String>,
    malformed: &mut Vec<Malformed>,
) -> Vec<T> {
    let mut out = Vec::new();
    for part in names(text.as_deref()) {
        match read(&part) {
            Ok(value) => out.push(value),
            Err(message) => malformed.push(Malformed { field, message }),
        }
    }
    out
}

/// Chunks queued between the exporter and the connection at most: the
/// export's memory is this many store pages, however big the job.
const EXPORT_CHUNKS_IN_FLIGHT: usize = 2;

#[tracing::instrument(skip(state))]
pub(super) async fn export_job(
    State(state): State<AppState>,
    UrlPath(id): UrlPath<i64>,
    Query(query): Query<ExportQuery>,
) -> Result<Response, ApiError> {
    let request = query.request(id)?;
    let prepared = export::prepare::prepare(state.store.as_ref(), request, &mut Vec::new())
        .await
        .map_err(refusal)?;
    let body = match prepared.kind {
        ExportKind::Lines { .. } => stream_lines(state.store.clone(), prepared),
        _ => whole(state.store.as_ref(), &prepared).await?,
    };
    let file = format!(
        "attachment; filename=\"job{id}-{}.jsonl\"",
        query.format_name()
    );
    Ok((
        [
            (header::CONTENT_TYPE, "application/jsonl".to_string()),
            (header::CONTENT_DISPOSITION, file),
        ],
        body,
    )
        .into_response())
}

/// The export's lines, streamed as the exporter reads them page by page.
fn stream_lines(store: std::sync::Arc<dyn Store>, prepared: PreparedExport) -> Body {
    let (chunks, receiver) = tokio::sync::mpsc::channel(EXPORT_CHUNKS_IN_FLIGHT);
    let id = prepared.row.id;
    tokio::spawn(async move {
        let mut exporter = prepared.exporter(store.as_ref());
        loop {
            let next = exporter.next_chunk().await;
            let end = !matches!(next, Ok(Some(_)));
            let chunk = match next {
                Ok(Some(chunk)) if chunk.is_empty() => continue,
                Ok(Some(chunk)) => Ok(Bytes::from(chunk)),
                Ok(None) => break,
                Err(e) => {
                    // The response has started: ending the body with an error
                    // makes the client see a broken transfer, not a short file.
                    tracing::error!(job = id, "export failed: {}", super::error::error_chain(&e));
                    Err(std::io::Error::other("export failed"))
                }
            };
            if chunks.send(chunk).await.is_err() || end {
                break;
            }
        }
    });
    let stream = futures_util::stream::unfold(receiver, |mut receiver| async move {
        receiver.recv().await.map(|chunk| (chunk, receiver))
    });
    Body::from_stream(stream)
}

/// DPO pairs or synthesized scenarios, written whole before the response
/// starts: the DPO writer holds the job's judgments of its judge in memory
/// anyway, and scenarios are far fewer than conversations; a judge without
/// judgments, or a job without scenarios to read, is then a 422 instead of
/// a broken transfer.
async fn whole(store: &dyn Store, prepared: &PreparedExport) -> Result<Body, ApiError> {
    let mut out = Vec::new();
    let mut sink = Outputs::One(Output::new(&mut out, None));
    let written = writing::write_to(store, prepared, &mut sink, &mut |_| {}).await;
    drop(sink);
    match written {
        Ok(_) => Ok(Body::from(out)),
        Err(WriteError::Export(
            e @ (ExportError::NoJudgments { .. } | ExportError::NotPairwise { .. }),
        )) => Err(invalid_query("judge", e)),
        Err(e @ WriteError::Scenarios(_)) if e.is_refusal() => {
            Err(invalid("format", e.to_string()))
        }
        Err(WriteError::Export(e)) => Err(e.into()),
        Err(e) => Err(ApiError::Internal(super::error::error_chain(&e))),
    }
}
