//! What a [`Reflector`](super::Reflector) writes to, as client-go's
//! `ReflectorStore`.
//!
//! A reflector turns a list/watch into calls on a [`ReflectorStore`]: the
//! objects of a full list (or of a watch-list's initial events) at once,
//! then one call per watch event, and a periodic resync. What the calls
//! mean is the implementation's business: [`DeltaFifo`] queues deltas per
//! key for an informer; another queue may keep one entry per event, or a
//! plain cache may apply them directly. Nothing here assumes deltas.
//!
//! Implement it to feed a reflector into a queue of your own; an informer
//! uses a [`RealFifo`] (or, if asked, a [`DeltaFifo`]).

use std::sync::Arc;

use super::delta_fifo::{DeltaFifo, DeltaType};
use super::real_fifo::RealFifo;
use super::reflector::TransformFn;
use super::store::Key;

/// Where a [`Reflector`](super::Reflector) puts what it lists and watches
/// (client-go `ReflectorStore`).
///
/// Every object is keyed by [`key`](Self::key): the reflector keys the
/// objects of a full list with it before handing them over, so the
/// implementation, and whatever it feeds, can keep those buffers rather
/// than making keys of their own. The calls return nothing: what to do with
/// objects a queue can no longer take (once closed, say) is the queue's
/// decision, as the reflector could do nothing better with an error.
///
/// The reflector keeps a handle to the queue for its periodic resyncs
/// beside the one its main loop writes through: implementations are
/// handles (a clone shares the queue), or are shared in an [`Arc`].
///
/// A queue with a transform (client-go `TransformingStore`) returns it
/// from [`transform`](Self::transform): the reflector runs it on every
/// object as it decodes it, while the object is still its own (the objects
/// of a watch-list's initial events too, before they pile up), so the
/// objects these calls receive are already transformed.
pub trait ReflectorStore<T>: Send + Sync {
    /// The key `obj` is filed under, `namespace/name` usually
    /// ([`object_key`](crate::object::object_key)).
    fn key(&self, obj: &T) -> Key;

    /// The transform to run on each object before it is handed over
    /// (client-go `TransformingStore.Transformer`); none by default.
    fn transform(&self) -> Option<TransformFn<T>> {
        None
    }

    /// A watch's `ADDED` event.
    fn add(&self, obj: Arc<T>);

    /// A watch's `MODIFIED` event.
    fn update(&self, obj: Arc<T>);

    /// A watch's `DELETED` event, carrying the object's last state.
    fn delete(&self, obj: Arc<T>);

    /// A full list at `resource_version`, each object with its
    /// [`key`](Self::key): it replaces whatever was known before, so the
    /// objects known but missing from it were deleted meanwhile.
    fn replace(&self, list: Vec<(Key, Arc<T>)>, resource_version: &str);

    /// A watch bookmark: the changes given before it are all the changes
    /// up to `resource_version`. A queue that keeps its reader's
    /// resourceVersion current reaches it once those changes are applied
    /// (client-go 1.36's bookmarks in the RealFIFO); others ignore it, as
    /// by default.
    fn bookmark(&self, resource_version: &str) {
        let _ = resource_version;
    }

    /// The periodic resync, asked for every
    /// [`resync_period`](super::ReflectorOptions::resync_period): an
    /// implementation that delivers its known objects again does it here;
    /// others ignore it.
    fn resync(&self);
}

impl<T, Q: ReflectorStore<T> + ?Sized> ReflectorStore<T> for Arc<Q> {
    fn key(&self, obj: &T) -> Key {
        (**self).key(obj)
    }
    fn transform(&self) -> Option<TransformFn<T>> {
        (**self).transform()
    }
    fn add(&self, obj: Arc<T>) {
        (**self).add(obj)
    }
    fn update(&self, obj: Arc<T>) {
        (**self).update(obj)
    }
    fn delete(&self, obj: Arc<T>) {
        (**self).delete(obj)
    }
    fn replace(&self, list: Vec<(Key, Arc<T>)>, resource_version: &str) {
        (**self).replace(list, resource_version)
    }
    fn bookmark(&self, resource_version: &str) {
        (**self).bookmark(resource_version)
    }
    fn resync(&self) {
        (**self).resync()
    }
}

/// Added, updated and deleted objects become [`Delta`](super::Delta)s of
/// their kind; a full list becomes `Replaced` (or `Sync`) deltas and
/// tombstones for the keys it lacks ([`DeltaFifo::replace`]); a resync
/// queues `Sync` deltas for the known objects ([`DeltaFifo::resync`]).
/// Objects arrive transformed, so the queue does not run its transform.
impl<T: Send + Sync + 'static> ReflectorStore<T> for DeltaFifo<T> {
    fn key(&self, obj: &T) -> Key {
        DeltaFifo::key(self, obj)
    }
    fn transform(&self) -> Option<TransformFn<T>> {
        DeltaFifo::transform(self)
    }
    fn add(&self, obj: Arc<T>) {
        self.queue_object(DeltaType::Added, obj)
    }
    fn update(&self, obj: Arc<T>) {
        self.queue_object(DeltaType::Updated, obj)
    }
    fn delete(&self, obj: Arc<T>) {
        self.queue_deletion(obj)
    }
    fn replace(&self, list: Vec<(Key, Arc<T>)>, resource_version: &str) {
        DeltaFifo::replace_keyed(self, list, resource_version)
    }
    fn resync(&self) {
        DeltaFifo::resync(self)
    }
}

/// Every call becomes an entry queued in order ([`RealFifo`]): a change, a
/// whole list ([`RealFifo::replace`]; without atomic events, tombstones
/// for the keys it lacks and a change per object) or a resync; a
/// bookmark's version is reached after the entries queued before it.
/// Objects arrive transformed, so the queue does not run its transform.
impl<T: Send + Sync + 'static> ReflectorStore<T> for RealFifo<T> {
    fn key(&self, obj: &T) -> Key {
        RealFifo::key(self, obj)
    }
    fn transform(&self) -> Option<TransformFn<T>> {
        RealFifo::transform(self)
    }
    fn add(&self, obj: Arc<T>) {
        self.queue(DeltaType::Added, obj)
    }
    fn update(&self, obj: Arc<T>) {
        self.queue(DeltaType::Updated, obj)
    }
    fn delete(&self, obj: Arc<T>) {
        self.queue(DeltaType::Deleted, obj)
    }
    fn replace(&self, list: Vec<(Key, Arc<T>)>, resource_version: &str) {
        RealFifo::replace_keyed(self, list, resource_version)
    }
    fn bookmark(&self, resource_version: &str) {
        RealFifo::bookmark(self, resource_version)
    }
    fn resync(&self) {
        RealFifo::resync(self)
    }
}
