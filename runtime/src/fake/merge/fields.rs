//! Field sets ([`FieldSet`], the one model `apply::extract` reads too) as
//! structured-merge-diff builds them from an object under its schema, and
//! compares two objects by.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

pub(super) use crate::apply::fields_v1::FieldSet;
use crate::apply::{ListType, Merge};

/// What changed between two objects: structured-merge-diff's `Comparison`.
#[derive(Debug, Default)]
pub(super) struct Comparison {
    pub(super) added: FieldSet,
    pub(super) modified: FieldSet,
    pub(super) removed: FieldSet,
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
        Merge::RetainKeys(inner) => granular(value, *inner),
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
