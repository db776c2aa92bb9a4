//! The `calculate` tool: arithmetic on `+ - * /`, parentheses, unary minus and
//! decimal numbers, by a small recursive-descent parser. Nothing is evaluated
//! but numbers and those operators.

/// Longer expressions are refused rather than parsed.
const MAX_LENGTH: usize = 500;
/// Deeper nesting of parentheses or unary signs is refused (keeps the stack small).
const MAX_DEPTH: usize = 64;

/// Evaluate `expression`, or explain what is wrong with it.
pub fn evaluate(expression: &str) -> Result<f64, String> {
    if expression.len() > MAX_LENGTH {
        return Err(format!(
            "expression is {} characters long; the limit is {MAX_LENGTH}",
            expression.len()
        ));
    }
    let mut parser = Parser {
        chars: expression.chars().collect(),
        pos: 0,
        depth: 0,
    };
    let value = parser.sum()?;
    parser.skip_spaces();
    if let Some(c) = parser.peek() {
        return Err(format!(
            "unexpected '{c}' at position {}; only numbers, + - * / and parentheses are allowed",
            parser.pos + 1
        ));
    }
    if !value.is_finite() {
        return Err("the result is not a finite number".to_string());
    }
    Ok(value)
}

/// Round to cents, the precision every amount in the store has.
pub fn round_to_cents(value: f64) -> f64 {
    (value * 100.0).round() / 100.0
}

struct Parser {
    chars: Vec<char>,
    pos: usize,
    depth: usize,
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn skip_spaces(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.pos += 1;
        }
    }

    fn sum(&mut self) -> Result<f64, String> {
        let mut value = self.product()?;
        loop {
            self.skip_spaces();
            match self.peek() {
                Some('+') => {
                    self.pos += 1;
                    value += self.product()?;
                }
                Some('-') => {
                    self.pos += 1;
                    value -= self.product()?;
                }
                _ => return Ok(value),
            }
        }
    }

    fn product(&mut self) -> Result<f64, String> {
        let mut value = self.factor()?;
        loop {
            self.skip_spaces();
            match self.peek() {
                Some('*') => {
                    self.pos += 1;
                    value *= self.factor()?;
                }
                Some('/') => {
                    self.pos += 1;
                    let divisor = self.factor()?;
                    if divisor == 0.0 {
                        return Err("division by zero".to_string());
                    }
                    value /= divisor;
                }
                _ => return Ok(value),
            }
        }
    }

    fn factor(&mut self) -> Result<f64, String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(format!("expression is nested more than {MAX_DEPTH} deep"));
        }
        let value = self.factor_inner();
        self.depth -= 1;
        value
    }

    fn factor_inner(&mut self) -> Result<f64, String> {
        self.skip_spaces();
        match self.peek() {
            Some('-') => {
                self.pos += 1;
                Ok(-self.factor()?)
            }
            Some('+') => {
                self.pos += 1;
                self.factor()
            }
            Some('(') => {
                self.pos += 1;
                let value = self.sum()?;
                self.skip_spaces();
                if self.peek() != Some(')') {
                    return Err(format!("missing ')' at position {}", self.pos + 1));
                }
                self.pos += 1;
                Ok(value)
            }
            Some(c) if c.is_ascii_digit() || c == '.' => self.number(),
            Some(c) => Err(format!(
                "unexpected '{c}' at position {}; only numbers, + - * / and parentheses are allowed",
                self.pos + 1
            )),
            None => Err("the expression ends where a number was expected".to_string()),
        }
    }

    fn number(&mut self) -> Result<f64, String> {
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_digit() || c == '.' || c == '_')
        {
            self.pos += 1;
        }
        let text: String = self.chars[start..self.pos]
            .iter()
            .filter(|c| **c != '_')
            .collect();
        text.parse::<f64>()
            .map_err(|_| format!("'{text}' at position {} is not a number", start + 1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn respects_precedence_and_parentheses() {
        assert_eq!(evaluate("2 + 3 * 4").unwrap(), 14.0);
        assert_eq!(evaluate("(2 + 3) * 4").unwrap(), 20.0);
        assert_eq!(evaluate("10 - 4 - 3").unwrap(), 3.0);
        assert_eq!(evaluate("12 / 4 / 3").unwrap(), 1.0);
    }

    #[test]
    fn handles_unary_minus_and_decimals() {
        assert_eq!(evaluate("-2.5 * -(1 + 1)").unwrap(), 5.0);
        assert_eq!(round_to_cents(evaluate("118.78 + 140.21").unwrap()), 258.99);
        assert_eq!(round_to_cents(evaluate("1/3").unwrap()), 0.33);
    }

    #[test]
    fn rejects_anything_but_arithmetic_with_the_position() {
        let err = evaluate("2 + abs(3)").unwrap_err();
        assert!(err.contains("'a' at position 5"), "{err}");
        assert!(evaluate("").is_err());
        assert!(evaluate("(1 + 2").unwrap_err().contains("missing ')'"));
        assert!(evaluate("1.2.3").unwrap_err().contains("not a number"));
        assert!(evaluate("3 4").is_err());
    }

    #[test]
    fn division_by_zero_is_an_error_not_infinity() {
        assert_eq!(evaluate("5 / (2 - 2)").unwrap_err(), "division by zero");
    }

    #[test]
    fn deep_nesting_and_long_input_are_refused_without_overflowing() {
        let deep = format!("{}1{}", "(".repeat(200), ")".repeat(200));
        assert!(evaluate(&deep).is_err());
        let minus = format!("{}1", "-".repeat(400));
        assert!(evaluate(&minus).is_err());
        assert!(evaluate(&"1+".repeat(400)).is_err());
    }
}
