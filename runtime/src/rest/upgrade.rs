//! Opening a WebSocket to the apiserver (exec, attach, port-forward).
//!
//! Upgrades exist only in HTTP/1.1, while the pooled connections may have
//! negotiated HTTP/2, so every WebSocket gets a connection of its own,
//! dialed through the client's connector (same TLS, proxy and client
//! certificate) with ALPN offering HTTP/1.1 only. The handshake carries
//! the same headers and credentials as any request; a refusal (403, 404, a
//! 400 Status) becomes [`Error::Api`], as for every other call. It does not
//! wait at the client's rate limiter, as client-go's exec and port-forward
//! dialers do not: a local port-forward opens a WebSocket per connection,
//! and a browser's burst of connections would otherwise queue behind a
//! limit meant for API calls.

use std::time::Duration;

use bytes::Bytes;
use http::StatusCode;
use http::header::{self, HeaderValue};
use http_body_util::Empty;
use hyper_util::rt::TokioIo;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::{Role, WebSocketConfig};

use super::client::error_answer;
use super::error::Error;
use super::request::Request;

/// How long dialing and the upgrade handshake may take when the request
/// sets no timeout of its own.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(30);

/// An open WebSocket to the apiserver.
pub(crate) type WebSocket = WebSocketStream<TokioIo<hyper::upgrade::Upgraded>>;

/// A WebSocket and the subprotocol the server chose.
pub(crate) struct Upgraded {
    pub socket: WebSocket,
    /// The `Sec-WebSocket-Protocol` of the answer; empty when none.
    pub protocol: String,
}

