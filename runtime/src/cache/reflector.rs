//! Keeps a queue ([`ReflectorStore`]: a [`RealFifo`](super::RealFifo) or
//! a [`DeltaFifo`]) in step
//! with the apiserver, as client-go's `Reflector`.
//!
//! A reflector lists (or, with watch-list, streams) the current objects,
//! `replace`s them into the queue, then watches from the list's
//! resourceVersion and hands the queue every change. It recovers on its own: an
//! ended watch is resumed from the last resourceVersion seen, a watch whose
//! resourceVersion was compacted (410) triggers a relist, and failures are
//! retried with an exponential [`BackoffConfig`]. A watch whose connection
//! breaks ([`rest::Error::is_probable_eof`]: a reset, an EOF inside an event,
//! a GOAWAY, a timeout) ended normally as far as its events go and is
//! resumed too; only a 410 or a bad event relists. [`ReflectorCounters`]
//! tell how many lists and watches it took.
//!
//! Use a [`SharedIndexInformer`](super::SharedIndexInformer) unless you are
//! building your own informer: it wires a reflector, a queue and a store
//! together. Use a reflector directly to fill a RealFifo or DeltaFifo you
//! pop yourself, or a queue of your own that implements [`ReflectorStore`].
//!
//! # Protocol (as client-go 1.37)
//! - **Watch-list** (default, [`ReflectorOptions::use_watch_list`]): one
//!   watch with `sendInitialEvents=true`, `resourceVersionMatch=NotOlderThan`
//!   and bookmarks; the objects streamed before the bookmark annotated
//!   `k8s.io/initial-events-end: "true"` are replaced into the queue at
//!   once and the same stream goes on as the watch. Until that bookmark:
//!   a refused connection or a 429 is retried as a watch-list after a
//!   backoff; an expired or too large resourceVersion is retried at once
//!   as a consistent read (`""`); a stream that ends (or whose connection
//!   breaks) is streamed again at once, unless it ended within a second
//!   with nothing, a "very short watch"; that and any other failure (a
//!   rejection, an error event, a bad event) fall back to list+watch for
//!   this round only: the next round tries the watch-list again.
//! - **List**: pages of 500 (`limit` + `continue`); a `continue` token that
//!   expired (410 `Expired`) restarts as one full list without `limit`. The
//!   first list asks for resourceVersion `"0"` (any version, from the
//!   apiserver's cache), relists ask for the last synced version (and no
//!   `limit`, so the cache can serve them), and `""` (a consistent read)
//!   once the server said that version is expired or too large.
//! - **Watch**: from the last synced version with `allowWatchBookmarks` and
//!   a random `timeoutSeconds` between 5 and 10 minutes so many clients do
//!   not reconnect in step. Bookmarks advance the version and go to the
//!   queue in order with the events ([`ReflectorStore::bookmark`]), so a
//!   cache reaches their version once the events before them are applied
//!   (client-go 1.36). A watch
//!   that ends, or whose connection breaks, is started again at once; one
//!   refused (connection refused, 429, or another transport failure)
//!   after a backoff.
//! - **Backoff**: [`BackoffConfig`] between failed attempts, back to its
//!   first delay once an attempt succeeds (a list, the end of the initial
//!   events, a watch event). [`ReflectorCounters::next_attempt_in`] says
//!   how long the reflector is waiting.
//!
//! Watches do not wait for the client's rate limiter (client-go's do not
//! either): a cut connection under many informers is watched again at once.
//!
//! Every list and watch goes through [`ListWatch::list_with`] and
//! [`ListWatch::watch_with`] with the reflector's
//! [`decode_options`](Reflector::decode_options) (by default, keep
//! everything; an informer sets them).
//!
//! The reflector is an explicit state machine ([`Phase`]): each step does
//! one call or handles one event, which is what the unit tests drive.

