//! Applying a strategic merge patch, as apimachinery's `strategicpatch`
//! does on the server.

use serde_json::{Map, Value};

use super::StrategicPatchError as Error;
use crate::apply::{Merge, PatchStrategy};

pub(super) const PATCH: &str = "$patch";
pub(super) const RETAIN_KEYS: &str = "$retainKeys";
pub(super) const SET_ELEMENT_ORDER: &str = "$setElementOrder/";
pub(super) const DELETE_FROM_PRIMITIVE_LIST: &str = "$deleteFromPrimitiveList/";

/// `patch` merged into `current` with `schema`, as the apiserver merges a
/// strategic merge patch: objects merged key by key, `null` deleting, lists
/// with patch strategy `merge` merged (objects by their merge key, scalars
/// by value, ordered as upstream orders them: patch elements in patch
/// order, interleaved with the others by their old order, a new element
/// before the old ones), other lists replaced. Directives: `$patch: replace
/// | delete` on objects and list elements (`$patch: merge` is refused, as
/// upstream refuses it), `$deleteFromPrimitiveList/<list>`, `$retainKeys`,
/// `$setElementOrder/<list>` (checked against the patch's list and used for
/// the order). A `current` that is not an object is read as `{}`.
pub fn merge(current: &Value, patch: &Value, schema: Merge) -> Result<Value, Error> {
    let Value::Object(patch) = patch else { return Err(Error::NotAnObject { what: "the patch" }) };
    let current = match current {
        Value::Object(map) => map.clone(),
        _ => Map::new(),
    };
    merge_map(current, patch.clone(), schema, "").map(Value::Object)
}

fn merge_map(
    mut original: Map<String, Value>,
    mut patch: Map<String, Value>,
    schema: Merge,
    path: &str,
) -> Result<Map<String, Value>, Error> {
    if let Some(directive) = patch.remove(PATCH) {
        return match directive.as_str() {
            Some("replace") => Ok(clean_map(patch)),
            Some("delete") => Ok(Map::new()),
            _ => Err(Error::Directive {
                path: path.to_owned(),
                directive: format!("$patch: {directive}"),
                reason: "is not a directive on an object",
            }),
        };
    }
    if let Some(keys) = patch.remove(RETAIN_KEYS) {
        let Value::Array(keys) = keys else { return Err(not_a_list(path, RETAIN_KEYS)) };
        let retained = |name: &str| keys.iter().any(|k| k.as_str() == Some(name));
        for (name, value) in &patch {
            if !value.is_null() && !name.starts_with('$') && !retained(name) {
                return Err(Error::NotRetained { path: path.to_owned(), field: name.clone() });
            }
        }
        original.retain(|name, _| retained(name));
    }
    // Lists with a `$setElementOrder`, first: their merge and order together.
    let orders: Vec<String> = patch.keys().filter(|k| k.starts_with(SET_ELEMENT_ORDER)).cloned().collect();
    for directive in orders {
        let order = patch.remove(&directive).unwrap_or(Value::Null);
        let name = &directive[SET_ELEMENT_ORDER.len()..];
        let at = format!("{path}.{name}");
        let Value::Array(order) = order else { return Err(not_a_list(&at, &directive)) };
        let field = schema.field(name);
        let key = match field.patch_list() {
            PatchStrategy::MergeByKey(key) => Some(key),
            _ => None,
        };
        let patch_list = match patch.remove(name) {
            Some(Value::Array(list)) => Some(list),
            None => None,
            Some(_) => {
                return Err(Error::Directive { path: at, directive, reason: "is beside a value that is not a list" });
            }
        };
        let original_list = match original.get(name) {
            Some(Value::Array(list)) => Some(list.clone()),
            _ => None,
        };
        check_order(patch_list.as_deref().unwrap_or(&[]), &order, key, &at)?;
        let merged = match (&original_list, patch_list) {
            (None, None) => continue,
            (Some(list), None) => list.clone(),
            (None, Some(list)) => clean_list(list),
            (Some(list), Some(patch_list)) => merge_list(list.clone(), patch_list, field, &at)?,
        };
        let identity = |v: &Value| identity(v, key);
        let (in_order, server_only): (Vec<Value>, Vec<Value>) =
            merged.into_iter().partition(|item| order.iter().any(|o| identity(o) == identity(item)));
        let server_order = original_list.unwrap_or_default();
        original.insert(name.to_owned(), Value::Array(interleave(in_order, server_only, &order, &server_order, key)));
    }
    for (name, value) in patch {
        if let Some(list_name) = name.strip_prefix(DELETE_FROM_PRIMITIVE_LIST) {
            let Value::Array(doomed) = value else { return Err(not_a_list(&format!("{path}.{list_name}"), &name)) };
            if let Some(Value::Array(list)) = original.get_mut(list_name) {
                list.retain(|item| !doomed.contains(item));
            }
            continue;
        }
        let at = format!("{path}.{name}");
        if value.is_null() {
            original.remove(&name);
            continue;
        }
        let field = schema.field(&name);
        let merged = match (original.remove(&name), value) {
            (Some(Value::Object(old)), Value::Object(new)) => Some(Value::Object(merge_map(old, new, field, &at)?)),
            (Some(Value::Array(old)), Value::Array(new)) if field.patch_list() != PatchStrategy::Replace => {
                Some(Value::Array(merge_list(old, new, field, &at)?))
            }
            (_, new) => clean(new),
        };
        if let Some(merged) = merged {
            original.insert(name, merged);
        }
    }
    Ok(original)
}

