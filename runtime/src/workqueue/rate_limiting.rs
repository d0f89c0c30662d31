//! Retrying with back-off, as client-go's `RateLimitingInterface`.

use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use super::QueueItem;
use super::delaying::DelayingQueue;
use super::metrics::MetricsProvider;
use super::rate_limiter::RateLimiter;

/// A [`DelayingQueue`] that spaces retries with a [`RateLimiter`].
///
/// After a failure call [`add_rate_limited`](Self::add_rate_limited); after
/// a success call [`forget`](Self::forget) so the next failure starts with a
/// short delay again. In both cases still call [`done`](super::Queue::done).
/// [`DelayingQueue`] and [`Queue`](super::Queue) methods are available
/// through `Deref`.
#[doc(alias = "RateLimitingInterface")]
pub struct RateLimitingQueue<T> {
    queue: DelayingQueue<T>,
    limiter: Arc<dyn RateLimiter<T>>,
}

impl<T> Clone for RateLimitingQueue<T> {
    fn clone(&self) -> Self {
        RateLimitingQueue { queue: self.queue.clone(), limiter: Arc::clone(&self.limiter) }
    }
}

impl<T> fmt::Debug for RateLimitingQueue<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("RateLimitingQueue").field(&self.queue).finish()
    }
}

impl<T> Deref for RateLimitingQueue<T> {
    type Target = DelayingQueue<T>;
    fn deref(&self) -> &DelayingQueue<T> {
        &self.queue
    }
}

impl<T: QueueItem> RateLimitingQueue<T> {
    /// An empty queue without metrics, spacing retries with `limiter`
    /// (usually [`default_controller_rate_limiter`](super::default_controller_rate_limiter)).
    pub fn new(limiter: impl RateLimiter<T> + 'static) -> Self {
        RateLimitingQueue { queue: DelayingQueue::new(), limiter: Arc::new(limiter) }
    }

    /// A queue reporting metrics under `name`; see
    /// [`Queue::with_metrics`](super::Queue::with_metrics).
    pub fn with_metrics(name: &str, provider: &dyn MetricsProvider, limiter: impl RateLimiter<T> + 'static) -> Self {
        RateLimitingQueue { queue: DelayingQueue::with_metrics(name, provider), limiter: Arc::new(limiter) }
    }

    /// Adds `item` after the delay the rate limiter gives it.
    pub fn add_rate_limited(&self, item: T) {
        let delay = self.limiter.when(&item);
        self.queue.add_after(item, delay);
    }

    /// Tells the rate limiter `item` succeeded: its failure count is reset.
    /// Does not remove it from the queue.
    pub fn forget(&self, item: &T) {
        self.limiter.forget(item);
    }

    /// How many times `item` was rate-limited since it was last forgotten.
    pub fn num_requeues(&self, item: &T) -> u32 {
        self.limiter.num_requeues(item)
    }
}
