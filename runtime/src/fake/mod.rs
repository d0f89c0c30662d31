//! An in-memory fake apiserver for controller unit tests (client-go's
//! `fake.NewClientset()`, at the transport level).
//!
//! [`FakeCluster::client`] returns an ordinary [`rest::Client`](crate::rest::Client)
//! whose connections are in-memory pipes to the fake, so every client works
//! on it unchanged: a generated `Clientset::new(client)`, [`ResourceClient<K>`](crate::ResourceClient),
//! the [`DynamicClient`](crate::dynamic::DynamicClient), informers and
//! listers ([`SharedInformerFactory`](crate::cache::SharedInformerFactory)),
//! the event recorder and leader election. Everything above the transport
//! (retries, error decoding, watch decoding) runs as against a real
//! apiserver; the fake speaks JSON only.
//!
//! ```
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use k8s_client_runtime::dynamic::{DynamicClient, DynamicObject};
//! use k8s_client_runtime::fake::{FakeCluster, FakeResource, Reaction};
//! use k8s_client_runtime::rest::{CreateOptions, Status};
//! use k8s_client_runtime::DynamicResource;
//!
//! let widgets = DynamicResource {
//!     group: "example.com".into(),
//!     version: "v1".into(),
//!     kind: "Widget".into(),
//!     plural: "widgets".into(),
//!     namespaced: true,
//! };
//! let fake = FakeCluster::new();
//! fake.register_resource(&FakeResource::new(widgets.clone()));
//! // Every create of a widget fails as a full etcd would make it.
//! fake.prepend_reactor("create", "widgets", |_| {
//!     Some(Reaction::Error(Status { code: 507, reason: "InsufficientStorage".into(), ..Status::default() }))
//! });
//! let client = DynamicClient::namespaced_with(fake.client(), "default", &widgets);
//! let error = client.create(&DynamicObject::new(&widgets, "w"), &CreateOptions::default()).await.unwrap_err();
//! assert_eq!(error.status().map(|s| s.code), Some(507));
//! assert_eq!(fake.actions()[0].verb, "create");
//! # Ok(()) }
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(run()).unwrap();
//! ```
//!
//! # When to use the fake, when the real apiserver
//! Use the fake for a controller's unit tests: its reconcile logic, how it
//! reacts to objects appearing, changing and going, to conflicts and to
//! injected errors ([`FakeCluster::prepend_reactor`]), and what it wrote
//! ([`FakeCluster::actions`]). It starts in microseconds and needs nothing
//! installed. Server-side apply (field ownership in `managedFields`,
//! conflicts, force) and strategic merge patch (lists merged by key) work
//! as the apiserver's for kinds whose merge schema is registered
//! ([`FakeCluster::register_merge`], from the generated crate's `apply`
//! feature). Use the real apiserver (the repository's `testenv`) for
//! anything that depends on the apiserver's own logic: validation,
//! defaulting, admission, RBAC, garbage collection, protobuf, or exact
//! watch-cache timing.
//!
//! # What the fake does
//! - Objects are kept as JSON per group/version/resource, with one
//!   resourceVersion counter for the whole cluster, as etcd's revision.
//! - Resources are known by [`FakeCluster::register`] (and
//!   [`register_with_status`](FakeCluster::register_with_status),
//!   [`register_with_scale`](FakeCluster::register_with_scale),
//!   [`register_resource`](FakeCluster::register_resource)); seeding with
//!   [`add`](FakeCluster::add) registers the kind. A resource never
//!   registered is still served: its scope is read from each request's
//!   path, its kind learned from the first body that names one, its list
//!   kind is `<Kind>List`, and it has no status subresource semantics.
//! - get; list with label and field selectors, `limit` and `continue`;
//!   watch from a resourceVersion, with `allowWatchBookmarks` and
//!   watch-list (`sendInitialEvents=true`: an `ADDED` event per object,
//!   then a `BOOKMARK` annotated `k8s.io/initial-events-end: "true"`);
//!   create (`generateName`, uid, creationTimestamp, resourceVersion,
//!   generation 1, 409 `AlreadyExists`); update (409 `Conflict` on a stale
//!   resourceVersion, unconditional without one, generation bumped when
//!   anything but metadata and status changed, no write when nothing
//!   changed); JSON patch, merge patch, strategic merge patch and apply;
//!   delete (finalizers keep the object with `deletionTimestamp` set until
//!   an update removes the last one; uid and resourceVersion
//!   preconditions); deletecollection with selectors.
//! - `status` subresource: writes through it change only `.status`; for a
//!   resource registered with [`register_with_status`](FakeCluster::register_with_status)
//!   writes to the main resource leave `.status` alone (and create drops
//!   it). `scale` (for [`register_with_scale`](FakeCluster::register_with_scale)):
//!   an `autoscaling/v1` `Scale` over `.spec.replicas`, `.status.replicas`
//!   and the selector. `namespaces/{name}/finalize` changes only
//!   `.spec.finalizers`.
//! - [`compact`](FakeCluster::compact) forgets the change log: a watch, an
//!   exact list or a continue token from an earlier resourceVersion is
//!   answered 410 `Expired`, as after etcd's compaction.
//! - Errors are `Status` objects with the apiserver's reasons, codes and
//!   details (`NotFound`, `AlreadyExists`, `Conflict` with
//!   `FieldManagerConflict` causes for apply, `Expired`, `Invalid`,
//!   `BadRequest`, `MethodNotAllowed`, `UnsupportedMediaType`).
//!
//! # Differences from the real apiserver, kept on purpose
//! - No validation, defaulting or admission: any JSON object is stored as
//!   sent (only `metadata.name` or `generateName` is required).
//! - Namespaces are ordinary objects of `namespaces`: creating an object
//!   in a namespace that does not exist succeeds (as client-go's fake),
//!   and deleting a namespace leaves its objects (no namespace
//!   controller, no `kubernetes` finalizer).
//! - No garbage collector: `propagationPolicy` is accepted and ignored,
//!   dependents stay, and no `foregroundDeletion`/`orphan` finalizer is
//!   added. Deletion ignores grace periods (`deletionGracePeriodSeconds`
//!   is 0). A delete that removes the object at once answers with a
//!   `Success` Status (as most resources do; pods answer with the object).
//! - Lists always serve the current state: a `resourceVersion` (other than
//!   an `Exact` one older than the compaction, 410) is not a snapshot, and
//!   later pages of a paged list show the objects as they are then.
//!   `resourceVersion` newer than the current one is not waited for.
//! - Field selectors accept any field path whose value is a string (the
//!   apiserver allows only a few per kind and 400s the rest).
//! - The `status` subresource is served for every resource (the apiserver
//!   404s it for resources without one); a status write keeps only the new
//!   `.status`, metadata changes included in it are dropped. Other
//!   subresources (`eviction`, `binding`, `log`, ...) answer 404 unless a
//!   reactor answers them.
//! - Bookmarks are sent only at the end of a watch-list's initial events
//!   and when [`send_bookmarks`](FakeCluster::send_bookmarks) asks for
//!   them, not every minute. Watches last until `timeoutSeconds`, the
//!   client goes, or [`close_watches`](FakeCluster::close_watches) (no
//!   random server-side timeout). A watch that has not yet caught up with
//!   changes from before a compaction ends with a 410 `ERROR` event.
//! - Server-side apply, strategic merge patch and the `managedFields` of
//!   every write follow structured-merge-diff and apimachinery's
//!   `strategicpatch` on the stored JSON, with the kind's registered merge
//!   schema; the differences (no version conversion or defaulting, the
//!   order of `fieldsV1` keys, ...) are listed in the `merge` module's
//!   source docs (`runtime/src/fake/merge.rs`). Without a registered
//!   schema, apply merges objects key by key and lists whole, and a
//!   strategic merge patch is a JSON merge patch that honours the
//!   `$patch` directives (the apiserver refuses strategic merge patches of
//!   custom resources with 415; the fake does not).
//! - Discovery is legacy discovery (no aggregated `APIGroupDiscoveryList`)
//!   of the registered resources only, each with every verb; `/version`
//!   answers `v1.37.0-fake`.
//! - No authentication, authorization, rate limiting (the client's limiter
//!   is off), priority and fairness, protobuf or CBOR.

