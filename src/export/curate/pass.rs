//! The first pass of a curated export: every stored conversation of the job,
//! page by page in id order (deterministic), through the gates in order. What
//! it keeps is a set of ids the export's filter then holds to; what it counts
//! is the funnel, the flag rates and what the card says of the data.
//! Memory: the job's judgment scores (as every filtered export holds them),
//! the kept ids, the kept conversations' MinHash signatures (when
//! near-duplicates are dropped) and the dropped ones' reasons.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use crate::export::request::{ExportKind, SplitRequest};
use crate::export::split::{Side, Split};
use crate::export::{line_of, metadata, ExportError, Filter, JudgmentIndex, Skip};
use crate::store::{JobRow, Store, StoredConversation};
use crate::user_checks::{UserChecks, UserFlag};

use super::funnel::{Entry, Funnel};
use super::gates::{self, Gate, Stop};
use super::near_duplicates::NearDuplicateIndex;
use super::{stratum, CuratedSet, Curation};

const PAGE: u32 = 200;

/// What the first pass found.
#[derive(Debug, Clone)]
pub struct Curated {
    pub curation: Curation,
    pub set: Arc<CuratedSet>,
    pub funnel: Funnel,
    /// The train/validation split of the kept conversations' scenarios.
    pub split: Option<Split>,
    /// Kept conversations per stratum on each side.
    pub sides: BTreeMap<String, BTreeMap<&'static str, u64>>,
    /// Conversations the stratum cap did not hold because they have no
    /// stratum ([`stratum::NONE`]: no persona, for `persona`).
    pub uncapped: u64,
    pub facts: Facts,
}

/// What the card says of how the data was made, from stored rows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Facts {
    pub job: i64,
    pub job_name: String,
    pub job_kind: String,
    pub policy_models: BTreeSet<String>,
    pub user_models: BTreeSet<String>,
    pub environments: BTreeSet<String>,
    /// Judge name → the models its calls used.
    pub judges: BTreeMap<String, BTreeSet<String>>,
    /// Per user check: conversations it flagged, of those it ran on (every
    /// conversation of the job with stored checks).
    pub flags: Vec<(UserFlag, u64, u64)>,
    pub scenarios_kept: usize,
}

/// Run the gates of `curation` over job `job`'s conversations, with the
/// export's `filter` (flags and profile combined) and `kind` (whose format
/// must be able to write a kept conversation); `split` is the holdout.
pub async fn curate(
    store: &dyn Store,
    job: &JobRow,
    filter: &Filter,
    kind: &ExportKind,
    curation: &Curation,
    split: Option<crate::export::request::SplitRequest>,
) -> Result<Curated, ExportError> {
    let judgments = JudgmentIndex::build(store.judgments_of_job(job.id).await?)?;
    let judge_names = judgments.judges();
    let mut state = State::new(filter, &judgments, &judge_names, kind, curation);
    let mut funnel = Funnel::default();
    let mut ids = HashSet::new();
    let mut kept: Vec<(String, String)> = Vec::new();
    let mut facts = Facts {
        job: job.id,
        job_name: job.name.clone(),
        job_kind: job.kind.as_str().to_string(),
        ..Facts::default()
    };
    let mut flag_counts: BTreeMap<UserFlag, (u64, u64)> = BTreeMap::new();
    let mut after = 0;
    loop {
        let page = store.conversations_page(job.id, after, PAGE).await?;
        let Some(last) = page.last() else { break };
        after = last.conversation.id;
        for c in &page {
            count_flags(c, &mut flag_counts);
            let row = &c.conversation;
            let stratum = stratum::of(curation.stratify_by.as_ref(), row);
            let stopped = state.gates(c, &stratum)?;
            let entry = Entry {
                conversation: row.id,
                scenario: &row.scenario_id,
                persona: &row.persona_id,
                stratum: &stratum,
            };
            if stopped.is_none() {
                ids.insert(row.id);
                for (models, model) in [
                    (&mut facts.policy_models, &row.policy_model),
                    (&mut facts.user_models, &row.user_model),
                ] {
                    if !model.trim().is_empty() {
                        models.insert(model.clone());
                    }
                }
                if let Some(env) = row.metadata.get("environment").and_then(|e| e.as_str()) {
                    facts.environments.insert(env.to_string());
                }
                kept.push((row.scenario_id.clone(), stratum.clone()));
            }
            funnel.record(&entry, stopped);
        }
    }
    let split = split.map(|SplitRequest { fraction, seed }| {
        Split::new(kept.iter().map(|(s, _)| s.as_str()), fraction, seed)
    });
    let mut sides: BTreeMap<String, BTreeMap<&'static str, u64>> = BTreeMap::new();
    for (scenario, stratum) in &kept {
        funnel.held(stratum);
        let side = split.as_ref().map_or(Side::Train, |s| s.side(scenario));
        *sides
            .entry(stratum.clone())
            .or_default()
            .entry(side.name())
            .or_default() += 1;
    }
    let uncapped = state.uncapped;
    facts.scenarios_kept = kept.iter().map(|(s, _)| s).collect::<BTreeSet<_>>().len();
    facts.flags = flag_counts
        .into_iter()
        .map(|(flag, (flagged, checked))| (flag, flagged, checked))
        .collect();
    for (judge, model) in store.judge_models_of_job(job.id).await? {
        facts.judges.entry(judge).or_default().insert(model);
    }
    for name in judge_names {
        facts.judges.entry(name).or_default();
    }
    Ok(Curated {
        curation: curation.clone(),
        set: Arc::new(CuratedSet { job: job.id, ids }),
        funnel,
        split,
        sides,
        uncapped,
        facts,
    })
}

