//! Creating a two-way strategic merge patch, as apimachinery's
//! `CreateTwoWayMergePatch` does (with `$setElementOrder` lists, as it
//! always creates them).

use std::cmp::Ordering;
use std::mem::discriminant;

use serde_json::{Map, Value, json};

use super::StrategicPatchError as Error;
use super::merge::{
    DELETE_FROM_PRIMITIVE_LIST, LIST_OF_LISTS, MIXED_ELEMENTS, OBJECTS_WITHOUT_KEY, PATCH, RETAIN_KEYS,
    SET_ELEMENT_ORDER, unmergeable,
};
use crate::apply::{Merge, PatchStrategy};

/// See [`super::two_way_patch`].
pub(super) fn two_way(original: &Value, modified: &Value, schema: Merge) -> Result<Value, Error> {
    let empty = Map::new();
    let original = as_object(original, &empty, "the original object")?;
    let modified = as_object(modified, &empty, "the modified object")?;
    diff_maps(original, modified, schema.unwrapped(), matches!(schema, Merge::RetainKeys(_)), "").map(Value::Object)
}

/// `value`'s fields, `empty`'s for `null`.
fn as_object<'a>(
    value: &'a Value,
    empty: &'a Map<String, Value>,
    what: &'static str,
) -> Result<&'a Map<String, Value>, Error> {
    match value {
        Value::Object(map) => Ok(map),
        Value::Null => Ok(empty),
        _ => Err(Error::NotAnObject { what }),
    }
}

/// The patch of object `original` into `modified`, which merge as
/// `schema`; with `$retainKeys` if `retain_keys`.
fn diff_maps(
    original: &Map<String, Value>,
    modified: &Map<String, Value>,
    schema: Merge,
    retain_keys: bool,
    path: &str,
) -> Result<Map<String, Value>, Error> {
    let mut patch = Map::new();
    let mut retained = Vec::new();
    for (name, new) in modified {
        if retain_keys && !new.is_null() {
            retained.push(name.clone());
        }
        let Some(old) = original.get(name) else {
            patch.insert(name.clone(), new.clone());
            continue;
        };
        let at = format!("{path}.{name}");
        match (old, new) {
            (Value::Object(old), Value::Object(new)) => {
                let changes = diff_maps(old, new, schema.field(name), schema.retains_keys(name), &at)?;
                if !changes.is_empty() {
                    patch.insert(name.clone(), Value::Object(changes));
                }
            }
            (Value::Array(old), Value::Array(new)) if schema.field(name).patch_list() != PatchStrategy::Replace => {
                let lists = diff_lists(old, new, schema.field(name), schema.retains_keys(name), &at)?;
                if !lists.patch.is_empty() {
                    patch.insert(name.clone(), Value::Array(lists.patch));
                }
                if !lists.deleted.is_empty() {
                    patch.insert(format!("{DELETE_FROM_PRIMITIVE_LIST}{name}"), Value::Array(lists.deleted));
                }
                if !lists.order.is_empty() {
                    patch.insert(format!("{SET_ELEMENT_ORDER}{name}"), Value::Array(lists.order));
                }
            }
            // A scalar, a replaced list, or a value whose type changed.
            (old, new) => {
                if old != new {
                    patch.insert(name.clone(), new.clone());
                }
            }
        }
    }
    for name in original.keys() {
        if !modified.contains_key(name) {
            patch.insert(name.clone(), Value::Null);
        }
    }
    // Upstream also sends `$retainKeys` when only fields were dropped (a
    // field set to `null` is already in the patch).
    let dropped = || original.iter().any(|(name, value)| !value.is_null() && !modified.contains_key(name));
    if !retained.is_empty() && (!patch.is_empty() || dropped()) {
        retained.sort();
        patch.insert(RETAIN_KEYS.to_owned(), retained.into());
    }
    Ok(patch)
}

/// What a list merging element by element contributes to its object's
/// patch: the list, `$deleteFromPrimitiveList`, `$setElementOrder`.
#[derive(Default)]
struct ListPatch {
    patch: Vec<Value>,
    deleted: Vec<Value>,
    order: Vec<Value>,
}

/// The patch of list `original` into `modified`, which merge element by
/// element as `schema` says; with `$retainKeys` in each element's patch if
/// `retain_keys`.
fn diff_lists(
    original: &[Value],
    modified: &[Value],
    schema: Merge,
    retain_keys: bool,
    path: &str,
) -> Result<ListPatch, Error> {
    if original.is_empty() {
        return Ok(ListPatch { patch: modified.to_vec(), ..ListPatch::default() });
    }
    let mut elements = original.iter().chain(modified);
    let first = elements.next().map(discriminant);
    if original.iter().chain(modified).any(Value::is_array) {
        return Err(unmergeable(path, LIST_OF_LISTS));
    }
    if elements.any(|e| Some(discriminant(e)) != first) {
        return Err(unmergeable(path, MIXED_ELEMENTS));
    }
    if original[0].is_object() {
        let PatchStrategy::MergeByKey(key) = schema.patch_list() else {
            return Err(unmergeable(path, OBJECTS_WITHOUT_KEY));
        };
        diff_lists_of_objects(original, modified, schema.element(), key, retain_keys, path)
    } else {
        Ok(diff_lists_of_scalars(original, modified))
    }
}

