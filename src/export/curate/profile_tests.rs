use super::*;
use proptest::prelude::*;

fn parsed(text: &str) -> Result<Profile, Vec<Problem>> {
    parse(Path::new("p.toml"), text)
}

#[test]
fn the_built_in_profiles_read() {
    for (name, _) in BUILTIN {
        let profile = ProfileSource::parse(name).load().unwrap();
        assert!(profile.min_reward.is_some(), "{name}");
        assert!(profile.near_duplicates.is_some(), "{name}");
        assert!(profile.holdout.is_some(), "{name}");
    }
    let strict = ProfileSource::Builtin("strict").load().unwrap();
    assert_eq!(strict.drop_user_flags.len(), UserFlag::ALL.len());
    assert_eq!(strict.stratify_by, Some(StratifyBy::Persona));
    assert_eq!(ProfileSource::parse("dir/mine.toml").label(), "mine.toml");
}

#[test]
fn every_key_reads_into_its_setting() {
    let p = parsed(
        "[reward]\nmin = 0.5\n[judges]\nmin = { helpful = 7 }\ndrop_flagged = [\"fid\"]\n\
         [user_flags]\ndrop = [\"repetition\", \"repetition\"]\n\
         [bounds]\nmin_turns = 2\nmax_turns = 9\nmax_chars = 100\n\
         [near_duplicates]\nsimilarity = 0.8\n\
         [strata]\nby = \"metadata.environment\"\nmax_per_stratum = 5\n\
         [holdout]\nshare = 0.2\nseed = 7\n",
    )
    .unwrap();
    assert_eq!(p.min_reward, Some(0.5));
    assert_eq!(p.min_judge, [("helpful".to_string(), 7.0)]);
    assert_eq!(p.drop_flagged, ["fid"]);
    assert_eq!(p.drop_user_flags, [UserFlag::Repetition]);
    assert_eq!(
        p.bounds,
        Bounds {
            min_turns: Some(2),
            max_turns: Some(9),
            min_chars: None,
            max_chars: Some(100)
        }
    );
    assert_eq!(
        p.near_duplicates,
        Some(NearDuplicates {
            similarity: 0.8,
            shingle_words: 3,
            permutations: 64
        })
    );
    assert_eq!(p.max_per_stratum, Some(5));
    assert_eq!(p.holdout, Some((0.2, 7)));
    assert_eq!(parsed("").unwrap(), Profile::default());
    assert_eq!(parsed("[holdout]\nshare = 0\n").unwrap().holdout, None);
}

#[test]
fn bad_profiles_name_the_file_and_line_and_what_is_wrong() {
    let cases = [
        ("[reward]\nminimum = 1\n", "line 2", "unknown field"),
        ("[rewards]\n", "line 1", "unknown field"),
        (
            "[reward]\nmin = 1\n[holdout]\nshare = 1.5\n",
            "line 4",
            "out of range",
        ),
        ("[bounds]\nmin_turns = -1\n", "line 2", "out of range"),
        (
            "[bounds]\nmin_turns = 5\nmax_turns = 2\n",
            "line 3",
            "below the minimum",
        ),
        (
            "[near_duplicates]\nsimilarity = 0\n",
            "line 2",
            "out of range",
        ),
        (
            "[user_flags]\ndrop = [\"rude\"]\n",
            "line 2",
            "not a user check",
        ),
        ("[strata]\nby = \"model\"\n", "line 2", "not a stratum"),
        ("[reward\nmin = 1\n", "line 1", ""),
        ("[reward]\nmin = \"high\"\n", "line 2", ""),
    ];
    for (text, line, says) in cases {
        let problems = parsed(text).unwrap_err();
        let said = problems
            .iter()
            .map(|p| p.to_string())
            .collect::<Vec<_>>()
            .join("\n");
        assert!(said.starts_with("p.toml: "), "{text}: {said}");
        assert!(said.contains(line), "{text}: {said}");
        assert!(said.contains(says), "{text}: {said}");
    }
    // Every range problem at once.
    let problems = parsed("[holdout]\nshare = 2\n[strata]\nmax_per_stratum = 0\n").unwrap_err();
    assert_eq!(problems.len(), 2, "{problems:?}");
}

proptest! {
    /// Any text: a profile or problems, never a panic; a number out of its
    /// range is never taken.
    #[test]
    fn any_text_reads_or_is_refused(text in "\\PC{0,200}") {
        let _ = parsed(&text);
    }

    #[test]
    fn a_holdout_share_is_taken_only_in_range(share in -10.0f64..10.0) {
        let read = parsed(&format!("[holdout]\nshare = {share:?}\n"));
        match read {
            Ok(p) => prop_assert!(HOLDOUT.contains(share) && p.holdout.map_or(share == 0.0, |(s, _)| s == share)),
            Err(problems) => {
                prop_assert!(!HOLDOUT.contains(share));
                prop_assert!(problems[0].to_string().contains("line 2 (holdout.share)"));
            }
        }
    }
}
