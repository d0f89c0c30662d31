//! One watch of a kind shared by every interested party, as client-go's
//! `SharedIndexInformer`.
//!
//! A [`SharedIndexInformer`] runs a [`Reflector`] into a queue (a
//! [`RealFifo`](super::RealFifo) that keeps every change in order, or, if
//! asked with [`QueueKind`], a [`DeltaFifo`](super::DeltaFifo)), applies
//! the popped changes to an indexed cache ([`Store`]) and tells every
//! registered [`ResourceEventHandler`] about them. Controllers read
//! the cache (through [`store`](SharedIndexInformer::store) or a
//! [`Lister`]) and react to notifications, usually by queueing keys.
//!
//! A relist (after the watch expired, say) reaches the cache in one write,
//! as with client-go 1.36's `AtomicFIFO`: readers see the old list or the
//! new one, never half of each, and its handlers, told first of the objects
//! gone (tombstones) and then of the listed ones, read the new list from
//! the cache. A resync likewise re-delivers the cache as it is once the
//! changes queued before it are applied.
//!
//! ```ignore
//! let informer = SharedIndexInformer::builder(
//!         FilteredListWatch::new(ResourceClient::<Pod>::all(client), |o| {
//!             o.label_selector = Some("app=web".into());
//!         }))
//!     .resync_period(Duration::from_secs(600))
//!     .build()?;
//! let reg = informer.add_event_handler(ResourceEventHandlerFuncs::new().on_add(|p, _| ...))?;
//! let cancel = CancellationToken::new();
//! informer.start(cancel.clone());
//! wait_for_cache_sync(&cancel, &[&informer, &reg]).await;
//! let pods = informer.lister().namespace("default").list(&LabelSelector::everything());
//! ```
//!
//! Objects are decoded once and shared as `Arc<K>` by the queue, the cache
//! and every handler. Before that, a transform may change them; the default
//! one drops `managedFields`, which are big and rarely read
//! ([`InformerBuilder::keep_managed_fields`] turns that off). The transform
//! is the queue's (client-go's `Transformer` option); the reflector runs it
//! as it decodes each object.
//!
//! To read your own writes, wait until the cache has caught up with the
//! resourceVersion a write returned:
//! [`wait_for_store_resource_version`](SharedIndexInformer::wait_for_store_resource_version).
//!
//! Whether `managedFields` are decoded at all is decided here, once, when
//! the informer is built (`Stored::decode_options`): with the default
//! transform its reflector asks the [`ListWatch`] to skip them
//! ([`DecodeOptions::WITHOUT_MANAGED_FIELDS`], through
//! [`ListWatch::list_with`]/[`ListWatch::watch_with`]), so a
//! [`ResourceClient`](crate::rest::ResourceClient) never reads them; kept,
//! or given a transform of your own (which may read them), they are
//! decoded. A [`ListWatch`] of your own that ignores the options still has
//! them dropped by the default transform. The
//! [`SharedInformerFactory`](super::SharedInformerFactory) only forwards
//! its `keep_managed_fields` and transforms to the builder.
//!
//! Cancellation is a [`CancellationToken`] (`tokio-util`): the same token
//! can stop many informers, and a child token stops one.
//!
//! An informer that cannot go on says so: a panic in code it runs (a
//! transform, an index or key function, the watch error handler) stops it
//! and marks it failed ([`SharedIndexInformer::failure`], [`OnPanic`]),
//! which the waits for sync report. How far behind it is can be read
//! while it runs: [`SharedIndexInformer::queued`] (changes not yet in the
//! cache), [`HandlerRegistration::pending`] (a handler's notifications not
//! yet handled) and the reflector's
//! [`next_attempt_in`](super::ReflectorCounters::next_attempt_in) while it
//! backs off. Its [`metrics`] report the same to Prometheus or elsewhere.

mod atomic;
mod failure;
mod handler;
pub mod metrics;
mod processor;
crate::cfg_feature!("metrics" => mod prometheus;);
mod queue;
mod registration;
#[cfg(test)]
mod tests;

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use parking_lot::Mutex;
use tokio::sync::Notify;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

