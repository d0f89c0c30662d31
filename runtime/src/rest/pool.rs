//! The connections of a client, in lanes: as many HTTP/2 connections as
//! its open streams need.
//!
//! kube-apiserver lets one HTTP/2 connection carry 100 streams at once
//! (`--http2-max-streams-per-connection`), and a watch, a followed log or
//! a port-forward holds its stream for minutes. hyper's client keeps one
//! HTTP/2 connection per server and, once it is full, stops taking *any*
//! request until a stream ends: a controller with a hundred informers
//! would have every later request wait, lease renewals included. Go's
//! transport opens another connection instead; so does this pool.
//!
//! Each [`Lane`] is a hyper pool of its own holding one HTTP/2 connection,
//! dialed once however many requests wait for it, with a count of the
//! requests it carries. A request takes the first lane with room under the
//! server's limit, which the first connection reads from the server's
//! settings ([`settings`](super::settings)); until then one request opens
//! it and the others wait a moment. A request holds its place until its
//! response body has been read to the end or dropped ([`Body`]). A server
//! that does not offer HTTP/2 (or plain `http`) gets lanes of HTTP/1.1
//! connections, pooled by hyper.
//!
//! HTTP/2 flow control is set as Go's transport sets it: a connection
//! window of 1 GiB and 4 MiB per stream. hyper's defaults (5 MiB for the
//! whole connection, returned only as each body is read) let one or two
//! streams that the program reads slowly, a followed log say, hold the
//! window of every watch on the connection, which then stalls without an
//! error; a stream can now hold at most its own 4 MiB.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::{Frame, Incoming, SizeHint};
use hyper_util::client::legacy::Client as HyperClient;
use hyper_util::rt::TokioExecutor;
use parking_lot::Mutex;
use tokio::sync::Notify;

use super::connect::Connector;
use super::settings::INITIAL_STREAM_LIMIT;

/// A connection window no slow reader can use up (Go's transport's).
const CONNECTION_WINDOW: u32 = 1 << 30;
/// The most one stream's unread data can take (Go's transport's).
const STREAM_WINDOW: u32 = 4 << 20;

type Http = HyperClient<Connector, Full<Bytes>>;

/// A client's connections to its server, in lanes.
pub(super) struct Pool {
    connector: Connector,
    shared: Arc<Learned>,
}

/// What the pool's connections have told about the server, and its lanes.
pub(super) struct Learned {
    state: Mutex<State>,
    /// Woken when the first connection told its limit, or failed to.
    told: Notify,
}

struct State {
    lanes: Vec<Arc<Lane>>,
    /// Streams the server takes on one connection (`usize::MAX` for
    /// HTTP/1.1, where hyper opens a connection per request in flight);
    /// `None` until a connection told.
    limit: Option<usize>,
    /// A request is opening the first connection; the others wait for the
    /// limit it learns.
    opening: bool,
    /// New lanes speak HTTP/2 only, so each dials one connection however
    /// many requests wait (hyper dials one per request when it must find
    /// out first); false for plain `http` and once the server did not
    /// offer h2.
    http2_only: bool,
}

/// One hyper pool and the requests it carries.
struct Lane {
    http: Http,
    in_flight: AtomicUsize,
}

/// The connection of an HTTP/2-only lane negotiated HTTP/1.1: the server
/// no longer offers HTTP/2. The pool has switched to HTTP/1.1; the request
/// is sent again.
#[derive(Debug, thiserror::Error)]
#[error("the server did not offer HTTP/2; continuing over HTTP/1.1")]
pub(super) struct NoHttp2;

impl Learned {
    /// A connection read the server's settings: `limit` streams at once.
    pub(super) fn stream_limit(&self, limit: usize) {
        let mut st = self.state.lock();
        let first = st.limit.is_none();
        st.limit = Some(limit);
        drop(st);
        if first {
            self.told.notify_waiters();
        }
    }

