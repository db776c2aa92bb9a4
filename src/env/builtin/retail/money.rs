//! Amounts of money, kept in whole cents so sums are exact and the state hash
//! never depends on floating-point rounding; written to JSON as a plain number
//! of dollars (`54.2`), the way a shop's API would show it.

use std::fmt;
use std::iter::Sum;
use std::ops::{Add, AddAssign, Neg, Sub, SubAssign};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Larger amounts than this (in dollars) are rejected when reading JSON.
const MAX_DOLLARS: f64 = 1.0e12;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Money(i64);

impl Money {
    pub const ZERO: Money = Money(0);

    pub fn from_cents(cents: i64) -> Self {
        Money(cents)
    }

    pub fn cents(self) -> i64 {
        self.0
    }

    pub fn is_positive(self) -> bool {
        self.0 > 0
    }

    pub fn is_negative(self) -> bool {
        self.0 < 0
    }

    pub fn abs(self) -> Money {
        Money(self.0.abs())
    }

    fn as_dollars(self) -> f64 {
        self.0 as f64 / 100.0
    }
}

/// Always two decimals and no currency sign: `54.20`, `-1.83`.
impl fmt::Display for Money {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.0 < 0 { "-" } else { "" };
        let cents = self.0.unsigned_abs();
        write!(f, "{sign}{}.{:02}", cents / 100, cents % 100)
    }
}

impl Add for Money {
    type Output = Money;
    fn add(self, rhs: Money) -> Money {
        Money(self.0 + rhs.0)
    }
}

impl Sub for Money {
    type Output = Money;
    fn sub(self, rhs: Money) -> Money {
        Money(self.0 - rhs.0)
    }
}

impl Neg for Money {
    type Output = Money;
    fn neg(self) -> Money {
        Money(-self.0)
    }
}

impl AddAssign for Money {
    fn add_assign(&mut self, rhs: Money) {
        self.0 += rhs.0;
    }
}

impl SubAssign for Money {
    fn sub_assign(&mut self, rhs: Money) {
        self.0 -= rhs.0;
    }
}

impl Sum for Money {
    fn sum<I: Iterator<Item = Money>>(iter: I) -> Money {
        iter.fold(Money::ZERO, Add::add)
    }
}

impl Serialize for Money {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_f64(self.as_dollars())
    }
}

impl<'de> Deserialize<'de> for Money {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let dollars = f64::deserialize(deserializer)?;
        if !dollars.is_finite() || dollars.abs() > MAX_DOLLARS {
            return Err(serde::de::Error::custom(format!(
                "amount {dollars} is not a valid amount of money"
            )));
        }
        // In range by the check above, so the cast cannot saturate.
        Ok(Money((dollars * 100.0).round() as i64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_always_shows_two_decimals() {
        assert_eq!(Money::from_cents(5420).to_string(), "54.20");
        assert_eq!(Money::from_cents(5).to_string(), "0.05");
        assert_eq!(Money::from_cents(-183).to_string(), "-1.83");
    }

    #[test]
    fn json_amounts_are_read_to_the_nearest_cent_and_written_as_dollars() {
        let m: Money = serde_json::from_str("118.27").unwrap();
        assert_eq!(m.cents(), 11827);
        let m: Money = serde_json::from_str("0.1").unwrap();
        assert_eq!(m.cents(), 10);
        assert_eq!(
            serde_json::to_string(&Money::from_cents(2530)).unwrap(),
            "25.3"
        );
        assert_eq!(
            serde_json::to_string(&(Money::from_cents(2218) + Money::from_cents(3468))).unwrap(),
            "56.86"
        );
    }

    #[test]
    fn absurd_amounts_are_rejected() {
        assert!(serde_json::from_str::<Money>("1e300").is_err());
    }
}
