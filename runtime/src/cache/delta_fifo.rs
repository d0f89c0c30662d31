//! The queue between a reflector and an informer's store, as client-go's
//! `DeltaFIFO`.
//!
//! For every object key it keeps the list of changes ([`Delta`]s) not yet
//! processed, so a consumer sees each change (an add and a quick delete are
//! both delivered) while keys still come out in the order they were first
//! queued. A relist ([`DeltaFifo::replace`]) also produces deletions for the
//! objects that vanished while the watch was down
//! ([`DeletedFinalStateUnknown`] tombstones), which is why it needs to know
//! what the store holds ([`KnownObjects`]).

use std::collections::{HashMap, HashSet, VecDeque};
use std::fmt;
use std::sync::Arc;

use smallvec::{SmallVec, smallvec};

use parking_lot::Mutex;
use tokio::sync::Notify;

use super::store::{Key, KeyFn, Store, ThreadSafeStore, TransformFn, transform_unshared};
use crate::object::Object;
use crate::object::object_key;

/// Boxed error of a process function.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Errors of the DeltaFIFO.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The queue was closed and has nothing left to pop.
    #[error("DeltaFIFO: manipulating with closed queue")]
    Closed,
    /// The process function failed; its deltas are dropped.
    #[error("processing popped deltas failed")]
    Process(#[source] BoxError),
    /// The process function failed and asked for its deltas to be queued
    /// again (client-go `ErrRequeue`).
    #[error("processing popped deltas failed; they were queued again")]
    Requeued(#[source] BoxError),
}

/// What a process function returns when it fails: whether to give the
/// deltas back to the queue (client-go `ErrRequeue`) or drop them.
#[derive(Debug)]
pub struct ProcessError {
    requeue: bool,
    source: BoxError,
}

impl ProcessError {
    /// Fail and put the deltas back, unless newer deltas for the key were
    /// queued meanwhile.
    pub fn requeue(source: impl Into<BoxError>) -> Self {
        ProcessError { requeue: true, source: source.into() }
    }

    /// Fail and drop the deltas.
    pub fn fail(source: impl Into<BoxError>) -> Self {
        ProcessError { requeue: false, source: source.into() }
    }
}

/// What happened to an object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeltaType {
    /// The object was created (a watch `ADDED` event).
    Added,
    /// The object changed (a watch `MODIFIED` event).
    Updated,
    /// The object was deleted (a watch `DELETED` event, or missing from a
    /// relist, then carrying a [`DeletedFinalStateUnknown`]).
    Deleted,
    /// Seen in a relist ([`DeltaFifo::replace`]); may or may not have changed.
    Replaced,
    /// Re-delivered by a periodic resync, or seen in a relist when
    /// `emit_delta_type_replaced` is off.
    Sync,
}

/// An object deleted while the watch was down: its last known state (if
/// the store had one) and its key. Delivered instead of the object in a
/// [`DeltaType::Deleted`] delta.
#[derive(Debug)]
pub struct DeletedFinalStateUnknown<T> {
    /// The object's key (`namespace/name`), which is all that is sure to be
    /// known.
    pub key: String,
    /// The last state known of the object (the newest queued, else the
    /// stored one), if any; it may be stale.
    pub obj: Option<Arc<T>>,
}

impl<T> Clone for DeletedFinalStateUnknown<T> {
    fn clone(&self) -> Self {
        DeletedFinalStateUnknown { key: self.key.clone(), obj: self.obj.clone() }
    }
}

/// The object carried by a [`Delta`].
#[derive(Debug)]
pub enum DeltaObject<T> {
    /// The object as the watch or list delivered it.
    Object(Arc<T>),
    /// A tombstone: the object vanished from a relist, so its final state is
    /// unknown (client-go's `cache.DeletedFinalStateUnknown`).
    DeletedFinalStateUnknown(DeletedFinalStateUnknown<T>),
}

impl<T> Clone for DeltaObject<T> {
    fn clone(&self) -> Self {
        match self {
            DeltaObject::Object(o) => DeltaObject::Object(Arc::clone(o)),
            DeltaObject::DeletedFinalStateUnknown(d) => DeltaObject::DeletedFinalStateUnknown(d.clone()),
        }
    }
}

