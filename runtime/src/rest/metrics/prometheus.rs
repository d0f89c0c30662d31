//! client-go's `rest_client_*` Prometheus metrics (component-base's
//! `restclient` names, labels and buckets).

use std::time::Duration;

use prometheus::{HistogramOpts, HistogramVec, IntCounterVec, Opts, Registry};

use super::{Attempt, RequestMetrics};

/// Latency buckets of client-go's request and rate limiter histograms.
const LATENCY_BUCKETS: &[f64] = &[0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0];
/// Size buckets of client-go's request and response size histograms.
const SIZE_BUCKETS: &[f64] =
    &[64.0, 256.0, 512.0, 1024.0, 4096.0, 16384.0, 65536.0, 262144.0, 1048576.0, 4194304.0, 16777216.0];

/// Exports a client's requests as the metrics Kubernetes components do:
/// `rest_client_request_duration_seconds`, `rest_client_requests_total`,
/// `rest_client_request_retries_total`,
/// `rest_client_rate_limiter_duration_seconds`,
/// `rest_client_request_size_bytes` and `rest_client_response_size_bytes`.
///
/// Create one per registry and share it between clients (clone it):
/// registering twice in one registry fails.
#[derive(Clone, Debug)]
pub struct PrometheusRequestMetrics {
    duration: HistogramVec,
    requests: IntCounterVec,
    retries: IntCounterVec,
    rate_limiter: HistogramVec,
    request_size: HistogramVec,
    response_size: HistogramVec,
}

impl PrometheusRequestMetrics {
    /// Registers the `rest_client_*` collectors in `registry`; fails if
    /// they are registered there already.
    pub fn new(registry: &Registry) -> Result<Self, prometheus::Error> {
        let histogram = |name: &str, help: &str, buckets: &[f64]| {
            HistogramVec::new(HistogramOpts::new(name, help).buckets(buckets.to_vec()), &["verb", "host"])
        };
        let metrics = PrometheusRequestMetrics {
            duration: histogram(
                "rest_client_request_duration_seconds",
                "Request latency in seconds. Broken down by verb, and host.",
                LATENCY_BUCKETS,
            )?,
            requests: IntCounterVec::new(
                Opts::new("rest_client_requests_total", "Number of HTTP requests, partitioned by status code, method, and host."),
                &["code", "method", "host"],
            )?,
            retries: IntCounterVec::new(
                Opts::new(
                    "rest_client_request_retries_total",
                    "Number of request retries, partitioned by status code, verb, and host.",
                ),
                &["code", "verb", "host"],
            )?,
            rate_limiter: histogram(
                "rest_client_rate_limiter_duration_seconds",
                "Client side rate limiter latency in seconds. Broken down by verb, and host.",
                LATENCY_BUCKETS,
            )?,
            request_size: histogram(
                "rest_client_request_size_bytes",
                "Request size in bytes. Broken down by verb and host.",
                SIZE_BUCKETS,
            )?,
            response_size: histogram(
                "rest_client_response_size_bytes",
                "Response size in bytes. Broken down by verb and host.",
                SIZE_BUCKETS,
            )?,
        };
        registry.register(Box::new(metrics.duration.clone()))?;
        registry.register(Box::new(metrics.requests.clone()))?;
        registry.register(Box::new(metrics.retries.clone()))?;
        registry.register(Box::new(metrics.rate_limiter.clone()))?;
        registry.register(Box::new(metrics.request_size.clone()))?;
        registry.register(Box::new(metrics.response_size.clone()))?;
        Ok(metrics)
    }
}

impl RequestMetrics for PrometheusRequestMetrics {
    fn attempt(&self, attempt: &Attempt<'_>) {
        let labels = [attempt.verb, attempt.host];
        self.duration.with_label_values(&labels).observe(attempt.latency.as_secs_f64());
        self.request_size.with_label_values(&labels).observe(attempt.request_bytes as f64);
        if let Some(bytes) = attempt.response_bytes {
            self.response_size.with_label_values(&labels).observe(bytes as f64);
        }
        self.requests.with_label_values(&[&*attempt.code(), attempt.verb, attempt.host]).inc();
    }

    fn rate_limited(&self, verb: &str, host: &str, waited: Duration) {
        self.rate_limiter.with_label_values(&[verb, host]).observe(waited.as_secs_f64());
    }

    fn retry(&self, verb: &str, host: &str, code: &str) {
        self.retries.with_label_values(&[code, verb, host]).inc();
    }
}
