//! Field selectors, as apimachinery's `fields.Selector`.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::hash::BuildHasher;
use std::str::FromStr;

use super::Error;

/// Something with fields to match a field selector against.
///
/// A missing field reads as the empty string, as in apimachinery.
pub trait Fields {
    /// The value of field `name` (e.g. `metadata.name`, `status.phase`), if
    /// the object has it.
    fn get_field(&self, name: &str) -> Option<&str>;
}

impl Fields for BTreeMap<String, String> {
    fn get_field(&self, name: &str) -> Option<&str> {
        self.get(name).map(String::as_str)
    }
}

impl<S: BuildHasher> Fields for HashMap<String, String, S> {
    fn get_field(&self, name: &str) -> Option<&str> {
        self.get(name).map(String::as_str)
    }
}

impl<F: Fields + ?Sized> Fields for &F {
    fn get_field(&self, name: &str) -> Option<&str> {
        (**self).get_field(name)
    }
}

/// `=` (also written `==`) or `!=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FieldOperator {
    /// The field has the value (`=` or `==`); a missing field equals `""`.
    Equals,
    /// The field does not have the value (`!=`).
    NotEquals,
}

/// One `field=value` or `field!=value` condition.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FieldTerm {
    field: String,
    operator: FieldOperator,
    /// Unescaped.
    value: String,
}

impl FieldTerm {
    /// A condition on `field`. The field name may not contain `,`, `=` or
    /// `\` nor end with `!`, which would change the meaning of the written
    /// selector; the value may be anything (it is escaped when written).
    pub fn new(field: impl Into<String>, operator: FieldOperator, value: impl Into<String>) -> Result<Self, Error> {
        let field = field.into();
        if field.contains([',', '=', '\\']) || field.ends_with('!') {
            return Err(Error::InvalidField { field });
        }
        Ok(FieldTerm { field, operator, value: value.into() })
    }

    /// The field name, e.g. `metadata.name`.
    pub fn field(&self) -> &str {
        &self.field
    }

    /// Whether the field must equal the value or differ from it.
    pub fn operator(&self) -> FieldOperator {
        self.operator
    }

    /// The value, unescaped.
    pub fn value(&self) -> &str {
        &self.value
    }

    /// Whether `fields` meet the condition.
    pub fn matches<F: Fields + ?Sized>(&self, fields: &F) -> bool {
        let actual = fields.get_field(&self.field).unwrap_or("");
        match self.operator {
            FieldOperator::Equals => actual == self.value,
            FieldOperator::NotEquals => actual != self.value,
        }
    }
}

impl fmt::Display for FieldTerm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let op = match self.operator {
            FieldOperator::Equals => "=",
            FieldOperator::NotEquals => "!=",
        };
        write!(f, "{}{op}{}", self.field, escape_value(&self.value))
    }
}

/// Escapes `\`, `,` and `=` in a field selector value (apimachinery
/// `EscapeValue`).
pub fn escape_value(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        if matches!(c, '\\' | ',' | '=') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Reverses [`escape_value`]; any other escape, or an unescaped `,` or
/// `=`, is an error (apimachinery `UnescapeValue`).
pub fn unescape_value(value: &str) -> Result<String, Error> {
    let mut out = String::with_capacity(value.len());
    let mut escaped = false;
    for c in value.chars() {
        if escaped {
            if !matches!(c, '\\' | ',' | '=') {
                return Err(Error::InvalidEscape { value: value.to_owned(), sequence: format!("\\{c}") });
            }
            out.push(c);
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if matches!(c, ',' | '=') {
            return Err(Error::UnescapedRune { value: value.to_owned(), rune: c });
        } else {
            out.push(c);
        }
    }
    if escaped {
        return Err(Error::InvalidEscape { value: value.to_owned(), sequence: "\\".to_owned() });
    }
    Ok(out)
}

/// Splits on the commas that are not escaped (apimachinery `splitTerms`:
/// nothing for an empty selector).
pub(super) fn split_terms(selector: &str) -> Vec<&str> {
    let mut terms = Vec::new();
    if selector.is_empty() {
        return terms;
    }
    let mut start = 0;
    let mut escaped = false;
    for (i, c) in selector.char_indices() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == ',' {
            terms.push(&selector[start..i]);
            start = i + 1;
        }
    }
    terms.push(&selector[start..]);
    terms
}

/// Splits a term at its first operator (`!=`, `==`, then `=` at each
/// position), as apimachinery's `splitTerm`: escapes are not skipped, so a
/// `\=` in the field part splits there and the rest then fails to unescape,
/// exactly as upstream rejects it.
pub(super) fn split_term(term: &str) -> Option<(&str, FieldOperator, &str)> {
    let bytes = term.as_bytes();
    for i in 0..bytes.len() {
        let rest = &bytes[i..];
        for (op, operator) in
            [("!=", FieldOperator::NotEquals), ("==", FieldOperator::Equals), ("=", FieldOperator::Equals)]
        {
            if rest.starts_with(op.as_bytes()) {
                // Operators are ASCII, so these are character boundaries.
                return Some((&term[..i], operator, &term[i + op.len()..]));
            }
        }
    }
    None
}

/// Conditions on object fields that must all hold, as apimachinery's
/// `fields.Selector` (`metadata.name=x,status.phase!=Running`).
///
/// Terms are kept sorted by their written form, as apimachinery sorts
/// them, so [`Display`](fmt::Display) is canonical.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct FieldSelector {
    terms: Vec<FieldTerm>,
}

