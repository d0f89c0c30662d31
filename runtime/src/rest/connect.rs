//! Opening connections to the apiserver: TCP (hyper's `HttpConnector`,
//! with Go's dialer's keepalive), then, as configured, a proxy (HTTP
//! `CONNECT`, the same inside TLS to an `https` proxy, or SOCKS5), then TLS
//! with a bounded handshake and the client's current certificates
//! ([`TlsSource`]). Every connection is tracked so all of them can be
//! closed at once when an exec plugin's client certificate changes, as
//! client-go's connection-rotating dialer does: otherwise pooled
//! connections keep presenting the old certificate. A connection of the
//! [`pool`](super::pool) tells it the protocol negotiated and, for HTTP/2,
//! the server's limit of streams ([`settings`](super::settings)).

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use http::Uri;
use hyper_util::client::legacy::connect::{Connected, Connection, HttpConnector};
use hyper_util::rt::TokioIo;
use rustls_pki_types::ServerName;
use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWrite, AsyncWriteExt as _, ReadBuf};
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

use super::pool::{Learned, NoHttp2};
use super::settings::SettingsSniffer;
use crate::config::{EnvProxies, Proxy, ProxyEnv, ProxyScheme, ProxyUrl, TlsSource};

/// client-go's `TLSHandshakeTimeout`: a server (or proxy) that accepts TCP
/// but never answers the handshake must not hang a list or a watch start.
pub const TLS_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// client-go's dial timeout; also bounds the proxy handshake.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// TCP keepalive as Go's dialer sets it for client-go (`KeepAlive: 30s`,
/// then Go's defaults): the first probe after 30 s of silence, then every
/// 15 s, and the connection is dead after 9 unanswered: about 165 s. Only
/// the idle time would leave the system's interval (75 s on Linux) and
/// count (9), about 12 minutes, for a plain HTTP/1.1 or WebSocket
/// connection to a vanished peer, which no HTTP/2 ping covers.
const KEEPALIVE_IDLE: Duration = Duration::from_secs(30);
const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(15);
const KEEPALIVE_PROBES: u32 = 9;

/// Anything a connection can be layered on.
trait Io: AsyncRead + AsyncWrite + Send + Unpin {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin> Io for T {}

pub(super) type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Where the proxy of each connection comes from, resolved once.
#[derive(Debug)]
enum ProxyRule {
    Never,
    Always(ProxyUrl),
    /// Parsed when the connector is built, so an unusable variable is
    /// reported once, not per connection.
    Environment(EnvProxies),
}

/// Where one connection goes: through which proxy, if any, to which server.
struct Route {
    proxy: Option<ProxyUrl>,
    https: bool,
    /// Without brackets.
    host: String,
    port: u16,
}

/// Closes every connection it has handed out, on request.
#[derive(Debug, Default)]
pub(super) struct Tracker {
    current: parking_lot::Mutex<CancellationToken>,
}

impl Tracker {
    fn token(&self) -> CancellationToken {
        self.current.lock().clone()
    }

    /// Closes all connections opened so far, idle or busy (client-go's
    /// `CloseAll`); later connections are unaffected.
    pub(super) fn close_all(&self) {
        let old = std::mem::take(&mut *self.current.lock());
        old.cancel();
    }
}

/// Opens an in-memory connection to a server living in this process (the
/// fake apiserver of [`crate::fake`]) instead of dialing.
pub(crate) type InMemoryDial = Arc<dyn Fn() -> tokio::io::DuplexStream + Send + Sync>;

/// Which protocols a connection offers the server in TLS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Offer {
    /// h2, then HTTP/1.1: pooled connections.
    Pooled,
    /// HTTP/1.1 only: protocol upgrades (WebSockets) do not exist in
    /// HTTP/2, and the apiserver would pick h2 if offered.
    #[cfg(feature = "ws")]
    Http1,
}

/// The connector given to hyper's pool.
#[derive(Clone)]
pub(super) struct Connector {
    tcp: HttpConnector,
    tls: Arc<TlsSource>,
    offer: Offer,
    /// The pool told what each connection negotiates (none outside it).
    pool: Option<Arc<Learned>>,
    /// Verify the server certificate against this name instead of the host.
    server_name: Option<ServerName<'static>>,
    proxy: Arc<ProxyRule>,
    pub(super) tracker: Arc<Tracker>,
    handshake_timeout: Duration,
    /// When set, every connection is one end of an in-memory pipe.
    pub(super) in_memory: Option<InMemoryDial>,
}

