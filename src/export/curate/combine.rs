//! How a profile and the export's explicit flags combine: a flag that sets
//! what a profile key sets wins (`--min-reward` over `reward.min`, `--split`
//! over `holdout`, `--stratify-by` over `strata.by`, a `--min-judge` of a
//! judge over the profile's score for it); lists add up (`--drop-flagged`,
//! `--drop-user-flag` and the profile's lists, each name once). The job's
//! own `drop_flagged` judges and checks are added as for any export, unless
//! `--keep-flagged` / `--keep-user-flagged`.

use crate::export::request::{FilterRequest, SplitRequest};
use crate::export::MinJudge;

use super::profile::Profile;

/// `filters` and `split` with the profile's settings where the flags left
/// them unset. `files`: the export writes files (a holdout needs two).
pub fn combine(
    profile: &Profile,
    filters: &mut FilterRequest,
    split: &mut Option<SplitRequest>,
    files: bool,
) {
    if filters.min_reward.is_none() {
        filters.min_reward = profile.min_reward;
    }
    for (judge, score) in &profile.min_judge {
        if !filters.min_judge.iter().any(|m| &m.judge == judge) {
            filters.min_judge.push(MinJudge {
                judge: judge.clone(),
                score: *score,
            });
        }
    }
    for judge in &profile.drop_flagged {
        if !filters.drop_flagged.contains(judge) {
            filters.drop_flagged.push(judge.clone());
        }
    }
    for flag in &profile.drop_user_flags {
        if !filters.drop_user_flags.contains(flag) {
            filters.drop_user_flags.push(*flag);
        }
    }
    if let (None, Some((share, seed)), true) = (&split, profile.holdout, files) {
        *split = Some(SplitRequest {
            fraction: 1.0 - share,
            seed,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::user_checks::UserFlag;

    #[test]
    fn a_flag_wins_over_the_profile_and_lists_add_up() {
        let profile = Profile {
            min_reward: Some(1.0),
            min_judge: vec![("helpful".into(), 7.0), ("policy".into(), 5.0)],
            drop_flagged: vec!["fidelity".into()],
            drop_user_flags: vec![UserFlag::Repetition, UserFlag::RoleConfusion],
            holdout: Some((0.1, 3)),
            ..Profile::default()
        };
        let mut filters = FilterRequest {
            min_reward: Some(0.5),
            min_judge: vec!["helpful=9".parse().unwrap()],
            drop_flagged: vec!["other".into()],
            drop_user_flags: vec![UserFlag::Repetition],
            ..Default::default()
        };
        let mut split = None;
        combine(&profile, &mut filters, &mut split, true);
        assert_eq!(filters.min_reward, Some(0.5));
        let judges: Vec<(String, f64)> = filters
            .min_judge
            .iter()
            .map(|m| (m.judge.clone(), m.score))
            .collect();
        assert_eq!(judges, [("helpful".into(), 9.0), ("policy".into(), 5.0)]);
        assert_eq!(filters.drop_flagged, ["other", "fidelity"]);
        assert_eq!(
            filters.drop_user_flags,
            [UserFlag::Repetition, UserFlag::RoleConfusion]
        );
        let split = split.unwrap();
        assert!((split.fraction - 0.9).abs() < 1e-12 && split.seed == 3);

        // An explicit split wins; no files, no holdout.
        let mut explicit = Some(SplitRequest {
            fraction: 0.5,
            seed: 0,
        });
        combine(&profile, &mut FilterRequest::default(), &mut explicit, true);
        assert_eq!(explicit.unwrap().fraction, 0.5);
        let mut none = None;
        combine(&profile, &mut FilterRequest::default(), &mut none, false);
        assert!(none.is_none());
    }
}
