//! [`Error`]: what went wrong decoding protobuf, and where; [`ErrorKind`]:
//! its cases.

use std::fmt;

use super::wire::WireType;

/// A protobuf decoding failure: an [`ErrorKind`], boxed.
///
/// A failure inside a message is wrapped, level by level, in
/// [`ErrorKind::Field`] (or [`ErrorKind::Key`] when the field's key itself
/// is broken), so that the error shows the path from the outermost message
/// down to the failing value:
/// `Pod field 2 (LEN) > PodSpec field 2 (LEN) > Container field 1 (LEN): string is not UTF-8 ...`.
/// [`Error::innermost`] gives the failure without its path, [`Error::path`]
/// the path.
///
/// Boxed so that a `Result<(), Error>`, which every field of every message
/// returns while decoding, is one pointer in a register: unboxed, it was 64
/// bytes returned through memory and copied whole before its case was
/// looked at, a copy the processor stalled on (the loads read more than
/// the callee's last store had written). Decoding the 5,000-pod list took
/// 8% longer so (with two-byte varints read inline; without them, the box
/// measured no difference).
#[derive(Clone, PartialEq, Eq)]
pub struct Error(Box<ErrorKind>);

// What the box is for.
const _: () = assert!(size_of::<Result<(), Error>>() == size_of::<usize>());

/// What failed: the cases of an [`Error`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The value of field `number` of `message` failed to decode.
    #[error("{message} field {number} ({wire_type}){}{error}", separator(error))]
    Field {
        /// The message type (`Pod`, `map entry`, `runtime.Unknown`).
        message: &'static str,
        /// The field's number.
        number: u32,
        /// The wire type the field was written with.
        wire_type: WireType,
        /// What failed, inside the field.
        error: Error,
    },
    /// A field key of `message` failed to decode.
    #[error("{message} key at byte {offset}{}{error}", separator(error))]
    Key {
        /// The message type.
        message: &'static str,
        /// Where the key starts, in bytes from the start of the message.
        offset: usize,
        /// What failed.
        error: Error,
    },
    /// A varint runs past the end of the data.
    #[error("varint runs past the end of the data")]
    TruncatedVarint,
    /// A varint is longer than ten bytes.
    #[error("varint longer than ten bytes")]
    InvalidVarint,
    /// A length-delimited value claims more bytes than are left.
    #[error("length {length} runs past the end of the data ({remaining} bytes left)")]
    LengthPastEnd {
        /// The length read.
        length: u64,
        /// The bytes left in the enclosing message.
        remaining: usize,
    },
    /// A fixed-width value runs past the end of the data.
    #[error("{width}-byte value runs past the end of the data ({remaining} bytes left)")]
    TruncatedFixed {
        /// The value's width: 4 or 8.
        width: usize,
        /// The bytes left in the enclosing message.
        remaining: usize,
    },
    /// A key whose field number is 0 or does not fit 32 bits.
    #[error("invalid field key {key}")]
    InvalidKey {
        /// The key read (field number and wire type).
        key: u64,
    },
    /// A key with wire type 6 or 7, which do not exist.
    #[error("wire type {0} does not exist")]
    InvalidWireType(u8),
    /// A group (wire type 3 or 4): deprecated in proto2, and used by no
    /// Kubernetes type.
    #[error("groups ({0}) are not supported")]
    Group(WireType),
    /// A known field written with another wire type than its type has.
    #[error("expected wire type {expected}, found {found}")]
    WrongWireType {
        /// The wire type of the field's type.
        expected: WireType,
        /// The wire type on the wire.
        found: WireType,
    },
    /// A string field that is not UTF-8.
    #[error("string is not UTF-8 (valid up to byte {valid_up_to} of {len})")]
    InvalidUtf8 {
        /// The length of the valid prefix.
        valid_up_to: usize,
        /// The string's length in bytes.
        len: usize,
    },
    /// Messages nested deeper than [`MAX_DEPTH`](super::MAX_DEPTH).
    #[error("messages nested deeper than {0} levels")]
    TooDeep(usize),
    /// A message without a field it cannot do without.
    #[error("{message} has no field {number} ({name})")]
    MissingField {
        /// The message type.
        message: &'static str,
        /// The field's number.
        number: u32,
        /// The field's name.
        name: &'static str,
    },
    /// A time whose seconds are outside the years -9999 to 9999.
    #[error("time of {seconds} seconds since the epoch is out of range")]
    TimeOutOfRange {
        /// The seconds read.
        seconds: i64,
    },
    /// The raw bytes of a field holding JSON (`RawExtension`, `FieldsV1`,
    /// apiextensions' `JSON`) that are not one JSON value: an embedded
    /// object written as protobuf, say, which this client keeps only as JSON.
    #[error("{message} raw bytes are not JSON ({reason}); they begin with {received}")]
    RawNotJson {
        /// The message type.
        message: &'static str,
        /// What the JSON parser says.
        reason: String,
        /// The first bytes, as text and hex.
        received: String,
    },
    /// An `IntOrString` whose type is neither 0 (int) nor 1 (string).
    #[error("IntOrString type {0} is neither 0 (int) nor 1 (string)")]
    IntOrStringType(i64),
    /// Data that does not start with the `k8s\0` prefix of Kubernetes'
    /// protobuf encoding.
    #[error("not a Kubernetes protobuf message: expected the prefix \"k8s\\0\", received {received}")]
    Magic {
        /// The first bytes received, as text and hex.
        received: String,
    },
    /// The `k8s\0` prefix with nothing after it.
    #[error("empty Kubernetes protobuf message: the prefix \"k8s\\0\" and nothing after it")]
    EmptyBody,
    /// A watch frame longer than the decoder allows.
    #[error("watch frame of {length} bytes exceeds the maximum of {max} bytes")]
    FrameTooLarge {
        /// The frame's length, from its header.
        length: usize,
        /// The decoder's maximum.
        max: usize,
    },
    /// A watch stream that ended inside a frame.
    #[error("watch stream ended inside a frame ({buffered} bytes buffered)")]
    TruncatedStream {
        /// The bytes of the unfinished frame.
        buffered: usize,
    },
    /// A watch frame decoder used again after it failed.
    #[error("watch frame decoder already failed")]
    DecoderFailed,
}

