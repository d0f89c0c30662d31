//! A TCP proxy on loopback between a client and the apiserver that severs
//! connections on request: every open one at once ([`Proxy::sever`]), or
//! planned cuts ([`Proxy::arm`]), each of the first connection accepted
//! after the previous cut once it has carried a number of bytes to the
//! client, to cut a stream at a chosen point again and again.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use k8s_client_runtime::rest::Client;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

/// How the proxy ends the connections it severs.
#[derive(Debug, Clone, Copy)]
pub enum Cut {
    /// RST to the client (zero linger), as a crashed peer or a middlebox.
    Reset,
    /// A plain close (FIN) in the middle of whatever was being sent.
    Close,
}

/// Planned cuts, the first one due on the first connection accepted at
/// or after `from` that carries its number of bytes to the client.
#[derive(Debug, Default)]
struct Armed {
    from: usize,
    cuts: VecDeque<(usize, Cut)>,
}

/// Forwards loopback TCP connections to the apiserver.
pub struct Proxy {
    pub addr: std::net::SocketAddr,
    /// The token of the current generation of connections, and how the
    /// last cut ends them.
    generation: Arc<Mutex<(CancellationToken, Cut)>>,
    armed: Arc<Mutex<Armed>>,
    /// Cuts made by `arm`.
    self_cuts: Arc<AtomicUsize>,
    /// Connections severed by `sever`.
    severed: Arc<AtomicUsize>,
    accepted: Arc<AtomicUsize>,
    stop: CancellationToken,
}

impl Proxy {
    pub async fn start(upstream: std::net::SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let proxy = Proxy {
            addr,
            generation: Arc::new(Mutex::new((CancellationToken::new(), Cut::Close))),
            armed: Arc::default(),
            self_cuts: Arc::default(),
            severed: Arc::default(),
            accepted: Arc::default(),
            stop: CancellationToken::new(),
        };
        let (generation, armed, self_cuts, severed, accepted, stop) = (
            proxy.generation.clone(),
            proxy.armed.clone(),
            proxy.self_cuts.clone(),
            proxy.severed.clone(),
            proxy.accepted.clone(),
            proxy.stop.clone(),
        );
        tokio::spawn(async move {
            loop {
                let (mut client, _) = tokio::select! {
                    () = stop.cancelled() => return,
                    r = listener.accept() => r.unwrap(),
                };
                let id = accepted.fetch_add(1, Ordering::SeqCst);
                let cut = generation.lock().unwrap().0.clone();
                let (generation, armed, self_cuts, severed, accepted) =
                    (generation.clone(), armed.clone(), self_cuts.clone(), severed.clone(), accepted.clone());
                tokio::spawn(async move {
                    let Ok(server) = TcpStream::connect(upstream).await else { return };
                    let _ = client.set_nodelay(true);
                    let _ = server.set_nodelay(true);
                    let self_cut = CancellationToken::new();
                    let mut server = Counted {
                        inner: server,
                        id,
                        read: 0,
                        armed,
                        accepted: accepted.clone(),
                        cut: self_cut.clone(),
                        how: None,
                    };
                    let how = tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut client, &mut server) => return,
                        () = cut.cancelled() => {
                            severed.fetch_add(1, Ordering::SeqCst);
                            generation.lock().unwrap().1
                        }
                        () = self_cut.cancelled() => {
                            self_cuts.fetch_add(1, Ordering::SeqCst);
                            server.how.unwrap_or(Cut::Close)
                        }
                    };
                    if let Cut::Reset = how {
                        let _ = client.set_zero_linger();
                        let _ = server.inner.set_zero_linger();
                    }
                    // Dropping both sockets here, with bytes possibly
                    // half-way through an event, is the cut.
                });
            }
        });
        proxy
    }

    /// Severs every connection open now; later ones go through.
    pub fn sever(&self, how: Cut) {
        let old = {
            let mut g = self.generation.lock().unwrap();
            g.1 = how;
            std::mem::take(&mut g.0)
        };
        old.cancel();
    }

    /// Plans `cuts`, in order: the first connection accepted from now on
    /// is cut once it has carried the first cut's bytes to the client, the
    /// first accepted after that cut once it has carried the second's, and
    /// so on. Connections open already, and any accepted before the
    /// previous cut, are left alone, whatever they carried. Replaces the
    /// cuts planned before.
    pub fn arm(&self, cuts: &[(usize, Cut)]) {
        let from = self.accepted.load(Ordering::SeqCst);
        *self.armed.lock().unwrap() = Armed { from, cuts: cuts.iter().copied().collect() };
    }

    /// Cuts made by [`arm`](Self::arm).
    pub fn self_cuts(&self) -> usize {
        self.self_cuts.load(Ordering::SeqCst)
    }

    /// Connections accepted.
    pub fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }

    /// What the proxy has done, for failure messages.
    pub fn counts(&self) -> String {
        format!(
            "proxy: {} connections accepted, {} cut when armed, {} severed, armed: {:?}",
            self.accepted(),
            self.self_cuts(),
            self.severed.load(Ordering::SeqCst),
            *self.armed.lock().unwrap()
        )
    }

    /// An admin client (default rate limit: `qps`, `burst`) whose
    /// connections go through this proxy.
    pub fn client(&self, qps: f32, burst: u32) -> Client {
        let mut config = super::config_for(super::env(), None);
        config.cluster_url = format!("https://{}", self.addr).parse().unwrap();
        config.qps = qps;
        config.burst = burst;
        // Cuts are placed at byte counts of what the apiserver sends, sized
        // for its objects as they are: compressed, the same list would be a
        // fraction of those bytes and no cut would land inside it.
        config.disable_compression = true;
        Client::new(config).unwrap()
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// The apiserver's address, for a proxy to forward to.
pub fn apiserver_addr() -> std::net::SocketAddr {
    let url = super::env().server_url();
    let hostport = url.trim_start_matches("https://").trim_end_matches('/');
    std::net::ToSocketAddrs::to_socket_addrs(hostport).unwrap().next().unwrap()
}

/// The apiserver's side of a proxied connection: counts what it reads (the
/// bytes that go to the client) and fires `cut` once an armed cut meant for
/// it is due.
struct Counted {
    inner: TcpStream,
    /// The connection's number, in the order accepted.
    id: usize,
    read: usize,
    armed: Arc<Mutex<Armed>>,
    accepted: Arc<AtomicUsize>,
    cut: CancellationToken,
    /// How the armed cut that fired ends the connection.
    how: Option<Cut>,
}

impl AsyncRead for Counted {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        self.read += buf.filled().len() - before;
        let mut armed = self.armed.lock().unwrap();
        if let Some(&(bytes, how)) = armed.cuts.front()
            && self.id >= armed.from
            && self.read >= bytes
        {
            armed.cuts.pop_front();
            // The next cut is for a connection accepted from now on: the
            // client's next one, which it opens only after seeing this cut.
            armed.from = self.accepted.load(Ordering::SeqCst);
            drop(armed);
            self.how = Some(how);
            self.cut.cancel();
        }
        polled
    }
}

impl AsyncWrite for Counted {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