pub use self::failure::OnPanic;
#[cfg(feature = "controller")]
pub(crate) use self::failure::panic_message;
pub use self::handler::{EnqueueKeys, FilteringResourceEventHandler, ResourceEventHandler, ResourceEventHandlerFuncs};
use self::metrics::{InformerId, InformerMetrics, InformerMetricsProvider};
crate::cfg_feature!("metrics" => pub use self::prometheus::PrometheusInformerMetrics;);
use self::processor::{MINIMUM_RESYNC_PERIOD, Notification, Processor};
use self::queue::InformerQueue;
pub use self::queue::QueueKind;
pub use self::registration::{HandlerOptions, HandlerRegistration, HasSynced, wait_for_cache_sync};
use super::delta_fifo::{Delta, DeltaObject, DeltaType, KnownObjects};
use super::list_watch::ListWatch;
use super::lister::Lister;
use super::reflector::{
    Reflector, ReflectorCounters, ReflectorOptions, ResourceVersionHandle, TransformFn, WatchErrorHandler,
};
use super::store::{self, Indexers, Key, Store, Writer};
use crate::codec::DecodeOptions;
use crate::object::{InvalidResourceVersion, Metadata as _, Object, check_resource_version, compare_resource_version};

/// What an informer does to objects before it stores them, which decides
/// how they are decoded.
enum Stored<K> {
    /// The default: without `managedFields`.
    WithoutManagedFields,
    /// As they were received.
    AsReceived,
    /// Through a transform of the caller's, which may read anything.
    Transformed(TransformFn<K>),
}

impl<K: Object> Stored<K> {
    /// The one place that decides whether an informer's objects are
    /// decoded with their `managedFields`: not when they would be dropped.
    fn decode_options(&self) -> DecodeOptions {
        match self {
            Stored::WithoutManagedFields => DecodeOptions::WITHOUT_MANAGED_FIELDS,
            Stored::AsReceived | Stored::Transformed(_) => DecodeOptions::KEEP_ALL,
        }
    }

    /// The transform run on each object: dropping `managedFields` too,
    /// for a [`ListWatch`] that decoded them all the same.
    fn transform(self) -> Option<TransformFn<K>> {
        match self {
            Stored::WithoutManagedFields => Some(Arc::new(|obj: &mut K| obj.metadata_mut().clear_managed_fields())),
            Stored::AsReceived => None,
            Stored::Transformed(transform) => Some(transform),
        }
    }
}