fn diff_lists_of_objects<'a>(
    original: &'a [Value],
    modified: &'a [Value],
    element: Merge,
    key: &'static str,
    retain_keys: bool,
    path: &str,
) -> Result<ListPatch, Error> {
    let key_of = |item: &Value| item.get(key).cloned().ok_or_else(|| Error::NoMergeKey { path: path.to_owned(), key });
    let keyed = |list: &'a [Value]| -> Result<Vec<(&'a Value, String)>, Error> {
        let mut keyed =
            list.iter().map(|item| key_of(item).map(|k| (item, go_text(&k)))).collect::<Result<Vec<_>, _>>()?;
        keyed.sort_by(|a, b| a.1.cmp(&b.1));
        Ok(keyed)
    };
    // Both sorted by the text of their keys, then walked side by side.
    let (old_sorted, new_sorted) = (keyed(original)?, keyed(modified)?);
    let (mut old_items, mut new_items) = (old_sorted.iter().peekable(), new_sorted.iter().peekable());
    let mut patch = Vec::new();
    let mut deleted = Vec::new();
    loop {
        let step = match (old_items.peek(), new_items.peek()) {
            (None, None) => break,
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (Some((_, old_key)), Some((_, new_key))) => old_key.cmp(new_key),
        };
        match step {
            Ordering::Equal => {
                let (Some((old, _)), Some((new, _))) = (old_items.next(), new_items.next()) else { break };
                let new_key = key_of(new)?;
                let (Value::Object(old), Value::Object(new)) = (old, new) else { continue };
                let mut changes = diff_maps(old, new, element, retain_keys, &format!("{path}[{key}={new_key}]"))?;
                if !changes.is_empty() {
                    changes.insert(key.to_owned(), new_key);
                    patch.push(Value::Object(changes));
                }
            }
            Ordering::Greater => patch.extend(new_items.next().map(|(new, _)| (*new).clone())),
            Ordering::Less => {
                if let Some((old, _)) = old_items.next() {
                    deleted.push(json!({ key: key_of(old)?, PATCH: "delete" }));
                }
            }
        }
    }
    // In the new list's order, directives (the new list's own) last, then
    // the deletions.
    let position = |item: &Value| modified.iter().position(|m| m.get(key) == item.get(key));
    let (mut directives, mut patch): (Vec<Value>, Vec<Value>) =
        patch.into_iter().partition(|item| item.get(PATCH).and_then(Value::as_str) == Some("delete"));
    patch.sort_by_key(|item| position(item).unwrap_or(usize::MAX));
    patch.append(&mut directives);
    patch.append(&mut deleted);
    let same_order =
        original.len() == modified.len() && original.iter().zip(modified).all(|(o, m)| o.get(key) == m.get(key));
    let order = if patch.is_empty() && same_order {
        Vec::new()
    } else {
        modified.iter().map(|item| json!({ key: item.get(key) })).collect()
    };
    Ok(ListPatch { patch, deleted: Vec::new(), order })
}

fn diff_lists_of_scalars(original: &[Value], modified: &[Value]) -> ListPatch {
    fn sorted(list: &[Value]) -> Vec<(String, &Value)> {
        let mut sorted: Vec<(String, &Value)> = list.iter().map(|v| (go_text(v), v)).collect();
        sorted.sort_by(|a, b| a.0.cmp(&b.0));
        sorted
    }
    let (old_sorted, new_sorted) = (sorted(original), sorted(modified));
    let (mut old_items, mut new_items) = (old_sorted.into_iter().peekable(), new_sorted.into_iter().peekable());
    let mut added = Vec::new();
    let mut deleted = Vec::new();
    loop {
        let step = match (old_items.peek(), new_items.peek()) {
            (None, None) => break,
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (Some((old, _)), Some((new, _))) => old.cmp(new),
        };
        match step {
            Ordering::Equal => {
                old_items.next();
                new_items.next();
            }
            Ordering::Less => deleted.extend(old_items.next().map(|(_, v)| v.clone())),
            Ordering::Greater => added.extend(new_items.next().map(|(_, v)| v.clone())),
        }
    }
    added.sort_by_key(|item| modified.iter().position(|m| m == item));
    let order = if deleted.is_empty() && original == modified { Vec::new() } else { modified.to_vec() };
    ListPatch { patch: added, deleted: without_repeats(deleted), order }
}

/// `list` without repeated values, ordered as upstream's in-place removal
/// leaves it (a repeat is overwritten by the last element), so that
/// created patches are the same.
fn without_repeats(mut list: Vec<Value>) -> Vec<Value> {
    let mut i = 0;
    while i < list.len() {
        let mut j = i + 1;
        while j < list.len() {
            if list[i] == list[j] {
                list.swap_remove(j);
            } else {
                j += 1;
            }
        }
        i += 1;
    }
    list
}

/// A scalar as Go's `%v` prints it after a JSON decode (numbers are
/// `float64`): what upstream sorts and matches list elements by.
pub(super) fn go_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Number(number) => number.as_f64().map_or_else(|| number.to_string(), go_float),
        Value::Null => "<nil>".to_owned(),
        other => other.to_string(),
    }
}

/// `%v` of a `float64`: the shortest digits, with an exponent of at least
/// two digits when it is below -4 or from 6 on (`1e+06`).
fn go_float(value: f64) -> String {
    let scientific = format!("{value:e}");
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    if (-4..6).contains(&exponent) {
        value.to_string()
    } else {
        let sign = if exponent < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exponent.abs())
    }
}
