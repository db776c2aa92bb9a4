//! The `where` language over a table's rows:
//!
//! ```text
//! expr    := or
//! or      := and ("or" and)*
//! and     := not ("and" not)*
//! not     := "not" not | "(" expr ")" | test
//! test    := COLUMN OP VALUE | COLUMN ["not"] "in" "[" VALUE ("," VALUE)* "]"
//! OP      := == | != | < | <= | > | >=
//! VALUE   := 'text' | "text" | NUMBER | true | false | null
//! ```
//!
//! e.g. `country == 'USA' and age >= 65`, `state in ['CA', 'NY'] or not (sex == 'Male')`.
//! A number compares with a number (or a text that reads as one), a text
//! with a text; `<`, `>` between a number and a text are false.
//!
//! The parser recurses once per `(` and per `not`, so their nesting is
//! counted and limited to [`MAX_NESTING`]; a chain of `and` or `or` is one
//! node with many children, however long, so nothing else makes the tree
//! deep.

use std::fmt;

use serde_json::Value;

use super::Columns;

#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// Two or more.
    Or(Vec<Expr>),
    /// Two or more.
    And(Vec<Expr>),
    Not(Box<Expr>),
    Compare {
        column: String,
        op: Op,
        value: Literal,
    },
    In {
        column: String,
        values: Vec<Literal>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Literal {
    Text(String),
    Number(f64),
    Bool(bool),
    Null,
}

/// A filter that cannot be read, at a 1-based character column of the text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("column {column} of the expression: {message}")]
pub struct FilterError {
    pub column: usize,
    pub message: String,
}

/// `(` and `not` nested in each other at most this deep.
pub const MAX_NESTING: usize = 64;

pub fn parse(text: &str) -> Result<Expr, FilterError> {
    let tokens = tokenize(text)?;
    let mut parser = Parser {
        tokens,
        at: 0,
        end: text.chars().count() + 1,
        depth: 0,
    };
    let expr = parser.or()?;
    match parser.peek() {
        None => Ok(expr),
        Some((column, token)) => Err(FilterError {
            column,
            message: format!(
                "unexpected {}; join tests with `and` or `or`",
                token.describe()
            ),
        }),
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Word(String),
    Text(String),
    Number(f64),
    Op(Op),
    Open,
    Close,
    OpenList,
    CloseList,
    Comma,
}

impl Token {
    fn describe(&self) -> String {
        match self {
            Token::Word(w) => format!("`{w}`"),
            Token::Text(t) => format!("text '{t}'"),
            Token::Number(n) => format!("number {n}"),
            Token::Op(op) => format!("`{op}`"),
            Token::Open => "`(`".into(),
            Token::Close => "`)`".into(),
            Token::OpenList => "`[`".into(),
            Token::CloseList => "`]`".into(),
            Token::Comma => "`,`".into(),
        }
    }
}

fn tokenize(text: &str) -> Result<Vec<(usize, Token)>, FilterError> {
    let chars: Vec<char> = text.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let column = i + 1;
        let single = match c {
            '(' => Some(Token::Open),
            ')' => Some(Token::Close),
            '[' => Some(Token::OpenList),
            ']' => Some(Token::CloseList),
            ',' => Some(Token::Comma),
            _ => None,
        };
        if let Some(token) = single {
            tokens.push((column, token));
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c == '\'' || c == '"' {
            let start = i + 1;
            let end = (start..chars.len())
                .find(|&j| chars[j] == c)
                .ok_or_else(|| FilterError {
                    column,
                    message: format!("the text starting here has no closing {c}"),
                })?;
            tokens.push((column, Token::Text(chars[start..end].iter().collect())));
            i = end + 1;
        } else if "=!<>".contains(c) {
            let next = chars.get(i + 1).copied();
            let (op, len) = match (c, next) {
                ('=', Some('=')) => (Op::Eq, 2),
                ('!', Some('=')) => (Op::Ne, 2),
                ('<', Some('=')) => (Op::Le, 2),
                ('>', Some('=')) => (Op::Ge, 2),
                ('<', _) => (Op::Lt, 1),
                ('>', _) => (Op::Gt, 1),
                _ => {
                    return Err(FilterError {
                        column,
                        message: format!(
                            "`{c}` is not an operator; compare with ==, !=, <, <=, > or >="
                        ),
                    })
                }
            };
            tokens.push((column, Token::Op(op)));
            i += len;
        } else if c.is_ascii_digit() || c == '-' || c == '.' {
            let start = i;
            i += 1;
            while i < chars.len()
                && (chars[i].is_ascii_alphanumeric() || chars[i] == '.' || chars[i] == '_')
                || (i < chars.len()
                    && (chars[i] == '-' || chars[i] == '+')
                    && matches!(chars[i - 1], 'e' | 'E'))
            {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            match word.parse::<f64>() {
                Ok(n) if n.is_finite() => tokens.push((column, Token::Number(n))),
                _ => {
                    return Err(FilterError {
                        column,
                        message: format!("'{word}' is not a number"),
                    })
                }
            }
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            tokens.push((column, Token::Word(chars[start..i].iter().collect())));
        } else {
            return Err(FilterError {
                column,
                message: format!(
                    "`{c}` cannot start anything here; write a column name, a value in \
                     quotes or a number"
                ),
            });
        }
    }
    Ok(tokens)
}

struct Parser {
    tokens: Vec<(usize, Token)>,
    at: usize,
    /// The column just past the text, for "ended too soon".
    end: usize,
    /// `(` and `not` open around the token at `at`.
    depth: usize,
}

/// The words that cannot name a column.
const KEYWORDS: [&str; 6] = ["and", "or", "not", "in", "true", "false"];

impl Parser {
    fn peek(&self) -> Option<(usize, &Token)> {
        self.tokens.get(self.at).map(|(c, t)| (*c, t))
    }

    fn next(&mut self, wanted: &str) -> Result<(usize, Token), FilterError> {
        let token = self.tokens.get(self.at).cloned().ok_or(FilterError {
            column: self.end,
            message: format!("the expression ends where {wanted} was expected"),
        })?;
        self.at += 1;
        Ok(token)
    }

    fn is_word(&self, word: &str) -> bool {
        matches!(self.peek(), Some((_, Token::Word(w))) if w == word)
    }

    fn or(&mut self) -> Result<Expr, FilterError> {
        let mut terms = vec![self.and()?];
        while self.is_word("or") {
            self.at += 1;
            terms.push(self.and()?);
        }
        Ok(one_or(terms, Expr::Or))
    }

    fn and(&mut self) -> Result<Expr, FilterError> {
        let mut terms = vec![self.not()?];
        while self.is_word("and") {
            self.at += 1;
            terms.push(self.not()?);
        }
        Ok(one_or(terms, Expr::And))
    }

    /// One level deeper, at the token at `at` (a `(` or a `not`).
    fn deeper(&mut self) -> Result<(), FilterError> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            let column = self.peek().map_or(self.end, |(c, _)| c);
            return Err(FilterError {
                column,
                message: format!(
                    "`(` and `not` are nested more than {MAX_NESTING} deep here, the limit; \
                     write the filter with fewer levels (`not not` cancels out)"
                ),
            });
        }
        Ok(())
    }

    fn not(&mut self) -> Result<Expr, FilterError> {
        if self.is_word("not") {
            self.deeper()?;
            self.at += 1;
            let inner = self.not()?;
            self.depth -= 1;
            return Ok(Expr::Not(Box::new(inner)));
        }
        if matches!(self.peek(), Some((_, Token::Open))) {
            self.deeper()?;
            self.at += 1;
            let inner = self.or()?;
            self.depth -= 1;
            return match self.next("`)`")? {
                (_, Token::Close) => Ok(inner),
                (column, other) => Err(FilterError {
                    column,
                    message: format!("expected `)` to close the `(`, found {}", other.describe()),
                }),
            };
        }
        self.test()
    }

    fn test(&mut self) -> Result<Expr, FilterError> {
        let column = match self.next("a column name")? {
            (_, Token::Word(w)) if !KEYWORDS.contains(&w.as_str()) && w != "null" => w,
            (at, other) => {
                return Err(FilterError {
                    column: at,
                    message: format!(
                        "expected a column name, found {}; a test reads e.g. age >= 65",
                        other.describe()
                    ),
                })
            }
        };
        match self.next("an operator")? {
            (_, Token::Op(op)) => Ok(Expr::Compare {
                column,
                op,
                value: self.literal()?,
            }),
            (_, Token::Word(w)) if w == "in" => Ok(Expr::In {
                column,
                values: self.list()?,
            }),
            (_, Token::Word(w)) if w == "not" => match self.next("`in`")? {
                (_, Token::Word(w)) if w == "in" => Ok(Expr::Not(Box::new(Expr::In {
                    column,
                    values: self.list()?,
                }))),
                (at, other) => Err(FilterError {
                    column: at,
                    message: format!("expected `in` after `not`, found {}", other.describe()),
                }),
            },
            (at, other) => Err(FilterError {
                column: at,
                message: format!(
                    "expected an operator after `{column}` (==, !=, <, <=, >, >= or in), \
                     found {}",
                    other.describe()
                ),
            }),
        }
    }

    fn list(&mut self) -> Result<Vec<Literal>, FilterError> {
        match self.next("`[`")? {
            (_, Token::OpenList) => {}
            (at, other) => {
                return Err(FilterError {
                    column: at,
                    message: format!(
                        "expected `[` after `in`, found {}; write e.g. state in ['CA', 'NY']",
                        other.describe()
                    ),
                })
            }
        }
        let mut values = vec![self.literal()?];
        loop {
            match self.next("`,` or `]`")? {
                (_, Token::Comma) => values.push(self.literal()?),
                (_, Token::CloseList) => return Ok(values),
                (at, other) => {
                    return Err(FilterError {
                        column: at,
                        message: format!("expected `,` or `]`, found {}", other.describe()),
                    })
                }
            }
        }
    }

    fn literal(&mut self) -> Result<Literal, FilterError> {
        match self.next("a value")? {
            (_, Token::Text(t)) => Ok(Literal::Text(t)),
            (_, Token::Number(n)) => Ok(Literal::Number(n)),
            (_, Token::Word(w)) if w == "true" => Ok(Literal::Bool(true)),
            (_, Token::Word(w)) if w == "false" => Ok(Literal::Bool(false)),
            (_, Token::Word(w)) if w == "null" => Ok(Literal::Null),
            (at, Token::Word(w)) => Err(FilterError {
                column: at,
                message: format!(
                    "`{w}` is not a value; put text in quotes, e.g. '{w}' (a filter \
                     compares a column with a value)"
                ),
            }),
            (at, other) => Err(FilterError {
                column: at,
                message: format!("expected a value, found {}", other.describe()),
            }),
        }
    }
}

/// The one term itself, or `join` of them all.
fn one_or(mut terms: Vec<Expr>, join: fn(Vec<Expr>) -> Expr) -> Expr {
    if terms.len() == 1 {
        terms.remove(0)
    } else {
        join(terms)
    }
}

/// `(a JOIN b JOIN c)`.
fn write_joined(f: &mut fmt::Formatter<'_>, terms: &[Expr], join: &str) -> fmt::Result {
    f.write_str("(")?;
    for (i, term) in terms.iter().enumerate() {
        if i > 0 {
            f.write_str(join)?;
        }
        write!(f, "{term}")?;
    }
    f.write_str(")")
}

impl Expr {
    /// The columns the filter reads, in order of first mention.
    pub fn columns(&self) -> Vec<&str> {
        let mut out = Vec::new();
        self.collect_columns(&mut out);
        out
    }

    fn collect_columns<'a>(&'a self, out: &mut Vec<&'a str>) {
        match self {
            Expr::Or(terms) | Expr::And(terms) => {
                for term in terms {
                    term.collect_columns(out);
                }
            }
            Expr::Not(a) => a.collect_columns(out),
            Expr::Compare { column, .. } | Expr::In { column, .. } => {
                if !out.contains(&column.as_str()) {
                    out.push(column);
                }
            }
        }
    }

    /// Whether the row passes; a column the row lacks reads as `null`.
    pub fn matches(&self, row: &Columns) -> bool {
        match self {
            Expr::Or(terms) => terms.iter().any(|t| t.matches(row)),
            Expr::And(terms) => terms.iter().all(|t| t.matches(row)),
            Expr::Not(a) => !a.matches(row),
            Expr::Compare { column, op, value } => {
                compare(row.get(column).unwrap_or(&Value::Null), *op, value)
            }
            Expr::In { column, values } => {
                let cell = row.get(column).unwrap_or(&Value::Null);
                values.iter().any(|v| compare(cell, Op::Eq, v))
            }
        }
    }
}

