//! The `workqueue_*` Prometheus metrics, named and labelled as the ones
//! Kubernetes components export (label `name` = the queue's name).

use prometheus::{
    Gauge, GaugeVec, Histogram, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge, IntGaugeVec, Opts,
    Registry, exponential_buckets,
};

use super::Error;
use super::metrics::{CounterMetric, GaugeMetric, HistogramMetric, MetricsProvider, SettableGaugeMetric};

/// Registers the `workqueue_*` collectors in a [`Registry`] and hands out
/// one labelled child per queue.
///
/// Create one per registry and share it between queues: registering twice
/// in the same registry fails.
#[derive(Clone)]
pub struct PrometheusMetricsProvider {
    depth: IntGaugeVec,
    adds: IntCounterVec,
    latency: HistogramVec,
    work_duration: HistogramVec,
    unfinished_work_seconds: GaugeVec,
    longest_running_processor: GaugeVec,
    retries: IntCounterVec,
}

impl PrometheusMetricsProvider {
    /// Registers the `workqueue_*` collectors in `registry`; fails if they
    /// are registered there already.
    pub fn new(registry: &Registry) -> Result<Self, Error> {
        let labels = &["name"];
        let opts = |name: &str, help: &str| Opts::new(name, help).subsystem("workqueue");
        // Same buckets as client-go: 10ns .. 100s, by decades.
        let buckets = exponential_buckets(10e-9, 10.0, 10).map_err(Error::Metrics)?;
        let histogram = |name: &str, help: &str| HistogramOpts::from(opts(name, help)).buckets(buckets.clone());
        let err = Error::Metrics;
        let provider = PrometheusMetricsProvider {
            depth: IntGaugeVec::new(opts("depth", "Current depth of workqueue"), labels).map_err(err)?,
            adds: IntCounterVec::new(opts("adds_total", "Total number of adds handled by workqueue"), labels)
                .map_err(err)?,
            latency: HistogramVec::new(
                histogram(
                    "queue_duration_seconds",
                    "How long in seconds an item stays in workqueue before being requested.",
                ),
                labels,
            )
            .map_err(err)?,
            work_duration: HistogramVec::new(
                histogram("work_duration_seconds", "How long in seconds processing an item from workqueue takes."),
                labels,
            )
            .map_err(err)?,
            unfinished_work_seconds: GaugeVec::new(
                opts(
                    "unfinished_work_seconds",
                    "How many seconds of work has done that is in progress and hasn't been observed by work_duration. \
                     Large values indicate stuck threads.",
                ),
                labels,
            )
            .map_err(err)?,
            longest_running_processor: GaugeVec::new(
                opts(
                    "longest_running_processor_seconds",
                    "How many seconds has the longest running processor for workqueue been running.",
                ),
                labels,
            )
            .map_err(err)?,
            retries: IntCounterVec::new(opts("retries_total", "Total number of retries handled by workqueue"), labels)
                .map_err(err)?,
        };
        provider.register(registry)?;
        Ok(provider)
    }

    fn register(&self, registry: &Registry) -> Result<(), Error> {
        let collectors: [Box<dyn prometheus::core::Collector>; 7] = [
            Box::new(self.depth.clone()),
            Box::new(self.adds.clone()),
            Box::new(self.latency.clone()),
            Box::new(self.work_duration.clone()),
            Box::new(self.unfinished_work_seconds.clone()),
            Box::new(self.longest_running_processor.clone()),
            Box::new(self.retries.clone()),
        ];
        for c in collectors {
            registry.register(c).map_err(Error::Metrics)?;
        }
        Ok(())
    }
}

