//! The channel protocol of exec and attach over a WebSocket
//! (`v4.channel.k8s.io`, `v5.channel.k8s.io`): every binary message starts
//! with the number of its channel, the rest is the channel's bytes.
//! `v5` adds the stream-close message (`255`, then the channel), which lets
//! the client end the process's stdin; `v4` has no way to.

use serde::Serialize;

use super::ExitStatus;
use crate::rest::Status;

/// The subprotocol with the stream-close message (apiserver 1.30 and up).
pub const V5_PROTOCOL: &str = "v5.channel.k8s.io";
/// The subprotocol every supported kubelet speaks.
pub const V4_PROTOCOL: &str = "v4.channel.k8s.io";

/// The process's standard input (client to server).
pub(crate) const STDIN: u8 = 0;
/// The process's standard output.
pub(crate) const STDOUT: u8 = 1;
/// The process's standard error.
pub(crate) const STDERR: u8 = 2;
/// The final Status of the process (server to client), JSON.
pub(crate) const ERROR: u8 = 3;
/// Terminal size changes (client to server), JSON.
pub(crate) const RESIZE: u8 = 4;
/// `v5` only: the next byte names a channel the sender is done with.
pub(crate) const CLOSE: u8 = 255;

/// `NonZeroExitCode`: the reason of the Status of a process that exited
/// with a code other than zero.
const NON_ZERO_EXIT_CODE: &str = "NonZeroExitCode";
/// The cause carrying that code, in decimal, as its message.
const EXIT_CODE_CAUSE: &str = "ExitCode";

/// Which channel protocol the server chose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// `v4.channel.k8s.io`: no stream-close message.
    V4,
    /// `v5.channel.k8s.io`: stdin can be closed.
    V5,
}

impl Protocol {
    /// The protocol of the `Sec-WebSocket-Protocol` the server answered.
    pub(crate) fn negotiated(protocol: &str) -> Option<Protocol> {
        match protocol {
            V5_PROTOCOL => Some(Protocol::V5),
            V4_PROTOCOL => Some(Protocol::V4),
            _ => None,
        }
    }

    /// The message that closes `channel`, when the protocol has one.
    pub(crate) fn close_message(self, channel: u8) -> Option<Vec<u8>> {
        (self == Protocol::V5).then(|| vec![CLOSE, channel])
    }
}

/// `data` as one message of `channel`.
pub(crate) fn frame(channel: u8, data: &[u8]) -> Vec<u8> {
    let mut message = Vec::with_capacity(data.len() + 1);
    message.push(channel);
    message.extend_from_slice(data);
    message
}

/// A terminal's size in character cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TerminalSize {
    /// Columns.
    pub width: u16,
    /// Rows.
    pub height: u16,
}

/// client-go's `TerminalSize` as the resize channel carries it.
#[derive(Serialize)]
struct WireSize {
    #[serde(rename = "Width")]
    width: u16,
    #[serde(rename = "Height")]
    height: u16,
}

/// The resize message for `size`.
pub(crate) fn resize_message(size: TerminalSize) -> Vec<u8> {
    let json = serde_json::to_vec(&WireSize { width: size.width, height: size.height }).unwrap_or_default();
    frame(RESIZE, &json)
}