/// Errors of the informer's setup calls.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// `run` was called on an informer that already ran or is running.
    #[error("informer was already started")]
    AlreadyStarted,
    /// The informer has stopped; handlers added now would never be called.
    #[error("informer has stopped; handler not added")]
    Stopped,
    /// The setting can only change before the informer starts.
    #[error("informer has already started; {what} can no longer change")]
    Started {
        /// The setting, e.g. `"the watch error handler"`.
        what: &'static str,
    },
    /// Adding indexers failed: an index of that name already exists.
    #[error("adding indexers")]
    Indexers(#[source] store::Error),
    /// The resourceVersion to wait for cannot be ordered.
    #[error("waiting for the cache to reach a resourceVersion")]
    ResourceVersion(#[source] InvalidResourceVersion),
    /// Code the informer runs (a transform, an index or key function, the
    /// watch error handler) panicked; the informer stopped ([`OnPanic`]).
    #[error("the informer stopped: code it runs panicked: {message}")]
    Panicked {
        /// The panic's message.
        message: String,
    },
    /// The cache did not reach the resourceVersion in time.
    #[error("the cache did not reach resourceVersion {wanted} within {waited:?} (it is at {reached:?})")]
    NotCaughtUp {
        /// The resourceVersion waited for.
        wanted: String,
        /// Where the cache was when the wait ended ("" before its first list).
        reached: String,
        /// How long it waited.
        waited: Duration,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RunState {
    NotStarted,
    Running,
    Stopped,
}

/// The cache and the handlers: one lock, so a handler added late sees a
/// snapshot no concurrent change slips past (client-go `blockDeltas`).
struct Core<K> {
    writer: Writer<K>,
    processor: Processor<K>,
    resync_check_period: Duration,
    /// The newest resourceVersion applied to the cache (client-go
    /// `LastStoreSyncResourceVersion`), shared with readers.
    store_rv: Arc<Mutex<String>>,
}

impl<K: Object + Send + Sync + 'static> Core<K> {
    /// client-go `processDeltas` + the informer's `OnAdd/OnUpdate/OnDelete`,
    /// for one change. `key` is the queue's key of the change, shared with
    /// the cache.
    fn apply(&mut self, key: &Key, d: &Delta<K>, is_in_initial_list: bool) {
        match (d.delta_type, &d.object) {
            (DeltaType::Deleted, object) => {
                self.writer.delete_by_key(key);
                if let DeltaObject::Object(obj) = object {
                    self.advance_store_rv(obj.metadata().resource_version());
                }
                self.processor.distribute(Notification::Delete(object.clone()), false);
            }
            (_, DeltaObject::Object(obj)) => {
                let old = self.writer.upsert_keyed(Arc::clone(key), Arc::clone(obj));
                // Only once the cache holds the object: a reader that sees
                // the version reads the object (read-your-writes).
                self.advance_store_rv(obj.metadata().resource_version());
                match old {
                    Some(old) => {
                        // Same version: a resync or an unchanged relisted object,
                        // only for handlers that asked for resyncs.
                        let is_sync = old.metadata().resource_version() == obj.metadata().resource_version();
                        self.processor.distribute(Notification::Update(old, Arc::clone(obj)), is_sync);
                    }
                    None => {
                        self.processor.distribute(Notification::Add(Arc::clone(obj), is_in_initial_list), false);
                    }
                }
            }
            // Tombstones only come with deletions.
            (_, DeltaObject::DeletedFinalStateUnknown(_)) => {}
        }
    }

    /// Moves the cache's resourceVersion to `rv` if it is newer (or if
    /// either cannot be ordered: the newest applied then wins).
    fn advance_store_rv(&self, rv: Option<&str>) {
        let Some(rv) = rv.filter(|rv| !rv.is_empty()) else { return };
        let mut current = self.store_rv.lock();
        if !matches!(compare_resource_version(rv, &current), Ok(std::cmp::Ordering::Less | std::cmp::Ordering::Equal)) {
            current.clear();
            current.push_str(rv);
        }
    }
}

struct Inner<K> {
    lw: Arc<dyn ListWatch<K>>,
    store: Store<K>,
    queue: InformerQueue<K>,
    core: Mutex<Core<K>>,
    store_rv: Arc<Mutex<String>>,
    default_resync: Duration,
    /// How the reflector decodes objects, from what is stored ([`Stored`]).
    decode: DecodeOptions,
    error_handler: Mutex<Option<WatchErrorHandler>>,
    reflector_options: ReflectorOptions,
    last_rv: ResourceVersionHandle,
    counters: ReflectorCounters,
    synced: Arc<AtomicBool>,
    /// Woken after each relist so an empty initial list also counts as synced.
    replaced: Notify,
    state: Mutex<RunState>,
    on_panic: OnPanic,
    /// The message of the panic that stopped the informer.
    failure: Mutex<Option<String>>,
    metrics: Option<InformerMetrics>,
}

/// A shared, indexed cache of one kind with change notifications
/// (client-go `SharedIndexInformer`). Cloning gives another handle to the
/// same informer.
pub struct SharedIndexInformer<K> {
    inner: Arc<Inner<K>>,
}

impl<K> Clone for SharedIndexInformer<K> {
    fn clone(&self) -> Self {
        SharedIndexInformer { inner: Arc::clone(&self.inner) }
    }
}

impl<K> fmt::Debug for SharedIndexInformer<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedIndexInformer")
            .field("state", &*self.inner.state.lock())
            .field("synced", &self.inner.synced.load(Ordering::Relaxed))
            .field("store", &self.inner.store)
            .finish_non_exhaustive()
    }
}

/// How to build a [`SharedIndexInformer`]; from
/// [`SharedIndexInformer::builder`].
pub struct InformerBuilder<K> {
    lw: Arc<dyn ListWatch<K>>,
    resync: Duration,
    stored: Stored<K>,
    queue: QueueKind,
    indexers: Indexers<K>,
    reflector: ReflectorOptions,
    error_handler: Option<WatchErrorHandler>,
    on_panic: OnPanic,
    metrics: Option<InformerMetrics>,
}

