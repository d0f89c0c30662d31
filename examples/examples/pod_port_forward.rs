//! Forwards local ports to a pod, like `kubectl port-forward`:
//!
//! ```text
//! pod_port_forward NAMESPACE POD LOCAL_PORT:REMOTE_PORT...
//! ```
//!
//! `PORT` alone forwards the same port number, `:REMOTE_PORT` a free local
//! one. Prints `Forwarding from 127.0.0.1:LOCAL -> REMOTE` per port and
//! forwards every connection (each over a WebSocket of its own) until
//! Ctrl-C. Uses `KUBECONFIG` (or `~/.kube/config`).

use std::net::{Ipv4Addr, SocketAddr};

use clap::Parser;
use k8s_client::clientset::Clientset;
use k8s_client_runtime::Report;
use k8s_client_runtime::rest::portforward::PortListener;

/// Forwards local ports to a pod.
#[derive(Parser)]
pub struct Args {
    /// The pod's namespace.
    namespace: String,
    /// The pod.
    pod: String,
    /// `LOCAL_PORT:REMOTE_PORT`, `PORT` or `:REMOTE_PORT`.
    #[arg(required = true, value_parser = parse_ports)]
    ports: Vec<(u16, u16)>,
}

fn parse_ports(spec: &str) -> Result<(u16, u16), String> {
    let port = |s: &str| s.parse::<u16>().map_err(|e| format!("{s:?} in {spec:?}: {e}"));
    match spec.split_once(':') {
        Some(("", remote)) => Ok((0, port(remote)?)),
        Some((local, remote)) => Ok((port(local)?, port(remote)?)),
        None => Ok((port(spec)?, port(spec)?)),
    }
}

/// Starts forwarding the ports `args` name, printing each; forwarding
/// stops when the listeners are dropped.
pub async fn forward(clientset: Clientset, args: Args) -> Result<Vec<PortListener>, Report> {
    let pods = clientset.core_v1().pods(&args.namespace);
    let mut listeners = Vec::new();
    for (local, remote) in args.ports {
        let address = SocketAddr::from((Ipv4Addr::LOCALHOST, local));
        let listener = pods.port_forward_listener(&args.pod, address, remote).await?;
        println!("Forwarding from {} -> {remote}", listener.local_addr());
        listeners.push(listener);
    }
    Ok(listeners)
}

#[tokio::main]
async fn main() -> Result<(), Report> {
    tracing_subscriber::fmt().with_writer(std::io::stderr).init();
    let _listeners = forward(Clientset::try_default()?, Args::parse()).await?;
    tokio::signal::ctrl_c().await?;
    Ok(())
}
