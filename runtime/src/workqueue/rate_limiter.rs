//! How long to wait before retrying an item, as client-go's
//! `workqueue.RateLimiter` family.

use std::hash::Hash;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use parking_lot::Mutex;
use tokio::time::Instant;

use super::ItemMap;

/// Decides how long an item waits before it is retried.
///
/// Per-item limiters count failures until [`forget`](Self::forget) is
/// called (after a success); overall limiters (the token bucket) ignore the
/// item.
pub trait RateLimiter<T>: Send + Sync {
    /// The delay before `item` may be retried; records one more failure.
    fn when(&self, item: &T) -> Duration;
    /// Stops tracking `item`: its next failure starts from scratch.
    fn forget(&self, item: &T);
    /// Failures recorded for `item` since it was last forgotten.
    fn num_requeues(&self, item: &T) -> u32;
}

impl<T, R: RateLimiter<T> + ?Sized> RateLimiter<T> for Box<R> {
    fn when(&self, item: &T) -> Duration {
        (**self).when(item)
    }
    fn forget(&self, item: &T) {
        (**self).forget(item)
    }
    fn num_requeues(&self, item: &T) -> u32 {
        (**self).num_requeues(item)
    }
}

/// Failure counts per item, with their number readable without the lock:
/// every success calls `forget`, and most items never failed, so `forget`
/// of an empty map must not take the lock (nor hash the item).
#[derive(Debug)]
struct Failures<T> {
    counts: Mutex<ItemMap<T, u32>>,
    /// `counts.len()`, written under the lock after each change.
    tracked: AtomicUsize,
}

impl<T> Failures<T> {
    fn new() -> Self {
        Failures { counts: Mutex::new(ItemMap::default()), tracked: AtomicUsize::new(0) }
    }
}

impl<T: Clone + Eq + Hash> Failures<T> {
    /// Counts one more failure of `item`; returns the count before it.
    fn record(&self, item: &T) -> u32 {
        let mut counts = self.counts.lock();
        let count = counts.entry(item.clone()).or_insert(0);
        let before = *count;
        *count = count.saturating_add(1);
        self.tracked.store(counts.len(), Ordering::Release);
        before
    }

    fn forget(&self, item: &T) {
        // A count recorded before this call (by any thread it synchronised
        // with) is seen here: the store above is made under the lock and
        // before `record` returns.
        if self.tracked.load(Ordering::Acquire) == 0 {
            return;
        }
        let mut counts = self.counts.lock();
        counts.remove(item);
        self.tracked.store(counts.len(), Ordering::Release);
    }

    fn get(&self, item: &T) -> u32 {
        if self.tracked.load(Ordering::Acquire) == 0 {
            return 0;
        }
        self.counts.lock().get(item).copied().unwrap_or(0)
    }
}

/// `base * 2^failures`, capped at `max`: backs off one item that keeps
/// failing without slowing the others.
#[derive(Debug)]
pub struct ItemExponentialFailureRateLimiter<T> {
    failures: Failures<T>,
    base_delay: Duration,
    max_delay: Duration,
}

impl<T: Eq + Hash> ItemExponentialFailureRateLimiter<T> {
    /// Waits `base_delay` after an item's first failure, doubling with each
    /// further one up to `max_delay`.
    pub fn new(base_delay: Duration, max_delay: Duration) -> Self {
        ItemExponentialFailureRateLimiter { failures: Failures::new(), base_delay, max_delay }
    }
}

impl<T: Eq + Hash> Default for ItemExponentialFailureRateLimiter<T> {
    /// 5 ms doubling up to 1000 s, the per-item part of
    /// [`default_controller_rate_limiter`].
    fn default() -> Self {
        Self::new(Duration::from_millis(5), Duration::from_secs(1000))
    }
}

impl<T: Clone + Eq + Hash + Send + Sync> RateLimiter<T> for ItemExponentialFailureRateLimiter<T> {
    fn when(&self, item: &T) -> Duration {
        let exp = self.failures.record(item);
        // 2^exp overflows long before it matters; anything that does is
        // past the cap anyway.
        let factor = 1u32.checked_shl(exp).unwrap_or(u32::MAX);
        match self.base_delay.checked_mul(factor) {
            Some(backoff) if exp < 32 => backoff.min(self.max_delay),
            _ => self.max_delay,
        }
    }

    fn forget(&self, item: &T) {
        self.failures.forget(item);
    }

    fn num_requeues(&self, item: &T) -> u32 {
        self.failures.get(item)
    }
}

/// `fast_delay` for the first `max_fast_attempts` failures of an item, then
/// `slow_delay`: quick retries for a blip, slow ones for a lasting problem.
#[derive(Debug)]
pub struct ItemFastSlowRateLimiter<T> {
    failures: Failures<T>,
    fast_delay: Duration,
    slow_delay: Duration,
    max_fast_attempts: u32,
}

impl<T: Eq + Hash> ItemFastSlowRateLimiter<T> {
    /// Waits `fast_delay` for an item's first `max_fast_attempts` failures,
    /// `slow_delay` after that.
    pub fn new(fast_delay: Duration, slow_delay: Duration, max_fast_attempts: u32) -> Self {
        ItemFastSlowRateLimiter { failures: Failures::new(), fast_delay, slow_delay, max_fast_attempts }
    }
}

