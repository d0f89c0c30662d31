//! Strategic merge patch, Kubernetes' own patch format for built-in kinds:
//! [`two_way_patch`] computes one from an object's old and new versions
//! (apimachinery's `CreateTwoWayMergePatch`), [`merge`] applies one as the
//! apiserver does (its `StrategicMergePatch`).
//!
//! # When to use what
//! - **Change an object you read** (a controller adding a container's env
//!   variable, a label): compute the patch with [`two_way_patch`] (or
//!   [`Patch::strategic_diff`](crate::rest::Patch::strategic_diff) for a
//!   generated kind) and send it. Only what changed is sent, and lists that
//!   merge by key (containers, env, ports, volumes) are patched element by
//!   element, so elements others added meanwhile are kept. Unlike an update
//!   it does not fail on a newer resourceVersion; add a
//!   [`Precondition`] to refuse patches that would change what must not.
//! - **A custom resource**: the apiserver refuses strategic merge patches of
//!   them (415). [`two_way_patch`] with [`Merge::Deduced`] gives the JSON
//!   merge patch apimachinery falls back to; send it as
//!   [`Patch::Merge`](crate::rest::Patch::Merge).
//! - **Fields your manager owns declaratively**: server-side apply
//!   ([`crate::apply`]) instead, which tracks ownership.
//! - **Apply a patch locally** (a fake apiserver, a dry run of your own):
//!   [`merge`].
//!
//! # The schema
//! Both are driven by a kind's [`Merge`] schema, the generated
//! [`MergeFields`](crate::apply::MergeFields) of the kind and of its apply
//! configuration (`Merge::Struct(Deployment::merge_fields)`).
//! Objects are merged key by key whatever the schema says; lists merge as
//! their [`PatchStrategy`](crate::apply::PatchStrategy) says (by merge key,
//! by value, or replaced whole); a [`Merge::RetainKeys`] value's patches list
//! the fields they keep in `$retainKeys`. A field the schema does not know
//! (or [`Merge::Deduced`], [`Merge::Atomic`]) has its lists replaced whole:
//! without a schema both are JSON merge patches (RFC 7386), whose
//! directives [`merge`] still honours.
//!
//! # What the patch holds
//! As apimachinery creates it: unchanged fields are left out, deleted ones
//! are `null`, objects are diffed key by key, a list merged by key gets its
//! changed and new elements (a changed one with only its changed fields and
//! its key), `{key: value, "$patch": "delete"}` for each deleted element and
//! `$setElementOrder/<list>` (the new list's keys in order) when anything in
//! it changed; a list merged by value gets its new elements,
//! `$deleteFromPrimitiveList/<list>` for removed ones and
//! `$setElementOrder/<list>`; other lists are replaced whole. Lists are
//! matched element by element as upstream matches them, by the text of the
//! key (so `1` and `"1"` are the same key).
//!
//! See `crate::fake`'s module docs for where [`merge`] differs from the
//! apiserver.

mod diff;
mod merge;

use serde::Serialize;
use serde_json::Value;

use crate::apply::Merge;

pub use merge::merge;

/// Why a strategic merge patch could not be created or applied. `path` is
/// where, as `.spec.containers[name="app"].env` (`.` for the top level).
#[derive(Debug, thiserror::Error)]
pub enum StrategicPatchError {
    /// The patch, or an object to diff, is not a JSON object.
    #[error("{what} is not a JSON object")]
    NotAnObject {
        /// Which value: "the patch", "the original object", ...
        what: &'static str,
    },
    /// A directive (`$patch`, `$retainKeys`, `$setElementOrder/...`,
    /// `$deleteFromPrimitiveList/...`) is malformed or not allowed there.
    #[error("{}: {directive} {reason}", shown(.path))]
    Directive {
        /// Where the directive is.
        path: String,
        /// The directive, with its value when that is what is wrong.
        directive: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The patch sets a field its `$retainKeys` does not keep.
    #[error("{}: field {field:?} is in the patch but not in its $retainKeys", shown(.path))]
    NotRetained {
        /// The object the patch is for.
        path: String,
        /// The field.
        field: String,
    },
    /// A list's elements in the patch are not in the order its
    /// `$setElementOrder` gives.
    #[error("{}: the patch's list does not follow its $setElementOrder", shown(.path))]
    OrderMismatch {
        /// The list.
        path: String,
    },
    /// An element of a list merged by key has no such key.
    #[error("{}: an element has no merge key {key:?}", shown(.path))]
    NoMergeKey {
        /// The list.
        path: String,
        /// The merge key.
        key: &'static str,
    },
    /// A list that merges cannot: it holds lists, elements of different
    /// types, or objects without a merge key in the schema.
    #[error("{}: {reason}", shown(.path))]
    Unmergeable {
        /// The list.
        path: String,
        /// Why.
        reason: &'static str,
    },
    /// The patch changes a field a [`Precondition`] requires unchanged.
    #[error("{}: the patch changes it, but a precondition requires it unchanged", shown(.path))]
    PreconditionFailed {
        /// The field.
        path: String,
    },
    /// An object could not be encoded as JSON.
    #[error("encoding the {what} object as JSON")]
    Encode {
        /// Which: "original" or "modified".
        what: &'static str,
        /// What the encoder said.
        #[source]
        source: serde_json::Error,
    },
}

fn shown(path: &str) -> &str {
    if path.is_empty() { "." } else { path }
}

/// A change a created patch must not make, as apimachinery's
/// `mergepatch.PreconditionFunc`s: checked on the patch, so "changed" means
/// "in the patch" (a deletion is a change).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Precondition {
    /// A top-level field (`apiVersion`, `kind`) must be unchanged
    /// (`RequireKeyUnchanged`).
    KeyUnchanged(String),
    /// A field of `metadata` (`name`, `namespace`) must be unchanged
    /// (`RequireMetadataKeyUnchanged`).
    MetadataKeyUnchanged(String),
}