fn number_of(cell: &Value) -> Option<f64> {
    match cell {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn compare(cell: &Value, op: Op, value: &Literal) -> bool {
    use std::cmp::Ordering;
    let ordering: Option<Ordering> = match value {
        Literal::Number(n) => number_of(cell).and_then(|x| x.partial_cmp(n)),
        Literal::Text(t) => match cell {
            Value::String(s) => Some(s.as_str().cmp(t.as_str())),
            Value::Number(n) => Some(n.to_string().as_str().cmp(t.as_str())),
            _ => None,
        },
        Literal::Bool(b) => cell.as_bool().map(|x| x.cmp(b)),
        Literal::Null => Some(if cell.is_null() {
            Ordering::Equal
        } else {
            Ordering::Greater
        }),
    };
    match (op, ordering) {
        (Op::Ne, None) => true,
        (_, None) => false,
        (Op::Eq, Some(o)) => o == Ordering::Equal,
        (Op::Ne, Some(o)) => o != Ordering::Equal,
        (Op::Lt, Some(o)) => o == Ordering::Less,
        (Op::Le, Some(o)) => o != Ordering::Greater,
        (Op::Gt, Some(o)) => o == Ordering::Greater,
        (Op::Ge, Some(o)) => o != Ordering::Less,
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Op::Eq => "==",
            Op::Ne => "!=",
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Ge => ">=",
        })
    }
}

