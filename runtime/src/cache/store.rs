//! The in-memory object cache with secondary indexes, as client-go's
//! `cache.ThreadSafeStore` and `cache.Indexer`.
//!
//! [`ThreadSafeStore`] is the keyed map itself: you pass the keys.
//! [`Writer`] wraps it with a key function and is the one place that
//! changes it (the informer owns it); [`Store`] handles, cloned from the
//! writer, only read. Readers take a shared lock and never block each other.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use parking_lot::RwLock;

use crate::object::{Metadata, Object, object_key};

/// Name of the index [`Writer::new`] adds: objects by namespace.
pub const NAMESPACE_INDEX: &str = "namespace";

/// Computes the key of an object (client-go `KeyFunc`).
pub type KeyFn<T> = Arc<dyn Fn(&T) -> String + Send + Sync>;

/// An object's key (what a [`KeyFn`] made, `namespace/name` usually) as the
/// reflector, the queue and the cache pass it along: one buffer per object,
/// which the queue's map, the store's map and every index that lists the
/// object share, so a cached object's key costs one allocation however
/// many indexes there are (Go's strings share theirs the same way).
pub type Key = Arc<str>;

/// Changes an object before it is queued or stored (client-go
/// `TransformFunc`), e.g. to drop fields nobody reads. It runs where the
/// object is still owned by one holder: in a reflector as it decodes
/// (the transform of its queue, [`ReflectorStore::transform`](super::ReflectorStore::transform)),
/// or in a queue or [`Writer`] given an `Arc` nobody else holds; an object
/// shared elsewhere is kept as it is, since changing it would change it for
/// its other holders too.
pub type TransformFn<K> = Arc<dyn Fn(&mut K) + Send + Sync>;

/// Runs `transform` on `obj` unless someone else holds it too (see
/// [`TransformFn`]).
pub(crate) fn transform_unshared<K>(transform: Option<&TransformFn<K>>, mut obj: Arc<K>) -> Arc<K> {
    if let (Some(transform), Some(owned)) = (transform, Arc::get_mut(&mut obj)) {
        transform(owned);
    }
    obj
}

/// Computes the values under which an object is indexed (client-go
/// `IndexFunc`); an object may have no value or several.
pub type IndexFn<T> = Arc<dyn Fn(&T) -> Vec<String> + Send + Sync>;

/// Index functions by index name (client-go `Indexers`).
pub type Indexers<T> = HashMap<String, IndexFn<T>>;

/// Errors of the store.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// A lookup named an index that was never added.
    #[error("index {name:?} does not exist")]
    IndexNotFound {
        /// The index asked for.
        name: String,
    },
    /// `add_indexers` named an index that already exists.
    #[error("indexer conflict: index {name:?} already exists")]
    IndexConflict {
        /// The index name already taken.
        name: String,
    },
}

/// client-go's `MetaNamespaceIndexFunc`: one value, the namespace (empty for
/// cluster-scoped objects).
pub fn meta_namespace_index<T: Object>(obj: &T) -> Vec<String> {
    vec![obj.metadata().namespace().unwrap_or_default().to_owned()]
}

/// Index value → keys of the objects with that value.
type Index = HashMap<String, HashSet<Key>>;

struct Data<T> {
    items: HashMap<Key, Arc<T>>,
    indexers: Indexers<T>,
    indices: HashMap<String, Index>,
}

impl<T> Data<T> {
    /// Moves `key` from the index values of `old` to those of `new`.
    fn update_indices(&mut self, old: Option<&T>, new: Option<&T>, key: &Key) {
        for (name, index_fn) in &self.indexers {
            let old_values = old.map(|o| index_fn(o)).unwrap_or_default();
            let new_values = new.map(|n| index_fn(n)).unwrap_or_default();
            // The common case (an update that does not move the object)
            // costs no map work.
            if old_values.len() == 1 && new_values.len() == 1 && old_values[0] == new_values[0] {
                continue;
            }
            let index = self.indices.entry(name.clone()).or_default();
            for value in &old_values {
                if let Some(keys) = index.get_mut(value) {
                    keys.remove(&**key);
                    if keys.is_empty() {
                        index.remove(value);
                    }
                }
            }
            for value in new_values {
                index.entry(value).or_default().insert(Arc::clone(key));
            }
        }
    }