impl Precondition {
    /// Whether `patch` keeps this precondition; the error names the field.
    pub fn check(&self, patch: &Value) -> Result<(), StrategicPatchError> {
        let (changed, path) = match self {
            Precondition::KeyUnchanged(key) => (patch.get(key).is_some(), format!(".{key}")),
            Precondition::MetadataKeyUnchanged(key) => {
                (patch.get("metadata").and_then(|m| m.get(key)).is_some(), format!(".metadata.{key}"))
            }
        };
        if changed { Err(StrategicPatchError::PreconditionFailed { path }) } else { Ok(()) }
    }
}

/// The strategic merge patch that turns `original` into `modified` when
/// [merged](merge) into it, as apimachinery's `CreateTwoWayMergePatch`
/// creates it with `schema` (see the [module docs](self)). Equal objects
/// give `{}`. A `null` object is read as `{}`, as an empty document is
/// upstream.
///
/// ```
/// use k8s_client_runtime::apply::{ListMerge, ListType, Merge, PatchStrategy};
/// use k8s_client_runtime::strategic;
/// use serde_json::json;
///
/// fn pod_spec() -> &'static [(&'static str, Merge)] {
///     const CONTAINERS: ListMerge =
///         ListMerge { apply: ListType::Map(&["name"]), patch: PatchStrategy::MergeByKey("name"), element: Merge::Atomic };
///     &[("containers", Merge::List(&CONTAINERS))]
/// }
/// let old = json!({"containers": [{"name": "app", "image": "app:1"}, {"name": "log", "image": "log:1"}]});
/// let new = json!({"containers": [{"name": "app", "image": "app:2"}]});
/// let patch = strategic::two_way_patch(&old, &new, Merge::Struct(pod_spec))?;
/// assert_eq!(patch, json!({
///     "$setElementOrder/containers": [{"name": "app"}],
///     "containers": [{"name": "app", "image": "app:2"}, {"name": "log", "$patch": "delete"}],
/// }));
/// assert_eq!(strategic::merge(&old, &patch, Merge::Struct(pod_spec))?, new);
/// # Ok::<_, strategic::StrategicPatchError>(())
/// ```
pub fn two_way_patch(original: &Value, modified: &Value, schema: Merge) -> Result<Value, StrategicPatchError> {
    diff::two_way(original, modified, schema)
}

/// [`two_way_patch`], refused if the patch breaks one of `preconditions`.
pub fn two_way_patch_with(
    original: &Value,
    modified: &Value,
    schema: Merge,
    preconditions: &[Precondition],
) -> Result<Value, StrategicPatchError> {
    let patch = diff::two_way(original, modified, schema)?;
    preconditions.iter().try_for_each(|p| p.check(&patch))?;
    Ok(patch)
}

/// [`two_way_patch`] of two typed objects, encoded as JSON first.
pub fn two_way_patch_of<T: Serialize + ?Sized>(
    original: &T,
    modified: &T,
    schema: Merge,
) -> Result<Value, StrategicPatchError> {
    let encode =
        |object: &T, what| serde_json::to_value(object).map_err(|source| StrategicPatchError::Encode { what, source });
    diff::two_way(&encode(original, "original")?, &encode(modified, "modified")?, schema)
}

#[cfg(test)]
mod diff_tests;
