use std::time::Duration;

use tokio::time::{advance, timeout};

use super::*;

/// Gets an item that must already be there, without waiting on time.
async fn get_now<T: QueueItem>(q: &Queue<T>) -> Option<T> {
    timeout(Duration::from_millis(1), q.get()).await.ok().flatten()
}

#[tokio::test]
async fn add_dedups_queued_items_and_keeps_first_order() {
    let q = Queue::new();
    q.add("a");
    q.add("b");
    q.add("a");
    assert_eq!(q.len(), 2);
    assert_eq!(q.get().await, Some("a"));
    assert_eq!(q.get().await, Some("b"));
}

#[tokio::test(start_paused = true)]
async fn item_added_while_processing_is_requeued_on_done_only() {
    let q = Queue::new();
    q.add("a");
    let item = q.get().await.unwrap();
    q.add("a");
    assert_eq!(q.len(), 0, "must not be handed to a second worker while processed");
    assert_eq!(get_now(&q).await, None);
    q.done(&item);
    assert_eq!(q.len(), 1);
    assert_eq!(q.get().await, Some("a"));
}

#[tokio::test]
async fn done_without_readd_does_not_requeue() {
    let q = Queue::new();
    q.add(1);
    let i = q.get().await.unwrap();
    q.done(&i);
    assert!(q.is_empty());
}

#[tokio::test]
async fn get_waits_for_an_add() {
    let q = Queue::new();
    let waiter = tokio::spawn({
        let q = q.clone();
        async move { q.get().await }
    });
    tokio::task::yield_now().await;
    q.add(7);
    assert_eq!(waiter.await.unwrap(), Some(7));
}

#[tokio::test]
async fn several_waiting_workers_each_get_one_item() {
    let q = Queue::new();
    let workers: Vec<_> = (0..4)
        .map(|_| {
            let q = q.clone();
            tokio::spawn(async move { q.get().await })
        })
        .collect();
    tokio::task::yield_now().await;
    for i in 0..4 {
        q.add(i);
    }
    let mut got: Vec<i32> = Vec::new();
    for w in workers {
        got.push(w.await.unwrap().unwrap());
    }
    got.sort();
    assert_eq!(got, vec![0, 1, 2, 3]);
}

#[tokio::test(start_paused = true)]
async fn a_backlog_keeps_every_worker_busy() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};

    let q = Queue::new();
    let (busy, most_busy) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let workers: Vec<_> = (0..4)
        .map(|_| {
            let (q, busy, most_busy) = (q.clone(), busy.clone(), most_busy.clone());
            tokio::spawn(async move {
                while let Some(item) = q.get().await {
                    most_busy.fetch_max(busy.fetch_add(1, SeqCst) + 1, SeqCst);
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    busy.fetch_sub(1, SeqCst);
                    q.done(&item);
                }
            })
        })
        .collect();
    tokio::task::yield_now().await;
    let start = tokio::time::Instant::now();
    for i in 0..8 {
        q.add(i);
    }
    while !q.is_empty() || busy.load(SeqCst) > 0 {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    q.shut_down();
    for w in workers {
        w.await.unwrap();
    }
    assert_eq!(most_busy.load(SeqCst), 4, "all four workers take part");
    assert!(start.elapsed() < Duration::from_secs(3), "eight seconds of work in two rounds: {:?}", start.elapsed());
}

