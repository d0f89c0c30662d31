//! Server-side apply and the managedFields of writes, on JSON values, as
//! structured-merge-diff's `Updater` and the apiserver's field manager do
//! them (simplified: see [`super`]).

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::ApplyError;
use super::fields::{Comparison, FieldSet, compare, display, element_step, field_set};
use crate::apply::{ListType, Merge};
use crate::rest::ApplyConflict;

/// The paths no manager ever owns (the apiserver's `stripMetaManager`).
const STRIPPED: [&[&str]; 12] = [
    &["f:apiVersion"],
    &["f:kind"],
    &["f:metadata"],
    &["f:metadata", "f:name"],
    &["f:metadata", "f:namespace"],
    &["f:metadata", "f:creationTimestamp"],
    &["f:metadata", "f:selfLink"],
    &["f:metadata", "f:uid"],
    &["f:metadata", "f:clusterName"],
    &["f:metadata", "f:generation"],
    &["f:metadata", "f:managedFields"],
    &["f:metadata", "f:resourceVersion"],
];

fn strip(set: &mut FieldSet) {
    let mut stripped = FieldSet::default();
    for path in STRIPPED {
        stripped.insert(&path.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>());
    }
    *set = set.difference(&stripped);
}

/// Who owns a set: what the apiserver keys managedFields entries by (an
/// update's API version is part of it, an apply's is not).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Identity {
    manager: String,
    operation: String,
    subresource: String,
    api_version: String,
}

impl Identity {
    fn new(manager: &str, operation: &str, subresource: Option<&str>, api_version: &str) -> Self {
        let api_version = if operation == "Apply" { String::new() } else { api_version.to_owned() };
        Identity {
            manager: manager.into(),
            operation: operation.into(),
            subresource: subresource.unwrap_or("").into(),
            api_version,
        }
    }

    /// How a conflict names this owner (the apiserver's `printManager`).
    fn describe(&self) -> String {
        let mut text = format!("{:?}", self.manager);
        if !self.subresource.is_empty() {
            text.push_str(&format!(" with subresource {:?}", self.subresource));
        }
        if self.operation == "Update" {
            text.push_str(&format!(" using {}", self.api_version));
        }
        text
    }
}

/// An object's managedFields entries: each owner's set, API version and time.
struct Managers(BTreeMap<Identity, (FieldSet, String, Option<String>)>);

impl Managers {
    fn read(object: &Value) -> Result<Self, String> {
        let mut out = BTreeMap::new();
        let Some(Value::Array(entries)) = object.pointer("/metadata/managedFields") else { return Ok(Managers(out)) };
        for (index, entry) in entries.iter().enumerate() {
            let text = |name: &str| entry.get(name).and_then(Value::as_str).unwrap_or("").to_owned();
            let set = match entry.get("fieldsV1") {
                None | Some(Value::Null) => FieldSet::default(),
                Some(v) => FieldSet::parse(v)
                    .map_err(|(at, why)| format!("metadata.managedFields[{index}].fieldsV1 at {at}: {why}"))?,
            };
            let subresource = text("subresource");
            let identity = Identity::new(&text("manager"), &text("operation"), Some(&subresource), &text("apiVersion"));
            let time = entry.get("time").and_then(Value::as_str).map(str::to_owned);
            out.insert(identity, (set, text("apiVersion"), time));
        }
        Ok(Managers(out))
    }

    /// Writes the entries into `object`, sorted as the apiserver sorts them
    /// (operation, time, manager, API version, subresource); empty sets dropped.
    fn write(self, object: &mut Value) {
        let mut entries: Vec<(Identity, FieldSet, String, Option<String>)> = self
            .0
            .into_iter()
            .filter(|(_, (set, ..))| !set.is_empty())
            .map(|(id, (set, v, t))| (id, set, v, t))
            .collect();
        entries.sort_by(|a, b| {
            (&a.0.operation, &a.3, &a.0.manager, &a.2, &a.0.subresource).cmp(&(
                &b.0.operation,
                &b.3,
                &b.0.manager,
                &b.2,
                &b.0.subresource,
            ))
        });
        let list: Vec<Value> = entries
            .into_iter()
            .map(|(id, set, api_version, time)| {
                let mut entry = json!({"manager": id.manager, "operation": id.operation, "apiVersion": api_version});
                if let Some(time) = time {
                    entry["time"] = json!(time);
                }
                entry["fieldsType"] = json!("FieldsV1");
                entry["fieldsV1"] = set.to_value();
                if !id.subresource.is_empty() {
                    entry["subresource"] = json!(id.subresource);
                }
                entry
            })
            .collect();
        if let Some(Value::Object(metadata)) = object.get_mut("metadata") {
            if list.is_empty() {
                metadata.remove("managedFields");
            } else {
                metadata.insert("managedFields".into(), Value::Array(list));
            }
        }
    }

