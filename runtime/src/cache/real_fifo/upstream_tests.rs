//! The cases of client-go's own RealFIFO tests
//! (`k8s.io/client-go/tools/cache/the_real_fifo_test.go`, v0.35), as tables
//! of ours. Each test names the upstream function it follows. Those cases
//! are of the queue without atomic events (client-go before 1.36); the
//! ones v0.37 added for atomic events (the `AtomicFIFO` gate, our default)
//! come last.
//!
//! Upstream objects are `testFifoObject{name, val}` keyed by name; here they
//! are cluster-scoped test pods (key = name) with `val` in `node`, as in the
//! DeltaFIFO's port. Upstream's broken-key case (`PopBrokenItemsInBatch`)
//! has no counterpart: our key functions cannot fail.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use super::*;
use crate::cache::fifo_test_support::a_relist_racing_a_pop_keeps_the_deletion;
use crate::cache::fifo_test_support::{Literal, obj, show as show_delta, two_producers_keep_their_order};
use crate::testing::Pod;

/// A queue without atomic events, as upstream's v0.35 cases expect.
fn fifo(known: Vec<Arc<Pod>>) -> RealFifo<Pod> {
    RealFifo::new(per_object(known))
}

fn per_object(known: Vec<Arc<Pod>>) -> RealFifoOptions<Pod> {
    RealFifoOptions::new(Arc::new(Literal(known))).atomic_events(false)
}

/// A queue with atomic events (the default).
fn atomic_fifo(known: Vec<Arc<Pod>>) -> RealFifo<Pod> {
    RealFifo::new(RealFifoOptions::new(Arc::new(Literal(known))))
}

fn known3() -> Vec<Arc<Pod>> {
    vec![obj("foo", 5), obj("bar", 6), obj("baz", 7)]
}

/// An entry as text: `Added foo=10`, `Deleted tombstone(bar, bar=6)`,
/// `ReplacedAll@20 [foo=15]`, `SyncAll`.
fn show(e: &Entry<Pod>) -> String {
    match e {
        Entry::Change(c) => show_delta(&c.delta),
        Entry::ReplacedAll(all) => {
            let objects: Vec<_> = all
                .objects
                .iter()
                .map(|(key, p)| {
                    assert_eq!(**key, *p.metadata.name.as_deref().unwrap(), "the key of the object");
                    format!("{key}={}", p.node)
                })
                .collect();
            format!("ReplacedAll@{} [{}]", all.resource_version, objects.join(", "))
        }
        Entry::SyncAll => "SyncAll".to_owned(),
    }
}

/// Upstream's `Pop(f)`, with whether the change belongs to the first list.
async fn pop_raw(f: &RealFifo<Pod>) -> (Entry<Pod>, bool) {
    let mut initial = false;
    let popped = tokio::time::timeout(Duration::from_secs(5), f.pop(|_, i| initial = i))
        .await
        .expect("pop timed out")
        .expect("pop failed");
    (popped, initial)
}

async fn pop(f: &RealFifo<Pod>) -> String {
    show(&pop_raw(f).await.0)
}

/// The `val` of the next change's object.
async fn pop_val(f: &RealFifo<Pod>) -> String {
    let (c, _) = pop_raw(f).await;
    c.change().expect("a change").delta.object.object().map(|p| p.node.clone()).unwrap_or_default()
}

async fn expect_pops(f: &RealFifo<Pod>, expected: &[&str], case: &str) {
    for (i, want) in expected.iter().enumerate() {
        assert_eq!(pop(f).await, *want, "{case}: pop #{i}");
    }
    assert!(f.is_empty(), "{case}: left {:?}", f.list().iter().map(show).collect::<Vec<_>>());
}

fn items(f: &RealFifo<Pod>) -> Vec<String> {
    f.list().iter().map(show).collect()
}

// TestRealFIFO_basic: two producers, pops keep each producer's order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn basic_two_producers_keep_their_order() {
    two_producers_keep_their_order(fifo(vec![])).await;
}

