//! Ours: processing a pop without the queue's lock (client-go's
//! `UnlockWhileProcessingFIFO`, which has no test of its own upstream).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::*;
use crate::cache::fifo_test_support::{Literal, obj};
use crate::testing::Pod;

/// Whether an add from another thread, made while the first list is being
/// processed, lands before `process` returns.
async fn an_add_lands_during_processing(options: RealFifoOptions<Pod>, queued_behind: usize) -> bool {
    let f = RealFifo::new(options);
    f.replace(vec![obj("a", 1)], "5");
    for i in 0..queued_behind {
        f.add(obj(&format!("behind{i}"), 2));
    }
    let added = Arc::new(AtomicBool::new(false));
    let (go, wait) = std::sync::mpsc::channel();
    let adder = {
        let (f, added) = (f.clone(), Arc::clone(&added));
        std::thread::spawn(move || {
            wait.recv().unwrap();
            f.add(obj("b", 2));
            added.store(true, Ordering::SeqCst);
        })
    };
    let mut landed = false;
    f.pop(|entry, initial| {
        assert!(initial, "the first list: {entry:?}");
        go.send(()).unwrap();
        for _ in 0..20 {
            if added.load(Ordering::SeqCst) {
                landed = true;
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    })
    .await
    .unwrap();
    adder.join().unwrap();
    assert!(f.has_synced(), "synced once the list is processed");
    assert_eq!(f.take_reached_list().as_deref(), Some("5"));
    assert_eq!(f.len(), queued_behind + 1, "the add is queued");
    landed
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_short_queue_takes_changes_while_a_pop_is_processed() {
    let options = || RealFifoOptions::new(Arc::new(Literal(vec![]))).batch_size(2);
    // (case, options, entries queued behind the one processed, whether an
    // add lands meanwhile)
    let table: Vec<(&str, RealFifoOptions<Pod>, usize, bool)> = vec![
        ("by default", options(), 0, true),
        ("less than two batches queued", options(), 3, true),
        ("two batches queued", options(), 4, false),
        ("turned off", options().unlock_while_processing(false), 0, false),
        ("without atomic events", options().atomic_events(false), 0, false),
    ];
    for (case, options, behind, want) in table {
        assert_eq!(an_add_lands_during_processing(options, behind).await, want, "{case}");
    }
}

/// While the first list is processed without the lock, the queue has not
/// synced and the list's version is not reached: a reader polling them
/// sees them only once the processing is done.
#[tokio::test]
async fn a_list_counts_as_popped_once_processed() {
    let f = RealFifo::new(RealFifoOptions::new(Arc::new(Literal(vec![]))));
    f.replace(vec![obj("a", 1)], "5");
    f.pop(|_, _| {
        assert!(!f.has_synced(), "synced while processing");
        assert_eq!(f.take_reached_list(), None, "reached while processing");
    })
    .await
    .unwrap();
    assert!(f.has_synced());
    assert_eq!(f.take_reached_list().as_deref(), Some("5"));
}