mod list;
#[cfg(test)]
mod store_tests;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures_util::StreamExt as _;
use parking_lot::{Mutex, RwLock};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::backoff::Backoff;
pub use crate::backoff::BackoffConfig;
use self::list::{Listed, paged_list, prepare};
use super::delta_fifo::DeltaFifo;
use super::list_watch::ListWatch;
use super::reflector_store::ReflectorStore;
use super::store::Key;
use crate::ErrorChain;
use crate::codec::DecodeOptions;
use crate::object::{Metadata as _, Object};
use crate::rest::{self, ListOptions, VersionMatch, WatchEvent, WatchStream};

pub use super::store::TransformFn;

/// Called with every list or watch failure (client-go `WatchErrorHandler`).
pub type WatchErrorHandler = Arc<dyn Fn(&Error) + Send + Sync>;

/// Asked before each periodic resync whether to do it (client-go
/// `ShouldResyncFunc`).
pub type ShouldResync = Arc<dyn Fn() -> bool + Send + Sync>;

/// Page size of lists, as client-go's pager.
pub const DEFAULT_PAGE_SIZE: u32 = 500;

/// What went wrong in one round of listing or watching. The reflector
/// retries on its own; these only reach the [`WatchErrorHandler`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Listing failed; the reflector retries after a backoff.
    #[error("listing failed")]
    List(#[source] rest::Error),
    /// The apiserver refused to start a watch (or could not be reached); the
    /// reflector retries the watch or relists after a backoff.
    #[error("starting a watch failed")]
    WatchStart(#[source] rest::Error),
    /// An open watch failed: an error event (410 Gone once the resourceVersion
    /// was compacted) or an event that did not decode; the reflector relists
    /// after a backoff.
    #[error("watch failed")]
    Watch(#[source] rest::Error),
    /// The watch ended within a second without delivering any event
    /// (client-go's "very short watch"), which hints at a server closing
    /// watches at once; the reflector relists after a backoff. Holds how long
    /// the watch lasted.
    #[error("very short watch: the watch ended after {0:?} without any event")]
    VeryShortWatch(Duration),
    /// The watch-list request or its stream failed: retried as a watch-list
    /// after a backoff if the server was overloaded (429) or refused the
    /// connection, else the reflector lists right away instead.
    #[error("watch-list request failed")]
    WatchList(#[source] rest::Error),
}

impl Error {
    /// The apiserver's error, if this is one.
    pub fn rest_error(&self) -> Option<&rest::Error> {
        match self {
            Error::List(e) | Error::WatchStart(e) | Error::Watch(e) | Error::WatchList(e) => Some(e),
            Error::VeryShortWatch(_) => None,
        }
    }
}

/// How a reflector behaves; the defaults are client-go's.
#[derive(Debug, Clone)]
pub struct ReflectorOptions {
    /// Shown in logs.
    pub name: String,
    /// Page size of lists. `None`: 500, except for relists at a known
    /// resourceVersion, which go unpaged so the apiserver's cache serves them
    /// (client-go's rule). `Some(0)` never pages.
    pub page_size: Option<u32>,
    /// Start with a watch-list stream instead of a list (client-go's
    /// `WatchListClient`, on by default since 1.35); falls back to
    /// list+watch on its own.
    pub use_watch_list: bool,
    /// Every this often, ask the queue to [`resync`](ReflectorStore::resync)
    /// (if the [`ShouldResync`] hook agrees): a [`DeltaFifo`] queues a
    /// `Sync` delta for every stored object. Zero disables resyncs.
    pub resync_period: Duration,
    /// Watches ask the server to end them after between this and twice
    /// this (5 minutes in client-go).
    pub min_watch_timeout: Duration,
    /// Delays between retries after failures.
    pub backoff: BackoffConfig,
}

impl Default for ReflectorOptions {
    fn default() -> Self {
        ReflectorOptions {
            name: String::from("reflector"),
            page_size: None,
            use_watch_list: true,
            resync_period: Duration::ZERO,
            min_watch_timeout: Duration::from_secs(300),
            backoff: BackoffConfig::default(),
        }
    }
}

/// Where a reflector's state machine is; see the module docs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// About to start a round: a watch-list, or a list.
    Start,
    /// About to list (watch-list is off or just failed).
    List,
    /// About to open a watch at the last synced resourceVersion.
    Watch,
    /// Receiving the initial events of a watch-list.
    InitialEvents,
    /// Receiving watch events.
    Watching,
    /// Waiting before retrying.
    Backoff,
}

/// Where to go after a backoff wait.
#[derive(Debug, Clone, Copy)]
enum Resume {
    Start,
    Watch,
}

enum State<K> {
    Start,
    List,
    Watch,
    InitialEvents { stream: WatchStream<K>, items: HashMap<Key, Arc<K>>, rv: String, started: Instant, events: u64 },
    Watching { stream: WatchStream<K>, started: Instant, events: u64 },
    Backoff { until: Instant, then: Resume },
}

/// The last resourceVersion a reflector synced to, readable while it runs.
#[derive(Debug, Clone, Default)]
pub struct ResourceVersionHandle(Arc<RwLock<String>>);

impl ResourceVersionHandle {
    /// The resourceVersion last synced to; empty before the first list.
    pub fn get(&self) -> String {
        self.0.read().clone()
    }
    fn set(&self, rv: &str) {
        if !rv.is_empty() {
            rv.clone_into(&mut self.0.write());
        }
    }
}

/// How many lists and watches a reflector started, and its last failure,
/// readable while it runs.
///
/// A healthy reflector loads the whole state once (one list or one
/// watch-list) and then only re-watches: after the server ends a watch and
/// after a broken connection. More loads mean relists (an expired
/// resourceVersion, a bad event, failures), which cost the apiserver a full
/// read each; tests and metrics read these to tell the two apart. Each
/// counts requests started, successful or not.
#[derive(Debug, Clone, Default)]
pub struct ReflectorCounters(Arc<Counts>);

#[derive(Debug, Default)]
struct Counts {
    lists: AtomicU64,
    watch_lists: AtomicU64,
    watches: AtomicU64,
    last_error: Mutex<Option<String>>,
    /// When the reflector tries again, while it waits after a failure.
    next_attempt: Mutex<Option<Instant>>,
}

impl ReflectorCounters {
    /// Lists started (the pages of one list count once).
    pub fn lists(&self) -> u64 {
        self.0.lists.load(Ordering::Relaxed)
    }

    /// Watch-list streams started (watches with `sendInitialEvents`).
    pub fn watch_lists(&self) -> u64 {
        self.0.watch_lists.load(Ordering::Relaxed)
    }

    /// Plain watches started, from the last synced resourceVersion.
    pub fn watches(&self) -> u64 {
        self.0.watches.load(Ordering::Relaxed)
    }

    /// Loads of the whole state: lists plus watch-lists.
    pub fn full_loads(&self) -> u64 {
        self.lists() + self.watch_lists()
    }

    /// The last list or watch failure, with its causes
    /// ([`ErrorChain`]); an expired resourceVersion (410), which the
    /// reflector handles by relisting, is not one. Kept after the reflector
    /// recovers: read it when the cache has not synced, to say why.
    pub fn last_error(&self) -> Option<String> {
        self.0.last_error.lock().clone()
    }

    /// How long until the reflector tries again, while it waits after a
    /// failure ([`BackoffConfig`]); `None` while it lists or watches.
    pub fn next_attempt_in(&self) -> Option<Duration> {
        let at = (*self.0.next_attempt.lock())?;
        Some(at.saturating_duration_since(Instant::now()))
    }

    fn set_next_attempt(&self, at: Option<Instant>) {
        *self.0.next_attempt.lock() = at;
    }

    fn set_last_error(&self, err: &Error) {
        *self.0.last_error.lock() = Some(ErrorChain(err).to_string());
    }

    fn count(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }
}

/// Lists and watches one kind into a queue `Q`, by default a [`DeltaFifo`]
/// (client-go `Reflector`).
///
/// The reflector is generic over its queue rather than holding a
/// `dyn ReflectorStore`: every watch event is one call on it, made
/// directly. `Arc<dyn ReflectorStore<K>>` is a queue too, where the type
/// must not depend on it.
pub struct Reflector<K, Q = DeltaFifo<K>> {
    lw: Arc<dyn ListWatch<K>>,
    queue: Q,
    options: ReflectorOptions,
    /// Passed to every list and watch.
    decode: DecodeOptions,
    transform: Option<TransformFn<K>>,
    error_handler: Option<WatchErrorHandler>,
    should_resync: Option<ShouldResync>,
    /// Told after each `replace` (the informer checks its sync state then).
    after_new_version: Option<Arc<dyn Fn() + Send + Sync>>,
    last_sync_rv: ResourceVersionHandle,
    counters: ReflectorCounters,
    /// The server said the last synced version is gone or too large:
    /// relist at "" (client-go `isLastSyncResourceVersionUnavailable`).
    rv_unavailable: bool,
    /// A list at "0" came back in pages: the server has no watch cache for
    /// this resource, keep paging (client-go `paginatedResult`).
    paginated_result: bool,
    backoff: Backoff,
    state: State<K>,
}

impl<K, Q> fmt::Debug for Reflector<K, Q> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reflector")
            .field("name", &self.options.name)
            .field("phase", &self.phase())
            .field("last_sync_resource_version", &self.last_sync_rv.get())
            .finish_non_exhaustive()
    }
}

