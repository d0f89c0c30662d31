//! Client-side token bucket, client-go's `flowcontrol.NewTokenBucketRateLimiter`:
//! `qps` tokens per second, at most `burst` saved up.

use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

/// A token bucket shared by every request of a client (and by its retries).
#[derive(Debug)]
pub struct RateLimiter {
    qps: f64,
    burst: f64,
    state: Mutex<Bucket>,
}

#[derive(Debug)]
struct Bucket {
    /// May go negative: that many callers are already waiting for tokens.
    tokens: f64,
    last: Instant,
}

impl RateLimiter {
    /// A full bucket. `qps` must be positive; `burst` is at least 1.
    pub fn new(qps: f32, burst: u32) -> Self {
        let burst = f64::from(burst.max(1));
        RateLimiter {
            qps: f64::from(qps).max(f64::MIN_POSITIVE),
            burst,
            state: Mutex::new(Bucket { tokens: burst, last: Instant::now() }),
        }
    }

    /// Takes a token, waiting as long as needed.
    ///
    /// # Cancel safety
    /// The token is reserved before waiting; dropping the future mid-wait
    /// forfeits it (the bucket is not refunded), as with Go's `rate.Wait`
    /// after the reservation.
    pub async fn acquire(&self) {
        let wait = self.reserve();
        if !wait.is_zero() {
            tokio::time::sleep(wait).await;
        }
    }

    /// Takes a token if one is available right now.
    pub fn try_acquire(&self) -> bool {
        let mut b = self.state.lock().unwrap_or_else(|e| e.into_inner());
        self.refill(&mut b);
        if b.tokens >= 1.0 {
            b.tokens -= 1.0;
            true
        } else {
            false
        }
    }

    fn refill(&self, b: &mut Bucket) {
        let now = Instant::now();
        let elapsed = now.saturating_duration_since(b.last).as_secs_f64();
        b.tokens = (b.tokens + elapsed * self.qps).min(self.burst);
        b.last = now;
    }

    fn reserve(&self) -> Duration {
        let mut b = self.state.lock().unwrap_or_else(|e| e.into_inner());
        self.refill(&mut b);
        b.tokens -= 1.0;
        if b.tokens >= 0.0 { Duration::ZERO } else { Duration::from_secs_f64(-b.tokens / self.qps) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn burst_then_qps() {
        let l = RateLimiter::new(5.0, 10);
        let start = Instant::now();
        for _ in 0..10 {
            l.acquire().await;
        }
        assert_eq!(start.elapsed(), Duration::ZERO, "burst is free");
        for _ in 0..5 {
            l.acquire().await;
        }
        let took = start.elapsed();
        assert!(took >= Duration::from_millis(990) && took <= Duration::from_millis(1010), "{took:?}");
        assert!(!l.try_acquire());
        tokio::time::advance(Duration::from_secs(10)).await;
        for _ in 0..10 {
            assert!(l.try_acquire());
        }
        assert!(!l.try_acquire(), "never more than burst saved up");
    }

    #[tokio::test(start_paused = true)]
    async fn concurrent_waiters_are_spaced() {
        let l = std::sync::Arc::new(RateLimiter::new(2.0, 1));
        let start = Instant::now();
        let mut tasks = Vec::new();
        for _ in 0..5 {
            let l = l.clone();
            tasks.push(tokio::spawn(async move {
                l.acquire().await;
                Instant::now()
            }));
        }
        let mut ends = Vec::new();
        for t in tasks {
            ends.push(t.await.unwrap() - start);
        }
        ends.sort();
        assert_eq!(ends.last().copied(), Some(Duration::from_secs(2)));
    }
}
