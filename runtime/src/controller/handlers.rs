//! The event handlers that turn informer notifications into primary keys
//! on a controller's queue.

use std::sync::Arc;

use super::Predicate;
use crate::cache::{DeltaObject, ResourceEventHandler};
use crate::object::{Metadata, Object, object_key};
use crate::workqueue::Queue;

/// Whether every predicate accepts the update.
fn accepted<K: 'static>(predicates: &[Predicate<K>], old: &K, new: &K) -> bool {
    predicates.iter().all(|p| p.accepts(old, new))
}

/// The primary kind's own changes: each enqueues the object's key.
pub(super) struct EnqueuePrimary<K> {
    pub(super) queue: Queue<String>,
    pub(super) predicates: Vec<Predicate<K>>,
}

impl<K: Object + Send + Sync + 'static> ResourceEventHandler<K> for EnqueuePrimary<K> {
    fn on_add(&self, obj: &Arc<K>, _is_in_initial_list: bool) {
        self.queue.add(object_key(&**obj));
    }
    fn on_update(&self, old: &Arc<K>, new: &Arc<K>) {
        if accepted(&self.predicates, old, new) {
            self.queue.add(object_key(&**new));
        }
    }
    fn on_delete(&self, obj: &DeltaObject<K>) {
        match obj {
            DeltaObject::Object(obj) => self.queue.add(object_key(&**obj)),
            DeltaObject::DeletedFinalStateUnknown(tombstone) => self.queue.add(tombstone.key.clone()),
        }
    }
}

/// Whose objects an owned kind's objects are: the primary kind's group,
/// kind and scope.
#[derive(Clone)]
pub(super) struct OwnerKind {
    pub(super) group: &'static str,
    pub(super) kind: &'static str,
    pub(super) namespaced: bool,
}

impl OwnerKind {
    /// The key of the primary object that controls `obj`, if one does.
    fn owner_key<C: Object>(&self, obj: &C) -> Option<String> {
        let owner = obj.metadata().controller_reference()?;
        if !owner.refers_to_kind(self.group, self.kind) {
            return None;
        }
        // An owner is in its object's namespace, or cluster-scoped.
        match (self.namespaced, obj.metadata().namespace()) {
            (true, Some(namespace)) if !namespace.is_empty() => Some(format!("{namespace}/{}", owner.name)),
            (true, _) => None,
            (false, _) => Some(owner.name.to_string()),
        }
    }
}

/// An owned kind's changes: each enqueues the controlling primary object.
pub(super) struct EnqueueOwner<C> {
    pub(super) queue: Queue<String>,
    pub(super) owner: OwnerKind,
    pub(super) predicates: Vec<Predicate<C>>,
}

impl<C: Object + Send + Sync + 'static> ResourceEventHandler<C> for EnqueueOwner<C> {
    fn on_add(&self, obj: &Arc<C>, _is_in_initial_list: bool) {
        if let Some(key) = self.owner.owner_key(&**obj) {
            self.queue.add(key);
        }
    }
    fn on_update(&self, old: &Arc<C>, new: &Arc<C>) {
        if !accepted(&self.predicates, old, new) {
            return;
        }
        // A change of owner tells both the old and the new one.
        let (old, new) = (self.owner.owner_key(&**old), self.owner.owner_key(&**new));
        if let Some(key) = old.filter(|old| new.as_ref() != Some(old)) {
            self.queue.add(key);
        }
        if let Some(key) = new {
            self.queue.add(key);
        }
    }
    fn on_delete(&self, obj: &DeltaObject<C>) {
        let last = match obj {
            DeltaObject::Object(obj) => Some(obj),
            DeltaObject::DeletedFinalStateUnknown(tombstone) => tombstone.obj.as_ref(),
        };
        if let Some(key) = last.and_then(|obj| self.owner.owner_key(&**obj)) {
            self.queue.add(key);
        }
    }
}

/// Maps a watched object to the primary keys it concerns.
pub(super) type Mapper<W> = Arc<dyn Fn(&W) -> Vec<String> + Send + Sync>;

