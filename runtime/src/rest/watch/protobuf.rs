//! Watch streams over protobuf (`application/vnd.kubernetes.protobuf;stream=watch`):
//! length-delimited frames ([`FrameDecoder`]), each a `metav1.WatchEvent`
//! ([`WatchEventFrame`]) whose object is decoded through the kind's
//! [`Codec`]. The rules are the JSON stream's ([`watch_stream`](super::watch_stream)):
//! an `ERROR` event is an `Err(Error::Api)` and decoding goes on, an event
//! of an unknown type is logged and skipped, a body ending inside a frame is
//! [`Error::WatchTruncated`] (a broken connection, not a bad event).

use std::collections::BTreeMap;

use bytes::Bytes;

use super::{Bookmark, ByteStream, Framer, WatchEvent, WatchStream, events};
use crate::protobuf::{self, Codec, DecodeOptions, FrameDecoder, Reader, WatchEventFrame, WireType};
use crate::rest::error::{Error, Status};

/// The protobuf frames of a body, their errors as the REST layer's.
struct Frames(FrameDecoder);

fn frame_error(error: protobuf::Error) -> Error {
    match *error.kind() {
        protobuf::ErrorKind::TruncatedStream { buffered } => Error::WatchTruncated { buffered },
        _ => Error::DecodeProtobuf { what: "watch stream".into(), source: error },
    }
}

impl Framer for Frames {
    fn push(&mut self, chunk: &[u8]) {
        self.0.push(chunk);
    }
    fn next_frame(&mut self) -> Result<Option<Bytes>, Error> {
        self.0.next_frame().map_err(frame_error)
    }
    fn finish(&self) -> Result<(), Error> {
        self.0.finish().map_err(frame_error)
    }
}

/// Turns a protobuf watch body into typed events, each object decoded by
/// `codec` with `options`; frames longer than `max_event_size` bytes end
/// the stream with an error. See [`watch_stream`](super::watch_stream) for
/// what ends a stream and what an error at its end means.
#[must_use = "a watch stream does nothing unless polled"]
pub fn protobuf_watch_stream<K: Send + 'static>(
    body: ByteStream,
    max_event_size: usize,
    codec: Codec<K>,
    options: DecodeOptions,
) -> WatchStream<K> {
    events(body, Frames(FrameDecoder::new(max_event_size)), move |frame| decode_protobuf_event(frame, &codec, options))
}

/// Decodes one frame cut from a protobuf watch body (without its length
/// header). `ERROR` events become `Err(Error::Api(status))`; an unknown
/// event type is [`Error::UnknownWatchEventType`].
pub fn decode_protobuf_event<K>(
    frame: &[u8],
    codec: &Codec<K>,
    options: DecodeOptions,
) -> Result<WatchEvent<K>, Error> {
    let event = WatchEventFrame::decode(frame)
        .map_err(|source| Error::DecodeProtobuf { what: "watch event".into(), source })?;
    let what = |kind: &str| format!("{kind} object");
    let object = |kind: &str| {
        codec.decode(event.object.raw, options).map_err(|source| Error::DecodeProtobuf { what: what(kind), source })
    };
    Ok(match event.event_type {
        "ADDED" => WatchEvent::Added(object("ADDED")?),
        "MODIFIED" => WatchEvent::Modified(object("MODIFIED")?),
        "DELETED" => WatchEvent::Deleted(object("DELETED")?),
        "BOOKMARK" => WatchEvent::Bookmark(
            bookmark(event.object.raw).map_err(|source| Error::DecodeProtobuf { what: what("BOOKMARK"), source })?,
        ),
        "ERROR" => {
            let status = Status::from_envelope(&event.object)
                .map_err(|source| Error::DecodeProtobuf { what: "ERROR status".into(), source })?;
            return Err(Error::Api(Box::new(status)));
        }
        other => return Err(Error::UnknownWatchEventType(other.to_owned())),
    })
}

/// A bookmark's object: only `metadata` (field 1 of every kind) matters,
/// its resourceVersion (6) and annotations (12), so the object is not
/// decoded as the kind.
fn bookmark(message: &[u8]) -> Result<Bookmark, protobuf::Error> {
    let mut bookmark = Bookmark::default();
    protobuf::for_each_field("bookmark object", &mut Reader::new(message), |number, wire_type, reader| {
        if number != 1 {
            return reader.skip(wire_type);
        }
        wire_type.expect(WireType::Len)?;
        protobuf::for_each_field("ObjectMeta", &mut reader.nested()?, |number, wire_type, reader| match number {
            6 => {
                wire_type.expect(WireType::Len)?;
                reader.read_str()?.clone_into(&mut bookmark.resource_version);
                Ok(())
            }
            12 => annotation(&mut bookmark.annotations, wire_type, reader),
            _ => reader.skip(wire_type),
        })
    })?;
    Ok(bookmark)
}

/// One `map<string, string>` entry {key = 1, value = 2}.
fn annotation(
    annotations: &mut BTreeMap<String, String>,
    wire_type: WireType,
    reader: &mut Reader<'_>,
) -> Result<(), protobuf::Error> {
    wire_type.expect(WireType::Len)?;
    let (mut key, mut value) = ("", "");
    protobuf::for_each_field("map entry", &mut reader.nested()?, |number, wire_type, reader| {
        let place = match number {
            1 => &mut key,
            2 => &mut value,
            _ => return reader.skip(wire_type),
        };
        wire_type.expect(WireType::Len)?;
        *place = reader.read_str()?;
        Ok(())
    })?;
    annotations.insert(key.to_owned(), value.to_owned());
    Ok(())
}
