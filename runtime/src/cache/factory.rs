//! The shared informer factory (client-go's `SharedInformerFactory`): one
//! informer per kind however often it is asked for, all sharing a client,
//! namespace, list-option tweak and default resync, started together.
//!
//! This is the one factory type: a generated crate adds typed accessors to
//! it through an extension trait (`factory.apps_v1().deployments()`, a
//! [`TypedInformer`] with `.informer()` and `.lister()`), so built-in kinds
//! and custom resources from several generated crates share one factory.
//! Use [`SharedInformerFactory::informer_for`] for any other kind.

use std::any::{Any, TypeId};
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

use super::informer::{HasSynced, OnPanic, QueueKind, SharedIndexInformer, wait_for_cache_sync};
use super::informer::metrics::{InformerId, InformerMetricsProvider};
use super::list_watch::{FilteredListWatch, TweakListOptions};
use super::lister::Lister;
use super::reflector::ReflectorCounters;
use crate::object::{DynamicResource, Resource};
use crate::rest::verbs::{List, Watch};
use crate::rest::{Client, ListOptions, ResourceClient};

/// What the factory keys its informers by: the Rust type of a kind with a
/// static identity, or a type and a resource for a representation that
/// serves many resources (the metadata-only informers).
#[derive(Clone, PartialEq, Eq, Hash)]
pub(crate) enum InformerKey {
    /// The informer of the kind whose `TypeId` this is.
    Kind(TypeId),
    /// The informer of objects of the type `object` from `group`/`version`
    /// `resource`.
    Resource {
        /// The `TypeId` of the informer's objects.
        object: TypeId,
        /// API group; empty for the core group.
        group: String,
        /// API version.
        version: String,
        /// The resource (plural).
        resource: String,
    },
}

struct Entry {
    resource: DynamicResource,
    /// The informer's reflector's counters, for the last list/watch error.
    counters: ReflectorCounters,
    /// `SharedIndexInformer<K>` for the `K` of the key.
    informer: Box<dyn Any + Send + Sync>,
    synced: Arc<dyn HasSynced + Send + Sync>,
    /// Spawns the informer; kept because starting needs the concrete kind.
    start: Box<dyn Fn(CancellationToken) + Send + Sync>,
    started: bool,
}

struct Inner {
    /// What the factory was built with; fixed from then on.
    options: FactoryBuilder,
    informers: Mutex<HashMap<InformerKey, Entry>>,
    cancel: CancellationToken,
}

/// Shares one informer per kind. Cheap to clone; clones are the same factory.
#[derive(Clone)]
pub struct SharedInformerFactory {
    inner: Arc<Inner>,
}

impl fmt::Debug for SharedInformerFactory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedInformerFactory")
            .field("namespace", &self.inner.options.namespace)
            .field("default_resync", &self.inner.options.default_resync)
            .field("informers", &self.inner.informers.lock().len())
            .finish()
    }
}

/// Options of a [`SharedInformerFactory`] (client-go's `SharedInformerOption`s).
pub struct FactoryBuilder {
    client: Client,
    namespace: Option<String>,
    namespace_for: HashMap<TypeId, Option<String>>,
    default_resync: Duration,
    tweak: Option<TweakListOptions>,
    tweak_for: HashMap<TypeId, TweakListOptions>,
    resync_for: HashMap<TypeId, Duration>,
    transform_for: HashMap<TypeId, Box<dyn Any + Send + Sync>>,
    keep_managed_fields: bool,
    queue: QueueKind,
    on_panic: OnPanic,
    metrics: Option<(String, Arc<dyn InformerMetricsProvider>)>,
}

impl FactoryBuilder {
    /// Reports every informer's queue, processing time and cache version
    /// to `provider` ([`metrics`](super::informer::metrics)), under `name`
    /// and the informer's resource (client-go's `WithInformerName`).
    #[must_use]
    #[doc(alias = "WithInformerName")]
    pub fn metrics(mut self, name: impl Into<String>, provider: impl InformerMetricsProvider + 'static) -> Self {
        self.metrics = Some((name.into(), Arc::new(provider)));
        self
    }

    /// What every informer does when code it runs (a transform, an index
    /// or key function) panics ([`OnPanic`]; default: that informer stops
    /// and is reported failed, by [`SharedInformerFactory::failures`] and
    /// the waits for sync).
    #[must_use]
    pub fn on_panic(mut self, on_panic: OnPanic) -> Self {
        self.on_panic = on_panic;
        self
    }

