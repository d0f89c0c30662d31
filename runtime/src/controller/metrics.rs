//! Reconcile metrics under controller-runtime's names, and the workqueue
//! metrics of the controllers' queues.

use std::fmt;
use std::time::Duration;

use prometheus::{HistogramOpts, HistogramVec, IntCounterVec, IntGaugeVec, Opts, Registry};

use super::Error;
use crate::workqueue::PrometheusMetricsProvider;

/// The metrics of the controllers of one Prometheus registry: create one
/// per registry and hand it to each [`Controller`](super::Controller)
/// (a [`Manager`](super::Manager) does).
#[derive(Clone)]
pub struct Metrics {
    registry: Registry,
    pub(super) reconcile_total: IntCounterVec,
    pub(super) reconcile_errors: IntCounterVec,
    pub(super) reconcile_panics: IntCounterVec,
    pub(super) reconcile_time: HistogramVec,
    pub(super) max_concurrent: IntGaugeVec,
    pub(super) active_workers: IntGaugeVec,
    pub(super) workqueue: PrometheusMetricsProvider,
}

impl fmt::Debug for Metrics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

impl Metrics {
    /// Registers the `controller_runtime_*` and `workqueue_*` collectors in
    /// `registry`; fails if they are registered there already.
    pub fn new(registry: &Registry) -> Result<Self, Error> {
        let controller = &["controller"];
        let counter = |name: &str, help: &str, labels: &[&str]| IntCounterVec::new(Opts::new(name, help), labels);
        let gauge = |name: &str, help: &str| IntGaugeVec::new(Opts::new(name, help), controller);
        // controller-runtime's buckets: 5 ms to 60 s.
        let buckets = vec![
            0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.25,
            1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 15.0, 20.0, 25.0, 30.0, 40.0, 50.0,
            60.0,
        ];
        let metrics = Metrics {
            registry: registry.clone(),
            reconcile_total: counter(
                "controller_runtime_reconcile_total",
                "Total number of reconciliations per controller",
                &["controller", "result"],
            )
            .map_err(Error::Metrics)?,
            reconcile_errors: counter(
                "controller_runtime_reconcile_errors_total",
                "Total number of reconciliation errors per controller",
                controller,
            )
            .map_err(Error::Metrics)?,
            reconcile_panics: counter(
                "controller_runtime_reconcile_panics_total",
                "Total number of reconciliation panics per controller",
                controller,
            )
            .map_err(Error::Metrics)?,
            reconcile_time: HistogramVec::new(
                HistogramOpts::new(
                    "controller_runtime_reconcile_time_seconds",
                    "Length of time per reconciliation per controller",
                )
                .buckets(buckets),
                controller,
            )
            .map_err(Error::Metrics)?,
            max_concurrent: gauge(
                "controller_runtime_max_concurrent_reconciles",
                "Maximum number of concurrent reconciles per controller",
            )
            .map_err(Error::Metrics)?,
            active_workers: gauge(
                "controller_runtime_active_workers",
                "Number of currently used workers per controller",
            )
            .map_err(Error::Metrics)?,
            workqueue: PrometheusMetricsProvider::new(registry).map_err(|crate::workqueue::Error::Metrics(e)| {
                Error::Metrics(e)
            })?,
        };
        let collectors: [Box<dyn prometheus::core::Collector>; 6] = [
            Box::new(metrics.reconcile_total.clone()),
            Box::new(metrics.reconcile_errors.clone()),
            Box::new(metrics.reconcile_panics.clone()),
            Box::new(metrics.reconcile_time.clone()),
            Box::new(metrics.max_concurrent.clone()),
            Box::new(metrics.active_workers.clone()),
        ];
        for collector in collectors {
            registry.register(collector).map_err(Error::Metrics)?;
        }
        Ok(metrics)
    }

    /// The registry the metrics are in.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// The text exposition of every metric of the registry, as `/metrics`
    /// serves it.
    pub fn gather_text(&self) -> String {
        let mut out = String::new();
        if let Err(e) = prometheus::TextEncoder::new().encode_utf8(&self.registry.gather(), &mut out) {
            tracing::error!(error = %crate::ErrorChain(&e), "encoding metrics");
        }
        out
    }
}

/// One controller's children of the metric families.
pub(super) struct ControllerMetrics {
    success: prometheus::IntCounter,
    error: prometheus::IntCounter,
    requeue: prometheus::IntCounter,
    requeue_after: prometheus::IntCounter,
    errors: prometheus::IntCounter,
    panics: prometheus::IntCounter,
    time: prometheus::Histogram,
    pub(super) active: prometheus::IntGauge,
}

/// How a reconcile ended, as `result` labels it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Outcome {
    Success,
    Error,
    Panic,
    Requeue,
    RequeueAfter,
}

impl ControllerMetrics {
    pub(super) fn new(metrics: &Metrics, controller: &str, concurrency: usize) -> Self {
        let result = |r: &str| metrics.reconcile_total.with_label_values(&[controller, r]);
        metrics.max_concurrent.with_label_values(&[controller]).set(i64::try_from(concurrency).unwrap_or(i64::MAX));
        let active = metrics.active_workers.with_label_values(&[controller]);
        active.set(0);
        ControllerMetrics {
            success: result("success"),
            error: result("error"),
            requeue: result("requeue"),
            requeue_after: result("requeue_after"),
            errors: metrics.reconcile_errors.with_label_values(&[controller]),
            panics: metrics.reconcile_panics.with_label_values(&[controller]),
            time: metrics.reconcile_time.with_label_values(&[controller]),
            active,
        }
    }

    pub(super) fn observe(&self, outcome: Outcome, took: Duration) {
        self.time.observe(took.as_secs_f64());
        match outcome {
            Outcome::Success => self.success.inc(),
            Outcome::Requeue => self.requeue.inc(),
            Outcome::RequeueAfter => self.requeue_after.inc(),
            Outcome::Error => {
                self.error.inc();
                self.errors.inc();
            }
            Outcome::Panic => {
                self.error.inc();
                self.errors.inc();
                self.panics.inc();
            }
        }
    }
}
