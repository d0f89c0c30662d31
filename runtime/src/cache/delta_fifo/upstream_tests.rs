//! The cases of client-go's own DeltaFIFO tests
//! (`k8s.io/client-go/tools/cache/delta_fifo_test.go`, v0.35), as tables of
//! ours. Each test names the upstream function it follows.
//!
//! Upstream objects are `testFifoObject{name, val}` keyed by name; here they
//! are cluster-scoped test pods (key = name) with `val` in `node`. Upstream's
//! `NewDeltaFIFOWithOptions` defaults to `EmitDeltaTypeReplaced: false`
//! (ours defaults to true), so the tables ask for it explicitly.

use std::sync::Arc;
use std::time::Duration;

use super::*;
use crate::cache::fifo_test_support::a_relist_racing_a_pop_keeps_the_deletion;
use crate::cache::fifo_test_support::{Literal, obj, show, two_producers_keep_their_order};
use crate::testing::Pod;

/// A FIFO as upstream builds it: Sync deltas unless `replaced`.
fn fifo(known: Option<Vec<Arc<Pod>>>, replaced: bool) -> DeltaFifo<Pod> {
    let mut o = DeltaFifoOptions::<Pod>::default().emit_delta_type_replaced(replaced);
    if let Some(known) = known {
        o = o.known_objects(Arc::new(Literal(known)));
    }
    DeltaFifo::new(o)
}

fn known3() -> Option<Vec<Arc<Pod>>> {
    Some(vec![obj("foo", 5), obj("bar", 6), obj("baz", 7)])
}

fn show_all(d: &Deltas<Pod>) -> Vec<String> {
    d.iter().map(show).collect()
}

/// Upstream's `Pop(f)`: pops one key, or fails the test after a while.
async fn pop(f: &DeltaFifo<Pod>) -> Vec<String> {
    show_all(&pop_raw(f).await.0)
}

async fn pop_raw(f: &DeltaFifo<Pod>) -> (Deltas<Pod>, bool) {
    let mut initial = false;
    let popped = tokio::time::timeout(
        Duration::from_secs(5),
        f.pop(|_, i| {
            initial = i;
            Ok(())
        }),
    )
    .await
    .expect("pop timed out")
    .expect("pop failed");
    (popped, initial)
}

/// The newest object's `val` of the next key.
async fn pop_val(f: &DeltaFifo<Pod>) -> String {
    let (d, _) = pop_raw(f).await;
    d.last().and_then(|d| d.object.object()).map(|p| p.node.clone()).unwrap_or_default()
}

async fn expect_pops(f: &DeltaFifo<Pod>, expected: &[&[&str]], case: &str) {
    for (i, want) in expected.iter().enumerate() {
        assert_eq!(pop(f).await, *want, "{case}: pop #{i}");
    }
}

// TestDeltaFIFO_basic: two producers, pops keep each producer's order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn basic_two_producers_keep_their_order() {
    two_producers_keep_their_order(fifo(None, false)).await;
}

// TestDeltaFIFO_replaceWithDeleteDeltaIn
#[tokio::test]
async fn replace_with_delete_delta_in() {
    let f = fifo(Some(vec![obj("foo", 1)]), false);
    f.delete(obj("foo", 1));
    f.replace(vec![obj("foo", 2)], "");
    assert_eq!(pop(&f).await, ["Deleted foo=1", "Sync foo=2"]);
}

