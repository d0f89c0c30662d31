//! `FieldsV1`, the set of field paths a managedFields entry records, as
//! structured-merge-diff writes it: a JSON object per path step, keyed
//! `f:<field>` (a struct field or map key), `k:<json object>` (the element
//! of an associative list whose key fields have those values), `v:<json>`
//! (the element of a set list equal to that value), `i:<index>` (an
//! element by position); `"."` marks a step that is itself a member of the
//! set while also having members below it.

use serde_json::{Map as JsonMap, Value};

/// One path step of a [`FieldSet`].
#[derive(Debug, Clone, PartialEq)]
pub(super) enum PathElement {
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
    pub(super) fn matches_item(&self, index: usize, item: &Value) -> bool {
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

/// A set of field paths, as a tree: the steps below one path.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct FieldSet {
    /// The steps below this one, in the order `FieldsV1` lists them.
    pub(super) children: Vec<(PathElement, FieldSet)>,
}

impl FieldSet {
    /// Reads a `fieldsV1` object. An error names the path (`.f:spec.k:{…}`)
    /// where it is malformed.
    pub(super) fn parse(fields_v1: &Value) -> Result<Self, (String, String)> {
        let mut path = String::new();
        Self::parse_at(fields_v1, &mut path)
    }

    fn parse_at(node: &Value, path: &mut String) -> Result<Self, (String, String)> {
        let Value::Object(entries) = node else {
            return Err((display(path), format!("expected a JSON object, found {}", kind(node))));
        };
        let mut set = FieldSet::default();
        for (step, below) in entries {
            if step == "." {
                // Membership of a step with members below it: Extract reads
                // only the leaves (client-go's `fieldset.Leaves()`), so it
                // changes nothing here.
                continue;
            }
            let len = path.len();
            path.push('.');
            path.push_str(step);
            let element = PathElement::parse(step).map_err(|reason| (display(path), reason))?;
            let child = Self::parse_at(below, path)?;
            path.truncate(len);
            set.children.push((element, child));
        }
        Ok(set)
    }

    /// Whether this path is a leaf of the set: a member with nothing below.
    pub(super) fn is_leaf(&self) -> bool {
        self.children.is_empty()
    }

    /// The set below step `element`, if it has one.
    #[cfg(test)]
    pub(super) fn child(&self, element: &PathElement) -> Option<&FieldSet> {
        self.children.iter().find(|(e, _)| e == element).map(|(_, set)| set)
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
        let spec = set.child(&PathElement::Field("spec".into())).unwrap();
        let containers = spec.child(&PathElement::Field("containers".into())).unwrap();
        let (key, app) = &containers.children[0];
        assert!(key.matches_item(5, &json!({"name": "app", "image": "x"})));
        assert!(!key.matches_item(0, &json!({"name": "other"})));
        assert_eq!(app.children.len(), 1, "the '.' marker is not a step");
        assert!(app.child(&PathElement::Field("image".into())).unwrap().is_leaf());
        let finalizers = set.child(&PathElement::Field("finalizers".into())).unwrap();
        assert!(finalizers.children[0].0.matches_item(0, &json!("a")));
        let args = set.child(&PathElement::Field("args".into())).unwrap();
        assert!(args.children[0].0.matches_item(2, &json!("z")));
        assert!(!args.children[0].0.matches_item(1, &json!("z")));
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
