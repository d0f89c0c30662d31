//! The metrics a queue reports, as client-go's `workqueue.MetricsProvider`.

use std::hash::Hash;

use tokio::time::Instant;

use super::ItemMap;

/// A gauge that goes up and down by one (the queue depth).
pub trait GaugeMetric: Send + Sync {
    /// Adds one.
    fn inc(&self);
    /// Subtracts one.
    fn dec(&self);
}

/// A gauge set to an absolute value (seconds of unfinished work).
pub trait SettableGaugeMetric: Send + Sync {
    /// Sets the gauge to `value`.
    fn set(&self, value: f64);
}

/// A monotonically increasing counter (adds, retries).
pub trait CounterMetric: Send + Sync {
    /// Adds one.
    fn inc(&self);
}

/// A distribution of observed values, in seconds.
pub trait HistogramMetric: Send + Sync {
    /// Records one observation of `value` seconds.
    fn observe(&self, value: f64);
}

/// Creates the metrics of one named queue.
///
/// Implement it to export queue metrics to another system than Prometheus;
/// `PrometheusMetricsProvider` (feature `metrics`) is the
/// ready-made one.
pub trait MetricsProvider: Send + Sync {
    /// Items waiting in the queue (`workqueue_depth`).
    fn new_depth_metric(&self, name: &str) -> Box<dyn GaugeMetric>;
    /// Items added (`workqueue_adds_total`).
    fn new_adds_metric(&self, name: &str) -> Box<dyn CounterMetric>;
    /// Seconds an item waits before a worker gets it (`workqueue_queue_duration_seconds`).
    fn new_latency_metric(&self, name: &str) -> Box<dyn HistogramMetric>;
    /// Seconds a worker holds an item (`workqueue_work_duration_seconds`).
    fn new_work_duration_metric(&self, name: &str) -> Box<dyn HistogramMetric>;
    /// Sum of the seconds items currently processed have been held
    /// (`workqueue_unfinished_work_seconds`); shows stuck workers.
    fn new_unfinished_work_seconds_metric(&self, name: &str) -> Box<dyn SettableGaugeMetric>;
    /// Seconds the longest-held item has been processed
    /// (`workqueue_longest_running_processor_seconds`).
    fn new_longest_running_processor_seconds_metric(&self, name: &str) -> Box<dyn SettableGaugeMetric>;
    /// Items re-added after a delay (`workqueue_retries_total`).
    fn new_retries_metric(&self, name: &str) -> Box<dyn CounterMetric>;
}

/// Discards everything; the default when a queue has no provider.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoopMetricsProvider;

struct Noop;

impl GaugeMetric for Noop {
    fn inc(&self) {}
    fn dec(&self) {}
}
impl SettableGaugeMetric for Noop {
    fn set(&self, _: f64) {}
}
impl CounterMetric for Noop {
    fn inc(&self) {}
}
impl HistogramMetric for Noop {
    fn observe(&self, _: f64) {}
}

impl MetricsProvider for NoopMetricsProvider {
    fn new_depth_metric(&self, _: &str) -> Box<dyn GaugeMetric> {
        Box::new(Noop)
    }
    fn new_adds_metric(&self, _: &str) -> Box<dyn CounterMetric> {
        Box::new(Noop)
    }
    fn new_latency_metric(&self, _: &str) -> Box<dyn HistogramMetric> {
        Box::new(Noop)
    }
    fn new_work_duration_metric(&self, _: &str) -> Box<dyn HistogramMetric> {
        Box::new(Noop)
    }
    fn new_unfinished_work_seconds_metric(&self, _: &str) -> Box<dyn SettableGaugeMetric> {
        Box::new(Noop)
    }
    fn new_longest_running_processor_seconds_metric(&self, _: &str) -> Box<dyn SettableGaugeMetric> {
        Box::new(Noop)
    }
    fn new_retries_metric(&self, _: &str) -> Box<dyn CounterMetric> {
        Box::new(Noop)
    }
}

/// The metrics of one queue plus the per-item timestamps they need. Lives
/// inside the queue's lock, so it needs none of its own.
pub(super) struct QueueMetrics<T> {
    depth: Box<dyn GaugeMetric>,
    adds: Box<dyn CounterMetric>,
    latency: Box<dyn HistogramMetric>,
    work_duration: Box<dyn HistogramMetric>,
    unfinished_work_seconds: Box<dyn SettableGaugeMetric>,
    longest_running_processor: Box<dyn SettableGaugeMetric>,
    retries: Box<dyn CounterMetric>,
    added_at: ItemMap<T, Instant>,
    processing_since: ItemMap<T, Instant>,
}

impl<T: Clone + Eq + Hash> QueueMetrics<T> {
    pub(super) fn new(name: &str, provider: &dyn MetricsProvider) -> Self {
        QueueMetrics {
            depth: provider.new_depth_metric(name),
            adds: provider.new_adds_metric(name),
            latency: provider.new_latency_metric(name),
            work_duration: provider.new_work_duration_metric(name),
            unfinished_work_seconds: provider.new_unfinished_work_seconds_metric(name),
            longest_running_processor: provider.new_longest_running_processor_seconds_metric(name),
            retries: provider.new_retries_metric(name),
            added_at: ItemMap::default(),
            processing_since: ItemMap::default(),
        }
    }

    pub(super) fn add(&mut self, item: &T) {
        self.adds.inc();
        self.depth.inc();
        if !self.added_at.contains_key(item) {
            self.added_at.insert(item.clone(), Instant::now());
        }
    }

    pub(super) fn get(&mut self, item: &T) {
        self.depth.dec();
        let now = Instant::now();
        if let Some(added) = self.added_at.remove(item) {
            self.latency.observe(now.duration_since(added).as_secs_f64());
        }
        self.processing_since.insert(item.clone(), now);
    }

    pub(super) fn done(&mut self, item: &T) {
        if let Some(start) = self.processing_since.remove(item) {
            self.work_duration.observe(start.elapsed().as_secs_f64());
        }
    }

    pub(super) fn retry(&self) {
        self.retries.inc();
    }

    pub(super) fn update_unfinished_work(&self) {
        let now = Instant::now();
        let mut total = 0.0;
        let mut oldest = 0.0_f64;
        for start in self.processing_since.values() {
            let held = now.duration_since(*start).as_secs_f64();
            total += held;
            oldest = oldest.max(held);
        }
        self.unfinished_work_seconds.set(total);
        self.longest_running_processor.set(oldest);
    }
}