// A refused request's Status is its answer, made once per request and
// written out at once: boxing it would only add an allocation.
#![allow(clippy::result_large_err)]

mod discovery;
mod handlers;
mod list;
mod merge;
mod patch;
mod reactor;
mod route;
mod server;
mod shared;
mod status;
mod tracker;
mod watch;

#[cfg(test)]
mod tests;

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

pub use self::reactor::{Action, Reaction};

use self::route::Ctx;
use self::reactor::Reactor;
use self::route::{RequestInfo, Verb};
use self::shared::Shared;
use self::tracker::Gvr;
use crate::apply::{Merge, MergeFields};
use crate::object::{DynamicResource, Resource};
use crate::rest::{Client, HasScale, HasStatus, Status};

/// Why seeding the fake failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The object does not serialize to a JSON object.
    #[error("seeding the fake with a {kind}: the object does not serialize to a JSON object")]
    NotAnObject {
        /// The kind being seeded.
        kind: String,
        /// What serde found wrong, if it failed.
        #[source]
        source: Option<serde_json::Error>,
    },
    /// The fake refused the object (no name, already there, ...).
    #[error("seeding the fake with {kind} {name:?}: {status}")]
    Rejected {
        /// The kind being seeded.
        kind: String,
        /// The object's name.
        name: String,
        /// The apiserver's answer.
        status: Box<Status>,
    },
}

