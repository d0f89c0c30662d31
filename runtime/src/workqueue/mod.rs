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
//! (`PrometheusMetricsProvider`, feature `metrics`, for the `workqueue_*`
//! metrics that client-go exports) through the `with_metrics`
//! constructors.
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
//! when one waits, and at most one; the rate limiters' `forget` of an item
//! that never failed takes no lock. Without metrics, no metric code runs.
//!
//! Its throughput beside client-go's, and the designs tried and not kept,
//! are in the repository's `docs/peers.md` ("Workqueue").
//!
//! Every add wakes a waiting worker, even while another woken one has not
//! run yet, on purpose: tokio runs a task woken from one of its threads in
//! that thread's LIFO slot, which no other thread takes from, so waking one
//! worker at a time (each woken worker waking the next) runs workers whose
//! processing holds their thread one after another on one thread (the
//! test `workers_holding_their_thread_run_on_every_thread` keeps that so).

mod delaying;
mod idle;
mod items;
mod metrics;
crate::cfg_feature!("metrics" => mod prometheus;);
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
crate::cfg_feature!("metrics" => pub use self::prometheus::PrometheusMetricsProvider;);
pub use self::queue::Queue;
pub use self::rate_limiter::{
    BucketRateLimiter, ItemExponentialFailureRateLimiter, ItemFastSlowRateLimiter, MaxOfRateLimiter, RateLimiter,
    WithMaxWaitRateLimiter, default_controller_rate_limiter,
};
pub use self::rate_limiting::RateLimitingQueue;

/// Errors of the workqueue module.
#[cfg(feature = "metrics")]
#[cfg_attr(docsrs, doc(cfg(feature = "metrics")))]
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