/// `patch` merged into `original`, a list merging as `schema` with a
/// `merge` patch strategy.
fn merge_list(original: Vec<Value>, patch: Vec<Value>, schema: Merge, path: &str) -> Result<Vec<Value>, Error> {
    if original.is_empty() && patch.is_empty() {
        return Ok(original);
    }
    let all = || original.iter().chain(&patch);
    if all().any(Value::is_array) {
        return Err(unmergeable(path, LIST_OF_LISTS));
    }
    let objects = all().filter(|v| v.is_object()).count();
    if objects != 0 && objects != original.len() + patch.len() {
        return Err(unmergeable(path, MIXED_ELEMENTS));
    }
    let key = match schema.patch_list() {
        PatchStrategy::MergeByKey(key) => Some(key),
        _ => None,
    };
    let merged = match key {
        Some(key) if objects != 0 => merge_keyed(original.clone(), &patch, key, schema.element(), path)?,
        None if objects != 0 => {
            return Err(unmergeable(path, OBJECTS_WITHOUT_KEY));
        }
        _ => {
            let mut merged = original.clone();
            for item in &patch {
                if !merged.contains(item) {
                    merged.push(item.clone());
                }
            }
            merged
        }
    };
    let patch_items: Vec<Value> = patch.iter().filter(|v| !is_directive(v)).cloned().collect();
    let (in_patch, server_only): (Vec<Value>, Vec<Value>) =
        merged.into_iter().partition(|item| patch_items.iter().any(|p| identity(p, key) == identity(item, key)));
    Ok(interleave(in_patch, server_only, &patch_items, &original, key))
}

/// Elements merged by `key`, with `$patch: delete` and `replace` elements.
fn merge_keyed(
    mut original: Vec<Value>,
    patch: &[Value],
    key: &'static str,
    element: Merge,
    path: &str,
) -> Result<Vec<Value>, Error> {
    let key_of = |item: &Value| item.get(key).cloned().ok_or_else(|| Error::NoMergeKey { path: path.to_owned(), key });
    for item in &original {
        key_of(item)?;
    }
    let mut plain = Vec::new();
    let mut replace = false;
    for item in patch {
        match item.get(PATCH) {
            None => plain.push(item.clone()),
            Some(Value::String(d)) if d == "delete" => {
                let doomed = key_of(item)?;
                original.retain(|o| o.get(key) != Some(&doomed));
            }
            Some(Value::String(d)) if d == "replace" => replace = true,
            Some(other) => {
                return Err(Error::Directive {
                    path: path.to_owned(),
                    directive: format!("$patch: {other}"),
                    reason: "is not a directive on a list element",
                });
            }
        }
    }
    if replace {
        return Ok(clean_list(plain));
    }
    for item in plain {
        let wanted = key_of(&item)?;
        let at = format!("{path}[{key}={wanted}]");
        let Value::Object(item) = item else { continue };
        match original.iter_mut().find(|o| o.get(key) == Some(&wanted)) {
            Some(Value::Object(existing)) => {
                *existing = merge_map(std::mem::take(existing), item, element, &at)?;
            }
            _ => original.push(Value::Object(merge_map(Map::new(), item, element, &at)?)),
        }
    }
    Ok(original)
}