    fn index_fn(&self, name: &str) -> Result<&IndexFn<T>, Error> {
        self.indexers.get(name).ok_or_else(|| Error::IndexNotFound { name: name.to_owned() })
    }

    fn items_for<'a>(&self, keys: impl Iterator<Item = &'a Key>) -> Vec<Arc<T>> {
        keys.filter_map(|k| self.items.get(k).cloned()).collect()
    }
}

/// A map from key to object, safe to share between threads, with named
/// secondary indexes kept up to date on every change (client-go
/// `ThreadSafeStore`).
///
/// Objects are held as `Arc<T>`: reads hand out cheap clones of the
/// pointer, never copies of objects. Treat them as read-only snapshots.
pub struct ThreadSafeStore<T> {
    data: RwLock<Data<T>>,
}

impl<T> fmt::Debug for ThreadSafeStore<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let data = self.data.read();
        let mut indexes: Vec<_> = data.indexers.keys().collect();
        indexes.sort();
        f.debug_struct("ThreadSafeStore").field("len", &data.items.len()).field("indexes", &indexes).finish()
    }
}

impl<T> Default for ThreadSafeStore<T> {
    fn default() -> Self {
        Self::new(Indexers::new())
    }
}

impl<T> ThreadSafeStore<T> {
    /// An empty store with the given indexes.
    pub fn new(indexers: Indexers<T>) -> Self {
        ThreadSafeStore { data: RwLock::new(Data { items: HashMap::new(), indexers, indices: HashMap::new() }) }
    }

    /// Inserts or replaces the object under `key`.
    pub fn add(&self, key: String, obj: Arc<T>) {
        self.upsert(key, obj);
    }

    /// Inserts or replaces the object under `key`, returning the replaced
    /// one (the informer needs it for update notifications; one lookup
    /// instead of a `get` and an `add`).
    pub fn upsert(&self, key: String, obj: Arc<T>) -> Option<Arc<T>> {
        self.upsert_shared(key.into(), obj)
    }

    /// [`upsert`](Self::upsert) keeping `key`'s buffer rather than a copy.
    pub(crate) fn upsert_shared(&self, key: Key, obj: Arc<T>) -> Option<Arc<T>> {
        let mut data = self.data.write();
        // An existing entry keeps its key: the new one is dropped, not stored twice.
        let (key, old) = match data.items.get_key_value(&key) {
            Some((stored, old)) => (Arc::clone(stored), Some(Arc::clone(old))),
            None => (key, None),
        };
        data.update_indices(old.as_deref(), Some(&obj), &key);
        data.items.insert(key, obj);
        old
    }

    /// Same as [`add`](Self::add): the store does not distinguish.
    pub fn update(&self, key: String, obj: Arc<T>) {
        self.add(key, obj)
    }

    /// Removes the object under `key`, returning it.
    pub fn delete(&self, key: &str) -> Option<Arc<T>> {
        let mut data = self.data.write();
        let (key, old) = data.items.remove_entry(key)?;
        data.update_indices(Some(&old), None, &key);
        Some(old)
    }

    /// The object stored under `key`.
    pub fn get(&self, key: &str) -> Option<Arc<T>> {
        self.data.read().items.get(key).cloned()
    }

    /// Every stored object, in no particular order.
    pub fn list(&self) -> Vec<Arc<T>> {
        self.data.read().items.values().cloned().collect()
    }

    /// Every key, in no particular order.
    pub fn list_keys(&self) -> Vec<String> {
        self.data.read().items.keys().map(|k| k.to_string()).collect()
    }

    /// Number of stored objects.
    pub fn len(&self) -> usize {
        self.data.read().items.len()
    }

    /// Whether nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Replaces the whole content and rebuilds the indexes.
    pub fn replace(&self, items: impl IntoIterator<Item = (String, Arc<T>)>) {
        self.replace_shared(items.into_iter().map(|(k, v)| (k.into(), v)));
    }

