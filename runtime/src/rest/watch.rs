//! Watch streams: the apiserver sends one JSON object per event
//! (`{"type":"ADDED","object":{...}}`), concatenated, usually
//! newline-separated. [`WatchDecoder`] cuts the byte stream into events
//! without any I/O so it can be tested and fuzzed on its own;
//! [`watch_stream`] glues it to a response body.
//!
//! [`decode_event`] and [`watch_stream`] decode objects with their own
//! `Deserialize`; [`decode_event_with`] and [`watch_stream_with`] decode
//! them with [`DecodeOptions`] (skipping `managedFields`, say), which the
//! options travel with from the frame down to each object's fields.
//!
//! Over protobuf (`application/vnd.kubernetes.protobuf;stream=watch`),
//! [`protobuf_watch_stream`] reads the length-delimited frames instead,
//! each object through the kind's [`Codec`](crate::protobuf::Codec), with
//! the same rules for errors, bookmarks and unknown event types.

use std::collections::BTreeMap;
use std::marker::PhantomData;

use bytes::{Bytes, BytesMut};
use futures_util::StreamExt as _;
use futures_util::stream::BoxStream;
use serde::Deserialize;
use serde::de::DeserializeOwned;

use super::error::{Error, Status};
use crate::codec::{DecodeOptions, DecodeWith, WithOptions};

pub use crate::config::DEFAULT_MAX_EVENT_SIZE;

/// A body as a stream of byte chunks.
pub type ByteStream = BoxStream<'static, Result<Bytes, Error>>;

/// The typed events of a watch. `ERROR` events arrive as `Err(Error::Api)`
/// carrying the server's Status (`is_gone()` for a too-old resourceVersion).
#[derive(Debug, Clone, PartialEq)]
pub enum WatchEvent<T> {
    /// `ADDED`: the object was created, or (on a watch with
    /// `sendInitialEvents`) existed when the watch started.
    Added(T),
    /// `MODIFIED`: the object changed; it carries the new state.
    Modified(T),
    /// `DELETED`: the object is gone; it carries the last state.
    Deleted(T),
    /// Progress marker: the stream is current up to this resourceVersion.
    Bookmark(Bookmark),
}

impl<T> WatchEvent<T> {
    /// The event with its object changed by `f`.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> WatchEvent<U> {
        match self {
            WatchEvent::Added(o) => WatchEvent::Added(f(o)),
            WatchEvent::Modified(o) => WatchEvent::Modified(f(o)),
            WatchEvent::Deleted(o) => WatchEvent::Deleted(f(o)),
            WatchEvent::Bookmark(b) => WatchEvent::Bookmark(b),
        }
    }
}

/// A `BOOKMARK` event's object: only its resourceVersion and annotations
/// mean anything, so it is not decoded as `T`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Bookmark {
    /// The resourceVersion the stream has caught up to: a watch resumed
    /// from it misses nothing.
    pub resource_version: String,
    /// The bookmark object's annotations, e.g. `k8s.io/initial-events-end`.
    pub annotations: BTreeMap<String, String>,
}

impl Bookmark {
    /// Whether this bookmark ends the initial events of a
    /// `sendInitialEvents=true` watch.
    pub fn is_initial_events_end(&self) -> bool {
        self.annotations.get("k8s.io/initial-events-end").is_some_and(|v| v == "true")
    }
}

/// A stream of watch events.
pub type WatchStream<T> = BoxStream<'static, Result<WatchEvent<T>, Error>>;

/// Cuts concatenated JSON objects out of arbitrary chunks.
///
/// Memory stays bounded by `max_event_size` plus one chunk: a single
/// event larger than that is an error.
#[derive(Debug)]
pub struct WatchDecoder {
    buf: BytesMut,
    max_event_size: usize,
    scan: Scan,
    failed: bool,
}

/// Where the scanner is inside the object being buffered; kept between
/// pushes so every byte is looked at once.
#[derive(Debug, Default, Clone, Copy)]
struct Scan {
    pos: usize,
    depth: usize,
    in_string: bool,
    escaped: bool,
}

