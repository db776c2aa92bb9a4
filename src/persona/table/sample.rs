//! Drawing a table's rows: seeded, reproducible, memory bounded by the sample.
//!
//! Each row gets a key, the first 8 bytes of SHA-256(seed as 8 little-endian
//! bytes ‖ the row's id) read big-endian; a sample is the rows of smallest
//! keys. So the same seed draws the same people from the same table however
//! it is written (CSV, JSONL, Parquet, in any row order), and a row's fate
//! depends only on its own id.
//!
//! Without `stratify_by`, one pass keeps the `N` smallest keys (a heap of `N`
//! rows). With it, a first pass counts the rows of each stratum (the
//! combination of the columns' values, numbers by exact value), the sample is
//! divided among the strata, and a second pass keeps each stratum's smallest
//! keys. Division: `proportional` gives stratum `i` of `cᵢ` rows out of `T`
//! the floor of `N·cᵢ/T`, and the rows left over go one each to the strata of
//! largest remainders (ties by the strata's values); `equal` gives each of
//! `S` strata `N/S` the same way, and a stratum with fewer rows than its
//! share gives all it has, its shortfall shared among the others (smallest
//! strata first). A sample larger than the rows that pass the filter is
//! every such row.

use std::collections::{BTreeMap, BinaryHeap};
use std::path::Path;

use serde_json::Value;

use crate::config::file::Allocation;

use super::filter::Expr;
use super::source::for_each_row;
use super::{Place, Row, TableError};

pub struct Plan<'a> {
    pub table: &'a Path,
    /// The id column.
    pub id: &'a str,
    pub filter: Option<&'a Expr>,
    pub stratify_by: &'a [String],
    pub allocation: Allocation,
    pub seed: u64,
    /// `None`: every row that passes the filter.
    pub size: Option<u64>,
    /// Adds the derived attributes to a row before it is filtered or
    /// stratified (so both may use them).
    pub derive: &'a dyn Fn(&mut Row) -> Result<(), TableError>,
}

#[derive(Debug)]
pub enum SampleError {
    /// The filter passed no row.
    NobodySelected,
    Table(TableError),
}

impl From<TableError> for SampleError {
    fn from(e: TableError) -> Self {
        SampleError::Table(e)
    }
}

/// Rows read between two calls of `progress`.
const PROGRESS_EVERY: u64 = 65_536;

/// The chosen rows, in table order.
pub fn draw(plan: &Plan<'_>, progress: &mut dyn FnMut(u64)) -> Result<Vec<Row>, SampleError> {
    let mut read = 0u64;
    let mut tick = |progress: &mut dyn FnMut(u64)| {
        read += 1;
        if read.is_multiple_of(PROGRESS_EVERY) {
            progress(read);
        }
    };
    let mut checked = false;
    let mut counts: BTreeMap<Vec<String>, u64> = BTreeMap::new();
    let mut everyone = Vec::new();
    // One pass counts the strata, or keeps every row when there is no sample.
    for_each_row(plan.table, &mut |mut row| {
        tick(progress);
        (plan.derive)(&mut row)?;
        if !checked {
            check_columns(plan, &row)?;
            checked = true;
        }
        id_of(plan, &row)?;
        if plan.filter.is_some_and(|f| !f.matches(&row.columns)) {
            return Ok(());
        }
        *counts.entry(stratum_of(plan, &row)).or_default() += 1;
        if plan.size.is_none() {
            everyone.push(row);
        }
        Ok(())
    })?;
    let total: u64 = counts.values().sum();
    if total == 0 {
        return Err(SampleError::NobodySelected);
    }
    let chosen = match plan.size {
        None => everyone,
        Some(n) if n >= total => keep_smallest(plan, &counts, progress)?,
        Some(n) => {
            let quotas = match plan.allocation {
                Allocation::Proportional => proportional(&counts, n),
                Allocation::Equal => equal(&counts, n),
            };
            keep_smallest(plan, &quotas, progress)?
        }
    };
    check_unique(plan.table, plan.id, &chosen)?;
    Ok(chosen)
}