/// `" > "` before a nested message's part of the path, `": "` before the
/// failure itself.
fn separator(inner: &Error) -> &'static str {
    match inner.kind() {
        ErrorKind::Field { .. } | ErrorKind::Key { .. } => " > ",
        _ => ": ",
    }
}

impl Error {
    /// What failed, at this level: for a failure inside a message, the
    /// [`ErrorKind::Field`] or [`ErrorKind::Key`] that wraps it.
    pub fn kind(&self) -> &ErrorKind {
        &self.0
    }

    /// The failure itself, without the path of fields leading to it.
    pub fn innermost(&self) -> &ErrorKind {
        match self.kind() {
            ErrorKind::Field { error, .. } | ErrorKind::Key { error, .. } => error.innermost(),
            other => other,
        }
    }

    /// The path to the failure: the message types and field numbers from
    /// the outermost message inwards, e.g. `[("Pod", 2), ("PodSpec", 2)]`.
    /// A broken key ends the path with no field number.
    pub fn path(&self) -> Vec<(&'static str, Option<u32>)> {
        let mut path = Vec::new();
        let mut at = self;
        loop {
            match at.kind() {
                ErrorKind::Field { message, number, error, .. } => {
                    path.push((*message, Some(*number)));
                    at = error;
                }
                ErrorKind::Key { message, error, .. } => {
                    path.push((*message, None));
                    at = error;
                }
                _ => return path,
            }
        }
    }

    /// `self` as the failure of field `number` of `message`.
    #[cold]
    pub(crate) fn in_field(self, message: &'static str, number: u32, wire_type: WireType) -> Error {
        ErrorKind::Field { message, number, wire_type, error: self }.into()
    }
}

impl From<ErrorKind> for Error {
    // Out of line: errors are the rare path, kept out of the decoder's.
    #[cold]
    fn from(kind: ErrorKind) -> Error {
        Error(Box::new(kind))
    }
}

impl PartialEq<ErrorKind> for Error {
    fn eq(&self, kind: &ErrorKind) -> bool {
        self.kind() == kind
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.kind(), f)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.kind(), f)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.kind().source()
    }
}

/// Up to the first eight bytes of `data`, as escaped text and as hex: what a
/// caller sent instead of protobuf (`"{\"kind\"" (7b 22 6b 69 6e 64 22)`).
pub(crate) fn describe_prefix(data: &[u8]) -> String {
    if data.is_empty() {
        return "no data".to_owned();
    }
    let head = &data[..data.len().min(8)];
    let text: String = head.escape_ascii().to_string();
    let hex = head.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(" ");
    let more = if data.len() > head.len() { format!(", {} bytes in all", data.len()) } else { String::new() };
    format!("\"{text}\" ({hex}{more})")
}

impl fmt::Display for WireType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            WireType::Varint => "VARINT",
            WireType::Fixed64 => "I64",
            WireType::Len => "LEN",
            WireType::StartGroup => "SGROUP",
            WireType::EndGroup => "EGROUP",
            WireType::Fixed32 => "I32",
        })
    }
}