/// A watched kind's changes: each enqueues what the mapper answers.
pub(super) struct EnqueueMapped<W> {
    pub(super) queue: Queue<String>,
    pub(super) mapper: Mapper<W>,
    pub(super) predicates: Vec<Predicate<W>>,
}

impl<W: Object + Send + Sync + 'static> EnqueueMapped<W> {
    fn enqueue(&self, obj: &W) {
        for key in (self.mapper)(obj) {
            self.queue.add(key);
        }
    }
}

impl<W: Object + Send + Sync + 'static> ResourceEventHandler<W> for EnqueueMapped<W> {
    fn on_add(&self, obj: &Arc<W>, _is_in_initial_list: bool) {
        self.enqueue(obj);
    }
    fn on_update(&self, old: &Arc<W>, new: &Arc<W>) {
        if accepted(&self.predicates, old, new) {
            self.enqueue(old);
            self.enqueue(new);
        }
    }
    fn on_delete(&self, obj: &DeltaObject<W>) {
        match obj {
            DeltaObject::Object(obj) => self.enqueue(obj),
            DeltaObject::DeletedFinalStateUnknown(tombstone) => {
                if let Some(obj) = &tombstone.obj {
                    self.enqueue(obj);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::{EnqueueOwner, OwnerKind};
    use crate::cache::{DeletedFinalStateUnknown, DeltaObject, ResourceEventHandler};
    use crate::object::{Metadata, OwnerReference};
    use crate::testing::{Pod, pod};
    use crate::workqueue::Queue;

    fn owned(namespace: &str, owner: Option<(&str, &str, &str)>, controller: bool) -> Arc<Pod> {
        let mut p = pod(namespace, "child", "node");
        if let Some((api_version, kind, name)) = owner {
            p.metadata.set_owner_references(vec![OwnerReference {
                api_version: api_version.into(),
                kind: kind.into(),
                name: name.into(),
                uid: "u".into(),
                controller: Some(controller),
                block_owner_deletion: None,
            }]);
        }
        Arc::new(p)
    }

    fn drain(queue: &Queue<String>) -> Vec<String> {
        let mut keys = Vec::new();
        while !queue.is_empty() {
            let key = futures_util::FutureExt::now_or_never(queue.get()).flatten().unwrap();
            queue.done(&key);
            keys.push(key);
        }
        keys.sort();
        keys
    }

    #[tokio::test]
    async fn an_owned_object_enqueues_its_controlling_owner_of_the_primary_kind_only() {
        let queue = Queue::new();
        let handler = EnqueueOwner {
            queue: queue.clone(),
            owner: OwnerKind { group: "example.com", kind: "Greeting", namespaced: true },
            predicates: Vec::new(),
        };
        handler.on_add(&owned("ns", Some(("example.com/v1", "Greeting", "g")), true), true);
        // Another version of the same group and kind is the same owner.
        handler.on_add(&owned("ns", Some(("example.com/v2", "Greeting", "h")), true), true);
        // Not the controller, another kind, another group, no owner: nothing.
        handler.on_add(&owned("ns", Some(("example.com/v1", "Greeting", "x")), false), true);
        handler.on_add(&owned("ns", Some(("example.com/v1", "Other", "x")), true), true);
        handler.on_add(&owned("ns", Some(("other.com/v1", "Greeting", "x")), true), true);
        handler.on_add(&owned("ns", None, true), true);
        assert_eq!(drain(&queue), ["ns/g", "ns/h"]);

        // An owner change tells both; a deletion (even a tombstone's last
        // state) tells the owner.
        let from = owned("ns", Some(("example.com/v1", "Greeting", "a")), true);
        let to = owned("ns", Some(("example.com/v1", "Greeting", "b")), true);
        handler.on_update(&from, &to);
        let tombstone = DeletedFinalStateUnknown { key: "ns/child".into(), obj: Some(from.clone()) };
        handler.on_delete(&DeltaObject::DeletedFinalStateUnknown(tombstone));
        handler.on_delete(&DeltaObject::Object(owned("other", Some(("example.com/v1", "Greeting", "c")), true)));
        assert_eq!(drain(&queue), ["ns/a", "ns/b", "other/c"]);
    }
}