impl<K: Object + Send + Sync + 'static> InformerBuilder<K> {
    /// Reports the informer's queue, processing time and cache version to
    /// `provider`, as `id` ([`metrics`]).
    #[must_use]
    pub fn metrics(mut self, provider: &Arc<dyn InformerMetricsProvider>, id: &InformerId) -> Self {
        self.metrics = Some(InformerMetrics::new(provider, id));
        self
    }

    /// What to do when a transform, an index or key function or the watch
    /// error handler panics (default [`OnPanic::Fail`]: stop this informer
    /// and report it failed).
    #[must_use]
    pub fn on_panic(mut self, on_panic: OnPanic) -> Self {
        self.on_panic = on_panic;
        self
    }

    /// The default resync period of handlers (client-go
    /// `defaultEventHandlerResyncPeriod`); zero (the default) never resyncs.
    #[must_use]
    pub fn resync_period(mut self, period: Duration) -> Self {
        self.resync = period;
        self
    }

    /// Runs `transform` on each object before it is stored, instead of the
    /// default (dropping `managedFields`); objects are then decoded with
    /// their `managedFields`, for `transform` to read.
    #[must_use]
    pub fn transform(mut self, transform: impl Fn(&mut K) + Send + Sync + 'static) -> Self {
        self.stored = Stored::Transformed(Arc::new(transform));
        self
    }

    /// Stores objects as received, `managedFields` included (decoded, then).
    #[must_use]
    pub fn keep_managed_fields(mut self) -> Self {
        self.stored = Stored::AsReceived;
        self
    }

    /// The queue between the reflector and the cache: a
    /// [`RealFifo`](super::RealFifo), every change in order (the default,
    /// as client-go's informers since 1.33), or a [`DeltaFifo`](super::DeltaFifo).
    #[must_use]
    pub fn queue(mut self, kind: QueueKind) -> Self {
        self.queue = kind;
        self
    }

    /// Whether to start with a watch-list stream (default: yes, falling
    /// back to list+watch when the server does not do it).
    #[must_use]
    pub fn watch_list(mut self, enabled: bool) -> Self {
        self.reflector.use_watch_list = enabled;
        self
    }

    /// Full control of the reflector (name, paging, backoff, watch timeout);
    /// the resync period is the informer's.
    #[must_use]
    pub fn reflector_options(mut self, options: ReflectorOptions) -> Self {
        self.reflector = options;
        self
    }

    /// Called with every list/watch failure instead of logging it.
    #[must_use]
    #[doc(alias = "SetWatchErrorHandler")]
    pub fn watch_error_handler(mut self, handler: impl Fn(&super::reflector::Error) + Send + Sync + 'static) -> Self {
        self.error_handler = Some(Arc::new(handler));
        self
    }

    /// Indexes besides [`NAMESPACE_INDEX`](super::NAMESPACE_INDEX) (or add
    /// them later with [`SharedIndexInformer::add_indexers`]).
    #[must_use]
    pub fn indexers(mut self, indexers: Indexers<K>) -> Self {
        self.indexers = indexers;
        self
    }

    /// The informer, not started. Fails only if an extra indexer is named
    /// [`NAMESPACE_INDEX`](super::NAMESPACE_INDEX); without
    /// [`indexers`](Self::indexers) it cannot fail.
    pub fn build(mut self) -> Result<SharedIndexInformer<K>, Error> {
        let mut writer = Writer::new();
        let indexers = std::mem::take(&mut self.indexers);
        if !indexers.is_empty() {
            writer.add_indexers(indexers).map_err(Error::Indexers)?;
        }
        Ok(self.assemble(writer))
    }

    fn assemble(self, writer: Writer<K>) -> SharedIndexInformer<K> {
        let store = writer.store();
        let known: Arc<dyn KnownObjects<K>> = Arc::new(store.clone());
        let decode = self.stored.decode_options();
        let queue = InformerQueue::new(self.queue, known, self.stored.transform());
        let synced = Arc::new(AtomicBool::new(false));
        let store_rv = Arc::new(Mutex::new(String::new()));
        let core = Core {
            writer,
            processor: Processor::new(),
            resync_check_period: self.resync,
            store_rv: Arc::clone(&store_rv),
        };
        SharedIndexInformer {
            inner: Arc::new(Inner {
                lw: self.lw,
                store,
                queue,
                core: Mutex::new(core),
                store_rv,
                default_resync: self.resync,
                decode,
                error_handler: Mutex::new(self.error_handler),
                reflector_options: self.reflector,
                last_rv: ResourceVersionHandle::default(),
                counters: ReflectorCounters::default(),
                synced,
                replaced: Notify::new(),
                state: Mutex::new(RunState::NotStarted),
                on_panic: self.on_panic,
                failure: Mutex::new(None),
                metrics: self.metrics,
            }),
        }
    }
}

