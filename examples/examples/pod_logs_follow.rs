//! Follows the log of a pod's container, like `kubectl logs -f`:
//!
//! ```text
//! pod_logs_follow NAMESPACE POD [-c CONTAINER]
//! ```
//!
//! Prints each line as it is written and exits when the container stops.
//! Uses `KUBECONFIG` (or `~/.kube/config`).

use std::io::Write;

use clap::Parser;
use futures_util::StreamExt as _;
use k8s_client::clientset::Clientset;
use k8s_client_runtime::Report;
use k8s_client_runtime::rest::logs::LogOptions;

/// Follows a pod's log.
#[derive(Parser)]
pub struct Args {
    /// The pod's namespace.
    namespace: String,
    /// The pod.
    pod: String,
    /// The container (default: the pod's only container).
    #[arg(short = 'c', long)]
    container: Option<String>,
}

/// Writes the log's lines to `out` as they come, until the container stops.
pub async fn follow(clientset: Clientset, args: Args, mut out: impl Write) -> Result<(), Report> {
    let pods = clientset.core_v1().pods(&args.namespace);
    let options = LogOptions { follow: Some(true), container: args.container, ..LogOptions::default() };
    let mut lines = pods.log_stream(&args.pod, &options).await?;
    while let Some(line) = lines.next().await {
        let line = line?;
        out.write_all(&line)?;
        out.write_all(b"\n")?;
        out.flush()?;
    }
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Report> {
    follow(Clientset::try_default()?, Args::parse(), std::io::stdout().lock()).await
}