fn upgrade_error(url: &str, source: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Error {
    Error::Upgrade { url: url.to_owned(), source: source.into() }
}

impl Request {
    /// Sends this request (a GET) as a WebSocket upgrade offering
    /// `protocols`, in order of preference, and returns the open socket.
    ///
    /// # Cancel safety
    /// Dropping the future closes the connection being set up.
    pub(crate) async fn websocket(self, protocols: &[&str]) -> Result<Upgraded, Error> {
        let (client, mut prepared, timeout) = self.prepare()?;
        let key = tokio_tungstenite::tungstenite::handshake::client::generate_key();
        let headers = &mut prepared.headers;
        headers.remove(header::ACCEPT);
        headers.insert(header::CONNECTION, HeaderValue::from_static("Upgrade"));
        headers.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
        headers.insert(header::SEC_WEBSOCKET_VERSION, HeaderValue::from_static("13"));
        let invalid = |what: &str, e: http::header::InvalidHeaderValue| Error::InvalidRequest {
            what: what.to_owned(),
            message: e.to_string(),
        };
        headers.insert(header::SEC_WEBSOCKET_KEY, HeaderValue::try_from(&key).map_err(|e| invalid("key", e))?);
        let offered = protocols.join(", ");
        headers.insert(
            header::SEC_WEBSOCKET_PROTOCOL,
            HeaderValue::try_from(&offered).map_err(|e| invalid("Sec-WebSocket-Protocol", e))?,
        );
        let url = client.url_of(&prepared);
        let uri: http::Uri = url.parse().map_err(|e| upgrade_error(&url, e))?;
        let origin_form = uri.path_and_query().map_or("/", |p| p.as_str()).to_owned();
        let (connector, authority, auth) = client.dedicated();
        let connector = connector.http1_only();
        let host = HeaderValue::try_from(authority).map_err(|e| invalid("Host", e))?;

        let handshake = async {
            let mut reauthenticated = false;
            loop {
                let authorization = auth.authorization().await.map_err(Error::Auth)?;
                client.rotate_if_certificate_changed();
                let io = connector.dial(uri.clone()).await.map_err(|e| upgrade_error(&url, e))?;
                // Absolute form only for a plain-http server behind an HTTP
                // proxy, as for pooled requests.
                let target = if io.inner().is_forward_proxy() { url.as_str() } else { origin_form.as_str() };
                let request = client
                    .request_builder(&prepared, target, authorization.as_ref())
                    .header(header::HOST, host.clone())
                    .body(Empty::<Bytes>::new())
                    .map_err(|e| Error::InvalidRequest { what: url.clone(), message: e.to_string() })?;
                let (mut sender, connection) =
                    hyper::client::conn::http1::handshake(io).await.map_err(|e| upgrade_error(&url, e))?;
                // Drives the connection until the upgrade hands it over.
                tokio::spawn(async move {
                    if let Err(e) = connection.with_upgrades().await {
                        tracing::debug!(error = %crate::ErrorChain(&e), "WebSocket handshake connection failed");
                    }
                });
                let response = sender.send_request(request).await.map_err(|e| upgrade_error(&url, e))?;
                let status = response.status();
                if status == StatusCode::UNAUTHORIZED && !reauthenticated && auth.unauthorized(authorization.as_ref()) {
                    reauthenticated = true;
                    tracing::debug!(%url, "401: refreshing credentials and retrying the upgrade once");
                    continue;
                }
                if status != StatusCode::SWITCHING_PROTOCOLS {
                    if status.is_success() {
                        return Err(upgrade_error(&url, format!("the server answered {status} instead of upgrading")));
                    }
                    return Err(error_answer(response, &prepared).await);
                }
                let accept = response.headers().get(header::SEC_WEBSOCKET_ACCEPT).map(HeaderValue::as_bytes);
                if accept != Some(derive_accept_key(key.as_bytes()).as_bytes()) {
                    return Err(upgrade_error(&url, "the server's Sec-WebSocket-Accept does not match the key sent"));
                }
                let protocol = response
                    .headers()
                    .get(header::SEC_WEBSOCKET_PROTOCOL)
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or_default()
                    .trim()
                    .to_owned();
                if !protocol.is_empty() && !protocols.contains(&protocol.as_str()) {
                    return Err(upgrade_error(
                        &url,
                        format!("the server chose subprotocol {protocol:?}, not one of {offered:?}"),
                    ));
                }
                let upgraded = hyper::upgrade::on(response).await.map_err(|e| upgrade_error(&url, e))?;
                let socket =
                    WebSocketStream::from_raw_socket(TokioIo::new(upgraded), Role::Client, Some(websocket_config()))
                        .await;
                return Ok(Upgraded { socket, protocol });
            }
        };
        let limit = timeout.unwrap_or(HANDSHAKE_TIMEOUT);
        tokio::time::timeout(limit, handshake).await.map_err(|_| Error::Timeout(limit))?
    }
}

/// Messages up to 16 MiB: the apiserver writes at most 32 KiB per frame,
/// a Status far less.
fn websocket_config() -> WebSocketConfig {
    WebSocketConfig::default().max_message_size(Some(16 << 20)).max_frame_size(Some(16 << 20))
}

/// The task that runs one upgraded connection (an exec's or a
/// port-forward's): joined for its result, aborted, which closes the
/// connection, on [`abort`](StreamTask::abort) or when dropped.
pub(crate) struct StreamTask<T> {
    task: Option<tokio::task::JoinHandle<Result<T, Error>>>,
    /// What runs, for the error of an aborted task (`exec`, `port-forward`).
    what: &'static str,
}

impl<T> StreamTask<T> {
    pub(crate) fn new(task: tokio::task::JoinHandle<Result<T, Error>>, what: &'static str) -> Self {
        StreamTask { task: Some(task), what }
    }

    /// The task's result; an aborted (or already joined) task is an error.
    ///
    /// # Cancel safety
    /// Dropping the future leaves the task running; dropping the
    /// `StreamTask` then aborts it.
    pub(crate) async fn join(&mut self) -> Result<T, Error> {
        let Some(task) = self.task.as_mut() else {
            return Err(self.aborted());
        };
        let result = task.await;
        self.task = None;
        match result {
            Ok(result) => result,
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            Err(_) => Err(self.aborted()),
        }
    }

    /// Stops the task now, closing its connection.
    pub(crate) fn abort(&self) {
        if let Some(task) = &self.task {
            task.abort();
        }
    }

    fn aborted(&self) -> Error {
        Error::Stream { what: self.what.into(), message: "the stream was aborted".into() }
    }
}

impl<T> Drop for StreamTask<T> {
    fn drop(&mut self) {
        self.abort();
    }
}