    /// Watch only this namespace (client-go `WithNamespace`); default: all.
    #[must_use]
    pub fn namespace(mut self, namespace: impl Into<String>) -> Self {
        self.namespace = Some(namespace.into());
        self
    }

    /// Watch kind `K` in `namespace` only (`None`: in all), whatever the
    /// factory's namespace (controller-runtime's cache `ByObject`): an
    /// operator watching its custom resource cluster-wide and ConfigMaps
    /// in its own namespace needs one factory.
    #[must_use]
    pub fn namespace_for<K: 'static>(mut self, namespace: Option<&str>) -> Self {
        self.namespace_for.insert(TypeId::of::<K>(), namespace.map(str::to_owned));
        self
    }

    /// Changes the list and watch requests of kind `K` only, in place of
    /// [`tweak_list_options`](Self::tweak_list_options) (controller-runtime's
    /// cache `ByObject` selectors).
    #[must_use]
    pub fn tweak_list_options_for<K: 'static>(mut self, tweak: impl Fn(&mut ListOptions) + Send + Sync + 'static) -> Self {
        self.tweak_for.insert(TypeId::of::<K>(), Arc::new(tweak));
        self
    }

    /// Resync period of informers without their own (`0`: never).
    #[must_use]
    pub fn default_resync(mut self, period: Duration) -> Self {
        self.default_resync = period;
        self
    }

    /// Changes every list and watch request, e.g. to add a label selector
    /// (client-go `WithTweakListOptions`).
    #[must_use]
    pub fn tweak_list_options(mut self, tweak: impl Fn(&mut ListOptions) + Send + Sync + 'static) -> Self {
        self.tweak = Some(Arc::new(tweak));
        self
    }

    /// Resync period for kind `K` (client-go `WithCustomResyncConfig`).
    #[must_use]
    pub fn resync_for<K: 'static>(mut self, period: Duration) -> Self {
        self.resync_for.insert(TypeId::of::<K>(), period);
        self
    }

    /// Transform objects of kind `K` before they are stored (client-go
    /// `WithTransform`, per kind); runs instead of the default, which drops
    /// `managedFields`.
    #[must_use]
    pub fn transform_for<K: 'static>(mut self, transform: impl Fn(&mut K) + Send + Sync + 'static) -> Self {
        let transform: Arc<dyn Fn(&mut K) + Send + Sync> = Arc::new(transform);
        self.transform_for.insert(TypeId::of::<K>(), Box::new(transform));
        self
    }

    /// Keep `managedFields` in the caches (by default they are dropped, and
    /// so not even decoded: see [`InformerBuilder`](super::InformerBuilder)).
    #[must_use]
    pub fn keep_managed_fields(mut self) -> Self {
        self.keep_managed_fields = true;
        self
    }

    /// The queue of every informer ([`QueueKind`]): by default a
    /// [`RealFifo`](super::RealFifo), delivering every change in order.
    #[must_use]
    pub fn queue(mut self, kind: QueueKind) -> Self {
        self.queue = kind;
        self
    }

    /// The factory.
    #[must_use]
    pub fn build(self) -> SharedInformerFactory {
        SharedInformerFactory {
            inner: Arc::new(Inner {
                options: self,
                informers: Mutex::new(HashMap::new()),
                cancel: CancellationToken::new(),
            }),
        }
    }
}

impl SharedInformerFactory {
    /// A factory over `client` for all namespaces with the given default resync.
    #[must_use]
    pub fn new(client: Client, default_resync: Duration) -> Self {
        Self::builder(client).default_resync(default_resync).build()
    }

    /// Starts a factory with options (namespace, tweaks, transforms, resyncs).
    #[must_use]
    pub fn builder(client: Client) -> FactoryBuilder {
        FactoryBuilder {
            client,
            namespace: None,
            namespace_for: HashMap::new(),
            default_resync: Duration::ZERO,
            tweak: None,
            tweak_for: HashMap::new(),
            resync_for: HashMap::new(),
            transform_for: HashMap::new(),
            keep_managed_fields: false,
            queue: QueueKind::default(),
            on_panic: OnPanic::default(),
            metrics: None,
        }
    }

    /// The client the informers list and watch with.
    pub fn client(&self) -> &Client {
        &self.inner.options.client
    }