impl Default for WatchDecoder {
    fn default() -> Self {
        WatchDecoder::new(DEFAULT_MAX_EVENT_SIZE)
    }
}

impl WatchDecoder {
    /// A decoder refusing events larger than `max_event_size` bytes.
    pub fn new(max_event_size: usize) -> Self {
        WatchDecoder {
            buf: BytesMut::new(),
            max_event_size: max_event_size.max(2),
            scan: Scan::default(),
            failed: false,
        }
    }

    /// Appends bytes as they arrived.
    pub fn push(&mut self, chunk: &[u8]) {
        if !self.failed {
            self.buf.extend_from_slice(chunk);
        }
    }

    /// The next complete event's JSON text, `Ok(None)` when more bytes are
    /// needed. After an error the decoder stays failed.
    pub fn next_frame(&mut self) -> Result<Option<Bytes>, Error> {
        if self.failed {
            return Err(Error::Watch("decoder already failed".into()));
        }
        match self.scan_frame() {
            Ok(Some(end)) => {
                let frame = self.buf.split_to(end).freeze();
                self.scan = Scan::default();
                Ok(Some(frame))
            }
            Ok(None) => Ok(None),
            Err(e) => {
                self.failed = true;
                self.buf = BytesMut::new();
                Err(e)
            }
        }
    }

    /// Checks that the stream ended between events (not in the middle of one).
    pub fn finish(&self) -> Result<(), Error> {
        if self.failed {
            return Err(Error::Watch("decoder already failed".into()));
        }
        if self.buf.iter().all(u8::is_ascii_whitespace) {
            Ok(())
        } else {
            Err(Error::WatchTruncated { buffered: self.buf.len() })
        }
    }