impl<T> DeltaObject<T> {
    /// The object, or a tombstone's last known state.
    pub fn object(&self) -> Option<&Arc<T>> {
        match self {
            DeltaObject::Object(o) => Some(o),
            DeltaObject::DeletedFinalStateUnknown(d) => d.obj.as_ref(),
        }
    }

    /// Whether this is a tombstone rather than an object the apiserver sent.
    pub fn is_tombstone(&self) -> bool {
        matches!(self, DeltaObject::DeletedFinalStateUnknown(_))
    }
}

/// One change to one object.
#[derive(Debug)]
pub struct Delta<T> {
    /// What happened.
    pub delta_type: DeltaType,
    /// The object after the change (for a deletion, its last state or a
    /// tombstone).
    pub object: DeltaObject<T>,
}

impl<T> Clone for Delta<T> {
    fn clone(&self) -> Self {
        Delta { delta_type: self.delta_type, object: self.object.clone() }
    }
}

/// The changes to one key, oldest first; never empty when popped.
pub type Deltas<T> = Vec<Delta<T>>;

/// A key's deltas while queued. Most keys have one, kept in the map's own
/// room: a relist queues thousands of keys at once, and a block per key,
/// freed at each pop, would leave as many holes among the objects the
/// informer's cache keeps. A popped key's deltas become a [`Deltas`], freed
/// once processed and reused by the next pop.
type Queued<T> = SmallVec<[Delta<T>; 1]>;

/// A queue (this one or a [`RealFifo`](super::RealFifo)) that held at
/// least this many entries gives its room back once
/// emptied: a relist of many objects would otherwise keep the map and the
/// queue sized for all of them for as long as the informer runs (as Go's
/// maps do), while smaller ones keep theirs for the next events.
pub(crate) const KEEP_ROOM: usize = 1024;

/// What the DeltaFIFO needs from the store the popped deltas go into
/// (client-go `KeyListerGetter`): to find deletions during a relist and the
/// objects to resync.
pub trait KnownObjects<T>: Send + Sync {
    /// Keys of every stored object.
    fn list_keys(&self) -> Vec<String>;
    /// The stored object under `key`.
    fn get_by_key(&self, key: &str) -> Option<Arc<T>>;
}

impl<T: Send + Sync> KnownObjects<T> for Store<T> {
    fn list_keys(&self) -> Vec<String> {
        Store::list_keys(self)
    }
    fn get_by_key(&self, key: &str) -> Option<Arc<T>> {
        Store::get_by_key(self, key)
    }
}

impl<T: Send + Sync> KnownObjects<T> for ThreadSafeStore<T> {
    fn list_keys(&self) -> Vec<String> {
        ThreadSafeStore::list_keys(self)
    }
    fn get_by_key(&self, key: &str) -> Option<Arc<T>> {
        self.get(key)
    }
}

/// How to build a [`DeltaFifo`].
pub struct DeltaFifoOptions<T> {
    key_fn: KeyFn<T>,
    known_objects: Option<Arc<dyn KnownObjects<T>>>,
    emit_delta_type_replaced: bool,
    transform: Option<TransformFn<T>>,
}

impl<T: Object + 'static> Default for DeltaFifoOptions<T> {
    /// Keys `namespace/name`, no known objects, relists emit
    /// [`DeltaType::Replaced`].
    fn default() -> Self {
        Self::with_key_fn(Arc::new(object_key::<T>))
    }
}

impl<T> DeltaFifoOptions<T> {
    /// Options keying objects with `key_fn`, no known objects, relists emitting
    /// [`DeltaType::Replaced`].
    #[must_use]
    pub fn with_key_fn(key_fn: KeyFn<T>) -> Self {
        DeltaFifoOptions { key_fn, known_objects: None, emit_delta_type_replaced: true, transform: None }
    }

    /// Changes every object before it is queued (client-go `Transformer`);
    /// see [`DeltaFifo::transform`] for when it runs.
    #[must_use]
    pub fn transform(mut self, transform: TransformFn<T>) -> Self {
        self.transform = Some(transform);
        self
    }

    /// The store the popped deltas are applied to; without it, deletions
    /// during a relist are only detected among keys still queued.
    #[must_use]
    pub fn known_objects(mut self, known: Arc<dyn KnownObjects<T>>) -> Self {
        self.known_objects = Some(known);
        self
    }