/// Workers whose processing holds their thread (CPU-bound work, no
/// `await`) still run side by side on a multi-threaded runtime: a burst of
/// adds wakes a worker per item, and tokio lets idle threads take all but
/// the last one woken (that one waits in the waking thread's LIFO slot,
/// which no other thread takes from). Waking one worker at a time and
/// letting each wake the next, tried for the workqueue benchmark, kept the
/// next worker in the busy thread's LIFO slot: one thread worked, the other
/// idled.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workers_holding_their_thread_run_on_every_thread() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};

    let q = Queue::new();
    let [busy, most_busy, processed] = [(); 3].map(|()| Arc::new(AtomicUsize::new(0)));
    let workers: Vec<_> = (0..4)
        .map(|_| {
            let (q, busy, most_busy, processed) = (q.clone(), busy.clone(), most_busy.clone(), processed.clone());
            tokio::spawn(async move {
                while let Some(item) = q.get().await {
                    most_busy.fetch_max(busy.fetch_add(1, SeqCst) + 1, SeqCst);
                    // Long enough to overlap with the other thread's item.
                    std::thread::sleep(Duration::from_millis(50));
                    busy.fetch_sub(1, SeqCst);
                    q.done(&item);
                    processed.fetch_add(1, SeqCst);
                }
            })
        })
        .collect();
    // The workers wait in `get` before the burst, as a controller's do.
    while q.inner.state.lock().idle.len() < 4 {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let producer = tokio::spawn({
        let q = q.clone();
        async move {
            for i in 0..8 {
                q.add(i);
            }
        }
    });
    producer.await.unwrap();
    // Shut down only once all is done: a shutdown wakes every worker.
    while processed.load(SeqCst) < 8 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    q.shut_down();
    for w in workers {
        w.await.unwrap();
    }
    assert_eq!(most_busy.load(SeqCst), 2, "both runtime threads process items");
}

#[tokio::test]
async fn shut_down_wakes_waiting_workers_with_none() {
    let q: Queue<u32> = Queue::new();
    let waiter = tokio::spawn({
        let q = q.clone();
        async move { q.get().await }
    });
    tokio::task::yield_now().await;
    q.shut_down();
    assert_eq!(waiter.await.unwrap(), None);
    assert!(q.shutting_down());
}

#[tokio::test]
async fn after_shut_down_adds_are_ignored_but_queued_items_are_handed_out() {
    let q = Queue::new();
    q.add("a");
    q.shut_down();
    q.add("b");
    assert_eq!(q.get().await, Some("a"));
    assert_eq!(q.get().await, None);
}

/// A queue with "a" handed out and not done yet, and a task that has
/// started draining it.
async fn draining_while_processing() -> (Queue<&'static str>, &'static str, tokio::task::JoinHandle<()>) {
    let q = Queue::new();
    q.add("a");
    let item = q.get().await.unwrap();
    let drain = tokio::spawn({
        let q = q.clone();
        async move { q.shut_down_with_drain().await }
    });
    tokio::task::yield_now().await;
    (q, item, drain)
}

#[tokio::test(start_paused = true)]
async fn shut_down_with_drain_waits_for_processing_items() {
    let (q, item, drain) = draining_while_processing().await;
    assert!(!drain.is_finished(), "drain returned while an item is processed");
    assert!(q.shutting_down());
    q.done(&item);
    timeout(Duration::from_secs(1), drain).await.expect("drain did not finish").unwrap();
}

#[tokio::test(start_paused = true)]
async fn shut_down_ends_a_pending_drain() {
    let (q, _held, drain) = draining_while_processing().await;
    q.shut_down();
    timeout(Duration::from_secs(1), drain).await.expect("drain did not finish").unwrap();
}

#[tokio::test]
async fn drain_with_nothing_processing_returns_at_once() {
    let q: Queue<u8> = Queue::new();
    q.shut_down_with_drain().await;
    assert!(q.shutting_down());
}

#[tokio::test(start_paused = true)]
async fn add_after_adds_once_the_delay_passed() {
    let q = DelayingQueue::new();
    q.add_after("a", Duration::from_secs(1));
    assert_eq!(q.len(), 0);
    assert_eq!(q.len_waiting(), 1);
    advance(Duration::from_millis(999)).await;
    assert_eq!(q.len(), 0);
    advance(Duration::from_millis(1)).await;
    assert_eq!(q.len(), 1);
    assert_eq!(q.get().await, Some("a"));
}

#[tokio::test(start_paused = true)]
async fn add_after_zero_adds_now() {
    let q = DelayingQueue::new();
    q.add_after("a", Duration::ZERO);
    assert_eq!(q.len(), 1);
}