    /// Bytes buffered but not yet returned.
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }

    fn scan_frame(&mut self) -> Result<Option<usize>, Error> {
        let mut s = self.scan;
        if s.depth == 0 {
            // Drop separators so they never count against the size limit.
            let skip = self.buf.iter().take_while(|b| b.is_ascii_whitespace()).count();
            let _ = self.buf.split_to(skip);
            s = Scan::default();
            match self.buf.first() {
                None => return Ok(None),
                Some(b'{') => {}
                Some(b) => {
                    return Err(Error::Watch(format!("expected '{{' at the start of an event, got byte 0x{b:02x}")));
                }
            }
        }
        let bytes = &self.buf[..];
        while s.pos < bytes.len() {
            if s.in_string && !s.escaped {
                // Most of an event is string contents: jump to the next
                // quote or backslash instead of looking at every byte.
                match memchr::memchr2(b'"', b'\\', &bytes[s.pos..]) {
                    Some(at) => s.pos += at,
                    None => {
                        s.pos = bytes.len();
                        break;
                    }
                }
            }
            let b = bytes[s.pos];
            s.pos += 1;
            if s.in_string {
                if s.escaped {
                    s.escaped = false;
                } else if b == b'\\' {
                    s.escaped = true;
                } else if b == b'"' {
                    s.in_string = false;
                }
                continue;
            }
            match b {
                b'"' => s.in_string = true,
                b'{' | b'[' => s.depth += 1,
                b'}' | b']' => {
                    s.depth = s.depth.saturating_sub(1);
                    if s.depth == 0 {
                        if s.pos > self.max_event_size {
                            return Err(self.too_large());
                        }
                        self.scan = s;
                        return Ok(Some(s.pos));
                    }
                }
                _ => {}
            }
        }
        self.scan = s;
        if self.buf.len() > self.max_event_size {
            return Err(self.too_large());
        }
        Ok(None)
    }

    fn too_large(&self) -> Error {
        Error::Watch(format!("event exceeds the maximum size of {} bytes", self.max_event_size))
    }
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct BookmarkObject {
    metadata: BookmarkMeta,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct BookmarkMeta {
    resource_version: String,
    annotations: Option<BTreeMap<String, String>>,
}

/// Decodes one frame cut by [`WatchDecoder`]. `ERROR` events become
/// `Err(Error::Api(status))`.
///
/// The apiserver writes `type` before `object`, so the object is decoded as
/// what the type says in the same pass over the frame; an object before its
/// type is held as raw JSON and decoded once the type is known.
pub fn decode_event<T: DeserializeOwned>(frame: &[u8]) -> Result<WatchEvent<T>, Error> {
    decode_event_seed(frame, PhantomData::<T>)
}

/// [`decode_event`], the object decoded with `options` (e.g. without its
/// `metadata.managedFields`).
pub fn decode_event_with<T: DecodeWith>(frame: &[u8], options: DecodeOptions) -> Result<WatchEvent<T>, Error> {
    decode_event_seed(frame, WithOptions::<T>::new(options))
}

/// A frame whose object `object` reads.
fn decode_event_seed<T, S: frame::ObjectReader<T>>(frame: &[u8], object: S) -> Result<WatchEvent<T>, Error> {
    let decode_err = |what: &str, source| Error::Decode { what: what.to_owned(), source };
    let event =
        crate::codec::decode_json_seed(frame, frame::EventSeed(object)).map_err(|e| decode_err("watch event", e))?;
    let (kind, raw) = match event {
        frame::Event::Decoded(event) => return event,
        frame::Event::Raw(kind, raw) => (kind, raw),
    };
    if let frame::Kind::Unknown(kind) = kind {
        return Err(Error::UnknownWatchEventType(kind));
    }
    let raw = raw.ok_or_else(|| Error::Watch(format!("{kind} event without an object")))?;
    frame::decode_object(&kind, raw.get(), object).map_err(|e| decode_err(&kind.object_what(), e))?
}

mod frame {
    //! One pass over a watch event's JSON: `type` first, then `object`
    //! decoded as what the type says.

    use std::fmt;

    use serde::Deserialize;
    use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, Visitor};
    use serde_json::value::RawValue;

    use super::{Bookmark, BookmarkObject, Error, Status, WatchEvent};

    /// How an event's object is read: by its `Deserialize`
    /// (`PhantomData<T>`) or with decode options
    /// ([`WithOptions`](crate::codec::WithOptions)).
    pub(super) trait ObjectReader<T>: for<'de> DeserializeSeed<'de, Value = T> + Copy {}

    impl<T, S: for<'de> DeserializeSeed<'de, Value = T> + Copy> ObjectReader<T> for S {}

    /// An event's `type`.
    #[derive(Debug)]
    pub(super) enum Kind {
        Added,
        Modified,
        Deleted,
        Bookmark,
        Error,
        Unknown(String),
    }

    impl Kind {
        fn from_wire(s: &str) -> Kind {
            match s {
                "ADDED" => Kind::Added,
                "MODIFIED" => Kind::Modified,
                "DELETED" => Kind::Deleted,
                "BOOKMARK" => Kind::Bookmark,
                "ERROR" => Kind::Error,
                other => Kind::Unknown(other.to_owned()),
            }
        }

        /// What failed to decode, for errors.
        pub(super) fn object_what(&self) -> String {
            match self {
                Kind::Error => "ERROR status".into(),
                other => format!("{other} object"),
            }
        }
    }

    impl fmt::Display for Kind {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(match self {
                Kind::Added => "ADDED",
                Kind::Modified => "MODIFIED",
                Kind::Deleted => "DELETED",
                Kind::Bookmark => "BOOKMARK",
                Kind::Error => "ERROR",
                Kind::Unknown(s) => s,
            })
        }
    }

    impl<'de> Deserialize<'de> for Kind {
        fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Kind, D::Error> {
            crate::codec::deserialize_str_as(d, Kind::from_wire)
        }
    }

    /// The fields of an event.
    enum Field {
        Type,
        Object,
        Other,
    }

    impl<'de> Deserialize<'de> for Field {
        fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Field, D::Error> {
            crate::codec::deserialize_str_as(d, |s| match s {
                "type" => Field::Type,
                "object" => Field::Object,
                _ => Field::Other,
            })
        }
    }

    /// A frame decoded in one pass, or its type and raw object when the
    /// object came first.
    pub(super) enum Event<T> {
        Decoded(Result<WatchEvent<T>, Error>),
        Raw(Kind, Option<Box<RawValue>>),
    }

    /// The object of a `kind` event, read by `reader`.
    pub(super) fn decode_object<T, S: ObjectReader<T>>(
        kind: &Kind,
        json: &str,
        reader: S,
    ) -> Result<Result<WatchEvent<T>, Error>, serde_json::Error> {
        let mut d = serde_json::Deserializer::from_str(json);
        let event = object(kind, &mut d, reader)?;
        d.end()?;
        Ok(event)
    }

    fn object<'de, S: DeserializeSeed<'de>, D: de::Deserializer<'de>>(
        kind: &Kind,
        d: D,
        reader: S,
    ) -> Result<Result<WatchEvent<S::Value>, Error>, D::Error> {
        Ok(match kind {
            Kind::Added => Ok(WatchEvent::Added(reader.deserialize(d)?)),
            Kind::Modified => Ok(WatchEvent::Modified(reader.deserialize(d)?)),
            Kind::Deleted => Ok(WatchEvent::Deleted(reader.deserialize(d)?)),
            Kind::Bookmark => {
                let b = BookmarkObject::deserialize(d)?;
                Ok(WatchEvent::Bookmark(Bookmark {
                    resource_version: b.metadata.resource_version,
                    annotations: b.metadata.annotations.unwrap_or_default(),
                }))
            }
            Kind::Error => Err(Error::Api(Box::new(Status::deserialize(d)?))),
            Kind::Unknown(other) => {
                IgnoredAny::deserialize(d)?;
                Err(Error::UnknownWatchEventType(other.clone()))
            }
        })
    }

    /// The object as a map value, decoded as what `kind` says, by `reader`.
    struct ObjectSeed<'k, S>(&'k Kind, S);

    impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for ObjectSeed<'_, S> {
        type Value = Result<WatchEvent<S::Value>, Error>;
        fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            object(self.0, d, self.1)
        }
    }

    /// A whole event, its object read by `S`.
    pub(super) struct EventSeed<S>(pub(super) S);

    impl<'de, S: DeserializeSeed<'de> + Copy> DeserializeSeed<'de> for EventSeed<S> {
        type Value = Event<S::Value>;
        fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            struct V<S>(S);
            impl<'de, S: DeserializeSeed<'de> + Copy> Visitor<'de> for V<S> {
                type Value = Event<S::Value>;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("a watch event")
                }
                fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                    let mut kind: Option<Kind> = None;
                    let mut decoded = None;
                    let mut raw: Option<Box<RawValue>> = None;
                    while let Some(field) = map.next_key::<Field>()? {
                        match (field, &kind) {
                            (Field::Type, _) => kind = Some(map.next_value()?),
                            (Field::Object, Some(k)) => decoded = Some(map.next_value_seed(ObjectSeed(k, self.0))?),
                            (Field::Object, None) => raw = Some(map.next_value()?),
                            (Field::Other, _) => {
                                map.next_value::<IgnoredAny>()?;
                            }
                        }
                    }
                    let kind = kind.ok_or_else(|| de::Error::missing_field("type"))?;
                    Ok(match decoded {
                        Some(event) => Event::Decoded(event),
                        None => Event::Raw(kind, raw),
                    })
                }
            }
            d.deserialize_map(V(self.0))
        }
    }
}

