//! Dates of birth as people write them: read from a record's value
//! (`1992-11-12`) into the ways one may write it in a conversation, and
//! faked as a real date written the same way (`November 12, 1992` →
//! `March 3, 1968`), so a fake date of birth still reads as one.

/// The months' names (a name found after a cue is never one).
pub const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// A calendar day.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Day {
    pub year: u32,
    pub month: u32,
    pub day: u32,
}

/// One part of a written date, in the order written.
#[derive(Debug, Clone, PartialEq)]
enum Part {
    Year {
        width: usize,
    },
    Month {
        width: usize,
    },
    /// A month's name: full or short, with its case.
    MonthName {
        short: bool,
        case: Case,
    },
    Day {
        width: usize,
        ordinal: bool,
    },
    Other(String),
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Case {
    Title,
    Upper,
    Lower,
}

/// A date as written: its day and how it is written.
#[derive(Debug, Clone, PartialEq)]
pub struct Written {
    pub day: Day,
    parts: Vec<Part>,
}

/// Tokens of `text`: digit runs, letter runs, single other characters.
fn tokens(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut last: Option<u8> = None;
    for c in text.chars() {
        let class = match c {
            '0'..='9' => 0,
            c if c.is_alphabetic() => 1,
            _ => 2,
        };
        match out.last_mut() {
            Some(t) if last == Some(class) && class != 2 => t.push(c),
            _ => out.push(c.to_string()),
        }
        last = Some(class);
    }
    out
}

fn month_of_name(word: &str) -> Option<(u32, bool)> {
    let lower = word.to_lowercase();
    MONTHS.iter().zip(1..).find_map(|(name, n)| {
        let name = name.to_lowercase();
        if lower == name {
            Some((n, false))
        } else if lower.len() >= 3 && name.starts_with(&lower) {
            Some((n, true))
        } else {
            None
        }
    })
}

fn case_of(word: &str) -> Case {
    if word.chars().all(|c| !c.is_lowercase()) {
        Case::Upper
    } else if word.chars().all(|c| !c.is_uppercase()) {
        Case::Lower
    } else {
        Case::Title
    }
}

/// `text` read as a date, or `None`.
pub fn read(text: &str) -> Option<Written> {
    let toks = tokens(text);
    let numbers: Vec<(usize, u32, usize)> = toks
        .iter()
        .enumerate()
        .filter(|(_, t)| t.chars().all(|c| c.is_ascii_digit()))
        .filter_map(|(i, t)| t.parse().ok().map(|n| (i, n, t.len())))
        .collect();
    let named = toks
        .iter()
        .enumerate()
        .find_map(|(i, t)| month_of_name(t).map(|(m, short)| (i, m, short, case_of(t))));
    let mut parts: Vec<Part> = toks.iter().map(|t| Part::Other(t.clone())).collect();
    let (year, month, day);
    match (named, numbers.as_slice()) {
        (Some((mi, m, short, case)), [a, b]) => {
            let (y, d) = if a.2 == 4 { (a, b) } else { (b, a) };
            parts[mi] = Part::MonthName { short, case };
            parts[y.0] = Part::Year { width: y.2 };
            let ordinal = toks
                .get(d.0 + 1)
                .is_some_and(|t| ["st", "nd", "rd", "th"].contains(&t.to_lowercase().as_str()));
            // A day beside a month's name is padded only if it was.
            let padded = toks
                .get(d.0)
                .is_some_and(|t| t.len() == 2 && t.starts_with('0'));
            parts[d.0] = Part::Day {
                width: if padded { 2 } else { 1 },
                ordinal,
            };
            if ordinal {
                parts[d.0 + 1] = Part::Other(String::new());
            }
            (year, month, day) = (y.1, m, d.1);
        }
        (None, [a, b, c]) => {
            // Year first; else day first where the first cannot be a month
            // or the date is written with dots (European); else month first.
            let dotted = toks.get(a.0 + 1).is_some_and(|t| t == ".");
            let (y, m, d) = if a.2 == 4 {
                (a, b, c)
            } else if a.1 > 12 || dotted {
                (c, b, a)
            } else {
                (c, a, b)
            };
            parts[y.0] = Part::Year { width: y.2 };
            parts[m.0] = Part::Month { width: m.2 };
            parts[d.0] = Part::Day {
                width: d.2,
                ordinal: false,
            };
            (year, month, day) = (y.1, m.1, d.1);
        }
        _ => return None,
    }
    let year = match year {
        0..=99 => 1900 + year,
        _ => year,
    };
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    Some(Written {
        day: Day { year, month, day },
        parts,
    })
}

impl Written {
    /// The same writing of another day.
    pub fn with_day(&self, day: Day) -> String {
        let mut out = String::new();
        for part in &self.parts {
            match part {
                Part::Year { width: 2 } => out.push_str(&format!("{:02}", day.year % 100)),
                Part::Year { .. } => out.push_str(&format!("{:04}", day.year)),
                Part::Month { width } => out.push_str(&format!("{:0w$}", day.month, w = *width)),
                Part::MonthName { short, case } => {
                    let full = MONTHS[(day.month as usize).saturating_sub(1) % 12];
                    let name = if *short { &full[..3] } else { full };
                    out.push_str(&match case {
                        Case::Title => name.to_string(),
                        Case::Upper => name.to_uppercase(),
                        Case::Lower => name.to_lowercase(),
                    });
                }
                Part::Day { width, ordinal } => {
                    out.push_str(&format!("{:0w$}", day.day, w = *width));
                    if *ordinal {
                        out.push_str(ordinal_suffix(day.day));
                    }
                }
                Part::Other(text) => out.push_str(text),
            }
        }
        out
    }
}

fn ordinal_suffix(day: u32) -> &'static str {
    match (day % 10, day % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    }
}

