//! `FieldsV1`, the set of field paths a managedFields entry records, as
//! structured-merge-diff writes it: a JSON object per path step, keyed
//! `f:<field>` (a struct field or map key), `k:<json object>` (the element
//! of an associative list whose key fields have those values), `v:<json>`
//! (the element of a set list equal to that value), `i:<index>` (an
//! element by position); `"."` marks a step that is itself a member of the
//! set while also having members below it.

use std::collections::BTreeMap;

use serde_json::{Map as JsonMap, Value};

/// One path step of a [`FieldSet`].
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum PathElement {
    /// `f:<name>`: a struct field or a map key.
    Field(String),
    /// `k:{...}`: the associative-list element whose key fields hold these values.
    Key(JsonMap<String, Value>),
    /// `v:<json>`: the set-list element equal to this value.
    Value(Value),
    /// `i:<n>`: the list element at this position.
    Index(usize),
}

impl PathElement {
    fn parse(text: &str) -> Result<Self, String> {
        let (prefix, rest) = text.split_once(':').ok_or_else(|| format!("path element {text:?} has no prefix"))?;
        match prefix {
            "f" => Ok(PathElement::Field(rest.to_owned())),
            "k" => match serde_json::from_str(rest) {
                Ok(Value::Object(keys)) => Ok(PathElement::Key(keys)),
                Ok(_) => Err(format!("key {rest:?} is not a JSON object")),
                Err(e) => Err(format!("key {rest:?} is not JSON: {e}")),
            },
            "v" => serde_json::from_str(rest)
                .map(PathElement::Value)
                .map_err(|e| format!("value {rest:?} is not JSON: {e}")),
            "i" => rest.parse().map(PathElement::Index).map_err(|_| format!("index {rest:?} is not a number")),
            _ => Err(format!("path element {text:?} has the unknown prefix {prefix:?}")),
        }
    }

    /// Whether list element `item`, at `index`, is the one this step names.
    pub(crate) fn matches_item(&self, index: usize, item: &Value) -> bool {
        match self {
            PathElement::Key(keys) => {
                let Value::Object(fields) = item else { return false };
                keys.iter().all(|(name, value)| fields.get(name) == Some(value))
            }
            PathElement::Value(value) => item == value,
            PathElement::Index(i) => *i == index,
            PathElement::Field(_) => false,
        }
    }
}

/// A set of field paths as a tree of `FieldsV1` steps (`f:name`,
/// `k:{"name":"app"}`, `v:"value"`, `i:2`), each node knowing whether its
/// own path is a member: what `apply::extract` reads and the fake
/// apiserver's server-side apply computes with, one model for both.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct FieldSet {
    /// The path to this node is in the set (`"."`, or a leaf `{}`).
    pub(crate) member: bool,
    /// The steps below, by their `FieldsV1` text (sorted, as JSON writes
    /// them); every text is a valid [`PathElement`].
    pub(crate) children: BTreeMap<String, FieldSet>,
}

// Extract reads sets; building and combining them serves the fake
// apiserver's server-side apply.
#[cfg_attr(not(feature = "fake"), allow(dead_code))]
impl FieldSet {
    /// Reads a `fieldsV1` object. An error names the path (`.f:spec.k:{…}`)
    /// where it is malformed: not an object, or a step that is no
    /// [`PathElement`].
    pub(crate) fn parse(fields_v1: &Value) -> Result<Self, (String, String)> {
        let mut path = String::new();
        Self::parse_at(fields_v1, &mut path)
    }

    fn parse_at(node: &Value, path: &mut String) -> Result<Self, (String, String)> {
        let Value::Object(entries) = node else {
            return Err((display(path), format!("expected a JSON object, found {}", kind(node))));
        };
        let mut set = FieldSet { member: entries.is_empty(), children: BTreeMap::new() };
        for (step, below) in entries {
            if step == "." {
                set.member = true;
                continue;
            }
            let len = path.len();
            path.push('.');
            path.push_str(step);
            PathElement::parse(step).map_err(|reason| (display(path), reason))?;
            let child = Self::parse_at(below, path)?;
            path.truncate(len);
            set.children.insert(step.clone(), child);
        }
        Ok(set)
    }

    /// The set as the apiserver writes `fieldsV1`.
    pub(crate) fn to_value(&self) -> Value {
        let mut out = JsonMap::new();
        if self.member && !self.children.is_empty() {
            out.insert(".".into(), Value::Object(JsonMap::new()));
        }
        for (step, below) in &self.children {
            out.insert(step.clone(), below.to_value());
        }
        Value::Object(out)
    }

    /// Whether this path is a leaf of the set: nothing below it.
    pub(crate) fn is_leaf(&self) -> bool {
        self.children.is_empty()
    }

    /// The steps below, read: what each names, and the set below it. A
    /// parsed set's steps all read; one built by hand may not, and such
    /// steps are left out.
    pub(crate) fn elements(&self) -> impl Iterator<Item = (PathElement, &FieldSet)> {
        self.children.iter().filter_map(|(step, below)| Some((PathElement::parse(step).ok()?, below)))
    }

