//! The cases of client-go's own workqueue tests
//! (`k8s.io/client-go/util/workqueue`, v0.35: `queue_test.go`,
//! `delaying_queue_test.go`, `rate_limiting_queue_test.go`,
//! `default_rate_limiters_test.go`), as tables of ours. Each test names the
//! upstream function it follows. Upstream's fake clock is tokio's paused
//! time here; its `Get` returning `(item, shutdown)` is our `Option`.
//!
//! `metrics_test.go` is ported with our 500 ms unfinished-work period
//! (upstream's test injects 1 ms). Not ported: `parallelizer_test.go` (no
//! `ParallelizeUntil` here).

use std::collections::HashMap;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::time::{advance, timeout};

use super::*;

const MS: fn(u64) -> Duration = Duration::from_millis;

/// An item that must already be there, without waiting on time.
async fn get_now<T: QueueItem>(q: &Queue<T>) -> Option<T> {
    timeout(Duration::from_millis(1), q.get()).await.ok().flatten()
}

// queue_test.go TestBasic: 50 producers adding their number 50 times, 10
// consumers, then a shutdown (plain and with drain); nothing added after
// the shutdown is handed out and the queue ends empty.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn basic_producers_and_consumers() {
    for drain in [false, true] {
        let q: Queue<i64> = Queue::new();
        let producers: Vec<_> = (0..50)
            .map(|i| {
                let q = q.clone();
                tokio::spawn(async move {
                    for _ in 0..50 {
                        q.add(i);
                        tokio::task::yield_now().await;
                    }
                })
            })
            .collect();
        let consumers: Vec<_> = (0..10)
            .map(|_| {
                let q = q.clone();
                tokio::spawn(async move {
                    while let Some(item) = q.get().await {
                        assert_ne!(item, -1, "got an item added after shutdown");
                        tokio::task::yield_now().await;
                        q.done(&item);
                    }
                })
            })
            .collect();
        for p in producers {
            p.await.unwrap();
        }
        if drain {
            q.shut_down_with_drain().await;
        } else {
            q.shut_down();
        }
        q.add(-1);
        for c in consumers {
            timeout(Duration::from_secs(10), c).await.expect("consumers never finished").unwrap();
        }
        assert_eq!(q.len(), 0, "drain {drain}");
    }
}

// queue_test.go TestAddWhileProcessing: each consumer re-adds an item the
// first time it sees it, while processing it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn add_while_processing() {
    for drain in [false, true] {
        let q: Queue<i64> = Queue::new();
        for i in 0..50 {
            q.add(i);
        }
        let consumers: Vec<_> = (0..10)
            .map(|_| {
                let q = q.clone();
                tokio::spawn(async move {
                    let mut counters: HashMap<i64, u32> = HashMap::new();
                    while let Some(item) = q.get().await {
                        let n = counters.entry(item).or_default();
                        *n += 1;
                        if *n < 2 {
                            q.add(item);
                        }
                        q.done(&item);
                    }
                })
            })
            .collect();
        // Let the consumers see every item twice before shutting down
        // (upstream races the shutdown against them; either way the queue
        // must end empty).
        tokio::time::sleep(MS(50)).await;
        if drain {
            q.shut_down_with_drain().await;
        } else {
            q.shut_down();
        }
        for c in consumers {
            timeout(Duration::from_secs(10), c).await.expect("consumers never finished").unwrap();
        }
        assert_eq!(q.len(), 0, "drain {drain}");
    }
}

// queue_test.go TestLen
#[tokio::test]
async fn len() {
    let q = Queue::new();
    q.add("foo");
    assert_eq!(q.len(), 1);
    q.add("bar");
    assert_eq!(q.len(), 2);
    q.add("foo"); // should not increase the queue length
    assert_eq!(q.len(), 2);
}

// queue_test.go TestReinsert
#[tokio::test]
async fn reinsert() {
    let q = Queue::new();
    q.add("foo");
    let i = q.get().await.unwrap();
    assert_eq!(i, "foo");
    q.add(i);
    q.done(&i);
    let i = q.get().await.unwrap();
    assert_eq!(i, "foo");
    q.done(&i);
    assert_eq!(q.len(), 0);
}

// queue_test.go TestCollapse. Upstream also checks that the backing queue
// was "touched" by the second add; our queue has no pluggable backing
// queue, so that part is not expressible.
#[tokio::test]
async fn collapse() {
    let q = Queue::new();
    q.add("bar");
    q.add("bar");
    let i = q.get().await.unwrap();
    assert_eq!(i, "bar");
    q.done(&i);
    assert_eq!(q.len(), 0);
}

