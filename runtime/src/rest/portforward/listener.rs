//! A local TCP listener whose connections are forwarded to a pod's port,
//! each over a WebSocket of its own (`kubectl port-forward`).

use std::net::SocketAddr;

use tokio::net::{TcpListener, TcpStream};
use tokio::task::{JoinHandle, JoinSet};

use super::HasPortForward;
use crate::ErrorChain;
use crate::rest::error::Error;
use crate::rest::resource::ResourceClient;

/// A local listener forwarding to a port of a pod. Dropping it stops
/// listening and closes every connection it forwards.
#[must_use = "dropping the listener stops forwarding"]
#[derive(Debug)]
pub struct PortListener {
    local_addr: SocketAddr,
    port: u16,
    task: JoinHandle<()>,
}

impl PortListener {
    /// The address listened on (with the port chosen when asked for 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The pod's port connections go to.
    pub fn remote_port(&self) -> u16 {
        self.port
    }
}

impl Drop for PortListener {
    fn drop(&mut self) {
        self.task.abort();
    }
}

pub(super) async fn listen<K: HasPortForward>(
    client: ResourceClient<K>,
    name: String,
    local: SocketAddr,
    port: u16,
) -> Result<PortListener, Error> {
    let bind_error =
        |e: std::io::Error| Error::Stream { what: format!("port-forward listener on {local}"), message: e.to_string() };
    let listener = TcpListener::bind(local).await.map_err(bind_error)?;
    let local_addr = listener.local_addr().map_err(bind_error)?;
    let task = tokio::spawn(accept_loop(listener, client, name, port));
    Ok(PortListener { local_addr, port, task })
}

/// Accepts until dropped; the connections live in the set, so they end
/// with it.
async fn accept_loop<K: HasPortForward>(listener: TcpListener, client: ResourceClient<K>, name: String, port: u16) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((tcp, peer)) => {
                    tracing::debug!(%peer, port, pod = %name, "forwarding a connection");
                    connections.spawn(forward(tcp, client.clone(), name.clone(), port));
                }
                Err(e) => {
                    // Out of file descriptors and the like: wait, go on.
                    tracing::warn!(error = %e, "port-forward listener: accept failed");
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                }
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}

/// One accepted connection, forwarded until either side ends.
async fn forward<K: HasPortForward>(mut tcp: TcpStream, client: ResourceClient<K>, name: String, port: u16) {
    let mut forwarder = match client.port_forward(&name, &[port]).await {
        Ok(f) => f,
        Err(e) => {
            tracing::warn!(error = %ErrorChain(&e), port, pod = %name, "port-forward: cannot open a connection");
            return;
        }
    };
    let Some(mut stream) = forwarder.take_stream(port) else { return };
    let copied = tokio::io::copy_bidirectional(&mut tcp, &mut stream).await;
    drop(stream);
    drop(tcp);
    if let Err(e) = forwarder.join().await {
        tracing::warn!(error = %ErrorChain(&e), port, pod = %name, "port-forward: connection failed");
    } else if let Err(e) = copied {
        tracing::debug!(error = %e, port, pod = %name, "port-forward: connection ended with an error");
    }
}
