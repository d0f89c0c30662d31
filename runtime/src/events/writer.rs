//! The sink writer: client-go's `recordToSink`, `finishSeries` and
//! `refreshExistingEventSeries`, run by one task so that the series cache
//! needs no lock and every write sees the ones before it.
//!
//! Windows run on tokio's clock so that tests can pause it; the times
//! written into events (`eventTime`, `series.lastObservedTime`) are
//! wall-clock time.

use std::collections::HashMap;
use std::time::Duration;

use tokio::sync::{mpsc, watch};
use tokio::time::{Instant, MissedTickBehavior};

use super::broadcaster::BroadcasterOptions;
use super::event::{EventKey, EventV1, Series};
use crate::broadcast::{EventSink, is_retryable};

/// An event the writer remembers, to fold repeats into its series.
#[derive(Debug)]
struct Cached {
    /// As first recorded, with the series counted so far.
    event: EventV1,
    /// When it was last seen, on tokio's clock.
    last_seen: Instant,
    /// The series count last written (0: none yet), so that
    /// [`SeriesWriter::flush`] writes only what the apiserver lacks.
    written_count: i32,
}

/// What one write attempt came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Written,
    /// Refused for good, or cannot be built: trying again would not help.
    GaveUp,
    /// The apiserver could not be reached, or a series' event was being
    /// created at the same time: worth another try.
    Retry,
}

/// Writes the recorded events to the sink, keeping the series cache.
pub(crate) struct SeriesWriter<S> {
    sink: S,
    opts: BroadcasterOptions,
    shutdown: watch::Receiver<bool>,
    cache: HashMap<EventKey, Cached>,
}

impl<S: EventSink> SeriesWriter<S> {
    pub(crate) fn new(sink: S, opts: BroadcasterOptions, shutdown: watch::Receiver<bool>) -> Self {
        SeriesWriter { sink, opts, shutdown, cache: HashMap::new() }
    }

    /// Handles events until the broadcaster stops, finishing and
    /// refreshing series on the way. After a drain (not a shutdown) it
    /// writes the series counts the apiserver does not have yet.
    pub(crate) async fn run(mut self, mut events: mpsc::Receiver<EventV1>) {
        let mut finish = every(self.opts.finish_period);
        let mut refresh = every(self.opts.refresh_period);
        loop {
            tokio::select! {
                event = events.recv() => match event {
                    Some(event) => self.observe(event).await,
                    None => break,
                },
                _ = finish.tick() => self.finish_series().await,
                _ = refresh.tick() => self.refresh_series().await,
            }
        }
        if !*self.shutdown.borrow() {
            self.flush().await;
        }
    }

    /// client-go's `recordToSink`: a new event is created; its first repeat
    /// starts a series (count 2), written at once; later repeats only
    /// count in the cache, written when the series is finished or
    /// refreshed.
    async fn observe(&mut self, event: EventV1) {
        let key = event.key();
        let now = Instant::now();
        let to_write = match self.cache.get_mut(&key) {
            Some(cached) => {
                cached.last_seen = now;
                let observed = crate::codec::format_micro_time(&jiff::Timestamp::now());
                match &mut cached.event.series {
                    Some(series) => {
                        series.count = series.count.saturating_add(1);
                        series.last_observed_time = observed;
                        None
                    }
                    None => {
                        cached.event.series = Some(Series { count: 2, last_observed_time: observed });
                        Some(cached.event.clone())
                    }
                }
            }
            None => {
                self.cache.insert(key.clone(), Cached { event: event.clone(), last_seen: now, written_count: 0 });
                Some(event)
            }
        };
        if let Some(event) = to_write
            && self.attempt_recording(event.clone()).await
        {
            self.note_written(&key, &event);
        }
    }

    /// client-go's `finishSeries`: a series not seen for a whole
    /// [`BroadcasterOptions::finish_period`] gets its final count written
    /// and is forgotten (kept when the write should be retried); a lone
    /// event that old is forgotten, so that a later repeat starts afresh.
    async fn finish_series(&mut self) {
        let now = Instant::now();
        let window = self.opts.finish_period;
        let expired: Vec<EventKey> = self
            .cache
            .iter()
            .filter(|(_, c)| now.saturating_duration_since(c.last_seen) > window)
            .map(|(k, _)| k.clone())
            .collect();
        for key in expired {
            let Some(cached) = self.cache.get(&key) else { continue };
            if cached.event.series.is_some() {
                let mut event = cached.event.clone();
                if record_event(&self.sink, &mut event).await == Outcome::Retry {
                    continue;
                }
            }
            self.cache.remove(&key);
        }
    }

