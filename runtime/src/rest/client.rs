//! The transport under every request: pooled hyper connections over
//! rustls (HTTP/2 when the server offers it, in as many connections as the
//! open streams need: [`pool`](super::pool)), the client-side rate limiter
//! (which, as client-go's, watches skip), credentials, and client-go's
//! retry rules.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::StreamExt as _;
use http::header::{HeaderMap, HeaderName, HeaderValue};
use http::{Method, StatusCode};
use http_body_util::{BodyExt as _, Full};
use percent_encoding::AsciiSet;
use tracing::Instrument as _;
use tracing::field::Empty;

use super::builder::{ClientBuilder, Extras, TransportRequest, TransportService};
use super::connect::{Connector, InMemoryDial};
use super::error::{Error, Status};
use super::limiter::RateLimiter;
use super::metrics::{Attempt, NO_ANSWER, RequestMetrics, path_template};
use super::pool::{Body, NoHttp2, Pool};
use super::watch::ByteStream;
use crate::ErrorChain;
use crate::config::{self, Authenticator, Config, ContentType, TlsSource, WarningHandler, parse_warning_header};

/// Characters escaped in `Impersonate-Extra-<key>` header names.
const HEADER_KEY: &AsciiSet = &percent_encoding::NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'.');

/// client-go's `maxRetries` for 429/5xx answers carrying `Retry-After`.
pub const MAX_RETRIES: u32 = 10;

/// How long to wait before retrying a GET whose connection was reset
/// (client-go uses one second too).
const RESET_RETRY_DELAY: Duration = Duration::from_secs(1);

/// A client for one apiserver (client-go's `RESTClient`). Cheap to clone:
/// clones share connections, credentials and the rate limiter.
#[derive(Clone)]
pub struct Client {
    pub(super) inner: Arc<Inner>,
}

pub(super) struct Inner {
    /// Replaced by a fresh pool when the certificates change; shared with
    /// the innermost service of `transport`.
    pool: Arc<parking_lot::RwLock<Arc<Pool>>>,
    /// The pool inside the builder's layers, if it was given any.
    transport: Option<TransportService>,
    metrics: Option<Arc<dyn RequestMetrics>>,
    connector: Connector,
    tls: Arc<TlsSource>,
    /// The exec plugin's certificate generation the pool was built for.
    cert_generation: AtomicU64,
    /// The certificate files' generation the pool was built for.
    tls_generation: AtomicU64,
    scheme: String,
    authority: String,
    base_path: String,
    pub(super) default_namespace: String,
    auth: Authenticator,
    limiter: Option<RateLimiter>,
    fixed_headers: HeaderMap,
    pub(super) timeout: Option<Duration>,
    pub(super) deadline: Option<Duration>,
    pub(super) max_watch_event_size: usize,
    pub(super) content_type: ContentType,
    /// Where the responses' `Warning` headers go.
    warnings: Arc<dyn WarningHandler>,
    /// Ask for gzip-compressed responses ([`Config::disable_compression`]).
    compression: bool,
    max_retries: u32,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("server", &format_args!("{}://{}{}", self.inner.scheme, self.inner.authority, self.inner.base_path))
            .field("default_namespace", &self.inner.default_namespace)
            .finish_non_exhaustive()
    }
}

/// One attempt's worth of request, kept so it can be sent again.
pub(super) struct Prepared {
    pub method: Method,
    /// Path and query, already escaped.
    pub path_and_query: String,
    pub headers: HeaderMap,
    pub body: Bytes,
    /// A watch (`watch=true`): not held by the client's rate limiter
    /// unless retried, as in client-go ("we specifically don't want to rate
    /// limit watches"). Informers re-watch at once after a cut, and the
    /// resourceVersion they resume from may expire while they queue.
    pub watch: bool,
}

fn config_err(e: config::Error) -> Error {
    Error::Config(e)
}

fn header_value(what: &str, v: &str) -> Result<HeaderValue, Error> {
    HeaderValue::try_from(v)
        .map_err(|_| Error::InvalidRequest { what: what.to_owned(), message: format!("invalid header value {v:?}") })
}

impl Client {
    /// A client for `config`. Needs no runtime to build; requests need tokio.
    pub fn new(config: Config) -> Result<Client, Error> {
        Client::build(config, None, Extras::default())
    }

