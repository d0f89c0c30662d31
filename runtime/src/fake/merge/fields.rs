//! Field sets as structured-merge-diff builds them from an object under its
//! schema, compares two objects by, and writes as `FieldsV1`.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::apply::{ListType, Merge};

/// A set of field paths as a tree of `FieldsV1` steps (`f:name`,
/// `k:{"name":"app"}`, `v:"value"`): whether each node is itself a member.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct FieldSet {
    /// The path to this node is in the set (`"."`, or a leaf `{}`).
    pub(super) member: bool,
    /// The steps below, by their `FieldsV1` text (sorted as JSON writes them).
    pub(super) children: BTreeMap<String, FieldSet>,
}

/// What changed between two objects: structured-merge-diff's `Comparison`.
#[derive(Debug, Default)]
pub(super) struct Comparison {
    pub(super) added: FieldSet,
    pub(super) modified: FieldSet,
    pub(super) removed: FieldSet,
}

impl FieldSet {
    /// Reads a `fieldsV1` object; an error names the path.
    pub(super) fn parse(value: &Value) -> Result<Self, String> {
        Self::parse_at(value, "")
    }

    fn parse_at(value: &Value, path: &str) -> Result<Self, String> {
        let Value::Object(entries) = value else { return Err(format!("fieldsV1 at {path:?} is not an object")) };
        let mut set = FieldSet { member: entries.is_empty(), children: BTreeMap::new() };
        for (step, below) in entries {
            if step == "." {
                set.member = true;
            } else {
                set.children.insert(step.clone(), Self::parse_at(below, &format!("{path}.{step}"))?);
            }
        }
        Ok(set)
    }

    /// The set as the apiserver writes `fieldsV1`.
    pub(super) fn to_value(&self) -> Value {
        let mut out = Map::new();
        if self.member && !self.children.is_empty() {
            out.insert(".".into(), Value::Object(Map::new()));
        }
        for (step, below) in &self.children {
            out.insert(step.clone(), below.to_value());
        }
        Value::Object(out)
    }

    /// No path is a member.
    pub(super) fn is_empty(&self) -> bool {
        !self.member && self.children.values().all(FieldSet::is_empty)
    }

    /// The node at `step` below this one, made if missing.
    pub(super) fn child(&mut self, step: String) -> &mut FieldSet {
        self.children.entry(step).or_default()
    }

    /// Makes `path` a member.
    pub(super) fn insert(&mut self, path: &[String]) {
        match path.split_first() {
            None => self.member = true,
            Some((step, rest)) => self.child(step.clone()).insert(rest),
        }
    }

    /// Whether `path` or a path below it is a member.
    pub(super) fn has_at_or_below(&self, path: &[String]) -> bool {
        match path.split_first() {
            None => !self.is_empty(),
            Some((step, rest)) => self.children.get(step).is_some_and(|c| c.has_at_or_below(rest)),
        }
    }

    /// Drops the steps with no member at or below them (an empty list
    /// owns nothing).
    fn prune(&mut self) {
        self.children.retain(|_, below| {
            below.prune();
            !below.is_empty()
        });
    }

