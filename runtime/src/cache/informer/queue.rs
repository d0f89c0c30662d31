//! The queue between an informer's reflector and its cache: a
//! [`RealFifo`] (the default, as client-go's informers since 1.33, with
//! atomic relists as since 1.36) or a [`DeltaFifo`], chosen with
//! [`QueueKind`].

use std::sync::Arc;

use crate::cache::delta_fifo::{self, DeltaFifo, DeltaFifoOptions, KnownObjects};
use crate::cache::real_fifo::{self, Entry, RealFifo, RealFifoOptions};
use crate::cache::reflector::TransformFn;
use crate::cache::reflector_store::ReflectorStore;
use crate::cache::store::Key;
use crate::object::Object;

use super::Core;
use super::metrics::HistogramMetric;

/// Observes the seconds from its start to its drop: the time one pop's
/// changes take to apply.
struct Timer<'a> {
    metric: &'a dyn HistogramMetric,
    start: std::time::Instant,
}

impl<'a> Timer<'a> {
    fn start(metric: &'a dyn HistogramMetric) -> Self {
        Timer { metric, start: std::time::Instant::now() }
    }
}

impl Drop for Timer<'_> {
    fn drop(&mut self) {
        self.metric.observe(self.start.elapsed().as_secs_f64());
    }
}

/// Which queue an informer puts between its reflector and its cache.
///
/// All deliver every object's changes in order; they differ in what they
/// merge, in the order across objects and in how a relist reaches the
/// cache:
///
/// | | [`RealFifo`](QueueKind::RealFifo) (default) | [`RealFifoPerObject`](QueueKind::RealFifoPerObject) | [`DeltaFifo`](QueueKind::DeltaFifo) |
/// |---|---|---|---|
/// | order | every change as it came, across all objects | the same | objects in the order first queued; each object's changes together |
/// | several changes of one object while the cache is busy | each one is applied and notified | the same | each one, in one pop |
/// | deletion of an object never seen (created and deleted between two lists) | a delete notification | the same | dropped |
/// | applied | in batches of up to 1,000 changes | the same | one object at a time |
/// | a relist | the cache takes the whole list in one write, then handlers hear of the objects gone (tombstones, by key), then of the listed ones (list order) | a change per object, applied and notified one by one: the cache holds part of the list meanwhile | the same, grouped per object |
/// | a resync | every cached object, once the changes queued before it are applied | every cached object with no change queued | the same |
///
/// client-go's informers use a RealFIFO since 1.33 (the `InOrderInformers`
/// gate, GA in 1.36, where the DeltaFIFO is on its way out), with atomic
/// relists and resyncs since 1.36 (the `AtomicFIFO` gate, beta, on by
/// default). Choose another only for code that relies on its behaviour.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[doc(alias = "InOrderInformers")]
#[doc(alias = "AtomicFIFO")]
pub enum QueueKind {
    /// Every change in the order it came, a relist or resync applied at
    /// once ([`RealFifo`] with [atomic events](RealFifoOptions::atomic_events)).
    #[default]
    RealFifo,
    /// Every change in the order it came, a relist or resync as a change
    /// per object (client-go 1.33 to 1.35's RealFIFO, or 1.36's with the
    /// `AtomicFIFO` gate off).
    RealFifoPerObject,
    /// Changes grouped per object ([`DeltaFifo`]).
    DeltaFifo,
}

/// The informer's queue, either kind.
pub(super) enum InformerQueue<K> {
    Real(RealFifo<K>),
    Deltas(DeltaFifo<K>),
}

impl<K> Clone for InformerQueue<K> {
    fn clone(&self) -> Self {
        match self {
            InformerQueue::Real(q) => InformerQueue::Real(q.clone()),
            InformerQueue::Deltas(q) => InformerQueue::Deltas(q.clone()),
        }
    }
}

/// The queue was closed and is empty.
pub(super) struct Closed;