/// Every column the plan reads is in the table (checked on its first row).
fn check_columns(plan: &Plan<'_>, row: &Row) -> Result<(), TableError> {
    let mut wanted: Vec<(&str, &str)> = vec![(plan.id, "the id column")];
    wanted.extend(plan.stratify_by.iter().map(|c| (c.as_str(), "stratify_by")));
    if let Some(filter) = plan.filter {
        wanted.extend(
            filter
                .columns()
                .into_iter()
                .map(|c| (c, "the where filter")),
        );
    }
    for (column, used_by) in wanted {
        if !row.columns.contains_key(column) {
            return Err(missing_column(plan.table, row, column, used_by));
        }
    }
    Ok(())
}

pub fn missing_column(table: &Path, row: &Row, column: &str, used_by: &str) -> TableError {
    let columns: Vec<&str> = row.columns.keys().map(String::as_str).collect();
    TableError::table(
        table,
        Some(row.place),
        format!(
            "has no column `{column}` ({used_by}); the table's columns are: {}",
            columns.join(", ")
        ),
    )
}

/// A row's id as text; a row without one is an error.
pub fn id_of(plan: &Plan<'_>, row: &Row) -> Result<String, TableError> {
    match row.columns.get(plan.id) {
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
        Some(v @ Value::Number(_)) => Ok(v.to_string()),
        Some(_) => Err(TableError::table(
            plan.table,
            Some(row.place),
            format!(
                "has no id in column `{}`; every person needs a unique id",
                plan.id
            ),
        )),
        None => Err(missing_column(plan.table, row, plan.id, "the id column")),
    }
}

fn stratum_of(plan: &Plan<'_>, row: &Row) -> Vec<String> {
    plan.stratify_by
        .iter()
        .map(|c| match row.columns.get(c) {
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
            None => "null".into(),
        })
        .collect()
}

/// A row's place in the draw: smaller keys are drawn first.
pub fn row_key(seed: u64, id: &str) -> u64 {
    super::super::knobs::seeded_u64(seed, id)
}

/// A row in a stratum's heap: the largest key on top, to be pushed out.
struct Kept {
    key: u64,
    row: Row,
}

impl PartialEq for Kept {
    fn eq(&self, other: &Self) -> bool {
        (self.key, self.row.place) == (other.key, other.row.place)
    }
}
impl Eq for Kept {}
impl PartialOrd for Kept {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Kept {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.key, self.row.place).cmp(&(other.key, other.row.place))
    }
}

/// A second pass keeping each stratum's `quota` rows of smallest keys.
fn keep_smallest(
    plan: &Plan<'_>,
    quotas: &BTreeMap<Vec<String>, u64>,
    progress: &mut dyn FnMut(u64),
) -> Result<Vec<Row>, TableError> {
    let mut heaps: BTreeMap<&Vec<String>, BinaryHeap<Kept>> = BTreeMap::new();
    let mut read = 0u64;
    for_each_row(plan.table, &mut |mut row| {
        read += 1;
        if read.is_multiple_of(PROGRESS_EVERY) {
            progress(read);
        }
        (plan.derive)(&mut row)?;
        if plan.filter.is_some_and(|f| !f.matches(&row.columns)) {
            return Ok(());
        }
        let stratum = stratum_of(plan, &row);
        let Some((stratum, &quota)) = quotas.get_key_value(&stratum) else {
            return Ok(());
        };
        if quota == 0 {
            return Ok(());
        }
        let key = row_key(plan.seed, &id_of(plan, &row)?);
        let heap = heaps.entry(stratum).or_default();
        if (heap.len() as u64) < quota {
            heap.push(Kept { key, row });
        } else if heap.peek().is_some_and(|top| key < top.key) {
            heap.pop();
            heap.push(Kept { key, row });
        }
        Ok(())
    })?;
    let mut rows: Vec<Row> = heaps
        .into_values()
        .flat_map(|heap| heap.into_iter().map(|kept| kept.row))
        .collect();
    rows.sort_by_key(|row| row.place);
    Ok(rows)
}