    /// A connection negotiated HTTP/1.1: lanes are groups of connections
    /// pooled by hyper from now on, and HTTP/2-only lanes are retired.
    pub(super) fn http1(&self) {
        let mut st = self.state.lock();
        let first = st.limit.is_none();
        st.limit = Some(usize::MAX);
        if st.http2_only {
            st.http2_only = false;
            // Their requests finish; new ones go to new lanes.
            st.lanes.clear();
        }
        drop(st);
        if first {
            self.told.notify_waiters();
        }
    }

    /// Whether new connections must negotiate h2.
    pub(super) fn http2_only(&self) -> bool {
        self.state.lock().http2_only
    }
}

impl Pool {
    /// A pool over `connector`; `https`: the server is expected to speak
    /// HTTP/2 (offered in TLS).
    pub(super) fn new(connector: &Connector, https: bool) -> Pool {
        let shared = Arc::new(Learned {
            state: Mutex::new(State { lanes: Vec::new(), limit: None, opening: false, http2_only: https }),
            told: Notify::new(),
        });
        Pool { connector: connector.reporting_to(Arc::clone(&shared)), shared }
    }

    /// The lanes opened so far and the requests each carries, oldest first.
    pub(super) fn lanes(&self) -> Vec<usize> {
        self.shared.state.lock().lanes.iter().map(|l| l.in_flight.load(Ordering::Acquire)).collect()
    }

    /// Sends `request` on the first lane with room.
    ///
    /// # Cancel safety
    /// Dropping the future abandons the request and frees its place.
    pub(super) async fn send(
        &self,
        request: http::Request<Full<Bytes>>,
    ) -> Result<http::Response<Body>, hyper_util::client::legacy::Error> {
        let place = self.place().await;
        let response = place.lane.http.request(request).await?;
        let gzip = super::gzip::is_gzip(response.headers());
        let (mut parts, body) = response.into_parts();
        if gzip {
            // Read as what it decodes to: its length and encoding are the
            // wire's (as Go's transport drops them when it decompresses).
            parts.headers.remove(http::header::CONTENT_ENCODING);
            parts.headers.remove(http::header::CONTENT_LENGTH);
        }
        let body = Body { inner: body, place: Some(place), gunzip: gzip.then(super::gzip::Gunzip::new), wire_bytes: 0 };
        Ok(http::Response::from_parts(parts, body))
    }

    async fn place(&self) -> Place {
        loop {
            let told = self.shared.told.notified();
            tokio::pin!(told);
            told.as_mut().enable();
            {
                let mut st = self.shared.state.lock();
                match st.limit {
                    // The first connection has not told its limit: one
                    // request opens it, the others wait for what it learns.
                    None if st.opening => {}
                    None => {
                        st.opening = true;
                        let lane = self.lane_with_room(&mut st, 1);
                        return Place { lane, opener: Some(Arc::clone(&self.shared)) };
                    }
                    Some(limit) => {
                        let lane = self.lane_with_room(&mut st, limit);
                        return Place { lane, opener: None };
                    }
                }
            }
            told.await;
        }
    }

    /// Takes a place in the first lane carrying fewer than `limit`
    /// requests, or in a new lane.
    fn lane_with_room(&self, st: &mut State, limit: usize) -> Arc<Lane> {
        // Only this lock's holder adds; a place is given back without it.
        if let Some(lane) = st.lanes.iter().find(|l| l.in_flight.load(Ordering::Acquire) < limit) {
            lane.in_flight.fetch_add(1, Ordering::AcqRel);
            return Arc::clone(lane);
        }
        if !st.lanes.is_empty() {
            tracing::debug!(lanes = st.lanes.len() + 1, "every connection is full; opening another");
        }
        let lane = Arc::new(Lane { http: http(self.connector.clone(), st.http2_only), in_flight: AtomicUsize::new(1) });
        st.lanes.push(Arc::clone(&lane));
        lane
    }
}