impl<K, Q> Reflector<K, Q> {
    /// Where the state machine is.
    pub fn phase(&self) -> Phase {
        match &self.state {
            State::Start => Phase::Start,
            State::List => Phase::List,
            State::Watch => Phase::Watch,
            State::InitialEvents { .. } => Phase::InitialEvents,
            State::Watching { .. } => Phase::Watching,
            State::Backoff { .. } => Phase::Backoff,
        }
    }
}

impl<K: Object + Send + Sync + 'static, Q: ReflectorStore<K> + Clone + 'static> Reflector<K, Q> {
    /// A reflector filling `queue` (a [`DeltaFifo`], say) from `lw`;
    /// nothing happens until it [`run`](Self::run)s.
    pub fn new(lw: impl ListWatch<K> + 'static, queue: Q, options: ReflectorOptions) -> Self {
        Self::from_arc(Arc::new(lw), queue, options)
    }

    /// Same as [`new`](Self::new), with a list/watch already shared.
    pub fn from_arc(lw: Arc<dyn ListWatch<K>>, queue: Q, options: ReflectorOptions) -> Self {
        Reflector {
            lw,
            transform: queue.transform(),
            queue,
            backoff: Backoff::new(options.backoff),
            options,
            decode: DecodeOptions::default(),
            error_handler: None,
            should_resync: None,
            after_new_version: None,
            last_sync_rv: ResourceVersionHandle::default(),
            counters: ReflectorCounters::default(),
            rv_unavailable: false,
            paginated_result: false,
            state: State::Start,
        }
    }

