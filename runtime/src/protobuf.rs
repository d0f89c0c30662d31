//! Kubernetes' protobuf wire format (`application/vnd.kubernetes.protobuf`),
//! decoded straight into the generated structs and encoded from them.
//!
//! When to use what:
//! - [`Envelope`]: a response or request body, `k8s\0` then a
//!   `runtime.Unknown` holding the object's apiVersion, kind and message;
//!   [`encode_object`] wraps an object for a request.
//! - [`FrameDecoder`] and [`WatchEventFrame`]: a watch body
//!   (`;stream=watch`), length-delimited frames each holding a
//!   `metav1.WatchEvent`, whose object is an envelope again.
//! - [`DecodeProto`] / [`EncodeProto`]: what a generated struct implements,
//!   field by field, through the helpers of [`decode`] and [`encode`]; the
//!   same shape as the JSON side's
//!   [`DecodeFields`](crate::codec::fields::DecodeFields): decoded in place
//!   into the type's `Default`, [`DecodeOptions`] passed down to every
//!   field.
//! - [`Codec`]: a kind's decoder and encoder as a value, which its
//!   [`Resource::PROTOBUF`](crate::object::Resource::PROTOBUF) holds when
//!   it speaks protobuf; generic code (clients, watches, informers) goes
//!   through it.
//! - [`FieldValue`]: one value of a field (scalar, string, bytes, message),
//!   which the helpers are generic over.
//! - [`special`]: apimachinery's hand-written wire forms (times,
//!   quantities, int-or-string, raw extensions) over plain values.
//! - [`Reader`] / [`Writer`]: the wire itself, for what the above do not
//!   cover.
//!
//! Decoding follows protobuf and Go: fields a type does not know (a newer
//! server's) are skipped, whatever their wire type, groups excepted; a
//! field given twice is read twice (scalars replaced, messages merged,
//! lists and maps appended to). Every failure is an [`Error`] naming the
//! message types and field numbers down to it; no input makes the decoder
//! panic, and nesting is bounded by [`MAX_DEPTH`].
//!
//! Encoding writes what Go's generated marshalers write, byte for byte:
//! fields in ascending number order, maps in key order, repeated scalars
//! unpacked, non-pointer fields even when zero (see [`encode`]).

mod codec;
mod envelope;
mod error;
mod message;
mod watch;
mod wire;

pub mod decode;
pub mod encode;
pub mod special;

pub use crate::codec::DecodeOptions;
pub use codec::Codec;
pub use envelope::{Envelope, MAGIC, encode_object};
pub use error::{Error, ErrorKind};
pub(crate) use message::for_each_field;
pub use message::{DecodeProto, EncodeProto, FieldValue, merge_fields};
pub use watch::{FrameDecoder, WatchEventFrame, encode_frame, encode_watch_event};
pub use wire::{MAX_DEPTH, Reader, WireType, Writer};

#[cfg(test)]
mod tests;
