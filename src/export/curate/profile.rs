//! A curation profile: the gates' settings, as a TOML file
//! (`--profile FILE.toml`) or one of the built-in profiles written the same
//! way (`profiles/strict.toml`, `profiles/generous.toml`, embedded in the
//! binary). Every key is optional; a table left out turns its gate off.
//! Unknown keys, numbers out of range and bad TOML are [`Problem`]s with the
//! file and line, all of them at once.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use crate::config::ranges::{closed, whole, Real, Whole, DEDUP_PERMUTATIONS, DEDUP_SHINGLE_WORDS};
use crate::diagnostics::problem::{line_col, Problem};
use crate::user_checks::UserFlag;

use super::stratum::StratifyBy;

/// A reward bound: any finite number (rewards are usually in [0, 1]).
pub const REWARD: Real = closed(-1e12, 1e12);
/// A judge's lowest score to keep: any finite number on the judge's scale.
pub const JUDGE_SCORE: Real = closed(-1e12, 1e12);
/// User turns of a conversation.
pub const TURNS: Whole = whole(0, 100_000);
/// Characters of a conversation's messages.
pub const CHARS: Whole = whole(0, 1_000_000_000);
/// Estimated word-shingle Jaccard similarity from which two conversations
/// are near-duplicates.
pub const SIMILARITY: Real = Real {
    min: 0.0,
    min_included: false,
    max: 1.0,
};
/// Conversations kept per stratum.
pub const PER_STRATUM: Whole = whole(1, 1_000_000);
/// The share of scenarios held out (0: none).
pub const HOLDOUT: Real = closed(0.0, 0.99);

/// The built-in profiles, by name.
pub const BUILTIN: &[(&str, &str)] = &[
    ("strict", include_str!("../../../profiles/strict.toml")),
    ("generous", include_str!("../../../profiles/generous.toml")),
];

/// Where a profile comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum ProfileSource {
    Builtin(&'static str),
    File(PathBuf),
}

impl ProfileSource {
    /// `strict`, `generous`, or a path to a TOML file.
    pub fn parse(text: &str) -> ProfileSource {
        match BUILTIN.iter().find(|(name, _)| *name == text) {
            Some((name, _)) => ProfileSource::Builtin(name),
            None => ProfileSource::File(PathBuf::from(text)),
        }
    }

    /// The name the manifest and the card give it: a built-in's name, a
    /// file's name without its folders (nothing of the machine).
    pub fn label(&self) -> String {
        match self {
            ProfileSource::Builtin(name) => (*name).to_string(),
            ProfileSource::File(path) => path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "profile".into()),
        }
    }

    /// The profile, read and checked.
    pub fn load(&self) -> Result<Profile, Vec<Problem>> {
        match self {
            ProfileSource::Builtin(name) => {
                let text = BUILTIN
                    .iter()
                    .find(|(n, _)| n == name)
                    .map(|(_, text)| *text)
                    .unwrap_or_default();
                parse(Path::new(&format!("profiles/{name}.toml")), text)
            }
            ProfileSource::File(path) => match crate::regular_file::read_to_string(path) {
                Ok(text) => parse(path, &text),
                Err(e) => Err(vec![Problem::in_file(
                    path,
                    format!("cannot read the profile ({e}); give strict, generous or a TOML file"),
                )]),
            },
        }
    }
}

/// The gates' settings, checked. `None` turns a gate off.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Profile {
    pub min_reward: Option<f64>,
    /// `(judge, lowest score)`.
    pub min_judge: Vec<(String, f64)>,
    pub drop_flagged: Vec<String>,
    pub drop_user_flags: Vec<UserFlag>,
    pub bounds: Bounds,
    pub near_duplicates: Option<NearDuplicates>,
    pub stratify_by: Option<StratifyBy>,
    pub max_per_stratum: Option<u64>,
    /// The share of scenarios held out, and the seed that picks them.
    pub holdout: Option<(f64, u64)>,
}

/// Turn and length bounds (each optional).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Bounds {
    pub min_turns: Option<u64>,
    pub max_turns: Option<u64>,
    pub min_chars: Option<u64>,
    pub max_chars: Option<u64>,
}