    /// Lists and watches ask the [`ListWatch`] to decode objects with
    /// `decode` (e.g. without `managedFields`, which a transform would drop
    /// anyway); the default keeps everything.
    #[must_use]
    pub fn decode_options(mut self, decode: DecodeOptions) -> Self {
        self.decode = decode;
        self
    }

    /// Runs `transform` on every object before it is queued, instead of the
    /// queue's own ([`ReflectorStore::transform`], the default).
    #[must_use]
    pub fn transform(mut self, transform: TransformFn<K>) -> Self {
        self.transform = Some(transform);
        self
    }

    /// Replaces the default handler (a log line) of list/watch failures.
    #[must_use]
    #[doc(alias = "SetWatchErrorHandler")]
    pub fn watch_error_handler(mut self, handler: WatchErrorHandler) -> Self {
        self.error_handler = Some(handler);
        self
    }

    /// Asked before each periodic resync.
    #[must_use]
    pub fn should_resync(mut self, should_resync: ShouldResync) -> Self {
        self.should_resync = Some(should_resync);
        self
    }

    /// Shares `handle` as the reflector's resourceVersion (the informer
    /// creates it before the reflector exists).
    #[must_use]
    pub(crate) fn resource_version_handle_from(mut self, handle: ResourceVersionHandle) -> Self {
        self.last_sync_rv = handle;
        self
    }

