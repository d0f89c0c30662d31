//! The task of one port-forward WebSocket: the channel framing (data and
//! error channel per port, each opened by the port number) between the
//! socket and the local [`PortStream`]s.

use std::future::poll_fn;
use std::pin::Pin;
use std::task::Poll;

use futures_util::{SinkExt as _, StreamExt as _};
use tokio::io::{AsyncRead, AsyncWriteExt as _, DuplexStream, ReadBuf};
use tokio::sync::oneshot;
use tokio_tungstenite::tungstenite::Message;

use super::{PortForwarder, PortStream, STREAM_BUFFER};
use crate::rest::error::Error;
use crate::rest::upgrade::{StreamTask, WebSocket};

/// The most bytes read from a local stream for one message.
const CHUNK: usize = 32 * 1024;

/// What a message on channel `channel` is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Channel {
    /// The data channel of the `n`th port.
    Data(usize),
    /// The error channel of the `n`th port.
    Error(usize),
}

impl Channel {
    pub(crate) fn of(channel: u8) -> Channel {
        let port = usize::from(channel / 2);
        if channel.is_multiple_of(2) { Channel::Data(port) } else { Channel::Error(port) }
    }
}

/// The `n`th port's data channel number.
pub(crate) fn data_channel(n: usize) -> u8 {
    // At most 127 ports (checked before connecting).
    u8::try_from(n * 2).unwrap_or(u8::MAX)
}

/// Strips the port number that opens each channel. `header` collects its
/// two bytes across messages; once complete, the rest of `payload` is
/// data. `Err` when the number is not `port`.
pub(crate) fn strip_port_header<'a>(header: &mut Vec<u8>, payload: &'a [u8], port: u16) -> Result<&'a [u8], String> {
    if header.len() == 2 {
        return Ok(payload);
    }
    let take = (2 - header.len()).min(payload.len());
    header.extend_from_slice(&payload[..take]);
    if header.len() == 2 {
        let got = u16::from_le_bytes([header[0], header[1]]);
        if got != port {
            return Err(format!("a channel of port {port} starts with port {got}"));
        }
    }
    Ok(&payload[take..])
}

/// One port's end of the WebSocket.
struct Port {
    port: u16,
    /// The task's end of the local stream; `None` once it ended.
    local: Option<DuplexStream>,
    /// Whether the local side still sends.
    reading: bool,
    data_header: Vec<u8>,
    error_header: Vec<u8>,
    error: Vec<u8>,
    error_sender: Option<oneshot::Sender<String>>,
}

/// Starts the task of an open port-forward WebSocket.
pub(super) fn spawn(socket: WebSocket, ports: &[u16], what: String) -> PortForwarder {
    let mut streams = Vec::with_capacity(ports.len());
    let mut errors = Vec::with_capacity(ports.len());
    let mut state = Vec::with_capacity(ports.len());
    for &port in ports {
        let (user, task) = tokio::io::duplex(STREAM_BUFFER);
        let (error_sender, error_receiver) = oneshot::channel();
        streams.push(Some(PortStream(user)));
        errors.push(Some(error_receiver));
        state.push(Port {
            port,
            local: Some(task),
            reading: true,
            data_header: Vec::with_capacity(2),
            error_header: Vec::with_capacity(2),
            error: Vec::new(),
            error_sender: Some(error_sender),
        });
    }
    let task = tokio::spawn(run(socket, state, what));
    PortForwarder { ports: ports.to_vec(), streams, errors, task: StreamTask::new(task, "port-forward") }
}

