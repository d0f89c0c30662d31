//! [`extract`]: the apply configuration a field manager owns, read back from
//! an object's managedFields.

use serde::Serialize;
use serde_json::{Map as JsonMap, Value};

use super::fields_v1::{FieldSet, PathElement};
use super::{ListType, Merge, MergeFields};
use crate::codec::fields::{self, DecodeFields};

/// Why [`extract`] failed.
#[derive(Debug, thiserror::Error)]
pub enum ExtractError {
    /// The object could not be encoded as JSON.
    #[error("encoding the object as JSON")]
    Encode(#[source] serde_json::Error),
    /// `metadata.managedFields` is not a list.
    #[error("metadata.managedFields is not a list")]
    ManagedFieldsNotAList,
    /// A managedFields entry is not what the apiserver writes.
    #[error("metadata.managedFields[{index}] is malformed: {reason}")]
    ManagedFields {
        /// The entry's position in `metadata.managedFields`.
        index: usize,
        /// What is wrong with it.
        reason: String,
    },
    /// A managedFields entry's `fieldsV1` is not a field set.
    #[error("metadata.managedFields[{index}].fieldsV1 (manager {manager:?}) is malformed at {path}: {reason}")]
    FieldsV1 {
        /// The entry's position in `metadata.managedFields`.
        index: usize,
        /// The entry's manager.
        manager: String,
        /// The path within the set (`.f:spec.k:{"name":"app"}`).
        path: String,
        /// What is wrong there.
        reason: String,
    },
    /// The fields the manager owns do not decode as the apply configuration
    /// (an object of another kind than the configuration's).
    #[error("decoding the fields the manager owns as {type_name}")]
    Decode {
        /// The apply configuration's type.
        type_name: &'static str,
        /// What the decoder said.
        #[source]
        source: serde_json::Error,
    },
}

/// The apply configuration holding exactly the fields `field_manager` owns
/// in `object` through server-side apply (its managedFields entry of
/// operation `Apply` for `subresource`, `""` for the object itself), as
/// client-go's `Extract<Kind>` builds it; the generated
/// `<Kind>Apply::extract` and `extract_status` call this. Name and
/// namespace are always set, so the result can be applied as it is.
///
/// The field set is read as structured-merge-diff reads it, with the
/// schema's merge types ([`MergeFields`]): each leaf of the set (a struct
/// field, a map key, an associative-list element by its key fields, a set
/// element by value) that is merged whole (a scalar, an atomic list, map or
/// struct) is taken whole; a leaf that is merged part by part (a granular
/// struct, map or list, such as a `strategy: {}` the manager applied and
/// the apiserver then defaulted) contributes nothing, as none of its parts
/// is the manager's. An owned granular struct, map or list that is empty
/// in `object` (`annotations: {}`, `finalizers: []`) is extracted present
/// and empty, as structured-merge-diff does since v6.4 (client-go 1.37);
/// before, it was left out.
///
/// A manager with no `Apply` entry (it never applied, or others took all
/// its fields) gives a configuration with only the name and namespace, as
/// client-go's does. `object` must carry managedFields: one read with a
/// client's `get` does; one from an informer's cache, which drops them,
/// gives that empty configuration.
pub fn extract<A: DecodeFields + MergeFields>(
    object: &impl Serialize,
    field_manager: &str,
    subresource: &str,
) -> Result<A, ExtractError> {
    let value = serde_json::to_value(object).map_err(ExtractError::Encode)?;
    let entries = match value.pointer("/metadata/managedFields") {
        None | Some(Value::Null) => &[][..],
        Some(Value::Array(entries)) => &entries[..],
        Some(_) => return Err(ExtractError::ManagedFieldsNotAList),
    };
    let mut owned = None;
    for (index, entry) in entries.iter().enumerate() {
        let entry = ManagedFieldsEntry::read(entry).map_err(|reason| ExtractError::ManagedFields { index, reason })?;
        let set = entry.field_set().map_err(|(path, reason)| ExtractError::FieldsV1 {
            index,
            manager: entry.manager.to_owned(),
            path,
            reason,
        })?;
        let is_wanted =
            entry.manager == field_manager && entry.operation == "Apply" && entry.subresource == subresource;
        if is_wanted && owned.is_none() {
            owned = Some(set);
        }
    }
    let mut config = match &owned {
        // The root is never a member: a set with nothing below owns nothing.
        Some(set) if !set.children.is_empty() => match owned_part(&value, set, Merge::Struct(A::merge_fields)) {
            Some(Value::Object(fields)) => fields,
            _ => JsonMap::new(),
        },
        _ => JsonMap::new(),
    };
    name_and_namespace(&value, &mut config);
    fields::deserialize::<A, _>(Value::Object(config))
        .map_err(|source| ExtractError::Decode { type_name: A::NAME, source })
}

/// The part of `value`, which merges as `merge`, that the leaves of `set`
/// cover, or `None` for none.
fn owned_part(value: &Value, set: &FieldSet, merge: Merge) -> Option<Value> {
    let granular = match merge.unwrapped() {
        // `RetainKeys` is unwrapped above.
        Merge::Atomic | Merge::RetainKeys(_) => false,
        Merge::Struct(_) | Merge::Map(_) => true,
        Merge::List(list) => list.apply != ListType::Atomic,
        Merge::Deduced => value.is_object(),
    };
    if !granular {
        // Whole, whether a leaf or (when the set and the schema disagree)
        // with steps below it, as structured-merge-diff takes an atomic value.
        return Some(value.clone());
    }
    if is_empty_as(value, merge) {
        // Owned and empty: structured-merge-diff (since v6.4) gives it back
        // as it is, so that an applied `annotations: {}` or `finalizers: []`
        // survives extract-modify-apply instead of being dropped as if the
        // manager had never set it.
        return Some(value.clone());
    }
    if set.is_leaf() {
        // None of a granular value's parts is in the set.
        return None;
    }
    match value {
        Value::Object(fields) => {
            let mut out = JsonMap::new();
            for (element, below) in set.elements() {
                let PathElement::Field(name) = element else { continue };
                let Some(field) = fields.get(&name) else { continue };
                if let Some(part) = owned_part(field, below, merge.field(&name)) {
                    out.insert(name, part);
                }
            }
            (!out.is_empty()).then_some(Value::Object(out))
        }
        Value::Array(items) => {
            let mut out = Vec::new();
            for (index, item) in items.iter().enumerate() {
                let Some((_, below)) = set.elements().find(|(e, _)| e.matches_item(index, item)) else {
                    continue;
                };
                if let Some(part) = owned_part(item, below, merge.element()) {
                    out.push(part);
                }
            }
            (!out.is_empty()).then_some(Value::Array(out))
        }
        // A scalar where the schema has a struct, map or list: the value is
        // what there is.
        scalar => Some(scalar.clone()),
    }
}

/// Whether `value` is an empty object where `merge` expects a struct or
/// map, or an empty array where it expects a list. A value of the other
/// shape does not count: structured-merge-diff extracts nothing from it.
fn is_empty_as(value: &Value, merge: Merge) -> bool {
    match (merge.unwrapped(), value) {
        (Merge::Struct(_) | Merge::Map(_) | Merge::Deduced, Value::Object(fields)) => fields.is_empty(),
        (Merge::List(_), Value::Array(items)) => items.is_empty(),
        _ => false,
    }
}

/// Sets `metadata.name` and `metadata.namespace` of `config` from `object`,
/// as client-go's Extract does.
fn name_and_namespace(object: &Value, config: &mut JsonMap<String, Value>) {
    let Some(Value::Object(source)) = object.get("metadata") else { return };
    let metadata = config.entry("metadata").or_insert_with(|| Value::Object(JsonMap::new()));
    let Value::Object(metadata) = metadata else { return };
    for field in ["name", "namespace"] {
        if let Some(Value::String(text)) = source.get(field)
            && !text.is_empty()
        {
            metadata.insert(field.to_owned(), Value::String(text.clone()));
        }
    }
}

/// The parts of a managedFields entry Extract reads.
struct ManagedFieldsEntry<'a> {
    manager: &'a str,
    operation: &'a str,
    subresource: &'a str,
    fields_v1: Option<&'a Value>,
}

impl<'a> ManagedFieldsEntry<'a> {
    fn read(entry: &'a Value) -> Result<Self, String> {
        let Value::Object(fields) = entry else { return Err("not an object".into()) };
        let text = |name: &str| -> Result<&'a str, String> {
            match fields.get(name) {
                None | Some(Value::Null) => Ok(""),
                Some(Value::String(text)) => Ok(text),
                Some(_) => Err(format!("{name} is not a string")),
            }
        };
        let fields_type = text("fieldsType")?;
        if !fields_type.is_empty() && fields_type != "FieldsV1" {
            return Err(format!("fieldsType {fields_type:?} is not FieldsV1"));
        }
        Ok(ManagedFieldsEntry {
            manager: text("manager")?,
            operation: text("operation")?,
            subresource: text("subresource")?,
            fields_v1: fields.get("fieldsV1").filter(|v| !v.is_null()),
        })
    }

    fn field_set(&self) -> Result<FieldSet, (String, String)> {
        self.fields_v1.map_or_else(|| Ok(FieldSet::default()), FieldSet::parse)
    }
}

#[cfg(test)]
#[path = "extract_tests.rs"]
mod tests;
