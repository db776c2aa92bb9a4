//! Fakes of the same shape as the real value, drawn from SHA-256 of the
//! seed, the attempt and the value: a digit for a digit, a letter for a
//! letter of the same case, everything else kept. A date of birth becomes
//! another real date written the same way; an address keeps the words that
//! say what it is (`Drive`, `Suite`).

use sha2::{Digest, Sha256};

use super::dates::{self, Day};
use super::kind::PrivateKind;

/// Words of an address that say what it is, kept so a fake still reads as
/// one: street types and directions ...
const STREET_WORDS: &[&str] = &[
    "Street",
    "St",
    "Avenue",
    "Ave",
    "Road",
    "Rd",
    "Drive",
    "Dr",
    "Lane",
    "Ln",
    "Boulevard",
    "Blvd",
    "Way",
    "Court",
    "Ct",
    "Place",
    "Pl",
    "Terrace",
    "Circle",
    "Parkway",
    "Highway",
    "Square",
    "Trail",
    "Floor",
    "Box",
    "North",
    "South",
    "East",
    "West",
];

/// ... and the words before a unit's number (an address that starts with
/// one is an address: `Suite 243`).
pub const UNIT_WORDS: &[&str] = &[
    "Suite",
    "Ste",
    "Apt",
    "Apartment",
    "Unit",
    "Flat",
    "PO",
    "P.O.",
];

/// A fake for `real` of kind `kind` (`None`: a user's pattern).
pub fn fake(real: &str, kind: Option<PrivateKind>, seed: u64, attempt: u32) -> String {
    match kind {
        Some(PrivateKind::Dob) => match dates::read(real) {
            Some(written) => written.with_day(fake_day(written.day, seed, attempt)),
            None => same_shape(real, seed, attempt),
        },
        Some(PrivateKind::Address) => keeping_words(real, seed, attempt),
        _ => same_shape(real, seed, attempt),
    }
}

/// A day drawn from the real one: the same real day gives the same fake day
/// however it is written. Years 1940 to 2005, days 1 to 28.
fn fake_day(real: Day, seed: u64, attempt: u32) -> Day {
    let key = format!("{:04}-{:02}-{:02}", real.year, real.month, real.day);
    let mut bytes = stream(&key, seed, attempt, 0).into_iter();
    let mut next = || u32::from(bytes.next().unwrap_or(0));
    let year = 1940 + (next() * 256 + next()) % 66;
    let month = 1 + next() % 12;
    let day = 1 + next() % 28;
    Day { year, month, day }
}

/// Each word of `real` faked, except the words that say it is an address.
fn keeping_words(real: &str, seed: u64, attempt: u32) -> String {
    let faked = same_shape(real, seed, attempt);
    let mut out = String::with_capacity(real.len());
    let mut at = 0;
    for word in real.split_inclusive(|c: char| !c.is_alphanumeric()) {
        let bare = word.trim_end_matches(|c: char| !c.is_alphanumeric());
        let end = at + word.len();
        match STREET_WORDS.contains(&bare) || UNIT_WORDS.contains(&bare) {
            true => out.push_str(word),
            false => out.push_str(faked.get(at..end).unwrap_or(word)),
        }
        at = end;
    }
    out
}

fn stream(real: &str, seed: u64, attempt: u32, block: u64) -> Vec<u8> {
    let mut hasher = Sha256::new();
    hasher.update(seed.to_le_bytes());
    hasher.update(attempt.to_le_bytes());
    hasher.update(block.to_le_bytes());
    hasher.update(real.as_bytes());
    hasher.finalize().to_vec()
}

/// `real` with each digit and letter replaced by one drawn from SHA-256 of
/// the seed, the attempt and the value: deterministic, same shape (an ASCII
/// character for an ASCII one, so byte offsets hold).
pub fn same_shape(real: &str, seed: u64, attempt: u32) -> String {
    let mut bytes: Vec<u8> = Vec::new();
    let mut block: u64 = 0;
    let mut next = || {
        if bytes.is_empty() {
            bytes = stream(real, seed, attempt, block);
            bytes.reverse();
            block += 1;
        }
        bytes.pop().unwrap_or(0)
    };
    real.chars()
        .map(|c| match c {
            '0'..='9' => char::from(b'0' + next() % 10),
            'a'..='z' => char::from(b'a' + next() % 26),
            'A'..='Z' => char::from(b'A' + next() % 26),
            other => other,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_date_of_birth_becomes_one_real_date_however_it_is_written() {
        let iso = fake("1992-11-12", Some(PrivateKind::Dob), 5, 0);
        let day = dates::read(&iso).unwrap().day;
        assert!((1940..=2005).contains(&day.year) && day.day <= 28, "{iso}");
        let long = fake("November 12, 1992", Some(PrivateKind::Dob), 5, 0);
        assert_eq!(dates::read(&long).unwrap().day, day, "{iso} {long}");
    }

    #[test]
    fn an_address_keeps_its_street_type_and_unit_words() {
        let out = fake(
            "555 Highland Drive, Suite 243",
            Some(PrivateKind::Address),
            1,
            0,
        );
        assert!(out.contains(" Drive, Suite "), "{out}");
        assert!(!out.contains("Highland"), "{out}");
        assert_eq!(out.len(), "555 Highland Drive, Suite 243".len());
    }
}