// TestRealFIFO_replaceWithDeleteDeltaIn
#[test]
fn replace_with_delete_delta_in() {
    let f = fifo(vec![obj("foo", 1)]);
    f.delete(obj("foo", 1));
    f.replace(vec![obj("foo", 2)], "");
    assert_eq!(items(&f), ["Deleted foo=1", "Replaced foo=2"]);
}

// TestRealFIFOW_ReplaceMakesDeletionsForObjectsOnlyInQueue
#[tokio::test]
async fn replace_makes_deletions_for_objects_only_in_queue() {
    type Ops = fn(&RealFifo<Pod>);
    let table: &[(&str, Ops, &[&str])] = &[
        (
            "Added object should be deleted on Replace",
            |f| {
                f.add(obj("foo", 2));
                f.replace(vec![], "0");
            },
            &["Added foo=2", "Deleted tombstone(foo, foo=2)"],
        ),
        (
            "Deleted object should have only a single Delete",
            |f| {
                f.add(obj("foo", 2));
                f.delete(obj("foo", 2));
                f.replace(vec![], "0");
            },
            &["Added foo=2", "Deleted foo=2"],
        ),
        (
            "Synced objects should have a single delete",
            |f| {
                f.add(obj("foo", 2));
                f.replace(vec![obj("foo", 2)], "0");
                f.replace(vec![obj("foo", 2)], "0");
                f.replace(vec![], "0");
            },
            &["Added foo=2", "Replaced foo=2", "Replaced foo=2", "Deleted tombstone(foo, foo=2)"],
        ),
        (
            "Added objects should have a single delete on multiple Replaces",
            |f| {
                f.add(obj("foo", 2));
                f.replace(vec![], "0");
                f.replace(vec![], "1");
            },
            &["Added foo=2", "Deleted tombstone(foo, foo=2)"],
        ),
        (
            "Added and deleted and added object should be deleted",
            |f| {
                f.add(obj("foo", 2));
                f.delete(obj("foo", 2));
                f.add(obj("foo", 3));
                f.replace(vec![], "0");
            },
            &["Added foo=2", "Deleted foo=2", "Added foo=3", "Deleted tombstone(foo, foo=3)"],
        ),
    ];
    for (case, ops, want) in table {
        let f = fifo(vec![]);
        ops(&f);
        expect_pops(&f, want, case).await;
    }
}

// TestRealFIFO_addUpdate: every change is queued and popped, in order.
#[tokio::test]
async fn add_update_delete_are_all_delivered() {
    let f = fifo(vec![]);
    f.add(obj("foo", 10));
    f.update(obj("foo", 12));
    f.delete(obj("foo", 15));
    assert_eq!(items(&f), ["Added foo=10", "Updated foo=12", "Deleted foo=15"]);
    for want in ["10", "12", "15"] {
        assert_eq!(pop_val(&f).await, want);
    }
    assert!(f.is_empty());
    // Nothing more comes.
    let more = tokio::time::timeout(Duration::from_millis(50), f.pop(|_, _| {})).await;
    assert!(more.is_err(), "a fourth change was popped");
}

// TestRealFIFO_transformer: each object is transformed once, tombstones
// carry the transformed object and are not transformed again.
#[test]
fn transformer_runs_once_per_object() {
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&calls);
    let f = RealFifo::new(per_object(vec![]).transform(Arc::new(move |p: &mut Pod| {
        counted.fetch_add(1, Ordering::Relaxed);
        p.node.push('x');
    })));
    f.add(obj("foo", 10));
    f.add(obj("bar", 11));
    f.update(obj("foo", 12));
    f.delete(obj("foo", 15));
    f.replace(vec![], "");
    f.add(obj("bar", 16));
    f.replace(vec![], "");
    assert_eq!(
        items(&f),
        [
            "Added foo=10x",
            "Added bar=11x",
            "Updated foo=12x",
            "Deleted foo=15x",
            "Deleted tombstone(bar, bar=11x)",
            "Added bar=16x",
            "Deleted tombstone(bar, bar=16x)",
        ]
    );
    assert_eq!(calls.load(Ordering::Relaxed), 5);
}