    /// Shares `counters` as the reflector's (the informer creates them
    /// before the reflector exists).
    #[must_use]
    pub(crate) fn counters_from(mut self, counters: ReflectorCounters) -> Self {
        self.counters = counters;
        self
    }

    /// Called after the queue was given a version to reach: a full list's
    /// or a bookmark's (the informer wakes its loop to see it reached).
    #[must_use]
    pub(crate) fn after_new_version(mut self, hook: Arc<dyn Fn() + Send + Sync>) -> Self {
        self.after_new_version = Some(hook);
        self
    }

    /// The resourceVersion of the last list or event applied ("" before the
    /// first list).
    pub fn last_sync_resource_version(&self) -> String {
        self.last_sync_rv.get()
    }

    /// A handle that keeps reading the resourceVersion after [`run`](Self::run)
    /// took the reflector.
    pub fn resource_version_handle(&self) -> ResourceVersionHandle {
        self.last_sync_rv.clone()
    }

    /// The counts of lists and watches started, readable after
    /// [`run`](Self::run) took the reflector.
    pub fn counters(&self) -> ReflectorCounters {
        self.counters.clone()
    }

    /// Lists, watches and resyncs until `cancel` fires.
    ///
    /// # Cancel safety
    /// Stops at the next await; the queue holds whatever was applied.
    pub async fn run(mut self, cancel: CancellationToken) {
        let resync = resync_loop(self.queue.clone(), self.options.resync_period, self.should_resync.clone());
        let main = async {
            loop {
                self.step().await;
            }
        };
        tokio::select! {
            biased;
            () = cancel.cancelled() => {}
            () = main => {}
            () = resync => {}
        }
    }

    /// Makes one transition: one call, one event or one wait.
    ///
    /// # Cancel safety
    /// Dropping the future mid-step loses the current watch or list; the
    /// next step starts a new round (as after a failure, without backoff).
    pub async fn step(&mut self) {
        let state = std::mem::replace(&mut self.state, State::Start);
        self.state = match state {
            State::Start => self.start_round().await,
            State::List => self.list().await,
            State::Watch => self.start_watch().await,
            State::InitialEvents { stream, items, rv, started, events } => {
                self.initial_event(stream, items, rv, started, events).await
            }
            State::Watching { stream, started, events } => self.watch_event(stream, started, events).await,
            State::Backoff { until, then } => {
                tokio::time::sleep_until(until).await;
                self.counters.set_next_attempt(None);
                match then {
                    Resume::Start => State::Start,
                    Resume::Watch => State::Watch,
                }
            }
        };
    }

    fn report(&self, err: Error) {
        let expired = err.rest_error().is_some_and(rest::Error::is_expired);
        if !expired {
            self.counters.set_last_error(&err);
        }
        match &self.error_handler {
            Some(handler) => handler(&err),
            None if expired => {
                tracing::debug!(reflector = %self.options.name, error = %ErrorChain(&err), "watch closed");
            }
            None => {
                tracing::warn!(reflector = %self.options.name, error = %ErrorChain(&err), "list/watch failed");
            }
        }
    }

    fn backoff(&mut self, then: Resume) -> State<K> {
        let now = Instant::now();
        let until = now + self.backoff.next_delay(now);
        self.counters.set_next_attempt(Some(until));
        State::Backoff { until, then }
    }

    fn prepare(&self, obj: K) -> Arc<K> {
        prepare(self.transform.as_ref(), obj)
    }

