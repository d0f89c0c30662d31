//! The merges the fake apiserver performs on stored JSON objects:
//! strategic merge patch ([`strategic_merge`]), server-side apply
//! ([`server_side_apply`]) and the managedFields of other writes
//! ([`record_update`]), driven by a kind's [`Merge`] schema (the generated
//! `MergeFields` of its apply configuration).
//!
//! # Strategic merge patch
//! [`crate::strategic::merge`], as apimachinery's `strategicpatch` applies a
//! patch on the server: objects
//! merged key by key (every object, whatever apply's map type), `null`
//! deletes, lists with patch strategy `merge` merged (objects by their patch
//! merge key, scalars by value, ordered as upstream orders them: patch
//! elements in patch order, interleaved with the live-only ones by the live
//! order, a new element before the live-only ones), other lists replaced.
//! Directives: `$patch: replace | delete` on objects and list elements
//! (`$patch: merge` is refused, as upstream refuses it),
//! `$deleteFromPrimitiveList/<list>`, `$retainKeys`,
//! `$setElementOrder/<list>` (validated and used for the order). Without a
//! schema it is a JSON merge patch (lists replaced) that still honours
//! directives. Errors name the path (`.spec.containers[name="app"]`).
//!
//! # Server-side apply
//! As structured-merge-diff's `Updater` with the apiserver's field manager:
//! the applier's set is the applied configuration's field set under the
//! schema, without the metadata no one owns (name, namespace, uid,
//! resourceVersion, generation, creationTimestamp, selfLink, managedFields;
//! apiVersion and kind); the object is the live one with the configuration
//! merged in; a field another owner has that would change is a conflict
//! (one per field and owner, named as the apiserver names it), taken from
//! them with `force`; fields the applier dropped that no one else owns leave
//! the object (a map or list that leaves empty goes too). An apply that
//! changes nothing keeps the applier's entry time (a new applier's entry
//! has none). [`record_update`] gives a non-apply write's manager an
//! `Update` entry for what it changed, taken from the others; a write that
//! changes nothing makes no entry. The field sets, entries, their order
//! and the conflicts are those kube-apiserver 1.35 writes for the same
//! writes (a test replays writes captured from it).
//!
//! # What differs from the apiserver
//! - No version conversion: every owner's set is read as the current
//!   version's; no defaulting of the merged object (a list-map key the
//!   schema defaults, such as a port's `protocol`, must be given to be part
//!   of the element's key).
//! - The status or spec reset of a resource with a `status` subresource is
//!   the caller's: these functions merge whatever they are given.
//! - An `Update` entry's set takes every path the write added, objects
//!   included; the apiserver compares Go objects, whose always-written
//!   fields (`spec`, `status`, a template's `metadata`) are never "added",
//!   so its entries can lack a `"."` member these have.
//! - `fieldsV1` is written with its keys sorted as JSON text; the apiserver
//!   sorts list elements by value (`k:{"port":9}` before `k:{"port":10}`).
//!   The sets are the same.
//! - Without a schema, apply merges as structured-merge-diff's deduced
//!   type (objects key by key, lists whole). A `replace` patch strategy on
//!   an object (a PodDisruptionBudget's `selector`) is not in the schema,
//!   so strategic merge patch merges it key by key.
//! - An applied configuration is not checked against the schema beyond
//!   what merging needs (keyed elements need a key field, no duplicate
//!   keys, no `metadata.managedFields`); its version is not checked
//!   against the object's.
//! - Directive keys in a value a patch adds where nothing was are dropped
//!   (the apiserver keeps them until its decoder drops them); with several
//!   directives on one object, `$setElementOrder` lists merge first, then
//!   the keys in JSON order (upstream's order is a Go map's).
//! - A strategic merge patch of a custom resource is the caller's to
//!   refuse (the apiserver answers 415): here it is a merge like any.

mod fields;
mod managed;

use serde_json::Value;

use crate::apply::Merge;
use crate::rest::ApplyConflict;

/// Why [`server_side_apply`] refused an apply.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum ApplyError {
    /// Fields other managers own would change: the apiserver's 409.
    #[error("apply failed with {} conflict(s)", .0.len())]
    Conflicts(Vec<ApplyConflict>),
    /// The configuration (or the live object) does not fit the schema.
    #[error("invalid apply configuration: {0}")]
    Invalid(String),
}

/// Strategic merge patch of `current` with `patch`, `schema` the kind's merge schema if registered.
pub(crate) fn strategic_merge(current: &Value, patch: &Value, schema: Option<Merge>) -> Result<Value, String> {
    crate::strategic::merge(current, patch, schema.unwrap_or(Merge::Atomic)).map_err(|e| e.to_string())
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
    managed::apply(current, applied, manager, force, subresource, schema.unwrap_or(Merge::Deduced), now)
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
    managed::record_update(old, new, manager, subresource, schema.unwrap_or(Merge::Deduced), now);
}

#[cfg(test)]
#[path = "merge/strategic_tests.rs"]
mod strategic_tests;

#[cfg(test)]
#[path = "merge/apply_tests.rs"]
mod apply_tests;