// TestRealFIFO_enqueueingNoLister: deletions of objects never seen are queued.
#[tokio::test]
async fn enqueueing_no_lister() {
    let f = fifo(vec![]);
    f.add(obj("foo", 10));
    f.update(obj("bar", 15));
    f.add(obj("qux", 17));
    f.delete(obj("qux", 18));
    f.delete(obj("baz", 20));
    for want in ["10", "15", "17", "18", "20"] {
        assert_eq!(pop_val(&f).await, want);
    }
    assert!(f.is_empty());
}

// TestRealFIFO_enqueueingWithLister
#[tokio::test]
async fn enqueueing_with_lister() {
    let f = fifo(known3());
    f.add(obj("foo", 10));
    f.update(obj("bar", 15));
    f.delete(obj("baz", 20));
    for want in ["10", "15", "20"] {
        assert_eq!(pop_val(&f).await, want);
    }
    assert!(f.is_empty());
}

// TestRealFIFO_addReplace
#[tokio::test]
async fn add_replace() {
    let f = fifo(vec![]);
    f.add(obj("foo", 10));
    f.replace(vec![obj("foo", 15)], "0");
    expect_pops(&f, &["Added foo=10", "Replaced foo=15"], "addReplace").await;
}

// TestRealFIFO_ResyncNonExisting: a queued change keeps the resync away.
#[test]
fn resync_non_existing() {
    let f = fifo(vec![obj("foo", 5)]);
    f.delete(obj("foo", 10));
    f.resync();
    assert_eq!(items(&f), ["Deleted foo=10"]);
}

// TestRealFIFO_Resync
#[test]
fn resync() {
    let f = fifo(vec![obj("foo", 5)]);
    f.resync();
    assert_eq!(items(&f), ["Sync foo=5"]);
}

// TestRealFIFO_DeleteExistingNonPropagated
#[test]
fn delete_existing_non_propagated() {
    let f = fifo(vec![]);
    f.add(obj("foo", 5));
    f.delete(obj("foo", 6));
    assert_eq!(items(&f), ["Added foo=5", "Deleted foo=6"]);
}

// TestRealFIFO_ReplaceMakesDeletions (and ...Replaced, the same with
// foo=6): deletions of known objects come before the listed objects.
#[tokio::test]
async fn replace_makes_deletions() {
    let f = fifo(known3());
    f.delete(obj("baz", 10));
    f.replace(vec![obj("foo", 5)], "0");
    expect_pops(&f, &["Deleted baz=10", "Deleted tombstone(bar, bar=6)", "Replaced foo=5"], "pre-existing delete")
        .await;

    let f = fifo(known3());
    f.add(obj("baz", 10));
    f.replace(vec![obj("foo", 5)], "0");
    expect_pops(
        &f,
        &["Added baz=10", "Deleted tombstone(baz, baz=10)", "Deleted tombstone(bar, bar=6)", "Replaced foo=5"],
        "add first",
    )
    .await;

    let f = fifo(known3());
    f.delete(obj("bar", 6));
    f.add(obj("bar", 100));
    f.replace(vec![obj("foo", 5)], "0");
    expect_pops(
        &f,
        &[
            "Deleted bar=6",
            "Added bar=100",
            "Deleted tombstone(bar, bar=100)",
            "Deleted tombstone(baz, baz=7)",
            "Replaced foo=5",
        ],
        "delete and recreate",
    )
    .await;

    let f = fifo(known3());
    f.replace(vec![obj("bar", 100), obj("foo", 5)], "0");
    f.replace(vec![obj("foo", 5)], "0");
    expect_pops(
        &f,
        &[
            "Deleted tombstone(baz, baz=7)",
            "Replaced bar=100",
            "Replaced foo=5",
            "Deleted tombstone(bar, bar=100)",
            "Replaced foo=5",
        ],
        "synced first",
    )
    .await;

    let f = fifo(vec![]);
    f.add(obj("baz", 10));
    f.replace(vec![obj("foo", 5)], "0");
    expect_pops(&f, &["Added baz=10", "Deleted tombstone(baz, baz=10)", "Replaced foo=5"], "no known objects").await;

    // TestRealFIFO_ReplaceMakesDeletionsReplaced
    let f = fifo(known3());
    f.delete(obj("baz", 10));
    f.replace(vec![obj("foo", 6)], "0");
    expect_pops(&f, &["Deleted baz=10", "Deleted tombstone(bar, bar=6)", "Replaced foo=6"], "replaced").await;
}

