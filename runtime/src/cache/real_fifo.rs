//! The queue between a reflector and an informer's store that hands over
//! every change in the order it happened, as client-go's `RealFIFO` (the
//! queue of its informers since 1.33, the `InOrderInformers` gate), with
//! client-go 1.36's atomic relists and resyncs (the `AtomicFIFO` gate).
//!
//! Where the [`DeltaFifo`](super::DeltaFifo) keeps one entry per object key
//! and pops keys in the order they were first queued, a [`RealFifo`] keeps
//! one [`Entry`] per change and pops them in the order they came:
//! - an object's updates are delivered one by one, never merged, and
//!   changes to different objects keep their order across keys;
//! - a deletion is always delivered, even of an object the store never had
//!   (created and deleted between two lists);
//! - a relist ([`RealFifo::replace`]) is one [`Entry::ReplacedAll`] holding
//!   the whole list: whoever pops it replaces its store at once, then tells
//!   of the objects gone (tombstones), then of the listed ones, so that
//!   readers of the store never see half a list;
//! - a resync ([`RealFifo::resync`]) is one [`Entry::SyncAll`]: whoever
//!   pops it re-delivers every object of its store, which by then holds
//!   every change queued before;
//! - [`RealFifo::pop_batch`] hands over up to [`DEFAULT_BATCH_SIZE`]
//!   changes at once, never mixing the first list's with later ones; a
//!   relist or resync entry is always popped alone.
//! - while fewer than two batches are queued, a pop is processed without
//!   the queue's lock, so the reflector goes on queuing meanwhile
//!   ([`RealFifoOptions::unlock_while_processing`], client-go's
//!   `UnlockWhileProcessingFIFO`).
//!
//! [`RealFifoOptions::atomic_events`] turned off gives the queue of client-go
//! before 1.36, processing every pop under its lock: a relist queues a [`DeletedFinalStateUnknown`] tombstone for
//! every key that vanished, first those with changes still queued, then
//! those only the store knows ([`KnownObjects`]), and then the listed
//! objects as [`DeltaType::Replaced`] changes; a resync queues a
//! [`DeltaType::Sync`] change per known object with no change queued.
//!
//! Informers use it by default ([`QueueKind`](super::QueueKind)); use it
//! with a [`Reflector`](super::Reflector) to pop changes yourself, in order.

use std::collections::{HashMap, HashSet, VecDeque};
use std::fmt;
use std::sync::Arc;

use parking_lot::{Mutex, MutexGuard};
use tokio::sync::Notify;

use super::delta_fifo::{DeletedFinalStateUnknown, Delta, DeltaObject, DeltaType, KEEP_ROOM, KnownObjects};
use super::store::{Key, KeyFn, TransformFn, transform_unshared};
use crate::object::{Object, object_key};

/// The most changes [`RealFifo::pop_batch`] hands over at once (client-go's
/// `defaultBatchSize`).
pub const DEFAULT_BATCH_SIZE: usize = 1000;

/// Errors of the RealFIFO.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The queue was closed and has nothing left to pop.
    #[error("RealFIFO: manipulating with closed queue")]
    Closed,
}

/// One queued change: the object's key and what happened to it.
#[derive(Debug)]
pub struct Change<T> {
    /// The key the object is filed under (a tombstone's own key).
    pub key: Key,
    /// What happened, with the object.
    pub delta: Delta<T>,
}

impl<T> Clone for Change<T> {
    fn clone(&self) -> Self {
        Change { key: Arc::clone(&self.key), delta: self.delta.clone() }
    }
}

/// A whole relist, queued as one entry (client-go `ReplacedAllInfo`).
#[derive(Debug)]
pub struct ReplacedAll<T> {
    /// The resourceVersion of the list.
    pub resource_version: Arc<str>,
    /// The listed objects, transformed, each with its key, in list order.
    pub objects: Vec<(Key, Arc<T>)>,
}