impl Connector {
    pub(super) fn new(tls: Arc<TlsSource>, server_name: Option<ServerName<'static>>, proxy: &Proxy) -> Connector {
        let mut tcp = HttpConnector::new();
        tcp.enforce_http(false);
        tcp.set_nodelay(true);
        tcp.set_keepalive(Some(KEEPALIVE_IDLE));
        tcp.set_keepalive_interval(Some(KEEPALIVE_INTERVAL));
        tcp.set_keepalive_retries(Some(KEEPALIVE_PROBES));
        tcp.set_connect_timeout(Some(CONNECT_TIMEOUT));
        let proxy = match proxy {
            Proxy::None => ProxyRule::Never,
            Proxy::Url(url) => ProxyRule::Always(url.clone()),
            Proxy::Environment(env) => ProxyRule::Environment(env.resolve()),
            Proxy::FromEnvironment => ProxyRule::Environment(ProxyEnv::from_process().resolve()),
        };
        Connector {
            tcp,
            tls,
            offer: Offer::Pooled,
            pool: None,
            server_name,
            proxy: Arc::new(proxy),
            tracker: Arc::default(),
            handshake_timeout: TLS_HANDSHAKE_TIMEOUT,
            in_memory: None,
        }
    }

    /// The same connector offering only HTTP/1.1 in TLS: protocol
    /// upgrades (WebSockets) do not exist in HTTP/2, and the apiserver
    /// would pick h2 if offered.
    #[cfg(feature = "ws")]
    pub(super) fn http1_only(&self) -> Connector {
        Connector { offer: Offer::Http1, pool: None, ..self.clone() }
    }

    /// The same connector, telling `pool` what its connections negotiate.
    pub(super) fn reporting_to(&self, pool: Arc<Learned>) -> Connector {
        Connector { pool: Some(pool), ..self.clone() }
    }

    /// Opens one connection to `uri`, outside any pool.
    #[cfg(feature = "ws")]
    pub(super) async fn dial(&self, uri: Uri) -> Result<TokioIo<Conn>, BoxError> {
        self.clone().connect(uri).await
    }

    /// Where a connection to `uri` goes.
    fn route(&self, uri: &Uri) -> Result<Route, BoxError> {
        let https = match uri.scheme_str() {
            Some("https") => true,
            Some("http") => false,
            other => return Err(format!("unsupported scheme {other:?}").into()),
        };
        let host = uri.host().ok_or("URL has no host")?.trim_start_matches('[').trim_end_matches(']').to_owned();
        let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
        let proxy = match &*self.proxy {
            ProxyRule::Never => None,
            ProxyRule::Always(p) => Some(p.clone()),
            ProxyRule::Environment(env) => env.proxy_for(if https { "https" } else { "http" }, &host, port)?,
        };
        Ok(Route { proxy, https, host, port })
    }

    /// The `Proxy-Authorization` header every request to `uri` must carry:
    /// a plain-http server behind an HTTP(S) proxy with credentials gets
    /// absolute-form requests sent to the proxy itself, which authenticates
    /// each of them (Go's transport sets the header on such requests). For
    /// https servers and SOCKS5 the credentials go in the tunnel handshake
    /// instead, never to the server.
    pub(super) fn proxy_authorization(&self, uri: &Uri) -> Option<http::HeaderValue> {
        match self.route(uri) {
            Ok(Route { proxy: Some(p), https: false, .. }) if p.scheme != ProxyScheme::Socks5 => p.authorization(),
            _ => None,
        }
    }