// TestRealFIFO_UpdateResyncRace
#[tokio::test]
async fn update_resync_race() {
    let f = fifo(vec![obj("foo", 5)]);
    f.update(obj("foo", 6));
    f.resync();
    expect_pops(&f, &["Updated foo=6"], "update then resync").await;
}

// TestRealFIFO_HasSyncedCorrectOnDeletion
#[tokio::test]
async fn has_synced_correct_on_deletion() {
    let f = fifo(known3());
    f.replace(vec![obj("foo", 5)], "0");
    for want in ["Deleted tombstone(bar, bar=6)", "Deleted tombstone(baz, baz=7)", "Replaced foo=5"] {
        assert!(!f.has_synced());
        let (c, initial) = pop_raw(&f).await;
        assert_eq!(show(&c), want);
        assert!(initial, "{want} is part of the first list");
    }
    assert!(f.has_synced());
}

// TestRealFIFO_detectLineJumpers: every change in order, no key jumps back.
#[tokio::test]
async fn detect_line_jumpers() {
    let f = fifo(vec![]);
    f.add(obj("foo", 10));
    f.add(obj("bar", 1));
    f.add(obj("foo", 11));
    f.add(obj("foo", 13));
    f.add(obj("zab", 30));
    assert_eq!(pop_val(&f).await, "10");
    f.add(obj("foo", 14));
    for want in ["1", "11", "13", "30", "14"] {
        assert_eq!(pop_val(&f).await, want);
    }
}

// TestRealFIFO_HasSynced
#[tokio::test]
async fn has_synced() {
    type Step = fn(&RealFifo<Pod>) -> bool;
    let replace2: Step = |f| {
        f.replace(vec![obj("a", 1), obj("b", 2)], "0");
        false
    };
    let pop: Step = |_| true;
    let table: Vec<(Vec<Step>, bool)> = vec![
        (vec![], false),
        (
            vec![|f| {
                f.add(obj("a", 1));
                false
            }],
            true,
        ),
        (
            vec![|f| {
                f.replace(vec![], "0");
                false
            }],
            true,
        ),
        (vec![replace2], false),
        (vec![replace2, pop], false),
        (vec![replace2, pop, pop], true),
        // Duplicate keys in one list (a broken apiserver): both are
        // delivered, so both must be popped.
        (
            vec![
                |f| {
                    f.replace(vec![obj("a", 1), obj("a", 2)], "0");
                    false
                },
                pop,
                pop,
            ],
            true,
        ),
    ];
    for (i, (steps, want)) in table.into_iter().enumerate() {
        let f = fifo(vec![]);
        for step in steps {
            if step(&f) {
                pop_raw(&f).await;
            }
        }
        assert_eq!(f.has_synced(), want, "case {i}");
    }
}

// TestRealFIFO_PopShouldUnblockWhenClosed
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pop_should_unblock_when_closed() {
    let f = fifo(vec![obj("foo", 5)]);
    let pops: Vec<_> = (0..10)
        .map(|_| {
            let f = f.clone();
            tokio::spawn(async move { f.pop(|_, _| {}).await.map(|_| ()) })
        })
        .collect();
    tokio::task::yield_now().await;
    f.close();
    for p in pops {
        let result = tokio::time::timeout(Duration::from_millis(500), p).await.expect("pop did not return");
        assert!(matches!(result.unwrap(), Err(Error::Closed)));
    }
}

