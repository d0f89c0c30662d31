//! What an informer reports of its queue and cache, as client-go 1.36's
//! informer metrics: the items queued, the time spent applying what one
//! pop took out, and the resourceVersion the cache is at.
//!
//! Give a provider and an [`InformerId`] to [`InformerBuilder::metrics`](super::InformerBuilder::metrics),
//! or a name and a provider to a factory (`FactoryBuilder::metrics`), which
//! names each of its informers by that name and the informer's resource.
//! `PrometheusInformerMetrics` (feature `metrics`) exports client-go's
//! `informer_*` metrics. Without one nothing is measured.

use std::sync::Arc;

pub use crate::workqueue::{HistogramMetric, SettableGaugeMetric};

/// Which informer a metric is of: a name the program gives it (several
/// informers may share one, as a factory's do) and its resource. client-go's
/// `InformerNameAndResource`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
#[doc(alias = "InformerNameAndResource")]
pub struct InformerId {
    /// The name given to the informer or its factory.
    pub name: String,
    /// The resource's API group (`""` for core).
    pub group: String,
    /// The resource's version.
    pub version: String,
    /// The resource's plural name.
    pub resource: String,
}

/// Creates the metrics of one informer (client-go's
/// `InformerMetricsProvider`). Implement it to export them elsewhere than
/// Prometheus.
pub trait InformerMetricsProvider: Send + Sync {
    /// Changes waiting in the informer's queue (`informer_queued_items`),
    /// set after each pop.
    fn queued_items(&self, id: &InformerId) -> Box<dyn SettableGaugeMetric>;
    /// Seconds spent applying what one pop took out of the queue to the
    /// cache and handing it to the handlers (`informer_processing_latency_seconds`).
    fn processing_latency(&self, id: &InformerId) -> Box<dyn HistogramMetric>;
    /// The cache's resourceVersion, its last 15 digits as a number
    /// (`informer_store_resource_version`).
    fn store_resource_version(&self, id: &InformerId) -> Box<dyn SettableGaugeMetric>;
}

/// One informer's metrics, made once when it is built.
pub(super) struct InformerMetrics {
    pub queued_items: Box<dyn SettableGaugeMetric>,
    pub processing_latency: Box<dyn HistogramMetric>,
    store_resource_version: Box<dyn SettableGaugeMetric>,
}

impl InformerMetrics {
    pub fn new(provider: &Arc<dyn InformerMetricsProvider>, id: &InformerId) -> Self {
        InformerMetrics {
            queued_items: provider.queued_items(id),
            processing_latency: provider.processing_latency(id),
            store_resource_version: provider.store_resource_version(id),
        }
    }

    /// Sets the resourceVersion gauge, if `rv` is a number.
    pub fn resource_version(&self, rv: &str) {
        if let Some(value) = resource_version_gauge(rv) {
            self.store_resource_version.set(value);
        }
    }
}

/// The last 15 digits of a numeric resourceVersion, which an f64 holds
/// exactly (client-go truncates the same way); `None` for anything else.
fn resource_version_gauge(rv: &str) -> Option<f64> {
    if rv.is_empty() || !rv.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let tail = &rv[rv.len().saturating_sub(15)..];
    tail.parse::<u64>().ok().map(|n| n as f64)
}

#[cfg(test)]
mod tests {
    use super::resource_version_gauge;

    #[test]
    fn resource_versions_keep_their_last_15_digits() {
        assert_eq!(resource_version_gauge("12345"), Some(12345.0));
        assert_eq!(resource_version_gauge("1234567890123456789"), Some(567890123456789.0));
        assert_eq!(resource_version_gauge(""), None);
        assert_eq!(resource_version_gauge("abc"), None);
        assert_eq!(resource_version_gauge("-5"), None);
    }
}
