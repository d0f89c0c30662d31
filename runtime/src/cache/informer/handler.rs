//! What an informer calls when objects change.

use std::fmt;
use std::sync::Arc;

use crate::cache::delta_fifo::DeltaObject;
use crate::object::{Object, object_key};
use crate::workqueue::Queue;

/// Receives an informer's notifications (client-go `ResourceEventHandler`).
///
/// Each handler has its own delivery task and an unbounded buffer, so a
/// slow handler delays only itself. Methods are called one at a time, in
/// order, from that task: keep them short and non-blocking (push keys to a
/// [`workqueue`](crate::workqueue) and do the work elsewhere); a handler
/// that blocks holds a runtime worker thread.
pub trait ResourceEventHandler<K>: Send + Sync + 'static {
    /// An object appeared; `is_in_initial_list` if it came with the initial
    /// list (or is a current object replayed to a handler added late).
    fn on_add(&self, obj: &Arc<K>, is_in_initial_list: bool) {
        let _ = (obj, is_in_initial_list);
    }
    /// An object changed, or (same resourceVersion) a periodic resync
    /// re-delivered it.
    fn on_update(&self, old: &Arc<K>, new: &Arc<K>) {
        let _ = (old, new);
    }
    /// An object went away. A [`DeltaObject::DeletedFinalStateUnknown`]
    /// tombstone means the deletion was missed while the watch was down and
    /// noticed in a relist; its object is the last state the cache had.
    fn on_delete(&self, obj: &DeltaObject<K>) {
        let _ = obj;
    }
}

type AddFn<K> = Box<dyn Fn(&Arc<K>, bool) + Send + Sync>;
type UpdateFn<K> = Box<dyn Fn(&Arc<K>, &Arc<K>) + Send + Sync>;
type DeleteFn<K> = Box<dyn Fn(&DeltaObject<K>) + Send + Sync>;

/// A [`ResourceEventHandler`] made of closures; a missing one ignores
/// that kind of notification.
///
/// ```ignore
/// informer.add_event_handler(
///     ResourceEventHandlerFuncs::new()
///         .on_add(|pod: &Arc<Pod>, _| queue.add(key(pod)))
///         .on_delete(|obj| { /* ... */ }),
/// )?;
/// ```
pub struct ResourceEventHandlerFuncs<K> {
    add: Option<AddFn<K>>,
    update: Option<UpdateFn<K>>,
    delete: Option<DeleteFn<K>>,
}

impl<K> Default for ResourceEventHandlerFuncs<K> {
    fn default() -> Self {
        ResourceEventHandlerFuncs { add: None, update: None, delete: None }
    }
}

impl<K> fmt::Debug for ResourceEventHandlerFuncs<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResourceEventHandlerFuncs")
            .field("add", &self.add.is_some())
            .field("update", &self.update.is_some())
            .field("delete", &self.delete.is_some())
            .finish()
    }
}

impl<K> ResourceEventHandlerFuncs<K> {
    /// A handler that ignores every notification until closures are set.
    pub fn new() -> Self {
        Self::default()
    }
    /// Calls `f` for [`ResourceEventHandler::on_add`].
    #[must_use]
    pub fn on_add(mut self, f: impl Fn(&Arc<K>, bool) + Send + Sync + 'static) -> Self {
        self.add = Some(Box::new(f));
        self
    }
    /// Calls `f` for [`ResourceEventHandler::on_update`].
    #[must_use]
    pub fn on_update(mut self, f: impl Fn(&Arc<K>, &Arc<K>) + Send + Sync + 'static) -> Self {
        self.update = Some(Box::new(f));
        self
    }
    /// Calls `f` for [`ResourceEventHandler::on_delete`].
    #[must_use]
    pub fn on_delete(mut self, f: impl Fn(&DeltaObject<K>) + Send + Sync + 'static) -> Self {
        self.delete = Some(Box::new(f));
        self
    }
}

impl<K: 'static> ResourceEventHandler<K> for ResourceEventHandlerFuncs<K> {
    fn on_add(&self, obj: &Arc<K>, is_in_initial_list: bool) {
        if let Some(f) = &self.add {
            f(obj, is_in_initial_list)
        }
    }
    fn on_update(&self, old: &Arc<K>, new: &Arc<K>) {
        if let Some(f) = &self.update {
            f(old, new)
        }
    }
    fn on_delete(&self, obj: &DeltaObject<K>) {
        if let Some(f) = &self.delete {
            f(obj)
        }
    }
}

impl<K, H: ResourceEventHandler<K> + ?Sized> ResourceEventHandler<K> for Arc<H> {
    fn on_add(&self, obj: &Arc<K>, is_in_initial_list: bool) {
        (**self).on_add(obj, is_in_initial_list)
    }
    fn on_update(&self, old: &Arc<K>, new: &Arc<K>) {
        (**self).on_update(old, new)
    }
    fn on_delete(&self, obj: &DeltaObject<K>) {
        (**self).on_delete(obj)
    }
}

/// Passes on only the notifications about objects `filter` accepts
/// (client-go `FilteringResourceEventHandler`). An update that makes an
/// object pass becomes an add, one that makes it fail becomes a delete of
/// the old state. Tombstones without a last known state pass through.
pub struct FilteringResourceEventHandler<K, H> {
    filter: Box<dyn Fn(&K) -> bool + Send + Sync>,
    handler: H,
}