impl<K: Object + Send + Sync + 'static> InformerQueue<K> {
    pub(super) fn new(kind: QueueKind, known: Arc<dyn KnownObjects<K>>, transform: Option<TransformFn<K>>) -> Self {
        match kind {
            QueueKind::RealFifo | QueueKind::RealFifoPerObject => {
                let mut options = RealFifoOptions::new(known).atomic_events(kind == QueueKind::RealFifo);
                if let Some(t) = transform {
                    options = options.transform(t);
                }
                InformerQueue::Real(RealFifo::new(options))
            }
            QueueKind::DeltaFifo => {
                let mut options = DeltaFifoOptions::default().known_objects(known);
                if let Some(t) = transform {
                    options = options.transform(t);
                }
                InformerQueue::Deltas(DeltaFifo::new(options))
            }
        }
    }

    /// Pops what is ready (a batch, or one object's deltas) and applies it
    /// to `core`, the cache and the handlers, in order.
    ///
    /// # Cancel safety
    /// Cancel safe: both queues remove and process within one poll.
    pub(super) async fn pop_into(
        &self,
        core: &parking_lot::Mutex<Core<K>>,
        latency: Option<&dyn HistogramMetric>,
    ) -> Result<(), Closed> {
        match self {
            InformerQueue::Real(q) => {
                let popped = q
                    .pop_batch(|entries, initial| {
                        let _timer = latency.map(Timer::start);
                        let mut core = core.lock();
                        for entry in entries {
                            match entry {
                                Entry::Change(change) => core.apply(&change.key, &change.delta, initial),
                                Entry::ReplacedAll(all) => core.apply_replaced_all(all, initial),
                                Entry::SyncAll => core.apply_sync_all(),
                            }
                        }
                    })
                    .await;
                match popped {
                    Ok(()) => {}
                    Err(real_fifo::Error::Closed) => return Err(Closed),
                }
            }
            InformerQueue::Deltas(q) => {
                let popped = q
                    .pop_keyed(|key, deltas, initial| {
                        let _timer = latency.map(Timer::start);
                        let mut core = core.lock();
                        for delta in deltas {
                            core.apply(key, delta, initial);
                        }
                        Ok(())
                    })
                    .await;
                if let Err(delta_fifo::Error::Closed) = popped {
                    return Err(Closed);
                }
            }
        }
        Ok(())
    }

    /// The newest relist or bookmark whose changes have all been popped
    /// since the last call.
    pub(super) fn take_reached_list(&self) -> Option<Arc<str>> {
        match self {
            InformerQueue::Real(q) => q.take_reached_list(),
            InformerQueue::Deltas(q) => q.take_reached_list(),
        }
    }

    pub(super) fn has_synced(&self) -> bool {
        match self {
            InformerQueue::Real(q) => q.has_synced(),
            InformerQueue::Deltas(q) => q.has_synced(),
        }
    }

    pub(super) fn len(&self) -> usize {
        match self {
            InformerQueue::Real(q) => q.len(),
            InformerQueue::Deltas(q) => q.len(),
        }
    }

    pub(super) fn close(&self) {
        match self {
            InformerQueue::Real(q) => q.close(),
            InformerQueue::Deltas(q) => q.close(),
        }
    }
}

impl<K: Send + Sync + 'static> ReflectorStore<K> for InformerQueue<K> {
    fn key(&self, obj: &K) -> Key {
        match self {
            InformerQueue::Real(q) => ReflectorStore::key(q, obj),
            InformerQueue::Deltas(q) => ReflectorStore::key(q, obj),
        }
    }
    fn transform(&self) -> Option<TransformFn<K>> {
        match self {
            InformerQueue::Real(q) => ReflectorStore::transform(q),
            InformerQueue::Deltas(q) => ReflectorStore::transform(q),
        }
    }
    fn add(&self, obj: Arc<K>) {
        match self {
            InformerQueue::Real(q) => ReflectorStore::add(q, obj),
            InformerQueue::Deltas(q) => ReflectorStore::add(q, obj),
        }
    }
    fn update(&self, obj: Arc<K>) {
        match self {
            InformerQueue::Real(q) => ReflectorStore::update(q, obj),
            InformerQueue::Deltas(q) => ReflectorStore::update(q, obj),
        }
    }
    fn delete(&self, obj: Arc<K>) {
        match self {
            InformerQueue::Real(q) => ReflectorStore::delete(q, obj),
            InformerQueue::Deltas(q) => ReflectorStore::delete(q, obj),
        }
    }
    fn replace(&self, list: Vec<(Key, Arc<K>)>, resource_version: &str) {
        match self {
            InformerQueue::Real(q) => ReflectorStore::replace(q, list, resource_version),
            InformerQueue::Deltas(q) => ReflectorStore::replace(q, list, resource_version),
        }
    }
    fn bookmark(&self, resource_version: &str) {
        match self {
            InformerQueue::Real(q) => ReflectorStore::bookmark(q, resource_version),
            InformerQueue::Deltas(q) => ReflectorStore::bookmark(q, resource_version),
        }
    }
    fn resync(&self) {
        match self {
            InformerQueue::Real(q) => ReflectorStore::resync(q),
            InformerQueue::Deltas(q) => ReflectorStore::resync(q),
        }
    }
}