/// One entry of a [`RealFifo`].
#[derive(Debug)]
pub enum Entry<T> {
    /// One object's change.
    Change(Change<T>),
    /// A relist, with atomic events (client-go's `ReplacedAll` delta): the
    /// store is to be replaced by the list as a whole, then the objects it
    /// lacks told as deleted and the listed ones as added or updated.
    ReplacedAll(Arc<ReplacedAll<T>>),
    /// A resync, with atomic events (client-go's `SyncAll` delta): every
    /// object of the store is to be delivered again.
    SyncAll,
}

impl<T> Clone for Entry<T> {
    fn clone(&self) -> Self {
        match self {
            Entry::Change(c) => Entry::Change(c.clone()),
            Entry::ReplacedAll(r) => Entry::ReplacedAll(Arc::clone(r)),
            Entry::SyncAll => Entry::SyncAll,
        }
    }
}

impl<T> Entry<T> {
    /// The change, if this is one object's.
    pub fn change(&self) -> Option<&Change<T>> {
        match self {
            Entry::Change(c) => Some(c),
            Entry::ReplacedAll(_) | Entry::SyncAll => None,
        }
    }

    /// Whether this is a relist or resync entry, which is popped alone.
    pub fn is_atomic(&self) -> bool {
        self.change().is_none()
    }
}

/// How to build a [`RealFifo`] (client-go `RealFIFOOptions`).
pub struct RealFifoOptions<T> {
    key_fn: KeyFn<T>,
    known_objects: Arc<dyn KnownObjects<T>>,
    transform: Option<TransformFn<T>>,
    batch_size: usize,
    atomic_events: bool,
    unlock_while_processing: bool,
}

impl<T: Object + 'static> RealFifoOptions<T> {
    /// Keys `namespace/name`; `known` is the store the popped changes go
    /// into (client-go requires it: without it a relist could not tell what
    /// vanished).
    pub fn new(known: Arc<dyn KnownObjects<T>>) -> Self {
        Self::with_key_fn(Arc::new(object_key::<T>), known)
    }
}

impl<T> RealFifoOptions<T> {
    /// Options keying objects with `key_fn`.
    pub fn with_key_fn(key_fn: KeyFn<T>, known: Arc<dyn KnownObjects<T>>) -> Self {
        RealFifoOptions {
            key_fn,
            known_objects: known,
            transform: None,
            batch_size: DEFAULT_BATCH_SIZE,
            atomic_events: true,
            unlock_while_processing: true,
        }
    }

    /// Changes every object before it is queued (client-go `Transformer`);
    /// see [`RealFifo::transform`] for when it runs.
    #[must_use]
    pub fn transform(mut self, transform: TransformFn<T>) -> Self {
        self.transform = Some(transform);
        self
    }

    /// The most changes one [`RealFifo::pop_batch`] hands over (at least 1).
    #[must_use]
    pub fn batch_size(mut self, batch_size: usize) -> Self {
        self.batch_size = batch_size.max(1);
        self
    }

    /// Whether a relist and a resync are one entry each
    /// ([`Entry::ReplacedAll`], [`Entry::SyncAll`]; on by default, as
    /// client-go's `AtomicFIFO` gate since 1.36) or a change per object
    /// (client-go before 1.36; the known objects are then read when a relist
    /// or resync is queued).
    #[must_use]
    #[doc(alias = "AtomicFIFO")]
    pub fn atomic_events(mut self, atomic: bool) -> Self {
        self.atomic_events = atomic;
        self
    }

    /// Whether a pop's `process` may run without the queue's lock while
    /// fewer than two batches are queued, so that the reflector queues
    /// meanwhile rather than waiting (on by default, as client-go's
    /// `UnlockWhileProcessingFIFO` gate since 1.36). Only with
    /// [atomic events](Self::atomic_events): without, a relist must not run
    /// between a pop and its store write ([`RealFifo::pop`]).
    #[must_use]
    #[doc(alias = "UnlockWhileProcessingFIFO")]
    pub fn unlock_while_processing(mut self, unlock: bool) -> Self {
        self.unlock_while_processing = unlock;
        self
    }
}