fn count_flags(c: &StoredConversation, counts: &mut BTreeMap<UserFlag, (u64, u64)>) {
    let Ok(Some(checks)) = UserChecks::from_stored(c.conversation.user_checks.as_ref()) else {
        return;
    };
    for flag in UserFlag::ALL {
        if checks.outcome(flag) == crate::user_checks::Outcome::Unknown {
            continue;
        }
        let (flagged, checked) = counts.entry(flag).or_default();
        *checked += 1;
        if checks.is_flagged(flag) {
            *flagged += 1;
        }
    }
}

/// The gates' state through the pass.
struct State<'a> {
    filter: &'a Filter,
    judgments: &'a JudgmentIndex,
    judge_names: &'a [String],
    kind: &'a ExportKind,
    curation: &'a Curation,
    near: Option<NearDuplicateIndex>,
    per_stratum: HashMap<String, u64>,
    uncapped: u64,
}

impl<'a> State<'a> {
    fn new(
        filter: &'a Filter,
        judgments: &'a JudgmentIndex,
        judge_names: &'a [String],
        kind: &'a ExportKind,
        curation: &'a Curation,
    ) -> State<'a> {
        State {
            filter,
            judgments,
            judge_names,
            kind,
            curation,
            near: curation
                .profile
                .near_duplicates
                .as_ref()
                .map(NearDuplicateIndex::new),
            per_stratum: HashMap::new(),
            uncapped: 0,
        }
    }

    /// Where `c` stops, if it does; a kept conversation is counted in its
    /// stratum and remembered for near-duplicates.
    fn gates(
        &mut self,
        c: &StoredConversation,
        stratum: &str,
    ) -> Result<Option<Stop>, ExportError> {
        let checks = gates::selection(self.filter, c)
            .and_then(|()| gates::reward(self.filter, c))
            .and_then(|()| gates::judges(self.filter, self.judgments, c))
            .and_then(|()| gates::user_flags(self.filter, c))
            .and_then(|()| gates::bounds(&self.curation.profile.bounds, c));
        if let Err(stop) = checks {
            return Ok(Some(stop));
        }
        if let ExportKind::Lines { format, user_tools } = self.kind {
            let metadata = metadata::of(c, self.judgments, self.judge_names, None);
            if let Err(skip) = line_of(*format, c, &metadata, *user_tools)? {
                return Ok(Some(Stop {
                    gate: Gate::Format,
                    reason: format_reason(skip).into(),
                }));
            }
        }
        let mut signature = None;
        if let Some(near) = &self.near {
            let sig = near.signature(&gates::dialogue_text(c));
            if let Some(repeat) = near.check(&sig) {
                return Ok(Some(Stop {
                    gate: Gate::NearDuplicates,
                    reason: format!(
                        "{:.2} alike to conversation {}, kept earlier",
                        repeat.similarity, repeat.of
                    ),
                }));
            }
            signature = Some(sig);
        }
        if let Some(max) = self.curation.profile.max_per_stratum {
            // Without a stratum (no persona) there is nothing to cap by.
            if stratum == stratum::NONE {
                self.uncapped += 1;
                if let (Some(near), Some(sig)) = (&mut self.near, signature) {
                    near.insert(c.conversation.id, sig);
                }
                return Ok(None);
            }
            let n = self.per_stratum.entry(stratum.to_string()).or_default();
            if *n >= max {
                return Ok(Some(Stop {
                    gate: Gate::StratumCap,
                    reason: format!("stratum '{stratum}' already has its {max} conversations"),
                }));
            }
            *n += 1;
        }
        if let (Some(near), Some(sig)) = (&mut self.near, signature) {
            near.insert(c.conversation.id, sig);
        }
        Ok(None)
    }
}