    /// No path is a member.
    pub(crate) fn is_empty(&self) -> bool {
        !self.member && self.children.values().all(FieldSet::is_empty)
    }

    /// The node at `step` below this one, made if missing.
    pub(crate) fn child(&mut self, step: String) -> &mut FieldSet {
        self.children.entry(step).or_default()
    }

    /// Makes `path` a member.
    pub(crate) fn insert(&mut self, path: &[String]) {
        match path.split_first() {
            None => self.member = true,
            Some((step, rest)) => self.child(step.clone()).insert(rest),
        }
    }

    /// Whether `path` or a path below it is a member.
    pub(crate) fn has_at_or_below(&self, path: &[String]) -> bool {
        match path.split_first() {
            None => !self.is_empty(),
            Some((step, rest)) => self.children.get(step).is_some_and(|c| c.has_at_or_below(rest)),
        }
    }

    /// Drops the steps with no member at or below them (an empty list
    /// owns nothing).
    pub(crate) fn prune(&mut self) {
        self.children.retain(|_, below| {
            below.prune();
            !below.is_empty()
        });
    }

    /// Adds the members of `other`.
    pub(crate) fn union(&mut self, other: &FieldSet) {
        self.member |= other.member;
        for (step, below) in &other.children {
            self.child(step.clone()).union(below);
        }
    }

    /// The members of `self` that `keep` says of `other`'s membership.
    fn filter(&self, other: Option<&FieldSet>, keep: fn(bool) -> bool) -> FieldSet {
        let mut out =
            FieldSet { member: self.member && keep(other.is_some_and(|o| o.member)), children: BTreeMap::new() };
        for (step, below) in &self.children {
            let filtered = below.filter(other.and_then(|o| o.children.get(step)), keep);
            if !filtered.is_empty() {
                out.children.insert(step.clone(), filtered);
            }
        }
        out
    }

    /// The members of `self` not in `other`.
    pub(crate) fn difference(&self, other: &FieldSet) -> FieldSet {
        self.filter(Some(other), |theirs| !theirs)
    }

    /// The members of both.
    pub(crate) fn intersection(&self, other: &FieldSet) -> FieldSet {
        self.filter(Some(other), |theirs| theirs)
    }

    /// Every member's path, in order.
    pub(crate) fn members(&self) -> Vec<Vec<String>> {
        let mut out = Vec::new();
        self.collect(&mut Vec::new(), &mut out);
        out
    }

    fn collect(&self, path: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
        if self.member {
            out.push(path.clone());
        }
        for (step, below) in &self.children {
            path.push(step.clone());
            below.collect(path, out);
            path.pop();
        }
    }
}

fn display(path: &str) -> String {
    if path.is_empty() { ".".to_owned() } else { path.to_owned() }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn reads_every_kind_of_step() {
        let set = FieldSet::parse(&json!({
            "f:spec": {"f:containers": {"k:{\"name\":\"app\"}": {".": {}, "f:image": {}}}},
            "f:finalizers": {"v:\"a\"": {}},
            "f:args": {"i:2": {}},
        }))
        .unwrap();
        let spec = &set.children["f:spec"];
        let containers = &spec.children["f:containers"];
        let (key, app) = containers.elements().next().unwrap();
        assert!(key.matches_item(5, &json!({"name": "app", "image": "x"})));
        assert!(!key.matches_item(0, &json!({"name": "other"})));
        assert_eq!(app.children.len(), 1, "the '.' marker is not a step");
        assert!(app.member, "but it makes the path a member");
        assert!(app.children["f:image"].is_leaf() && app.children["f:image"].member);
        assert_eq!(
            set.elements().map(|(e, _)| e).collect::<Vec<_>>(),
            [
                PathElement::Field("args".into()),
                PathElement::Field("finalizers".into()),
                PathElement::Field("spec".into()),
            ]
        );
        let finalizers = &set.children["f:finalizers"];
        assert!(finalizers.elements().next().unwrap().0.matches_item(0, &json!("a")));
        let args = &set.children["f:args"];
        assert!(args.elements().next().unwrap().0.matches_item(2, &json!("z")));
        assert!(!args.elements().next().unwrap().0.matches_item(1, &json!("z")));
    }

    #[test]
    fn a_malformed_set_names_where() {
        let cases = [
            (json!({"f:spec": {"x": {}}}), ".f:spec.x", "no prefix"),
            (json!({"f:spec": {"k:[1]": {}}}), ".f:spec.k:[1]", "not a JSON object"),
            (json!({"f:spec": {"k:{": {}}}), ".f:spec.k:{", "not JSON"),
            (json!({"f:a": {"i:x": {}}}), ".f:a.i:x", "not a number"),
            (json!({"f:a": {"z:1": {}}}), ".f:a.z:1", "unknown prefix"),
            (json!({"f:a": 3}), ".f:a", "found a number"),
            (json!([]), ".", "found an array"),
        ];
        for (input, path, reason) in cases {
            let (at, why) = FieldSet::parse(&input).unwrap_err();
            assert_eq!(at, path, "{input}");
            assert!(why.contains(reason), "{input}: {why}");
        }
    }
}
