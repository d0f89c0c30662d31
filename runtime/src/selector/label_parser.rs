//! The label selector grammar of apimachinery's `labels.Parse`:
//!
//! ```text
//! selector    = [ requirement { "," requirement } ]
//! requirement = [ "!" ] key
//!             | key ( "=" | "==" | "!=" | ">" | "<" ) [ value ]
//!             | key ( "in" | "notin" ) "(" [ value { "," value } ] ")"
//! ```
//!
//! Whitespace (space, tab, CR, LF) separates tokens and is otherwise
//! ignored; identifiers run until whitespace or one of `=!(),<>`.

use super::Error;
use super::labels::{Operator, Requirement};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token<'a> {
    End,
    OpenPar,
    ClosedPar,
    Comma,
    /// `!`
    DoesNotExist,
    Equals,
    DoubleEquals,
    NotEquals,
    GreaterThan,
    LessThan,
    In,
    NotIn,
    Identifier(&'a str),
}

impl Token<'_> {
    fn describe(&self) -> String {
        match self {
            Token::End => "end of string".to_owned(),
            Token::OpenPar => "'('".to_owned(),
            Token::ClosedPar => "')'".to_owned(),
            Token::Comma => "','".to_owned(),
            Token::DoesNotExist => "'!'".to_owned(),
            Token::Equals => "'='".to_owned(),
            Token::DoubleEquals => "'=='".to_owned(),
            Token::NotEquals => "'!='".to_owned(),
            Token::GreaterThan => "'>'".to_owned(),
            Token::LessThan => "'<'".to_owned(),
            Token::In => "'in'".to_owned(),
            Token::NotIn => "'notin'".to_owned(),
            Token::Identifier(s) => format!("'{s}'"),
        }
    }
}

fn is_whitespace(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n')
}

fn is_special(c: char) -> bool {
    matches!(c, '=' | '!' | '(' | ')' | ',' | '>' | '<')
}

/// Splits the input into tokens with their byte positions.
fn lex(input: &str) -> Vec<(Token<'_>, usize)> {
    let mut tokens = Vec::new();
    let mut rest = input.char_indices().peekable();
    while let Some(&(pos, c)) = rest.peek() {
        if is_whitespace(c) {
            rest.next();
            continue;
        }
        rest.next();
        let next_is_eq = matches!(rest.peek(), Some(&(_, '=')));
        let token = match c {
            '(' => Token::OpenPar,
            ')' => Token::ClosedPar,
            ',' => Token::Comma,
            '>' => Token::GreaterThan,
            '<' => Token::LessThan,
            '!' if next_is_eq => {
                rest.next();
                Token::NotEquals
            }
            '!' => Token::DoesNotExist,
            '=' if next_is_eq => {
                rest.next();
                Token::DoubleEquals
            }
            '=' => Token::Equals,
            _ => {
                let mut end = input.len();
                while let Some(&(i, c)) = rest.peek() {
                    if is_whitespace(c) || is_special(c) {
                        end = i;
                        break;
                    }
                    rest.next();
                }
                match &input[pos..end] {
                    "in" => Token::In,
                    "notin" => Token::NotIn,
                    ident => Token::Identifier(ident),
                }
            }
        };
        tokens.push((token, pos));
    }
    tokens.push((Token::End, input.len()));
    tokens
}

/// Whether `in`/`notin` are keywords (after a key) or plain identifiers.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    KeyAndOperator,
    Values,
}

struct Parser<'a> {
    input: &'a str,
    tokens: Vec<(Token<'a>, usize)>,
    next: usize,
}

impl<'a> Parser<'a> {
    fn peek(&self, mode: Mode) -> (Token<'a>, usize) {
        let (token, pos) = self.tokens.get(self.next).copied().unwrap_or((Token::End, self.input.len()));
        match (mode, token) {
            (Mode::Values, Token::In) => (Token::Identifier("in"), pos),
            (Mode::Values, Token::NotIn) => (Token::Identifier("notin"), pos),
            _ => (token, pos),
        }
    }

    fn consume(&mut self, mode: Mode) -> (Token<'a>, usize) {
        let t = self.peek(mode);
        if self.next < self.tokens.len() {
            self.next += 1;
        }
        t
    }