impl fmt::Display for Literal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Literal::Text(t) if t.contains('\'') => write!(f, "\"{t}\""),
            Literal::Text(t) => write!(f, "'{t}'"),
            Literal::Number(n) => write!(f, "{n}"),
            Literal::Bool(b) => write!(f, "{b}"),
            Literal::Null => f.write_str("null"),
        }
    }
}

/// Written back fully parenthesised: parsing the text gives the same `Expr`.
impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Or(terms) => write_joined(f, terms, " or "),
            Expr::And(terms) => write_joined(f, terms, " and "),
            Expr::Not(a) => write!(f, "not {a}"),
            Expr::Compare { column, op, value } => write!(f, "{column} {op} {value}"),
            Expr::In { column, values } => {
                let values: Vec<String> = values.iter().map(|v| v.to_string()).collect();
                write!(f, "{column} in [{}]", values.join(", "))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn row(value: Value) -> Columns {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn the_documented_example_selects_older_americans() {
        let filter = parse("country == 'USA' and age >= 65").unwrap();
        assert!(filter.matches(&row(json!({"country": "USA", "age": 70}))));
        assert!(!filter.matches(&row(json!({"country": "USA", "age": 64}))));
        assert!(!filter.matches(&row(json!({"country": "Canada", "age": 70}))));
        assert_eq!(filter.columns(), ["country", "age"]);
    }

    #[test]
    fn and_binds_tighter_than_or_and_parentheses_and_lists_work() {
        let filter = parse("a == 1 or b == 2 and c == 3").unwrap();
        assert!(filter.matches(&row(json!({"a": 1, "b": 0, "c": 0}))));
        let filter = parse("(a == 1 or b == 2) and not state in [\"CA\", 'NY']").unwrap();
        assert!(filter.matches(&row(json!({"a": 1, "state": "TX"}))));
        assert!(!filter.matches(&row(json!({"a": 1, "state": "NY"}))));
        let filter = parse("state not in ['CA']").unwrap();
        assert!(!filter.matches(&row(json!({"state": "CA"}))));
    }

    #[test]
    fn nesting_past_the_limit_is_an_error_at_its_column_and_long_chains_are_not() {
        let deep = |n: usize| format!("{}a == 1{}", "(".repeat(n), ")".repeat(n));
        assert!(parse(&deep(MAX_NESTING)).is_ok());
        let err = parse(&deep(100_000)).unwrap_err();
        assert_eq!(err.column, MAX_NESTING + 1);
        assert!(err.message.contains("more than 64 deep"), "{err}");
        let nots = format!("{}a == 1", "not ".repeat(100_000));
        let err = parse(&nots).unwrap_err();
        assert_eq!(err.column, 4 * MAX_NESTING + 1);
        let chain = vec!["a == 1"; 100_000].join(" or ");
        let filter = parse(&chain).unwrap();
        assert!(filter.matches(&row(json!({"a": 1}))));
        assert_eq!(filter.columns(), ["a"]);
        let chain = vec!["not a == 2"; 100_000].join(" and ");
        assert!(parse(&chain).unwrap().matches(&row(json!({"a": 1}))));
    }

    #[test]
    fn numbers_written_as_text_compare_as_numbers() {
        let filter = parse("age < 30.5").unwrap();
        assert!(filter.matches(&row(json!({"age": "29"}))));
        assert!(!filter.matches(&row(json!({"age": "unknown"}))));
    }

    #[test]
    fn errors_name_the_column_of_the_expression() {
        let err = parse("country = 'USA'").unwrap_err();
        assert_eq!(err.column, 9);
        assert!(err.message.contains("not an operator"), "{err}");
        let err = parse("age >= 65 and").unwrap_err();
        assert_eq!(err.column, 14);
        let err = parse("country == USA").unwrap_err();
        assert_eq!(err.column, 12);
        assert!(err.message.contains("put text in quotes"), "{err}");
        let err = parse("(age > 1").unwrap_err();
        assert!(err.message.contains("`)`"), "{err}");
        let err = parse("age > 1 age").unwrap_err();
        assert_eq!(err.column, 9);
    }

    fn literal() -> impl Strategy<Value = Literal> {
        prop_oneof![
            "[a-zA-Z0-9 _-]{0,8}".prop_map(Literal::Text),
            (-1_000_000i64..1_000_000).prop_map(|n| Literal::Number(n as f64 / 8.0)),
            any::<bool>().prop_map(Literal::Bool),
            Just(Literal::Null),
        ]
    }

    fn column() -> impl Strategy<Value = String> {
        "[a-z_][a-z0-9_]{0,6}".prop_filter("not a keyword", |c| {
            !KEYWORDS.contains(&c.as_str()) && c != "null"
        })
    }

    fn expr() -> impl Strategy<Value = Expr> {
        let op = prop_oneof![
            Just(Op::Eq),
            Just(Op::Ne),
            Just(Op::Lt),
            Just(Op::Le),
            Just(Op::Gt),
            Just(Op::Ge)
        ];
        let leaf = prop_oneof![
            (column(), op, literal()).prop_map(|(column, op, value)| Expr::Compare {
                column,
                op,
                value
            }),
            (column(), prop::collection::vec(literal(), 1..4))
                .prop_map(|(column, values)| Expr::In { column, values }),
        ];
        leaf.prop_recursive(4, 24, 2, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 2..4).prop_map(Expr::Or),
                prop::collection::vec(inner.clone(), 2..4).prop_map(Expr::And),
                inner.prop_map(|a| Expr::Not(a.into())),
            ]
        })
    }

    proptest! {
        #[test]
        fn the_parser_never_panics(text in "\\PC{0,40}") {
            let _ = parse(&text);
        }

        #[test]
        fn the_parser_never_panics_on_near_filters(text in "[a-z ()\\[\\],'=<>!0-9.-]{0,40}") {
            if let Err(e) = parse(&text) {
                prop_assert!(e.column >= 1 && e.column <= text.chars().count() + 1);
            }
        }

        #[test]
        fn an_expression_written_back_parses_to_itself(e in expr()) {
            prop_assert_eq!(parse(&e.to_string()).unwrap(), e);
        }
    }
}