impl<K, H: fmt::Debug> fmt::Debug for FilteringResourceEventHandler<K, H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FilteringResourceEventHandler").field("handler", &self.handler).finish_non_exhaustive()
    }
}

impl<K, H> FilteringResourceEventHandler<K, H> {
    /// Passes to `handler` only the notifications about objects `filter`
    /// returns true for.
    pub fn new(filter: impl Fn(&K) -> bool + Send + Sync + 'static, handler: H) -> Self {
        FilteringResourceEventHandler { filter: Box::new(filter), handler }
    }
}

impl<K: 'static, H: ResourceEventHandler<K>> ResourceEventHandler<K> for FilteringResourceEventHandler<K, H> {
    fn on_add(&self, obj: &Arc<K>, is_in_initial_list: bool) {
        if (self.filter)(obj) {
            self.handler.on_add(obj, is_in_initial_list);
        }
    }
    fn on_update(&self, old: &Arc<K>, new: &Arc<K>) {
        match ((self.filter)(old), (self.filter)(new)) {
            (true, true) => self.handler.on_update(old, new),
            (true, false) => self.handler.on_delete(&DeltaObject::Object(Arc::clone(old))),
            (false, true) => self.handler.on_add(new, false),
            (false, false) => {}
        }
    }
    fn on_delete(&self, obj: &DeltaObject<K>) {
        if obj.object().is_none_or(|o| (self.filter)(o)) {
            self.handler.on_delete(obj);
        }
    }
}

/// Adds the key (`namespace/name`) of every object added, updated or
/// deleted to a workqueue, a deletion missed while the watch was down
/// (a tombstone) included: what a controller registers on its informers
/// (client-go's `AddFunc: c.enqueue` with
/// `cache.DeletionHandlingMetaNamespaceKeyFunc`). Workers then take keys
/// from the queue and read the object from a lister; a key whose object
/// is gone means it was deleted.
///
/// ```no_run
/// # use k8s_client_runtime::cache::{EnqueueKeys, SharedIndexInformer};
/// # use k8s_client_runtime::workqueue::{RateLimitingQueue, default_controller_rate_limiter};
/// # fn f<K: k8s_client_runtime::Object + Send + Sync + 'static>(informer: SharedIndexInformer<K>)
/// #     -> Result<(), k8s_client_runtime::cache::informer::Error> {
/// let queue = RateLimitingQueue::<String>::new(default_controller_rate_limiter());
/// informer.add_event_handler(EnqueueKeys::new(&queue))?;
/// # Ok(()) }
/// ```
#[doc(alias = "DeletionHandlingMetaNamespaceKeyFunc")]
#[derive(Debug, Clone)]
pub struct EnqueueKeys {
    queue: Queue<String>,
}

impl EnqueueKeys {
    /// Adds keys to `queue` (any workqueue: a `RateLimitingQueue` or a
    /// `DelayingQueue` is one through `Deref`). The handler holds a clone of
    /// the queue, which is the same queue.
    pub fn new(queue: &Queue<String>) -> Self {
        EnqueueKeys { queue: queue.clone() }
    }
}

impl<K: Object + 'static> ResourceEventHandler<K> for EnqueueKeys {
    fn on_add(&self, obj: &Arc<K>, _is_in_initial_list: bool) {
        self.queue.add(object_key(&**obj));
    }
    fn on_update(&self, _old: &Arc<K>, new: &Arc<K>) {
        self.queue.add(object_key(&**new));
    }
    fn on_delete(&self, obj: &DeltaObject<K>) {
        match obj {
            DeltaObject::Object(obj) => self.queue.add(object_key(&**obj)),
            DeltaObject::DeletedFinalStateUnknown(tombstone) => self.queue.add(tombstone.key.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::{EnqueueKeys, ResourceEventHandler};
    use crate::cache::delta_fifo::{DeletedFinalStateUnknown, DeltaObject};
    use crate::testing::{Pod, pod};
    use crate::workqueue::{RateLimitingQueue, default_controller_rate_limiter};

    #[tokio::test]
    async fn every_notification_enqueues_the_objects_key_tombstones_included() {
        let queue = RateLimitingQueue::<String>::new(default_controller_rate_limiter());
        let handler = EnqueueKeys::new(&queue);
        let a = Arc::new(pod("ns", "a", "node"));
        ResourceEventHandler::<Pod>::on_add(&handler, &a, true);
        ResourceEventHandler::<Pod>::on_update(&handler, &a, &Arc::new(pod("ns", "b", "node")));
        ResourceEventHandler::<Pod>::on_delete(&handler, &DeltaObject::Object(Arc::new(pod("other", "c", "node"))));
        let tombstone = DeletedFinalStateUnknown { key: "gone/d".to_owned(), obj: None };
        ResourceEventHandler::<Pod>::on_delete(&handler, &DeltaObject::DeletedFinalStateUnknown(tombstone));
        // A key already waiting is queued once, as client-go's queue does.
        ResourceEventHandler::<Pod>::on_add(&handler, &a, false);
        let mut keys = Vec::new();
        while !queue.is_empty() {
            let key = queue.get().await.unwrap();
            queue.done(&key);
            keys.push(key);
        }
        assert_eq!(keys, ["ns/a", "ns/b", "other/c", "gone/d"]);
    }
}