    async fn connect(self, uri: Uri) -> Result<TokioIo<Conn>, BoxError> {
        if let Some(dial) = &self.in_memory {
            if let Some(pool) = &self.pool {
                pool.http1();
            }
            let token = self.tracker.token();
            let io: Box<dyn Io> = Box::new(dial());
            return Ok(TokioIo::new(Conn {
                io,
                h2: false,
                forward: false,
                settings: None,
                closed: Box::pin(token.cancelled_owned()),
            }));
        }
        let Route { proxy, https, host, port } = self.route(&uri)?;
        // Taken before connecting: a rotation during the handshake must
        // close this connection too.
        let token = self.tracker.token();
        // Current as of this connection: rotated files are read first.
        let tls = self.tls.for_new_connection();
        let (io, forward): (Box<dyn Io>, bool) = match &proxy {
            None => (Box::new(self.tcp_to(&host, port).await?), false),
            Some(p) => {
                let tunnel = self.through_proxy(p, &host, port, https, &tls.proxy);
                let opened = tokio::time::timeout(CONNECT_TIMEOUT, tunnel).await;
                let io = opened.map_err(|_| format!("proxy {p:?}: no answer within {CONNECT_TIMEOUT:?}"))??;
                // Plain http servers behind an HTTP proxy get absolute-form
                // requests on the proxy connection, as Go's transport does.
                (io, !https && p.scheme != ProxyScheme::Socks5)
            }
        };
        let (io, h2): (Box<dyn Io>, bool) = if https {
            let name = match &self.server_name {
                Some(n) => n.clone(),
                None => ServerName::try_from(host.clone()).map_err(|e| format!("server name {host:?}: {e}"))?,
            };
            let config = match self.offer {
                Offer::Pooled => Arc::clone(&tls.pooled),
                #[cfg(feature = "ws")]
                Offer::Http1 => Arc::clone(&tls.http1),
            };
            let tls = self.tls_handshake(io, name, config).await?;
            let h2 = tls.get_ref().1.alpn_protocol() == Some(b"h2");
            (Box::new(tls), h2)
        } else {
            (io, false)
        };
        let settings = match &self.pool {
            Some(pool) if h2 => {
                let pool = Arc::clone(pool);
                Some(SettingsSniffer::new(move |limit| pool.stream_limit(limit)))
            }
            Some(pool) => {
                // hyper would speak HTTP/2 on this connection all the same:
                // refuse it, and the request goes again over HTTP/1.1.
                let refuse = pool.http2_only();
                pool.http1();
                if refuse {
                    return Err(Box::new(NoHttp2));
                }
                None
            }
            None => None,
        };
        Ok(TokioIo::new(Conn { io, h2, forward, settings, closed: Box::pin(token.cancelled_owned()) }))
    }

    async fn tls_handshake(
        &self,
        io: Box<dyn Io>,
        name: ServerName<'static>,
        config: Arc<rustls::ClientConfig>,
    ) -> Result<tokio_rustls::client::TlsStream<Box<dyn Io>>, BoxError> {
        let connecting = tokio_rustls::TlsConnector::from(config).connect(name, io);
        match tokio::time::timeout(self.handshake_timeout, connecting).await {
            Ok(tls) => Ok(tls?),
            Err(_) => Err(format!("TLS handshake timed out after {:?}", self.handshake_timeout).into()),
        }
    }

    async fn tcp_to(&self, host: &str, port: u16) -> Result<tokio::net::TcpStream, BoxError> {
        let host = if host.contains(':') { format!("[{host}]") } else { host.to_owned() };
        let uri: Uri = format!("http://{host}:{port}").parse()?;
        let mut tcp = self.tcp.clone();
        let io = tower_service::Service::call(&mut tcp, uri).await?;
        Ok(io.into_inner())
    }

    async fn through_proxy(
        &self,
        p: &ProxyUrl,
        host: &str,
        port: u16,
        https: bool,
        proxy_tls: &Arc<rustls::ClientConfig>,
    ) -> Result<Box<dyn Io>, BoxError> {
        let tcp = self.tcp_to(&p.host, p.port).await?;
        match p.scheme {
            ProxyScheme::Socks5 => socks5_tunnel(tcp, p, host, port).await,
            ProxyScheme::Http | ProxyScheme::Https => {
                let mut io: Box<dyn Io> = Box::new(tcp);
                if p.scheme == ProxyScheme::Https {
                    // The proxy is verified with the same trust as the
                    // server; h2 is not offered to it.
                    let name =
                        ServerName::try_from(p.host.clone()).map_err(|e| format!("proxy name {:?}: {e}", p.host))?;
                    io = Box::new(self.tls_handshake(io, name, Arc::clone(proxy_tls)).await?);
                }
                if https {
                    connect_tunnel(&mut io, p, host, port).await?;
                }
                Ok(io)
            }
        }
    }
}

/// The SOCKS5 handshake through `tcp`, to `host:port`.
#[cfg(feature = "socks5")]
async fn socks5_tunnel(
    tcp: tokio::net::TcpStream,
    p: &ProxyUrl,
    host: &str,
    port: u16,
) -> Result<Box<dyn Io>, BoxError> {
    let target = (host, port);
    let stream = match &p.credentials {
        Some((user, pass)) => {
            tokio_socks::tcp::Socks5Stream::connect_with_password_and_socket(tcp, target, user, pass.expose()).await?
        }
        None => tokio_socks::tcp::Socks5Stream::connect_with_socket(tcp, target).await?,
    };
    Ok(Box::new(stream.into_inner()))
}

