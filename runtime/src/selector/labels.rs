//! Label selectors, as apimachinery's `labels.Selector`.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::hash::BuildHasher;
use std::str::FromStr;

use super::validation::{validate_label_value, validate_qualified_name};
use super::{Error, label_parser};

/// Something with labels to match a selector against.
pub trait Labels {
    /// The value of label `key`, if present.
    fn get_label(&self, key: &str) -> Option<&str>;
}

impl Labels for BTreeMap<String, String> {
    fn get_label(&self, key: &str) -> Option<&str> {
        self.get(key).map(String::as_str)
    }
}

impl Labels for crate::Map {
    fn get_label(&self, key: &str) -> Option<&str> {
        self.get(key).map(|v| v.as_str())
    }
}

impl<S: BuildHasher> Labels for HashMap<String, String, S> {
    fn get_label(&self, key: &str) -> Option<&str> {
        self.get(key).map(String::as_str)
    }
}

impl<L: Labels + ?Sized> Labels for &L {
    fn get_label(&self, key: &str) -> Option<&str> {
        (**self).get_label(key)
    }
}

/// No labels at all, as `metadata.labels()` returns for unlabelled objects.
impl<L: Labels> Labels for Option<L> {
    fn get_label(&self, key: &str) -> Option<&str> {
        self.as_ref().and_then(|l| l.get_label(key))
    }
}

/// How a [`Requirement`] compares a label with its values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Operator {
    /// `key=value`
    Equals,
    /// `key==value` (same meaning as `=`)
    DoubleEquals,
    /// `key!=value`: true also when the label is absent.
    NotEquals,
    /// `key in (a,b)`
    In,
    /// `key notin (a,b)`: true also when the label is absent.
    NotIn,
    /// `key`
    Exists,
    /// `!key`
    DoesNotExist,
    /// `key>1`: the label is an integer greater than the value.
    GreaterThan,
    /// `key<1`: the label is an integer less than the value.
    LessThan,
}

impl Operator {
    /// The operator of a `matchExpressions` entry of a metav1
    /// `LabelSelector`: `In`, `NotIn`, `Exists` or `DoesNotExist`.
    pub fn from_label_selector_operator(op: &str) -> Result<Self, Error> {
        match op {
            "In" => Ok(Operator::In),
            "NotIn" => Ok(Operator::NotIn),
            "Exists" => Ok(Operator::Exists),
            "DoesNotExist" => Ok(Operator::DoesNotExist),
            _ => Err(Error::UnknownOperator { operator: op.to_owned() }),
        }
    }
}

/// One condition of a selector: a key, an operator and values.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Requirement {
    key: String,
    operator: Operator,
    /// Sorted and without duplicates, so equal requirements compare equal.
    values: Vec<String>,
}

impl Requirement {
    /// Checks the key and values as apimachinery's `NewRequirement`: `In`
    /// and `NotIn` need at least one value, `=`/`==`/`!=`/`>`/`<` exactly
    /// one (an integer for `>`/`<`), `Exists`/`DoesNotExist` none.
    pub fn new<I, V>(key: impl Into<String>, operator: Operator, values: I) -> Result<Self, Error>
    where
        I: IntoIterator<Item = V>,
        V: Into<String>,
    {
        let key = key.into();
        validate_qualified_name(&key).map_err(|reason| Error::InvalidKey { key: key.clone(), reason })?;
        let values: BTreeSet<String> = values.into_iter().map(Into::into).collect();
        let invalid = |reason: &'static str| Error::InvalidRequirement { key: key.clone(), reason };
        match operator {
            Operator::In | Operator::NotIn if values.is_empty() => {
                return Err(invalid("for 'in', 'notin' operators, values set can't be empty"));
            }
            Operator::Equals | Operator::DoubleEquals | Operator::NotEquals if values.len() != 1 => {
                return Err(invalid("exact-match compatibility requires one single value"));
            }
            Operator::Exists | Operator::DoesNotExist if !values.is_empty() => {
                return Err(invalid("values set must be empty for exists and does not exist"));
            }
            Operator::GreaterThan | Operator::LessThan => {
                if values.len() != 1 {
                    return Err(invalid("for 'Gt', 'Lt' operators, exactly one value is required"));
                }
                if values.iter().any(|v| v.parse::<i64>().is_err()) {
                    return Err(invalid("for 'Gt', 'Lt' operators, the value must be an integer"));
                }
            }
            _ => {}
        }
        for value in &values {
            validate_label_value(value).map_err(|reason| Error::InvalidValue {
                key: key.clone(),
                value: value.clone(),
                reason,
            })?;
        }
        Ok(Requirement { key, operator, values: values.into_iter().collect() })
    }

    /// A `matchExpressions` entry: `operator` is the metav1 spelling (`In`,
    /// `NotIn`, `Exists`, `DoesNotExist`).
    pub fn from_expression<I, V>(key: impl Into<String>, operator: &str, values: I) -> Result<Self, Error>
    where
        I: IntoIterator<Item = V>,
        V: Into<String>,
    {
        Self::new(key, Operator::from_label_selector_operator(operator)?, values)
    }

    /// The label key, e.g. `app.kubernetes.io/name`.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// How the label's value is compared with [`values`](Self::values).
    pub fn operator(&self) -> Operator {
        self.operator
    }

    /// The values, sorted.
    pub fn values(&self) -> &[String] {
        &self.values
    }

