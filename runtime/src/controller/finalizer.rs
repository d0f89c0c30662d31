//! kube-runtime's `finalizer` flow: the finalizer is added before the
//! controller acts on an object, and on deletion the cleanup runs before
//! it is removed; every change by a JSON patch guarded by a `test`, so it
//! never conflicts with other writers and never loses their changes.

use std::future::Future;
use std::sync::Arc;

use serde_json::json;

use super::{Action, BoxError};
use crate::object::{Metadata, Object, Resource};
use crate::rest::verbs::Patch as PatchVerb;
use crate::rest::{Client, Patch, PatchOptions, ResourceClient};

/// What the reconcile inside [`finalizer`] is asked to do.
#[derive(Debug)]
pub enum FinalizerEvent<K> {
    /// The object lives and holds the finalizer: bring the world to what
    /// it asks for.
    Apply(Arc<K>),
    /// The object is being deleted: undo what `Apply` did; the finalizer
    /// is removed once this succeeds.
    Cleanup(Arc<K>),
}

/// Why [`finalizer`] failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FinalizerError {
    /// The reconcile of [`FinalizerEvent::Apply`] failed.
    #[error("apply failed")]
    Apply(#[source] BoxError),
    /// The reconcile of [`FinalizerEvent::Cleanup`] failed; the finalizer
    /// stays.
    #[error("cleanup failed")]
    Cleanup(#[source] BoxError),
    /// The finalizer could not be added.
    #[error("adding finalizer {0}")]
    Add(String, #[source] crate::rest::Error),
    /// The finalizer could not be removed.
    #[error("removing finalizer {0}")]
    Remove(String, #[source] crate::rest::Error),
    /// The object has no name.
    #[error("the object has no name")]
    Unnamed,
}

/// Runs `reconcile` on `object` behind the finalizer `name` (kube-runtime's
/// `finalizer`):
/// - an object without the finalizer gets it first (a patch), then
///   `reconcile(Apply(object as patched))`: in the same pass, so a
///   controller filtering metadata-only updates
///   ([`Predicate::generation_changed`](super::Predicate::generation_changed))
///   needs no event to go on;
/// - an object with it: `reconcile(Apply(object))`;
/// - an object being deleted with it: `reconcile(Cleanup(object))`, then
///   the finalizer is removed, and the apiserver deletes the object;
/// - an object being deleted without it: nothing (`Action::done()`).
///
/// Returns the action `reconcile` answered.
pub async fn finalizer<K, F, Fut, E>(
    client: &Client,
    name: &str,
    object: Arc<K>,
    reconcile: F,
) -> Result<Action, FinalizerError>
where
    K: Object + Resource + PatchVerb,
    F: FnOnce(FinalizerEvent<K>) -> Fut,
    Fut: Future<Output = Result<Action, E>>,
    E: Into<BoxError>,
{
    let object_name = object.name().filter(|n| !n.is_empty()).ok_or(FinalizerError::Unnamed)?.to_owned();
    let api = ResourceClient::<K>::new(client.clone(), object.namespace());
    let finalizers: Vec<String> = object.metadata().finalizers().into_iter().map(str::to_owned).collect();
    let at = finalizers.iter().position(|f| f == name);
    match (object.metadata().is_being_deleted(), at) {
        (true, Some(at)) => {
            let action =
                reconcile(FinalizerEvent::Cleanup(object)).await.map_err(|e| FinalizerError::Cleanup(e.into()))?;
            let path = format!("/metadata/finalizers/{at}");
            let patch = Patch::Json(json!([
                { "op": "test", "path": path, "value": name },
                { "op": "remove", "path": path },
            ]));
            api.patch(&object_name, &patch, &PatchOptions::default())
                .await
                .map_err(|e| FinalizerError::Remove(name.to_owned(), e))?;
            Ok(action)
        }
        (true, None) => Ok(Action::done()),
        (false, Some(_)) => reconcile(FinalizerEvent::Apply(object)).await.map_err(|e| FinalizerError::Apply(e.into())),
        (false, None) => {
            let patch = if finalizers.is_empty() {
                // `null`: the apiserver's test passes on a missing list.
                Patch::Json(json!([
                    { "op": "test", "path": "/metadata/finalizers", "value": null },
                    { "op": "add", "path": "/metadata/finalizers", "value": [name] },
                ]))
            } else {
                Patch::Json(json!([
                    { "op": "test", "path": "/metadata/finalizers", "value": finalizers },
                    { "op": "add", "path": "/metadata/finalizers/-", "value": name },
                ]))
            };
            let patched = api
                .patch(&object_name, &patch, &PatchOptions::default())
                .await
                .map_err(|e| FinalizerError::Add(name.to_owned(), e))?;
            reconcile(FinalizerEvent::Apply(Arc::new(patched))).await.map_err(|e| FinalizerError::Apply(e.into()))
        }
    }
}
