//! The cases of client-go's own store and indexer tests
//! (`k8s.io/client-go/tools/cache/store_test.go`, `index_test.go` and
//! `thread_safe_store_test.go`, v0.35), as tables of ours. Each test names
//! the upstream function it follows.
//!
//! Upstream's `testStoreObject{id, val}` is a cluster-scoped test pod here
//! (key = name = id) with `val` in `node`.

use std::collections::BTreeSet;

use super::*;
use crate::testing::{Pod, pod};

fn obj(id: &str, val: &str) -> Arc<Pod> {
    Arc::new(pod("", id, val))
}

fn by_val() -> Indexers<Pod> {
    let mut i: Indexers<Pod> = Indexers::new();
    i.insert("by_val".into(), Arc::new(|p: &Pod| vec![p.node.clone()]));
    i
}

fn vals(objs: &[Arc<Pod>]) -> BTreeSet<String> {
    objs.iter().map(|p| p.node.clone()).collect()
}

fn names(objs: &[Arc<Pod>]) -> BTreeSet<String> {
    objs.iter().map(|p| p.metadata.name.clone().unwrap_or_default()).collect()
}

fn strs(v: &[&str]) -> BTreeSet<String> {
    v.iter().map(|s| s.to_string()).collect()
}

// store_test.go doTestStore, as TestCache runs it (NewStore) and TestIndex
// runs it on an indexer.
fn do_test_store(mut store: Writer<Pod>) {
    store.add(obj("foo", "bar"));
    assert_eq!(store.get_by_key("foo").unwrap().node, "bar", "didn't find inserted item");
    store.update(obj("foo", "baz"));
    assert_eq!(store.get_by_key("foo").unwrap().node, "baz");
    store.delete(&obj("foo", ""));
    assert!(store.get_by_key("foo").is_none(), "found deleted item");

    // List
    store.add(obj("a", "b"));
    store.add(obj("c", "d"));
    store.add(obj("e", "e"));
    assert_eq!(vals(&store.list()), strs(&["b", "d", "e"]));

    // Replace
    store.replace([obj("foo", "foo"), obj("bar", "bar")]);
    assert_eq!(vals(&store.list()), strs(&["foo", "bar"]));
}

// TestCache, TestIndex (the store part)
#[test]
fn store_basics() {
    do_test_store(Writer::with_key_fn(Arc::new(object_key::<Pod>), Indexers::new()));
    do_test_store(Writer::with_key_fn(Arc::new(object_key::<Pod>), by_val()));
}

// TestCacheWithTransformer, TestFIFOCache, TestUndeltaStore, TestKeyError,
// TestCacheTransactionShouldIndexErrors: not expressible. The store has no
// transformer (the reflector transforms), there is no FIFO or UndeltaStore,
// and key functions cannot fail (so there are no KeyErrors nor partly
// failed transactions).

// store_test.go doTestIndex (TestIndex)
#[test]
fn index_by_an_object() {
    let mut indexer = Writer::with_key_fn(Arc::new(object_key::<Pod>), by_val());
    indexer.add(obj("a", "b"));
    indexer.add(obj("c", "b"));
    indexer.add(obj("e", "f"));
    indexer.add(obj("g", "h"));
    let table: &[(&str, &[&str])] = &[("b", &["a", "c"]), ("f", &["e"]), ("h", &["g"])];
    for (val, ids) in table {
        let found = indexer.index("by_val", &obj("", val)).unwrap();
        assert_eq!(names(&found), strs(ids), "index {val}");
    }
}

// index_test.go TestGetIndexFuncValues
#[test]
fn get_index_func_values() {
    let mut indexers: Indexers<Pod> = Indexers::new();
    indexers.insert(
        "testmodes".into(),
        Arc::new(|p: &Pod| {
            p.metadata.labels.as_ref().and_then(|l| l.get("foo")).map(|v| v.to_string()).into_iter().collect()
        }),
    );
    let mut index = Writer::with_key_fn(Arc::new(object_key::<Pod>), indexers);
    for (name, foo) in [("one", "bar"), ("two", "bar"), ("tre", "biz")] {
        let mut p = pod("", name, "");
        p.metadata.labels = Some([("foo", foo)].into());
        index.add(Arc::new(p));
    }
    let values: BTreeSet<String> = index.list_index_values("testmodes").into_iter().collect();
    assert_eq!(values, strs(&["bar", "biz"]));
}

