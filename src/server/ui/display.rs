//! How values read on a page: rewards, dates, long texts cut to a preview.

use std::time::{Duration, UNIX_EPOCH};

use serde::Serialize;

/// A reward with three decimals, or a dash when there is none.
pub fn reward(r: Option<f64>) -> String {
    r.map_or_else(|| "–".into(), |r| format!("{r:.3}"))
}

/// A score as short as it reads: `7`, `0.5`, `0.333`.
/// `0.400 [0.168, 0.687]`, or the mean alone without an interval.
pub fn mean_with_interval(mean: f64, ci95: Option<(f64, f64)>) -> String {
    match ci95 {
        Some((lo, hi)) => format!("{mean:.3} [{lo:.3}, {hi:.3}]"),
        None => format!("{mean:.3}"),
    }
}

pub fn score(s: f64) -> String {
    let rounded = (s * 1000.0).round() / 1000.0;
    format!("{rounded}")
}

/// Unix milliseconds as an HTTP date in UTC (`Mon, 23 Nov 2026 15:49:05 GMT`).
pub fn date(ms: i64) -> String {
    let Ok(ms) = u64::try_from(ms) else {
        return "–".into();
    };
    httpdate::fmt_http_date(UNIX_EPOCH + Duration::from_millis(ms))
}

/// `1.5 s`, `3 min 20 s`, `2 h 5 min`.
pub fn duration(ms: i64) -> String {
    let s = ms.max(0) / 1000;
    match s {
        0..60 => format!("{:.1} s", ms.max(0) as f64 / 1000.0),
        60..3600 => format!("{} min {} s", s / 60, s % 60),
        _ => format!("{} h {} min", s / 3600, (s % 3600) / 60),
    }
}

/// A text shown in full when short; when long, its first
/// [`PREVIEW_CHARS`] characters and the whole text folded behind them.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Clipped {
    pub preview: String,
    /// The whole text when `preview` is cut short of it.
    pub full: Option<String>,
    pub chars: usize,
}

/// Characters of a long text shown before "show all".
pub const PREVIEW_CHARS: usize = 600;
/// Texts up to this long are shown whole (a little over the preview, so
/// that nothing is folded to hide a few words).
pub const SHOWN_WHOLE_CHARS: usize = 800;

pub fn clip(text: &str) -> Clipped {
    clip_at(text, PREVIEW_CHARS, SHOWN_WHOLE_CHARS)
}

pub fn clip_at(text: &str, preview: usize, whole: usize) -> Clipped {
    let chars = text.chars().count();
    if chars <= whole {
        return Clipped {
            preview: text.to_string(),
            full: None,
            chars,
        };
    }
    Clipped {
        preview: text.chars().take(preview).collect(),
        full: Some(text.to_string()),
        chars,
    }
}

/// One line of at most `max` characters, `…` where it was cut.
pub fn one_line(text: &str, max: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        flat
    } else {
        let mut cut: String = flat.chars().take(max.saturating_sub(1)).collect();
        cut.push('…');
        cut
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_degenerate_4000_character_message_is_cut_to_a_preview_with_the_whole_kept() {
        let text = "la ".repeat(1334);
        let clipped = clip(&text);
        assert_eq!(clipped.preview.chars().count(), PREVIEW_CHARS);
        assert_eq!(clipped.full.as_deref(), Some(text.as_str()));
        assert_eq!(clipped.chars, 4002);
        let short = clip("hello");
        assert_eq!((short.preview.as_str(), short.full), ("hello", None));
    }

    #[test]
    fn dates_durations_and_scores_read_as_people_write_them() {
        assert_eq!(date(0), "Thu, 01 Jan 1970 00:00:00 GMT");
        assert_eq!(date(-5), "–");
        assert_eq!(duration(1500), "1.5 s");
        assert_eq!(duration(200_000), "3 min 20 s");
        assert_eq!(score(7.0), "7");
        assert_eq!(score(1.0 / 3.0), "0.333");
        assert_eq!(one_line("a\n  b c", 4), "a b…");
    }
}
