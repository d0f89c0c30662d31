//! Unit tests of the DeltaFIFO, one rule each.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use super::*;
use crate::cache::store::Writer;
use crate::testing::{Pod, pod};

fn fifo() -> DeltaFifo<Pod> {
    DeltaFifo::new(DeltaFifoOptions::default())
}

fn fifo_with(writer: &Writer<Pod>) -> DeltaFifo<Pod> {
    DeltaFifo::new(DeltaFifoOptions::default().known_objects(Arc::new(writer.store())))
}

fn p(name: &str) -> Arc<Pod> {
    Arc::new(pod("ns", name, ""))
}

/// Pops one key without processing anything, or panics after a while.
async fn pop(f: &DeltaFifo<Pod>) -> Deltas<Pod> {
    tokio::time::timeout(Duration::from_secs(5), f.pop(|_, _| Ok(())))
        .await
        .expect("pop timed out")
        .expect("pop failed")
}

fn types(d: &Deltas<Pod>) -> Vec<DeltaType> {
    d.iter().map(|d| d.delta_type).collect()
}

#[tokio::test]
async fn deltas_accumulate_per_key() {
    let f = fifo();
    f.add(p("a"));
    f.update(p("a"));
    f.delete(p("a"));
    assert_eq!(f.len(), 1);
    let d = pop(&f).await;
    assert_eq!(types(&d), vec![DeltaType::Added, DeltaType::Updated, DeltaType::Deleted]);
    assert!(f.is_empty());
}

#[tokio::test]
async fn keys_pop_in_order_of_first_queueing() {
    let f = fifo();
    f.add(p("a"));
    f.add(p("b"));
    f.update(p("a"));
    f.add(p("c"));
    let order: Vec<String> = [pop(&f).await, pop(&f).await, pop(&f).await]
        .iter()
        .map(|d| d[0].object.object().unwrap().metadata.name.clone().unwrap())
        .collect();
    assert_eq!(order, vec!["a", "b", "c"]);
}

#[tokio::test]
async fn two_deletes_in_a_row_collapse_keeping_the_older() {
    let f = fifo();
    f.add(p("a"));
    let first = Arc::new(pod("ns", "a", "first"));
    f.delete(Arc::clone(&first));
    f.delete(Arc::new(pod("ns", "a", "second")));
    let d = pop(&f).await;
    assert_eq!(types(&d), vec![DeltaType::Added, DeltaType::Deleted]);
    assert_eq!(d[1].object.object().unwrap().node, "first");
}

#[test]
fn a_tombstone_loses_against_a_real_deletion() {
    let real = || Delta { delta_type: DeltaType::Deleted, object: DeltaObject::Object(p("a")) };
    let tomb = || Delta {
        delta_type: DeltaType::Deleted,
        object: DeltaObject::DeletedFinalStateUnknown(DeletedFinalStateUnknown { key: "ns/a".into(), obj: None }),
    };
    let mut older_real = smallvec::smallvec![real(), tomb()];
    dedup_deltas(&mut older_real);
    assert_eq!(older_real.len(), 1);
    assert!(!older_real[0].object.is_tombstone());

    let mut older_tomb = smallvec::smallvec![tomb(), real()];
    dedup_deltas(&mut older_tomb);
    assert_eq!(older_tomb.len(), 1);
    assert!(!older_tomb[0].object.is_tombstone());

    let mut not_both_deletes =
        smallvec::smallvec![Delta { delta_type: DeltaType::Updated, object: DeltaObject::Object(p("a")) }, real()];
    dedup_deltas(&mut not_both_deletes);
    assert_eq!(not_both_deletes.len(), 2);
}

#[tokio::test]
async fn deleting_an_unknown_object_is_ignored() {
    let f = fifo();
    f.delete(p("ghost"));
    assert!(f.is_empty());

    let mut w = Writer::new();
    w.add(p("known"));
    let f = fifo_with(&w);
    f.delete(p("ghost"));
    f.delete(p("known"));
    assert_eq!(f.list_keys(), vec!["ns/known"]);
}

#[tokio::test]
async fn replace_emits_replaced_and_tombstones_for_vanished_known_objects() {
    let mut w = Writer::new();
    w.add(Arc::new(pod("ns", "stays", "old")));
    w.add(Arc::new(pod("ns", "gone", "last-state")));
    let f = fifo_with(&w);
    f.replace(vec![p("stays"), p("new")], "10");
    let mut keys = f.list_keys();
    keys.sort();
    assert_eq!(keys, vec!["ns/gone", "ns/new", "ns/stays"]);
    assert_eq!(types(&f.get_by_key("ns/stays").unwrap()), vec![DeltaType::Replaced]);
    let gone = f.get_by_key("ns/gone").unwrap();
    assert_eq!(types(&gone), vec![DeltaType::Deleted]);
    match &gone[0].object {
        DeltaObject::DeletedFinalStateUnknown(t) => {
            assert_eq!(t.key, "ns/gone");
            assert_eq!(t.obj.as_ref().unwrap().node, "last-state");
        }
        other => panic!("expected a tombstone, got {other:?}"),
    }
}