    fn watch_timeout(&self) -> u32 {
        let secs = self.options.min_watch_timeout.as_secs_f64() * (1.0 + rand::random::<f64>());
        // `as` saturates; a zero minimum would ask for no timeout at all.
        (secs as u32).max(1)
    }

    /// client-go `relistResourceVersion`.
    fn relist_rv(&self) -> String {
        if self.rv_unavailable {
            String::new()
        } else {
            let rv = self.last_sync_rv.get();
            if rv.is_empty() { String::from("0") } else { rv }
        }
    }

    /// Bookkeeping after the queue took a full list at `rv`.
    fn synced(&mut self, rv: &str) {
        self.last_sync_rv.set(rv);
        self.rv_unavailable = false;
        self.backoff.reset();
        if let Some(hook) = &self.after_new_version {
            hook();
        }
    }

    async fn start_round(&mut self) -> State<K> {
        if !self.options.use_watch_list {
            return State::List;
        }
        let rv = if self.rv_unavailable { String::new() } else { self.last_sync_rv.get() };
        let opts = ListOptions {
            resource_version: Some(rv),
            resource_version_match: Some(VersionMatch::NotOlderThan),
            send_initial_events: Some(true),
            allow_watch_bookmarks: true,
            timeout_seconds: Some(self.watch_timeout()),
            ..ListOptions::default()
        };
        ReflectorCounters::count(&self.counters.0.watch_lists);
        match self.lw.watch_with(&opts, self.decode).await {
            Ok(stream) => State::InitialEvents {
                stream,
                items: HashMap::new(),
                rv: String::new(),
                started: Instant::now(),
                events: 0,
            },
            Err(e) => self.watch_list_failed(e),
        }
    }

    /// client-go's `watchList` on an error: overload and refused
    /// connections retry the watch-list after a backoff, a version the
    /// server no longer has retries it at once as a consistent read, and
    /// anything else lists instead, this round.
    fn watch_list_failed(&mut self, e: rest::Error) -> State<K> {
        if is_retriable(&e) {
            self.report(Error::WatchList(e));
            return self.backoff(Resume::Start);
        }
        if e.is_expired() || is_too_large_resource_version(&e) {
            self.rv_unavailable = true;
            self.report(Error::WatchList(e));
            return State::Start;
        }
        self.report(Error::WatchList(e));
        // Making progress beats insisting: list right away (client-go does).
        State::List
    }

    /// A watch-list stream ended, or its connection broke, before its
    /// initial events did: as client-go, stream them again from the start
    /// (what the broken attempt delivered is dropped), unless it ended
    /// within a second with nothing, which lists instead.
    fn watch_list_ended(&mut self, started: Instant, events: u64) -> State<K> {
        let lasted = started.elapsed();
        if events == 0 && lasted < Duration::from_secs(1) {
            self.report(Error::VeryShortWatch(lasted));
            return State::List;
        }
        State::Start
    }

    async fn initial_event(
        &mut self,
        mut stream: WatchStream<K>,
        mut items: HashMap<Key, Arc<K>>,
        mut rv: String,
        started: Instant,
        events: u64,
    ) -> State<K> {
        tokio::task::consume_budget().await;
        match stream.next().await {
            Some(Ok(WatchEvent::Added(obj) | WatchEvent::Modified(obj))) => {
                let obj = self.prepare(obj);
                update_rv(&mut rv, &*obj);
                // Keyed as the queue keys it: the queue and then the cache
                // keep these keys rather than making their own.
                items.insert(self.queue.key(&obj), obj);
            }
            Some(Ok(WatchEvent::Deleted(obj))) => {
                update_rv(&mut rv, &obj);
                items.remove(&self.queue.key(&obj));
            }
            Some(Ok(WatchEvent::Bookmark(b))) => {
                if !b.resource_version.is_empty() {
                    rv = b.resource_version.clone();
                }
                if b.is_initial_events_end() {
                    self.queue.replace(items.into_iter().collect(), &rv);
                    self.synced(&rv);
                    return State::Watching { stream, started: Instant::now(), events: events + 1 };
                }
            }
            Some(Err(e)) if e.is_probable_eof() => {
                // client-go's StreamWatcher ends quietly on these: an end.
                tracing::debug!(reflector = %self.options.name, error = %ErrorChain(&e), "watch-list connection broke; starting it again");
                return self.watch_list_ended(started, events);
            }
            Some(Err(e)) => return self.watch_list_failed(e),
            None => return self.watch_list_ended(started, events),
        }
        State::InitialEvents { stream, items, rv, started, events: events + 1 }
    }