// TestDeltaFIFOW_ReplaceMakesDeletionsForObjectsOnlyInQueue: every case is
// run with empty known objects and without known objects.
#[tokio::test]
async fn replace_makes_deletions_for_objects_only_in_queue() {
    type Ops = fn(&DeltaFifo<Pod>);
    let table: &[(&str, bool, Ops, &[&str])] = &[
        (
            "Added object should be deleted on Replace",
            false,
            |f| {
                f.add(obj("foo", 2));
                f.replace(vec![], "0");
            },
            &["Added foo=2", "Deleted tombstone(foo, foo=2)"],
        ),
        (
            "Replaced object should have only a single Delete",
            true,
            |f| {
                f.add(obj("foo", 2));
                f.replace(vec![obj("foo", 2)], "0");
                f.replace(vec![], "0");
            },
            &["Added foo=2", "Replaced foo=2", "Deleted tombstone(foo, foo=2)"],
        ),
        (
            "Deleted object should have only a single Delete",
            false,
            |f| {
                f.add(obj("foo", 2));
                f.delete(obj("foo", 2));
                f.replace(vec![], "0");
            },
            &["Added foo=2", "Deleted foo=2"],
        ),
        (
            "Synced objects should have a single delete",
            false,
            |f| {
                f.add(obj("foo", 2));
                f.replace(vec![obj("foo", 2)], "0");
                f.replace(vec![obj("foo", 2)], "0");
                f.replace(vec![], "0");
            },
            &["Added foo=2", "Sync foo=2", "Sync foo=2", "Deleted tombstone(foo, foo=2)"],
        ),
        (
            "Added objects should have a single delete on multiple Replaces",
            false,
            |f| {
                f.add(obj("foo", 2));
                f.replace(vec![], "0");
                f.replace(vec![], "1");
            },
            &["Added foo=2", "Deleted tombstone(foo, foo=2)"],
        ),
        (
            "Added and deleted and added object should be deleted",
            false,
            |f| {
                f.add(obj("foo", 2));
                f.delete(obj("foo", 2));
                f.add(obj("foo", 3));
                f.replace(vec![], "0");
            },
            &["Added foo=2", "Deleted foo=2", "Added foo=3", "Deleted tombstone(foo, foo=3)"],
        ),
    ];
    for (name, replaced, ops, expected) in table {
        for known in [Some(vec![]), None] {
            let with = if known.is_some() { "with" } else { "without" };
            let f = fifo(known, *replaced);
            ops(&f);
            assert_eq!(pop(&f).await, *expected, "{name} ({with} known objects)");
            assert!(f.list_keys().is_empty(), "{name} ({with} known objects): extra deltas");
        }
    }
}

// TestDeltaFIFO_addUpdate
#[tokio::test]
async fn add_update_delete_collapse_into_one_key() {
    let f = fifo(None, false);
    f.add(obj("foo", 10));
    f.update(obj("foo", 12));
    f.delete(obj("foo", 15));
    assert_eq!(f.list_keys(), ["foo"]);
    let newest = f.get_by_key("foo").unwrap();
    assert_eq!(show(newest.last().unwrap()), "Deleted foo=15");
    assert_eq!(pop_val(&f).await, "15");
    assert!(f.is_empty(), "no second value");
    assert!(f.get_by_key("foo").is_none(), "item did not get removed");
}

// TestDeltaFIFO_transformer: not expressible. Our DeltaFIFO has no
// transformer; the reflector transforms objects before queueing them
// (`Reflector::transform`), so Sync deltas and tombstones are never
// transformed twice by construction.

// TestDeltaFIFO_enqueueingNoLister
#[tokio::test]
async fn enqueueing_without_known_objects() {
    let f = fifo(None, false);
    f.add(obj("foo", 10));
    f.update(obj("bar", 15));
    f.add(obj("qux", 17));
    f.delete(obj("qux", 18));
    // Does not enqueue anything: baz is neither queued nor known.
    f.delete(obj("baz", 20));
    for want in ["10", "15", "18"] {
        assert_eq!(pop_val(&f).await, want);
    }
    assert!(f.list_keys().is_empty());
}

// TestDeltaFIFO_enqueueingWithLister
#[tokio::test]
async fn enqueueing_with_known_objects() {
    let f = fifo(known3(), false);
    f.add(obj("foo", 10));
    f.update(obj("bar", 15));
    // Enqueued, because baz is known.
    f.delete(obj("baz", 20));
    for want in ["10", "15", "20"] {
        assert_eq!(pop_val(&f).await, want);
    }
    assert!(f.list_keys().is_empty());
}

// TestDeltaFIFO_addReplace
#[tokio::test]
async fn add_then_replace_pops_the_newest_once() {
    let f = fifo(None, false);
    f.add(obj("foo", 10));
    f.replace(vec![obj("foo", 15)], "0");
    assert_eq!(pop_val(&f).await, "15");
    assert!(f.is_empty(), "no second value");
    assert!(f.get_by_key("foo").is_none());
}

// TestDeltaFIFO_ResyncNonExisting
#[tokio::test]
async fn resync_skips_a_key_with_a_queued_delete() {
    let f = fifo(Some(vec![obj("foo", 5)]), false);
    f.delete(obj("foo", 10));
    f.resync();
    assert_eq!(show_all(&f.get_by_key("foo").unwrap()), ["Deleted foo=10"]);
}