impl<T: Clone + Eq + Hash + Send + Sync> RateLimiter<T> for ItemFastSlowRateLimiter<T> {
    fn when(&self, item: &T) -> Duration {
        let count = self.failures.record(item).saturating_add(1);
        if count <= self.max_fast_attempts { self.fast_delay } else { self.slow_delay }
    }

    fn forget(&self, item: &T) {
        self.failures.forget(item);
    }

    fn num_requeues(&self, item: &T) -> u32 {
        self.failures.get(item)
    }
}

/// A token bucket over all items (golang.org/x/time/rate as client-go uses
/// it): `burst` retries at once, then `qps` per second. Reservations are
/// never refused, only delayed, so the bucket can go into debt.
#[derive(Debug)]
pub struct BucketRateLimiter {
    qps: f64,
    burst: f64,
    bucket: Mutex<Bucket>,
}

#[derive(Debug)]
struct Bucket {
    tokens: f64,
    last: Option<Instant>,
}

impl BucketRateLimiter {
    /// A bucket refilled with `qps` tokens per second holding at most
    /// `burst`; starts full.
    pub fn new(qps: f64, burst: u32) -> Self {
        BucketRateLimiter {
            qps,
            burst: f64::from(burst),
            bucket: Mutex::new(Bucket { tokens: f64::from(burst), last: None }),
        }
    }

    fn reserve(&self) -> Duration {
        let now = Instant::now();
        let mut b = self.bucket.lock();
        if let Some(last) = b.last {
            let elapsed = now.saturating_duration_since(last).as_secs_f64();
            b.tokens = (b.tokens + elapsed * self.qps).min(self.burst);
        }
        b.last = Some(now);
        b.tokens -= 1.0;
        if b.tokens >= 0.0 {
            return Duration::ZERO;
        }
        if self.qps.is_nan() || self.qps <= 0.0 {
            // No refill: the wait is unbounded; report the longest we can.
            return Duration::MAX;
        }
        let nanos = (-b.tokens / self.qps * 1e9) as u64;
        Duration::from_nanos(nanos)
    }
}

impl Default for BucketRateLimiter {
    /// 10 per second, burst 100, as in [`default_controller_rate_limiter`].
    fn default() -> Self {
        Self::new(10.0, 100)
    }
}

impl<T> RateLimiter<T> for BucketRateLimiter {
    fn when(&self, _item: &T) -> Duration {
        self.reserve()
    }
    fn forget(&self, _item: &T) {}
    fn num_requeues(&self, _item: &T) -> u32 {
        0
    }
}

/// The longest delay of several limiters (all of them record the failure).
pub struct MaxOfRateLimiter<T> {
    limiters: Vec<Box<dyn RateLimiter<T>>>,
}

impl<T> std::fmt::Debug for MaxOfRateLimiter<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MaxOfRateLimiter").field("limiters", &self.limiters.len()).finish()
    }
}

impl<T> MaxOfRateLimiter<T> {
    /// Waits as long as the slowest of `limiters` asks; zero if there are
    /// none.
    pub fn new(limiters: Vec<Box<dyn RateLimiter<T>>>) -> Self {
        MaxOfRateLimiter { limiters }
    }
}

impl<T> RateLimiter<T> for MaxOfRateLimiter<T> {
    fn when(&self, item: &T) -> Duration {
        self.limiters.iter().map(|l| l.when(item)).max().unwrap_or(Duration::ZERO)
    }
    fn forget(&self, item: &T) {
        for l in &self.limiters {
            l.forget(item);
        }
    }
    fn num_requeues(&self, item: &T) -> u32 {
        self.limiters.iter().map(|l| l.num_requeues(item)).max().unwrap_or(0)
    }
}

/// Caps another limiter's delay at `max_delay` (client-go
/// `WithMaxWaitRateLimiter`), e.g. so a token bucket deep in debt never
/// makes an item wait longer than that.
#[derive(Debug)]
pub struct WithMaxWaitRateLimiter<L> {
    limiter: L,
    max_delay: Duration,
}

impl<L> WithMaxWaitRateLimiter<L> {
    /// `limiter`, whose delays are cut to `max_delay`.
    pub fn new(limiter: L, max_delay: Duration) -> Self {
        WithMaxWaitRateLimiter { limiter, max_delay }
    }
}

impl<T, L: RateLimiter<T>> RateLimiter<T> for WithMaxWaitRateLimiter<L> {
    fn when(&self, item: &T) -> Duration {
        self.limiter.when(item).min(self.max_delay)
    }
    fn forget(&self, item: &T) {
        self.limiter.forget(item)
    }
    fn num_requeues(&self, item: &T) -> u32 {
        self.limiter.num_requeues(item)
    }
}

/// What client-go controllers use (`DefaultControllerRateLimiter`): per item
/// 5 ms doubling up to 1000 s, and overall at most 10 retries per second
/// after a burst of 100.
pub fn default_controller_rate_limiter<T>() -> MaxOfRateLimiter<T>
where
    T: Clone + Eq + Hash + Send + Sync + 'static,
{
    MaxOfRateLimiter::new(vec![
        Box::new(ItemExponentialFailureRateLimiter::new(Duration::from_millis(5), Duration::from_secs(1000))),
        Box::new(BucketRateLimiter::new(10.0, 100)),
    ])
}