    /// The informer of kind `K`, created on first use (client-go `InformerFor`).
    /// Informers asked for after [`start`](Self::start) run once `start` is called again.
    pub fn informer_for<K: List + Watch + Resource>(&self) -> SharedIndexInformer<K> {
        self.informer_keyed(InformerKey::Kind(TypeId::of::<K>()), &DynamicResource::of::<K>(), ResourceClient::new)
    }

    /// The informer under `key`, created on first use: of `resource`, over
    /// the client `client_for` makes from the factory's client and
    /// namespace.
    pub(crate) fn informer_keyed<K: List + Watch>(
        &self,
        key: InformerKey,
        resource: &DynamicResource,
        client_for: impl FnOnce(Client, Option<&str>) -> ResourceClient<K>,
    ) -> SharedIndexInformer<K> {
        let options = &self.inner.options;
        let namespace = match &key {
            InformerKey::Kind(kind) => options.namespace_for.get(kind).unwrap_or(&options.namespace),
            InformerKey::Resource { .. } => &options.namespace,
        };
        let mut informers = self.inner.informers.lock();
        let entry = informers.entry(key.clone()).or_insert_with(|| {
            let informer = self.new_informer(client_for(options.client.clone(), namespace.as_deref()), resource);
            let to_start = informer.clone();
            Entry {
                resource: resource.clone(),
                counters: informer.reflector_counters(),
                synced: Arc::new(informer.clone()),
                informer: Box::new(informer),
                start: Box::new(move |cancel| {
                    // The handle is not kept: the informer stops with `cancel`.
                    drop(to_start.start(cancel));
                }),
                started: false,
            }
        });
        match entry.informer.downcast_ref::<SharedIndexInformer<K>>() {
            Some(informer) => informer.clone(),
            // Entries are keyed by the TypeId of their own informer's objects.
            None => unreachable!("informer entry of another type under {}", resource.plural),
        }
    }

    fn new_informer<K: List + Watch>(
        &self,
        resources: ResourceClient<K>,
        resource: &DynamicResource,
    ) -> SharedIndexInformer<K> {
        let options = &self.inner.options;
        let transform = options
            .transform_for
            .get(&TypeId::of::<K>())
            .and_then(|t| t.downcast_ref::<Arc<dyn Fn(&mut K) + Send + Sync>>())
            .cloned();
        let tweak = options.tweak_for.get(&TypeId::of::<K>()).or(options.tweak.as_ref()).cloned();
        let lw = FilteredListWatch::new(resources, move |opts: &mut ListOptions| {
            if let Some(tweak) = &tweak {
                tweak(opts);
            }
        });
        let resync = options.resync_for.get(&TypeId::of::<K>()).copied().unwrap_or(options.default_resync);
        // The builder decides from these whether managedFields are decoded.
        let mut builder =
            SharedIndexInformer::builder(lw).resync_period(resync).queue(options.queue).on_panic(options.on_panic);
        if options.keep_managed_fields {
            builder = builder.keep_managed_fields();
        }
        if let Some((name, provider)) = &options.metrics {
            let id = InformerId {
                name: name.clone(),
                group: resource.group.clone(),
                version: resource.version.clone(),
                resource: resource.plural.clone(),
            };
            builder = builder.metrics(provider, &id);
        }
        if let Some(transform) = transform {
            builder = builder.transform(move |obj| transform(obj));
        }
        match builder.build() {
            Ok(informer) => informer,
            // `build` fails only for extra indexers, which the factory never adds.
            Err(e) => unreachable!("informer without extra indexers failed to build: {}", crate::ErrorChain(&e)),
        }
    }

    /// Starts every informer created so far that is not running yet
    /// (client-go `Start`); call again after asking for more informers.
    pub fn start(&self) {
        let mut informers = self.inner.informers.lock();
        for entry in informers.values_mut().filter(|e| !e.started) {
            entry.started = true;
            (entry.start)(self.inner.cancel.clone());
        }
    }

    /// Waits until every started informer has synced or the factory is shut
    /// down; reports per resource (client-go `WaitForCacheSync`). It waits
    /// for ever if an informer cannot list (a CRD not installed, a 403):
    /// prefer [`wait_for_cache_sync_within`](Self::wait_for_cache_sync_within),
    /// which says why.
    ///
    /// # Cancel safety
    /// Cancel safe: it only observes the informers.
    pub async fn wait_for_cache_sync(&self) -> BTreeMap<DynamicResource, bool> {
        let entries = self.started_entries();
        let refs: Vec<&(dyn HasSynced + Sync)> =
            entries.iter().map(|e| e.synced.as_ref() as &(dyn HasSynced + Sync)).collect();
        wait_for_cache_sync(&self.inner.cancel, &refs).await;
        entries.into_iter().map(|e| (e.resource, e.synced.has_synced())).collect()
    }

