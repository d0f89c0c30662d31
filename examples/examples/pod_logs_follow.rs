//! Follows the log of a pod's container, like `kubectl logs -f`:
//!
//! ```text
//! pod_logs_follow NAMESPACE POD [-c CONTAINER]
//! ```
//!
//! Prints each line as it is written and exits when the container stops.
//! Uses `KUBECONFIG` (or `~/.kube/config`).

use std::io::Write as _;

use clap::Parser;
use futures_util::StreamExt as _;
use k8s_client::clientset::Clientset;
use k8s_client_runtime::Report;
use k8s_client_runtime::rest::logs::LogOptions;

/// Follows a pod's log.
#[derive(Parser)]
struct Args {
    /// The pod's namespace.
    namespace: String,
    /// The pod.
    pod: String,
    /// The container (default: the pod's only container).
    #[arg(short = 'c', long)]
    container: Option<String>,
}

#[tokio::main]
async fn main() -> Result<(), Report> {
    let args = Args::parse();
    let pods = Clientset::try_default()?.core_v1().pods(&args.namespace);
    let options = LogOptions { follow: Some(true), container: args.container, ..LogOptions::default() };
    let mut lines = pods.log_lines(&args.pod, &options).await?;
    let mut stdout = std::io::stdout().lock();
    while let Some(line) = lines.next().await {
        let line = line?;
        stdout.write_all(&line).and_then(|()| stdout.write_all(b"\n")).and_then(|()| stdout.flush()).ok();
    }
    Ok(())
}
