//! The number flags of the command line, as clap value parsers: each in the
//! range the same number has in a config (`config::ranges`), so a flag and
//! a key refuse the same values with the same words.

use crate::config::ranges::{
    whole, Whole, CONCURRENCY, MAX_ITEMS, MOCK_LATENCY_MS, PERSONA_SAMPLE, REQUESTS_PER_MINUTE,
    SPLIT, TOKENS_PER_MINUTE,
};

/// A whole number on the command line, in `range`.
fn parse_whole(text: &str, range: Whole) -> Result<u64, String> {
    let n: u64 = text
        .trim()
        .parse()
        .map_err(|_| format!("'{text}' is not a whole number; use {range}"))?;
    match range.check(n) {
        Some(message) => Err(message),
        None => Ok(n),
    }
}

/// `--sample` of `sparring personas sample`: the same range as in a config.
pub fn parse_persona_sample(text: &str) -> Result<u32, String> {
    u32::try_from(parse_whole(text, PERSONA_SAMPLE)?).map_err(|e| e.to_string())
}

/// `--concurrency` on the command line: the same range as in a config.
pub fn parse_concurrency(text: &str) -> Result<usize, String> {
    usize::try_from(parse_whole(text, CONCURRENCY)?).map_err(|e| e.to_string())
}

/// `--tpm`: the same range as `tokens_per_minute` in a config.
pub fn parse_tokens_per_minute(text: &str) -> Result<u32, String> {
    u32::try_from(parse_whole(text, TOKENS_PER_MINUTE)?).map_err(|e| e.to_string())
}

/// `--rpm`: the same range as `requests_per_minute` in a config.
pub fn parse_requests_per_minute(text: &str) -> Result<u32, String> {
    u32::try_from(parse_whole(text, REQUESTS_PER_MINUTE)?).map_err(|e| e.to_string())
}

/// `--latency-ms` of the bench: the same range as the mock's.
pub fn parse_mock_latency_ms(text: &str) -> Result<u64, String> {
    parse_whole(text, MOCK_LATENCY_MS)
}

/// `--conversations` of the bench: 1 to the most items a job may have.
pub fn parse_bench_conversations(text: &str) -> Result<u32, String> {
    u32::try_from(parse_whole(text, whole(1, MAX_ITEMS))?).map_err(|e| e.to_string())
}

/// `--split`: a share of scenarios in [`SPLIT`].
pub fn parse_split(text: &str) -> Result<f64, String> {
    let x: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("'{text}' is not a number; use {SPLIT} (e.g. 0.95)"))?;
    match SPLIT.check(x) {
        Some(message) => Err(format!("{message} (the share of scenarios in train)")),
        None => Ok(x),
    }
}

/// A number flag that must be a finite number (`--min-reward`): NaN compares
/// false with everything, so it would filter differently everywhere.
pub fn parse_finite(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(x) if x.is_finite() => Ok(x),
        Ok(x) => Err(format!(
            "{x} is not a number sparring can compare with; give e.g. 0.5"
        )),
        Err(_) => Err(format!("'{text}' is not a number; give e.g. 0.5")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_number_flag_refuses_nan_and_infinities() {
        assert_eq!(parse_finite("0.5"), Ok(0.5));
        assert!(parse_finite("NaN").is_err());
        assert!(parse_finite("inf").is_err());
        assert!(parse_finite("-inf").is_err());
        assert!(parse_finite("x").is_err());
    }

    #[test]
    fn a_split_is_a_share_strictly_between_none_and_all() {
        assert_eq!(parse_split("0.95"), Ok(0.95));
        for bad in ["0", "1", "1.5", "-0.2", "NaN", "inf", "x"] {
            let err = parse_split(bad).unwrap_err();
            assert!(err.contains("0.01 to 0.99"), "{bad}: {err}");
        }
    }

    #[test]
    fn concurrency_on_the_command_line_has_the_configs_range() {
        assert_eq!(parse_concurrency("8"), Ok(8));
        assert!(parse_concurrency("0").unwrap_err().contains("1 to 10,000"));
        assert!(parse_concurrency("1000000").is_err());
        assert!(parse_concurrency("-1")
            .unwrap_err()
            .contains("whole number"));
    }
}
