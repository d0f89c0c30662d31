//! [`MetadataInformerFactory`]: one metadata-only informer per resource
//! (client-go's `metadatainformer.SharedInformerFactory`).

use std::any::TypeId;
use std::collections::BTreeMap;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::{MetadataClient, PartialObjectMetadata};
use crate::cache::factory::InformerKey;
use crate::cache::{CacheSyncError, FactoryBuilder, SharedIndexInformer, SharedInformerFactory};
use crate::object::DynamicResource;
use crate::rest::Client;

/// Shares one [`SharedIndexInformer<PartialObjectMetadata>`] per resource
/// (group, version and plural), all sharing a client, namespace, list-option
/// tweak and default resync, started together. Cheap to clone; clones are
/// the same factory.
///
/// It is a view of a [`SharedInformerFactory`], whose options it takes
/// ([`with_factory`](Self::with_factory)): the options given for the type
/// [`PartialObjectMetadata`] (`resync_for`, `transform_for`) apply to every
/// resource, and `keep_managed_fields` keeps them in every cache (by
/// default they are dropped, as in typed informers). Typed and metadata
/// informers of one factory start and sync together.
#[derive(Clone, Debug)]
#[doc(alias = "metadatainformer.SharedInformerFactory")]
pub struct MetadataInformerFactory {
    factory: SharedInformerFactory,
}

impl MetadataInformerFactory {
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

    /// The metadata informers of `factory`, with its options, beside its
    /// typed informers.
    #[must_use]
    pub fn with_factory(factory: SharedInformerFactory) -> Self {
        MetadataInformerFactory { factory }
    }

    /// The factory underneath, for typed informers sharing this one's start
    /// and sync.
    pub fn factory(&self) -> &SharedInformerFactory {
        &self.factory
    }

    /// The informer of `resource`'s metadata, created on first use
    /// (client-go `ForResource`); `.lister()` reads its cache. Informers
    /// asked for after [`start`](Self::start) run once `start` is called
    /// again.
    pub fn for_resource(&self, resource: &DynamicResource) -> SharedIndexInformer<PartialObjectMetadata> {
        let key = InformerKey::Resource {
            object: TypeId::of::<PartialObjectMetadata>(),
            group: resource.group.clone(),
            version: resource.version.clone(),
            resource: resource.plural.clone(),
        };
        self.factory.informer_keyed(key, resource, |client, namespace| {
            MetadataClient::for_resource(client, resource, namespace)
        })
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