    /// [`replace`](Self::replace) keeping the keys' buffers rather than
    /// copies.
    pub(crate) fn replace_shared(&self, items: impl IntoIterator<Item = (Key, Arc<T>)>) {
        let items: HashMap<Key, Arc<T>> = items.into_iter().collect();
        let mut data = self.data.write();
        data.items = items;
        data.indices.clear();
        let entries: Vec<(Key, Arc<T>)> = data.items.iter().map(|(k, v)| (Arc::clone(k), Arc::clone(v))).collect();
        for (key, obj) in entries {
            data.update_indices(None, Some(&obj), &key);
        }
    }

    /// Objects sharing at least one value of index `index_name` with `obj`.
    pub fn index(&self, index_name: &str, obj: &T) -> Result<Vec<Arc<T>>, Error> {
        let data = self.data.read();
        let values = data.index_fn(index_name)?(obj);
        let Some(index) = data.indices.get(index_name) else {
            return Ok(Vec::new());
        };
        let keys: HashSet<&Key> = values.iter().filter_map(|v| index.get(v)).flatten().collect();
        Ok(data.items_for(keys.into_iter()))
    }

    /// Objects whose index `index_name` contains `value`.
    pub fn by_index(&self, index_name: &str, value: &str) -> Result<Vec<Arc<T>>, Error> {
        let data = self.data.read();
        data.index_fn(index_name)?;
        match data.indices.get(index_name).and_then(|index| index.get(value)) {
            Some(keys) => Ok(data.items_for(keys.iter())),
            None => Ok(Vec::new()),
        }
    }

    /// Keys of the objects whose index `index_name` contains `value`.
    pub fn index_keys(&self, index_name: &str, value: &str) -> Result<Vec<String>, Error> {
        let data = self.data.read();
        data.index_fn(index_name)?;
        Ok(data
            .indices
            .get(index_name)
            .and_then(|index| index.get(value))
            .map(|keys| keys.iter().map(|k| k.to_string()).collect())
            .unwrap_or_default())
    }

    /// The values present in index `index_name` (empty if there is no such
    /// index).
    pub fn list_index_values(&self, index_name: &str) -> Vec<String> {
        self.data.read().indices.get(index_name).map(|index| index.keys().cloned().collect()).unwrap_or_default()
    }

    /// Names of the indexes.
    pub fn index_names(&self) -> Vec<String> {
        self.data.read().indexers.keys().cloned().collect()
    }

    /// Adds indexes, computing them for the objects already stored. Fails,
    /// adding none, if one of the names is already taken.
    pub fn add_indexers(&self, indexers: Indexers<T>) -> Result<(), Error> {
        let mut data = self.data.write();
        if let Some(name) = indexers.keys().find(|name| data.indexers.contains_key(*name)) {
            return Err(Error::IndexConflict { name: name.clone() });
        }
        for (name, index_fn) in indexers {
            let mut index = Index::new();
            for (key, obj) in &data.items {
                for value in index_fn(obj) {
                    index.entry(value).or_default().insert(Arc::clone(key));
                }
            }
            data.indices.insert(name.clone(), index);
            data.indexers.insert(name, index_fn);
        }
        Ok(())
    }
}

/// A read-only handle on the cache a [`Writer`] fills; cheap to clone, for
/// listers and controllers.
#[doc(alias = "Lister")]
pub struct Store<T> {
    store: Arc<ThreadSafeStore<T>>,
    key_fn: KeyFn<T>,
}

impl<T> Clone for Store<T> {
    fn clone(&self) -> Self {
        Store { store: Arc::clone(&self.store), key_fn: Arc::clone(&self.key_fn) }
    }
}

impl<T> fmt::Debug for Store<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Store").field(&self.store).finish()
    }
}

impl<T> Store<T> {
    /// The key `obj` is stored under.
    pub fn key_of(&self, obj: &T) -> String {
        (self.key_fn)(obj)
    }

