//! The client-side cache of informers, as client-go's `tools/cache`.
//!
//! The pieces, from the wire inwards:
//! - [`delta_fifo`]: [`DeltaFifo`] queues what happened to each object
//!   (added, updated, deleted, relisted) until the informer processes it,
//!   in order, one key at a time.
//! - [`store`]: the indexed in-memory copy of the objects. The informer
//!   owns the [`Writer`]; controllers and listers read through [`Store`]
//!   handles, which never block each other. [`ThreadSafeStore`] is the
//!   keyed map underneath, usable on its own.
//!
//! Use these directly only to build your own informer-like machinery; a
//! controller normally gets a [`Store`] from a shared informer.
//!
//! Each module names its errors `Error`; refer to them by path:
//! [`store::Error`], [`lister::Error`], [`delta_fifo::Error`],
//! [`reflector::Error`], [`informer::Error`].

pub mod delta_fifo;
pub mod factory;
pub mod informer;
pub mod list_watch;
pub mod lister;
pub mod reflector;
pub mod reflector_store;
pub mod store;

pub use delta_fifo::{
    DeletedFinalStateUnknown, Delta, DeltaFifo, DeltaFifoOptions, DeltaObject, DeltaType, Deltas, KnownObjects,
    ProcessError,
};
pub use factory::{FactoryBuilder, SharedInformerFactory, TypedInformer};
pub use informer::{
    FilteringResourceEventHandler, HandlerRegistration, HasSynced, InformerBuilder, ResourceEventHandler,
    ResourceEventHandlerFuncs, SharedIndexInformer, wait_for_cache_sync,
};
pub use list_watch::{FilteredListWatch, ListWatch, TweakListOptions};
pub use lister::{Lister, NamespaceLister};
pub use reflector::{
    BackoffConfig, Phase, Reflector, ReflectorCounters, ReflectorOptions, ResourceVersionHandle, ShouldResync,
    TransformFn, WatchErrorHandler,
};
pub use reflector_store::ReflectorStore;
pub use store::{IndexFn, Indexers, KeyFn, NAMESPACE_INDEX, Store, ThreadSafeStore, Writer, meta_namespace_index};
