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

use super::informer::{HasSynced, SharedIndexInformer, wait_for_cache_sync};
use super::list_watch::{FilteredListWatch, TweakListOptions};
use super::lister::Lister;
use crate::object::Resource;
use crate::rest::verbs::{List, Watch};
use crate::rest::{Client, ListOptions, ResourceClient};

struct Entry {
    kind: &'static str,
    /// `SharedIndexInformer<K>` for the `TypeId` of `K`.
    informer: Box<dyn Any + Send + Sync>,
    synced: Arc<dyn HasSynced + Send + Sync>,
    /// Spawns the informer; kept because starting needs the concrete kind.
    start: Box<dyn Fn(CancellationToken) + Send + Sync>,
    started: bool,
}

struct Inner {
    /// What the factory was built with; fixed from then on.
    options: FactoryBuilder,
    informers: Mutex<HashMap<TypeId, Entry>>,
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
    default_resync: Duration,
    tweak: Option<TweakListOptions>,
    resync_for: HashMap<TypeId, Duration>,
    transform_for: HashMap<TypeId, Box<dyn Any + Send + Sync>>,
    keep_managed_fields: bool,
}

impl FactoryBuilder {
    /// Watch only this namespace (client-go `WithNamespace`); default: all.
    #[must_use]
    pub fn namespace(mut self, namespace: impl Into<String>) -> Self {
        self.namespace = Some(namespace.into());
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
            default_resync: Duration::ZERO,
            tweak: None,
            resync_for: HashMap::new(),
            transform_for: HashMap::new(),
            keep_managed_fields: false,
        }
    }

    /// The client the informers list and watch with.
    pub fn client(&self) -> &Client {
        &self.inner.options.client
    }

    /// The informer of kind `K`, created on first use (client-go `InformerFor`).
    /// Informers asked for after [`start`](Self::start) run once `start` is called again.
    pub fn informer_for<K: List + Watch + Resource>(&self) -> SharedIndexInformer<K> {
        let mut informers = self.inner.informers.lock();
        let entry = informers.entry(TypeId::of::<K>()).or_insert_with(|| {
            let informer = self.new_informer::<K>();
            let to_start = informer.clone();
            Entry {
                kind: K::KIND,
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
            // Entries are keyed by the TypeId of their own informer's kind.
            None => unreachable!("informer entry of another kind under {}", K::KIND),
        }
    }

    fn new_informer<K: List + Watch + Resource>(&self) -> SharedIndexInformer<K> {
        let options = &self.inner.options;
        let transform = options
            .transform_for
            .get(&TypeId::of::<K>())
            .and_then(|t| t.downcast_ref::<Arc<dyn Fn(&mut K) + Send + Sync>>())
            .cloned();
        let resources = ResourceClient::<K>::new(options.client.clone(), options.namespace.as_deref());
        let tweak = options.tweak.clone();
        let lw = FilteredListWatch::new(resources, move |opts: &mut ListOptions| {
            if let Some(tweak) = &tweak {
                tweak(opts);
            }
        });
        let resync = options.resync_for.get(&TypeId::of::<K>()).copied().unwrap_or(options.default_resync);
        // The builder decides from these whether managedFields are decoded.
        let mut builder = SharedIndexInformer::builder(lw).resync_period(resync);
        if options.keep_managed_fields {
            builder = builder.keep_managed_fields();
        }
        if let Some(transform) = transform {
            builder = builder.transform(move |obj| transform(obj));
        }
        match builder.build() {
            Ok(informer) => informer,
            // `build` fails only for extra indexers, which the factory never adds.
            Err(e) => unreachable!("informer without extra indexers failed to build: {e}"),
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
    /// down; reports per kind (client-go `WaitForCacheSync`).
    ///
    /// # Cancel safety
    /// Cancel safe: it only observes the informers.
    pub async fn wait_for_cache_sync(&self) -> BTreeMap<&'static str, bool> {
        let entries: Vec<(&'static str, Arc<dyn HasSynced + Send + Sync>)> =
            self.inner.informers.lock().values().filter(|e| e.started).map(|e| (e.kind, e.synced.clone())).collect();
        let refs: Vec<&dyn HasSynced> = entries.iter().map(|(_, s)| s.as_ref() as &dyn HasSynced).collect();
        wait_for_cache_sync(&self.inner.cancel, &refs).await;
        entries.iter().map(|(kind, s)| (*kind, s.has_synced())).collect()
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