// TestDeltaFIFO_Resync
#[tokio::test]
async fn resync_queues_sync() {
    let f = fifo(Some(vec![obj("foo", 5)]), false);
    f.resync();
    assert_eq!(show_all(&f.get_by_key("foo").unwrap()), ["Sync foo=5"]);
}

// TestDeltaFIFO_DeleteExistingNonPropagated
#[tokio::test]
async fn delete_of_a_queued_but_unknown_object_is_queued() {
    let f = fifo(Some(vec![]), false);
    f.add(obj("foo", 5));
    f.delete(obj("foo", 6));
    assert_eq!(show_all(&f.get_by_key("foo").unwrap()), ["Added foo=5", "Deleted foo=6"]);
}

// TestDeltaFIFO_ReplaceMakesDeletions: five scenarios, each with the pops
// expected in order.
#[tokio::test]
async fn replace_makes_deletions() {
    type Ops = fn(&DeltaFifo<Pod>);
    let table: &[(&str, bool, Ops, &[&[&str]])] = &[
        (
            "pre-existing Delete",
            true,
            |f| {
                f.delete(obj("baz", 10));
                f.replace(vec![obj("foo", 5)], "0");
            },
            &[&["Deleted baz=10"], &["Sync foo=5"], &["Deleted tombstone(bar, bar=6)"]],
        ),
        (
            "starting with an Add instead of a Delete",
            true,
            |f| {
                f.add(obj("baz", 10));
                f.replace(vec![obj("foo", 5)], "0");
            },
            &[&["Added baz=10", "Deleted tombstone(baz, baz=10)"], &["Sync foo=5"], &["Deleted tombstone(bar, bar=6)"]],
        ),
        (
            "deleted and recreated in the queue, then deleted by a Replace: the newest queued object",
            true,
            |f| {
                f.delete(obj("bar", 6));
                f.add(obj("bar", 100));
                f.replace(vec![obj("foo", 5)], "0");
            },
            &[
                &["Deleted bar=6", "Added bar=100", "Deleted tombstone(bar, bar=100)"],
                &["Sync foo=5"],
                &["Deleted tombstone(baz, baz=7)"],
            ],
        ),
        (
            "synced first, so the delete uses the latest version",
            true,
            |f| {
                f.replace(vec![obj("bar", 100), obj("foo", 5)], "0");
                f.replace(vec![obj("foo", 5)], "0");
            },
            &[
                &["Sync bar=100", "Deleted tombstone(bar, bar=100)"],
                &["Sync foo=5", "Sync foo=5"],
                &["Deleted tombstone(baz, baz=7)"],
            ],
        ),
        (
            "without known objects",
            false,
            |f| {
                f.add(obj("baz", 10));
                f.replace(vec![obj("foo", 5)], "0");
            },
            &[&["Added baz=10", "Deleted tombstone(baz, baz=10)"], &["Sync foo=5"]],
        ),
    ];
    for (name, with_known, ops, expected) in table {
        let f = fifo(if *with_known { known3() } else { None }, false);
        ops(&f);
        expect_pops(&f, expected, name).await;
    }
}

// TestDeltaFIFO_ReplaceMakesDeletionsReplaced
#[tokio::test]
async fn replace_makes_deletions_replaced() {
    let f = fifo(known3(), true);
    f.delete(obj("baz", 10));
    f.replace(vec![obj("foo", 6)], "0");
    let expected: &[&[&str]] = &[&["Deleted baz=10"], &["Replaced foo=6"], &["Deleted tombstone(bar, bar=6)"]];
    expect_pops(&f, expected, "replaced").await;
}

// TestDeltaFIFO_ReplaceDeltaType
#[tokio::test]
async fn replace_delta_type() {
    let f = fifo(Some(vec![obj("foo", 5)]), true);
    f.replace(vec![obj("foo", 5)], "0");
    assert_eq!(pop(&f).await, ["Replaced foo=5"]);
}

// TestDeltaFIFO_UpdateResyncRace
#[tokio::test]
async fn update_resync_race() {
    let f = fifo(Some(vec![obj("foo", 5)]), false);
    f.update(obj("foo", 6));
    f.resync();
    assert_eq!(pop(&f).await, ["Updated foo=6"]);
    assert!(f.is_empty());
}