    /// A builder for a client with request metrics or layers around its
    /// transport.
    pub fn builder(config: Config) -> ClientBuilder {
        ClientBuilder::new(config)
    }

    /// A client whose connections are in-memory pipes opened by `dial`
    /// (the fake apiserver's): JSON only, no rate limit, no credentials,
    /// and a URL that is never dialed.
    #[cfg(feature = "fake")]
    pub(crate) fn in_memory(dial: InMemoryDial) -> Client {
        let mut config = Config::new(http::Uri::from_static("http://fake.invalid"));
        config.content_type = ContentType::Json;
        config.qps = 0.0;
        config.proxy = config::Proxy::None;
        // No certificate is ever checked; this skips loading the system's.
        config.insecure_skip_tls_verify = true;
        config.user_agent = "k8s-client-runtime-fake".into();
        match Client::build(config, Some(dial), Extras::default()) {
            Ok(client) => client,
            // Nothing in this configuration can be refused.
            Err(e) => unreachable!("in-memory client configuration refused: {e}"),
        }
    }

    pub(super) fn build(config: Config, in_memory: Option<InMemoryDial>, extras: Extras) -> Result<Client, Error> {
        let auth = Authenticator::new(&config).map_err(config_err)?;
        let tls = Arc::new(TlsSource::new(&config, &auth).map_err(config_err)?);
        let server_name = match &config.tls_server_name {
            Some(name) => Some(rustls_pki_types::ServerName::try_from(name.clone()).map_err(|e| {
                Error::InvalidRequest { what: "tls-server-name".into(), message: format!("{name:?}: {e}") }
            })?),
            None => None,
        };
        let mut connector = Connector::new(Arc::clone(&tls), server_name, &config.proxy);
        connector.in_memory = in_memory;
        let url = &config.cluster_url;
        let scheme = url.scheme_str().unwrap_or("https").to_owned();
        let pool = Arc::new(parking_lot::RwLock::new(Arc::new(Pool::new(&connector, scheme == "https"))));
        let transport = extras.wrap(|| {
            let pool = Arc::clone(&pool);
            TransportService::new(tower::service_fn(move |request: TransportRequest| {
                let pool = Arc::clone(&pool.read());
                async move { pool.send(request).await.map_err(tower::BoxError::from) }
            }))
        });
        let authority = url.authority().map(|a| a.as_str().to_owned()).ok_or_else(|| Error::InvalidRequest {
            what: "cluster URL".into(),
            message: format!("{url} has no host"),
        })?;
        let base_path = url.path().trim_end_matches('/').to_owned();

        let mut fixed_headers = HeaderMap::new();
        fixed_headers.insert(http::header::USER_AGENT, header_value("user agent", &config.user_agent)?);
        if let Some(auth) = connector.proxy_authorization(url) {
            fixed_headers.insert(http::header::PROXY_AUTHORIZATION, auth);
        }
        let imp = &config.impersonate;
        if let Some(user) = &imp.user {
            fixed_headers.insert("impersonate-user", header_value("Impersonate-User", user)?);
        }
        if let Some(uid) = &imp.uid {
            fixed_headers.insert("impersonate-uid", header_value("Impersonate-Uid", uid)?);
        }
        for g in &imp.groups {
            fixed_headers.append("impersonate-group", header_value("Impersonate-Group", g)?);
        }
        for (key, values) in &imp.extra {
            // Header names cannot carry every character a key may have;
            // the apiserver unescapes percent-encoding here.
            let escaped = percent_encoding::utf8_percent_encode(key, HEADER_KEY).to_string();
            let name = HeaderName::try_from(format!("impersonate-extra-{escaped}")).map_err(|_| {
                Error::InvalidRequest { what: "Impersonate-Extra".into(), message: format!("invalid key {key:?}") }
            })?;
            for v in values {
                fixed_headers.append(name.clone(), header_value("Impersonate-Extra", v)?);
            }
        }

        let limiter = (config.qps > 0.0).then(|| RateLimiter::new(config.qps, config.burst));
        Ok(Client {
            inner: Arc::new(Inner {
                pool,
                transport,
                metrics: extras.metrics,
                connector,
                tls_generation: AtomicU64::new(tls.generation()),
                tls,
                cert_generation: AtomicU64::new(auth.cert_generation()),
                scheme,
                authority,
                base_path,
                default_namespace: config.default_namespace,
                auth,
                limiter,
                fixed_headers,
                timeout: config.timeout,
                deadline: config.deadline,
                max_watch_event_size: config.max_watch_event_size,
                content_type: config.content_type,
                warnings: config.warning_handler,
                compression: !config.disable_compression,
                max_retries: MAX_RETRIES,
            }),
        })
    }