// queue_test.go TestCollapseWhileProcessing: a second worker is blocked
// until the first one is done with the item.
#[tokio::test(start_paused = true)]
async fn collapse_while_processing() {
    let q = Queue::new();
    q.add("foo");
    let i = q.get().await.unwrap();
    assert_eq!(i, "foo");
    q.add("foo");
    q.add("foo");
    let second = tokio::spawn({
        let q = q.clone();
        async move {
            let i = q.get().await.unwrap();
            q.done(&i);
            i
        }
    });
    tokio::time::sleep(MS(100)).await;
    assert!(!second.is_finished(), "worker should be blocked until we are done");
    q.done(&"foo");
    assert_eq!(second.await.unwrap(), "foo");
    assert_eq!(q.len(), 0);
}

// queue_test.go TestQueueDrainageUsingShutDownWithDrain
#[tokio::test]
async fn drainage_using_shut_down_with_drain() {
    let q = Queue::new();
    q.add("foo");
    q.add("bar");
    let first = q.get().await.unwrap();
    let second = q.get().await.unwrap();
    let drained = tokio::spawn({
        let q = q.clone();
        async move { q.shut_down_with_drain().await }
    });
    while q.get().await.is_some() {}
    assert!(!drained.is_finished(), "drain must wait for the items being processed");
    q.done(&first);
    q.done(&second);
    timeout(Duration::from_secs(5), drained).await.expect("drain never finished").unwrap();
}

// queue_test.go TestNoQueueDrainageUsingShutDown
#[tokio::test]
async fn no_drainage_using_shut_down() {
    let q = Queue::new();
    q.add("foo");
    q.add("bar");
    q.get().await.unwrap();
    q.get().await.unwrap();
    // Returns although both items are still being processed.
    q.shut_down();
    assert!(q.shutting_down());
}

// queue_test.go TestForceQueueShutdownUsingShutDown
#[tokio::test]
async fn force_shutdown_using_shut_down() {
    let q = Queue::new();
    q.add("foo");
    q.add("bar");
    q.get().await.unwrap();
    q.get().await.unwrap();
    let drained = tokio::spawn({
        let q = q.clone();
        async move { q.shut_down_with_drain().await }
    });
    while q.get().await.is_some() {}
    q.shut_down();
    timeout(Duration::from_secs(5), drained).await.expect("shut_down did not end the drain").unwrap();
}

// queue_test.go TestQueueDrainageUsingShutDownWithDrainWithDirtyItem: an
// item added again while processed is handed out once more during the
// drain, then the queue reports the shutdown.
#[tokio::test]
async fn drainage_with_dirty_item() {
    let q = Queue::new();
    q.add("foo");
    let gotten = q.get().await.unwrap();
    q.add("foo");
    let drained = tokio::spawn({
        let q = q.clone();
        async move { q.shut_down_with_drain().await }
    });
    while q.get().await.is_some() {}
    q.done(&gotten);
    let again = get_now(&q).await.expect("should not have been done");
    q.done(&again);
    assert_eq!(get_now(&q).await, None, "should have been done");
    timeout(Duration::from_secs(5), drained).await.expect("drain never finished").unwrap();
}

// queue_test.go TestGarbageCollection: not expressible as such (no GC);
// items are owned values, and `done` drops the queue's copies, which the
// `Arc` count of a handed-out item shows.
#[tokio::test]
async fn items_are_not_kept_after_done() {
    let q: Queue<std::sync::Arc<String>> = Queue::new();
    let item = std::sync::Arc::new("hello".to_owned());
    q.add(item.clone());
    let o = q.get().await.unwrap();
    q.done(&o);
    drop(o);
    assert_eq!(std::sync::Arc::strong_count(&item), 1);
}

// delaying_queue_test.go TestSimpleQueue
#[tokio::test(start_paused = true)]
async fn simple_delaying_queue() {
    let q = DelayingQueue::new();
    q.add_after("foo", MS(50));
    assert_eq!(q.len_waiting(), 1);
    assert_eq!(q.len(), 0, "should not have added");
    advance(MS(60)).await;
    assert_eq!(q.len(), 1, "should have added");
    let item = q.get().await.unwrap();
    q.done(&item);
    advance(Duration::from_secs(10)).await;
    assert_eq!(q.len(), 0, "should not have added");
}