async fn run(socket: WebSocket, mut ports: Vec<Port>, what: String) -> Result<(), Error> {
    let (mut sink, mut stream) = socket.split();
    let broken = |e: tokio_tungstenite::tungstenite::Error| Error::Stream {
        what: what.clone(),
        message: format!("connection failed: {e}"),
    };
    let protocol_error = |message: String| Error::Stream { what: what.clone(), message };
    let mut chunk = vec![0; CHUNK];
    let mut outcome = Ok(());
    let heartbeat_every = crate::rest::remotecommand::session::HEARTBEAT;
    let mut heartbeat = tokio::time::interval_at(tokio::time::Instant::now() + heartbeat_every, heartbeat_every);
    loop {
        if ports.iter().all(|p| !p.reading) {
            // Every local side is done: closing the socket ends the
            // connections in the pod.
            let _ = sink.close().await;
            break;
        }
        tokio::select! {
            _ = heartbeat.tick() => {
                if let Err(e) = sink.send(Message::Ping(Default::default())).await {
                    outcome = Err(broken(e));
                    break;
                }
            }
            message = stream.next() => {
                let data = match message {
                    None | Some(Ok(Message::Close(_))) => break,
                    Some(Ok(Message::Binary(data))) => data,
                    Some(Ok(_)) => continue,
                    Some(Err(e)) => {
                        outcome = Err(broken(e));
                        break;
                    }
                };
                let Some((&channel, payload)) = data.split_first() else { continue };
                match Channel::of(channel) {
                    Channel::Data(i) if i < ports.len() => {
                        let port = &mut ports[i];
                        let data = match strip_port_header(&mut port.data_header, payload, port.port) {
                            Ok(data) => data,
                            Err(message) => {
                                outcome = Err(protocol_error(message));
                                break;
                            }
                        };
                        if let Some(local) = port.local.as_mut()
                            && !data.is_empty()
                            && local.write_all(data).await.is_err()
                        {
                            // The stream was dropped: nobody reads any more.
                            port.local = None;
                            port.reading = false;
                        }
                    }
                    Channel::Error(i) if i < ports.len() => {
                        let port = &mut ports[i];
                        match strip_port_header(&mut port.error_header, payload, port.port) {
                            Ok(text) => port.error.extend_from_slice(text),
                            Err(message) => {
                                outcome = Err(protocol_error(message));
                                break;
                            }
                        }
                    }
                    _ => tracing::debug!(channel, %what, "port-forward message on an unknown channel"),
                }
            }
            (i, read) = read_any(&mut ports, &mut chunk) => {
                match read {
                    Ok(n) if n > 0 => {
                        let mut message = Vec::with_capacity(n + 1);
                        message.push(data_channel(i));
                        message.extend_from_slice(&chunk[..n]);
                        if let Err(e) = sink.send(Message::Binary(message.into())).await {
                            outcome = Err(broken(e));
                            break;
                        }
                    }
                    // The local side ended (no half-close in this protocol).
                    _ => ports[i].reading = false,
                }
            }
        }
    }
    let mut failures = Vec::new();
    for port in &mut ports {
        if let Some(mut local) = port.local.take() {
            let _ = local.shutdown().await;
        }
        let text = String::from_utf8_lossy(&port.error).into_owned();
        if !text.is_empty() {
            failures.push(format!("port {}: {text}", port.port));
        }
        if let Some(sender) = port.error_sender.take()
            && !text.is_empty()
        {
            // Nobody may be waiting for it; join reports it too.
            let _ = sender.send(text);
        }
    }
    outcome?;
    if failures.is_empty() { Ok(()) } else { Err(Error::Stream { what, message: failures.join("; ") }) }
}

/// Reads from the first local stream that has data (or ended): its index
/// and what the read gave.
async fn read_any(ports: &mut [Port], chunk: &mut [u8]) -> (usize, std::io::Result<usize>) {
    poll_fn(|cx| {
        for (i, port) in ports.iter_mut().enumerate() {
            let Some(local) = port.local.as_mut().filter(|_| port.reading) else { continue };
            let mut buf = ReadBuf::new(chunk);
            match Pin::new(local).poll_read(cx, &mut buf) {
                Poll::Ready(Ok(())) => return Poll::Ready((i, Ok(buf.filled().len()))),
                Poll::Ready(Err(e)) => return Poll::Ready((i, Err(e))),
                Poll::Pending => {}
            }
        }
        Poll::Pending
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn channels_pair_up_per_port() {
        assert_eq!(Channel::of(0), Channel::Data(0));
        assert_eq!(Channel::of(1), Channel::Error(0));
        assert_eq!(Channel::of(4), Channel::Data(2));
        assert_eq!(Channel::of(5), Channel::Error(2));
        assert_eq!(data_channel(3), 6);
    }

    #[test]
    fn the_port_header_is_little_endian_and_checked() {
        let mut header = Vec::new();
        assert_eq!(strip_port_header(&mut header, &[0x90, 0x1f, b'h', b'i'], 8080), Ok(&b"hi"[..]));
        assert_eq!(strip_port_header(&mut header, b"more", 8080), Ok(&b"more"[..]));
        let mut header = Vec::new();
        assert!(strip_port_header(&mut header, &[80, 0], 8080).unwrap_err().contains("port 80"));
    }

    proptest! {
        #[test]
        fn the_header_may_arrive_in_pieces(port in 1u16.., data in proptest::collection::vec(any::<u8>(), 0..64), split in 0usize..3) {
            let mut message = port.to_le_bytes().to_vec();
            message.extend_from_slice(&data);
            let split = split.min(message.len());
            let mut header = Vec::new();
            let mut out = strip_port_header(&mut header, &message[..split], port).unwrap().to_vec();
            out.extend_from_slice(strip_port_header(&mut header, &message[split..], port).unwrap());
            prop_assert_eq!(out, data);
        }
    }
}