    /// Waits until every started informer has synced, for at most
    /// `timeout`. The error names each resource not synced with its last
    /// list/watch failure (`listing failed: apiserver: widgets.example.com
    /// is forbidden: …`), or says that the factory was shut down. An
    /// informer that failed for good ([`OnPanic`]) ends the wait at once,
    /// named with the panic's message.
    ///
    /// A controller calls this after [`start`](Self::start) and before its
    /// workers, and exits with the error if the caches do not fill:
    /// ```no_run
    /// # async fn f(factory: k8s_client_runtime::cache::SharedInformerFactory)
    /// #     -> Result<(), k8s_client_runtime::cache::CacheSyncError> {
    /// factory.start();
    /// factory.wait_for_cache_sync_within(std::time::Duration::from_secs(60)).await?;
    /// # Ok(()) }
    /// ```
    ///
    /// # Cancel safety
    /// Cancel safe: it only observes the informers.
    pub async fn wait_for_cache_sync_within(&self, timeout: Duration) -> Result<(), CacheSyncError> {
        let entries = self.started_entries();
        let refs: Vec<&(dyn HasSynced + Sync)> =
            entries.iter().map(|e| e.synced.as_ref() as &(dyn HasSynced + Sync)).collect();
        let finished = tokio::time::timeout(timeout, wait_for_cache_sync(&self.inner.cancel, &refs)).await;
        let not_synced: Vec<NotSynced> = entries
            .into_iter()
            .filter(|e| !e.synced.has_synced() || e.synced.failure().is_some())
            .map(|e| NotSynced {
                resource: e.resource,
                last_error: e.counters.last_error(),
                failure: e.synced.failure(),
            })
            .collect();
        if not_synced.is_empty() {
            return Ok(());
        }
        let reason = if not_synced.iter().any(|n| n.failure.is_some()) {
            SyncStopped::Failed
        } else if finished.is_ok() {
            SyncStopped::ShutDown
        } else {
            SyncStopped::Timeout(timeout)
        };
        Err(CacheSyncError { reason, not_synced })
    }

    /// Whether every started informer has synced (and none failed): what a
    /// readiness probe reports.
    pub fn has_synced(&self) -> bool {
        self.started_entries().iter().all(|e| e.synced.has_synced() && e.synced.failure().is_none())
    }

    /// The started informers that stopped for good because code they run
    /// panicked ([`OnPanic`]), with the panic's message: their caches no
    /// longer follow the server. A liveness probe reports these.
    pub fn failures(&self) -> Vec<NotSynced> {
        self.started_entries()
            .into_iter()
            .filter_map(|e| {
                let failure = e.synced.failure()?;
                Some(NotSynced { resource: e.resource, last_error: e.counters.last_error(), failure: Some(failure) })
            })
            .collect()
    }

    fn started_entries(&self) -> Vec<StartedEntry> {
        let mut entries: Vec<StartedEntry> = self
            .inner
            .informers
            .lock()
            .values()
            .filter(|e| e.started)
            .map(|e| StartedEntry {
                resource: e.resource.clone(),
                synced: Arc::clone(&e.synced),
                counters: e.counters.clone(),
            })
            .collect();
        entries.sort_by(|a, b| a.resource.cmp(&b.resource));
        entries
    }

    /// Stops every informer of this factory (client-go `Shutdown`).
    pub fn shutdown(&self) {
        self.inner.cancel.cancel();
    }

    /// The token that stops this factory's informers, to tie them to other work.
    pub fn cancellation(&self) -> CancellationToken {
        self.inner.cancel.clone()
    }
}

struct StartedEntry {
    resource: DynamicResource,
    synced: Arc<dyn HasSynced + Send + Sync>,
    counters: ReflectorCounters,
}

/// Informers of a [`SharedInformerFactory`] whose caches did not sync:
/// which, and why as far as their reflectors know. Its message names them
/// all, e.g. `caches not synced within 30s: example.com/v1 widgets (last
/// list/watch error: listing failed: apiserver: the server could not find
/// the requested resource)`.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{reason}: {}", DisplayNotSynced(not_synced))]
pub struct CacheSyncError {
    /// Why the wait ended.
    pub reason: SyncStopped,
    /// The informers not synced, in the order of their resources.
    pub not_synced: Vec<NotSynced>,
}