    /// Whether `labels` meet the requirement; a missing label meets only
    /// `!=`, `notin` and `!` (DoesNotExist).
    pub fn matches<L: Labels + ?Sized>(&self, labels: &L) -> bool {
        let value = labels.get_label(&self.key);
        let has = |v: &str| self.values.binary_search_by(|x| x.as_str().cmp(v)).is_ok();
        match self.operator {
            Operator::Equals | Operator::DoubleEquals | Operator::In => value.is_some_and(has),
            Operator::NotEquals | Operator::NotIn => !value.is_some_and(has),
            Operator::Exists => value.is_some(),
            Operator::DoesNotExist => value.is_none(),
            Operator::GreaterThan | Operator::LessThan => {
                let (Some(Ok(actual)), Some(Ok(bound))) =
                    (value.map(str::parse::<i64>), self.values.first().map(|v| v.parse::<i64>()))
                else {
                    return false;
                };
                if self.operator == Operator::GreaterThan { actual > bound } else { actual < bound }
            }
        }
    }
}

impl fmt::Display for Requirement {
    /// The apimachinery spelling: `!k`, `k`, `k=v`, `k in (a,b)`, ...
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let op = match self.operator {
            Operator::DoesNotExist => return write!(f, "!{}", self.key),
            Operator::Exists => return f.write_str(&self.key),
            Operator::Equals => "=",
            Operator::DoubleEquals => "==",
            Operator::NotEquals => "!=",
            Operator::GreaterThan => ">",
            Operator::LessThan => "<",
            Operator::In => " in ",
            Operator::NotIn => " notin ",
        };
        write!(f, "{}{op}", self.key)?;
        let values = self.values.join(",");
        match self.operator {
            Operator::In | Operator::NotIn => write!(f, "({values})"),
            _ => f.write_str(&values),
        }
    }
}

/// A set of label requirements that must all hold, as apimachinery's
/// `labels.Selector`.
///
/// Build it by parsing (`"app=web,tier in (a,b)".parse()`), from a
/// `matchLabels` map and `matchExpressions` ([`from_match`](Self::from_match))
/// or from plain labels ([`from_labels`](Self::from_labels)). Requirements
/// are kept sorted by key, so [`Display`](fmt::Display) gives apimachinery's
/// canonical string.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct LabelSelector {
    requirements: Vec<Requirement>,
    /// `labels.Nothing()`: what a missing (null) metav1 `LabelSelector`
    /// selects.
    matches_nothing: bool,
}

impl LabelSelector {
    /// Selects everything (the empty selector).
    pub fn everything() -> Self {
        Self::default()
    }

    /// Selects nothing.
    pub fn nothing() -> Self {
        LabelSelector { requirements: Vec::new(), matches_nothing: true }
    }

    /// Parses apimachinery's syntax; see the module docs.
    pub fn parse(s: &str) -> Result<Self, Error> {
        Ok(Self::from_requirements(label_parser::parse(s)?))
    }

    /// The selector requiring all of `requirements`, kept sorted by key.
    pub fn from_requirements(requirements: impl IntoIterator<Item = Requirement>) -> Self {
        let mut requirements: Vec<Requirement> = requirements.into_iter().collect();
        // Stable, as apimachinery: requirements on one key keep their order.
        requirements.sort_by(|a, b| a.key.cmp(&b.key));
        LabelSelector { requirements, matches_nothing: false }
    }

    /// `key=value` for every label (apimachinery `SelectorFromValidatedSet`
    /// with validation).
    pub fn from_labels<K, V>(labels: impl IntoIterator<Item = (K, V)>) -> Result<Self, Error>
    where
        K: Into<String>,
        V: Into<String>,
    {
        Self::from_match(labels, Vec::new())
    }

    /// A metav1 `LabelSelector` (`LabelSelectorAsSelector`): `matchLabels`
    /// entries become `key=value`, followed by the `matchExpressions`
    /// requirements. Both empty selects everything; for a missing selector
    /// use [`nothing`](Self::nothing).
    pub fn from_match<K, V>(
        match_labels: impl IntoIterator<Item = (K, V)>,
        match_expressions: impl IntoIterator<Item = Requirement>,
    ) -> Result<Self, Error>
    where
        K: Into<String>,
        V: Into<String>,
    {
        let mut requirements = Vec::new();
        for (k, v) in match_labels {
            requirements.push(Requirement::new(k, Operator::Equals, [v.into()])?);
        }
        requirements.extend(match_expressions);
        Ok(Self::from_requirements(requirements))
    }

    /// Adds a requirement (kept sorted by key).
    #[must_use]
    pub fn and(mut self, requirement: Requirement) -> Self {
        let at = self.requirements.partition_point(|r| r.key <= requirement.key);
        self.requirements.insert(at, requirement);
        self
    }

    /// The requirements, sorted by key.
    pub fn requirements(&self) -> &[Requirement] {
        &self.requirements
    }

    /// Whether this selects everything (no requirements).
    pub fn is_everything(&self) -> bool {
        self.requirements.is_empty() && !self.matches_nothing
    }

    /// The value `label` must have for this selector to match, when the
    /// first requirement on it pins one value (`=`, `==`, or `in` with one
    /// value), as apimachinery's `RequiresExactMatch`: a lister can then
    /// look objects up by that value in an index instead of scanning.
    pub fn requires_exact_match(&self, label: &str) -> Option<&str> {
        let r = self.requirements.iter().find(|r| r.key == label)?;
        match (r.operator, r.values.as_slice()) {
            (Operator::Equals | Operator::DoubleEquals | Operator::In, [value]) => Some(value),
            _ => None,
        }
    }

    /// Whether `labels` meet every requirement; always false for
    /// [`nothing`](Self::nothing).
    pub fn matches<L: Labels + ?Sized>(&self, labels: &L) -> bool {
        !self.matches_nothing && self.requirements.iter().all(|r| r.matches(labels))
    }
}

impl FromStr for LabelSelector {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        Self::parse(s)
    }
}

impl fmt::Display for LabelSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, r) in self.requirements.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{r}")?;
        }
        Ok(())
    }
}
