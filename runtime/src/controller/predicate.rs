//! Which updates are worth a reconcile.

use std::fmt;
use std::sync::Arc;

use crate::object::{Metadata, Object};

/// Decides whether an update (old, new) of an object enqueues a reconcile
/// (controller-runtime's `predicate`, kube-runtime's `predicates`).
/// Additions and deletions always pass; updates pass when the predicate
/// says so. The stock ones compare one part of the metadata; combine them
/// with [`or`](Self::or) and [`and`](Self::and), or write any function.
///
/// `generation_changed` is the one that keeps a controller from
/// reconciling its own status writes: the apiserver bumps
/// `metadata.generation` when the spec changes (and when deletion starts
/// on an object with finalizers), never for status or most metadata. It
/// also drops periodic resyncs.
pub struct Predicate<K>(Arc<UpdateFilter<K>>);

type UpdateFilter<K> = dyn Fn(&K, &K) -> bool + Send + Sync;

impl<K> Clone for Predicate<K> {
    fn clone(&self) -> Self {
        Predicate(self.0.clone())
    }
}

impl<K> fmt::Debug for Predicate<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Predicate")
    }
}

impl<K: 'static> Predicate<K> {
    /// An update passes when `f(old, new)` is true.
    pub fn new(f: impl Fn(&K, &K) -> bool + Send + Sync + 'static) -> Self {
        Predicate(Arc::new(f))
    }

    /// Whether the update (old, new) passes.
    pub fn accepts(&self, old: &K, new: &K) -> bool {
        (self.0)(old, new)
    }

    /// Passes when either passes.
    #[must_use]
    pub fn or(self, other: Predicate<K>) -> Self {
        Predicate::new(move |old, new| self.accepts(old, new) || other.accepts(old, new))
    }

    /// Passes when both pass.
    #[must_use]
    pub fn and(self, other: Predicate<K>) -> Self {
        Predicate::new(move |old, new| self.accepts(old, new) && other.accepts(old, new))
    }
}

impl<K: Object + 'static> Predicate<K> {
    /// `metadata.generation` changed: the spec did (controller-runtime's
    /// `GenerationChangedPredicate`). Kinds without a generation pass
    /// every update.
    pub fn generation_changed() -> Self {
        Predicate::new(|old: &K, new: &K| {
            let (old, new) = (old.metadata().generation(), new.metadata().generation());
            old.is_none() || new.is_none() || old != new
        })
    }

    /// `metadata.labels` changed.
    pub fn labels_changed() -> Self {
        Predicate::new(|old: &K, new: &K| old.metadata().labels() != new.metadata().labels())
    }

    /// `metadata.annotations` changed.
    pub fn annotations_changed() -> Self {
        Predicate::new(|old: &K, new: &K| old.metadata().annotations() != new.metadata().annotations())
    }

    /// `metadata.finalizers` changed.
    pub fn finalizers_changed() -> Self {
        Predicate::new(|old: &K, new: &K| old.metadata().finalizers() != new.metadata().finalizers())
    }

    /// `metadata.resourceVersion` changed: any write, but not a periodic
    /// resync (controller-runtime's `ResourceVersionChangedPredicate`).
    pub fn resource_version_changed() -> Self {
        Predicate::new(|old: &K, new: &K| old.metadata().resource_version() != new.metadata().resource_version())
    }
}

#[cfg(test)]
mod tests {
    use super::Predicate;
    use crate::Map;
    use crate::testing::{Pod, pod};

    fn with(generation: Option<i64>, resource_version: &str) -> Pod {
        let mut p = pod("ns", "a", "node");
        p.metadata.generation = generation;
        p.metadata.resource_version = Some(resource_version.to_owned());
        p
    }

    #[test]
    fn generation_changed_drops_status_writes_and_resyncs() {
        let p = Predicate::<Pod>::generation_changed();
        assert!(!p.accepts(&with(Some(1), "1"), &with(Some(1), "2")), "a status write");
        assert!(!p.accepts(&with(Some(1), "2"), &with(Some(1), "2")), "a resync");
        assert!(p.accepts(&with(Some(1), "2"), &with(Some(2), "3")), "a spec change");
        assert!(p.accepts(&with(None, "2"), &with(None, "3")), "a kind without generations");
    }

    #[test]
    fn stock_predicates_compare_their_part_and_combine() {
        let old = with(Some(1), "1");
        let mut labelled = with(Some(1), "2");
        labelled.metadata.labels = Some(Map::from([("a", "b")]));
        let mut finalized = with(Some(1), "2");
        finalized.metadata.other.insert("finalizers".into(), serde_json::json!(["x/y"]));
        assert!(Predicate::<Pod>::labels_changed().accepts(&old, &labelled));
        assert!(!Predicate::<Pod>::labels_changed().accepts(&old, &finalized));
        assert!(Predicate::<Pod>::finalizers_changed().accepts(&old, &finalized));
        assert!(!Predicate::<Pod>::annotations_changed().accepts(&old, &labelled));
        assert!(Predicate::<Pod>::resource_version_changed().accepts(&old, &labelled));
        let either = Predicate::<Pod>::generation_changed().or(Predicate::labels_changed());
        assert!(either.accepts(&old, &labelled));
        assert!(!either.accepts(&old, &finalized));
        let both = Predicate::<Pod>::resource_version_changed().and(Predicate::labels_changed());
        assert!(both.accepts(&old, &labelled));
        assert!(!both.accepts(&old, &finalized));
    }
}