    /// Whether relisted objects come as [`DeltaType::Replaced`] (the
    /// default, as current informers) or [`DeltaType::Sync`] (the old
    /// behaviour).
    #[must_use]
    pub fn emit_delta_type_replaced(mut self, emit: bool) -> Self {
        self.emit_delta_type_replaced = emit;
        self
    }
}

struct FifoState<T> {
    items: HashMap<Key, Queued<T>>,
    /// Keys in the order they were first queued; each is in `items`.
    queue: VecDeque<Key>,
    /// Something was added or a relist happened.
    populated: bool,
    /// Items of the first relist not popped yet.
    initial_population_count: usize,
    /// The resourceVersion of the newest relist with keys still queued:
    /// reached once the queue has been emptied (keys are popped in the order
    /// first queued, so only then are all of the list's popped).
    pending_list: Option<Arc<str>>,
    /// The newest relist whose keys have all been popped, until taken.
    reached_list: Option<Arc<str>>,
    closed: bool,
}

impl<T> FifoState<T> {
    fn has_synced(&self) -> bool {
        self.populated && self.initial_population_count == 0
    }

    /// Frees the room of an emptied queue that grew past [`KEEP_ROOM`].
    fn give_back_room(&mut self) {
        if self.items.is_empty() && self.items.capacity() > KEEP_ROOM {
            self.items = HashMap::new();
        }
        if self.queue.is_empty() && self.queue.capacity() > KEEP_ROOM {
            self.queue = VecDeque::new();
        }
    }
}

struct Shared<T> {
    key_fn: KeyFn<T>,
    known_objects: Option<Arc<dyn KnownObjects<T>>>,
    emit_delta_type_replaced: bool,
    transform: Option<TransformFn<T>>,
    state: Mutex<FifoState<T>>,
    item_ready: Notify,
    /// Held across a whole pop, so the deltas of one key are never
    /// processed by two pops at once.
    pop_lock: tokio::sync::Mutex<()>,
}

/// A queue of per-object changes, keys popped in FIFO order, as client-go's
/// `DeltaFIFO`. Cloning gives another handle to the same queue.
#[doc(alias = "DeltaFIFO")]
pub struct DeltaFifo<T> {
    shared: Arc<Shared<T>>,
}

impl<T> Clone for DeltaFifo<T> {
    fn clone(&self) -> Self {
        DeltaFifo { shared: Arc::clone(&self.shared) }
    }
}

impl<T> fmt::Debug for DeltaFifo<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let st = self.shared.state.lock();
        f.debug_struct("DeltaFifo")
            .field("len", &st.queue.len())
            .field("has_synced", &st.has_synced())
            .field("closed", &st.closed)
            .finish_non_exhaustive()
    }
}

/// Collapses the two newest deltas when both are deletions (client-go
/// `dedupDeltas`), keeping the one that says more: a tombstone loses
/// against an actual deletion.
fn dedup_deltas<T>(deltas: &mut Queued<T>) {
    let n = deltas.len();
    if n < 2 {
        return;
    }
    let (older, newer) = (&deltas[n - 2], &deltas[n - 1]);
    if older.delta_type != DeltaType::Deleted || newer.delta_type != DeltaType::Deleted {
        return;
    }
    if older.object.is_tombstone() {
        deltas.swap_remove(n - 2);
    } else {
        deltas.pop();
    }
}