    /// The stored version of `obj` (looked up by its key).
    pub fn get(&self, obj: &T) -> Option<Arc<T>> {
        self.store.get(&self.key_of(obj))
    }

    /// The object stored under `key`: by default `namespace/name`, see
    /// [`object_key`].
    pub fn get_by_key(&self, key: &str) -> Option<Arc<T>> {
        self.store.get(key)
    }

    /// Every cached object, in no particular order (client-go's `Store.List`).
    pub fn list(&self) -> Vec<Arc<T>> {
        self.store.list()
    }

    /// Every key, in no particular order.
    pub fn list_keys(&self) -> Vec<String> {
        self.store.list_keys()
    }

    /// Number of cached objects.
    pub fn len(&self) -> usize {
        self.store.len()
    }

    /// Whether the cache is empty, as it is until the informer's first list.
    pub fn is_empty(&self) -> bool {
        self.store.is_empty()
    }

    /// See [`ThreadSafeStore::index`].
    pub fn index(&self, index_name: &str, obj: &T) -> Result<Vec<Arc<T>>, Error> {
        self.store.index(index_name, obj)
    }

    /// See [`ThreadSafeStore::by_index`].
    pub fn by_index(&self, index_name: &str, value: &str) -> Result<Vec<Arc<T>>, Error> {
        self.store.by_index(index_name, value)
    }

    /// See [`ThreadSafeStore::index_keys`].
    pub fn index_keys(&self, index_name: &str, value: &str) -> Result<Vec<String>, Error> {
        self.store.index_keys(index_name, value)
    }

    /// See [`ThreadSafeStore::list_index_values`].
    pub fn list_index_values(&self, index_name: &str) -> Vec<String> {
        self.store.list_index_values(index_name)
    }

    /// Names of the indexes.
    pub fn index_names(&self) -> Vec<String> {
        self.store.index_names()
    }
}

/// The one handle that changes a cache (client-go `Indexer`, as the
/// informer uses it); reads go through `Deref` to [`Store`], and
/// [`store`](Self::store) hands out read-only handles.
///
/// Not `Clone` on purpose: one writer per cache keeps the cache a faithful
/// copy of one watch.
#[doc(alias = "Indexer")]
pub struct Writer<T> {
    store: Store<T>,
    transform: Option<TransformFn<T>>,
}

impl<T> fmt::Debug for Writer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Writer").field(&self.store.store).finish()
    }
}

impl<T: Object + 'static> Default for Writer<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Object + 'static> Writer<T> {
    /// A cache of Kubernetes objects keyed `namespace/name`, with the
    /// [`NAMESPACE_INDEX`] index.
    pub fn new() -> Self {
        let mut indexers: Indexers<T> = Indexers::new();
        indexers.insert(NAMESPACE_INDEX.to_owned(), Arc::new(meta_namespace_index::<T>));
        Self::with_key_fn(Arc::new(object_key::<T>), indexers)
    }
}

impl<T> Writer<T> {
    /// A cache of anything, keyed by `key_fn`, with the given indexes.
    pub fn with_key_fn(key_fn: KeyFn<T>, indexers: Indexers<T>) -> Self {
        Writer { store: Store { store: Arc::new(ThreadSafeStore::new(indexers)), key_fn }, transform: None }
    }

    /// Runs `transform` on every object [`add`](Self::add)ed,
    /// [`update`](Self::update)d, [`upsert`](Self::upsert)ed or
    /// [`replace`](Self::replace)d from now on (client-go's
    /// `WithTransformer` store option; see [`TransformFn`] for which objects
    /// it can change).
    #[must_use]
    pub fn with_transform(mut self, transform: TransformFn<T>) -> Self {
        self.transform = Some(transform);
        self
    }

    fn transformed(&self, obj: Arc<T>) -> Arc<T> {
        transform_unshared(self.transform.as_ref(), obj)
    }

    /// A read-only handle on this cache.
    pub fn store(&self) -> Store<T> {
        self.store.clone()
    }