/// The ways one writes `day` in a conversation.
pub fn writings(day: Day) -> Vec<String> {
    let Day { year, month, day } = day;
    let full = MONTHS[(month as usize).saturating_sub(1) % 12];
    let short = &full[..3];
    let suffix = ordinal_suffix(day);
    let mut out = vec![
        format!("{year:04}-{month:02}-{day:02}"),
        format!("{year:04}/{month:02}/{day:02}"),
        format!("{month:02}/{day:02}/{year:04}"),
        format!("{month}/{day}/{year:04}"),
        format!("{day:02}/{month:02}/{year:04}"),
        format!("{day}/{month}/{year:04}"),
        format!("{month:02}-{day:02}-{year:04}"),
        format!("{day:02}.{month:02}.{year:04}"),
        format!("{month:02}/{day:02}/{:02}", year % 100),
        format!("{month}/{day}/{:02}", year % 100),
    ];
    for name in [full, short] {
        out.push(format!("{name} {day}, {year}"));
        out.push(format!("{name} {day} {year}"));
        out.push(format!("{name} {day}{suffix}, {year}"));
        out.push(format!("{name} {day}{suffix} {year}"));
        out.push(format!("{day} {name} {year}"));
        out.push(format!("{day}{suffix} {name} {year}"));
        out.push(format!("{day}{suffix} of {name} {year}"));
        out.push(format!("{day} {name}, {year}"));
    }
    out.push(format!("{short}. {day}, {year}"));
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: Day = Day {
        year: 1992,
        month: 11,
        day: 12,
    };

    #[test]
    fn every_writing_reads_back_as_the_day_or_day_first_as_its_mirror() {
        let mirror = Day {
            month: DAY.day,
            day: DAY.month,
            ..DAY
        };
        for text in writings(DAY) {
            let written = read(&text).unwrap_or_else(|| panic!("{text}"));
            assert!([DAY, mirror].contains(&written.day), "{text}");
            assert_eq!(written.with_day(written.day), text);
        }
    }

    #[test]
    fn another_day_is_written_the_same_way() {
        let other = Day {
            year: 1968,
            month: 3,
            day: 3,
        };
        let cases = [
            ("November 12th, 1992", "March 3rd, 1968"),
            ("NOV 12 1992", "MAR 3 1968"),
            ("1992-11-12", "1968-03-03"),
            ("11/12/92", "03/03/68"),
            ("23/04/1987", "03/03/1968"),
        ];
        for (real, fake) in cases {
            assert_eq!(read(real).unwrap().with_day(other), fake, "{real}");
        }
        assert!(read("May 20th").is_none());
        assert!(read("13/13/1990").is_none());
    }
}
