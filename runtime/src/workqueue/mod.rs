//! Work queues for controllers, as client-go's `util/workqueue`.
//!
//! Nothing here knows about Kubernetes: items are any
//! `T: Clone + Eq + Hash + Send + Sync + 'static`, usually an object key
//! (`namespace/name`).
//!
//! Which queue to use:
//! - [`Queue`] (client-go `workqueue.Type`): a deduplicating FIFO. An item
//!   added several times before a worker picks it up is handed out once; an
//!   item added while a worker processes it is handed out again only after
//!   that worker calls [`Queue::done`], so no two workers ever hold the same
//!   item at once.
//! - [`DelayingQueue`]: a [`Queue`] that can also add an item later
//!   ([`DelayingQueue::add_after`]), e.g. to re-check something periodically.
//! - [`RateLimitingQueue`]: a [`DelayingQueue`] whose retries are spaced by a
//!   [`RateLimiter`]; what a controller normally wants. Build it with
//!   [`default_controller_rate_limiter`] unless you have a reason not to.
//!
//! The usual worker loop:
//!
//! ```no_run
//! # async fn reconcile(_key: &str) -> Result<(), ()> { Ok(()) }
//! use k8s_client_runtime::workqueue::{default_controller_rate_limiter, RateLimitingQueue};
//! # async fn run() {
//! let queue: RateLimitingQueue<String> = RateLimitingQueue::new(default_controller_rate_limiter());
//! while let Some(key) = queue.get().await {
//!     match reconcile(&key).await {
//!         Ok(()) => queue.forget(&key),
//!         Err(()) => queue.add_rate_limited(key.clone()),
//!     }
//!     queue.done(&key);
//! }
//! # }
//! ```
//!
//! Queues are cheap handles (an `Arc` inside): clone one per worker.
//! Time is `tokio::time`, so tests can use `tokio::time::pause`.
//!
//! Metrics: give a queue a name and a [`MetricsProvider`]
//! ([`PrometheusMetricsProvider`] for the `workqueue_*` metrics that
//! client-go exports) through the `with_metrics` constructors.
//!
//! # Why it is fast
//!
//! client-go keeps a FIFO and two sets (`dirty`, `processing`); a straight
//! port hashes an item up to seven times and copies it twice per
//! add/get/done, and on a burst the sets' inserts, removes and rehashes
//! were most of the time. Here (see `items.rs`) every item has one slot in
//! a slab, the FIFO holds slot numbers, an index of 8-byte entries (slot
//! number and 32 bits of hash) finds a slot from an item, and `done` finds
//! its slot in a small table of the items being processed, never in the
//! index: an item costs one index lookup and one clone. Workers waiting in
//! `get` are kept under the queue's lock, so an `add` wakes a worker only
//! when one waits, and only while no other woken worker is on its way: a
//! burst wakes one worker, which wakes the next when it leaves items behind
//! (see `idle.rs`). The rate limiters' `forget` of an item that never failed
//! takes no lock. Without metrics, no metric code runs.
//!
//! Measured with the `workqueue` workload of `k8s-client-peer` against
//! client-go's program (200,000 distinct keys added by one task, got,
//! forgotten and done by the workers; each program runs them once to warm
//! up, then five times, and reports the median) with `bench-peers
//! --workloads workqueue` on 2 cores, three runs on 2026-11-26: 2.05x,
//! 1.98x and 2.11x client-go's throughput with 4 workers (5.6 M against
//! 2.7 M items/s), where waking a worker per add did 1.53x and 1.52x the
//! same minutes (4.3 M): with every idle worker woken, the woken ones ran
//! on the second core and fought the producer for the lock (parking_lot's
//! slow path and the kernel's scheduler were a third of the profile). With
//! 1 worker: 1.59x, 2.04x and 1.57x (5.3-6.3 M against 3.1-3.4 M).
//!
//! Which of two courses a round takes decides the figure, and the tokio
//! scheduler chooses it: when the producer wakes a waiting worker, the
//! worker waits in the producer's thread (its LIFO slot) until the producer
//! is done, and the burst is queued, then drained, on one core (5-6.7 M
//! items/s); when a worker is already running on the other core, the two
//! contend for the lock all along, every operation moving the lock's and
//! the state's cache lines between the cores (about 2 M, client-go's
//! figure or below). On some days or hours the second course is the
//! common one (client-go's own figure drops from 3.4 M to 2.2 M then), and
//! the one-worker ratio falls to 0.9-1.0x. The standard library's mutex,
//! spinning before parking, a lock-free FIFO with sharded key states and
//! adds kept aside for the next lock holder to apply in batches all
//! measured slower (figures in `docs/peers.md`).

mod delaying;
mod idle;
mod items;
mod metrics;
mod prometheus;
mod queue;
mod rate_limiter;
mod rate_limiting;
mod waiting;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod upstream_tests;

pub use self::delaying::DelayingQueue;
pub use self::metrics::{
    CounterMetric, GaugeMetric, HistogramMetric, MetricsProvider, NoopMetricsProvider, SettableGaugeMetric,
};
pub use self::prometheus::PrometheusMetricsProvider;
pub use self::queue::Queue;
pub use self::rate_limiter::{
    BucketRateLimiter, ItemExponentialFailureRateLimiter, ItemFastSlowRateLimiter, MaxOfRateLimiter, RateLimiter,
    WithMaxWaitRateLimiter, default_controller_rate_limiter,
};
pub use self::rate_limiting::RateLimitingQueue;

/// Errors of the workqueue module.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The Prometheus collectors could not be created or registered (for
    /// example because they are already registered in that registry).
    #[error("registering workqueue metrics")]
    Metrics(#[source] ::prometheus::Error),
}

/// What a queue item must be: hashed for deduplication, and cloned once on
/// its way through a queue (for the worker that gets it).
pub trait QueueItem: Clone + Eq + std::hash::Hash + Send + Sync + 'static {}

/// The maps of items (rate limiters, metrics, delayed items): SipHash
/// (std's default) was 12.6% of a queue's profile. This hash is seeded per
/// process, so keys still cannot be chosen to collide.
type ItemMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;

impl<T: Clone + Eq + std::hash::Hash + Send + Sync + 'static> QueueItem for T {}
