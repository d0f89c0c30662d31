//! Typed reads of an informer's cache, as client-go's generated listers
//! (`PodLister`, `PodNamespaceLister`), written once for every kind.
//!
//! Get a [`Lister`] from [`SharedIndexInformer::lister`](super::SharedIndexInformer::lister)
//! (or [`Lister::new`] over any [`Store`]). Reads never touch the network
//! and never block writers for long; the objects are shared `Arc`s, so treat
//! them as read-only snapshots and clone before changing one.
//!
//! - [`Lister::list`]: everything matching a label selector, all namespaces.
//! - [`Lister::get`]: one cluster-scoped object by name.
//! - [`Lister::namespace`]: a [`NamespaceLister`] whose `list` goes through
//!   the namespace index and whose `get` finds `namespace/name`.
//!
//! A missing object is [`Error::NotFound`], as client-go's listers
//! return a NotFound API error.

use std::fmt;
use std::sync::Arc;

use super::store::{self, NAMESPACE_INDEX, Store};
use crate::object::{Metadata as _, Object, short_type_name};
use crate::selector::LabelSelector;

/// Errors of listers.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No object with that name is in the cache.
    #[error("{kind} {name:?} not found{}", namespace.as_ref().map(|ns| format!(" in namespace {ns:?}")).unwrap_or_default())]
    NotFound {
        /// The kind looked for, e.g. `Pod`.
        kind: &'static str,
        /// The namespace looked in; `None` for a cluster-wide lookup.
        namespace: Option<String>,
        /// The name looked for.
        name: String,
    },
    /// An index lookup named an index the cache does not have.
    #[error("looking up index")]
    Index(#[source] store::Error),
}

impl Error {
    /// Whether the object is not in the cache, as `errors.IsNotFound` on a
    /// client-go lister's error.
    pub fn is_not_found(&self) -> bool {
        matches!(self, Error::NotFound { .. })
    }
}

/// Reads objects of kind `K` from a cache (client-go `GenericLister`).
pub struct Lister<K> {
    store: Store<K>,
}

impl<K> Clone for Lister<K> {
    fn clone(&self) -> Self {
        Lister { store: self.store.clone() }
    }
}

impl<K> fmt::Debug for Lister<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Lister").field(&self.store).finish()
    }
}

fn select<K: Object>(objects: Vec<Arc<K>>, selector: &LabelSelector) -> Vec<Arc<K>> {
    if selector.is_everything() {
        return objects;
    }
    objects.into_iter().filter(|o| selector.matches(&o.metadata().labels())).collect()
}

impl<K: Object> Lister<K> {
    /// A lister reading `store`, usually an informer's cache.
    pub fn new(store: Store<K>) -> Self {
        Lister { store }
    }

    /// The cache underneath.
    pub fn store(&self) -> &Store<K> {
        &self.store
    }

    /// Objects whose labels match `selector`, in all namespaces.
    pub fn list(&self, selector: &LabelSelector) -> Vec<Arc<K>> {
        select(self.store.list(), selector)
    }

    /// The object named `name` (cluster-scoped kinds; for namespaced ones
    /// use [`namespace`](Self::namespace)).
    pub fn get(&self, name: &str) -> Result<Arc<K>, Error> {
        self.store.get_by_key(name).ok_or_else(|| Error::NotFound {
            kind: short_type_name::<K>(),
            namespace: None,
            name: name.to_owned(),
        })
    }

    /// Objects whose index `index_name` contains `value`.
    pub fn by_index(&self, index_name: &str, value: &str) -> Result<Vec<Arc<K>>, Error> {
        self.store.by_index(index_name, value).map_err(Error::Index)
    }

    /// Reads within one namespace.
    pub fn namespace(&self, namespace: &str) -> NamespaceLister<K> {
        NamespaceLister { store: self.store.clone(), namespace: namespace.to_owned() }
    }
}

/// Reads objects of kind `K` in one namespace (client-go
/// `GenericNamespaceLister`).
pub struct NamespaceLister<K> {
    store: Store<K>,
    namespace: String,
}

