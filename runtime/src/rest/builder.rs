//! A [`Client`] with more than its [`Config`]: request metrics and layers
//! around its transport.

use std::sync::Arc;

use bytes::Bytes;
use http_body_util::Full;
use tower::util::BoxCloneSyncService;

use super::Client;
use super::error::Error;
use super::metrics::RequestMetrics;
use super::pool::Body;
use crate::config::Config;

/// One attempt at a request, as the transport sends it: the client's
/// headers and credentials set, the body in full.
pub type TransportRequest = http::Request<Full<Bytes>>;

/// The service a [`ClientBuilder::layer`] wraps: sends one attempt and
/// answers with the response head (its body still to read, decompressed if
/// the server compressed it). Errors are boxed; the client's own failures
/// (connect, TLS, a reset) stay its `hyper_util` error inside the box, so
/// the client still recognises them (to retry a reset GET, say).
pub type TransportService = BoxCloneSyncService<TransportRequest, http::Response<Body>, tower::BoxError>;

type WrapTransport = Arc<dyn Fn(TransportService) -> TransportService + Send + Sync>;

/// Builds a [`Client`] from a [`Config`] with what a configuration cannot
/// hold: [`RequestMetrics`] and layers around the transport (client-go's
/// `WrapTransport`, kube-rs's `ClientBuilder::with_layer`).
///
/// ```no_run
/// # fn demo(config: k8s_client_runtime::Config) -> Result<(), k8s_client_runtime::rest::Error> {
/// use k8s_client_runtime::rest::Client;
///
/// // Every attempt passes through the layer: here, one header more.
/// let client = Client::builder(config)
///     .layer(tower::util::MapRequestLayer::new(|mut req: k8s_client_runtime::rest::TransportRequest| {
///         req.headers_mut().insert("x-request-source", http::HeaderValue::from_static("reconciler"));
///         req
///     }))
///     .build()?;
/// # Ok(()) }
/// ```
#[must_use = "a builder does nothing until built"]
pub struct ClientBuilder {
    config: Config,
    layers: Vec<WrapTransport>,
    metrics: Option<Arc<dyn RequestMetrics>>,
}

impl std::fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("config", &self.config)
            .field("layers", &self.layers.len())
            .field("metrics", &self.metrics.is_some())
            .finish()
    }
}

impl ClientBuilder {
    pub(super) fn new(config: Config) -> Self {
        ClientBuilder { config, layers: Vec::new(), metrics: None }
    }

    /// Wraps the transport in `layer`. Every attempt passes through it:
    /// retries, and each request of a watch's or informer's relists, but
    /// not the WebSocket upgrades of exec, attach and port-forward (on
    /// connections of their own). The first layer given is the outermost,
    /// as with tower's `ServiceBuilder`.
    ///
    /// A layer sees the request with its credentials: never log its
    /// `Authorization` header. An error a layer returns is
    /// [`Error::Layer`].
    pub fn layer<L>(mut self, layer: L) -> Self
    where
        L: tower::Layer<TransportService> + Send + Sync + 'static,
        L::Service: tower::Service<TransportRequest, Response = http::Response<Body>, Error = tower::BoxError>
            + Clone
            + Send
            + Sync
            + 'static,
        <L::Service as tower::Service<TransportRequest>>::Future: Send + 'static,
    {
        self.layers.push(Arc::new(move |inner| BoxCloneSyncService::new(layer.layer(inner))));
        self
    }

    /// Reports every request's attempts, rate limiter waits and retries to
    /// `metrics` ([`PrometheusRequestMetrics`](super::metrics::PrometheusRequestMetrics)
    /// for client-go's Prometheus metrics).
    pub fn metrics(mut self, metrics: impl RequestMetrics) -> Self {
        self.metrics = Some(Arc::new(metrics));
        self
    }

    /// The client.
    pub fn build(self) -> Result<Client, Error> {
        Client::build(self.config, None, Extras { layers: self.layers, metrics: self.metrics })
    }
}

/// What a [`ClientBuilder`] adds to a configuration.
#[derive(Default)]
pub(super) struct Extras {
    layers: Vec<WrapTransport>,
    pub metrics: Option<Arc<dyn RequestMetrics>>,
}

impl Extras {
    /// `base` inside the layers, the first given outermost; `None` without
    /// layers, so a client without them calls its pool directly.
    pub fn wrap(&self, base: impl FnOnce() -> TransportService) -> Option<TransportService> {
        if self.layers.is_empty() {
            return None;
        }
        Some(self.layers.iter().rev().fold(base(), |service, wrap| wrap(service)))
    }
}
