//! client-go's `informer_*` Prometheus metrics (component-base's
//! `clientgo/fifo` names, labels and buckets).

use prometheus::{GaugeVec, HistogramOpts, HistogramVec, Opts, Registry};

use super::metrics::{HistogramMetric, InformerId, InformerMetricsProvider, SettableGaugeMetric};

const LABELS: &[&str] = &["name", "group", "version", "resource"];

/// Registers the `informer_queued_items`,
/// `informer_processing_latency_seconds` and
/// `informer_store_resource_version` collectors in a [`Registry`] and hands
/// out one labelled child per informer.
///
/// Create one per registry and share it (clone it): registering twice in
/// one registry fails.
#[derive(Clone, Debug)]
pub struct PrometheusInformerMetrics {
    queued_items: GaugeVec,
    processing_latency: HistogramVec,
    store_resource_version: GaugeVec,
}

impl PrometheusInformerMetrics {
    /// Registers the collectors in `registry`; fails if they are there
    /// already.
    pub fn new(registry: &Registry) -> Result<Self, prometheus::Error> {
        let opts = |name: &str, help: &str| Opts::new(name, help).subsystem("informer");
        let metrics = PrometheusInformerMetrics {
            queued_items: GaugeVec::new(opts("queued_items", "Number of items currently queued in the FIFO."), LABELS)?,
            processing_latency: HistogramVec::new(
                HistogramOpts::from(opts(
                    "processing_latency_seconds",
                    "Time taken to process events after popping from the queue.",
                ))
                .buckets(vec![0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0]),
                LABELS,
            )?,
            store_resource_version: GaugeVec::new(
                opts("store_resource_version", "The 15 least significant digits of the resource version of the store."),
                LABELS,
            )?,
        };
        registry.register(Box::new(metrics.queued_items.clone()))?;
        registry.register(Box::new(metrics.processing_latency.clone()))?;
        registry.register(Box::new(metrics.store_resource_version.clone()))?;
        Ok(metrics)
    }
}

fn labels(id: &InformerId) -> [&str; 4] {
    [&id.name, &id.group, &id.version, &id.resource]
}

struct Gauge(prometheus::Gauge);

impl SettableGaugeMetric for Gauge {
    fn set(&self, value: f64) {
        self.0.set(value);
    }
}

struct Histogram(prometheus::Histogram);

impl HistogramMetric for Histogram {
    fn observe(&self, value: f64) {
        self.0.observe(value);
    }
}

impl InformerMetricsProvider for PrometheusInformerMetrics {
    fn queued_items(&self, id: &InformerId) -> Box<dyn SettableGaugeMetric> {
        Box::new(Gauge(self.queued_items.with_label_values(&labels(id))))
    }
    fn processing_latency(&self, id: &InformerId) -> Box<dyn HistogramMetric> {
        Box::new(Histogram(self.processing_latency.with_label_values(&labels(id))))
    }
    fn store_resource_version(&self, id: &InformerId) -> Box<dyn SettableGaugeMetric> {
        Box::new(Gauge(self.store_resource_version.with_label_values(&labels(id))))
    }
}
