//! How the informer applies a [`RealFifo`](crate::cache::RealFifo)'s atomic
//! entries (client-go 1.36's `AtomicFIFO`): a relist and a resync, each
//! popped as one entry.

use std::collections::HashSet;
use std::sync::Arc;

use super::{Core, Notification};
use crate::cache::delta_fifo::{DeletedFinalStateUnknown, DeltaObject};
use crate::cache::real_fifo::ReplacedAll;
use crate::object::{Metadata as _, Object};

impl<K: Object + Send + Sync + 'static> Core<K> {
    /// A relist (client-go `processReplacedAllInfo`): the cache takes the
    /// whole list in one write, so that no reader (nor handler) sees half
    /// of it; then the handlers are told of every cached object the list
    /// lacks (a tombstone with its last state, in key order), then of every
    /// listed object in list order: an update of the cached one (for
    /// handlers asking for resyncs only, if its resourceVersion is
    /// unchanged), or an add.
    pub(super) fn apply_replaced_all(&mut self, all: &ReplacedAll<K>, is_in_initial_list: bool) {
        let listed: HashSet<&str> = all.objects.iter().map(|(key, _)| &**key).collect();
        let mut gone: Vec<String> = self.writer.list_keys().into_iter().filter(|k| !listed.contains(k.as_str())).collect();
        // Sorted so handlers see the same order each time (the cache has none).
        gone.sort_unstable();
        let deletions: Vec<DeletedFinalStateUnknown<K>> = gone
            .into_iter()
            .map(|key| {
                let obj = self.writer.get_by_key(&key);
                DeletedFinalStateUnknown { key, obj }
            })
            .collect();
        let olds: Vec<Option<Arc<K>>> = all.objects.iter().map(|(key, _)| self.writer.get_by_key(key)).collect();
        drop(listed);

        self.writer.replace_keyed(all.objects.iter().map(|(key, obj)| (Arc::clone(key), Arc::clone(obj))));

        for tombstone in deletions {
            self.processor.distribute(Notification::Delete(DeltaObject::DeletedFinalStateUnknown(tombstone)), false);
        }
        for ((_, obj), old) in all.objects.iter().zip(olds) {
            match old {
                Some(old) => {
                    let is_sync = old.metadata().resource_version() == obj.metadata().resource_version();
                    self.processor.distribute(Notification::Update(old, Arc::clone(obj)), is_sync);
                }
                None => self.processor.distribute(Notification::Add(Arc::clone(obj), is_in_initial_list), false),
            }
        }
    }

    /// A resync (client-go's `SyncAll`): every cached object again, as an
    /// update from itself, to the handlers whose resync is due.
    pub(super) fn apply_sync_all(&mut self) {
        for obj in self.writer.list() {
            self.processor.distribute(Notification::Update(Arc::clone(&obj), obj), true);
        }
    }
}