    fn syntax_error(&self, (found, position): (Token<'_>, usize), expected: &'static str) -> Error {
        Error::Syntax { input: self.input.to_owned(), position, found: found.describe(), expected }
    }

    fn parse(&mut self) -> Result<Vec<Requirement>, Error> {
        let mut requirements = Vec::new();
        loop {
            match self.peek(Mode::Values).0 {
                Token::Identifier(_) | Token::DoesNotExist => {}
                Token::End => return Ok(requirements),
                _ => {
                    return Err(self.syntax_error(self.peek(Mode::Values), "'!', identifier, or end of string"));
                }
            }
            requirements.push(self.parse_requirement()?);
            let after = self.consume(Mode::Values);
            match after.0 {
                Token::End => return Ok(requirements),
                Token::Comma => match self.peek(Mode::Values).0 {
                    Token::Identifier(_) | Token::DoesNotExist => {}
                    _ => {
                        return Err(self.syntax_error(self.peek(Mode::Values), "identifier after ','"));
                    }
                },
                _ => return Err(self.syntax_error(after, "',' or end of string")),
            }
        }
    }

    fn parse_requirement(&mut self) -> Result<Requirement, Error> {
        let mut first = self.consume(Mode::Values);
        let negated = first.0 == Token::DoesNotExist;
        if negated {
            first = self.consume(Mode::Values);
        }
        let Token::Identifier(key) = first.0 else {
            return Err(self.syntax_error(first, "identifier"));
        };
        let at_end = matches!(self.peek(Mode::Values).0, Token::End | Token::Comma);
        if negated || at_end {
            let op = if negated { Operator::DoesNotExist } else { Operator::Exists };
            return Requirement::new(key, op, Vec::<String>::new());
        }
        let op_token = self.consume(Mode::KeyAndOperator);
        let op = match op_token.0 {
            Token::In => Operator::In,
            Token::NotIn => Operator::NotIn,
            Token::Equals => Operator::Equals,
            Token::DoubleEquals => Operator::DoubleEquals,
            Token::NotEquals => Operator::NotEquals,
            Token::GreaterThan => Operator::GreaterThan,
            Token::LessThan => Operator::LessThan,
            _ => {
                return Err(self.syntax_error(op_token, "'=', '!=', '==', 'in', 'notin', '>' or '<'"));
            }
        };
        let values = match op {
            Operator::In | Operator::NotIn => self.parse_values()?,
            _ => vec![self.parse_exact_value()?],
        };
        Requirement::new(key, op, values)
    }

    /// `( a, b )`; empty entries (`(a,,b)`, `()`) are the empty value, as
    /// apimachinery.
    fn parse_values(&mut self) -> Result<Vec<String>, Error> {
        let open = self.consume(Mode::Values);
        if open.0 != Token::OpenPar {
            return Err(self.syntax_error(open, "'('"));
        }
        let mut values = Vec::new();
        let mut expect_value = true;
        loop {
            let t = self.consume(Mode::Values);
            match t.0 {
                Token::Identifier(v) if expect_value => {
                    values.push(v.to_owned());
                    expect_value = false;
                }
                Token::Comma => {
                    if expect_value {
                        values.push(String::new());
                    }
                    expect_value = true;
                }
                Token::ClosedPar => {
                    if expect_value {
                        values.push(String::new());
                    }
                    return Ok(values);
                }
                _ if expect_value => return Err(self.syntax_error(t, "',', ')' or identifier")),
                _ => return Err(self.syntax_error(t, "',' or ')'")),
            }
        }
    }

    /// The value after `=`, `!=`, ...: an identifier or nothing.
    fn parse_exact_value(&mut self) -> Result<String, Error> {
        if matches!(self.peek(Mode::Values).0, Token::End | Token::Comma) {
            return Ok(String::new());
        }
        let t = self.consume(Mode::Values);
        match t.0 {
            Token::Identifier(v) => Ok(v.to_owned()),
            _ => Err(self.syntax_error(t, "identifier")),
        }
    }
}

/// Parses a label selector string into its requirements (unsorted).
pub(super) fn parse(input: &str) -> Result<Vec<Requirement>, Error> {
    Parser { input, tokens: lex(input), next: 0 }.parse()
}
