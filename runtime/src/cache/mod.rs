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

pub mod delta_fifo;
pub mod factory;
pub mod informer;
pub mod list_watch;
pub mod lister;
pub mod reflector;
pub mod store;

pub use factory::{FactoryBuilder, SharedInformerFactory, TypedInformer};
pub use delta_fifo::{
    DeletedFinalStateUnknown, Delta, DeltaFifo, DeltaFifoError, DeltaFifoOptions, DeltaObject,
    DeltaType, Deltas, KnownObjects, ProcessError,
};
pub use informer::{
    FilteringResourceEventHandler, HandlerRegistration, HasSynced, InformerBuilder, InformerError,
    ResourceEventHandler, ResourceEventHandlerFuncs, SharedIndexInformer, wait_for_cache_sync,
};
pub use list_watch::{FilteredListWatch, ListWatch, TweakListOptions};
pub use lister::{Lister, ListerError, NamespaceLister};
pub use reflector::{
    BackoffConfig, Phase, Reflector, ReflectorCounters, ReflectorError, ReflectorOptions, ResourceVersionHandle,
    ShouldResync, TransformFn, WatchErrorHandler,
};
pub use store::{
    IndexFn, Indexers, KeyFn, NAMESPACE_INDEX, Store, StoreError, ThreadSafeStore, Writer,
    meta_namespace_index,
};

/// A minimal kind for the unit tests of this module.
#[cfg(test)]
pub(crate) mod test_object {
    use std::collections::BTreeMap;

    use crate::object::{Metadata, Object, Resource, Scope};

    #[derive(Debug, Clone, Default, PartialEq)]
    pub struct Meta {
        pub name: Option<String>,
        pub namespace: Option<String>,
        pub resource_version: Option<String>,
        pub labels: Option<BTreeMap<String, String>>,
    }

    impl Metadata for Meta {
        fn name(&self) -> Option<&str> {
            self.name.as_deref()
        }
        fn generate_name(&self) -> Option<&str> {
            None
        }
        fn namespace(&self) -> Option<&str> {
            self.namespace.as_deref()
        }
        fn uid(&self) -> Option<&str> {
            None
        }
        fn resource_version(&self) -> Option<&str> {
            self.resource_version.as_deref()
        }
        fn generation(&self) -> Option<i64> {
            None
        }
        fn labels(&self) -> Option<&BTreeMap<String, String>> {
            self.labels.as_ref()
        }
        fn annotations(&self) -> Option<&BTreeMap<String, String>> {
            None
        }
        fn is_being_deleted(&self) -> bool {
            false
        }
        fn set_name(&mut self, name: Option<String>) {
            self.name = name;
        }
        fn set_namespace(&mut self, namespace: Option<String>) {
            self.namespace = namespace;
        }
        fn set_resource_version(&mut self, resource_version: Option<String>) {
            self.resource_version = resource_version;
        }
        fn clear_managed_fields(&mut self) {}
    }

    #[derive(Debug, Clone, Default, PartialEq)]
    pub struct Pod {
        pub metadata: Meta,
        pub node: String,
    }

    impl Resource for Pod {
        const GROUP: &'static str = "";
        const VERSION: &'static str = "v1";
        const API_VERSION: &'static str = "v1";
        const KIND: &'static str = "Pod";
        const PLURAL: &'static str = "pods";
        const SCOPE: Scope = Scope::Namespaced;
        const LIST_KIND: &'static str = "PodList";
    }

    impl Object for Pod {
        type Meta = Meta;
        fn metadata(&self) -> &Meta {
            &self.metadata
        }
        fn metadata_mut(&mut self) -> &mut Meta {
            &mut self.metadata
        }
    }

    /// A pod in `namespace` (none if empty) on `node`.
    pub fn pod(namespace: &str, name: &str, node: &str) -> Pod {
        Pod {
            metadata: Meta {
                name: Some(name.to_owned()),
                namespace: (!namespace.is_empty()).then(|| namespace.to_owned()),
                ..Meta::default()
            },
            node: node.to_owned(),
        }
    }
}