impl<K: Object + Send + Sync + 'static> SharedIndexInformer<K> {
    /// Starts building an informer over `lw`: a [`ResourceClient<K>`](crate::rest::ResourceClient),
    /// a [`FilteredListWatch`](super::FilteredListWatch) or anything else.
    #[must_use]
    pub fn builder(lw: impl ListWatch<K> + 'static) -> InformerBuilder<K> {
        InformerBuilder {
            lw: Arc::new(lw),
            resync: Duration::ZERO,
            stored: Stored::WithoutManagedFields,
            queue: QueueKind::default(),
            indexers: Indexers::new(),
            reflector: ReflectorOptions {
                name: crate::object::short_type_name::<K>().to_owned(),
                ..ReflectorOptions::default()
            },
            error_handler: None,
            on_panic: OnPanic::default(),
            metrics: None,
        }
    }

    /// An informer with the default settings and handler resync period
    /// `resync` (zero: none), as client-go's `NewSharedIndexInformer`.
    pub fn new(lw: impl ListWatch<K> + 'static, resync: Duration) -> Self {
        // Without extra indexers nothing can fail.
        Self::builder(lw).resync_period(resync).assemble(Writer::new())
    }

    /// A read-only handle on the cache.
    pub fn store(&self) -> Store<K> {
        self.inner.store.clone()
    }

    /// A [`Lister`] over the cache.
    pub fn lister(&self) -> Lister<K> {
        Lister::new(self.store())
    }

    /// Adds indexes; works before and after start.
    pub fn add_indexers(&self, indexers: Indexers<K>) -> Result<(), Error> {
        self.inner.core.lock().writer.add_indexers(indexers).map_err(Error::Indexers)
    }

    /// True once the first list was fully applied to the cache and
    /// distributed to the handlers (client-go `HasSynced`).
    pub fn has_synced(&self) -> bool {
        self.inner.synced.load(Ordering::Acquire)
    }

    /// The resourceVersion the reflector last synced to, from a list or a
    /// watch event ("" before the first list), as client-go's
    /// `LastSyncResourceVersion`: what has been received, which the cache
    /// may not hold yet ([`last_store_sync_resource_version`](Self::last_store_sync_resource_version)).
    pub fn last_sync_resource_version(&self) -> String {
        self.inner.last_rv.get()
    }

    /// The newest resourceVersion the cache holds: of the last object
    /// applied, or of the last list once all its objects are applied ("" before
    /// any), as client-go's `LastStoreSyncResourceVersion`. Once it is at
    /// least the resourceVersion a write of yours returned, the cache (and
    /// every handler's queue) has that write.
    #[doc(alias = "LastStoreSyncResourceVersion")]
    pub fn last_store_sync_resource_version(&self) -> String {
        self.inner.store_rv.lock().clone()
    }

    /// Waits until the cache holds `resource_version` or newer (a write's
    /// answer, say: read-your-writes), for at most `timeout`; polls every
    /// 10 ms. Fails at once if `resource_version` is not a positive decimal
    /// integer ([`compare_resource_version`](crate::object::compare_resource_version())),
    /// and with [`Error::NotCaughtUp`] after `timeout`.
    ///
    /// # Cancel safety
    /// Cancel safe: it only reads.
    pub async fn wait_for_store_resource_version(
        &self,
        resource_version: &str,
        timeout: Duration,
    ) -> Result<(), Error> {
        // A malformed version could never be reached.
        check_resource_version(resource_version).map_err(Error::ResourceVersion)?;
        let start = Instant::now();
        let mut poll = tokio::time::interval(Duration::from_millis(10));
        loop {
            let reached = self.last_store_sync_resource_version();
            // An empty cache version ("" before the first list) is not there yet.
            if compare_resource_version(&reached, resource_version).is_ok_and(|o| o != std::cmp::Ordering::Less) {
                return Ok(());
            }
            if start.elapsed() >= timeout {
                return Err(Error::NotCaughtUp { wanted: resource_version.to_owned(), reached, waited: timeout });
            }
            poll.tick().await;
        }
    }

    /// How many lists and watches the informer's reflector started: one
    /// full load and then only watches while nothing forces a relist.
    pub fn reflector_counters(&self) -> ReflectorCounters {
        self.inner.counters.clone()
    }

    /// Whether [`run`](Self::run) has returned: the informer stopped and will
    /// not run again.
    pub fn is_stopped(&self) -> bool {
        *self.inner.state.lock() == RunState::Stopped
    }

    /// Why the informer stopped, if code it runs panicked ([`OnPanic`]):
    /// the panic's message. Its cache no longer follows the server.
    pub fn failure(&self) -> Option<String> {
        self.inner.failure.lock().clone()
    }

    /// Changes received and not yet applied to the cache: the backlog of
    /// its queue, where a relist or a resync counts one (with the default
    /// [`QueueKind::RealFifo`]). Each handler's own backlog is
    /// [`HandlerRegistration::pending`].
    pub fn queued(&self) -> usize {
        self.inner.queue.len()
    }

    /// Replaces the handler of list/watch failures; only before start.
    #[doc(alias = "SetWatchErrorHandler")]
    pub fn set_watch_error_handler(
        &self,
        handler: impl Fn(&super::reflector::Error) + Send + Sync + 'static,
    ) -> Result<(), Error> {
        if *self.inner.state.lock() != RunState::NotStarted {
            return Err(Error::Started { what: "the watch error handler" });
        }
        *self.inner.error_handler.lock() = Some(Arc::new(handler));
        Ok(())
    }

    /// Adds a handler with the informer's default resync period.
    pub fn add_event_handler(&self, handler: impl ResourceEventHandler<K>) -> Result<HandlerRegistration, Error> {
        self.add_event_handler_with_resync_period(handler, self.inner.default_resync)
    }

    /// Adds a handler that also gets every object as an update every
    /// `resync` (zero: never; at least 1 s). Before start, a shorter period
    /// makes the informer check more often; after start, it is raised to the
    /// informer's check period (client-go's rules). A handler added after
    /// start first receives the cached objects as adds.
    pub fn add_event_handler_with_resync_period(
        &self,
        handler: impl ResourceEventHandler<K>,
        resync: Duration,
    ) -> Result<HandlerRegistration, Error> {
        self.add_event_handler_with_options(handler, HandlerOptions::new().resync_period(resync))
    }

    /// Adds a handler with `options` (client-go
    /// `AddEventHandlerWithOptions`): its resync period (the informer's
    /// default unless set; the rules of
    /// [`add_event_handler_with_resync_period`](Self::add_event_handler_with_resync_period))
    /// and a span its calls run in.
    pub fn add_event_handler_with_options(
        &self,
        handler: impl ResourceEventHandler<K>,
        options: HandlerOptions,
    ) -> Result<HandlerRegistration, Error> {
        let resync = options.resync_period.unwrap_or(self.inner.default_resync);
        let state = self.inner.state.lock();
        if *state == RunState::Stopped {
            return Err(Error::Stopped);
        }
        let started = *state == RunState::Running;
        let mut core = self.inner.core.lock();
        let mut resync = resync;
        if !resync.is_zero() {
            resync = resync.max(MINIMUM_RESYNC_PERIOD);
            if resync < core.resync_check_period {
                if started {
                    resync = core.resync_check_period;
                } else {
                    core.resync_check_period = resync;
                    core.processor.resync_check_period_changed(resync);
                }
            }
        }
        let effective = if resync.is_zero() || core.resync_check_period.is_zero() {
            Duration::ZERO
        } else {
            resync.max(core.resync_check_period)
        };
        let span = options.span.unwrap_or_else(tracing::Span::none);
        let (id, sync) =
            core.processor.add_listener(Arc::new(handler), span, resync, effective, Arc::clone(&self.inner.synced));
        if started {
            for obj in core.writer.list() {
                core.processor.send_to(id, Notification::Add(obj, true));
            }
        }
        Ok(HandlerRegistration { id, sync })
    }

    /// Removes a handler; its queued notifications are still delivered.
    /// False if it was not registered.
    pub fn remove_event_handler(&self, registration: &HandlerRegistration) -> bool {
        self.inner.core.lock().processor.remove_listener(registration.id)
    }

    /// Number of registered handlers.
    pub fn handler_count(&self) -> usize {
        self.inner.core.lock().processor.len()
    }

    /// Spawns [`run`](Self::run) on the current tokio runtime. The informer
    /// runs until `cancel` fires, even if every handle to it is dropped.
    pub fn start(&self, cancel: CancellationToken) -> JoinHandle<Result<(), Error>> {
        let this = self.clone();
        tokio::spawn(async move { this.run(cancel).await })
    }

    /// Lists, watches, fills the cache and notifies handlers until `cancel`
    /// fires; an informer runs once.
    ///
    /// # Cancel safety
    /// Dropping the future stops the informer like cancelling does, except
    /// that handler tasks only stop once `cancel` fires.
    pub async fn run(&self, cancel: CancellationToken) -> Result<(), Error> {
        {
            let mut state = self.inner.state.lock();
            if *state != RunState::NotStarted {
                return Err(Error::AlreadyStarted);
            }
            *state = RunState::Running;
        }
        let reflector = self.reflector();
        self.inner.core.lock().processor.start(cancel.child_token());
        let work = async {
            tokio::join!(reflector.run(cancel.clone()), self.process_loop(&cancel));
        };
        let outcome = failure::catch(&self.inner.reflector_options.name, self.inner.on_panic, work).await;
        if let Err(message) = &outcome {
            *self.inner.failure.lock() = Some(message.clone());
        }
        *self.inner.state.lock() = RunState::Stopped;
        self.inner.core.lock().processor.stop();
        self.inner.queue.close();
        outcome.map_err(|message| Error::Panicked { message })
    }

    fn reflector(&self) -> Reflector<K, InformerQueue<K>> {
        let inner = &self.inner;
        let mut options = inner.reflector_options.clone();
        options.resync_period = inner.core.lock().resync_check_period;
        let weak = Arc::downgrade(inner);
        let should_resync = Arc::new(move || match weak.upgrade() {
            Some(inner) => inner.core.lock().processor.should_resync(Instant::now()),
            None => false,
        });
        let weak = Arc::downgrade(inner);
        let after_new_version = Arc::new(move || {
            if let Some(inner) = weak.upgrade() {
                inner.replaced.notify_one();
            }
        });
        // The queue's transform is the reflector's (ReflectorStore::transform).
        let mut reflector = Reflector::from_arc(Arc::clone(&inner.lw), inner.queue.clone(), options)
            .should_resync(should_resync)
            .after_new_version(after_new_version)
            .resource_version_handle_from(inner.last_rv.clone())
            .counters_from(inner.counters.clone())
            .decode_options(inner.decode);
        if let Some(h) = inner.error_handler.lock().clone() {
            reflector = reflector.watch_error_handler(h);
        }
        reflector
    }

    /// client-go `controller.processLoop`.
    async fn process_loop(&self, cancel: &CancellationToken) {
        let inner = &*self.inner;
        let work = async {
            // Built once: registering a waiter per pop would cost more than
            // the pop.
            let replaced = inner.replaced.notified();
            tokio::pin!(replaced);
            loop {
                let latency = inner.metrics.as_ref().map(|m| &*m.processing_latency);
                let popped = tokio::select! {
                    biased;
                    r = inner.queue.pop_into(&inner.core, latency) => Some(r),
                    () = &mut replaced => {
                        replaced.set(inner.replaced.notified());
                        None
                    }
                };
                if let Some(Err(queue::Closed)) = popped {
                    return;
                }
                // A list whose objects are all applied now: the cache is at
                // its resourceVersion (an empty list has nothing to pop).
                if let Some(rv) = inner.queue.take_reached_list() {
                    inner.core.lock().advance_store_rv(Some(&rv));
                }
                // After a pop only: a wake for a relist changes neither.
                if let (Some(metrics), Some(Ok(()))) = (&inner.metrics, &popped) {
                    metrics.queued_items.set(inner.queue.len() as f64);
                    metrics.resource_version(&inner.store_rv.lock());
                }
                // Checked here, between pops, so "synced" never shows while
                // the last initial item is still being applied.
                if !inner.synced.load(Ordering::Relaxed) && inner.queue.has_synced() {
                    inner.synced.store(true, Ordering::Release);
                }
            }
        };
        // The token is looked at when this task wakes, not on every pop of a
        // backlog (checking it takes a lock).
        tokio::select! {
            () = cancel.cancelled() => {}
            () = work => {}
        }
    }
}

impl<K: Object + Send + Sync + 'static> HasSynced for SharedIndexInformer<K> {
    fn has_synced(&self) -> bool {
        SharedIndexInformer::has_synced(self)
    }
    fn failure(&self) -> Option<String> {
        SharedIndexInformer::failure(self)
    }
}

impl<T: HasSynced + ?Sized> HasSynced for &T {
    fn has_synced(&self) -> bool {
        (**self).has_synced()
    }
    fn failure(&self) -> Option<String> {
        (**self).failure()
    }
}