// TestRealFIFO_PopMultipleDeltaInBatch
#[tokio::test]
async fn pop_multiple_deltas_in_batch() {
    const UNLIMITED: usize = 999_999;
    let o = |n: u8| obj(&format!("foo{n}"), 5);
    type Table = Vec<(&'static str, Vec<u8>, Vec<u8>, usize, Vec<Vec<&'static str>>)>;
    // (case, listed objects, then updated objects, batch size, batches)
    let table: Table = vec![
        (
            "non-split: pop unique items should work",
            vec![1, 2, 3],
            vec![],
            UNLIMITED,
            vec![vec!["Replaced foo1=5", "Replaced foo2=5", "Replaced foo3=5"]],
        ),
        (
            "split due to initial list: initial 2 items with 2 updates should have 2 batches",
            vec![1, 2],
            vec![3, 4],
            2,
            vec![vec!["Replaced foo1=5", "Replaced foo2=5"], vec!["Updated foo3=5", "Updated foo4=5"]],
        ),
        (
            "split due to non-unique#1: update single item for multiple items should have separate batch",
            vec![1],
            vec![1, 1],
            UNLIMITED,
            vec![vec!["Replaced foo1=5"], vec!["Updated foo1=5"], vec!["Updated foo1=5"]],
        ),
        (
            "split due to non-unique#2: update 3 item for with non-unique item at the end should have separate batch",
            vec![1, 2],
            vec![2, 3],
            UNLIMITED,
            vec![vec!["Replaced foo1=5", "Replaced foo2=5"], vec!["Updated foo2=5", "Updated foo3=5"]],
        ),
        (
            "split due to non-unique#3: update 3 item for with non-unique item in the mid should have separate batch",
            vec![1, 2, 3],
            vec![2],
            UNLIMITED,
            vec![vec!["Replaced foo1=5", "Replaced foo2=5", "Replaced foo3=5"], vec!["Updated foo2=5"]],
        ),
        (
            "split due to batch size#1: batching initial list should work",
            vec![1, 2, 3],
            vec![],
            2,
            vec![vec!["Replaced foo1=5", "Replaced foo2=5"], vec!["Replaced foo3=5"]],
        ),
        (
            "split due to batch size#2: batching incoming non-initial deltas should work",
            vec![],
            vec![1, 2, 3],
            2,
            vec![vec!["Updated foo1=5", "Updated foo2=5"], vec!["Updated foo3=5"]],
        ),
        (
            "split due to batch size#3: pop 4 mixed initial & non-initial items with 2 batch size should have 3 batch",
            vec![1, 2, 3],
            vec![4],
            2,
            vec![vec!["Replaced foo1=5", "Replaced foo2=5"], vec!["Replaced foo3=5"], vec!["Updated foo4=5"]],
        ),
    ];
    for (case, listed, updated, batch_size, want) in table {
        let listed: Vec<_> = listed.into_iter().map(o).collect();
        let f = RealFifo::new(per_object(listed.clone()).batch_size(batch_size));
        f.replace(listed.clone(), "");
        for n in updated {
            f.update(o(n));
        }
        let mut batches = Vec::new();
        let mut initial_items = Vec::new();
        while !f.is_empty() {
            let (batch, initial) =
                f.pop_batch(|changes, initial| (changes.iter().map(show).collect::<Vec<_>>(), initial)).await.unwrap();
            if initial {
                initial_items.extend(batch.iter().cloned());
            }
            batches.push(batch);
        }
        assert_eq!(batches, want, "{case}");
        let listed_shown: Vec<_> =
            listed.iter().map(|p| format!("Replaced {}=5", p.metadata.name.as_deref().unwrap())).collect();
        assert_eq!(initial_items, listed_shown, "{case}: the first list's changes");
    }
}