    /// Structured-merge-diff's `update`: what every owner but `me` owns
    /// that changed is a conflict; with `force` (or for an update) it
    /// leaves their sets, as do removed fields.
    fn update(&mut self, me: &Identity, changes: &Comparison, force: bool) -> Result<(), Vec<ApplyConflict>> {
        let mut conflicts = Vec::new();
        let mut changed = changes.modified.clone();
        changed.union(&changes.added);
        for (id, (set, ..)) in self.0.iter_mut().filter(|(id, _)| *id != me) {
            let taken = set.intersection(&changed);
            for path in taken.members() {
                let owner = id.describe();
                conflicts.push(ApplyConflict {
                    field: display(&path),
                    manager: id.manager.clone(),
                    message: format!("conflict with {owner}"),
                });
            }
            if force {
                *set = set.difference(&taken);
            }
            *set = set.difference(&changes.removed);
        }
        if !force && !conflicts.is_empty() {
            return Err(conflicts);
        }
        Ok(())
    }
}

/// The object without its managedFields, as structured-merge-diff sees it.
fn without_managed_fields(object: &Value) -> Value {
    let mut object = object.clone();
    if let Some(Value::Object(metadata)) = object.get_mut("metadata") {
        metadata.remove("managedFields");
    }
    object
}

fn api_version(object: &Value) -> String {
    object.get("apiVersion").and_then(Value::as_str).unwrap_or("").to_owned()
}

/// [`super::server_side_apply`] with the schema decided.
pub(super) fn apply(
    current: Option<&Value>,
    applied: &Value,
    manager: &str,
    force: bool,
    subresource: Option<&str>,
    schema: Merge,
    now: &str,
) -> Result<Value, ApplyError> {
    if !applied.is_object() {
        return Err(ApplyError::Invalid("the applied configuration is not a JSON object".into()));
    }
    if applied.pointer("/metadata/managedFields").is_some_and(|v| !v.is_null()) {
        return Err(ApplyError::Invalid("metadata.managedFields must be nil".into()));
    }
    let applied = applied.clone();
    let me = Identity::new(manager, "Apply", subresource, "");
    let mut new_set = field_set(&applied, schema).map_err(ApplyError::Invalid)?;
    strip(&mut new_set);
    let (live, mut managers) = match current {
        Some(current) => (without_managed_fields(current), Managers::read(current).map_err(ApplyError::Invalid)?),
        None => (json!({}), Managers(BTreeMap::new())),
    };
    let mut merged = match current {
        Some(_) => merge_values(&live, &applied, schema).map_err(ApplyError::Invalid)?,
        None => applied.clone(),
    };
    let (last, last_time) = match managers.0.get(&me) {
        Some((set, _, time)) => (Some(set.clone()), time.clone()),
        None => (None, None),
    };
    managers.0.insert(me.clone(), (new_set.clone(), api_version(&applied), Some(now.to_owned())));
    if let Some(last) = last {
        // Fields the applier applied before and no longer does, which no
        // one else owns, leave the object.
        let mut owned = FieldSet::default();
        for (set, ..) in managers.0.values() {
            owned.union(set);
        }
        let dropped = last.difference(&owned);
        let mut paths = dropped.members();
        paths.retain(|path| !owned.has_at_or_below(path));
        // Shallowest first: a removed element takes what is below it, and
        // is never left emptied of its key fields.
        paths.sort_by_key(Vec::len);
        for path in paths {
            remove_path(&mut merged, &path, schema);
        }
    }
    let changes = compare(&live, &merged, schema).map_err(ApplyError::Invalid)?;
    managers.update(&me, &changes, force).map_err(ApplyError::Conflicts)?;
    if current.is_some() && merged == live {
        // An apply that changes nothing keeps the applier's time (none for
        // a new applier), as the apiserver's managedFieldsUpdater does.
        if let Some(entry) = managers.0.get_mut(&me) {
            entry.2 = last_time;
        }
    }
    managers.write(&mut merged);
    Ok(merged)
}

/// [`super::record_update`] with the schema decided.
pub(super) fn record_update(
    old: Option<&Value>,
    new: &mut Value,
    manager: &str,
    subresource: Option<&str>,
    schema: Merge,
    now: &str,
) {
    let empty = json!({});
    let old_value = old.map_or(empty, without_managed_fields);
    let new_value = without_managed_fields(new);
    let mut managers = match old.map(Managers::read).transpose() {
        Ok(managers) => managers.unwrap_or(Managers(BTreeMap::new())),
        // Unreadable entries are the apiserver's to reset: start afresh.
        Err(_) => Managers(BTreeMap::new()),
    };
    let Ok(changes) = compare(&old_value, &new_value, schema) else {
        // A value the schema cannot key (a keyed element without its key):
        // ownership is left as it was.
        managers.write(new);
        return;
    };
    let me = Identity::new(manager, "Update", subresource, &api_version(&new_value));
    // An update takes what it changes: never a conflict.
    let _ = managers.update(&me, &changes, true);
    let mut changed = changes.modified.clone();
    changed.union(&changes.added);
    strip(&mut changed);
    if let Some(entry) = managers.0.get_mut(&me) {
        entry.0 = entry.0.difference(&changes.removed);
    }
    // A write that changes nothing the manager could own leaves its entry
    // (and its time) as it was, and makes none.
    if !changed.is_empty() {
        let (mut set, ..) = managers.0.remove(&me).unwrap_or_default();
        set.union(&changed);
        managers.0.insert(me, (set, api_version(&new_value), Some(now.to_owned())));
    }
    managers.write(new);
}

