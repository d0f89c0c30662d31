//! Running commands in containers (`pods/exec`) and attaching to their
//! running process (`pods/attach`), as client-go's `tools/remotecommand`.
//!
//! * [`ResourceClient::exec`] starts a command; [`ResourceClient::attach`]
//!   connects to the container's main process. Both give an
//!   [`AttachedProcess`]: its stdin, stdout and stderr as byte pipes, a
//!   [`TerminalResizer`] when a TTY was asked for, and
//!   [`AttachedProcess::join`] for the [`ExitStatus`].
//! * For a one-shot command whose output fits in memory, read stdout to
//!   the end and join; for an interactive session, copy the pipes
//!   concurrently (`tokio::io::copy`) and join when they end.
//!
//! The methods exist for kinds that implement [`HasExec`] and
//! [`HasAttach`] (the generator gives them to `Pod`, from the spec's
//! connect operations) and for [`DynamicObject`](crate::dynamic::DynamicObject).
//!
//! # Protocol
//! One WebSocket per process, over its own HTTP/1.1 connection
//! ([`Error::Upgrade`] when it cannot be opened; a refusal such as 403 is
//! [`Error::Api`]). The client offers `v5.channel.k8s.io`, then
//! `v4.channel.k8s.io`: with `v5` (apiserver 1.30 and up) ending stdin
//! (dropping or shutting down the writer) closes the process's stdin;
//! with `v4` it cannot, so a command reading stdin to its end never
//! finishes. The exit status comes from the Status on the error channel.
//!
//! # Flow control
//! Each pipe buffers at most [`AttachParams::buffer`] bytes; one task per
//! process moves bytes between the pipes and the socket. A full stdout or
//! stderr pipe stops that task, so read every output you asked for (or
//! drop its reader, which discards the rest) while writing stdin.

mod protocol;
pub(crate) mod session;

use std::fmt;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, DuplexStream, ReadBuf};
use tokio::sync::mpsc;

pub use protocol::{Protocol, TerminalSize, V4_PROTOCOL, V5_PROTOCOL};

use super::error::{Error, Status};
use super::resource::{ClientObject, ResourceClient};
use super::upgrade::StreamTask;

/// Kinds with an `exec` subresource (pods).
pub trait HasExec: ClientObject {}

/// Kinds with an `attach` subresource (pods).
pub trait HasAttach: ClientObject {}

/// The process's standard input: write to it, drop it (or shut it down)
/// to close stdin.
#[derive(Debug)]
pub struct ProcessInput(DuplexStream);

/// The process's standard output or error: read it to its end, or drop
/// it to discard the rest.
#[derive(Debug)]
pub struct ProcessOutput(DuplexStream);

impl AsyncWrite for ProcessInput {
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

impl AsyncRead for ProcessOutput {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

/// Which streams to connect, and how (client-go's `PodExecOptions` and
/// `StreamOptions`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttachParams {
    /// The container; `None` for a pod's only (or default) container.
    pub container: Option<String>,
    /// Connect stdin. Off by default.
    pub stdin: bool,
    /// Connect stdout. On by default.
    pub stdout: bool,
    /// Connect stderr. On by default; ignored with a TTY, where stderr is
    /// part of the terminal's output.
    pub stderr: bool,
    /// Allocate a terminal (stdin in raw mode is the caller's business).
    pub tty: bool,
    /// The most bytes each pipe holds before its writer waits.
    pub buffer: usize,
}

impl Default for AttachParams {
    fn default() -> Self {
        AttachParams { container: None, stdin: false, stdout: true, stderr: true, tty: false, buffer: 64 * 1024 }
    }
}

impl AttachParams {
    /// Names the container.
    pub fn container(mut self, container: impl Into<String>) -> Self {
        self.container = Some(container.into());
        self
    }
    /// Connects stdin or not.
    pub fn stdin(mut self, on: bool) -> Self {
        self.stdin = on;
        self
    }
    /// Connects stdout or not.
    pub fn stdout(mut self, on: bool) -> Self {
        self.stdout = on;
        self
    }
    /// Connects stderr or not.
    pub fn stderr(mut self, on: bool) -> Self {
        self.stderr = on;
        self
    }
    /// Allocates a terminal or not.
    pub fn tty(mut self, on: bool) -> Self {
        self.tty = on;
        self
    }

    /// The streams actually connected: stderr is not separate on a TTY.
    fn effective_stderr(&self) -> bool {
        self.stderr && !self.tty
    }

    fn query(&self, command: &[String]) -> Result<Vec<(String, String)>, Error> {
        if !self.stdin && !self.stdout && !self.effective_stderr() {
            return Err(Error::InvalidRequest {
                what: "exec/attach streams".into(),
                message: "at least one of stdin, stdout and stderr must be connected".into(),
            });
        }
        let mut query: Vec<(String, String)> = command.iter().map(|c| ("command".to_owned(), c.clone())).collect();
        if let Some(container) = &self.container {
            query.push(("container".into(), container.clone()));
        }
        for (key, on) in
            [("stdin", self.stdin), ("stdout", self.stdout), ("stderr", self.effective_stderr()), ("tty", self.tty)]
        {
            query.push((key.into(), on.to_string()));
        }
        Ok(query)
    }
}

/// How a process ended.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ExitStatus {
    /// Exit code 0.
    Success,
    /// Another exit code.
    Code(i32),
    /// The container runtime failed the command for another reason (no
    /// such executable, container gone), as this Status says.
    Failure(Box<Status>),
}