/// Ours: the resourceVersion of a relist is reached once every change
/// queued up to it has been popped (what the informer's
/// `last_store_sync_resource_version` reads).
#[tokio::test]
async fn a_relist_is_reached_once_its_changes_are_popped() {
    let f = fifo(vec![]);
    f.replace(vec![], "5");
    assert_eq!(f.take_reached_list().as_deref(), Some("5"), "an empty list is reached at once");
    assert_eq!(f.take_reached_list(), None, "taken");
    f.add(obj("a", 1));
    f.replace(vec![obj("b", 2)], "9");
    assert_eq!(f.take_reached_list(), None);
    pop_raw(&f).await; // Added a
    pop_raw(&f).await; // tombstone a
    assert_eq!(f.take_reached_list(), None, "b is still queued");
    pop_raw(&f).await;
    assert_eq!(f.take_reached_list().as_deref(), Some("9"));
}

/// Not an upstream case: upstream holds its lock while processing a pop,
/// which this checks the queue does too.
#[tokio::test]
async fn relist_racing_a_pop_keeps_the_deletion() {
    a_relist_racing_a_pop_keeps_the_deletion(|known| {
        RealFifo::new(RealFifoOptions::new(known).atomic_events(false))
    })
    .await;
}

// The cases client-go v0.37 added for atomic events (our default).

// TestRealFIFO_ReplaceAtomic. Upstream's bookmark case queues a bookmark
// entry; ours is no entry but a resourceVersion reached in order, checked
// here with `take_reached_list`.
#[tokio::test]
async fn replace_atomic() {
    type Ops = fn(&RealFifo<Pod>);
    // (case, operations, entries popped, version reached before popping,
    // version reached once all are popped)
    type Case<'a> = (&'a str, Ops, &'a [&'a str], Option<&'a str>, &'a str);
    let table: &[Case] = &[
        ("Base replace", |f| f.replace(vec![], "123"), &["ReplacedAll@123 []"], None, "123"),
        (
            "Added object exists in deltas on Atomic Replace",
            |f| {
                f.add(obj("foo", 2));
                f.replace(vec![], "123");
            },
            &["Added foo=2", "ReplacedAll@123 []"],
            None,
            "123",
        ),
        (
            "Multiple replaces run in order",
            |f| {
                f.add(obj("foo", 2));
                f.replace(vec![obj("foo", 2)], "10");
                f.replace(vec![obj("foo", 2)], "20");
                f.replace(vec![], "56");
            },
            &["Added foo=2", "ReplacedAll@10 [foo=2]", "ReplacedAll@20 [foo=2]", "ReplacedAll@56 []"],
            None,
            "56",
        ),
        (
            "Bookmark object should not be included in Replace",
            |f| {
                f.bookmark("123");
                f.replace(vec![], "1234");
            },
            &["ReplacedAll@1234 []"],
            Some("123"),
            "1234",
        ),
    ];
    for (case, ops, want, before, after) in table {
        // An atomic relist does not read the known objects: these would
        // otherwise give tombstones.
        let f = atomic_fifo(known3());
        ops(&f);
        assert_eq!(f.take_reached_list().as_deref(), *before, "{case}: reached before popping");
        expect_pops(&f, want, case).await;
        assert_eq!(f.take_reached_list().as_deref(), Some(*after), "{case}: reached once popped");
    }
}

// TestRealFIFO_ReplaceAtomicPop: an add, then a relist of the same key, are
// popped as two entries, the relist whole; nothing else comes.
#[tokio::test]
async fn replace_atomic_pop() {
    let f = atomic_fifo(vec![]);
    f.add(obj("foo", 10));
    f.replace(vec![obj("foo", 15)], "20");
    assert_eq!(pop(&f).await, "Added foo=10");
    assert_eq!(pop(&f).await, "ReplacedAll@20 [foo=15]");
    let more = tokio::time::timeout(Duration::from_millis(50), f.pop(|_, _| {})).await;
    assert!(more.is_err(), "a third entry was popped");
    assert!(f.is_empty(), "item did not get removed");
    f.close();
    assert!(matches!(f.pop(|_, _| {}).await, Err(Error::Closed)));
}

