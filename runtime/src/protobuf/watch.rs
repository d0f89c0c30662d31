//! Watch streams over protobuf (`application/vnd.kubernetes.protobuf;stream=watch`):
//! frames of a four-byte big-endian length and that many bytes
//! (apimachinery's `LengthDelimitedFramer`), each a `metav1.WatchEvent`
//! {type = 1, object = 2 `RawExtension`} whose `object.raw` is the object
//! in its own `k8s\0` envelope.
//!
//! [`FrameDecoder`] cuts the frames out of a body's chunks, without I/O;
//! [`WatchEventFrame::decode`] reads one. The apiserver writes a frame with
//! its raw serializer, so the `WatchEvent` is bare; a frame that is itself
//! an envelope (`k8s\0` + `runtime.Unknown` holding the `WatchEvent`) is
//! read too. The two cannot be confused: a `WatchEvent` never starts with
//! `k`, which would be a group key.

use bytes::{Buf, Bytes, BytesMut};

use super::envelope::{Envelope, MAGIC};
use super::message::for_each_field;
use super::wire::{Reader, WireType, Writer};
use super::{Error, ErrorKind, special};

/// Cuts length-delimited frames out of arbitrary chunks.
///
/// A frame longer than the maximum is an error as soon as its header is
/// read, before its bytes are buffered: memory stays within the maximum,
/// the four header bytes and one chunk.
#[derive(Debug)]
pub struct FrameDecoder {
    buf: BytesMut,
    max_frame_size: usize,
    failed: bool,
}

/// Bytes of a frame's length header.
const HEADER: usize = 4;

impl FrameDecoder {
    /// A decoder refusing frames longer than `max_frame_size` bytes.
    pub fn new(max_frame_size: usize) -> Self {
        FrameDecoder { buf: BytesMut::new(), max_frame_size, failed: false }
    }

    /// Appends bytes as they arrived.
    pub fn push(&mut self, chunk: &[u8]) {
        if !self.failed {
            self.buf.extend_from_slice(chunk);
        }
    }

    /// The next complete frame (without its header), `Ok(None)` when more
    /// bytes are needed. After an error the decoder stays failed.
    pub fn next_frame(&mut self) -> Result<Option<Bytes>, Error> {
        if self.failed {
            return Err(ErrorKind::DecoderFailed.into());
        }
        let Some(header) = self.buf.first_chunk::<HEADER>() else { return Ok(None) };
        let length = u32::from_be_bytes(*header) as usize;
        if length > self.max_frame_size {
            self.failed = true;
            self.buf = BytesMut::new();
            return Err(ErrorKind::FrameTooLarge { length, max: self.max_frame_size }.into());
        }
        if self.buf.len() < HEADER + length {
            return Ok(None);
        }
        self.buf.advance(HEADER);
        Ok(Some(self.buf.split_to(length).freeze()))
    }

    /// Checks that the stream ended between frames.
    pub fn finish(&self) -> Result<(), Error> {
        if self.failed {
            return Err(ErrorKind::DecoderFailed.into());
        }
        if self.buf.is_empty() { Ok(()) } else { Err(ErrorKind::TruncatedStream { buffered: self.buf.len() }.into()) }
    }

    /// Bytes buffered but not yet returned.
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }
}

/// `frame` with its length header, as the apiserver writes a frame.
pub fn encode_frame(frame: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER + frame.len());
    // A frame's length never reaches 4 GiB: the apiserver's objects are
    // limited far below it.
    out.extend_from_slice(&u32::try_from(frame.len()).unwrap_or(u32::MAX).to_be_bytes());
    out.extend_from_slice(frame);
    out
}

/// One decoded watch frame, borrowing from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WatchEventFrame<'a> {
    /// The event's type: `ADDED`, `MODIFIED`, `DELETED`, `BOOKMARK` or
    /// `ERROR` (whose object is a `Status`).
    pub event_type: &'a str,
    /// The object's envelope.
    pub object: Envelope<'a>,
}

/// The message names errors give a watch event.
const WATCH_EVENT: &str = "WatchEvent";

impl<'a> WatchEventFrame<'a> {
    /// Reads a frame cut by [`FrameDecoder`]: a `metav1.WatchEvent`, bare
    /// or in an envelope, and its object's envelope.
    pub fn decode(frame: &'a [u8]) -> Result<WatchEventFrame<'a>, Error> {
        let message = if frame.starts_with(&MAGIC) { Envelope::decode(frame)?.raw } else { frame };
        let mut event_type = "";
        let mut object = None;
        for_each_field(WATCH_EVENT, &mut Reader::new(message), |number, wire_type, reader| match number {
            1 => {
                wire_type.expect(WireType::Len)?;
                event_type = reader.read_str()?;
                Ok(())
            }
            2 => {
                wire_type.expect(WireType::Len)?;
                let raw = special::decode_raw_extension(&mut reader.nested()?)?;
                let envelope = Envelope::decode(raw).map_err(|e| e.in_field("RawExtension", 1, WireType::Len))?;
                object = Some(envelope);
                Ok(())
            }
            _ => reader.skip(wire_type),
        })?;
        let object = object.ok_or(ErrorKind::MissingField { message: WATCH_EVENT, number: 2, name: "object" })?;
        Ok(WatchEventFrame { event_type, object })
    }

    /// The frame's bytes, as the apiserver writes them: a bare
    /// `WatchEvent` (without the length header; see [`encode_frame`]).
    pub fn encode(&self) -> Vec<u8> {
        encode_watch_event(self.event_type, &self.object.encode())
    }
}

/// A bare `metav1.WatchEvent` of `event_type` whose object is
/// `object_envelope` (an object's `k8s\0` envelope).
pub fn encode_watch_event(event_type: &str, object_envelope: &[u8]) -> Vec<u8> {
    let mut writer = Writer::new();
    writer.key(1, WireType::Len);
    writer.bytes(event_type.as_bytes());
    writer.key(2, WireType::Len);
    writer.len_delimited(|writer| special::encode_raw_extension(writer, object_envelope));
    writer.into_vec()
}