    /// client-go's `refreshExistingEventSeries`: every open series is
    /// written again, which brings its count up to date and keeps its
    /// Event from expiring.
    async fn refresh_series(&mut self) {
        self.write_series(|_| true).await;
    }

    /// Writes each series whose latest count the apiserver has not had.
    async fn flush(&mut self) {
        self.write_series(|c| c.event.series.as_ref().is_some_and(|s| s.count > c.written_count)).await;
    }

    /// One write of each cached series that `select` picks.
    async fn write_series(&mut self, select: impl Fn(&Cached) -> bool) {
        let due: Vec<(EventKey, EventV1)> = self
            .cache
            .iter()
            .filter(|(_, c)| c.event.series.is_some() && select(c))
            .map(|(k, c)| (k.clone(), c.event.clone()))
            .collect();
        for (key, mut event) in due {
            if record_event(&self.sink, &mut event).await == Outcome::Written {
                self.note_written(&key, &event);
            }
        }
    }

    fn note_written(&mut self, key: &EventKey, event: &EventV1) {
        if let (Some(cached), Some(series)) = (self.cache.get_mut(key), &event.series) {
            cached.written_count = cached.written_count.max(series.count);
        }
    }

    /// client-go's `attemptRecording`: up to
    /// [`BroadcasterOptions::max_tries`] attempts, sleeping between them;
    /// `true` when the event was written.
    async fn attempt_recording(&mut self, mut event: EventV1) -> bool {
        let mut tries = 0;
        loop {
            match record_event(&self.sink, &mut event).await {
                Outcome::Written => return true,
                Outcome::GaveUp => return false,
                Outcome::Retry => {}
            }
            tries += 1;
            if tries >= self.opts.max_tries {
                tracing::error!(event = %event.describe(), tries, "unable to write event (retry limit exceeded)");
                return false;
            }
            let sleep = jittered(self.opts.sleep_duration);
            tokio::select! {
                _ = tokio::time::sleep(sleep) => {}
                // Ends on shutdown or when the broadcaster is gone.
                _ = self.shutdown.wait_for(|down| *down) => {
                    tracing::warn!(event = %event.describe(), "shutting down, event not written");
                    return false;
                }
            }
        }
    }
}

/// A ticker whose first tick comes one `period` from now (client-go's
/// `wait.Until` also runs at once, on a cache that is still empty).
fn every(period: Duration) -> tokio::time::Interval {
    let period = period.max(Duration::from_millis(1));
    let mut interval = tokio::time::interval_at(Instant::now() + period, period);
    interval.set_missed_tick_behavior(MissedTickBehavior::Delay);
    interval
}

/// `d` lengthened by up to a quarter (`wait.Jitter(d, 0.25)`).
fn jittered(d: Duration) -> Duration {
    d + d.mul_f64(0.25 * rand::random::<f64>())
}

/// client-go's `recordEvent`: a series is patched (created when its Event
/// is gone, e.g. expired), a new event created.
async fn record_event<S: EventSink>(sink: &S, event: &mut EventV1) -> Outcome {
    let is_series = event.series.is_some();
    let mut result = None;
    if is_series {
        result = Some(sink.patch(&event.to_object(), &event.series_patch()).await);
    }
    if result.as_ref().is_none_or(|r| r.as_ref().is_err_and(|e| e.is_not_found())) {
        event.metadata.resource_version = None;
        result = Some(sink.create(&event.to_object()).await);
    }
    let Some(Err(e)) = result else {
        return Outcome::Written;
    };
    let error = crate::ErrorChain(&e);
    if is_series && e.is_already_exists() {
        // The patch found no Event and the create found one: the first
        // occurrence was being written at the same time. Patch again.
        tracing::debug!(event = %event.describe(), %error, "event created meanwhile (will retry)");
        Outcome::Retry
    } else if is_retryable(&e) {
        tracing::error!(event = %event.describe(), %error, "unable to write event (may retry after sleeping)");
        Outcome::Retry
    } else if e.is_already_exists() {
        tracing::debug!(event = %event.describe(), %error, "server rejected event (will not retry)");
        Outcome::GaveUp
    } else {
        tracing::error!(event = %event.describe(), %error, "server rejected event (will not retry)");
        Outcome::GaveUp
    }
}