/// A hyper pool over `connector`. HTTP/2 pings find dead connections under
/// long watches, as client-go's ReadIdleTimeout (30 s) and PingTimeout
/// (15 s) do.
fn http(connector: Connector, http2_only: bool) -> Http {
    HyperClient::builder(TokioExecutor::new())
        .pool_idle_timeout(Duration::from_secs(90))
        .timer(hyper_util::rt::TokioTimer::new())
        .http2_only(http2_only)
        .http2_keep_alive_interval(Duration::from_secs(30))
        .http2_keep_alive_timeout(Duration::from_secs(15))
        .http2_initial_connection_window_size(CONNECTION_WINDOW)
        .http2_initial_stream_window_size(STREAM_WINDOW)
        .build(connector)
}

/// A request's place in its lane, given back when dropped.
struct Place {
    lane: Arc<Lane>,
    /// Set for the request that opens the first connection.
    opener: Option<Arc<Learned>>,
}

impl Drop for Place {
    fn drop(&mut self) {
        self.lane.in_flight.fetch_sub(1, Ordering::AcqRel);
        let Some(learned) = self.opener.take() else { return };
        let mut st = learned.state.lock();
        st.opening = false;
        if st.limit.is_none() {
            // The first connection failed before it told: waiting for the
            // next one would make the waiting requests fail one after
            // another. Let them all go with the usual limit; a connection
            // corrects it when it tells.
            st.limit = Some(INITIAL_STREAM_LIMIT);
            drop(st);
            learned.told.notify_waiters();
        }
    }
}

/// A response body from the apiserver, decompressed if the server
/// compressed it (as it does for large responses when the client asks:
/// [`Config::disable_compression`](crate::Config::disable_compression)),
/// its end checked. Until it has been read to the end
/// (or dropped) it holds its request's place on its connection.
pub struct Body {
    inner: Incoming,
    place: Option<Place>,
    /// The decoder of a gzip-compressed body.
    gunzip: Option<super::gzip::Gunzip>,
    wire_bytes: u64,
}

impl Body {
    /// The bytes of the body read from the connection so far: compressed
    /// ones when the server compressed it.
    pub fn wire_bytes(&self) -> u64 {
        self.wire_bytes
    }
}

impl std::fmt::Debug for Body {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Body").field("done", &self.place.is_none()).finish_non_exhaustive()
    }
}

impl hyper::body::Body for Body {
    type Data = Bytes;
    type Error = super::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, super::Error>>> {
        loop {
            let polled = Pin::new(&mut self.inner).poll_frame(cx);
            if matches!(polled, Poll::Ready(None | Some(Err(_)))) {
                // The stream is over on the connection.
                self.place = None;
            }
            let frame = match polled {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Some(Err(e))) => return Poll::Ready(Some(Err(super::Error::Body(e)))),
                Poll::Ready(None) => {
                    // The end: what the decoder still holds, checked.
                    let Some(mut gunzip) = self.gunzip.take() else { return Poll::Ready(None) };
                    return Poll::Ready(match gunzip.finish() {
                        Ok(rest) if rest.is_empty() => None,
                        Ok(rest) => Some(Ok(Frame::data(rest))),
                        Err(e) => Some(Err(super::Error::Decompress(e))),
                    });
                }
                Poll::Ready(Some(Ok(frame))) => frame,
            };
            let Some(data) = frame.data_ref() else { return Poll::Ready(Some(Ok(frame))) };
            self.wire_bytes += data.len() as u64;
            let Some(gunzip) = self.gunzip.as_mut() else { return Poll::Ready(Some(Ok(frame))) };
            match gunzip.feed(data) {
                // Nothing decoded yet (a header, a partial block): read on.
                Ok(decoded) if decoded.is_empty() => {}
                Ok(decoded) => return Poll::Ready(Some(Ok(Frame::data(decoded)))),
                Err(e) => {
                    self.gunzip = None;
                    return Poll::Ready(Some(Err(super::Error::Decompress(e))));
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.gunzip.is_none() && self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        // A compressed body's decoded size is not known in advance.
        if self.gunzip.is_some() { SizeHint::default() } else { self.inner.size_hint() }
    }
}
