//! A job's conversations as the web UI browses them: every conversation the
//! filter keeps, with its reward breakdown and judges' scores, sorted by any
//! column; the values the dropdowns offer; and where one conversation stands
//! among the others (previous / next within the filter).

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::config::Problem;
use crate::judge::Verdict;
use crate::store::{JudgmentRow, Store, StoredConversation};

use super::super::filters::{self, ConversationsQuery, RawConversationsQuery, QUERY_LABEL};
use super::super::ApiError;

/// The browser's query string: the filters, the sort and the page.
#[derive(Debug, Deserialize, Default, Clone)]
pub struct BrowseQuery {
    #[serde(flatten)]
    pub filters: RawConversationsQuery,
    /// A column: `id`, `scenario`, `persona`, `sample`, `termination`,
    /// `reward`, `messages`, `c.COMPONENT` or `j.JUDGE`.
    pub sort: Option<String>,
    /// `asc` or `desc`.
    pub dir: Option<String>,
    /// Rows skipped before this page.
    pub offset: Option<String>,
}

/// [`BrowseQuery`], checked.
#[derive(Debug, Clone)]
pub struct Browse {
    pub filters: ConversationsQuery,
    pub sort: Sort,
    pub offset: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Sort {
    pub column: Column,
    pub descending: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Column {
    Id,
    Scenario,
    Persona,
    Sample,
    Termination,
    Reward,
    Messages,
    Component(String),
    Judge(String),
}

impl Column {
    pub fn parse(text: &str) -> Option<Column> {
        Some(match text {
            "id" => Column::Id,
            "scenario" => Column::Scenario,
            "persona" => Column::Persona,
            "sample" => Column::Sample,
            "termination" => Column::Termination,
            "reward" => Column::Reward,
            "messages" => Column::Messages,
            other => match other.split_once('.') {
                Some(("c", name)) if !name.is_empty() => Column::Component(name.to_string()),
                Some(("j", name)) if !name.is_empty() => Column::Judge(name.to_string()),
                _ => return None,
            },
        })
    }

    pub fn key(&self) -> String {
        match self {
            Column::Id => "id".into(),
            Column::Scenario => "scenario".into(),
            Column::Persona => "persona".into(),
            Column::Sample => "sample".into(),
            Column::Termination => "termination".into(),
            Column::Reward => "reward".into(),
            Column::Messages => "messages".into(),
            Column::Component(name) => format!("c.{name}"),
            Column::Judge(name) => format!("j.{name}"),
        }
    }
}

/// Most rows skipped by `offset`: more than any job holds.
const MAX_OFFSET: usize = 100_000_000;

impl BrowseQuery {
    pub fn check(&self) -> Result<Browse, ApiError> {
        // Every malformed value is reported at once, the filters' first.
        let (filters, mut problems) = match self.filters.check() {
            Ok(filters) => (filters, Vec::new()),
            Err(ApiError::Invalid(problems)) => (ConversationsQuery::default(), problems),
            Err(other) => return Err(other),
        };
        let column = match self.sort.as_deref().map(str::trim) {
            None | Some("") => Column::Id,
            Some(text) => Column::parse(text).unwrap_or_else(|| {
                problems.push(Problem::at_field(
                    QUERY_LABEL,
                    "sort",
                    format!("'{text}' is not a column; sort by id, scenario, persona, sample, termination, reward, messages, c.COMPONENT or j.JUDGE"),
                ));
                Column::Id
            }),
        };
        let descending = match self.dir.as_deref().map(str::trim) {
            None | Some("") | Some("asc") => false,
            Some("desc") => true,
            Some(other) => {
                problems.push(Problem::at_field(
                    QUERY_LABEL,
                    "dir",
                    format!("'{other}' is not a direction; give asc or desc"),
                ));
                false
            }
        };
        let offset = match self.offset.as_deref().map(str::trim) {
            None | Some("") => 0,
            Some(text) => match text.parse::<usize>() {
                Ok(n) if n <= MAX_OFFSET => n,
                _ => {
                    problems.push(Problem::at_field(
                        QUERY_LABEL,
                        "offset",
                        format!("'{text}' is not a row count; give a whole number from 0 to {MAX_OFFSET}"),
                    ));
                    0
                }
            },
        };
        if !problems.is_empty() {
            return Err(ApiError::Invalid(problems));
        }
        Ok(Browse {
            filters,
            sort: Sort { column, descending },
            offset,
        })
    }
}

impl Browse {
    /// The query string of these filters (and sort), for links that keep
    /// them; `extra` pairs are added, and empty values left out.
    pub fn query_string(&self, extra: &[(&str, String)]) -> String {
        let f = &self.filters;
        let number = |v: Option<f64>| v.map(|v| v.to_string()).unwrap_or_default();
        let text = |v: &Option<String>| v.clone().unwrap_or_default();
        let mut pairs: Vec<(&str, String)> = vec![
            ("termination", text(&f.termination)),
            ("scenario", text(&f.scenario)),
            ("persona", text(&f.persona)),
            ("min_reward", number(f.min_reward)),
            ("max_reward", number(f.max_reward)),
            ("min_judge", text(&f.min_judge)),
            ("drop_flagged", text(&f.drop_flagged)),
        ];
        if self.sort.column != Column::Id || self.sort.descending {
            pairs.push(("sort", self.sort.column.key()));
            if self.sort.descending {
                pairs.push(("dir", "desc".into()));
            }
        }
        pairs.extend(extra.iter().cloned());
        pairs.retain(|(_, v)| !v.is_empty());
        serde_urlencoded::to_string(&pairs).unwrap_or_default()
    }

    pub fn is_filtered(&self) -> bool {
        let f = &self.filters;
        f.min_reward.is_some()
            || f.max_reward.is_some()
            || f.termination.is_some()
            || f.scenario.is_some()
            || f.persona.is_some()
            || f.min_judge.is_some()
            || f.drop_flagged.is_some()
    }
}

/// One conversation as a row of the table.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub id: i64,
    pub scenario: String,
    pub persona: String,
    pub sample: i64,
    pub termination: String,
    pub reward: Option<f64>,
    pub messages: usize,
    /// Component name → its score.
    pub components: BTreeMap<String, f64>,
    /// Judge name → its newest `ok` verdict on this conversation (as A).
    pub judges: BTreeMap<String, JudgeCell>,
}

#[derive(Debug, Clone, Serialize)]
pub struct JudgeCell {
    /// What sorts it: the score, or 1/0 for equal/not equal, A/B.
    pub value: Option<f64>,
    pub label: String,
}

/// The values a column's dropdown offers: every one stored in the job.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Options {
    pub terminations: Vec<String>,
    pub scenarios: Vec<String>,
    pub personas: Vec<String>,
}