impl Bounds {
    pub fn is_off(&self) -> bool {
        *self == Bounds::default()
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NearDuplicates {
    pub similarity: f64,
    pub shingle_words: u64,
    pub permutations: u64,
}

/// The file as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    reward: Option<RewardTable>,
    judges: Option<JudgesTable>,
    user_flags: Option<UserFlagsTable>,
    bounds: Option<BoundsTable>,
    near_duplicates: Option<NearDuplicatesTable>,
    strata: Option<StrataTable>,
    holdout: Option<HoldoutTable>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RewardTable {
    min: Option<Spanned<f64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct JudgesTable {
    #[serde(default)]
    min: std::collections::BTreeMap<String, Spanned<f64>>,
    #[serde(default)]
    drop_flagged: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct UserFlagsTable {
    #[serde(default)]
    drop: Vec<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct BoundsTable {
    min_turns: Option<Spanned<i64>>,
    max_turns: Option<Spanned<i64>>,
    min_chars: Option<Spanned<i64>>,
    max_chars: Option<Spanned<i64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct NearDuplicatesTable {
    similarity: Spanned<f64>,
    shingle_words: Option<Spanned<i64>>,
    permutations: Option<Spanned<i64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct StrataTable {
    by: Option<Spanned<String>>,
    max_per_stratum: Option<Spanned<i64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct HoldoutTable {
    share: Spanned<f64>,
    #[serde(default)]
    seed: u64,
}

/// `text` read from `file` as a profile: every problem at once.
pub fn parse(file: &Path, text: &str) -> Result<Profile, Vec<Problem>> {
    let written: File =
        toml::from_str(text).map_err(|e| vec![Problem::from_toml_error(file, text, &e)])?;
    let mut checker = Checker {
        file,
        text,
        problems: Vec::new(),
    };
    let profile = checker.profile(written);
    if checker.problems.is_empty() {
        Ok(profile)
    } else {
        Err(checker.problems)
    }
}

struct Checker<'a> {
    file: &'a Path,
    text: &'a str,
    problems: Vec<Problem>,
}

impl Checker<'_> {
    fn at<T>(&mut self, value: &Spanned<T>, field: &str, message: String) {
        let (line, _) = line_col(self.text, value.span().start);
        self.problems.push(Problem::new(
            self.file,
            Some(format!("line {line} ({field})")),
            message,
        ));
    }

    fn real(&mut self, value: Option<&Spanned<f64>>, field: &str, range: Real) -> Option<f64> {
        let value = value?;
        match range.check(*value.get_ref()) {
            None => Some(*value.get_ref()),
            Some(message) => {
                self.at(value, field, message);
                None
            }
        }
    }

    fn whole(&mut self, value: Option<&Spanned<i64>>, field: &str, range: Whole) -> Option<u64> {
        let value = value?;
        let n = *value.get_ref();
        let message = match u64::try_from(n) {
            Ok(n) => match range.check(n) {
                None => return Some(n),
                Some(message) => message,
            },
            Err(_) => format!("{n} is out of range; use {range}"),
        };
        self.at(value, field, message);
        None
    }

    fn profile(&mut self, written: File) -> Profile {
        let mut profile = Profile::default();
        if let Some(reward) = &written.reward {
            profile.min_reward = self.real(reward.min.as_ref(), "reward.min", REWARD);
        }
        if let Some(judges) = written.judges {
            for (name, score) in &judges.min {
                if let Some(score) =
                    self.real(Some(score), &format!("judges.min.{name}"), JUDGE_SCORE)
                {
                    profile.min_judge.push((name.clone(), score));
                }
            }
            profile.drop_flagged = judges.drop_flagged;
        }
        if let Some(flags) = &written.user_flags {
            for name in &flags.drop {
                match UserFlag::parse(name.get_ref()) {
                    Some(flag) if !profile.drop_user_flags.contains(&flag) => {
                        profile.drop_user_flags.push(flag)
                    }
                    Some(_) => {}
                    None => self.at(
                        name,
                        "user_flags.drop",
                        format!(
                            "'{}' is not a user check; one of: {}",
                            name.get_ref(),
                            UserFlag::names()
                        ),
                    ),
                }
            }
        }
        if let Some(b) = &written.bounds {
            profile.bounds = Bounds {
                min_turns: self.whole(b.min_turns.as_ref(), "bounds.min_turns", TURNS),
                max_turns: self.whole(b.max_turns.as_ref(), "bounds.max_turns", TURNS),
                min_chars: self.whole(b.min_chars.as_ref(), "bounds.min_chars", CHARS),
                max_chars: self.whole(b.max_chars.as_ref(), "bounds.max_chars", CHARS),
            };
            for (min, max, field, value) in [
                (
                    profile.bounds.min_turns,
                    profile.bounds.max_turns,
                    "bounds.max_turns",
                    b.max_turns.as_ref(),
                ),
                (
                    profile.bounds.min_chars,
                    profile.bounds.max_chars,
                    "bounds.max_chars",
                    b.max_chars.as_ref(),
                ),
            ] {
                if let (Some(min), Some(max), Some(value)) = (min, max, value) {
                    if max < min {
                        self.at(
                            value,
                            field,
                            format!("{max} is below the minimum {min}; give a maximum at least as large"),
                        );
                    }
                }
            }
        }
        if let Some(n) = &written.near_duplicates {
            let similarity = self.real(
                Some(&n.similarity),
                "near_duplicates.similarity",
                SIMILARITY,
            );
            let shingle_words = self
                .whole(
                    n.shingle_words.as_ref(),
                    "near_duplicates.shingle_words",
                    DEDUP_SHINGLE_WORDS,
                )
                .or(n.shingle_words.is_none().then_some(3));
            let permutations = self
                .whole(
                    n.permutations.as_ref(),
                    "near_duplicates.permutations",
                    DEDUP_PERMUTATIONS,
                )
                .or(n.permutations.is_none().then_some(64));
            if let (Some(similarity), Some(shingle_words), Some(permutations)) =
                (similarity, shingle_words, permutations)
            {
                profile.near_duplicates = Some(NearDuplicates {
                    similarity,
                    shingle_words,
                    permutations,
                });
            }
        }
        if let Some(strata) = &written.strata {
            if let Some(by) = &strata.by {
                match StratifyBy::parse(by.get_ref()) {
                    Ok(by) => profile.stratify_by = Some(by),
                    Err(message) => self.at(by, "strata.by", message),
                }
            }
            profile.max_per_stratum = self.whole(
                strata.max_per_stratum.as_ref(),
                "strata.max_per_stratum",
                PER_STRATUM,
            );
        }
        if let Some(holdout) = &written.holdout {
            if let Some(share) = self.real(Some(&holdout.share), "holdout.share", HOLDOUT) {
                profile.holdout = (share > 0.0).then_some((share, holdout.seed));
            }
        }
        profile
    }
}

#[cfg(test)]
#[path = "profile_tests.rs"]
mod tests;
