//! Forwarding connections to a pod's ports (`pods/portforward`), as
//! client-go's `tools/portforward` and `kubectl port-forward`.
//!
//! * [`ResourceClient::port_forward`] opens one connection to each of the
//!   given ports of a pod, as in-process byte streams ([`PortStream`]:
//!   `AsyncRead + AsyncWrite`) — for a client in the same program.
//! * [`ResourceClient::port_forward_listener`] listens on a local address
//!   and forwards every accepted TCP connection to one port of the pod,
//!   each over a connection of its own — what `kubectl port-forward` does.
//!
//! The methods exist for kinds that implement [`HasPortForward`] (the
//! generator gives it to `Pod`, from the spec's connect operations) and
//! for [`DynamicObject`](crate::dynamic::DynamicObject).
//!
//! # Protocol
//! The kubelet's WebSocket port-forward protocol, which the apiserver
//! passes through to the kubelet unchanged: the subprotocol
//! `v4.channel.k8s.io`, the ports in the query (`?ports=80&ports=8080`),
//! and two channels per port in that order: data (`2i`, both ways) and
//! error (`2i + 1`, server to client). The server starts each channel
//! with the port number (two bytes, little endian); then data flows as
//! written and an error channel carries the text of what went wrong
//! connecting to that port.
//!
//! The alternative, SPDY tunneled through a WebSocket
//! (`SPDY/3.1+portforward.k8s.io`, which the apiserver translates back to
//! SPDY for the kubelet), needs an SPDY implementation on the client; the
//! channel protocol needs none and reaches the same kubelet code.
//!
//! The protocol carries one connection per port per WebSocket and cannot
//! half-close: when the local side of a [`PortStream`] ends (it is
//! dropped or shut down), that connection ends, and once every port's
//! has, the WebSocket closes, which closes the connections in the pod.

mod listener;
mod session;

use std::fmt;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, DuplexStream, ReadBuf};
use tokio::sync::oneshot;

pub use listener::PortListener;

use super::error::Error;
use super::resource::{ClientObject, ResourceClient};
use super::upgrade::StreamTask;

/// The subprotocol of the kubelet's WebSocket port forwarding.
pub const PORT_FORWARD_PROTOCOL: &str = "v4.channel.k8s.io";

/// How many bytes each [`PortStream`] buffers in either direction before
/// the writer waits.
const STREAM_BUFFER: usize = 64 * 1024;

/// Kinds with a `portforward` subresource (pods).
pub trait HasPortForward: ClientObject {}

/// One forwarded connection to a port of the pod: write to send to it,
/// read what it answers. Dropping or shutting it down ends the connection.
#[derive(Debug)]
pub struct PortStream(DuplexStream);

impl AsyncRead for PortStream {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

impl AsyncWrite for PortStream {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, buf)
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }
}

/// The connections of one port-forward WebSocket, one per port.
///
/// Dropping it (or [`abort`](Self::abort)) closes the WebSocket at once;
/// the streams taken from it then end.
#[must_use = "dropping the forwarder closes its connections"]
pub struct PortForwarder {
    ports: Vec<u16>,
    streams: Vec<Option<PortStream>>,
    errors: Vec<Option<oneshot::Receiver<String>>>,
    task: StreamTask<()>,
}

impl fmt::Debug for PortForwarder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PortForwarder").field("ports", &self.ports).finish_non_exhaustive()
    }
}

impl PortForwarder {
    /// The ports forwarded, in the order asked for.
    pub fn ports(&self) -> &[u16] {
        &self.ports
    }

    /// Takes the connection to `port` (once; `None` for a port not asked
    /// for).
    pub fn take_stream(&mut self, port: u16) -> Option<PortStream> {
        let i = self.ports.iter().position(|p| *p == port)?;
        self.streams[i].take()
    }

    /// Takes the error of the connection to `port` (once): resolves to
    /// the server's message when connecting to the port failed, to `None`
    /// when the connection ends without one.
    pub fn take_error(&mut self, port: u16) -> Option<impl Future<Output = Option<String>> + Send + use<>> {
        let i = self.ports.iter().position(|p| *p == port)?;
        let receiver = self.errors[i].take()?;
        Some(async move { receiver.await.ok() })
    }

    /// Waits until every connection has ended. An error names the ports
    /// whose connection failed and why (as [`take_error`](Self::take_error)
    /// tells them one by one), or says how the WebSocket broke.
    ///
    /// # Cancel safety
    /// Dropping the future closes the connections, as dropping the
    /// forwarder.
    pub async fn join(mut self) -> Result<(), Error> {
        self.task.join().await
    }

    /// Closes the WebSocket now.
    pub fn abort(&self) {
        self.task.abort();
    }
}

impl<K: HasPortForward> ResourceClient<K> {
    /// Opens one connection to each of `ports` of the pod `name`, all over
    /// one WebSocket; a port may appear once.
    ///
    /// # Cancel safety
    /// Dropping the future before it completes opens no connection.
    pub async fn port_forward(&self, name: &str, ports: &[u16]) -> Result<PortForwarder, Error> {
        let what = format!("port-forward to {}", self.describe(name));
        check_ports(ports, &what)?;
        let query = ports.iter().map(|p| ("ports".to_owned(), p.to_string()));
        let request = self.target.item(http::Method::GET, name, "portforward", None)?.params(query).no_timeout();
        let upgraded = request.websocket(&[PORT_FORWARD_PROTOCOL]).await?;
        if upgraded.protocol != PORT_FORWARD_PROTOCOL {
            return Err(Error::Stream {
                what,
                message: format!("the server chose subprotocol {:?}, not {PORT_FORWARD_PROTOCOL}", upgraded.protocol),
            });
        }
        Ok(session::spawn(upgraded.socket, ports, what))
    }

    /// Listens on `local` (port 0: any free port) and forwards every
    /// connection accepted there to `port` of the pod `name`, each over a
    /// WebSocket of its own, until the listener is dropped.
    pub async fn port_forward_listener(
        &self,
        name: &str,
        local: std::net::SocketAddr,
        port: u16,
    ) -> Result<PortListener, Error> {
        check_ports(&[port], "port-forward")?;
        listener::listen(self.clone(), name.to_owned(), local, port).await
    }
}

fn check_ports(ports: &[u16], what: &str) -> Result<(), Error> {
    let invalid = |message: String| Err(Error::InvalidRequest { what: format!("{what}: ports"), message });
    if ports.is_empty() {
        return invalid("at least one port is needed".into());
    }
    if ports.contains(&0) {
        return invalid("port 0 cannot be forwarded".into());
    }
    for (i, p) in ports.iter().enumerate() {
        if ports[..i].contains(p) {
            return invalid(format!("port {p} is listed twice"));
        }
    }
    // Channels are numbered in one byte, two per port.
    if ports.len() > 127 {
        return invalid(format!("{} ports in one WebSocket; at most 127", ports.len()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_are_checked_before_connecting() {
        assert!(check_ports(&[], "x").is_err());
        assert!(check_ports(&[0], "x").is_err());
        assert!(check_ports(&[80, 80], "x").unwrap_err().to_string().contains("listed twice"));
        assert!(check_ports(&(1..=128).collect::<Vec<u16>>(), "x").is_err());
        assert!(check_ports(&[80, 8080], "x").is_ok());
    }
}