/// Every conversation of a job the filter keeps, sorted.
#[derive(Debug, Clone)]
pub struct Browsed {
    pub rows: Vec<Row>,
    /// Conversations in the job, kept or not.
    pub total: usize,
    pub components: Vec<String>,
    pub judges: Vec<String>,
    pub options: Options,
}

/// Conversations read from the store per call.
const SCAN_PAGE: u32 = 200;

/// Read job `job_id`'s conversations once, keep those `browse` filters for
/// and sort them.
pub async fn browse(store: &dyn Store, job_id: i64, browse: &Browse) -> Result<Browsed, ApiError> {
    let filter = browse.filters.filter();
    let judge_filter = browse.filters.judge_filter()?;
    let judgment_index = filters::judgments_for(store, job_id, &judge_filter).await?;
    let judgments = store.judgments_of_job(job_id).await?;
    let cells = judge_cells(&judgments);
    let mut rows = Vec::new();
    let mut total = 0;
    let mut components = BTreeSet::new();
    let (mut terminations, mut scenarios, mut personas) =
        (BTreeSet::new(), BTreeSet::new(), BTreeSet::new());
    let mut after = 0;
    loop {
        let page = store.conversations_page(job_id, after, SCAN_PAGE).await?;
        let Some(last) = page.last() else { break };
        after = last.conversation.id;
        for c in &page {
            total += 1;
            let r = &c.conversation;
            terminations.insert(r.termination.clone());
            scenarios.insert(r.scenario_id.clone());
            personas.insert(r.persona_id.clone());
            let row = row_of(c, &cells);
            components.extend(row.components.keys().cloned());
            if filter.keeps(r) && judge_filter.check_judges(r.id, &judgment_index).is_ok() {
                rows.push(row);
            }
        }
    }
    sort_rows(&mut rows, &browse.sort);
    let mut judges: Vec<String> = judgments.iter().map(|j| j.judge_name.clone()).collect();
    judges.sort();
    judges.dedup();
    Ok(Browsed {
        rows,
        total,
        components: components.into_iter().collect(),
        judges,
        options: Options {
            terminations: terminations.into_iter().collect(),
            scenarios: scenarios.into_iter().collect(),
            personas: personas.into_iter().collect(),
        },
    })
}

