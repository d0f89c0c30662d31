//! The task of one exec or attach stream: moves stdin, resizes and the
//! close of stdin to the socket, and the socket's stdout, stderr and final
//! Status to the process's pipes and exit status.

use futures_util::{SinkExt as _, StreamExt as _};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;

use super::protocol::{self, ERROR, Protocol, STDERR, STDIN, STDOUT};
use super::{AttachParams, AttachedProcess, ExitStatus, ProcessInput, ProcessOutput, TerminalResizer, TerminalSize};
use crate::rest::Request;
use crate::rest::error::Error;
use crate::rest::upgrade::{StreamTask, WebSocket};

/// Resize requests queued before the sender waits (client-go keeps one).
const RESIZE_QUEUE: usize = 4;
/// The most stdin bytes sent in one message.
const STDIN_CHUNK: usize = 32 * 1024;
/// How often an idle stream pings the server, so that proxies and load
/// balancers in between do not close it for inactivity (client-go pings
/// every 5 s).
/// Short in unit tests, which check that it happens.
pub(crate) const HEARTBEAT: std::time::Duration =
    std::time::Duration::from_millis(if cfg!(test) { 200 } else { 30_000 });

/// Opens the stream of `request` and starts its task.
pub(super) async fn start(request: Request, params: &AttachParams, what: String) -> Result<AttachedProcess, Error> {
    let upgraded = request.no_timeout().websocket(&[protocol::V5_PROTOCOL, protocol::V4_PROTOCOL]).await?;
    let Some(protocol) = Protocol::negotiated(&upgraded.protocol) else {
        return Err(Error::Stream {
            what,
            message: format!("the server chose no channel protocol this client speaks ({:?})", upgraded.protocol),
        });
    };
    Ok(spawn(upgraded.socket, protocol, params, what))
}

/// Starts the task of an open stream.
pub(super) fn spawn(socket: WebSocket, protocol: Protocol, params: &AttachParams, what: String) -> AttachedProcess {
    let buffer = params.buffer.max(1);
    let (stdin_reader, stdin) = pipe(params.stdin, buffer);
    let (stdout, stdout_writer) = pipe(params.stdout, buffer);
    let (stderr, stderr_writer) = pipe(params.effective_stderr(), buffer);
    let (resizer, resizes) = if params.tty {
        let (sender, receiver) = mpsc::channel(RESIZE_QUEUE);
        (Some(TerminalResizer { sender }), Some(receiver))
    } else {
        (None, None)
    };
    let session =
        Session { protocol, stdin: stdin_reader, stdout: stdout_writer, stderr: stderr_writer, resizes, what };
    let task = tokio::spawn(session.run(socket));
    AttachedProcess { stdin, stdout, stderr, resizer, protocol, task: StreamTask::new(task, "exec") }
}

/// A pipe when `connected`: (read end, write end). Dropping either end
/// ends the other: reads see EOF, writes fail.
fn pipe(connected: bool, buffer: usize) -> (Option<ProcessOutput>, Option<ProcessInput>) {
    if !connected {
        return (None, None);
    }
    let (read, write) = tokio::io::duplex(buffer);
    (Some(ProcessOutput(read)), Some(ProcessInput(write)))
}

struct Session {
    protocol: Protocol,
    stdin: Option<ProcessOutput>,
    stdout: Option<ProcessInput>,
    stderr: Option<ProcessInput>,
    resizes: Option<mpsc::Receiver<TerminalSize>>,
    what: String,
}

impl Session {
    async fn run(mut self, socket: WebSocket) -> Result<ExitStatus, Error> {
        let (mut sink, mut stream) = socket.split();
        let mut error_channel = Vec::new();
        let mut chunk = vec![0; STDIN_CHUNK];
        let mut heartbeat = tokio::time::interval_at(tokio::time::Instant::now() + HEARTBEAT, HEARTBEAT);
        loop {
            tokio::select! {
                _ = heartbeat.tick() => {
                    sink.send(Message::Ping(Default::default())).await.map_err(|e| self.broken(e))?;
                }
                message = stream.next() => {
                    let data = match message {
                        None => break,
                        Some(Ok(Message::Binary(data))) => data,
                        Some(Ok(Message::Close(_))) => break,
                        // Pings are answered by the socket itself.
                        Some(Ok(_)) => continue,
                        // A connection dropped after the final Status
                        // lost nothing.
                        Some(Err(_)) if !error_channel.is_empty() => break,
                        Some(Err(e)) => return Err(self.broken(e)),
                    };
                    let Some((&channel, payload)) = data.split_first() else { continue };
                    match channel {
                        STDOUT => deliver(&mut self.stdout, payload).await,
                        STDERR => deliver(&mut self.stderr, payload).await,
                        ERROR => error_channel.extend_from_slice(payload),
                        other => tracing::debug!(channel = other, what = %self.what, "message on an unknown channel"),
                    }
                }
                read = read_some(&mut self.stdin, &mut chunk), if self.stdin.is_some() => {
                    match read {
                        Ok(n) if n > 0 => {
                            let message = protocol::frame(STDIN, &chunk[..n]);
                            sink.send(Message::Binary(message.into())).await.map_err(|e| self.broken(e))?;
                        }
                        // The end of stdin (or a failed reader) closes it remotely.
                        _ => {
                            self.stdin = None;
                            if let Some(close) = self.protocol.close_message(STDIN) {
                                sink.send(Message::Binary(close.into())).await.map_err(|e| self.broken(e))?;
                            }
                        }
                    }
                }
                size = next_size(&mut self.resizes), if self.resizes.is_some() => {
                    match size {
                        Some(size) => {
                            let message = protocol::resize_message(size);
                            sink.send(Message::Binary(message.into())).await.map_err(|e| self.broken(e))?;
                        }
                        None => self.resizes = None,
                    }
                }
            }
        }
        // The outputs end here: their readers see EOF.
        for output in [self.stdout.take(), self.stderr.take()].into_iter().flatten() {
            let mut output = output;
            let _ = output.shutdown().await;
        }
        // Best effort: the server may already have gone.
        let _ = sink.close().await;
        protocol::exit_status(&error_channel).map_err(|message| Error::Stream { what: self.what.clone(), message })
    }

    fn broken(&self, e: tokio_tungstenite::tungstenite::Error) -> Error {
        Error::Stream { what: self.what.clone(), message: format!("connection failed: {e}") }
    }
}

/// Writes `payload` to an output; a reader that went away discards the
/// rest of that output instead of failing the stream.
async fn deliver(output: &mut Option<ProcessInput>, payload: &[u8]) {
    let Some(writer) = output else { return };
    if payload.is_empty() {
        return;
    }
    if writer.write_all(payload).await.is_err() {
        *output = None;
    }
}

async fn read_some(input: &mut Option<ProcessOutput>, chunk: &mut [u8]) -> std::io::Result<usize> {
    match input {
        Some(reader) => reader.read(chunk).await,
        None => Ok(0),
    }
}

async fn next_size(resizes: &mut Option<mpsc::Receiver<TerminalSize>>) -> Option<TerminalSize> {
    match resizes {
        Some(receiver) => receiver.recv().await,
        None => None,
    }
}