/// Turns a watch response body into typed events. The stream ends after
/// the body ends or after the first decoding/transport error; an `ERROR`
/// event is yielded as an error and decoding continues (the server closes
/// the stream right after). An event of a type this client does not know
/// is logged and skipped: it carries nothing a cache could apply, and
/// ending the stream for it would cost a relist.
///
/// A last error for which [`Error::is_probable_eof`] holds (the connection
/// was reset or timed out, the body stopped inside an event) means the
/// connection broke, not that an event was bad: every complete event was
/// delivered, so watching again from the last resourceVersion loses
/// nothing. Anything else (a malformed event) is a reason to relist.
#[must_use = "a watch stream does nothing unless polled"]
pub fn watch_stream<T>(body: ByteStream, max_event_size: usize) -> WatchStream<T>
where
    T: DeserializeOwned + Send + 'static,
{
    watch_stream_seed(body, max_event_size, PhantomData::<T>)
}

/// [`watch_stream`], each object decoded with `options` (e.g. without its
/// `metadata.managedFields`).
#[must_use = "a watch stream does nothing unless polled"]
pub fn watch_stream_with<T>(body: ByteStream, max_event_size: usize, options: DecodeOptions) -> WatchStream<T>
where
    T: DecodeWith + Send + 'static,
{
    watch_stream_seed(body, max_event_size, WithOptions::<T>::new(options))
}