/// (conversation A, judge) → the newest `ok` judgment's cell.
fn judge_cells(judgments: &[JudgmentRow]) -> BTreeMap<(i64, String), JudgeCell> {
    let mut newest: BTreeMap<(i64, String), &JudgmentRow> = BTreeMap::new();
    for j in judgments.iter().filter(|j| j.status == "ok") {
        let key = (j.conversation_a, j.judge_name.clone());
        if newest.get(&key).is_none_or(|old| old.id < j.id) {
            newest.insert(key, j);
        }
    }
    newest
        .into_iter()
        .map(|(key, j)| (key, cell_of(j)))
        .collect()
}

fn cell_of(j: &JudgmentRow) -> JudgeCell {
    let verdict = j
        .verdict
        .as_ref()
        .and_then(|v| serde_json::from_value::<Verdict>(v.clone()).ok());
    let label = verdict.as_ref().map_or_else(
        || j.score.map_or_else(|| "–".into(), super::display::score),
        Verdict::label,
    );
    let value = j.score.or(match &verdict {
        Some(Verdict::Equivalence { equal }) => Some(f64::from(u8::from(*equal))),
        Some(Verdict::Preference { preference }) => match preference.as_str() {
            "A" => Some(1.0),
            "B" => Some(0.0),
            _ => Some(0.5),
        },
        _ => None,
    });
    JudgeCell { value, label }
}

fn row_of(c: &StoredConversation, cells: &BTreeMap<(i64, String), JudgeCell>) -> Row {
    let r = &c.conversation;
    let components = r
        .reward_breakdown
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(name, part)| {
            part.get("score")
                .and_then(serde_json::Value::as_f64)
                .map(|s| (name.clone(), s))
        })
        .collect();
    let judges = cells
        .range((r.id, String::new())..)
        .take_while(|((id, _), _)| *id == r.id)
        .map(|((_, judge), cell)| (judge.clone(), cell.clone()))
        .collect();
    Row {
        id: r.id,
        scenario: r.scenario_id.clone(),
        persona: r.persona_id.clone(),
        sample: r.sample,
        termination: r.termination.clone(),
        reward: r.reward,
        messages: c.messages.len(),
        components,
        judges,
    }
}

/// Missing values last in either direction; ties in id order.
fn sort_rows(rows: &mut [Row], sort: &Sort) {
    fn numbers(a: Option<f64>, b: Option<f64>, descending: bool) -> Ordering {
        match (a, b) {
            (Some(a), Some(b)) => {
                let o = a.total_cmp(&b);
                if descending {
                    o.reverse()
                } else {
                    o
                }
            }
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (None, None) => Ordering::Equal,
        }
    }
    let d = sort.descending;
    let flip = |o: Ordering| if d { o.reverse() } else { o };
    rows.sort_by(|a, b| {
        let o = match &sort.column {
            Column::Id => flip(a.id.cmp(&b.id)),
            Column::Scenario => flip(a.scenario.cmp(&b.scenario)),
            Column::Persona => flip(a.persona.cmp(&b.persona)),
            Column::Sample => flip(a.sample.cmp(&b.sample)),
            Column::Termination => flip(a.termination.cmp(&b.termination)),
            Column::Reward => numbers(a.reward, b.reward, d),
            Column::Messages => flip(a.messages.cmp(&b.messages)),
            Column::Component(name) => numbers(
                a.components.get(name).copied(),
                b.components.get(name).copied(),
                d,
            ),
            Column::Judge(name) => numbers(
                a.judges.get(name).and_then(|c| c.value),
                b.judges.get(name).and_then(|c| c.value),
                d,
            ),
        };
        o.then(a.id.cmp(&b.id))
    });
}