#[tokio::test(start_paused = true)]
async fn add_after_hands_out_in_time_order() {
    let q = DelayingQueue::new();
    q.add_after("late", Duration::from_secs(3));
    q.add_after("early", Duration::from_secs(1));
    q.add_after("middle", Duration::from_secs(2));
    let start = tokio::time::Instant::now();
    assert_eq!(q.get().await, Some("early"));
    assert_eq!(start.elapsed(), Duration::from_secs(1));
    assert_eq!(q.get().await, Some("middle"));
    assert_eq!(q.get().await, Some("late"));
    assert_eq!(start.elapsed(), Duration::from_secs(3));
}

#[tokio::test(start_paused = true)]
async fn add_after_earlier_time_wins() {
    let q = DelayingQueue::new();
    q.add_after("a", Duration::from_secs(10));
    q.add_after("a", Duration::from_secs(1));
    q.add_after("a", Duration::from_secs(5));
    assert_eq!(q.len_waiting(), 1);
    advance(Duration::from_secs(1)).await;
    assert_eq!(q.len(), 1);
    assert_eq!(q.get().await, Some("a"));
    advance(Duration::from_secs(20)).await;
    assert_eq!(q.len(), 0, "the later schedules must be gone");
}

#[tokio::test(start_paused = true)]
async fn waiting_get_wakes_for_a_new_earlier_item() {
    let q = DelayingQueue::new();
    q.add_after("late", Duration::from_secs(100));
    let start = tokio::time::Instant::now();
    let worker = tokio::spawn({
        let q = q.clone();
        async move { q.get().await }
    });
    tokio::task::yield_now().await;
    q.add_after("soon", Duration::from_secs(1));
    assert_eq!(worker.await.unwrap(), Some("soon"));
    assert_eq!(start.elapsed(), Duration::from_secs(1));
}

#[tokio::test(start_paused = true)]
async fn delayed_items_are_dropped_on_shut_down() {
    let q = DelayingQueue::new();
    q.add_after("a", Duration::from_secs(1));
    q.shut_down();
    advance(Duration::from_secs(2)).await;
    assert_eq!(q.get().await, None);
}

#[tokio::test(start_paused = true)]
async fn an_unrepresentable_delay_means_never_not_a_panic() {
    let q = DelayingQueue::new();
    q.add_after("a", Duration::MAX);
    assert_eq!(q.len_waiting(), 1);
    advance(Duration::from_secs(86_400 * 365)).await;
    assert_eq!(q.len(), 0);
}

#[test]
fn a_bucket_without_refill_says_wait_forever() {
    let l = BucketRateLimiter::new(0.0, 1);
    assert_eq!(RateLimiter::<()>::when(&l, &()), Duration::ZERO);
    assert_eq!(RateLimiter::<()>::when(&l, &()), Duration::MAX);
}

#[test]
fn exponential_limiter_doubles_and_caps() {
    let l = ItemExponentialFailureRateLimiter::new(Duration::from_millis(1), Duration::from_secs(1));
    let got: Vec<_> = (0..12).map(|_| l.when(&"one")).collect();
    let ms = |v: u64| Duration::from_millis(v);
    assert_eq!(
        got,
        vec![ms(1), ms(2), ms(4), ms(8), ms(16), ms(32), ms(64), ms(128), ms(256), ms(512), ms(1000), ms(1000)]
    );
    assert_eq!(l.num_requeues(&"one"), 12);
    assert_eq!(l.when(&"two"), ms(1), "items are independent");
}

#[test]
fn exponential_limiter_does_not_overflow() {
    let l = ItemExponentialFailureRateLimiter::<u8>::default();
    let mut last = Duration::ZERO;
    for _ in 0..200 {
        last = l.when(&1);
    }
    assert_eq!(last, Duration::from_secs(1000));
}

#[test]
fn forget_resets_the_exponential_limiter() {
    let l = ItemExponentialFailureRateLimiter::new(Duration::from_millis(5), Duration::from_secs(1000));
    l.when(&"a");
    l.when(&"a");
    assert_eq!(l.when(&"a"), Duration::from_millis(20));
    l.forget(&"a");
    assert_eq!(l.num_requeues(&"a"), 0);
    assert_eq!(l.when(&"a"), Duration::from_millis(5));
}