impl<K> fmt::Debug for NamespaceLister<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NamespaceLister").field("namespace", &self.namespace).finish_non_exhaustive()
    }
}

impl<K: Object> NamespaceLister<K> {
    /// The namespace this lister reads.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// Objects of this namespace whose labels match `selector`.
    pub fn list(&self, selector: &LabelSelector) -> Vec<Arc<K>> {
        let objects = match self.store.by_index(NAMESPACE_INDEX, &self.namespace) {
            Ok(objects) => objects,
            // A cache built without the namespace index: scan it all.
            Err(_) => self
                .store
                .list()
                .into_iter()
                .filter(|o| o.metadata().namespace().unwrap_or_default() == self.namespace)
                .collect(),
        };
        select(objects, selector)
    }

    /// The object `namespace/name`.
    pub fn get(&self, name: &str) -> Result<Arc<K>, Error> {
        let key = format!("{}/{}", self.namespace, name);
        self.store.get_by_key(&key).ok_or_else(|| Error::NotFound {
            kind: short_type_name::<K>(),
            namespace: Some(self.namespace.clone()),
            name: name.to_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::store::Writer;
    use crate::testing::{Pod, pod};

    fn labelled(ns: &str, name: &str, app: &str) -> Arc<Pod> {
        let mut p = pod(ns, name, "n");
        p.metadata.labels = Some(crate::Map::from([("app", app)]));
        Arc::new(p)
    }

    fn lister() -> (Writer<Pod>, Lister<Pod>) {
        let mut w = Writer::new();
        w.add(labelled("a", "web-1", "web"));
        w.add(labelled("a", "db-1", "db"));
        w.add(labelled("b", "web-2", "web"));
        w.add(Arc::new(pod("", "node-scoped", "n")));
        let l = Lister::new(w.store());
        (w, l)
    }

    fn names(mut v: Vec<Arc<Pod>>) -> Vec<String> {
        v.sort_by(|x, y| x.metadata.name.cmp(&y.metadata.name));
        v.iter().map(|p| p.metadata.name.clone().unwrap_or_default()).collect()
    }

    #[test]
    fn list_filters_by_labels_across_namespaces() {
        let (_w, l) = lister();
        assert_eq!(l.list(&LabelSelector::everything()).len(), 4);
        let web = LabelSelector::parse("app=web").unwrap();
        assert_eq!(names(l.list(&web)), ["web-1", "web-2"]);
        assert!(l.list(&LabelSelector::nothing()).is_empty());
    }

    #[test]
    fn namespace_list_uses_namespace_only() {
        let (_w, l) = lister();
        assert_eq!(names(l.namespace("a").list(&LabelSelector::everything())), ["db-1", "web-1"]);
        let web = LabelSelector::parse("app=web").unwrap();
        assert_eq!(names(l.namespace("b").list(&web)), ["web-2"]);
        assert!(l.namespace("c").list(&web).is_empty());
    }

    #[test]
    fn gets_and_not_found() {
        let (_w, l) = lister();
        assert_eq!(l.namespace("a").get("web-1").unwrap().metadata.name.as_deref(), Some("web-1"));
        assert_eq!(l.get("node-scoped").unwrap().metadata.name.as_deref(), Some("node-scoped"));
        let err = l.namespace("b").get("web-1").unwrap_err();
        assert!(err.is_not_found());
        assert_eq!(err, Error::NotFound { kind: "Pod", namespace: Some("b".into()), name: "web-1".into() });
        assert_eq!(err.to_string(), r#"Pod "web-1" not found in namespace "b""#);
        assert_eq!(l.get("nope").unwrap_err().to_string(), r#"Pod "nope" not found"#);
    }

    #[test]
    fn lister_sees_later_writes() {
        let (mut w, l) = lister();
        w.add(labelled("c", "late", "web"));
        assert!(l.namespace("c").get("late").is_ok());
        w.delete_by_key("c/late");
        assert!(l.namespace("c").get("late").unwrap_err().is_not_found());
    }
}