fn check_unique(table: &Path, id: &str, rows: &[Row]) -> Result<(), TableError> {
    let mut seen: BTreeMap<String, Place> = BTreeMap::new();
    for row in rows {
        let value = row.columns.get(id).map(|v| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        });
        if let Some(value) = value {
            if let Some(first) = seen.insert(value.clone(), row.place) {
                return Err(TableError::table(
                    table,
                    Some(row.place),
                    format!(
                        "repeats the id '{value}' of {first} (column `{id}`); ids must be \
                         unique, they key the job's items"
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Largest-remainder shares of `n` by weights `(stratum, numerator)` over
/// `denominator`, no stratum given more than `cap`.
fn largest_remainder(
    shares: &[(&Vec<String>, u128)],
    denominator: u128,
    n: u64,
) -> BTreeMap<Vec<String>, u64> {
    let mut quotas: BTreeMap<Vec<String>, u64> = BTreeMap::new();
    let mut remainders: Vec<(u128, &Vec<String>)> = Vec::new();
    let mut given = 0u64;
    for (stratum, numerator) in shares {
        let exact = u128::from(n) * numerator;
        let floor = (exact / denominator) as u64;
        given += floor;
        quotas.insert((*stratum).clone(), floor);
        remainders.push((exact % denominator, stratum));
    }
    // Largest remainder first; ties by the strata's values.
    remainders.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    for (_, stratum) in remainders.into_iter().take((n - given) as usize) {
        if let Some(q) = quotas.get_mut(stratum) {
            *q += 1;
        }
    }
    quotas
}

/// Each stratum's share of `n` in proportion to its rows (`n` < the rows).
pub fn proportional(counts: &BTreeMap<Vec<String>, u64>, n: u64) -> BTreeMap<Vec<String>, u64> {
    let total: u64 = counts.values().sum();
    let shares: Vec<(&Vec<String>, u128)> =
        counts.iter().map(|(s, c)| (s, u128::from(*c))).collect();
    largest_remainder(&shares, u128::from(total), n)
}

/// The same share of `n` for each stratum; a stratum with fewer rows gives
/// all it has and the others share its shortfall (`n` < the rows).
pub fn equal(counts: &BTreeMap<Vec<String>, u64>, n: u64) -> BTreeMap<Vec<String>, u64> {
    let mut by_size: Vec<(&Vec<String>, u64)> = counts.iter().map(|(s, c)| (s, *c)).collect();
    by_size.sort_by_key(|(s, c)| (*c, (*s).clone()));
    let mut quotas = BTreeMap::new();
    let mut left = n;
    let mut rest = by_size.as_slice();
    // Strata too small for an equal share of what is left give all they have.
    while let Some(((stratum, count), others)) = rest.split_first() {
        let strata = rest.len() as u64;
        if count * strata <= left {
            quotas.insert((*stratum).clone(), *count);
            left -= count;
            rest = others;
        } else {
            break;
        }
    }
    let shares: Vec<(&Vec<String>, u128)> = rest.iter().map(|(s, _)| (*s, 1)).collect();
    if !shares.is_empty() {
        quotas.extend(largest_remainder(&shares, shares.len() as u128, left));
    }
    quotas
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strata(counts: &[(&str, u64)]) -> BTreeMap<Vec<String>, u64> {
        counts
            .iter()
            .map(|(s, c)| (vec![s.to_string()], *c))
            .collect()
    }

    fn quota(quotas: &BTreeMap<Vec<String>, u64>, s: &str) -> u64 {
        quotas[&vec![s.to_string()]]
    }

    #[test]
    fn proportional_shares_round_by_largest_remainder_and_add_up() {
        let counts = strata(&[("a", 500), ("b", 300), ("c", 200)]);
        let quotas = proportional(&counts, 7);
        // 3.5, 2.1, 1.4: floors 3 + 2 + 1 = 6, the one left goes to a (.5).
        assert_eq!(
            (
                quota(&quotas, "a"),
                quota(&quotas, "b"),
                quota(&quotas, "c")
            ),
            (4, 2, 1)
        );
    }

    #[test]
    fn equal_shares_pass_a_small_strata_shortfall_to_the_others() {
        let counts = strata(&[("a", 2), ("b", 100), ("c", 100)]);
        let quotas = equal(&counts, 30);
        assert_eq!(quota(&quotas, "a"), 2);
        assert_eq!(quota(&quotas, "b") + quota(&quotas, "c"), 28);
        assert_eq!(quota(&quotas, "b"), 14);
        let quotas = equal(&strata(&[("a", 10), ("b", 10), ("c", 10)]), 10);
        assert_eq!(quotas.values().sum::<u64>(), 10);
        assert!(quotas.values().all(|q| *q == 3 || *q == 4));
    }

    #[test]
    fn a_row_key_depends_on_the_seed_and_the_id_only() {
        assert_eq!(row_key(1, "a"), row_key(1, "a"));
        assert_ne!(row_key(1, "a"), row_key(2, "a"));
        assert_ne!(row_key(1, "a"), row_key(1, "b"));
    }
}