/// How the process ended, from the bytes of the error channel (a JSON
/// Status, as `v4` and `v5` send it); an empty channel means success, as
/// in client-go. `Err` names what is wrong with bytes that are not a
/// Status.
pub(crate) fn exit_status(error_channel: &[u8]) -> Result<ExitStatus, String> {
    if error_channel.iter().all(u8::is_ascii_whitespace) {
        return Ok(ExitStatus::Success);
    }
    let status: Status = serde_json::from_slice(error_channel).map_err(|e| {
        format!("the error channel holds no Status ({e}): {:?}", String::from_utf8_lossy(error_channel))
    })?;
    match status.status.as_deref() {
        Some("Success") => return Ok(ExitStatus::Success),
        Some("Failure") => {}
        other => return Err(format!("the error channel's Status has status {other:?}, not Success or Failure")),
    }
    if status.reason == NON_ZERO_EXIT_CODE {
        let cause = status.details.as_ref().and_then(|d| d.causes.iter().find(|c| c.reason == EXIT_CODE_CAUSE));
        let Some(cause) = cause else {
            return Err(format!("a {NON_ZERO_EXIT_CODE} Status without an {EXIT_CODE_CAUSE} cause"));
        };
        return cause
            .message
            .trim()
            .parse()
            .map(ExitStatus::Code)
            .map_err(|_| format!("the exit code {:?} is not a number", cause.message));
    }
    Ok(ExitStatus::Failure(Box::new(status)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn frames_start_with_the_channel() {
        assert_eq!(frame(STDIN, b"hi"), vec![0, b'h', b'i']);
        assert_eq!(frame(STDERR, b""), vec![2]);
    }

    #[test]
    fn only_v5_closes_a_channel() {
        assert_eq!(Protocol::V5.close_message(STDIN), Some(vec![255, 0]));
        assert_eq!(Protocol::V4.close_message(STDIN), None);
        assert_eq!(Protocol::negotiated("v5.channel.k8s.io"), Some(Protocol::V5));
        assert_eq!(Protocol::negotiated("v4.channel.k8s.io"), Some(Protocol::V4));
        assert_eq!(Protocol::negotiated("channel.k8s.io"), None);
    }

    #[test]
    fn resize_is_client_gos_terminal_size() {
        let m = resize_message(TerminalSize { width: 80, height: 24 });
        assert_eq!(m[0], RESIZE);
        assert_eq!(&m[1..], br#"{"Width":80,"Height":24}"#);
    }

    #[test]
    fn success_and_empty_error_channels_are_success() {
        assert_eq!(exit_status(b""), Ok(ExitStatus::Success));
        assert_eq!(exit_status(br#"{"metadata":{},"status":"Success"}"#), Ok(ExitStatus::Success));
    }

    #[test]
    fn a_non_zero_exit_code_is_typed() {
        let status = br#"{"metadata":{},"status":"Failure","message":"command terminated with non-zero exit code: error executing command [sh -c exit 3], exit code 3","reason":"NonZeroExitCode","details":{"causes":[{"reason":"ExitCode","message":"3"}]}}"#;
        assert_eq!(exit_status(status), Ok(ExitStatus::Code(3)));
    }

    #[test]
    fn another_failure_keeps_its_status() {
        let status =
            br#"{"metadata":{},"status":"Failure","message":"container not found (\"x\")","reason":"InternalError"}"#;
        match exit_status(status) {
            Ok(ExitStatus::Failure(s)) => assert_eq!(s.message, "container not found (\"x\")"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn malformed_error_channels_are_errors() {
        assert!(exit_status(b"not json").unwrap_err().contains("not json"));
        let no_cause = br#"{"status":"Failure","reason":"NonZeroExitCode"}"#;
        assert!(exit_status(no_cause).unwrap_err().contains("ExitCode cause"));
        let bad_code = br#"{"status":"Failure","reason":"NonZeroExitCode","details":{"causes":[{"reason":"ExitCode","message":"x"}]}}"#;
        assert!(exit_status(bad_code).unwrap_err().contains("not a number"));
        assert!(exit_status(br#"{"status":"Pending"}"#).is_err());
    }

    proptest! {
        #[test]
        fn any_exit_code_round_trips(code in any::<i32>()) {
            let status = format!(
                r#"{{"status":"Failure","reason":"NonZeroExitCode","details":{{"causes":[{{"reason":"ExitCode","message":"{code}"}}]}}}}"#
            );
            prop_assert_eq!(exit_status(status.as_bytes()), Ok(ExitStatus::Code(code)));
        }

        #[test]
        fn frames_keep_every_byte(channel in any::<u8>(), data in proptest::collection::vec(any::<u8>(), 0..256)) {
            let m = frame(channel, &data);
            prop_assert_eq!(m[0], channel);
            prop_assert_eq!(&m[1..], &data[..]);
        }
    }
}