impl FieldSelector {
    /// Selects everything (the empty selector).
    pub fn everything() -> Self {
        Self::default()
    }

    /// `field=value` (apimachinery `OneTermEqualSelector`).
    pub fn one_term_equal(field: impl Into<String>, value: impl Into<String>) -> Result<Self, Error> {
        Ok(Self::from_terms([FieldTerm::new(field, FieldOperator::Equals, value)?]))
    }

    /// `field!=value` (apimachinery `OneTermNotEqualSelector`).
    pub fn one_term_not_equal(field: impl Into<String>, value: impl Into<String>) -> Result<Self, Error> {
        Ok(Self::from_terms([FieldTerm::new(field, FieldOperator::NotEquals, value)?]))
    }

    /// `field=value` for every entry (apimachinery `SelectorFromSet`).
    pub fn from_fields<K, V>(fields: impl IntoIterator<Item = (K, V)>) -> Result<Self, Error>
    where
        K: Into<String>,
        V: Into<String>,
    {
        let terms = fields
            .into_iter()
            .map(|(k, v)| FieldTerm::new(k, FieldOperator::Equals, v))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self::from_terms(terms))
    }

    /// The selector requiring every one of `terms`, kept in canonical
    /// (sorted) order.
    pub fn from_terms(terms: impl IntoIterator<Item = FieldTerm>) -> Self {
        let mut terms: Vec<(String, FieldTerm)> = terms.into_iter().map(|t| (t.to_string(), t)).collect();
        terms.sort_by(|a, b| a.0.cmp(&b.0));
        FieldSelector { terms: terms.into_iter().map(|(_, t)| t).collect() }
    }

    /// Parses apimachinery's syntax (`fields.ParseSelector`).
    pub fn parse(selector: &str) -> Result<Self, Error> {
        let mut terms = Vec::new();
        for part in split_terms(selector) {
            if part.is_empty() {
                continue;
            }
            let Some((field, operator, raw_value)) = split_term(part) else {
                return Err(Error::InvalidFieldTerm { input: selector.to_owned(), term: part.to_owned() });
            };
            let value = unescape_value(raw_value)?;
            // The field part is kept as written, as apimachinery does.
            terms.push(FieldTerm { field: field.to_owned(), operator, value });
        }
        Ok(Self::from_terms(terms))
    }

    /// The conditions, in canonical order.
    pub fn terms(&self) -> &[FieldTerm] {
        &self.terms
    }

    /// Whether the selector is empty and so matches every object
    /// (apimachinery's `Selector.Empty`).
    pub fn is_everything(&self) -> bool {
        self.terms.is_empty()
    }

    /// Whether `fields` meet every condition.
    pub fn matches<F: Fields + ?Sized>(&self, fields: &F) -> bool {
        self.terms.iter().all(|t| t.matches(fields))
    }

    /// Matches with a lookup function instead of a [`Fields`] value.
    pub fn matches_with<'a>(&self, lookup: impl Fn(&str) -> Option<&'a str>) -> bool {
        self.terms.iter().all(|t| {
            let actual = lookup(&t.field).unwrap_or("");
            match t.operator {
                FieldOperator::Equals => actual == t.value,
                FieldOperator::NotEquals => actual != t.value,
            }
        })
    }

    /// The value a term requires for `field` with `=`, if any
    /// (apimachinery `RequiresExactMatch`).
    pub fn requires_exact_match(&self, field: &str) -> Option<&str> {
        self.terms.iter().find(|t| t.field == field && t.operator == FieldOperator::Equals).map(|t| t.value.as_str())
    }
}

impl FromStr for FieldSelector {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        Self::parse(s)
    }
}

impl fmt::Display for FieldSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, t) in self.terms.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{t}")?;
        }
        Ok(())
    }
}