    /// A client from [`Config::infer`].
    pub fn try_default() -> Result<Client, Error> {
        Client::new(Config::infer().map_err(config_err)?)
    }

    /// The namespace of the kubeconfig context or service account.
    pub fn default_namespace(&self) -> &str {
        &self.inner.default_namespace
    }

    /// The wire format typed requests ask for ([`Config::content_type`]).
    pub fn content_type(&self) -> ContentType {
        self.inner.content_type
    }

    /// `scheme://host:port` plus any path prefix of the cluster URL.
    pub fn base_url(&self) -> String {
        format!("{}://{}{}", self.inner.scheme, self.inner.authority, self.inner.base_path)
    }

    /// Sends with limiter, credentials and retries; returns a 2xx response
    /// or the error the server gave. Runs in a `request` span, and reports
    /// to the client's [`RequestMetrics`] (see [`metrics`](super::metrics)).
    pub(super) async fn execute(&self, req: &Prepared) -> Result<http::Response<Body>, Error> {
        let span = tracing::debug_span!(
            "request",
            otel.kind = "client",
            http.request.method = %req.method,
            url.template = Empty,
            server.address = %self.inner.authority,
            http.response.status_code = Empty,
            http.request.resend_count = Empty,
        );
        // Made once, for the span and the metrics, and only if either wants it.
        let template =
            (self.inner.metrics.is_some() || !span.is_disabled()).then(|| path_template(&req.path_and_query));
        if let Some(template) = &template {
            span.record("url.template", &**template);
        }
        self.attempts(req, template.as_deref(), span.clone()).instrument(span).await
    }

    async fn attempts(
        &self,
        req: &Prepared,
        template: Option<&str>,
        span: tracing::Span,
    ) -> Result<http::Response<Body>, Error> {
        let inner = &*self.inner;
        let url = format!("{}://{}{}{}", inner.scheme, inner.authority, inner.base_path, req.path_and_query);
        let metrics = inner.metrics.as_deref();
        let (verb, host) = (req.method.as_str(), inner.authority.as_str());
        let mut retries = 0;
        let retried = |code: &str, retries: u32| {
            span.record("http.request.resend_count", retries);
            if let Some(metrics) = metrics {
                metrics.retry(verb, host, code);
            }
        };
        let mut reauthenticated = false;
        let mut fell_back = false;
        loop {
            // A watch's retries after a Retry-After wait in line (client-go's
            // retries are throttled too).
            if let Some(limiter) = inner.limiter.as_ref().filter(|_| !req.watch || retries > 0) {
                let waiting = metrics.map(|_| Instant::now());
                limiter.acquire().await;
                if let (Some(metrics), Some(since)) = (metrics, waiting) {
                    metrics.rate_limited(verb, host, since.elapsed());
                }
            }
            let auth = inner.auth.authorization().await.map_err(Error::Auth)?;
            inner.tls.check_if_due();
            self.rotate_if_certificate_changed();
            let mut builder = self.request_builder(req, &url, auth.as_ref());
            if inner.compression
                && let Some(headers) = builder.headers_mut()
                && !headers.contains_key(http::header::ACCEPT_ENCODING)
            {
                headers.insert(http::header::ACCEPT_ENCODING, HeaderValue::from_static(super::gzip::ACCEPT_GZIP));
            }
            let request = builder
                .body(Full::new(req.body.clone()))
                .map_err(|e| Error::InvalidRequest { what: url.clone(), message: e.to_string() })?;
            let sent = metrics.map(|_| Instant::now());
            let result = self.send(request).await;
            if let (Some(metrics), Some(sent)) = (metrics, sent) {
                let answer = result.as_ref().ok();
                metrics.attempt(&Attempt {
                    verb,
                    host,
                    path_template: template.unwrap_or_default(),
                    status: answer.map(|r| r.status().as_u16()),
                    latency: sent.elapsed(),
                    request_bytes: req.body.len(),
                    response_bytes: answer.and_then(|r| content_length(r.headers())),
                });
            }
            let response = match result {
                Ok(r) => r,
                // The pool switched to HTTP/1.1 for a server without HTTP/2.
                Err(SendError::Client(e)) if !fell_back && is_no_http2(&e) => {
                    fell_back = true;
                    continue;
                }
                Err(SendError::Client(e))
                    if req.method == Method::GET && retries < inner.max_retries && is_connection_reset(&e) =>
                {
                    retries += 1;
                    retried(NO_ANSWER, retries);
                    tracing::debug!(%url, error = %ErrorChain(&e), retries, "connection reset; retrying GET");
                    tokio::time::sleep(RESET_RETRY_DELAY).await;
                    continue;
                }
                Err(SendError::Client(error)) => {
                    return Err(Error::Transport { verb: req.method.to_string(), url, error });
                }
                Err(SendError::Layer(source)) => {
                    return Err(Error::Layer { verb: req.method.to_string(), url, source });
                }
            };
            report_warnings(&*inner.warnings, response.headers());
            let status = response.status();
            span.record("http.response.status_code", status.as_u16());
            if status == StatusCode::UNAUTHORIZED && !reauthenticated && inner.auth.unauthorized(auth.as_ref()) {
                reauthenticated = true;
                tracing::debug!(%url, "401: refreshing credentials and retrying once");
                continue;
            }
            if (status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error())
                && retries < inner.max_retries
                && let Some(wait) = retry_after(response.headers())
            {
                retries += 1;
                retried(status.as_str(), retries);
                tracing::debug!(%url, %status, ?wait, retries, "server asked to retry");
                drop(response);
                tokio::time::sleep(wait).await;
                continue;
            }
            if status.is_success() {
                return Ok(response);
            }
            return Err(error_answer(response, req).await);
        }
    }