impl<T: Send + Sync + 'static> DeltaFifo<T> {
    /// An empty queue built from `options`.
    pub fn new(options: DeltaFifoOptions<T>) -> Self {
        DeltaFifo {
            shared: Arc::new(Shared {
                key_fn: options.key_fn,
                known_objects: options.known_objects,
                emit_delta_type_replaced: options.emit_delta_type_replaced,
                transform: options.transform,
                state: Mutex::new(FifoState {
                    items: HashMap::new(),
                    queue: VecDeque::new(),
                    populated: false,
                    initial_population_count: 0,
                    pending_list: None,
                    reached_list: None,
                    closed: false,
                }),
                item_ready: Notify::new(),
                pop_lock: tokio::sync::Mutex::new(()),
            }),
        }
    }

    /// The key the queue files `obj` under.
    pub(crate) fn key(&self, obj: &T) -> Key {
        (self.shared.key_fn)(obj).into()
    }

    /// The transform of the options (client-go `Transformer()`): a
    /// [`Reflector`](super::Reflector) runs it as it decodes, and the
    /// queue's own [`add`](Self::add), [`update`](Self::update),
    /// [`delete`](Self::delete) and [`replace`](Self::replace) on what they
    /// are given ([`TransformFn`] says which objects it can change).
    pub fn transform(&self) -> Option<TransformFn<T>> {
        self.shared.transform.clone()
    }

    fn transformed(&self, obj: Arc<T>) -> Arc<T> {
        transform_unshared(self.shared.transform.as_ref(), obj)
    }

    fn key_of(&self, obj: &DeltaObject<T>) -> Key {
        match obj {
            DeltaObject::Object(o) => self.key(o),
            DeltaObject::DeletedFinalStateUnknown(d) => d.key.as_str().into(),
        }
    }

    /// Appends a delta to its key, queueing the key if it is new.
    fn queue_action(&self, st: &mut FifoState<T>, delta_type: DeltaType, object: DeltaObject<T>, key: Key) {
        let delta = Delta { delta_type, object };
        match st.items.get_mut(&key) {
            Some(deltas) => {
                deltas.push(delta);
                dedup_deltas(deltas);
            }
            None => {
                st.queue.push_back(Arc::clone(&key));
                st.items.insert(key, smallvec![delta]);
                // Only a new key is something a waiting pop can take.
                self.shared.item_ready.notify_one();
            }
        }
    }

    pub(crate) fn queue_object(&self, delta_type: DeltaType, obj: Arc<T>) {
        let key = self.key(&obj);
        let mut st = self.shared.state.lock();
        st.populated = true;
        self.queue_action(&mut st, delta_type, DeltaObject::Object(obj), key);
    }

    /// Queues an [`DeltaType::Added`] delta.
    pub fn add(&self, obj: Arc<T>) {
        self.queue_object(DeltaType::Added, self.transformed(obj))
    }

    /// Queues an [`DeltaType::Updated`] delta.
    pub fn update(&self, obj: Arc<T>) {
        self.queue_object(DeltaType::Updated, self.transformed(obj))
    }

    /// Queues a [`DeltaType::Deleted`] delta, unless the object is neither
    /// queued nor known (a deletion of something never seen means nothing).
    pub fn delete(&self, obj: Arc<T>) {
        self.queue_deletion(self.transformed(obj))
    }

    pub(crate) fn queue_deletion(&self, obj: Arc<T>) {
        let key = self.key(&obj);
        let mut st = self.shared.state.lock();
        st.populated = true;
        let queued = st.items.contains_key(&key);
        let known = match &self.shared.known_objects {
            Some(known) => known.get_by_key(&key).is_some(),
            None => false,
        };
        if !queued && !known {
            return;
        }
        self.queue_action(&mut st, DeltaType::Deleted, DeltaObject::Object(obj), key);
    }

    /// Puts popped deltas back unless the key got new ones meanwhile
    /// (client-go `AddIfNotPresent`), keeping them at the back of the queue.
    pub fn add_if_not_present(&self, deltas: Deltas<T>) {
        let Some(newest) = deltas.last() else { return };
        let key = self.key_of(&newest.object);
        self.add_if_not_present_with_key(key, deltas);
    }

    fn add_if_not_present_with_key(&self, key: Key, deltas: Deltas<T>) {
        let mut st = self.shared.state.lock();
        if Self::requeue(&mut st, key, deltas) {
            drop(st);
            self.shared.item_ready.notify_one();
        }
    }

    /// Queues `deltas` under `key` unless it has deltas queued already;
    /// whether it did.
    fn requeue(st: &mut FifoState<T>, key: Key, deltas: Deltas<T>) -> bool {
        st.populated = true;
        if deltas.is_empty() || st.items.contains_key(&key) {
            return false;
        }
        st.queue.push_back(Arc::clone(&key));
        st.items.insert(key, SmallVec::from_vec(deltas));
        true
    }

    /// Takes a full list (a relist at `resource_version`): queues a
    /// [`DeltaType::Replaced`] (or `Sync`) delta per object, then a deletion
    /// with a [`DeletedFinalStateUnknown`] tombstone for every key missing
    /// from the list: first every *queued* key (carrying the newest queued
    /// object, which is newer than the store's copy), then every known key
    /// with nothing queued (carrying the store's object), as client-go.
    pub fn replace(&self, list: Vec<Arc<T>>, resource_version: &str) {
        let keyed = list.into_iter().map(|obj| (self.key(&obj), self.transformed(obj))).collect();
        self.replace_keyed(keyed, resource_version);
    }

    /// [`replace`](Self::replace) with each object's [`key`](Self::key)
    /// already made and its transform run (the reflector's way); the
    /// queue, then the cache, keep those key buffers.
    pub(crate) fn replace_keyed(&self, list: Vec<(Key, Arc<T>)>, resource_version: &str) {
        let action = if self.shared.emit_delta_type_replaced { DeltaType::Replaced } else { DeltaType::Sync };
        let mut st = self.shared.state.lock();
        let mut keys: HashSet<Key> = HashSet::with_capacity(list.len());
        for (key, obj) in list {
            keys.insert(Arc::clone(&key));
            self.queue_action(&mut st, action, DeltaObject::Object(obj), key);
        }

        // Queued keys first: an object added (or updated) and then deleted
        // on the server while the watch was down is still queued, and
        // perhaps not in the store yet; checking only the store would let
        // its queued Added reach the cache after the relist and stay there.
        // Queue order keeps the tombstones deterministic.
        let queued: Vec<DeletedFinalStateUnknown<T>> = st
            .queue
            .iter()
            .filter(|k| !keys.contains(*k))
            .filter_map(|k| st.items.get(k).map(|deltas| (k, deltas)))
            .map(|(key, deltas)| DeletedFinalStateUnknown {
                key: key.to_string(),
                // A queued tombstone gives its own last known state.
                obj: deltas.last().and_then(|d| d.object.object().cloned()),
            })
            .collect();
        let mut queued_deletions = queued.len();
        for tombstone in queued {
            let key = tombstone.key.as_str().into();
            self.queue_action(&mut st, DeltaType::Deleted, DeltaObject::DeletedFinalStateUnknown(tombstone), key);
        }

        // Then the store's keys that have nothing queued (those with deltas
        // were handled above, with a newer object than the store's).
        if let Some(known) = &self.shared.known_objects {
            for key in known.list_keys() {
                if keys.contains(key.as_str()) || st.items.get(key.as_str()).is_some_and(|d| !d.is_empty()) {
                    continue;
                }
                let obj = known.get_by_key(&key);
                queued_deletions += 1;
                let queued_key = key.as_str().into();
                self.queue_action(
                    &mut st,
                    DeltaType::Deleted,
                    DeltaObject::DeletedFinalStateUnknown(DeletedFinalStateUnknown { key, obj }),
                    queued_key,
                );
            }
        }

        if !st.populated {
            st.populated = true;
            st.initial_population_count = keys.len() + queued_deletions;
        }
        st.pending_list = Some(resource_version.into());
        if st.queue.is_empty() {
            st.reached_list = st.pending_list.take();
        }
    }

    /// Queues a [`DeltaType::Sync`] delta for every known object that has no
    /// delta queued (the periodic resync of informers). Does nothing without
    /// known objects.
    pub fn resync(&self) {
        let Some(known) = &self.shared.known_objects else {
            return;
        };
        let mut st = self.shared.state.lock();
        for key in known.list_keys() {
            let Some(obj) = known.get_by_key(&key) else {
                continue;
            };
            let key = self.key(&obj);
            if st.items.get(&key).is_some_and(|d| !d.is_empty()) {
                continue;
            }
            self.queue_action(&mut st, DeltaType::Sync, DeltaObject::Object(obj), key);
        }
    }

    /// Waits for a key, removes it and calls `process` with its deltas and
    /// whether they belong to the first relist; returns the deltas.
    ///
    /// `process` runs under the queue's lock, as in client-go, so that a
    /// relist in another task cannot slip between the pop and the store
    /// write `process` makes (it would see the key neither queued nor
    /// known, and a deletion in it would be lost). Calling this queue from
    /// `process` deadlocks.
    ///
    /// Pops never overlap: a second `pop` waits until the first one's
    /// `process` returned. If `process` returns [`ProcessError::requeue`],
    /// the deltas are queued again (unless new ones came meanwhile). Items
    /// still queued after [`close`](Self::close) are popped; then
    /// [`Error::Closed`].
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: a key is removed and processed within one poll, so
    /// dropping the future loses no deltas.
    pub async fn pop<F>(&self, process: F) -> Result<Deltas<T>, Error>
    where
        F: FnOnce(&Deltas<T>, bool) -> Result<(), ProcessError>,
    {
        self.pop_keyed(|_, deltas, initial| process(deltas, initial)).await
    }

    /// [`pop`](Self::pop), also handing `process` the key, for a store that
    /// keeps the same buffer.
    pub(crate) async fn pop_keyed<F>(&self, process: F) -> Result<Deltas<T>, Error>
    where
        F: FnOnce(&Key, &Deltas<T>, bool) -> Result<(), ProcessError>,
    {
        let _pop = self.shared.pop_lock.lock().await;
        let mut process = Some(process);
        loop {
            // Registering for a wake-up costs a lock in `Notify`; only do it
            // when the queue looked empty.
            if let Some(done) = self.try_pop_and_process(&mut process) {
                return done;
            }
            let notified = self.shared.item_ready.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if let Some(done) = self.try_pop_and_process(&mut process) {
                return done;
            }
            notified.await;
        }
    }

    /// Takes the first key with its deltas and processes them, all under
    /// the lock; `None` if the queue is empty and still open (`process` is
    /// then still there).
    fn try_pop_and_process<F>(&self, process: &mut Option<F>) -> Option<Result<Deltas<T>, Error>>
    where
        F: FnOnce(&Key, &Deltas<T>, bool) -> Result<(), ProcessError>,
    {
        let mut st = self.shared.state.lock();
        let (key, deltas, is_in_initial_list) = loop {
            let Some(key) = st.queue.pop_front() else {
                return st.closed.then_some(Err(Error::Closed));
            };
            let is_in_initial_list = !st.has_synced();
            st.initial_population_count = st.initial_population_count.saturating_sub(1);
            // A queued key always has deltas; one without is skipped.
            if let Some(deltas) = st.items.remove(&key) {
                if st.queue.is_empty() && st.pending_list.is_some() {
                    st.reached_list = st.pending_list.take();
                }
                st.give_back_room();
                break (key, deltas.into_vec(), is_in_initial_list);
            }
        };
        let process = process.take()?;
        Some(match process(&key, &deltas, is_in_initial_list) {
            Ok(()) => Ok(deltas),
            Err(ProcessError { requeue: true, source }) => {
                if Self::requeue(&mut st, key, deltas) {
                    drop(st);
                    self.shared.item_ready.notify_one();
                }
                Err(Error::Requeued(source))
            }
            Err(ProcessError { requeue: false, source }) => Err(Error::Process(source)),
        })
    }

    /// The resourceVersion of the newest relist whose keys have all been
    /// popped since the last call, if any: once those are processed, the
    /// store holds that list.
    pub(crate) fn take_reached_list(&self) -> Option<Arc<str>> {
        self.shared.state.lock().reached_list.take()
    }

    /// Makes pops return [`Error::Closed`] once the queue is empty.
    pub fn close(&self) {
        self.shared.state.lock().closed = true;
        self.shared.item_ready.notify_waiters();
    }

    /// Whether [`close`](Self::close) was called.
    pub fn is_closed(&self) -> bool {
        self.shared.state.lock().closed
    }

    /// True once something was added, or the first relist happened and all
    /// its items were popped (client-go `HasSynced`).
    pub fn has_synced(&self) -> bool {
        self.shared.state.lock().has_synced()
    }

    /// Keys with queued deltas.
    pub fn list_keys(&self) -> Vec<String> {
        self.shared.state.lock().items.keys().map(|k| k.to_string()).collect()
    }

    /// A copy of the deltas queued for `key`.
    pub fn get_by_key(&self, key: &str) -> Option<Deltas<T>> {
        self.shared.state.lock().items.get(key).map(|deltas| deltas.to_vec())
    }

    /// Number of keys queued.
    pub fn len(&self) -> usize {
        self.shared.state.lock().queue.len()
    }

    /// Whether no key has deltas queued.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod upstream_tests;
