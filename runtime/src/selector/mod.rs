//! Label and field selectors, parsed, built and matched as apimachinery's
//! `labels` and `fields` packages do.
//!
//! - [`LabelSelector`]: `app=web,tier in (front,back),!canary`. Parse one
//!   from a string, or build it from a metav1 `LabelSelector`'s
//!   `matchLabels`/`matchExpressions` with [`LabelSelector::from_match`] and
//!   [`Requirement::from_expression`]. Match it against any [`Labels`] (a
//!   `BTreeMap`, or `Option<&BTreeMap>` straight from `metadata.labels()`).
//! - [`FieldSelector`]: `metadata.name=x,status.phase!=Running`, matched
//!   against any [`Fields`]. The apiserver only supports a few fields per
//!   kind; client-side matching is for caches and tests.
//!
//! Both print their canonical form with `Display` (what goes into the
//! `labelSelector`/`fieldSelector` query parameters), and parsing that form
//! gives the same selector back.

mod fields;
mod label_parser;
mod labels;
mod validation;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod upstream_fields_tests;
#[cfg(test)]
mod upstream_labels_tests;

pub use self::fields::{FieldOperator, FieldSelector, FieldTerm, Fields, escape_value, unescape_value};
pub use self::labels::{LabelSelector, Labels, Operator, Requirement};

/// Errors of building or parsing a selector.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The label selector string does not follow the grammar.
    #[error("unable to parse requirement in {input:?}: at position {position}: found {found}, expected: {expected}")]
    Syntax {
        /// The whole selector string.
        input: String,
        /// Byte offset in `input` where parsing stopped.
        position: usize,
        /// The token found there.
        found: String,
        /// What the grammar allows there.
        expected: &'static str,
    },
    /// A label key is not a qualified name (`[prefix/]name`).
    #[error("invalid label key {key:?}: {reason}")]
    InvalidKey {
        /// The key as written.
        key: String,
        /// Which rule it breaks.
        reason: String,
    },
    /// A label value is not valid label value syntax.
    #[error("invalid label value {value:?} for key {key:?}: {reason}")]
    InvalidValue {
        /// The key the value belongs to.
        key: String,
        /// The value as written.
        value: String,
        /// Which rule it breaks.
        reason: String,
    },
    /// The operator and the number or kind of values do not fit together.
    #[error("invalid requirement on {key:?}: {reason}")]
    InvalidRequirement {
        /// The key of the requirement.
        key: String,
        /// What does not fit, e.g. `Exists` given values.
        reason: &'static str,
    },
    /// A `matchExpressions` operator other than In, NotIn, Exists and
    /// DoesNotExist.
    #[error("{operator:?} is not a valid label selector operator")]
    UnknownOperator {
        /// The operator as written.
        operator: String,
    },
    /// A field selector term without an operator.
    #[error("invalid field selector {input:?}: can't understand {term:?}")]
    InvalidFieldTerm {
        /// The whole selector string.
        input: String,
        /// The term without an operator.
        term: String,
    },
    /// A field name that cannot be written unambiguously.
    #[error("invalid field name {field:?}: must not contain ',', '=' or '\\', nor end with '!'")]
    InvalidField {
        /// The field name as given.
        field: String,
    },
    /// A backslash not followed by `\`, `,` or `=` in a field value.
    #[error("invalid escape sequence {sequence:?} in field selector value {value:?}")]
    InvalidEscape {
        /// The value as written.
        value: String,
        /// The bad escape sequence.
        sequence: String,
    },
    /// A `,` or `=` not escaped in a field value.
    #[error("invalid field selector value {value:?}: unescaped {rune:?}")]
    UnescapedRune {
        /// The value as written.
        value: String,
        /// The character that needs a backslash.
        rune: char,
    },
}