    /// One attempt: through the builder's layers if it was given any, else
    /// straight to the pool.
    async fn send(&self, request: TransportRequest) -> Result<http::Response<Body>, SendError> {
        let Some(transport) = &self.inner.transport else {
            let pool = Arc::clone(&self.inner.pool.read());
            return pool.send(request).await.map_err(SendError::Client);
        };
        use tower::ServiceExt as _;
        transport.clone().oneshot(request).await.map_err(|e| match e.downcast::<hyper_util::client::legacy::Error>() {
            Ok(client) => SendError::Client(*client),
            Err(other) => SendError::Layer(other),
        })
    }

    /// The request of one attempt at `req`, to `uri`: the client's fixed
    /// headers, the request's own, and the credentials.
    pub(super) fn request_builder(
        &self,
        req: &Prepared,
        uri: &str,
        authorization: Option<&HeaderValue>,
    ) -> http::request::Builder {
        let mut builder = http::Request::builder().method(req.method.clone()).uri(uri);
        if let Some(headers) = builder.headers_mut() {
            headers.extend(self.inner.fixed_headers.clone());
            headers.extend(req.headers.clone());
            if let Some(a) = authorization {
                headers.insert(http::header::AUTHORIZATION, a.clone());
            }
        }
        builder
    }

    /// The full URL of `req`.
    #[cfg(feature = "ws")]
    pub(super) fn url_of(&self, req: &Prepared) -> String {
        let inner = &*self.inner;
        format!("{}://{}{}{}", inner.scheme, inner.authority, inner.base_path, req.path_and_query)
    }

    /// The pieces a dedicated (non-pooled) connection needs: the
    /// connector, the server's authority, and the credentials.
    #[cfg(feature = "ws")]
    pub(super) fn dedicated(&self) -> (&Connector, &str, &Authenticator) {
        let inner = &*self.inner;
        (&inner.connector, &inner.authority, &inner.auth)
    }
}

/// The error a non-2xx answer stands for: the server's Status, in the
/// format the request negotiated (JSON, or protobuf, which never starts
/// like JSON), else one made from the HTTP status and body.
pub(super) async fn error_answer<B>(response: http::Response<B>, req: &Prepared) -> Error
where
    B: hyper::body::Body,
    B::Error: Into<Error>,
{
    let status = response.status();
    let body = match response.into_body().collect().await {
        Ok(body) => body.to_bytes(),
        Err(e) => return e.into(),
    };
    let mut st = Status::from_body(&body)
        .or_else(|| Status::from_protobuf(&body))
        .unwrap_or_else(|| Status::from_http(status.as_u16(), &body, req.method.as_str(), &req.path_and_query));
    if st.code == 0 {
        st.code = status.as_u16();
    }
    Error::Api(Box::new(st))
}