/// Without the `socks5` feature a SOCKS5 proxy is a clear error, not a
/// connection made around it.
#[cfg(not(feature = "socks5"))]
#[expect(clippy::unused_async, reason = "the same signature as the tunnel it stands in for")]
async fn socks5_tunnel(
    _tcp: tokio::net::TcpStream,
    p: &ProxyUrl,
    _host: &str,
    _port: u16,
) -> Result<Box<dyn Io>, BoxError> {
    Err(format!("proxy {p:?}: SOCKS5 proxies need k8s-client-runtime's `socks5` feature").into())
}

/// The `CONNECT host:port` handshake; on success `io` is a tunnel.
async fn connect_tunnel(io: &mut Box<dyn Io>, p: &ProxyUrl, host: &str, port: u16) -> Result<(), BoxError> {
    let authority = if host.contains(':') { format!("[{host}]:{port}") } else { format!("{host}:{port}") };
    let mut req = format!("CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n");
    if let Some(auth) = p.authorization().as_ref().and_then(|v| v.to_str().ok()) {
        req.push_str(&format!("Proxy-Authorization: {auth}\r\n"));
    }
    req.push_str("\r\n");
    io.write_all(req.as_bytes()).await?;
    io.flush().await?;
    // Read byte by byte up to the end of the header block so nothing of
    // the tunnel (the server's TLS) is consumed here.
    let mut head = Vec::with_capacity(128);
    while !head.ends_with(b"\r\n\r\n") {
        if head.len() > 8192 {
            return Err(format!("proxy {p:?}: CONNECT response header too long").into());
        }
        let b = io.read_u8().await.map_err(|e| format!("proxy {p:?}: reading CONNECT response: {e}"))?;
        head.push(b);
    }
    let status_line = String::from_utf8_lossy(&head[..head.iter().position(|b| *b == b'\r').unwrap_or(0)]).into_owned();
    let code = status_line.split_whitespace().nth(1).unwrap_or_default();
    if !code.starts_with('2') || code.len() != 3 {
        return Err(format!("proxy {p:?}: CONNECT {authority}: {status_line}").into());
    }
    Ok(())
}

impl tower_service::Service<Uri> for Connector {
    type Response = TokioIo<Conn>;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        Box::pin(self.clone().connect(uri))
    }
}

/// One connection: its layers, what was negotiated, and the signal that
/// closes it.
pub(super) struct Conn {
    io: Box<dyn Io>,
    h2: bool,
    forward: bool,
    /// Reads the server's first SETTINGS frame as it passes (HTTP/2 in a
    /// pool lane only); dropped once it has.
    settings: Option<SettingsSniffer>,
    closed: Pin<Box<WaitForCancellationFutureOwned>>,
}

impl Conn {
    /// Requests on this connection go to an HTTP proxy in absolute form.
    #[cfg(feature = "ws")]
    pub(super) fn is_forward_proxy(&self) -> bool {
        self.forward
    }

    /// An error once the tracker closed this connection. Polling registers
    /// the waker, so an idle pooled connection is woken and dropped.
    fn check_closed(&mut self, cx: &mut Context<'_>) -> io::Result<()> {
        match self.closed.as_mut().poll(cx) {
            Poll::Ready(()) => Err(io::Error::new(
                io::ErrorKind::ConnectionAborted,
                "connection closed because the client certificate changed",
            )),
            Poll::Pending => Ok(()),
        }
    }
}

impl Connection for Conn {
    fn connected(&self) -> Connected {
        let c = Connected::new().proxy(self.forward);
        if self.h2 { c.negotiated_h2() } else { c }
    }
}

impl AsyncRead for Conn {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        if let Err(e) = self.check_closed(cx) {
            return Poll::Ready(Err(e));
        }
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.io).poll_read(cx, buf);
        if let Some(sniffer) = &mut self.settings
            && sniffer.feed(&buf.filled()[before..])
        {
            self.settings = None;
        }
        polled
    }
}

impl AsyncWrite for Conn {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        if let Err(e) = self.check_closed(cx) {
            return Poll::Ready(Err(e));
        }
        Pin::new(&mut self.io).poll_write(cx, buf)
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        if let Err(e) = self.check_closed(cx) {
            return Poll::Ready(Err(e));
        }
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }
    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }
}
