//! [`ResourceInformerFactory`]: one informer per resource known at run
//! time, of objects of one type for every resource: the metadata-only
//! informers of client-go's `metadatainformer`
//! ([`MetadataInformerFactory`](crate::metadata::MetadataInformerFactory))
//! and the dynamic ones of its `dynamicinformer`
//! ([`DynamicInformerFactory`](crate::dynamic::DynamicInformerFactory)).

use std::any::TypeId;
use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::factory::InformerKey;
use super::{CacheSyncError, FactoryBuilder, SharedIndexInformer, SharedInformerFactory};
use crate::object::{DynamicResource, Object};
use crate::rest::verbs::{List, Watch};
use crate::rest::{Client, ResourceClient};

/// Shares one [`SharedIndexInformer<T>`] per resource (group, version and
/// plural), all sharing a client, namespace, list-option tweak and default
/// resync, started together. Cheap to clone; clones are the same factory.
/// Use it through its two kinds:
/// [`MetadataInformerFactory`](crate::metadata::MetadataInformerFactory)
/// (objects' metadata only: the least memory, for controllers that only
/// need names, labels and owners) and
/// [`DynamicInformerFactory`](crate::dynamic::DynamicInformerFactory)
/// (whole objects as [`DynamicObject`](crate::dynamic::DynamicObject), for
/// resources found at run time: custom resources a generic controller
/// learns of from discovery).
///
/// It is a view of a [`SharedInformerFactory`], whose options it takes
/// ([`with_factory`](Self::with_factory)): the options given for the type
/// `T` (`resync_for`, `transform_for`) apply to every resource, and
/// `keep_managed_fields` keeps them in every cache (by default they are
/// dropped, as in typed informers). Typed and run-time informers of one
/// factory start and sync together.
pub struct ResourceInformerFactory<T> {
    factory: SharedInformerFactory,
    _objects: PhantomData<fn() -> T>,
}

impl<T> Clone for ResourceInformerFactory<T> {
    fn clone(&self) -> Self {
        ResourceInformerFactory { factory: self.factory.clone(), _objects: PhantomData }
    }
}

impl<T> fmt::Debug for ResourceInformerFactory<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResourceInformerFactory")
            .field("objects", &std::any::type_name::<T>())
            .field("factory", &self.factory)
            .finish()
    }
}

impl<T: Object + List + Watch + 'static> ResourceInformerFactory<T> {
    /// A factory over `client` for all namespaces with the given default
    /// resync (client-go `NewSharedInformerFactory`).
    #[must_use]
    pub fn new(client: Client, default_resync: Duration) -> Self {
        Self::with_factory(SharedInformerFactory::new(client, default_resync))
    }

    /// Options (namespace, tweak, queue, managedFields) as for a typed
    /// factory; finish with [`with_factory`](Self::with_factory)`(builder.build())`.
    #[must_use]
    pub fn builder(client: Client) -> FactoryBuilder {
        SharedInformerFactory::builder(client)
    }

    /// The run-time informers of `factory`, with its options, beside its
    /// typed informers.
    #[must_use]
    pub fn with_factory(factory: SharedInformerFactory) -> Self {
        ResourceInformerFactory { factory, _objects: PhantomData }
    }

    /// The factory underneath, for typed informers sharing this one's start
    /// and sync.
    pub fn factory(&self) -> &SharedInformerFactory {
        &self.factory
    }

    /// The informer of `resource`, created on first use (client-go
    /// `ForResource`); `.lister()` reads its cache. Informers asked for
    /// after [`start`](Self::start) run once `start` is called again.
    pub fn for_resource(&self, resource: &DynamicResource) -> SharedIndexInformer<T> {
        let key = InformerKey::Resource {
            object: TypeId::of::<T>(),
            group: resource.group.clone(),
            version: resource.version.clone(),
            resource: resource.plural.clone(),
        };
        self.factory.informer_keyed(key, resource, |client, namespace| {
            ResourceClient::<T>::for_resource(client, resource, namespace)
        })
    }

    /// The informer of the resource serving `kind` of `api_version`
    /// (`apps/v1`), found through `mapper` (which discovers again for a kind
    /// not known yet); then as [`for_resource`](Self::for_resource).
    ///
    /// # Cancel safety
    /// Cancel safe: it only reads discovery before creating the informer.
    pub async fn for_kind(
        &self,
        mapper: &crate::discovery::RestMapper,
        api_version: &str,
        kind: &str,
    ) -> Result<SharedIndexInformer<T>, crate::discovery::MappingError> {
        let gv = crate::object::GroupVersion::parse(api_version);
        let mapping = mapper.mapping(gv.group, kind, Some(gv.version)).await?;
        Ok(self.for_resource(&mapping.resource))
    }

    /// Starts every informer created so far that is not running yet
    /// (client-go `Start`).
    pub fn start(&self) {
        self.factory.start();
    }

    /// Waits until every started informer has synced, for at most
    /// `timeout`; the error names each resource not synced and why (see
    /// [`SharedInformerFactory::wait_for_cache_sync_within`]).
    ///
    /// # Cancel safety
    /// Cancel safe: it only observes the informers.
    pub async fn wait_for_cache_sync_within(&self, timeout: Duration) -> Result<(), CacheSyncError> {
        self.factory.wait_for_cache_sync_within(timeout).await
    }

    /// Waits until every started informer has synced or the factory is shut
    /// down; reports per resource (client-go `WaitForCacheSync`).
    ///
    /// # Cancel safety
    /// Cancel safe: it only observes the informers.
    pub async fn wait_for_cache_sync(&self) -> BTreeMap<DynamicResource, bool> {
        self.factory.wait_for_cache_sync().await
    }

    /// Stops every informer of this factory (client-go `Shutdown`).
    pub fn shutdown(&self) {
        self.factory.shutdown();
    }

    /// The token that stops this factory's informers.
    pub fn cancellation(&self) -> CancellationToken {
        self.factory.cancellation()
    }
}