// delaying_queue_test.go TestDeduping: the earlier time wins.
#[tokio::test(start_paused = true)]
async fn deduping() {
    let q = DelayingQueue::new();
    q.add_after("foo", MS(50));
    q.add_after("foo", MS(70));
    assert_eq!(q.len(), 0);
    advance(MS(60)).await;
    assert_eq!(q.len(), 1);
    let item = q.get().await.unwrap();
    q.done(&item);
    advance(MS(20)).await;
    assert_eq!(q.len(), 0, "the 70 ms add was collapsed into the 50 ms one");

    q.add_after("foo", MS(50));
    q.add_after("foo", MS(30));
    assert_eq!(q.len(), 0);
    advance(MS(40)).await;
    assert_eq!(q.len(), 1);
    let item = q.get().await.unwrap();
    q.done(&item);
    advance(MS(20)).await;
    assert_eq!(q.len(), 0);
}

// delaying_queue_test.go TestAddTwoFireEarly
#[tokio::test(start_paused = true)]
async fn add_two_fire_early() {
    let q = DelayingQueue::new();
    q.add_after("foo", Duration::from_secs(1));
    q.add_after("bar", MS(50));
    assert_eq!(q.len(), 0);
    advance(MS(60)).await;
    assert_eq!(q.len(), 1);
    assert_eq!(q.get().await, Some("bar"));
    q.add_after("baz", Duration::from_secs(2));
    advance(Duration::from_secs(1)).await;
    assert_eq!(q.len(), 1);
    assert_eq!(q.get().await, Some("foo"));
    advance(Duration::from_secs(2)).await;
    assert_eq!(q.len(), 1);
    assert_eq!(q.get().await, Some("baz"));
}

// delaying_queue_test.go TestCopyShifting
#[tokio::test(start_paused = true)]
async fn copy_shifting() {
    let q = DelayingQueue::new();
    q.add_after("foo", Duration::from_secs(1));
    q.add_after("bar", MS(500));
    q.add_after("baz", MS(250));
    assert_eq!(q.len(), 0);
    advance(Duration::from_secs(2)).await;
    assert_eq!(q.len(), 3);
    for want in ["baz", "bar", "foo"] {
        assert_eq!(q.get().await, Some(want));
    }
}

// rate_limiting_queue_test.go TestRateLimitingQueue: the delay of each
// rate-limited add, seen as the time it takes to become ready.
#[tokio::test(start_paused = true)]
async fn rate_limiting_queue() {
    let q = RateLimitingQueue::new(ItemExponentialFailureRateLimiter::new(MS(1), Duration::from_secs(1)));
    // Adds `item` rate-limited; returns after how many ms it is ready.
    async fn delay(q: &RateLimitingQueue<&'static str>, item: &'static str) -> u64 {
        q.add_rate_limited(item);
        let mut waited = 0;
        while q.is_empty() {
            advance(MS(1)).await;
            waited += 1;
        }
        let got = q.get().await.unwrap();
        q.done(&got);
        waited
    }
    assert_eq!(delay(&q, "one").await, 1);
    assert_eq!(delay(&q, "one").await, 2);
    assert_eq!(q.num_requeues(&"one"), 2);
    assert_eq!(delay(&q, "two").await, 1);
    assert_eq!(delay(&q, "two").await, 2);
    q.forget(&"one");
    assert_eq!(q.num_requeues(&"one"), 0);
    assert_eq!(delay(&q, "one").await, 1);
}