struct FifoState<T> {
    items: VecDeque<Entry<T>>,
    /// Something was added, or the first relist happened.
    populated: bool,
    /// Entries queued by the first relist (and before it) not popped yet.
    initial_population_count: usize,
    /// Changes ever queued and popped: a relist's (or a bookmark's)
    /// resourceVersion is reached once every change queued up to it has
    /// been popped.
    queued: u64,
    popped: u64,
    /// Relists and bookmarks whose changes are not all popped yet:
    /// (`queued` after it, its resourceVersion), oldest first.
    pending_lists: VecDeque<(u64, Arc<str>)>,
    /// The newest relist or bookmark whose changes have all been popped,
    /// until taken.
    reached_list: Option<Arc<str>>,
    closed: bool,
}

impl<T> FifoState<T> {
    fn has_synced(&self) -> bool {
        self.populated && self.initial_population_count == 0
    }

    fn push(&mut self, key: Key, delta_type: DeltaType, object: DeltaObject<T>) {
        self.push_entry(Entry::Change(Change { key, delta: Delta { delta_type, object } }));
    }

    fn push_entry(&mut self, entry: Entry<T>) {
        self.items.push_back(entry);
        self.queued += 1;
    }

    /// Counts `n` entries popped once they are processed: until then, the
    /// queue has not synced and their relists are not reached, even to a
    /// reader that runs while they are processed without the lock.
    fn note_popped(&mut self, n: usize) {
        self.initial_population_count = self.initial_population_count.saturating_sub(n);
        self.popped += n as u64;
        self.note_reached_lists();
    }

    /// Moves the relists whose changes are all popped to `reached_list`.
    fn note_reached_lists(&mut self) {
        while self.pending_lists.front().is_some_and(|(at, _)| *at <= self.popped) {
            self.reached_list = self.pending_lists.pop_front().map(|(_, rv)| rv);
        }
    }

    /// Frees the room of an emptied queue that grew past [`KEEP_ROOM`], as
    /// the DeltaFIFO does.
    fn give_back_room(&mut self) {
        if self.items.is_empty() && self.items.capacity() > KEEP_ROOM {
            self.items = VecDeque::new();
        }
    }
}

struct Shared<T> {
    key_fn: KeyFn<T>,
    known_objects: Arc<dyn KnownObjects<T>>,
    transform: Option<TransformFn<T>>,
    batch_size: usize,
    atomic_events: bool,
    /// Both the option and atomic events.
    unlock_while_processing: bool,
    state: Mutex<FifoState<T>>,
    item_ready: Notify,
    /// Held across a whole pop, with the batch's buffer: changes are
    /// processed in order, by one pop at a time.
    pop: tokio::sync::Mutex<Vec<Entry<T>>>,
}

/// A queue of every change, popped in the order they came, as client-go's
/// `RealFIFO`. Cloning gives another handle to the same queue.
#[doc(alias = "RealFIFO")]
pub struct RealFifo<T> {
    shared: Arc<Shared<T>>,
}

impl<T> Clone for RealFifo<T> {
    fn clone(&self) -> Self {
        RealFifo { shared: Arc::clone(&self.shared) }
    }
}

impl<T> fmt::Debug for RealFifo<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let st = self.shared.state.lock();
        f.debug_struct("RealFifo")
            .field("len", &st.items.len())
            .field("has_synced", &st.has_synced())
            .field("closed", &st.closed)
            .finish_non_exhaustive()
    }
}