impl MetricsProvider for PrometheusMetricsProvider {
    fn new_depth_metric(&self, name: &str) -> Box<dyn GaugeMetric> {
        Box::new(self.depth.with_label_values(&[name]))
    }
    fn new_adds_metric(&self, name: &str) -> Box<dyn CounterMetric> {
        Box::new(self.adds.with_label_values(&[name]))
    }
    fn new_latency_metric(&self, name: &str) -> Box<dyn HistogramMetric> {
        Box::new(self.latency.with_label_values(&[name]))
    }
    fn new_work_duration_metric(&self, name: &str) -> Box<dyn HistogramMetric> {
        Box::new(self.work_duration.with_label_values(&[name]))
    }
    fn new_unfinished_work_seconds_metric(&self, name: &str) -> Box<dyn SettableGaugeMetric> {
        Box::new(self.unfinished_work_seconds.with_label_values(&[name]))
    }
    fn new_longest_running_processor_seconds_metric(&self, name: &str) -> Box<dyn SettableGaugeMetric> {
        Box::new(self.longest_running_processor.with_label_values(&[name]))
    }
    fn new_retries_metric(&self, name: &str) -> Box<dyn CounterMetric> {
        Box::new(self.retries.with_label_values(&[name]))
    }
}

impl GaugeMetric for IntGauge {
    fn inc(&self) {
        IntGauge::inc(self)
    }
    fn dec(&self) {
        IntGauge::dec(self)
    }
}

impl CounterMetric for IntCounter {
    fn inc(&self) {
        IntCounter::inc(self)
    }
}

impl SettableGaugeMetric for Gauge {
    fn set(&self, value: f64) {
        Gauge::set(self, value)
    }
}

impl HistogramMetric for Histogram {
    fn observe(&self, value: f64) {
        Histogram::observe(self, value)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tokio::time::advance;

    use super::*;
    use crate::workqueue::{ItemExponentialFailureRateLimiter, RateLimitingQueue};

    fn metric_value(registry: &Registry, name: &str, queue: &str) -> f64 {
        use ::prometheus::proto::MetricType;
        for family in registry.gather() {
            if family.name() != name {
                continue;
            }
            for m in family.get_metric() {
                if !m.get_label().iter().any(|l| l.name() == "name" && l.value() == queue) {
                    continue;
                }
                return match family.get_field_type() {
                    MetricType::GAUGE => m.get_gauge().get_value(),
                    MetricType::COUNTER => m.get_counter().get_value(),
                    MetricType::HISTOGRAM => m.get_histogram().get_sample_count() as f64,
                    _ => f64::NAN,
                };
            }
        }
        f64::NAN
    }

    #[tokio::test(start_paused = true)]
    async fn metrics_count_adds_depth_latency_work_and_retries() {
        let registry = Registry::new();
        let provider = PrometheusMetricsProvider::new(&registry).unwrap();
        let q = RateLimitingQueue::with_metrics("test", &provider, ItemExponentialFailureRateLimiter::<&str>::default());
        q.add("a");
        q.add("b");
        q.add("a");
        assert_eq!(metric_value(&registry, "workqueue_adds_total", "test"), 2.0);
        assert_eq!(metric_value(&registry, "workqueue_depth", "test"), 2.0);
        let a = q.get().await.unwrap();
        assert_eq!(metric_value(&registry, "workqueue_depth", "test"), 1.0);
        assert_eq!(metric_value(&registry, "workqueue_queue_duration_seconds", "test"), 1.0);
        advance(Duration::from_secs(2)).await;
        tokio::task::yield_now().await;
        let unfinished = metric_value(&registry, "workqueue_unfinished_work_seconds", "test");
        assert!(unfinished >= 1.5, "unfinished work seconds {unfinished}");
        q.done(&a);
        assert_eq!(metric_value(&registry, "workqueue_work_duration_seconds", "test"), 1.0);
        q.add_rate_limited("c");
        assert_eq!(metric_value(&registry, "workqueue_retries_total", "test"), 1.0);
    }

    #[test]
    fn registering_twice_in_one_registry_is_an_error() {
        let registry = Registry::new();
        let _first = PrometheusMetricsProvider::new(&registry).unwrap();
        assert!(matches!(PrometheusMetricsProvider::new(&registry), Err(Error::Metrics(_))));
    }
}