    async fn list(&mut self) -> State<K> {
        let rv = self.relist_rv();
        let result = match self.paged_list(&rv).await {
            Err(e) if !rv.is_empty() && (e.is_expired() || is_too_large_resource_version(&e)) => {
                // The version we asked for is gone: a consistent read is the
                // only thing that can succeed, so try it at once.
                self.rv_unavailable = true;
                self.report(Error::List(e));
                self.paged_list("").await
            }
            other => other,
        };
        match result {
            Ok(Listed { items, rv: list_rv, paginated }) => {
                if rv == "0" && paginated {
                    self.paginated_result = true;
                }
                let keyed = items.into_iter().map(|obj| (self.queue.key(&obj), obj)).collect();
                self.queue.replace(keyed, &list_rv);
                self.synced(&list_rv);
                State::Watch
            }
            Err(e) => {
                self.report(Error::List(e));
                self.backoff(Resume::Start)
            }
        }
    }

    /// Lists at `rv` page by page. Borrows only the parts of the reflector
    /// it needs: the reflector holds a stream that is not `Sync`.
    fn paged_list(&self, rv: &str) -> impl Future<Output = Result<Listed<K>, rest::Error>> + Send + use<K, Q> {
        ReflectorCounters::count(&self.counters.0.lists);
        let limit = match self.options.page_size {
            Some(0) => None,
            Some(n) => Some(n),
            None if self.paginated_result || rv.is_empty() || rv == "0" => Some(DEFAULT_PAGE_SIZE),
            None => None,
        };
        let lw = Arc::clone(&self.lw);
        let transform = self.transform.clone();
        paged_list(lw, self.decode, transform, rv.to_owned(), limit)
    }
}

impl<K: Object + Send + Sync + 'static, Q: ReflectorStore<K> + Clone + 'static> Reflector<K, Q> {
    async fn start_watch(&mut self) -> State<K> {
        let opts = ListOptions {
            resource_version: Some(self.last_sync_rv.get()),
            timeout_seconds: Some(self.watch_timeout()),
            allow_watch_bookmarks: true,
            ..ListOptions::default()
        };
        ReflectorCounters::count(&self.counters.0.watches);
        match self.lw.watch_with(&opts, self.decode).await {
            Ok(stream) => State::Watching { stream, started: Instant::now(), events: 0 },
            Err(e) => {
                // Overload or a connection that could not be made: the
                // version is still good, only the watch needs retrying
                // (client-go retries refused connections and 429s so).
                let retry_watch = is_retriable(&e) || matches!(e, rest::Error::Transport { .. });
                self.report(Error::WatchStart(e));
                self.backoff(if retry_watch { Resume::Watch } else { Resume::Start })
            }
        }
    }