/// One `when` or `num_requeues`/`forget` step of a limiter table.
enum Step {
    When(&'static str, Duration),
    Requeues(&'static str, u32),
    Forget(&'static str),
}
use Step::*;

fn run_steps(l: &dyn RateLimiter<&'static str>, steps: &[Step]) {
    for (i, step) in steps.iter().enumerate() {
        match step {
            When(item, want) => assert_eq!(l.when(item), *want, "step {i}: when({item})"),
            Requeues(item, want) => assert_eq!(l.num_requeues(item), *want, "step {i}: num_requeues({item})"),
            Forget(item) => l.forget(item),
        }
    }
}

// default_rate_limiters_test.go TestItemExponentialFailureRateLimiter
#[test]
fn item_exponential_failure_rate_limiter() {
    let l = ItemExponentialFailureRateLimiter::new(MS(1), Duration::from_secs(1));
    run_steps(
        &l,
        &[
            When("one", MS(1)),
            When("one", MS(2)),
            When("one", MS(4)),
            When("one", MS(8)),
            When("one", MS(16)),
            Requeues("one", 5),
            When("two", MS(1)),
            When("two", MS(2)),
            Requeues("two", 2),
            Forget("one"),
            Requeues("one", 0),
            When("one", MS(1)),
        ],
    );
}

// default_rate_limiters_test.go TestItemExponentialFailureRateLimiterOverFlow
#[test]
fn item_exponential_failure_rate_limiter_overflow() {
    let l = ItemExponentialFailureRateLimiter::new(MS(1), Duration::from_secs(1000));
    for _ in 0..5 {
        l.when(&"one");
    }
    assert_eq!(l.when(&"one"), MS(32));
    for _ in 0..1000 {
        l.when(&"overflow1");
    }
    assert_eq!(l.when(&"overflow1"), Duration::from_secs(1000));

    let l = ItemExponentialFailureRateLimiter::new(Duration::from_secs(60), Duration::from_secs(1000 * 3600));
    for _ in 0..2 {
        l.when(&"two");
    }
    assert_eq!(l.when(&"two"), Duration::from_secs(4 * 60));
    for _ in 0..1000 {
        l.when(&"overflow2");
    }
    assert_eq!(l.when(&"overflow2"), Duration::from_secs(1000 * 3600));
}

/// The fast/slow sequence both TestItemFastSlowRateLimiter and
/// TestMaxOfRateLimiter expect, with `slow` as the slow delay.
fn fast_slow_steps(slow: Duration) -> Vec<Step> {
    vec![
        When("one", MS(5)),
        When("one", MS(5)),
        When("one", MS(5)),
        When("one", slow),
        When("one", slow),
        Requeues("one", 5),
        When("two", MS(5)),
        When("two", MS(5)),
        Requeues("two", 2),
        Forget("one"),
        Requeues("one", 0),
        When("one", MS(5)),
    ]
}

// default_rate_limiters_test.go TestItemFastSlowRateLimiter
#[test]
fn item_fast_slow_rate_limiter() {
    let l = ItemFastSlowRateLimiter::new(MS(5), Duration::from_secs(10), 3);
    run_steps(&l, &fast_slow_steps(Duration::from_secs(10)));
}

// default_rate_limiters_test.go TestMaxOfRateLimiter
#[test]
fn max_of_rate_limiter() {
    let l = MaxOfRateLimiter::new(vec![
        Box::new(ItemFastSlowRateLimiter::new(MS(5), Duration::from_secs(3), 3)),
        Box::new(ItemExponentialFailureRateLimiter::new(MS(1), Duration::from_secs(1))),
    ]);
    run_steps(&l, &fast_slow_steps(Duration::from_secs(3)));
}

/// Upstream's `StepRateLimiter`: `base` for the first `threshold` calls
/// (all items together), then `max`.
struct StepRateLimiter {
    count: Mutex<u32>,
    threshold: u32,
    base: Duration,
    max: Duration,
}

impl<T> RateLimiter<T> for StepRateLimiter {
    fn when(&self, _: &T) -> Duration {
        let mut count = self.count.lock();
        *count += 1;
        if *count <= self.threshold { self.base } else { self.max }
    }
    fn forget(&self, _: &T) {}
    fn num_requeues(&self, _: &T) -> u32 {
        0
    }
}

// default_rate_limiters_test.go TestWithMaxWaitRateLimiter
#[test]
fn with_max_wait_rate_limiter() {
    let step = StepRateLimiter { count: Mutex::new(0), threshold: 100, base: MS(5), max: Duration::from_secs(1000) };
    let l = WithMaxWaitRateLimiter::new(step, Duration::from_secs(500));
    for i in 0..100 {
        assert_eq!(l.when(&i), MS(5), "{i}");
    }
    for i in 100..200 {
        assert_eq!(l.when(&i), Duration::from_secs(500), "{i}");
    }
}

/// Upstream's `testMetric`: one recorder for every metric kind.
#[derive(Default)]
struct TestMetric {
    inc: Mutex<(i64, i64, f64)>,
    observed: Mutex<(f64, u32)>,
    sets: Mutex<u32>,
}

impl TestMetric {
    fn gauge(&self) -> f64 {
        let (inc, dec, set) = *self.inc.lock();
        if set != 0.0 { set } else { (inc - dec) as f64 }
    }
    fn observation(&self) -> (f64, u32) {
        *self.observed.lock()
    }
}

struct Recorder(std::sync::Arc<TestMetric>);

impl GaugeMetric for Recorder {
    fn inc(&self) {
        self.0.inc.lock().0 += 1;
    }
    fn dec(&self) {
        self.0.inc.lock().1 += 1;
    }
}
impl CounterMetric for Recorder {
    fn inc(&self) {
        self.0.inc.lock().0 += 1;
    }
}
impl SettableGaugeMetric for Recorder {
    fn set(&self, value: f64) {
        self.0.inc.lock().2 = value;
        *self.0.sets.lock() += 1;
    }
}
impl HistogramMetric for Recorder {
    fn observe(&self, value: f64) {
        let mut o = self.0.observed.lock();
        *o = (value, o.1 + 1);
    }
}

/// Upstream's `testMetricsProvider`.
#[derive(Default)]
struct TestMetricsProvider {
    depth: std::sync::Arc<TestMetric>,
    adds: std::sync::Arc<TestMetric>,
    latency: std::sync::Arc<TestMetric>,
    duration: std::sync::Arc<TestMetric>,
    unfinished: std::sync::Arc<TestMetric>,
    longest: std::sync::Arc<TestMetric>,
    retries: std::sync::Arc<TestMetric>,
}

impl MetricsProvider for TestMetricsProvider {
    fn new_depth_metric(&self, _: &str) -> Box<dyn GaugeMetric> {
        Box::new(Recorder(self.depth.clone()))
    }
    fn new_adds_metric(&self, _: &str) -> Box<dyn CounterMetric> {
        Box::new(Recorder(self.adds.clone()))
    }
    fn new_latency_metric(&self, _: &str) -> Box<dyn HistogramMetric> {
        Box::new(Recorder(self.latency.clone()))
    }
    fn new_work_duration_metric(&self, _: &str) -> Box<dyn HistogramMetric> {
        Box::new(Recorder(self.duration.clone()))
    }
    fn new_unfinished_work_seconds_metric(&self, _: &str) -> Box<dyn SettableGaugeMetric> {
        Box::new(Recorder(self.unfinished.clone()))
    }
    fn new_longest_running_processor_seconds_metric(&self, _: &str) -> Box<dyn SettableGaugeMetric> {
        Box::new(Recorder(self.longest.clone()))
    }
    fn new_retries_metric(&self, _: &str) -> Box<dyn CounterMetric> {
        Box::new(Recorder(self.retries.clone()))
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

// metrics_test.go TestMetrics
#[tokio::test(start_paused = true)]
async fn metrics() {
    let mp = TestMetricsProvider::default();
    let q = Queue::with_metrics("test", &mp);
    // Let the unfinished-work task take its first (immediate) tick.
    tokio::task::yield_now().await;

    q.add("foo");
    assert_eq!(mp.adds.gauge(), 1.0);
    assert_eq!(mp.depth.gauge(), 1.0);

    advance(Duration::from_micros(50)).await;
    let i = q.get().await.unwrap();
    assert_eq!(i, "foo");
    let (latency, n) = mp.latency.observation();
    assert!(close(latency, 5e-05) && n == 1, "latency {latency} x{n}");

    for _ in 0..5 {
        q.add(i);
    }
    assert_eq!(mp.adds.gauge(), 2.0, "only the first add while processing counts");
    assert_eq!(mp.depth.gauge(), 1.0);

    advance(Duration::from_micros(25)).await;
    q.done(&i);
    let (duration, n) = mp.duration.observation();
    assert!(close(duration, 2.5e-05) && n == 1, "duration {duration} x{n}");
    assert_eq!(mp.depth.gauge(), 1.0);

    let i = q.get().await.unwrap();
    assert_eq!(i, "foo");
    let (latency, n) = mp.latency.observation();
    assert!(close(latency, 2.5e-05) && n == 2, "latency {latency} x{n}");

    // The next unfinished-work update comes 500 ms after the queue was
    // made; the item has been held since 75 µs after that.
    advance(MS(500) - Duration::from_micros(75)).await;
    tokio::task::yield_now().await;
    let held = 0.5 - 75e-6;
    assert!(close(mp.unfinished.gauge(), held), "unfinished {}", mp.unfinished.gauge());
    assert!(close(mp.longest.gauge(), held), "longest {}", mp.longest.gauge());

    q.done(&i);
    let (duration, n) = mp.duration.observation();
    assert!(close(duration, held) && n == 2, "duration {duration} x{n}");
    q.shut_down();
}

// metrics_test.go TestMetricShutdown: no unfinished-work update after the
// queue shut down.
#[tokio::test(start_paused = true)]
async fn metric_shutdown() {
    let mp = TestMetricsProvider::default();
    let q: Queue<&str> = Queue::with_metrics("test", &mp);
    advance(MS(500)).await;
    tokio::task::yield_now().await;
    let updates = *mp.unfinished.sets.lock();
    assert!(updates >= 1, "no update before shutdown");
    q.shut_down();
    advance(Duration::from_secs(3600)).await;
    tokio::task::yield_now().await;
    assert_eq!(*mp.unfinished.sets.lock(), updates, "unexpected update after shutdown");
}