// TestDeltaFIFO_HasSyncedCorrectOnDeletion
#[tokio::test]
async fn has_synced_correct_on_deletion() {
    let f = fifo(known3(), false);
    f.replace(vec![obj("foo", 5)], "0");
    for want in [&["Sync foo=5"][..], &["Deleted tombstone(bar, bar=6)"], &["Deleted tombstone(baz, baz=7)"]] {
        assert!(!f.has_synced(), "synced before {want:?}");
        let (d, initial) = pop_raw(&f).await;
        assert_eq!(show_all(&d), want);
        assert!(initial, "{want:?} is part of the initial list");
    }
    assert!(f.has_synced());
}

// TestDeltaFIFO_detectLineJumpers
#[tokio::test]
async fn detect_line_jumpers() {
    let f = fifo(None, false);
    f.add(obj("foo", 10));
    f.add(obj("bar", 1));
    f.add(obj("foo", 11));
    f.add(obj("foo", 13));
    f.add(obj("zab", 30));
    assert_eq!(pop_val(&f).await, "13");
    f.add(obj("foo", 14)); // foo must not jump back in line
    for want in ["1", "30", "14"] {
        assert_eq!(pop_val(&f).await, want);
    }
}

// TestDeltaFIFO_KeyOf: an object, a tombstone, and (through
// `add_if_not_present`, which keys a Deltas by its newest) deltas of each.
#[test]
fn key_of() {
    let f = fifo(None, false);
    let tomb =
        |k: &str| DeltaObject::DeletedFinalStateUnknown(DeletedFinalStateUnknown { key: k.to_owned(), obj: None });
    assert_eq!(&*f.key_of(&DeltaObject::Object(obj("A", 0))), "A");
    assert_eq!(&*f.key_of(&tomb("B")), "B");
    f.add_if_not_present(vec![Delta { delta_type: DeltaType::Added, object: DeltaObject::Object(obj("C", 0)) }]);
    f.add_if_not_present(vec![Delta { delta_type: DeltaType::Deleted, object: tomb("D") }]);
    let mut keys = f.list_keys();
    keys.sort();
    assert_eq!(keys, ["C", "D"]);
}

// TestDeltaFIFO_HasSynced
#[tokio::test]
async fn has_synced_table() {
    enum Act {
        Add(&'static str, i64),
        Replace(&'static [(&'static str, i64)]),
        Pop,
    }
    use Act::*;
    let table: &[(&[Act], bool)] = &[
        (&[], false),
        (&[Add("a", 1)], true),
        (&[Replace(&[])], true),
        (&[Replace(&[("a", 1), ("b", 2)])], false),
        (&[Replace(&[("a", 1), ("b", 2)]), Pop], false),
        (&[Replace(&[("a", 1), ("b", 2)]), Pop, Pop], true),
        // Duplicate keys in one list (a broken apiserver): counted once.
        (&[Replace(&[("a", 1), ("a", 2)]), Pop], true),
    ];
    for (i, (acts, synced)) in table.iter().enumerate() {
        let f = fifo(None, false);
        for act in *acts {
            match act {
                Add(n, v) => f.add(obj(n, *v)),
                Replace(items) => f.replace(items.iter().map(|(n, v)| obj(n, *v)).collect(), "0"),
                Pop => {
                    pop_raw(&f).await;
                }
            }
        }
        assert_eq!(f.has_synced(), *synced, "case {i}");
    }
}

// TestDeltaFIFO_PopShouldUnblockWhenClosed: pops wait for one another
// here (see `pop`), so one blocked pop and the ones queued behind it must
// all return once the queue is closed.
#[tokio::test]
async fn pop_should_unblock_when_closed() {
    let f = fifo(Some(vec![obj("foo", 5)]), false);
    let pops: Vec<_> = (0..10)
        .map(|_| {
            let f = f.clone();
            tokio::spawn(async move { f.pop(|_, _| Ok(())).await.map(|_| ()) })
        })
        .collect();
    tokio::task::yield_now().await;
    f.close();
    for p in pops {
        let r = tokio::time::timeout(Duration::from_millis(500), p)
            .await
            .expect("timed out waiting for pop to return after close")
            .unwrap();
        assert!(matches!(r, Err(Error::Closed)));
    }
}

/// Not an upstream case: upstream holds its lock while processing a pop,
/// which this checks the queue does too.
#[tokio::test]
async fn relist_racing_a_pop_keeps_the_deletion() {
    a_relist_racing_a_pop_keeps_the_deletion(|known| DeltaFifo::new(DeltaFifoOptions::default().known_objects(known)))
        .await;
}