/// An object added (or updated) on the watch, not popped yet, and deleted
/// on the server while the watch was down must get a tombstone carrying the
/// queued object even when the store does not know it (it would otherwise
/// reach the store after the relist and stay there for good), and a stored
/// object updated in the queue gets the queued, newer state.
#[tokio::test]
async fn replace_tombstones_queued_keys_missing_from_the_list_before_the_store_keys() {
    let mut w = Writer::new();
    w.add(Arc::new(pod("ns", "stored", "v1")));
    let f = fifo_with(&w);
    f.add(Arc::new(pod("ns", "queued-only", "n1")));
    f.update(Arc::new(pod("ns", "stored", "v2")));
    f.replace(vec![], "7");

    let tomb = |key: &str| {
        let d = f.get_by_key(key).unwrap();
        assert_eq!(d.last().unwrap().delta_type, DeltaType::Deleted, "{key}");
        match &d.last().unwrap().object {
            DeltaObject::DeletedFinalStateUnknown(t) => t.obj.as_ref().unwrap().node.clone(),
            other => panic!("{key}: expected a tombstone, got {other:?}"),
        }
    };
    assert_eq!(tomb("ns/queued-only"), "n1");
    assert_eq!(tomb("ns/stored"), "v2", "the queued object, not the store's older copy");

    // Applying what pops leaves the store empty, as the server is.
    while !f.is_empty() {
        let deltas = pop(&f).await;
        for d in &deltas {
            let o = d.object.object().unwrap();
            match d.delta_type {
                DeltaType::Deleted => {
                    w.delete(o);
                }
                _ => w.update(Arc::clone(o)),
            }
        }
    }
    assert!(w.store().list_keys().is_empty());
}

#[tokio::test]
async fn replace_without_known_objects_tombstones_queued_keys_missing_from_the_list() {
    let f = fifo();
    f.add(Arc::new(pod("ns", "queued-only", "n1")));
    f.replace(vec![p("listed")], "1");
    let d = f.get_by_key("ns/queued-only").unwrap();
    assert_eq!(types(&d), vec![DeltaType::Added, DeltaType::Deleted]);
    assert!(d[1].object.is_tombstone());
    assert_eq!(d[1].object.object().unwrap().node, "n1");
}

#[tokio::test]
async fn replace_emits_sync_when_replaced_is_off() {
    let f = DeltaFifo::new(DeltaFifoOptions::<Pod>::default().emit_delta_type_replaced(false));
    f.replace(vec![p("a")], "1");
    assert_eq!(types(&pop(&f).await), vec![DeltaType::Sync]);
}

#[tokio::test]
async fn has_synced_after_the_initial_list_is_popped() {
    let w = Writer::new();
    let f = fifo_with(&w);
    assert!(!f.has_synced());
    f.replace(vec![p("a"), p("b")], "1");
    assert!(!f.has_synced());
    let mut flags = Vec::new();
    f.pop(|_, initial| {
        flags.push(initial);
        Ok(())
    })
    .await
    .unwrap();
    assert!(!f.has_synced());
    f.add(p("c"));
    f.pop(|_, initial| {
        flags.push(initial);
        Ok(())
    })
    .await
    .unwrap();
    assert!(f.has_synced());
    f.pop(|_, initial| {
        flags.push(initial);
        Ok(())
    })
    .await
    .unwrap();
    assert_eq!(flags, vec![true, true, false]);
}

#[tokio::test]
async fn has_synced_after_an_add_before_any_list() {
    let f = fifo();
    f.add(p("a"));
    assert!(f.has_synced());
}

#[tokio::test]
async fn requeue_puts_the_deltas_back() {
    let f = fifo();
    f.add(p("a"));
    f.add(p("b"));
    let err = f.pop(|_, _| Err(ProcessError::requeue("try later"))).await.unwrap_err();
    assert!(matches!(err, Error::Requeued(_)));
    // Back at the end of the queue, with the same deltas.
    assert_eq!(pop(&f).await[0].object.object().unwrap().metadata.name.as_deref(), Some("b"));
    assert_eq!(types(&pop(&f).await), vec![DeltaType::Added]);
}

#[tokio::test]
async fn a_failed_process_drops_the_deltas() {
    let f = fifo();
    f.add(p("a"));
    let err = f.pop(|_, _| Err(ProcessError::fail("broken"))).await.unwrap_err();
    assert!(matches!(err, Error::Process(_)));
    assert!(f.is_empty());
}