/// Why [`SharedInformerFactory::wait_for_cache_sync_within`] stopped waiting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SyncStopped {
    /// The deadline passed.
    #[error("caches not synced within {0:?}")]
    Timeout(Duration),
    /// The factory was shut down first.
    #[error("informer factory shut down before its caches synced")]
    ShutDown,
    /// An informer stopped for good: code it runs panicked ([`OnPanic`]).
    #[error("an informer failed")]
    Failed,
}

/// One informer whose cache has not synced, or that failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotSynced {
    /// Its resource.
    pub resource: DynamicResource,
    /// Its reflector's last list or watch failure with its causes, if any.
    pub last_error: Option<String>,
    /// The message of the panic that stopped it for good, if one did
    /// ([`OnPanic`]).
    pub failure: Option<String>,
}

struct DisplayNotSynced<'a>(&'a [NotSynced]);

impl fmt::Display for DisplayNotSynced<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, n) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{} {}", n.resource.api_version(), n.resource.plural)?;
            match (&n.failure, &n.last_error) {
                (Some(panic), _) => write!(f, " (failed: code it runs panicked: {panic})")?,
                (None, Some(e)) => write!(f, " (last list/watch error: {e})")?,
                (None, None) => f.write_str(" (no list/watch error yet)")?,
            }
        }
        Ok(())
    }
}

/// The factory's informer of kind `K`, as generated accessors hand it out
/// (client-go's generated `DeploymentInformer`, generic): cheap to make,
/// and every one made for `K` from one factory is the same informer.
pub struct TypedInformer<K> {
    factory: SharedInformerFactory,
    _kind: PhantomData<fn() -> K>,
}

impl<K> Clone for TypedInformer<K> {
    fn clone(&self) -> Self {
        TypedInformer { factory: self.factory.clone(), _kind: PhantomData }
    }
}

impl<K> fmt::Debug for TypedInformer<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TypedInformer").field("kind", &std::any::type_name::<K>()).finish_non_exhaustive()
    }
}

impl<K: List + Watch + Resource> TypedInformer<K> {
    /// The informer of `K` of `factory`.
    #[must_use]
    pub fn new(factory: &SharedInformerFactory) -> Self {
        TypedInformer { factory: factory.clone(), _kind: PhantomData }
    }

    /// The factory's one informer of this kind, created on first use.
    pub fn informer(&self) -> SharedIndexInformer<K> {
        self.factory.informer_for::<K>()
    }

    /// A lister over the informer's cache.
    pub fn lister(&self) -> Lister<K> {
        self.informer().lister()
    }
}

#[cfg(all(test, feature = "fake"))]
mod tests {
    use std::time::Duration;

    use super::SharedInformerFactory;
    use crate::Map;
    use crate::fake::FakeCluster;
    use crate::selector::LabelSelector;
    use crate::testing::{Pod, pod};

    #[tokio::test]
    async fn a_kind_can_have_a_namespace_and_a_selector_of_its_own() {
        let fake = FakeCluster::new();
        for (namespace, name, team) in [("a", "p1", "x"), ("b", "p2", "x"), ("b", "p3", "y")] {
            let mut p = pod(namespace, name, "node");
            p.metadata.labels = Some(Map::from([("team", team)]));
            fake.add(&p).unwrap();
        }
        let names = |factory: SharedInformerFactory| async move {
            let informer = factory.informer_for::<Pod>();
            factory.start();
            factory.wait_for_cache_sync_within(Duration::from_secs(10)).await.unwrap();
            let mut names: Vec<_> = informer
                .lister()
                .list(&LabelSelector::everything())
                .iter()
                .map(|p| p.metadata.name.clone().unwrap())
                .collect();
            names.sort();
            factory.shutdown();
            names
        };
        let builder = || SharedInformerFactory::builder(fake.client()).namespace("a");
        assert_eq!(names(builder().build()).await, ["p1"]);
        assert_eq!(names(builder().namespace_for::<Pod>(Some("b")).build()).await, ["p2", "p3"]);
        let selected = builder()
            .namespace_for::<Pod>(None)
            .tweak_list_options_for::<Pod>(|options| options.label_selector = Some("team=x".into()))
            .build();
        assert_eq!(names(selected).await, ["p1", "p2"]);
    }
}