    /// Inserts or replaces `obj` under its key.
    pub fn add(&mut self, obj: Arc<T>) {
        let obj = self.transformed(obj);
        let key = self.store.key_of(&obj);
        self.store.store.add(key, obj);
    }

    /// Same as [`add`](Self::add).
    pub fn update(&mut self, obj: Arc<T>) {
        self.add(obj)
    }

    /// Inserts or replaces `obj` under its key, returning the replaced one.
    pub fn upsert(&mut self, obj: Arc<T>) -> Option<Arc<T>> {
        let obj = self.transformed(obj);
        let key = self.store.key_of(&obj);
        self.store.store.upsert(key, obj)
    }

    /// Removes the object with the key of `obj`, returning the stored one.
    pub fn delete(&mut self, obj: &T) -> Option<Arc<T>> {
        let key = self.store.key_of(obj);
        self.store.store.delete(&key)
    }

    /// Removes the object stored under `key`, returning it.
    pub fn delete_by_key(&mut self, key: &str) -> Option<Arc<T>> {
        self.store.store.delete(key)
    }

    /// Inserts or replaces `obj` under `key`, which must be what the key
    /// function gives for it: for the informer, whose queue already made
    /// the key and shares its buffer with the store (and whose reflector
    /// ran the transform).
    pub(crate) fn upsert_keyed(&mut self, key: Key, obj: Arc<T>) -> Option<Arc<T>> {
        debug_assert_eq!(*key, *self.store.key_of(&obj), "a key that is not the object's own");
        self.store.store.upsert_shared(key, obj)
    }

    /// Replaces the whole content by `objs`, each with its key, in one
    /// write, as [`upsert_keyed`](Self::upsert_keyed) takes them (the
    /// informer's atomic relist).
    pub(crate) fn replace_keyed(&mut self, objs: impl IntoIterator<Item = (Key, Arc<T>)>) {
        self.store.store.replace_shared(objs);
    }

    /// Replaces the whole content by `objs` (after a relist).
    pub fn replace(&mut self, objs: impl IntoIterator<Item = Arc<T>>) {
        let key_fn = Arc::clone(&self.store.key_fn);
        let objs: Vec<Arc<T>> = objs.into_iter().map(|o| self.transformed(o)).collect();
        self.store.store.replace(objs.into_iter().map(|o| (key_fn(&o), o)));
    }

    /// See [`ThreadSafeStore::add_indexers`].
    pub fn add_indexers(&mut self, indexers: Indexers<T>) -> Result<(), Error> {
        self.store.store.add_indexers(indexers)
    }
}

impl<T> Deref for Writer<T> {
    type Target = Store<T>;
    fn deref(&self) -> &Store<T> {
        &self.store
    }
}