#[tokio::test]
async fn add_if_not_present_keeps_newer_deltas() {
    let f = fifo();
    f.add(p("a"));
    let old = pop(&f).await;
    f.update(p("a"));
    f.add_if_not_present(old);
    assert_eq!(types(&pop(&f).await), vec![DeltaType::Updated]);
}

#[tokio::test]
async fn close_ends_pops_after_the_queue_is_empty() {
    let f = fifo();
    f.add(p("a"));
    f.close();
    assert!(f.is_closed());
    assert_eq!(pop(&f).await.len(), 1);
    assert!(matches!(f.pop(|_, _| Ok(())).await, Err(Error::Closed)));
}

#[tokio::test]
async fn close_wakes_a_waiting_pop() {
    let f = fifo();
    let waiter = tokio::spawn({
        let f = f.clone();
        async move { f.pop(|_, _| Ok(())).await.map(|_| ()) }
    });
    tokio::task::yield_now().await;
    f.close();
    let res = tokio::time::timeout(Duration::from_secs(5), waiter).await.unwrap().unwrap();
    assert!(matches!(res, Err(Error::Closed)));
}

#[tokio::test]
async fn a_waiting_pop_gets_a_later_add() {
    let f = fifo();
    let waiter = tokio::spawn({
        let f = f.clone();
        async move { f.pop(|_, _| Ok(())).await.map(|d| d.len()) }
    });
    tokio::task::yield_now().await;
    f.add(p("a"));
    let res = tokio::time::timeout(Duration::from_secs(5), waiter).await.unwrap().unwrap();
    assert_eq!(res.unwrap(), 1);
}

#[tokio::test]
async fn resync_queues_sync_for_known_objects_not_already_queued() {
    let mut w = Writer::new();
    w.add(p("idle"));
    w.add(p("busy"));
    let f = fifo_with(&w);
    f.update(p("busy"));
    f.resync();
    assert_eq!(types(&f.get_by_key("ns/idle").unwrap()), vec![DeltaType::Sync]);
    assert_eq!(types(&f.get_by_key("ns/busy").unwrap()), vec![DeltaType::Updated]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_pops_never_overlap() {
    let f = fifo();
    for i in 0..200 {
        f.add(p(&format!("p{}", i % 7)));
    }
    let in_process = Arc::new(AtomicUsize::new(0));
    let overlaps = Arc::new(AtomicUsize::new(0));
    let workers: Vec<_> = (0..2)
        .map(|_| {
            let (f, in_process, overlaps) = (f.clone(), Arc::clone(&in_process), Arc::clone(&overlaps));
            tokio::spawn(async move {
                loop {
                    let res = f
                        .pop(|_, _| {
                            if in_process.fetch_add(1, Ordering::SeqCst) != 0 {
                                overlaps.fetch_add(1, Ordering::SeqCst);
                            }
                            std::thread::yield_now();
                            in_process.fetch_sub(1, Ordering::SeqCst);
                            Ok(())
                        })
                        .await;
                    if res.is_err() {
                        return;
                    }
                }
            })
        })
        .collect();
    for i in 0..200 {
        f.update(p(&format!("p{}", i % 7)));
        tokio::task::yield_now().await;
    }
    f.close();
    for w in workers {
        w.await.unwrap();
    }
    assert_eq!(overlaps.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn an_emptied_queue_gives_back_the_room_of_a_large_relist() {
    let f = fifo();
    let many = KEEP_ROOM + 1;
    f.replace((0..many).map(|i| p(&format!("p{i}"))).collect(), "1");
    for _ in 0..many {
        pop(&f).await;
    }
    let st = f.shared.state.lock();
    assert_eq!((st.items.capacity(), st.queue.capacity()), (0, 0), "room for {many} keys kept after the drain");
}

#[tokio::test]
async fn a_small_queue_keeps_its_room_between_events() {
    let f = fifo();
    f.replace((0..10).map(|i| p(&format!("p{i}"))).collect(), "1");
    for _ in 0..10 {
        pop(&f).await;
    }
    let st = f.shared.state.lock();
    assert!(st.items.capacity() >= 10 && st.queue.capacity() >= 10);
}

#[tokio::test]
async fn a_popped_key_is_the_queued_buffer_and_names_its_object() {
    let f = fifo();
    f.add(p("a"));
    let queued = Arc::clone(&f.shared.state.lock().queue[0]);
    let mut seen = None;
    f.pop_keyed(|key, deltas, _| {
        assert_eq!(deltas.len(), 1);
        seen = Some(Arc::clone(key));
        Ok(())
    })
    .await
    .unwrap();
    let seen = seen.expect("process was called");
    assert_eq!(&*seen, "ns/a");
    assert!(Arc::ptr_eq(&seen, &queued), "the key was copied on its way out");
}