impl ExitStatus {
    /// Whether the process exited with code 0.
    pub fn success(&self) -> bool {
        matches!(self, ExitStatus::Success)
    }
    /// The exit code, when the process exited (0 for success).
    pub fn code(&self) -> Option<i32> {
        match self {
            ExitStatus::Success => Some(0),
            ExitStatus::Code(c) => Some(*c),
            ExitStatus::Failure(_) => None,
        }
    }
}

impl fmt::Display for ExitStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExitStatus::Success => f.write_str("exit code 0"),
            ExitStatus::Code(c) => write!(f, "exit code {c}"),
            ExitStatus::Failure(s) => write!(f, "failed: {}", s.message),
        }
    }
}

/// Sends terminal size changes to a process started with a TTY.
#[derive(Debug, Clone)]
pub struct TerminalResizer {
    sender: mpsc::Sender<TerminalSize>,
}

impl TerminalResizer {
    /// Tells the process's terminal its new size. Fails once the process
    /// has ended.
    ///
    /// # Cancel safety
    /// Dropping the future before it completes sends nothing.
    pub async fn resize(&self, size: TerminalSize) -> Result<(), Error> {
        self.sender.send(size).await.map_err(|_| Error::Stream {
            what: "terminal resize".into(),
            message: "the process's stream has ended".into(),
        })
    }
}

/// A process in a container, connected over a WebSocket.
///
/// Dropping it (or [`abort`](Self::abort)) closes the connection at once,
/// which ends the remote stream; the pipes taken from it then end too.
#[must_use = "dropping the process closes its stream"]
pub struct AttachedProcess {
    stdin: Option<ProcessInput>,
    stdout: Option<ProcessOutput>,
    stderr: Option<ProcessOutput>,
    resizer: Option<TerminalResizer>,
    protocol: Protocol,
    task: StreamTask<ExitStatus>,
}

impl fmt::Debug for AttachedProcess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AttachedProcess").field("protocol", &self.protocol).finish_non_exhaustive()
    }
}

impl AttachedProcess {
    /// Takes the process's stdin (once; `None` when not connected).
    pub fn stdin(&mut self) -> Option<ProcessInput> {
        self.stdin.take()
    }
    /// Takes the process's stdout (once; `None` when not connected).
    pub fn stdout(&mut self) -> Option<ProcessOutput> {
        self.stdout.take()
    }
    /// Takes the process's stderr (once; `None` when not connected or on
    /// a TTY).
    pub fn stderr(&mut self) -> Option<ProcessOutput> {
        self.stderr.take()
    }
    /// Takes the terminal resizer (once; `None` without a TTY).
    pub fn terminal_resizer(&mut self) -> Option<TerminalResizer> {
        self.resizer.take()
    }
    /// The channel protocol the server chose.
    pub fn protocol(&self) -> Protocol {
        self.protocol
    }

    /// Waits for the process to end and returns how it ended. Outputs not
    /// taken are discarded meanwhile.
    ///
    /// # Cancel safety
    /// Dropping the future closes the stream, as dropping the process.
    pub async fn join(mut self) -> Result<ExitStatus, Error> {
        // Untaken pipes would fill up and stall the stream.
        self.stdout = None;
        self.stderr = None;
        self.stdin = None;
        self.task.join().await
    }

    /// Closes the stream now; the remote end sees the connection close.
    pub fn abort(&self) {
        self.task.abort();
    }
}

impl<K: HasExec> ResourceClient<K> {
    /// Runs `command` (the executable and its arguments, no shell) in the
    /// pod `name`.
    ///
    /// # Cancel safety
    /// Dropping the future before it completes opens no stream.
    pub async fn exec<I, S>(&self, name: &str, command: I, params: &AttachParams) -> Result<AttachedProcess, Error>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let command: Vec<String> = command.into_iter().map(Into::into).collect();
        if command.is_empty() {
            return Err(Error::InvalidRequest { what: "exec command".into(), message: "must not be empty".into() });
        }
        let request = self.target.item(http::Method::GET, name, "exec", None)?.params(params.query(&command)?);
        let what = format!("exec in {}", self.describe(name));
        session::start(request, params, what).await
    }
}

impl<K: HasAttach> ResourceClient<K> {
    /// Attaches to the running process of the pod `name` (its container's
    /// main process; give it stdin and a TTY in the pod spec to type
    /// into it).
    ///
    /// # Cancel safety
    /// Dropping the future before it completes opens no stream.
    pub async fn attach(&self, name: &str, params: &AttachParams) -> Result<AttachedProcess, Error> {
        let request = self.target.item(http::Method::GET, name, "attach", None)?.params(params.query(&[])?);
        let what = format!("attach to {}", self.describe(name));
        session::start(request, params, what).await
    }
}

impl<K: ClientObject> ResourceClient<K> {
    /// `pods default/web`, to name a stream in errors.
    pub(super) fn describe(&self, name: &str) -> String {
        match &self.target.namespace {
            Some(ns) => format!("{} {ns}/{name}", self.target.resource.plural),
            None => format!("{} {name}", self.target.resource.plural),
        }
    }
}