// index_test.go TestMultiIndexKeys: the users of a pod, comma-separated,
// in `node`.
#[test]
fn multi_index_keys() {
    let mut indexers: Indexers<Pod> = Indexers::new();
    indexers.insert("byUser".into(), Arc::new(|p: &Pod| p.node.split(',').map(str::to_owned).collect()));
    let mut index = Writer::with_key_fn(Arc::new(object_key::<Pod>), indexers);
    index.add(obj("one", "ernie,bert"));
    index.add(obj("two", "bert,oscar"));
    index.add(obj("tre", "ernie,elmo"));
    let table: &[(&str, &[&str])] = &[
        ("ernie", &["one", "tre"]),
        ("bert", &["one", "two"]),
        ("elmo", &["tre"]),
        ("oscar", &["two"]),
        ("elmo1", &[]),
    ];
    for (user, pods) in table {
        assert_eq!(names(&index.by_index("byUser", user).unwrap()), strs(pods), "{user}");
    }

    index.delete(&obj("tre", "ernie,elmo"));
    assert_eq!(names(&index.by_index("byUser", "ernie").unwrap()), strs(&["one"]));
    assert!(index.by_index("byUser", "elmo").unwrap().is_empty());

    index.update(obj("two", "oscar"));
    assert_eq!(names(&index.by_index("byUser", "bert").unwrap()), strs(&["one"]));
}

/// A thread-safe store of strings with one index, `testIndexer`.
fn string_store(index_fn: impl Fn(&String) -> Vec<String> + Send + Sync + 'static) -> ThreadSafeStore<String> {
    let mut indexers: Indexers<String> = Indexers::new();
    indexers.insert("testIndexer".into(), Arc::new(index_fn));
    ThreadSafeStore::new(indexers)
}

/// The keys stored for `value` in `testIndexer`, `None` when the index
/// holds no set for it at all.
fn index_set(store: &ThreadSafeStore<String>, value: &str) -> Option<BTreeSet<String>> {
    let data = store.data.read();
    data.indices.get("testIndexer")?.get(value).map(|keys| keys.iter().map(|k| k.to_string()).collect())
}

// thread_safe_store_test.go TestThreadSafeStoreDeleteRemovesEmptySetsFromIndex
#[test]
fn delete_removes_empty_sets_from_index() {
    let store = string_store(|s| vec![s.clone()]);
    store.add("testKey".into(), Arc::new("testKey".into()));
    assert_eq!(index_set(&store, "testKey").map(|s| s.len()), Some(1));
    store.delete("testKey");
    assert_eq!(index_set(&store, "testKey"), None, "index set not deleted");
}

// thread_safe_store_test.go TestThreadSafeStoreAddKeepsNonEmptySetPostDeleteFromIndex
#[test]
fn delete_keeps_non_empty_sets_in_index() {
    let store = string_store(|_| vec!["testIndex".into()]);
    store.add("retain".into(), Arc::new("retain".into()));
    store.add("delete".into(), Arc::new("delete".into()));
    assert_eq!(index_set(&store, "testIndex").map(|s| s.len()), Some(2));
    store.delete("delete");
    assert_eq!(index_set(&store, "testIndex"), Some(strs(&["retain"])));
}

// thread_safe_store_test.go TestThreadSafeStoreIndexingFunctionsWithMultipleValues:
// each step, then the keys expected under foo, bar and baz.
#[test]
fn indexing_functions_with_multiple_values() {
    enum Op {
        Add(&'static str, &'static str),
        Update(&'static str, &'static str),
        Delete(&'static str),
    }
    use Op::*;
    let store = string_store(|s| s.split(',').map(str::to_owned).collect());
    type Keys = &'static [&'static str];
    let table: &[(Op, Keys, Keys, Keys)] = &[
        (Add("key1", "foo"), &["key1"], &[], &[]),
        (Add("key2", "bar"), &["key1"], &["key2"], &[]),
        (Update("key2", "foo,bar"), &["key1", "key2"], &["key2"], &[]),
        (Update("key1", "foo,bar"), &["key1", "key2"], &["key1", "key2"], &[]),
        (Add("key3", "foo,bar,baz"), &["key1", "key2", "key3"], &["key1", "key2", "key3"], &["key3"]),
        (Update("key1", "foo"), &["key1", "key2", "key3"], &["key2", "key3"], &["key3"]),
        (Update("key2", "bar"), &["key1", "key3"], &["key2", "key3"], &["key3"]),
        (Delete("key1"), &["key3"], &["key2", "key3"], &["key3"]),
        (Delete("key3"), &[], &["key2"], &[]),
    ];
    for (i, (op, foo, bar, baz)) in table.iter().enumerate() {
        match op {
            Add(k, v) => store.add((*k).into(), Arc::new((*v).into())),
            Update(k, v) => store.update((*k).into(), Arc::new((*v).into())),
            Delete(k) => {
                store.delete(k);
            }
        }
        for (value, want) in [("foo", foo), ("bar", bar), ("baz", baz)] {
            let got = store.index_keys("testIndexer", value).unwrap().into_iter().collect::<BTreeSet<_>>();
            assert_eq!(got, strs(want), "step {i}: {value}");
            // Upstream also checks that emptied sets are gone.
            assert_eq!(index_set(&store, value).is_none(), want.is_empty(), "step {i}: {value} set");
        }
    }
}