/// Where conversation `id` stands in `rows`: its 1-based position and its
/// neighbours' ids.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Position {
    pub index: usize,
    pub of: usize,
    pub previous: Option<i64>,
    pub next: Option<i64>,
}

pub fn position(rows: &[Row], id: i64) -> Option<Position> {
    let at = rows.iter().position(|r| r.id == id)?;
    Some(Position {
        index: at + 1,
        of: rows.len(),
        previous: at.checked_sub(1).map(|i| rows[i].id),
        next: rows.get(at + 1).map(|r| r.id),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: i64, reward: Option<f64>, db: Option<f64>) -> Row {
        Row {
            id,
            scenario: format!("s{}", id % 2),
            persona: "p".into(),
            sample: 0,
            termination: "user_stop".into(),
            reward,
            messages: id as usize,
            components: db.map(|d| ("db".to_string(), d)).into_iter().collect(),
            judges: BTreeMap::new(),
        }
    }

    fn ids(rows: &[Row]) -> Vec<i64> {
        rows.iter().map(|r| r.id).collect()
    }

    #[test]
    fn rows_sort_by_any_column_with_missing_values_last_either_way() {
        let mut rows = vec![
            row(1, Some(0.0), Some(0.0)),
            row(2, None, None),
            row(3, Some(1.0), Some(1.0)),
            row(4, Some(0.0), Some(1.0)),
        ];
        let by = |column: &str, descending| Sort {
            column: Column::parse(column).unwrap(),
            descending,
        };
        sort_rows(&mut rows, &by("reward", true));
        assert_eq!(ids(&rows), [3, 1, 4, 2]);
        sort_rows(&mut rows, &by("reward", false));
        assert_eq!(ids(&rows), [1, 4, 3, 2]);
        sort_rows(&mut rows, &by("c.db", false));
        assert_eq!(ids(&rows), [1, 3, 4, 2]);
        sort_rows(&mut rows, &by("scenario", true));
        assert_eq!(ids(&rows), [1, 3, 2, 4]);
        sort_rows(&mut rows, &by("messages", true));
        assert_eq!(ids(&rows), [4, 3, 2, 1]);
        let at = position(&rows, 3).unwrap();
        assert_eq!(
            (at.index, at.of, at.previous, at.next),
            (2, 4, Some(4), Some(2))
        );
        assert_eq!(position(&rows, 4).unwrap().previous, None);
        assert_eq!(position(&rows, 9), None);
    }

    #[test]
    fn an_unknown_column_or_direction_names_what_would_be_right() {
        let query = BrowseQuery {
            filters: RawConversationsQuery {
                min_reward: Some("abc".into()),
                ..RawConversationsQuery::default()
            },
            sort: Some("colour".into()),
            dir: Some("up".into()),
            offset: None,
        };
        let Err(ApiError::Invalid(problems)) = query.check() else {
            panic!("accepted");
        };
        assert_eq!(problems.len(), 3);
        assert!(problems[0].message.contains("'abc' is not a reward"));
        assert!(problems[1].message.contains("c.COMPONENT or j.JUDGE"));
        assert!(problems[2].message.contains("asc or desc"));
    }

    #[test]
    fn links_keep_the_filter_and_sort_and_leave_blanks_out() {
        let query = BrowseQuery {
            filters: RawConversationsQuery {
                termination: Some("max_turns".into()),
                scenario: Some("a b&c".into()),
                min_reward: Some("".into()),
                ..RawConversationsQuery::default()
            },
            sort: Some("reward".into()),
            dir: Some("desc".into()),
            offset: None,
        };
        let browse = query.check().unwrap();
        assert_eq!(
            browse.query_string(&[("offset", "50".into())]),
            "termination=max_turns&scenario=a+b%26c&sort=reward&dir=desc&offset=50"
        );
        assert!(browse.is_filtered());
    }
}