#[test]
fn fast_slow_limiter_switches_after_max_fast_attempts() {
    let l = ItemFastSlowRateLimiter::new(Duration::from_millis(5), Duration::from_secs(10), 3);
    let got: Vec<_> = (0..5).map(|_| l.when(&"a")).collect();
    let fast = Duration::from_millis(5);
    let slow = Duration::from_secs(10);
    assert_eq!(got, vec![fast, fast, fast, slow, slow]);
    assert_eq!(l.num_requeues(&"a"), 5);
    l.forget(&"a");
    assert_eq!(l.when(&"a"), fast);
}

#[tokio::test(start_paused = true)]
async fn bucket_limiter_allows_burst_then_spaces_by_qps() {
    let l = BucketRateLimiter::new(10.0, 100);
    for i in 0..100 {
        assert_eq!(RateLimiter::<u32>::when(&l, &i), Duration::ZERO, "call {i} is within the burst");
    }
    assert_eq!(RateLimiter::<u32>::when(&l, &0), Duration::from_millis(100));
    assert_eq!(RateLimiter::<u32>::when(&l, &0), Duration::from_millis(200));
    // The debt of 2 tokens is paid back after 200 ms, then one more refills.
    advance(Duration::from_millis(300)).await;
    assert_eq!(RateLimiter::<u32>::when(&l, &0), Duration::ZERO);
    assert_eq!(RateLimiter::<u32>::when(&l, &0), Duration::from_millis(100));
    assert_eq!(RateLimiter::<u32>::num_requeues(&l, &0), 0);
}

#[tokio::test(start_paused = true)]
async fn bucket_limiter_refills_only_up_to_burst() {
    let l = BucketRateLimiter::new(1.0, 2);
    advance(Duration::from_secs(3600)).await;
    assert_eq!(RateLimiter::<()>::when(&l, &()), Duration::ZERO);
    assert_eq!(RateLimiter::<()>::when(&l, &()), Duration::ZERO);
    assert_eq!(RateLimiter::<()>::when(&l, &()), Duration::from_secs(1));
}

#[tokio::test(start_paused = true)]
async fn max_of_takes_the_longest_delay() {
    let l = MaxOfRateLimiter::new(vec![
        Box::new(ItemFastSlowRateLimiter::new(Duration::from_millis(1), Duration::from_secs(7), 1)),
        Box::new(ItemExponentialFailureRateLimiter::new(Duration::from_millis(10), Duration::from_secs(100))),
    ]);
    assert_eq!(l.when(&"a"), Duration::from_millis(10));
    assert_eq!(l.when(&"a"), Duration::from_secs(7));
    assert_eq!(l.num_requeues(&"a"), 2);
    l.forget(&"a");
    assert_eq!(l.num_requeues(&"a"), 0);
    assert_eq!(l.when(&"a"), Duration::from_millis(10));
}

#[tokio::test(start_paused = true)]
async fn default_controller_limiter_sequence() {
    let l = default_controller_rate_limiter::<String>();
    let a = "a".to_owned();
    let got: Vec<_> = (0..4).map(|_| l.when(&a)).collect();
    let ms = Duration::from_millis;
    assert_eq!(got, vec![ms(5), ms(10), ms(20), ms(40)]);
    // The bucket (burst 100) now dominates for a fresh item.
    for i in 0..96 {
        let _ = l.when(&format!("x{i}"));
    }
    assert_eq!(l.when(&"b".to_owned()), ms(100));
}

#[tokio::test(start_paused = true)]
async fn rate_limiting_queue_delays_retries_and_counts_requeues() {
    let q =
        RateLimitingQueue::new(ItemExponentialFailureRateLimiter::new(Duration::from_secs(1), Duration::from_secs(60)));
    q.add_rate_limited("a");
    assert_eq!(q.num_requeues(&"a"), 1);
    assert_eq!(q.len(), 0);
    advance(Duration::from_secs(1)).await;
    assert_eq!(q.get().await, Some("a"));
    q.done(&"a");
    q.add_rate_limited("a");
    advance(Duration::from_secs(1)).await;
    assert_eq!(q.len(), 0, "second failure waits 2s");
    advance(Duration::from_secs(1)).await;
    assert_eq!(q.len(), 1);
    q.forget(&"a");
    assert_eq!(q.num_requeues(&"a"), 0);
}

