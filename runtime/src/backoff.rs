//! The retry delays of the reflector and the watcher, as client-go's
//! reflector backoff manager (`wait.Backoff{Duration: 800ms, Cap: 30s,
//! Factor: 2, Jitter: 1}` with a reset after two quiet minutes). It lives
//! on the client's floor, not in `cache`, because the
//! [`watcher`](crate::watcher), which needs no cache, backs off the same
//! way.

use std::time::Duration;

use tokio::time::Instant;

/// How long a reflector or a [`watcher`](crate::watcher) waits between
/// failed attempts.
///
/// Delays start at `initial`, are multiplied by `factor` after each use up
/// to `max`, and each one is stretched by a random share of up to `jitter`
/// of itself (so with the default jitter 1.0 a delay `d` becomes something
/// in `[d, 2d)`), which spreads the relists of many clients after an
/// apiserver restart. After `reset_after` without a retry, or once an
/// attempt succeeds, the next delay is `initial` again.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BackoffConfig {
    /// The first delay.
    pub initial: Duration,
    /// The cap no delay exceeds (before jitter).
    pub max: Duration,
    /// What each delay is multiplied by to give the next.
    pub factor: f64,
    /// 0 disables jitter (tests use that to check exact delays).
    pub jitter: f64,
    /// After this long without a retry, the sequence starts again at `initial`.
    pub reset_after: Duration,
}

impl Default for BackoffConfig {
    fn default() -> Self {
        BackoffConfig {
            initial: Duration::from_millis(800),
            max: Duration::from_secs(30),
            factor: 2.0,
            jitter: 1.0,
            reset_after: Duration::from_secs(120),
        }
    }
}

/// The running state of a [`BackoffConfig`].
#[derive(Debug)]
pub(crate) struct Backoff {
    config: BackoffConfig,
    next: Duration,
    /// When the last wait ended; the quiet period counts from there.
    last_end: Option<Instant>,
}

impl Backoff {
    pub(crate) fn new(config: BackoffConfig) -> Self {
        Backoff { next: config.initial, config, last_end: None }
    }

    /// Starts the sequence again at `initial`: an attempt succeeded.
    pub(crate) fn reset(&mut self) {
        self.next = self.config.initial;
        self.last_end = None;
    }

    /// The delay to wait now, advancing the sequence.
    pub(crate) fn next_delay(&mut self, now: Instant) -> Duration {
        if self.last_end.is_some_and(|end| now.saturating_duration_since(end) >= self.config.reset_after) {
            self.next = self.config.initial;
        }
        let base = self.next.min(self.config.max);
        // User-supplied factors may be NaN, negative or huge: fall back to the
        // cap instead of panicking in Duration arithmetic.
        self.next = Duration::try_from_secs_f64(base.as_secs_f64() * self.config.factor)
            .unwrap_or(self.config.max)
            .min(self.config.max);
        let delay = if self.config.jitter > 0.0 {
            let extra = base.as_secs_f64() * self.config.jitter * fastrand::f64();
            base + Duration::try_from_secs_f64(extra).unwrap_or_default()
        } else {
            base
        };
        self.last_end = Some(now + delay);
        delay
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_to_the_cap_and_resets_after_quiet_period() {
        let mut b = Backoff::new(BackoffConfig { jitter: 0.0, ..BackoffConfig::default() });
        let mut now = Instant::now();
        let mut seen = Vec::new();
        for _ in 0..8 {
            let d = b.next_delay(now);
            now += d;
            seen.push(d.as_millis());
        }
        assert_eq!(seen, [800, 1600, 3200, 6400, 12800, 25600, 30000, 30000]);
        now += Duration::from_secs(121);
        assert_eq!(b.next_delay(now), Duration::from_millis(800));
    }

    #[test]
    fn jitter_stays_within_one_base() {
        let mut b = Backoff::new(BackoffConfig::default());
        let d = b.next_delay(Instant::now());
        assert!(d >= Duration::from_millis(800) && d < Duration::from_millis(1600), "{d:?}");
    }

    #[test]
    fn silly_factors_do_not_panic() {
        for factor in [f64::NAN, -1.0, f64::INFINITY, 1e300] {
            let mut b = Backoff::new(BackoffConfig { factor, jitter: 0.0, ..BackoffConfig::default() });
            let now = Instant::now();
            b.next_delay(now);
            assert!(b.next_delay(now) <= Duration::from_secs(30));
        }
    }
}
