//! The envelope of every protobuf body the apiserver sends and takes: the
//! four bytes `k8s\0`, then a `runtime.Unknown` message {typeMeta = 1
//! {apiVersion = 1, kind = 2}, raw = 2, contentEncoding = 3, contentType =
//! 4}, whose `raw` is the object's own message (apimachinery's
//! `runtime/serializer/protobuf/protobuf.go`, `runtime/types_proto.go`).

use super::message::for_each_field;
use super::wire::{Reader, WireType, Writer, str_from_utf8};
use super::{DecodeOptions, DecodeProto, EncodeProto, Error, ErrorKind};

/// The prefix of Kubernetes' protobuf encoding.
pub const MAGIC: [u8; 4] = *b"k8s\0";

/// A decoded envelope, borrowing from the bytes it was read from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Envelope<'a> {
    /// `typeMeta.apiVersion` (`v1`, `apps/v1`).
    pub api_version: &'a str,
    /// `typeMeta.kind` (`Pod`).
    pub kind: &'a str,
    /// The object's message.
    pub raw: &'a [u8],
    /// How `raw` is compressed; empty (none) from the apiserver.
    pub content_encoding: &'a str,
    /// The media type of `raw`; empty (protobuf) from the apiserver.
    pub content_type: &'a str,
}

/// The message name errors give the envelope.
const UNKNOWN: &str = "runtime.Unknown";

impl<'a> Envelope<'a> {
    /// Reads `data`: the `k8s\0` prefix, then the `runtime.Unknown`.
    /// Anything else (a JSON body, say) is an [`ErrorKind::Magic`] that shows
    /// the bytes received.
    pub fn decode(data: &'a [u8]) -> Result<Envelope<'a>, Error> {
        let Some(message) = data.strip_prefix(&MAGIC) else {
            return Err(ErrorKind::Magic { received: super::error::describe_prefix(data) }.into());
        };
        if message.is_empty() {
            return Err(ErrorKind::EmptyBody.into());
        }
        Envelope::decode_unknown(message)
    }

    /// Reads a `runtime.Unknown` message without the prefix.
    pub fn decode_unknown(message: &'a [u8]) -> Result<Envelope<'a>, Error> {
        let mut envelope = Envelope::default();
        for_each_field(UNKNOWN, &mut Reader::new(message), |number, wire_type, reader| {
            let text = |reader: &mut Reader<'a>| -> Result<&'a str, Error> {
                wire_type.expect(WireType::Len)?;
                reader.read_str()
            };
            match number {
                1 => {
                    wire_type.expect(WireType::Len)?;
                    let mut type_meta = reader.nested()?;
                    for_each_field("runtime.TypeMeta", &mut type_meta, |number, wire_type, reader| {
                        let place = match number {
                            1 => &mut envelope.api_version,
                            2 => &mut envelope.kind,
                            _ => return reader.skip(wire_type),
                        };
                        wire_type.expect(WireType::Len)?;
                        *place = str_from_utf8(reader.read_len()?)?;
                        Ok(())
                    })
                }
                2 => {
                    wire_type.expect(WireType::Len)?;
                    envelope.raw = reader.read_len()?;
                    Ok(())
                }
                3 => text(reader).map(|t| envelope.content_encoding = t),
                4 => text(reader).map(|t| envelope.content_type = t),
                _ => reader.skip(wire_type),
            }
        })?;
        Ok(envelope)
    }

    /// The object `raw` holds, decoded as `T`.
    pub fn decode_object<T: DecodeProto>(&self, options: DecodeOptions) -> Result<T, Error> {
        T::decode(self.raw, options)
    }

    /// The envelope's bytes, prefix included, as Go writes them: every
    /// field, even empty.
    pub fn encode(&self) -> Vec<u8> {
        encode_with(self.api_version, self.kind, self.content_encoding, self.content_type, |writer| {
            writer.raw(self.raw)
        })
    }
}

/// `object` in an envelope of `api_version` and `kind`, as the apiserver
/// takes a request body: the object written straight into the envelope.
pub fn encode_object<T: EncodeProto + ?Sized>(api_version: &str, kind: &str, object: &T) -> Vec<u8> {
    encode_with(api_version, kind, "", "", |writer| object.encode_fields(writer))
}

fn encode_with(
    api_version: &str,
    kind: &str,
    content_encoding: &str,
    content_type: &str,
    raw: impl FnOnce(&mut Writer),
) -> Vec<u8> {
    let mut writer = Writer::new();
    writer.raw(&MAGIC);
    writer.key(1, WireType::Len);
    writer.len_delimited(|writer| {
        writer.key(1, WireType::Len);
        writer.bytes(api_version.as_bytes());
        writer.key(2, WireType::Len);
        writer.bytes(kind.as_bytes());
    });
    writer.key(2, WireType::Len);
    writer.len_delimited(raw);
    writer.key(3, WireType::Len);
    writer.bytes(content_encoding.as_bytes());
    writer.key(4, WireType::Len);
    writer.bytes(content_type.as_bytes());
    writer.into_vec()
}