/// `applied` merged into `live` (structured-merge-diff's `Merge`): objects
/// key by key, keyed lists and sets element by element, the rest replaced.
fn merge_values(live: &Value, applied: &Value, merge: Merge) -> Result<Value, String> {
    match (live, applied, merge) {
        (Value::Object(old), Value::Object(new), Merge::Struct(_) | Merge::Map(_) | Merge::Deduced) => {
            let mut out = old.clone();
            for (name, value) in new {
                let merged = match old.get(name) {
                    Some(existing) => merge_values(existing, value, merge.field(name))?,
                    None => value.clone(),
                };
                out.insert(name.clone(), merged);
            }
            Ok(Value::Object(out))
        }
        (Value::Array(old), Value::Array(new), Merge::List(list)) if list.apply != ListType::Atomic => {
            merge_lists(old, new, merge).map(Value::Array)
        }
        _ => Ok(applied.clone()),
    }
}

/// Structured-merge-diff's list merge: applied elements in applied order,
/// live-only elements kept where they were relative to them.
fn merge_lists(old: &[Value], new: &[Value], merge: Merge) -> Result<Vec<Value>, String> {
    let list_type = merge.apply_list();
    let steps = |items: &[Value]| items.iter().map(|i| element_step(i, list_type)).collect::<Result<Vec<_>, _>>();
    let (old_steps, new_steps) = (steps(old)?, steps(new)?);
    for (i, step) in new_steps.iter().enumerate() {
        if new_steps[..i].contains(step) {
            return Err(format!("duplicate entries for key {step}"));
        }
    }
    let find = |steps: &[String], step: &String| steps.iter().position(|s| s == step);
    let mut shared = new_steps.iter().filter(|s| old_steps.contains(s)).peekable();
    let mut out = Vec::new();
    let mut done: Vec<&String> = Vec::new();
    let (mut l, mut r) = (0, 0);
    while l < old.len() || r < new.len() {
        if l < old.len() && r < new.len() {
            if old_steps[l] == new_steps[r] {
                out.push(merge_values(&old[l], &new[r], merge.element())?);
                done.push(&new_steps[r]);
                shared.next();
                l += 1;
                r += 1;
                continue;
            }
            let in_new = find(&new_steps, &old_steps[l]).is_some();
            if in_new && shared.peek().is_some_and(|s| **s != old_steps[l]) {
                l += 1;
                continue;
            }
        }
        if l < old.len() {
            if find(&new_steps, &old_steps[l]).is_none() {
                out.push(old[l].clone());
                l += 1;
                continue;
            } else if done.contains(&&old_steps[l]) {
                l += 1;
            }
        }
        if r < new.len() {
            let step = &new_steps[r];
            done.push(step);
            out.push(match find(&old_steps, step) {
                Some(i) => merge_values(&old[i], &new[r], merge.element())?,
                None => new[r].clone(),
            });
            r += 1;
            if shared.peek().is_some_and(|s| *s == step) {
                shared.next();
            }
        }
    }
    Ok(out)
}

/// Removes the value at `path` (`FieldsV1` steps) from `value`. A map or
/// list it empties goes too, as structured-merge-diff leaves it `null`,
/// which the apiserver's decoding drops.
fn remove_path(value: &mut Value, path: &[String], merge: Merge) {
    let Some((step, rest)) = path.split_first() else { return };
    match value {
        Value::Object(fields) => {
            let Some(name) = step.strip_prefix("f:") else { return };
            if rest.is_empty() {
                fields.remove(name);
            } else if let Some(child) = fields.get_mut(name) {
                remove_path(child, rest, merge.field(name));
                if rest.len() == 1 && is_empty_container(child) {
                    fields.remove(name);
                }
            }
        }
        Value::Array(items) => {
            let list_type = merge.apply_list();
            let Some(index) = items.iter().position(|i| element_step(i, list_type).is_ok_and(|s| s == *step)) else {
                return;
            };
            if rest.is_empty() {
                items.remove(index);
            } else {
                remove_path(&mut items[index], rest, merge.element());
            }
        }
        _ => {}
    }
}

fn is_empty_container(value: &Value) -> bool {
    match value {
        Value::Object(fields) => fields.is_empty(),
        Value::Array(items) => items.is_empty(),
        _ => false,
    }
}
