//! The client-side cache of informers, as client-go's `tools/cache`.
//!
//! A controller normally needs only the first two; the others are the
//! pieces they are made of, for building informer-like machinery of your
//! own. From the top down:
//! - [`factory`]: [`SharedInformerFactory`] hands out one informer per kind
//!   (through a generated crate's typed accessors, or
//!   [`informer_for`](SharedInformerFactory::informer_for)), all sharing a
//!   client, namespace and list-option tweak, started together; its
//!   [`wait_for_cache_sync_within`](SharedInformerFactory::wait_for_cache_sync_within)
//!   says which caches did not fill, and why. Start here.
//! - [`informer`]: [`SharedIndexInformer`], one watch of a kind feeding an
//!   indexed cache and notifying [`ResourceEventHandler`]s
//!   ([`EnqueueKeys`] feeds a controller's workqueue). Build one
//!   yourself for a kind outside any factory, or with a [`ListWatch`] of
//!   your own.
//! - [`lister`]: [`Lister`], typed reads of an informer's cache (all
//!   objects, one namespace, one name), never touching the network.
//! - [`store`]: the indexed in-memory copy of the objects. The informer
//!   owns the [`Writer`]; controllers and listers read through [`Store`]
//!   handles, which never block each other. [`ThreadSafeStore`] is the
//!   keyed map underneath, usable on its own. [`Key`] is the object key
//!   they, the queue and the reflector share.
//! - [`list_watch`]: [`ListWatch`], the two calls a reflector makes to the
//!   apiserver; a [`ResourceClient`](crate::rest::ResourceClient) is one,
//!   and [`FilteredListWatch`] adds selectors through a
//!   [`TweakListOptions`]. Implement it to feed an informer from anything
//!   else.
//! - [`reflector`]: [`Reflector`], which lists and watches through a
//!   [`ListWatch`] and recovers on its own (relists, resumes, backoff),
//!   writing into a [`ReflectorStore`].
//! - [`reflector_store`]: [`ReflectorStore`], what a reflector writes to
//!   (add, update, delete, replace, resync). Implement it to put a queue of
//!   your own behind a reflector.
//! - [`real_fifo`]: [`RealFifo`], the informer's queue by default: every
//!   change (added, updated, deleted) in the order it came, a relist or a
//!   resync as one entry, until the informer applies it (a relist replaces
//!   the cache in one write). Use it with a reflector to pop changes
//!   yourself.
//! - [`delta_fifo`]: [`DeltaFifo`], the informer's queue when asked
//!   ([`QueueKind`]): what happened to each object, grouped per key, keys
//!   popped in the order first queued.
//!
//! Each module names its errors `Error`; refer to them by path:
//! [`store::Error`], [`lister::Error`], [`real_fifo::Error`], [`delta_fifo::Error`],
//! [`reflector::Error`], [`informer::Error`].

pub mod delta_fifo;
pub mod factory;
#[cfg(test)]
mod fifo_test_support;
pub mod informer;
pub mod list_watch;
pub mod lister;
pub mod real_fifo;
pub mod reflector;
pub mod reflector_store;
pub mod resource_factory;
pub mod store;

pub use delta_fifo::{
    DeletedFinalStateUnknown, Delta, DeltaFifo, DeltaFifoOptions, DeltaObject, DeltaType, Deltas, KnownObjects,
    ProcessError,
};
pub use factory::{CacheSyncError, FactoryBuilder, NotSynced, SharedInformerFactory, SyncStopped, TypedInformer};
pub use informer::{
    EnqueueKeys, FilteringResourceEventHandler, HandlerOptions, HandlerRegistration, HasSynced, InformerBuilder,
    OnPanic, QueueKind, ResourceEventHandler, ResourceEventHandlerFuncs, SharedIndexInformer, wait_for_cache_sync,
};
crate::cfg_feature!("metrics" => pub use informer::PrometheusInformerMetrics;);
pub use informer::metrics::{InformerId, InformerMetricsProvider};
pub use list_watch::{FilteredListWatch, ListWatch, TweakListOptions};
pub use lister::{Lister, NamespaceLister};
pub use real_fifo::{Change, Entry, RealFifo, RealFifoOptions, ReplacedAll};
pub use reflector::{
    BackoffConfig, Phase, Reflector, ReflectorCounters, ReflectorOptions, ResourceVersionHandle, ShouldResync,
    TransformFn, WatchErrorHandler,
};
pub use reflector_store::ReflectorStore;
pub use resource_factory::ResourceInformerFactory;
pub use store::{IndexFn, Indexers, Key, KeyFn, NAMESPACE_INDEX, Store, ThreadSafeStore, Writer, meta_namespace_index};