/// Patch items in patch order and server-only items in server order,
/// interleaved by the server order where both are known (apimachinery's
/// `normalizeElementOrder`).
fn interleave(
    mut patch_items: Vec<Value>,
    server_only: Vec<Value>,
    patch_order: &[Value],
    server_order: &[Value],
    key: Option<&str>,
) -> Vec<Value> {
    let position = |order: &[Value], item: &Value| order.iter().position(|o| identity(o, key) == identity(item, key));
    patch_items.sort_by_key(|item| position(patch_order, item).unwrap_or(usize::MAX));
    let mut out = Vec::with_capacity(patch_items.len() + server_only.len());
    let (mut left, mut right) = (server_only.into_iter().peekable(), patch_items.into_iter().peekable());
    loop {
        let take_left = match (left.peek(), right.peek()) {
            (None, None) => break,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some(l), Some(r)) => {
                matches!((position(server_order, l), position(server_order, r)), (Some(a), Some(b)) if a < b)
            }
        };
        out.extend(if take_left { left.next() } else { right.next() });
    }
    out
}

/// What identifies a list element: its merge key's value, or itself.
fn identity(item: &Value, key: Option<&str>) -> Option<Value> {
    match key {
        Some(key) => item.get(key).cloned(),
        None => Some(item.clone()),
    }
}

fn is_directive(item: &Value) -> bool {
    item.get(PATCH).is_some()
}

/// Checks that the patch's elements appear in `$setElementOrder` in the
/// same relative order.
fn check_order(patch: &[Value], order: &[Value], key: Option<&str>, path: &str) -> Result<(), Error> {
    let mut at = 0;
    for item in patch.iter().filter(|v| !is_directive(v)) {
        let wanted = identity(item, key);
        match order[at..].iter().position(|o| identity(o, key) == wanted) {
            Some(found) => at += found + 1,
            None => return Err(Error::OrderMismatch { path: path.to_owned() }),
        }
    }
    Ok(())
}

/// A value the patch sets where nothing was: without `null`s and
/// directives (an object carrying `$patch` is dropped, as upstream does).
fn clean(value: Value) -> Option<Value> {
    match value {
        Value::Object(map) if map.contains_key(PATCH) => None,
        Value::Object(map) => Some(Value::Object(clean_map(map))),
        Value::Array(list) => Some(Value::Array(clean_list(list))),
        Value::Null => None,
        other => Some(other),
    }
}

fn clean_map(map: Map<String, Value>) -> Map<String, Value> {
    map.into_iter()
        .filter(|(k, _)| {
            !(k == RETAIN_KEYS || k.starts_with(SET_ELEMENT_ORDER) || k.starts_with(DELETE_FROM_PRIMITIVE_LIST))
        })
        .filter_map(|(k, v)| clean(v).map(|v| (k, v)))
        .collect()
}

fn clean_list(list: Vec<Value>) -> Vec<Value> {
    list.into_iter().filter_map(|v| if v.is_null() { Some(Value::Null) } else { clean(v) }).collect()
}

pub(super) const LIST_OF_LISTS: &str = "lists of lists cannot be merged";
pub(super) const MIXED_ELEMENTS: &str = "the list's elements are not all of one type";
pub(super) const OBJECTS_WITHOUT_KEY: &str = "a list of objects without a merge key cannot be merged";

pub(super) fn unmergeable(path: &str, reason: &'static str) -> Error {
    Error::Unmergeable { path: path.to_owned(), reason }
}

fn not_a_list(path: &str, directive: &str) -> Error {
    Error::Directive { path: path.to_owned(), directive: directive.to_owned(), reason: "is not a list" }
}