/// The events of `body`, each object read by `reader`.
fn watch_stream_seed<T, S>(body: ByteStream, max_event_size: usize, reader: S) -> WatchStream<T>
where
    T: Send + 'static,
    S: frame::ObjectReader<T> + Send + 'static,
{
    events(body, WatchDecoder::new(max_event_size), move |frame| decode_event_seed(frame, reader))
}

/// What cuts a watch body into frames: [`WatchDecoder`] for JSON, the
/// length-delimited frames of protobuf.
pub(super) trait Framer: Send + 'static {
    /// Appends bytes as they arrived.
    fn push(&mut self, chunk: &[u8]);
    /// The next complete frame, `Ok(None)` when more bytes are needed.
    fn next_frame(&mut self) -> Result<Option<Bytes>, Error>;
    /// Checks that the body ended between frames.
    fn finish(&self) -> Result<(), Error>;
}

impl Framer for WatchDecoder {
    fn push(&mut self, chunk: &[u8]) {
        WatchDecoder::push(self, chunk);
    }
    fn next_frame(&mut self) -> Result<Option<Bytes>, Error> {
        WatchDecoder::next_frame(self)
    }
    fn finish(&self) -> Result<(), Error> {
        WatchDecoder::finish(self)
    }
}

/// The events of `body`, cut by `framer`, each frame decoded by `decode`:
/// the rules of [`watch_stream`], whatever the format.
pub(super) fn events<T, F, D>(body: ByteStream, framer: F, decode: D) -> WatchStream<T>
where
    T: Send + 'static,
    F: Framer,
    D: Fn(&[u8]) -> Result<WatchEvent<T>, Error> + Send + 'static,
{
    struct State<F, D> {
        body: ByteStream,
        framer: F,
        decode: D,
        done: bool,
    }
    let state = State { body, framer, decode, done: false };
    futures_util::stream::unfold(state, |mut st| async move {
        if st.done {
            return None;
        }
        loop {
            match st.framer.next_frame() {
                Ok(Some(frame)) => {
                    let event = (st.decode)(&frame);
                    if let Err(Error::UnknownWatchEventType(kind)) = &event {
                        tracing::warn!(event_type = %kind.escape_debug(), "watch stream: skipped an event of unknown type");
                        continue;
                    }
                    if matches!(event, Err(ref e) if e.status().is_none()) {
                        st.done = true;
                    }
                    return Some((event, st));
                }
                Ok(None) => {}
                Err(e) => {
                    st.done = true;
                    return Some((Err(e), st));
                }
            }
            match st.body.next().await {
                Some(Ok(chunk)) => st.framer.push(&chunk),
                Some(Err(e)) => {
                    st.done = true;
                    return Some((Err(e), st));
                }
                None => {
                    st.done = true;
                    return st.framer.finish().err().map(|e| (Err(e), st));
                }
            }
        }
    })
    .boxed()
}

mod protobuf;

pub use protobuf::{decode_protobuf_event, protobuf_watch_stream};

#[cfg(test)]
mod tests;