fn format_reason(skip: Skip) -> &'static str {
    match skip {
        Skip::NoPolicyReply => "the policy never replied: nothing to train on",
        Skip::ArgumentsNotAnObject => "a tool call's arguments are not a JSON object",
        Skip::NotShareGpt => "its turns do not alternate as ShareGPT requires",
        _ => "the format cannot write it",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::curate::profile::{NearDuplicates, Profile};
    use crate::export::curate::test_rows::conversation;
    use crate::export::Format;

    fn curation(near: bool, max_per_stratum: Option<u64>) -> Curation {
        Curation {
            label: "test".into(),
            profile: Profile {
                near_duplicates: near.then_some(NearDuplicates {
                    similarity: 0.9,
                    shingle_words: 3,
                    permutations: 64,
                }),
                max_per_stratum,
                ..Profile::default()
            },
            stratify_by: Some(crate::export::curate::StratifyBy::Persona),
        }
    }

    const SAID: &[(&str, &str)] = &[
        (
            "user",
            "I would like to return the blue lamp from my last order please",
        ),
        (
            "assistant",
            "Of course, I have started the return of the blue lamp for you",
        ),
    ];

    /// Where each conversation stops, in order.
    fn stops(
        curation: &Curation,
        kind: &ExportKind,
        conversations: &[StoredConversation],
    ) -> Vec<Option<Gate>> {
        let (filter, judgments) = (Filter::default(), JudgmentIndex::default());
        let mut state = State::new(&filter, &judgments, &[], kind, curation);
        conversations
            .iter()
            .map(|c| {
                let stratum = stratum::of(curation.stratify_by.as_ref(), &c.conversation);
                state.gates(c, &stratum).unwrap().map(|s| s.gate)
            })
            .collect()
    }

    fn lines(format: Format) -> ExportKind {
        ExportKind::Lines {
            format,
            user_tools: false,
        }
    }

    #[test]
    fn a_repeat_is_dropped_before_it_counts_toward_its_strata_cap() {
        let other = [
            (
                "user",
                "Where is my parcel, it should have arrived on Monday",
            ),
            ("assistant", "Let me look up the tracking of your parcel"),
        ];
        let conversations = [
            conversation(1, "s1", "p", Some(1.0), SAID),
            conversation(2, "s1", "p", Some(1.0), SAID),
            conversation(3, "s2", "p", Some(1.0), &other),
            conversation(4, "s3", "q", Some(1.0), &other),
        ];
        let kind = lines(Format::Hf);
        // The repeat (2) takes none of p's two places, so 3 has one.
        assert_eq!(
            stops(&curation(true, Some(2)), &kind, &conversations),
            [
                None,
                Some(Gate::NearDuplicates),
                None,
                Some(Gate::NearDuplicates)
            ]
        );
        assert_eq!(
            stops(&curation(false, Some(1)), &kind, &conversations),
            [None, Some(Gate::StratumCap), Some(Gate::StratumCap), None]
        );
        assert_eq!(
            stops(&curation(false, None), &kind, &conversations),
            [None, None, None, None]
        );
        // Without a persona, the per-persona cap holds nothing.
        let personless: Vec<StoredConversation> = (1..=4)
            .map(|i| conversation(i, &format!("s{i}"), "", Some(1.0), &other))
            .collect();
        assert_eq!(
            stops(&curation(false, Some(1)), &kind, &personless),
            [None, None, None, None]
        );
    }

    #[test]
    fn the_format_gate_drops_what_the_format_cannot_write_before_near_duplicates() {
        let silent = conversation(1, "s", "p", Some(1.0), &[("user", "hello?")]);
        let fine = conversation(2, "s", "p", Some(1.0), SAID);
        for format in [Format::OpenAi, Format::Hf, Format::ShareGpt] {
            assert_eq!(
                stops(
                    &curation(true, Some(1)),
                    &lines(format),
                    &[silent.clone(), fine.clone()]
                ),
                [Some(Gate::Format), None],
                "{format:?}"
            );
        }
        // DPO pairs are made later: no format gate here.
        let dpo = ExportKind::Dpo {
            pairs: crate::export::kind::PairSource::Judge("pref".into()),
            shape: crate::export::dpo::DpoShape::Turn,
        };
        assert_eq!(stops(&curation(false, None), &dpo, &[silent]), [None]);
    }
}