impl Client {
    /// Moves requests to new connections when the certificates changed.
    ///
    /// An exec plugin's new client certificate usually follows a 401 on
    /// the old one: like client-go, close every connection (watches
    /// restart on their own) and start a new pool, so the next request
    /// handshakes with the new one. Rotated certificate files
    /// ([`CertificateFiles`](crate::config::CertificateFiles)) are taken
    /// before the old ones expire: new requests go to new connections,
    /// made with them, and the old connections finish what they carry.
    pub(super) fn rotate_if_certificate_changed(&self) {
        let inner = &*self.inner;
        let current = inner.auth.cert_generation();
        if inner.cert_generation.swap(current, Ordering::SeqCst) != current {
            tracing::debug!("client certificate changed; closing connections");
            *inner.pool.write() = Arc::new(self.new_pool());
            inner.connector.tracker.close_all();
        }
        let current = inner.tls.generation();
        if inner.tls_generation.swap(current, Ordering::SeqCst) != current {
            tracing::debug!("certificate files changed; new requests go to new connections");
            *inner.pool.write() = Arc::new(self.new_pool());
        }
    }

    fn new_pool(&self) -> Pool {
        Pool::new(&self.inner.connector, self.inner.scheme == "https")
    }

    /// How the client's requests in flight are spread over its
    /// connections: for each HTTP/2 connection opened, oldest first, the
    /// requests it carries now (watches, followed logs, and requests
    /// waiting for their answer). A second connection opens once the
    /// server's limit of streams on one (100 for kube-apiserver) is
    /// reached. Over HTTP/1.1 an entry is a group of connections.
    pub fn connections(&self) -> Vec<usize> {
        self.inner.pool.read().lanes()
    }
}

/// Why an attempt got no response.
enum SendError {
    /// The client's own failure (connect, TLS, a reset, no HTTP/2).
    Client(hyper_util::client::legacy::Error),
    /// A failure a [`ClientBuilder::layer`] returned.
    Layer(tower::BoxError),
}

fn content_length(headers: &HeaderMap) -> Option<u64> {
    headers.get(http::header::CONTENT_LENGTH)?.to_str().ok()?.parse().ok()
}

/// `Retry-After` in whole seconds, the only form the apiserver sends (and
/// the only one client-go honours).
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let secs: u64 = headers.get(http::header::RETRY_AFTER)?.to_str().ok()?.trim().parse().ok()?;
    Some(Duration::from_secs(secs))
}

fn is_no_http2(e: &hyper_util::client::legacy::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = source {
        if err.is::<NoHttp2>() {
            return true;
        }
        source = err.source();
    }
    false
}

fn is_connection_reset(e: &hyper_util::client::legacy::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = source {
        if let Some(io) = err.downcast_ref::<std::io::Error>() {
            use std::io::ErrorKind::*;
            if matches!(io.kind(), ConnectionReset | ConnectionAborted | BrokenPipe | UnexpectedEof) {
                return true;
            }
        }
        if let Some(h) = err.downcast_ref::<hyper::Error>()
            && h.is_incomplete_message()
        {
            return true;
        }
        source = err.source();
    }
    false
}

/// Hands the apiserver's `Warning: 299 - "text"` headers (deprecated APIs,
/// ignored fields) to the client's [`WarningHandler`].
fn report_warnings(handler: &dyn WarningHandler, headers: &HeaderMap) {
    for value in headers.get_all(http::header::WARNING) {
        let text = String::from_utf8_lossy(value.as_bytes());
        for w in parse_warning_header(&text) {
            handler.handle_warning(w.code, &w.agent, &w.text);
        }
    }
}

/// A response body as a stream of chunks.
#[must_use = "a stream does nothing unless polled"]
pub(super) fn body_stream(response: http::Response<Body>) -> ByteStream {
    http_body_util::BodyDataStream::new(response.into_body()).boxed()
}