/// A resource as the fake knows it: the counterpart of what
/// [`FakeCluster::register`] reads from a [`Resource`], for a resource
/// known only at run time.
#[derive(Debug, Clone)]
pub struct FakeResource {
    /// Group, version, kind, plural and scope.
    pub resource: DynamicResource,
    /// The list kind; `<Kind>List` when empty.
    pub list_kind: String,
    /// Whether the resource has a `status` subresource (writes to the
    /// resource itself then leave `.status` alone).
    pub status: bool,
    /// Whether the resource has a `scale` subresource.
    pub scale: bool,
    /// How the kind's fields merge in server-side apply and strategic
    /// merge patch.
    pub merge: Option<Merge>,
}

impl FakeResource {
    /// A resource without subresources or merge schema.
    pub fn new(resource: DynamicResource) -> FakeResource {
        FakeResource { resource, list_kind: String::new(), status: false, scale: false, merge: None }
    }
}

/// The fake apiserver. Cheap to clone: clones share the objects, actions
/// and reactors. See the [module docs](self).
#[derive(Clone)]
pub struct FakeCluster {
    shared: Arc<Shared>,
}

impl Default for FakeCluster {
    fn default() -> Self {
        FakeCluster::new()
    }
}

impl std::fmt::Debug for FakeCluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeCluster").field("resource_version", &self.resource_version()).finish_non_exhaustive()
    }
}

impl FakeCluster {
    /// An empty cluster: no objects, no resources registered.
    pub fn new() -> FakeCluster {
        FakeCluster { shared: Arc::new(Shared::new()) }
    }

    /// A client of this cluster: the normal [`Client`], speaking JSON, with
    /// no rate limit, whose requests go to the fake in memory. Requests
    /// need a tokio runtime (as for any client); building one does not.
    pub fn client(&self) -> Client {
        let shared = self.shared.clone();
        Client::in_memory(Arc::new(move || {
            let (client, server) = tokio::io::duplex(64 * 1024);
            server::serve_connection(shared.clone(), server);
            client
        }))
    }

    fn register_info(&self, resource: &FakeResource) {
        let mut t = self.shared.tracker.lock();
        let info = t.info_mut(&Gvr::of(&resource.resource));
        info.kind = resource.resource.kind.clone();
        info.list_kind = resource.list_kind.clone();
        info.namespaced = Some(resource.resource.namespaced);
        info.status |= resource.status;
        info.scale |= resource.scale;
        if resource.merge.is_some() {
            info.merge = resource.merge;
        }
    }

    fn resource_of<K: Resource>() -> FakeResource {
        FakeResource { list_kind: K::LIST_KIND.to_owned(), ..FakeResource::new(DynamicResource::of::<K>()) }
    }

    /// Makes `K`'s resource known: its scope, kind and list kind.
    pub fn register<K: Resource>(&self) -> &Self {
        self.register_info(&Self::resource_of::<K>());
        self
    }

    /// Registers `K` with a `status` subresource: writes to the resource
    /// itself leave `.status` alone, create drops it.
    pub fn register_with_status<K: Resource + HasStatus>(&self) -> &Self {
        self.register_info(&FakeResource { status: true, ..Self::resource_of::<K>() });
        self
    }

    /// Registers `K` with a `scale` subresource.
    pub fn register_with_scale<K: Resource + HasScale>(&self) -> &Self {
        self.register_info(&FakeResource { scale: true, ..Self::resource_of::<K>() });
        self
    }

    /// Registers `K` with `A`'s merge schema (`A` is `K`'s generated apply
    /// configuration), which server-side apply and strategic merge patch of
    /// `K` use.
    pub fn register_merge<K: Resource, A: MergeFields>(&self) -> &Self {
        self.register_info(&FakeResource { merge: Some(Merge::Struct(A::merge_fields)), ..Self::resource_of::<K>() });
        self
    }

    /// Makes a resource known at run time (a CRD without generated types).
    pub fn register_resource(&self, resource: &FakeResource) -> &Self {
        self.register_info(resource);
        self
    }

    /// Stores `object` as if created (uid, creationTimestamp,
    /// resourceVersion filled in; its status kept), registering `K` if it
    /// is not yet. A namespaced object without a namespace goes to
    /// `default`. Not recorded as an action, not offered to reactors.
    pub fn add<K: Resource + Serialize>(&self, object: &K) -> Result<Value, Error> {
        let value = serde_json::to_value(object)
            .map_err(|e| Error::NotAnObject { kind: K::KIND.to_owned(), source: Some(e) })?;
        let known = self.shared.tracker.lock().info(&Gvr::of(&DynamicResource::of::<K>())).namespaced.is_some();
        if !known {
            self.register::<K>();
        }
        self.add_dynamic(&DynamicResource::of::<K>(), value)
    }