#[cfg(test)]
mod upstream_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{Pod, pod};

    fn sorted<I: IntoIterator<Item = String>>(i: I) -> Vec<String> {
        let mut v: Vec<String> = i.into_iter().collect();
        v.sort();
        v
    }

    fn names(objs: Vec<Arc<Pod>>) -> Vec<String> {
        sorted(objs.into_iter().map(|p| p.metadata.name.clone().unwrap_or_default()))
    }

    #[test]
    fn a_writer_transforms_what_it_stores_but_not_what_others_hold() {
        let mut w: Writer<Pod> = Writer::new().with_transform(Arc::new(|p: &mut Pod| p.node = "moved".into()));
        w.add(Arc::new(pod("ns", "a", "n1")));
        w.upsert(Arc::new(pod("ns", "b", "n1")));
        let shared = Arc::new(pod("ns", "c", "n1"));
        w.add(Arc::clone(&shared));
        let store = w.store();
        let node = |name: &str| store.get_by_key(&format!("ns/{name}")).map(|p| p.node.clone());
        assert_eq!(node("a").as_deref(), Some("moved"));
        assert_eq!(node("b").as_deref(), Some("moved"));
        // Held elsewhere too: changing it would change it for that holder.
        assert_eq!(node("c").as_deref(), Some("n1"));
        assert_eq!(shared.node, "n1");
        w.replace(vec![Arc::new(pod("ns", "d", "n2"))]);
        assert_eq!(node("d").as_deref(), Some("moved"));
    }

    fn by_node() -> Indexers<Pod> {
        let mut i: Indexers<Pod> = Indexers::new();
        i.insert("node".into(), Arc::new(|p: &Pod| vec![p.node.clone()]));
        i
    }

    fn by_label_values() -> Indexers<Pod> {
        let mut i: Indexers<Pod> = Indexers::new();
        i.insert(
            "labels".into(),
            Arc::new(|p: &Pod| p.metadata.labels.iter().flatten().map(|(_, v)| v.to_string()).collect()),
        );
        i
    }

    #[test]
    fn objects_are_keyed_namespace_slash_name() {
        let mut w = Writer::new();
        w.add(Arc::new(pod("ns1", "a", "n1")));
        w.add(Arc::new(pod("", "cluster-wide", "n1")));
        assert_eq!(sorted(w.list_keys()), vec!["cluster-wide", "ns1/a"]);
        assert!(w.get_by_key("ns1/a").is_some());
        assert!(w.get(&pod("ns1", "a", "other")).is_some());
    }

    #[test]
    fn update_replaces_and_delete_removes() {
        let mut w = Writer::new();
        w.add(Arc::new(pod("ns", "a", "n1")));
        w.update(Arc::new(pod("ns", "a", "n2")));
        assert_eq!(w.len(), 1);
        assert_eq!(w.get_by_key("ns/a").unwrap().node, "n2");
        assert!(w.delete(&pod("ns", "a", "")).is_some());
        assert!(w.is_empty());
        assert!(w.delete(&pod("ns", "a", "")).is_none());
    }

    #[test]
    fn namespace_index_is_there_by_default() {
        let mut w = Writer::new();
        w.add(Arc::new(pod("ns1", "a", "")));
        w.add(Arc::new(pod("ns1", "b", "")));
        w.add(Arc::new(pod("ns2", "c", "")));
        assert_eq!(names(w.by_index(NAMESPACE_INDEX, "ns1").unwrap()), vec!["a", "b"]);
        assert_eq!(sorted(w.index_keys(NAMESPACE_INDEX, "ns2").unwrap()), vec!["ns2/c"]);
        assert_eq!(sorted(w.list_index_values(NAMESPACE_INDEX)), vec!["ns1", "ns2"]);
    }

    #[test]
    fn index_follows_updates_and_deletes() {
        let mut w = Writer::with_key_fn(Arc::new(object_key::<Pod>), by_node());
        w.add(Arc::new(pod("ns", "a", "n1")));
        w.add(Arc::new(pod("ns", "b", "n1")));
        w.update(Arc::new(pod("ns", "a", "n2")));
        assert_eq!(names(w.by_index("node", "n1").unwrap()), vec!["b"]);
        assert_eq!(names(w.by_index("node", "n2").unwrap()), vec!["a"]);
        w.delete_by_key("ns/b");
        assert!(w.by_index("node", "n1").unwrap().is_empty());
        assert_eq!(sorted(w.list_index_values("node")), vec!["n2"], "empty values are dropped");
    }

    #[test]
    fn an_object_can_have_several_index_values() {
        let mut w = Writer::with_key_fn(Arc::new(object_key::<Pod>), by_label_values());
        let mut p = pod("ns", "a", "");
        p.metadata.labels = Some([("x", "red"), ("y", "blue")].into());
        w.add(Arc::new(p.clone()));
        assert_eq!(names(w.by_index("labels", "red").unwrap()), vec!["a"]);
        assert_eq!(names(w.by_index("labels", "blue").unwrap()), vec!["a"]);
        let mut q = pod("ns", "b", "");
        q.metadata.labels = Some([("z", "blue")].into());
        w.add(Arc::new(q));
        // `index` unions the objects over all values of the given object.
        assert_eq!(names(w.index("labels", &p).unwrap()), vec!["a", "b"]);
    }

    #[test]
    fn unknown_index_is_an_error() {
        let w: Writer<Pod> = Writer::new();
        assert_eq!(w.by_index("nope", "x").unwrap_err(), Error::IndexNotFound { name: "nope".into() });
        assert!(w.index_keys("nope", "x").is_err());
        assert!(w.index("nope", &pod("a", "b", "")).is_err());
        assert!(w.list_index_values("nope").is_empty());
    }

    #[test]
    fn add_indexers_back_fills_existing_objects() {
        let mut w = Writer::new();
        w.add(Arc::new(pod("ns", "a", "n1")));
        w.add(Arc::new(pod("ns", "b", "n2")));
        w.add_indexers(by_node()).unwrap();
        assert_eq!(names(w.by_index("node", "n1").unwrap()), vec!["a"]);
        w.add(Arc::new(pod("ns", "c", "n1")));
        assert_eq!(names(w.by_index("node", "n1").unwrap()), vec!["a", "c"]);
    }

    #[test]
    fn add_indexers_refuses_a_duplicate_name_and_adds_nothing() {
        let mut w: Writer<Pod> = Writer::new();
        let mut dup = by_node();
        dup.insert(NAMESPACE_INDEX.into(), Arc::new(|_: &Pod| vec![]));
        assert_eq!(w.add_indexers(dup).unwrap_err(), Error::IndexConflict { name: NAMESPACE_INDEX.into() });
        assert!(!w.index_names().contains(&"node".to_owned()));
    }

    #[test]
    fn replace_swaps_content_and_rebuilds_indexes() {
        let mut w = Writer::new();
        w.add(Arc::new(pod("old", "a", "")));
        w.replace(vec![Arc::new(pod("new", "b", "")), Arc::new(pod("new", "c", ""))]);
        assert_eq!(sorted(w.list_keys()), vec!["new/b", "new/c"]);
        assert!(w.by_index(NAMESPACE_INDEX, "old").unwrap().is_empty());
        assert_eq!(names(w.by_index(NAMESPACE_INDEX, "new").unwrap()), vec!["b", "c"]);
    }

    #[test]
    fn read_handles_see_writes() {
        let mut w = Writer::new();
        let reader = w.store();
        let reader2 = reader.clone();
        w.add(Arc::new(pod("ns", "a", "")));
        assert_eq!(reader.len(), 1);
        assert_eq!(names(reader2.list()), vec!["a"]);
    }

    #[test]
    fn the_map_and_the_indexes_share_one_key_buffer() {
        let mut w = Writer::with_key_fn(Arc::new(object_key::<Pod>), by_node());
        w.add_indexers([(NAMESPACE_INDEX.to_owned(), Arc::new(meta_namespace_index::<Pod>) as IndexFn<Pod>)].into())
            .unwrap();
        let key: Arc<str> = "ns/a".into();
        w.upsert_keyed(Arc::clone(&key), Arc::new(pod("ns", "a", "n1")));
        // A later version under an equal key keeps the stored buffer.
        w.upsert_keyed("ns/a".into(), Arc::new(pod("ns", "a", "n1")));
        let data = w.store.store.data.read();
        let (stored, _) = data.items.get_key_value("ns/a").unwrap();
        assert!(Arc::ptr_eq(stored, &key));
        for (index, value) in [("node", "n1"), (NAMESPACE_INDEX, "ns")] {
            let indexed = data.indices[index][value].iter().next().unwrap();
            assert!(Arc::ptr_eq(indexed, &key), "index {index} holds a copy of the key");
        }
    }

    #[test]
    fn readers_do_not_block_each_other() {
        let ts: ThreadSafeStore<Pod> = ThreadSafeStore::default();
        ts.add("k".into(), Arc::new(pod("ns", "k", "")));
        let held = ts.data.read();
        std::thread::scope(|s| {
            let (tx, rx) = std::sync::mpsc::channel();
            let ts = &ts;
            s.spawn(move || {
                let _ = tx.send(ts.list().len());
            });
            let got = rx.recv_timeout(std::time::Duration::from_secs(10));
            drop(held);
            assert_eq!(got, Ok(1), "a reader waited for another reader");
        });
    }
}