    /// Adds the members of `other`.
    pub(super) fn union(&mut self, other: &FieldSet) {
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
    pub(super) fn difference(&self, other: &FieldSet) -> FieldSet {
        self.filter(Some(other), |theirs| !theirs)
    }

    /// The members of both.
    pub(super) fn intersection(&self, other: &FieldSet) -> FieldSet {
        self.filter(Some(other), |theirs| theirs)
    }

    /// Every member's path, in order.
    pub(super) fn members(&self) -> Vec<Vec<String>> {
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

/// `path` as the apiserver writes a conflict's field:
/// `.spec.containers[name="app"].image`, `.metadata.finalizers[="a"]`.
pub(super) fn display(path: &[String]) -> String {
    let mut out = String::new();
    for step in path {
        if let Some(name) = step.strip_prefix("f:") {
            out.push('.');
            out.push_str(name);
        } else if let Some(keys) = step.strip_prefix("k:") {
            let keys: Map<String, Value> = serde_json::from_str(keys).unwrap_or_default();
            let parts: Vec<String> = keys.iter().map(|(k, v)| format!("{k}={v}")).collect();
            out.push_str(&format!("[{}]", parts.join(",")));
        } else if let Some(value) = step.strip_prefix("v:") {
            out.push_str(&format!("[={value}]"));
        } else {
            out.push_str(step);
        }
    }
    out
}

/// The step naming list element `item` of a list merging as `list_type`.
pub(super) fn element_step(item: &Value, list_type: ListType) -> Result<String, String> {
    match list_type {
        ListType::Map(keys) => {
            let Value::Object(fields) = item else {
                return Err(format!("element {item} of a keyed list is not an object"));
            };
            let key: Map<String, Value> =
                keys.iter().filter_map(|k| fields.get(*k).map(|v| ((*k).to_owned(), v.clone()))).collect();
            if key.is_empty() {
                return Err(format!("element {item} has none of the list's key fields {keys:?}"));
            }
            Ok(format!("k:{}", Value::Object(key)))
        }
        ListType::Set | ListType::Atomic => Ok(format!("v:{item}")),
    }
}

/// Whether `value` merges part by part under `merge` (rather than whole).
fn granular(value: &Value, merge: Merge) -> bool {
    match merge {
        Merge::Atomic => false,
        Merge::Struct(_) | Merge::Map(_) | Merge::Deduced => value.is_object(),
        Merge::List(list) => list.apply != ListType::Atomic && value.is_array(),
    }
}

/// The field set of `value` under `merge` (structured-merge-diff's
/// `ToFieldSet`): scalars and atomic values, map keys, list elements and
/// empty or `null` fields are members.
pub(super) fn field_set(value: &Value, merge: Merge) -> Result<FieldSet, String> {
    let mut set = FieldSet::default();
    walk(value, merge, &mut set)?;
    set.member = false;
    set.prune();
    Ok(set)
}

fn walk(value: &Value, merge: Merge, node: &mut FieldSet) -> Result<(), String> {
    if !granular(value, merge) {
        node.member = true;
        return Ok(());
    }
    match value {
        Value::Object(fields) => {
            for (name, field) in fields {
                let child = node.child(format!("f:{name}"));
                walk(field, merge.field(name), child)?;
                let empty = field.is_null() || field.as_object().is_some_and(Map::is_empty);
                if empty || !matches!(merge, Merge::Struct(_)) {
                    child.member = true;
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                let child = node.child(element_step(item, merge.apply_list())?);
                walk(item, merge.element(), child)?;
                child.member = true;
            }
        }
        _ => node.member = true,
    }
    Ok(())
}

/// The children of a granular value by step.
fn children(value: &Value, merge: Merge) -> Result<BTreeMap<String, (Value, Merge)>, String> {
    let mut out = BTreeMap::new();
    match value {
        Value::Object(fields) => {
            for (name, field) in fields {
                out.insert(format!("f:{name}"), (field.clone(), merge.field(name)));
            }
        }
        Value::Array(items) => {
            for item in items {
                out.entry(element_step(item, merge.apply_list())?).or_insert((item.clone(), merge.element()));
            }
        }
        _ => {}
    }
    Ok(out)
}

/// What changed from `old` to `new` (structured-merge-diff's `Compare`):
/// every path present on one side only is added or removed, every atomic
/// value that differs modified.
pub(super) fn compare(old: &Value, new: &Value, merge: Merge) -> Result<Comparison, String> {
    let mut out = Comparison::default();
    compare_at(Some(old), Some(new), merge, &mut Vec::new(), &mut out)?;
    Ok(out)
}

fn compare_at(
    old: Option<&Value>,
    new: Option<&Value>,
    merge: Merge,
    path: &mut Vec<String>,
    out: &mut Comparison,
) -> Result<(), String> {
    let is_granular = old.is_none_or(|v| granular(v, merge))
        && new.is_none_or(|v| granular(v, merge))
        && old.zip(new).is_none_or(|(a, b)| a.is_object() == b.is_object());
    if !path.is_empty() {
        match (old, new) {
            (None, _) => out.added.insert(path),
            (_, None) => out.removed.insert(path),
            (Some(a), Some(b)) if !is_granular && a != b => out.modified.insert(path),
            _ => {}
        }
    }
    if !is_granular {
        return Ok(());
    }
    let old_children = old.map(|v| children(v, merge)).transpose()?.unwrap_or_default();
    let new_children = new.map(|v| children(v, merge)).transpose()?.unwrap_or_default();
    let steps: std::collections::BTreeSet<&String> = old_children.keys().chain(new_children.keys()).collect();
    for step in steps {
        let (a, b) = (old_children.get(step), new_children.get(step));
        let child_merge = a.or(b).map_or(Merge::Atomic, |(_, m)| *m);
        path.push(step.clone());
        compare_at(a.map(|(v, _)| v), b.map(|(v, _)| v), child_merge, path, out)?;
        path.pop();
    }
    Ok(())
}