    async fn watch_event(&mut self, mut stream: WatchStream<K>, started: Instant, events: u64) -> State<K> {
        // A stream that is always ready (a fast connection, a backlog) would
        // otherwise never let the informer's consumer run on this thread.
        tokio::task::consume_budget().await;
        match stream.next().await {
            Some(Ok(event)) => {
                if events == 0 {
                    // The watch works: the next failure starts the backoff
                    // afresh.
                    self.backoff.reset();
                }
                // The version is copied straight into the shared handle
                // (reusing its buffer): no allocation per event.
                match event {
                    WatchEvent::Added(obj) => {
                        let obj = self.prepare(obj);
                        self.last_sync_rv.set(obj_rv(&*obj));
                        self.queue.add(obj);
                    }
                    WatchEvent::Modified(obj) => {
                        let obj = self.prepare(obj);
                        self.last_sync_rv.set(obj_rv(&*obj));
                        self.queue.update(obj);
                    }
                    WatchEvent::Deleted(obj) => {
                        let obj = self.prepare(obj);
                        self.last_sync_rv.set(obj_rv(&*obj));
                        self.queue.delete(obj);
                    }
                    WatchEvent::Bookmark(b) => {
                        self.last_sync_rv.set(&b.resource_version);
                        // In order with the events (client-go 1.36): a cache
                        // whose selector hides every write still moves on.
                        if !b.resource_version.is_empty() {
                            self.queue.bookmark(&b.resource_version);
                            if let Some(hook) = &self.after_new_version {
                                hook();
                            }
                        }
                    }
                }
                State::Watching { stream, started, events: events + 1 }
            }
            Some(Err(e)) if e.is_probable_eof() => {
                // The connection broke (reset, EOF inside an event, GOAWAY,
                // timeout): every complete event was applied, so this is a
                // normal end and the watch resumes from the last version,
                // as client-go's StreamWatcher closes quietly on these.
                // Relisting would cost a full read for nothing.
                tracing::debug!(reflector = %self.options.name, error = %ErrorChain(&e), "watch connection broke; watching again");
                self.watch_ended(started, events)
            }
            Some(Err(e)) => {
                let retry_watch = e.is_too_many_requests();
                // A 410 relists at the last synced version: a list at a
                // version returns data at least that fresh, so it need not be
                // marked unavailable (client-go does the same).
                self.report(Error::Watch(e));
                self.backoff(if retry_watch { Resume::Watch } else { Resume::Start })
            }
            None => self.watch_ended(started, events),
        }
    }

    /// A watch that ended without an error: watch again from the last
    /// version, unless it ended at once with nothing (client-go's "very
    /// short watch"), which relists after a backoff.
    fn watch_ended(&mut self, started: Instant, events: u64) -> State<K> {
        let lasted = started.elapsed();
        if events == 0 && lasted < Duration::from_secs(1) {
            // A server that closes watches at once would otherwise be
            // hammered in a tight loop.
            self.report(Error::VeryShortWatch(lasted));
            self.backoff(Resume::Start)
        } else {
            State::Watch
        }
    }
}

fn obj_rv<K: Object>(obj: &K) -> &str {
    obj.metadata().resource_version().unwrap_or_default()
}

fn update_rv<K: Object>(rv: &mut String, obj: &K) {
    if let Some(v) = obj.metadata().resource_version().filter(|v| !v.is_empty()) {
        v.clone_into(rv);
    }
}

async fn resync_loop<K, Q: ReflectorStore<K>>(queue: Q, period: Duration, should_resync: Option<ShouldResync>) {
    if period.is_zero() {
        return futures_util::future::pending().await;
    }
    let mut ticks = tokio::time::interval_at(Instant::now() + period, period);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        if should_resync.as_ref().is_none_or(|f| f()) {
            queue.resync();
        }
    }
}


/// The server is behind the requested resourceVersion (client-go
/// `isTooLargeResourceVersionError`): the `ResourceVersionTooLarge` cause,
/// or the message older servers put in a timeout.
fn is_too_large_resource_version(e: &rest::Error) -> bool {
    let Some(status) = e.status() else {
        return false;
    };
    let cause = status.details.as_ref().is_some_and(|d| d.causes.iter().any(|c| c.reason == "ResourceVersionTooLarge"));
    cause || (e.is_timeout() && status.message.contains("Too large resource version"))
}

/// client-go's `isWatchErrorRetriable`: the server is overloaded (429) or
/// refused the connection, so the same request may succeed later.
fn is_retriable(e: &rest::Error) -> bool {
    e.is_too_many_requests() || e.is_connection_refused()
}