impl<T: Send + Sync + 'static> RealFifo<T> {
    /// An empty queue built from `options`.
    pub fn new(options: RealFifoOptions<T>) -> Self {
        RealFifo {
            shared: Arc::new(Shared {
                key_fn: options.key_fn,
                known_objects: options.known_objects,
                transform: options.transform,
                batch_size: options.batch_size,
                atomic_events: options.atomic_events,
                unlock_while_processing: options.atomic_events && options.unlock_while_processing,
                state: Mutex::new(FifoState {
                    items: VecDeque::new(),
                    populated: false,
                    initial_population_count: 0,
                    queued: 0,
                    popped: 0,
                    pending_lists: VecDeque::new(),
                    reached_list: None,
                    closed: false,
                }),
                item_ready: Notify::new(),
                pop: tokio::sync::Mutex::new(Vec::new()),
            }),
        }
    }

    /// The key the queue files `obj` under.
    pub fn key(&self, obj: &T) -> Key {
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

    pub(crate) fn queue(&self, delta_type: DeltaType, obj: Arc<T>) {
        let key = self.key(&obj);
        let mut st = self.shared.state.lock();
        st.populated = true;
        st.push(key, delta_type, DeltaObject::Object(obj));
        drop(st);
        self.shared.item_ready.notify_one();
    }

    /// Queues a [`DeltaType::Added`] change.
    pub fn add(&self, obj: Arc<T>) {
        self.queue(DeltaType::Added, self.transformed(obj));
    }

    /// Queues a [`DeltaType::Updated`] change.
    pub fn update(&self, obj: Arc<T>) {
        self.queue(DeltaType::Updated, self.transformed(obj));
    }

    /// Queues a [`DeltaType::Deleted`] change, whether or not the object
    /// was ever seen.
    pub fn delete(&self, obj: Arc<T>) {
        self.queue(DeltaType::Deleted, self.transformed(obj));
    }

    /// Takes a full list (a relist at `resource_version`), as client-go's
    /// `Replace`. With atomic events (the default) it is queued as one
    /// [`Entry::ReplacedAll`]. Without, it queues a tombstone for every key
    /// with changes queued that is not in the list (unless its last queued
    /// change is a deletion), then one for every key the store knows that
    /// is neither listed nor queued, then a [`DeltaType::Replaced`] change
    /// per listed object.
    pub fn replace(&self, list: Vec<Arc<T>>, resource_version: &str) {
        let keyed = list.into_iter().map(|obj| (self.key(&obj), self.transformed(obj))).collect();
        self.replace_keyed(keyed, resource_version);
    }

    /// [`replace`](Self::replace) with each object's key made and its
    /// transform run (the reflector's way).
    pub(crate) fn replace_keyed(&self, list: Vec<(Key, Arc<T>)>, resource_version: &str) {
        let mut st = self.shared.state.lock();
        if self.shared.atomic_events {
            let all = ReplacedAll { resource_version: resource_version.into(), objects: list };
            st.push_entry(Entry::ReplacedAll(Arc::new(all)));
        } else {
            self.queue_replacement(&mut st, list);
        }
        if !st.populated {
            st.populated = true;
            st.initial_population_count = st.items.len();
        }
        let at = st.queued;
        st.pending_lists.push_back((at, resource_version.into()));
        st.note_reached_lists();
        drop(st);
        self.shared.item_ready.notify_one();
    }

    /// A relist as a change per object (client-go's `reconcileReplacement`
    /// on the queue and the known objects).
    fn queue_replacement(&self, st: &mut FifoState<T>, list: Vec<(Key, Arc<T>)>) {
        let listed: HashSet<&str> = list.iter().map(|(key, _)| &**key).collect();
        // The last queued change of each queued key, keys in the order they
        // first appear (which orders the tombstones).
        let mut last_change: HashMap<&str, &Change<T>> = HashMap::new();
        let mut queued_keys: Vec<&str> = Vec::new();
        for change in st.items.iter().filter_map(Entry::change) {
            if last_change.insert(&change.key, change).is_none() {
                queued_keys.push(&change.key);
            }
        }
        let mut tombstones: Vec<DeletedFinalStateUnknown<T>> = Vec::new();
        for key in &queued_keys {
            if listed.contains(key) {
                continue;
            }
            let last = last_change[key];
            // Already deleted: queuing another deletion would say nothing new.
            if last.delta.delta_type == DeltaType::Deleted {
                continue;
            }
            tombstones
                .push(DeletedFinalStateUnknown { key: (*key).to_owned(), obj: last.delta.object.object().cloned() });
        }
        for key in self.shared.known_objects.list_keys() {
            if listed.contains(key.as_str()) || last_change.contains_key(key.as_str()) {
                continue;
            }
            let obj = self.shared.known_objects.get_by_key(&key);
            tombstones.push(DeletedFinalStateUnknown { key, obj });
        }
        drop(last_change);
        drop(queued_keys);
        drop(listed);

        for tombstone in tombstones {
            let key: Key = tombstone.key.as_str().into();
            st.push(key, DeltaType::Deleted, DeltaObject::DeletedFinalStateUnknown(tombstone));
        }
        for (key, obj) in list {
            st.push(key, DeltaType::Replaced, DeltaObject::Object(obj));
        }
    }

    /// The periodic resync, as client-go's `Resync`. With atomic events
    /// (the default) it queues one [`Entry::SyncAll`]: popped after every
    /// change queued before it, the store it is applied to is current.
    /// Without, it queues a [`DeltaType::Sync`] change for every known
    /// object with no change queued (a queued change would be newer than the
    /// store's copy).
    pub fn resync(&self) {
        let known = &self.shared.known_objects;
        let mut st = self.shared.state.lock();
        if self.shared.atomic_events {
            st.push_entry(Entry::SyncAll);
            drop(st);
            self.shared.item_ready.notify_one();
            return;
        }
        let queued: HashSet<Key> = st.items.iter().filter_map(Entry::change).map(|c| Arc::clone(&c.key)).collect();
        let mut synced = false;
        for key in known.list_keys() {
            if queued.contains(key.as_str()) {
                continue;
            }
            let Some(obj) = known.get_by_key(&key) else { continue };
            st.push(key.as_str().into(), DeltaType::Sync, DeltaObject::Object(obj));
            synced = true;
        }
        drop(st);
        if synced {
            self.shared.item_ready.notify_one();
        }
    }

    /// Waits for an entry, removes it and calls `process` with it and
    /// whether it belongs to the first list; returns it.
    ///
    /// Without atomic events `process` runs under the queue's lock, as in
    /// client-go, so that a relist in another task cannot slip between the
    /// pop and the store write `process` makes (it would see the key
    /// neither queued nor known, and a deletion in it would be lost);
    /// calling this queue from `process` then deadlocks. With them it runs
    /// unlocked while the queue is short
    /// ([`RealFifoOptions::unlock_while_processing`]). Either way the entry
    /// counts as popped ([`has_synced`](Self::has_synced), reached lists)
    /// only once `process` returned.
    ///
    /// Pops never overlap: a second pop waits until the first one's
    /// `process` returned. Changes still queued after
    /// [`close`](Self::close) are popped; then [`Error::Closed`].
    ///
    /// # Cancel safety
    /// Cancel safe: a change is removed and processed within one poll.
    pub async fn pop<F>(&self, process: F) -> Result<Entry<T>, Error>
    where
        F: FnOnce(&Entry<T>, bool),
    {
        let _pop = self.shared.pop.lock().await;
        loop {
            let notified = self.shared.item_ready.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            {
                let mut st = self.shared.state.lock();
                if let Some(entry) = st.items.pop_front() {
                    let initial = !st.has_synced();
                    st.give_back_room();
                    let mut st = self.while_processing(st, || process(&entry, initial));
                    st.note_popped(1);
                    return Ok(entry);
                }
                if st.closed {
                    return Err(Error::Closed);
                }
            }
            notified.await;
        }
    }

    /// Waits for changes, removes up to the batch size of them (client-go
    /// `PopBatch`), never mixing the first list's changes with later ones,
    /// and calls `process` with them, oldest first, and whether they belong
    /// to the first list.
    ///
    /// A batch holds each key at most once: a second change of a key ends
    /// it, so applying a batch's changes in any order gives the same store.
    /// A relist or resync entry ([`Entry::is_atomic`]) is a batch of its own.
    /// `process` runs under the queue's lock or not, as [`pop`](Self::pop)'s.
    ///
    /// # Cancel safety
    /// Cancel safe: changes are removed and processed within one poll.
    pub async fn pop_batch<F, R>(&self, process: F) -> Result<R, Error>
    where
        F: FnOnce(&[Entry<T>], bool) -> R,
    {
        let mut batch = self.shared.pop.lock().await;
        let mut process = Some(process);
        loop {
            let notified = self.shared.item_ready.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if let Some(done) = self.try_pop_batch(&mut batch, &mut process) {
                return done;
            }
            notified.await;
        }
    }

    /// Takes a batch and processes it, all under the lock; `None` if the
    /// queue is empty and still open (`process` is then still there).
    fn try_pop_batch<F, R>(&self, batch: &mut Vec<Entry<T>>, process: &mut Option<F>) -> Option<Result<R, Error>>
    where
        F: FnOnce(&[Entry<T>], bool) -> R,
    {
        let mut st = self.shared.state.lock();
        if st.items.is_empty() {
            return st.closed.then_some(Err(Error::Closed));
        }
        let initial = !st.has_synced();
        let mut limit = st.items.len().min(self.shared.batch_size);
        if st.initial_population_count > 0 {
            limit = limit.min(st.initial_population_count);
        }
        // A batch holds each key once, as client-go's: the next change of a
        // key already in it starts the next batch.
        // A relist or resync is processed alone, as client-go's unbatchable
        // deltas: it reads and writes the whole store.
        let take = if st.items.front().is_some_and(Entry::is_atomic) {
            1
        } else {
            let mut keys: HashSet<&str> = HashSet::with_capacity(limit);
            let take =
                st.items.iter().take(limit).take_while(|e| e.change().is_some_and(|c| keys.insert(&c.key))).count();
            drop(keys);
            take
        };
        batch.extend(st.items.drain(..take));
        st.give_back_room();
        let process = process.take()?;
        let mut result = None;
        let mut st = self.while_processing(st, || result = Some(process(batch, initial)));
        st.note_popped(take);
        drop(st);
        batch.clear();
        result.map(Ok)
    }

    /// Runs `process` on what was just popped, without the state lock if
    /// the queue may unlock while processing and is short (client-go
    /// `whileProcessing_locked`): the reflector then queues meanwhile
    /// rather than waiting, while a long queue makes it wait, so that the
    /// queue does not grow without bound. Returns the lock, held again.
    fn while_processing<'a>(
        &'a self,
        st: MutexGuard<'a, FifoState<T>>,
        process: impl FnOnce(),
    ) -> MutexGuard<'a, FifoState<T>> {
        if self.shared.unlock_while_processing && st.items.len() < self.shared.batch_size.saturating_mul(2) {
            drop(st);
            process();
            self.shared.state.lock()
        } else {
            process();
            st
        }
    }

    /// A watch bookmark at `resource_version`: reached, as a relist is,
    /// once every change queued before it has been popped (client-go 1.36
    /// queues bookmarks in order, so that a store whose selector hides the
    /// writes still reaches newer versions).
    pub(crate) fn bookmark(&self, resource_version: &str) {
        let mut st = self.shared.state.lock();
        let at = st.queued;
        st.pending_lists.push_back((at, resource_version.into()));
        st.note_reached_lists();
    }

    /// The resourceVersion of the newest relist or bookmark whose changes
    /// have all been popped since the last call, if any: once those are
    /// processed, the store is at that version.
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
    /// its changes were popped (client-go `HasSynced`).
    pub fn has_synced(&self) -> bool {
        self.shared.state.lock().has_synced()
    }

    /// A copy of the queued entries, oldest first.
    pub fn list(&self) -> Vec<Entry<T>> {
        self.shared.state.lock().items.iter().cloned().collect()
    }

    /// Number of entries queued (a relist or resync counts one).
    pub fn len(&self) -> usize {
        self.shared.state.lock().items.len()
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod upstream_tests;
