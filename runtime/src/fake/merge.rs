//! Strategic merge patch and server-side apply for the fake apiserver.
//!
//! These bodies are the simple stand-ins the fake starts with: strategic
//! merge is a JSON merge patch (lists are replaced whole, not merged by
//! key), apply is a JSON merge patch of the applied configuration onto the
//! object (no field ownership, so never a conflict), and no write records
//! `metadata.managedFields`. The signatures are those of the full
//! implementations, which use the kind's merge schema when one is
//! registered ([`FakeCluster::register_merge`](super::FakeCluster::register_merge)).

use serde_json::Value;

use crate::apply::Merge;
use crate::rest::ApplyConflict;

/// Why an apply was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ApplyError {
    // Only built once apply tracks field ownership.
    #[allow(dead_code)]
    /// Fields other managers own, to be answered as a 409 `Conflict` with
    /// one `FieldManagerConflict` cause per field.
    Conflicts(Vec<ApplyConflict>),
    /// The configuration cannot be applied (not an object, a list that does
    /// not fit the schema); answered as 422 `Invalid`.
    Invalid(String),
}

/// Strategic merge patch of `current` with `patch`, `schema` the kind's merge schema if registered.
pub(crate) fn strategic_merge(current: &Value, patch: &Value, schema: Option<Merge>) -> Result<Value, String> {
    let _ = schema;
    if !patch.is_object() {
        return Err("strategic merge patch must be a JSON object".to_owned());
    }
    let mut merged = current.clone();
    json_patch::merge(&mut merged, patch);
    Ok(merged)
}

/// Server-side apply of `applied` by `manager` onto `current` (None: create), maintaining metadata.managedFields; Err lists conflicts.
pub(crate) fn server_side_apply(
    current: Option<&Value>,
    applied: &Value,
    manager: &str,
    force: bool,
    subresource: Option<&str>,
    schema: Option<Merge>,
    now: &str,
) -> Result<Value, ApplyError> {
    let _ = (manager, force, subresource, schema, now);
    if !applied.is_object() {
        return Err(ApplyError::Invalid("the applied configuration must be an object".to_owned()));
    }
    Ok(match current {
        Some(current) => {
            let mut merged = current.clone();
            json_patch::merge(&mut merged, applied);
            merged
        }
        None => applied.clone(),
    })
}

/// After a non-apply write by `manager`, the new object's managedFields (an `Update` entry for the fields it changed).
pub(crate) fn record_update(
    old: Option<&Value>,
    new: &mut Value,
    manager: &str,
    subresource: Option<&str>,
    schema: Option<Merge>,
    now: &str,
) {
    let _ = (old, new, manager, subresource, schema, now);
}