// TestRealFIFO_ResyncAtomic: a resync is one entry, after what came before,
// whatever the known objects.
#[tokio::test]
async fn resync_atomic() {
    type Ops = fn(&RealFifo<Pod>);
    let table: &[(&str, Ops, &[&str])] = &[
        ("Base resync", |f| f.resync(), &["SyncAll"]),
        (
            "Added object exists in deltas on Atomic Resync",
            |f| {
                f.add(obj("foo", 2));
                f.resync();
            },
            &["Added foo=2", "SyncAll"],
        ),
    ];
    for (case, ops, want) in table {
        let f = atomic_fifo(known3());
        ops(&f);
        expect_pops(&f, want, case).await;
    }
}

/// Ours: a relist or resync entry is a batch of its own, and the first
/// list's entries are batched apart from later ones.
#[tokio::test]
async fn atomic_entries_are_popped_alone() {
    let f = atomic_fifo(vec![]);
    f.replace(vec![obj("a", 1), obj("b", 2)], "5");
    f.add(obj("c", 3));
    f.add(obj("d", 4));
    f.replace(vec![obj("c", 3)], "7");
    f.resync();
    f.resync();
    f.update(obj("c", 5));
    let mut batches = Vec::new();
    while !f.is_empty() {
        let popped = f.pop_batch(|entries, initial| (entries.iter().map(show).collect::<Vec<_>>(), initial));
        batches.push(popped.await.unwrap());
    }
    let batch = |entries: &[&str], initial| (entries.iter().map(|e| (*e).to_owned()).collect::<Vec<_>>(), initial);
    assert_eq!(
        batches,
        [
            batch(&["ReplacedAll@5 [a=1, b=2]"], true),
            batch(&["Added c=3", "Added d=4"], false),
            batch(&["ReplacedAll@7 [c=3]"], false),
            batch(&["SyncAll"], false),
            batch(&["SyncAll"], false),
            batch(&["Updated c=5"], false),
        ]
    );
}

/// Ours, after `TestRealFIFO_HasSynced`: with atomic events the first list
/// is one entry, so the queue has synced once it is popped, an empty list
/// too.
#[tokio::test]
async fn has_synced_atomic() {
    type Step = fn(&RealFifo<Pod>) -> bool;
    let pop: Step = |_| true;
    let table: Vec<(&str, Vec<Step>, bool)> = vec![
        ("nothing", vec![], false),
        (
            "an add",
            vec![|f| {
                f.add(obj("a", 1));
                false
            }],
            true,
        ),
        (
            "an empty list, not popped",
            vec![|f| {
                f.replace(vec![], "0");
                false
            }],
            false,
        ),
        (
            "an empty list, popped",
            vec![
                |f| {
                    f.replace(vec![], "0");
                    false
                },
                pop,
            ],
            true,
        ),
        (
            "two objects listed, popped at once",
            vec![
                |f| {
                    f.replace(vec![obj("a", 1), obj("b", 2)], "0");
                    false
                },
                pop,
            ],
            true,
        ),
        // As upstream: an add before any list populates the queue.
        (
            "an add, then a list",
            vec![|f| {
                f.add(obj("a", 1));
                f.replace(vec![obj("a", 1)], "0");
                false
            }],
            true,
        ),
    ];
    for (case, steps, want) in table {
        let f = atomic_fifo(vec![]);
        for step in steps {
            if step(&f) {
                let (_, initial) = pop_raw(&f).await;
                assert!(initial, "{case}: popped from the first list");
            }
        }
        assert_eq!(f.has_synced(), want, "{case}");
    }
}

/// Ours: a relist's objects are transformed once, as they are queued; the
/// entry's keys are theirs.
#[test]
fn replace_atomic_transforms_the_listed_objects() {
    let f = RealFifo::new(RealFifoOptions::new(Arc::new(Literal(vec![]))).transform(Arc::new(|p: &mut Pod| {
        p.node.push('x');
    })));
    f.replace(vec![obj("foo", 1), obj("bar", 2)], "3");
    assert_eq!(items(&f), ["ReplacedAll@3 [foo=1x, bar=2x]"]);
}