    /// Adds every object of `objects` ([`add`](Self::add)); for building a
    /// seeded cluster in one expression.
    pub fn with_objects<'a, K: Resource + Serialize + 'a>(
        self,
        objects: impl IntoIterator<Item = &'a K>,
    ) -> Result<FakeCluster, Error> {
        for object in objects {
            self.add(object)?;
        }
        Ok(self)
    }

    /// Stores the JSON `object` of `resource` as if created; see [`add`](Self::add).
    pub fn add_dynamic(&self, resource: &DynamicResource, mut object: Value) -> Result<Value, Error> {
        if !object.is_object() {
            return Err(Error::NotAnObject { kind: resource.kind.clone(), source: None });
        }
        if let Some(map) = object.as_object_mut() {
            map.entry("kind").or_insert_with(|| Value::String(resource.kind.clone()));
        }
        let name = tracker::meta_str(&object, "name").unwrap_or_default().to_owned();
        let namespace = match resource.namespaced {
            true => Some(tracker::meta_str(&object, "namespace").unwrap_or("default").to_owned()),
            false => None,
        };
        let info = RequestInfo { verb: Verb::Create, gvr: Gvr::of(resource), namespace, name: None, subresource: None };
        let ctx = Ctx { info: &info, query: &[], manager: String::new(), dry_run: false, seed: true, apply: false };
        match server::dispatch(&self.shared, &ctx, Some(object), None, "") {
            Ok((_, created)) => Ok(created),
            Err(status) => Err(Error::Rejected { kind: resource.kind.clone(), name, status: Box::new(status) }),
        }
    }

    /// The stored object `name` of `K` (in `namespace`; ignored at cluster
    /// scope), as JSON.
    pub fn object<K: Resource>(&self, namespace: &str, name: &str) -> Option<Value> {
        self.object_dynamic(&DynamicResource::of::<K>(), namespace, name)
    }

    /// The stored object `name` of `resource`, as JSON.
    pub fn object_dynamic(&self, resource: &DynamicResource, namespace: &str, name: &str) -> Option<Value> {
        let namespace = if resource.namespaced { namespace } else { "" };
        self.shared.tracker.lock().get(&Gvr::of(resource), &(namespace.to_owned(), name.to_owned())).cloned()
    }

    /// Every request received so far, oldest first (client-go's
    /// `Fake.Actions()`).
    pub fn actions(&self) -> Vec<Action> {
        self.shared.actions.lock().clone()
    }

    /// Forgets the recorded actions.
    pub fn clear_actions(&self) {
        self.shared.actions.lock().clear();
    }

    /// Puts a reactor first in line for requests of `verb` on `resource`
    /// (`"*"` for any; `resource` may be `pods/status` for a subresource):
    /// it sees each such [`Action`] and may answer it with an error or an
    /// object, or delay it ([`Reaction`]); `None` passes the request on
    /// (client-go's `PrependReactor`). The request is recorded either way.
    pub fn prepend_reactor(
        &self,
        verb: &str,
        resource: &str,
        react: impl Fn(&Action) -> Option<Reaction> + Send + Sync + 'static,
    ) {
        let reactor = Reactor { verb: verb.to_owned(), resource: resource.to_owned(), react: Arc::new(react) };
        self.shared.reactors.write().insert(0, reactor);
    }

    /// Removes every reactor.
    pub fn clear_reactors(&self) {
        self.shared.reactors.write().clear();
    }

    /// The cluster's current resourceVersion (of the last write).
    pub fn resource_version(&self) -> u64 {
        self.shared.tracker.lock().rv
    }

    /// Compacts the change log up to the current resourceVersion: watches,
    /// exact lists and continue tokens from before it are answered 410
    /// `Expired`, as after etcd's compaction.
    pub fn compact(&self) {
        self.shared.tracker.lock().compact();
        self.shared.signal.send_modify(|_| {});
    }

    /// Makes every open watch that allows bookmarks send a `BOOKMARK` with
    /// the current resourceVersion (the apiserver sends them about every
    /// minute).
    pub fn send_bookmarks(&self) {
        self.shared.signal.send_modify(|s| s.bookmarks += 1);
    }

    /// Ends every open watch, as an apiserver restart or a watch timeout
    /// does; clients start new ones.
    pub fn close_watches(&self) {
        self.shared.signal.send_modify(|s| s.closes += 1);
    }
}
