//! Runs a command in a pod, like `kubectl exec`:
//!
//! ```text
//! pod_exec NAMESPACE POD [-c CONTAINER] [-i] [-t] -- COMMAND [ARG...]
//! ```
//!
//! Prints the command's stdout and stderr to its own and exits with the
//! command's exit code. `-i` forwards this program's stdin; `-t` asks for a
//! terminal, puts this one in raw mode and forwards its size as it changes.
//! Uses `KUBECONFIG` (or `~/.kube/config`).

use clap::Parser;
use k8s_client::clientset::Clientset;
use k8s_client_runtime::Report;
use k8s_client_runtime::rest::remotecommand::{AttachParams, ExitStatus, TerminalResizer, TerminalSize};

/// Runs a command in a container of a pod.
#[derive(Parser)]
pub struct Args {
    /// The pod's namespace.
    namespace: String,
    /// The pod.
    pod: String,
    /// The container (default: the pod's only or default container).
    #[arg(short = 'c', long)]
    container: Option<String>,
    /// Forward stdin to the command.
    #[arg(short = 'i', long)]
    stdin: bool,
    /// Allocate a terminal.
    #[arg(short = 't', long)]
    tty: bool,
    /// The command and its arguments, after `--`.
    #[arg(last = true, required = true)]
    command: Vec<String>,
}

/// Restores the terminal when dropped.
struct RawMode;

impl RawMode {
    fn enable() -> std::io::Result<RawMode> {
        crossterm::terminal::enable_raw_mode()?;
        Ok(RawMode)
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        let _ = crossterm::terminal::disable_raw_mode();
    }
}

fn terminal_size() -> Option<TerminalSize> {
    crossterm::terminal::size().ok().map(|(width, height)| TerminalSize { width, height })
}

/// Sends the terminal's size now and whenever it changes.
async fn forward_resizes(resizer: TerminalResizer) {
    let Ok(mut changes) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::window_change()) else {
        return;
    };
    loop {
        if let Some(size) = terminal_size()
            && resizer.resize(size).await.is_err()
        {
            return;
        }
        if changes.recv().await.is_none() {
            return;
        }
    }
}

/// Runs the command as `args` say; returns its exit code.
pub async fn run(clientset: Clientset, args: Args) -> Result<i32, Report> {
    let pods = clientset.core_v1().pods(&args.namespace);
    let mut params = AttachParams::default().stdin(args.stdin).tty(args.tty);
    params.container = args.container;
    let mut process = pods.exec(&args.pod, args.command, &params).await?;

    let raw_mode = if args.tty && args.stdin { Some(RawMode::enable()?) } else { None };
    if let Some(resizer) = process.terminal_resizer() {
        tokio::spawn(forward_resizes(resizer));
    }
    if let Some(mut stdin) = process.stdin() {
        tokio::spawn(async move {
            let _ = tokio::io::copy(&mut tokio::io::stdin(), &mut stdin).await;
            // The end of our stdin closes the command's.
        });
    }
    let stdout = process
        .stdout()
        .map(|mut out| tokio::spawn(async move { tokio::io::copy(&mut out, &mut tokio::io::stdout()).await }));
    let stderr = process
        .stderr()
        .map(|mut err| tokio::spawn(async move { tokio::io::copy(&mut err, &mut tokio::io::stderr()).await }));
    for copy in [stdout, stderr].into_iter().flatten() {
        copy.await??;
    }
    let status = process.join().await?;
    drop(raw_mode);
    Ok(match status {
        ExitStatus::Success => 0,
        ExitStatus::Code(code) => code,
        other => {
            eprintln!("command failed: {other}");
            1
        }
    })
}

#[tokio::main]
async fn main() {
    let args = Args::parse();
    let code = match async { run(Clientset::try_default()?, args).await }.await {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            1
        }
    };
    // Exits at once: a read of our stdin may still be blocked.
    std::process::exit(code);
}
