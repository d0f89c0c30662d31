//! `metav1.Status` over protobuf: the apiserver answers a request that
//! accepted protobuf with its errors in protobuf too, and a protobuf watch
//! carries its `ERROR` events' Status the same way.
//!
//! Numbers from apimachinery's `meta/v1/generated.proto`: Status {metadata
//! = 1, status = 2, message = 3, reason = 4, details = 5, code = 6},
//! StatusDetails {name = 1, group = 2, kind = 3, causes = 4,
//! retryAfterSeconds = 5, uid = 6}, StatusCause {reason = 1, message = 2,
//! field = 3}. Go writes every non-pointer field, empty or not; what JSON
//! leaves out when empty (`omitempty`) is read back as absent here, so that
//! the same answer decodes alike in both formats.

use crate::object::ListMeta;
use crate::protobuf::{
    DecodeOptions, DecodeProto, EncodeProto, Envelope, Error, Reader, WireType, Writer, decode, encode,
};

use super::{Status, StatusCause, StatusDetails};

impl Status {
    /// Decodes a protobuf response body (`k8s\0` envelope) as a Status if
    /// it is one (envelope kind `Status`).
    pub fn from_protobuf(body: &[u8]) -> Option<Status> {
        let envelope = Envelope::decode(body).ok()?;
        if envelope.kind != "Status" {
            return None;
        }
        Status::from_envelope(&envelope).ok()
    }

    /// The Status an envelope holds, with the envelope's apiVersion and
    /// kind.
    pub fn from_envelope(envelope: &Envelope<'_>) -> Result<Status, Error> {
        let mut status: Status = envelope.decode_object(DecodeOptions::default())?;
        status.api_version = Some(envelope.api_version.to_owned()).filter(|v| !v.is_empty());
        status.kind = Some(envelope.kind.to_owned()).filter(|k| !k.is_empty());
        Ok(status)
    }
}

/// An `int32` field.
fn int32(wire_type: WireType, reader: &mut Reader<'_>) -> Result<i32, Error> {
    let mut value = 0i32;
    decode::value(&mut value, wire_type, reader, DecodeOptions::default())?;
    Ok(value)
}

impl DecodeProto for Status {
    const NAME: &'static str = "Status";

    fn merge_field(
        &mut self,
        number: u32,
        wire_type: WireType,
        reader: &mut Reader<'_>,
        options: DecodeOptions,
    ) -> Result<(), Error> {
        match number {
            2 => decode::option_unless_default(&mut self.status, wire_type, reader, options),
            3 => decode::value(&mut self.message, wire_type, reader, options),
            4 => decode::value(&mut self.reason, wire_type, reader, options),
            5 => decode::option(&mut self.details, wire_type, reader, options),
            // A code outside HTTP's range is no code; the response's own
            // status code fills it in.
            6 => int32(wire_type, reader).map(|code| self.code = u16::try_from(code).unwrap_or(0)),
            _ => reader.skip(wire_type),
        }
    }
}

/// As Go writes a Status (its `metadata` empty: a Status has none to say).
impl EncodeProto for Status {
    fn encode_fields(&self, writer: &mut Writer) {
        encode::value(writer, 1, &ListMeta::default());
        encode::option_or_default(writer, 2, &self.status);
        encode::value(writer, 3, &self.message);
        encode::value(writer, 4, &self.reason);
        encode::option(writer, 5, &self.details);
        encode::value(writer, 6, &i32::from(self.code));
    }
}

impl DecodeProto for StatusDetails {
    const NAME: &'static str = "StatusDetails";

    fn merge_field(
        &mut self,
        number: u32,
        wire_type: WireType,
        reader: &mut Reader<'_>,
        options: DecodeOptions,
    ) -> Result<(), Error> {
        match number {
            1 => decode::value(&mut self.name, wire_type, reader, options),
            2 => decode::value(&mut self.group, wire_type, reader, options),
            3 => decode::value(&mut self.kind, wire_type, reader, options),
            4 => {
                let mut cause = StatusCause::default();
                decode::value(&mut cause, wire_type, reader, options)?;
                self.causes.push(cause);
                Ok(())
            }
            // Zero (or less) is JSON's absent value.
            5 => int32(wire_type, reader).map(|s| self.retry_after_seconds = u32::try_from(s).ok().filter(|&s| s > 0)),
            6 => decode::value(&mut self.uid, wire_type, reader, options),
            _ => reader.skip(wire_type),
        }
    }
}

impl EncodeProto for StatusDetails {
    fn encode_fields(&self, writer: &mut Writer) {
        encode::value(writer, 1, &self.name);
        encode::value(writer, 2, &self.group);
        encode::value(writer, 3, &self.kind);
        for cause in &self.causes {
            encode::value(writer, 4, cause);
        }
        let retry = self.retry_after_seconds.map_or(0, |s| i32::try_from(s).unwrap_or(i32::MAX));
        encode::value(writer, 5, &retry);
        encode::value(writer, 6, &self.uid);
    }
}

impl DecodeProto for StatusCause {
    const NAME: &'static str = "StatusCause";

    fn merge_field(
        &mut self,
        number: u32,
        wire_type: WireType,
        reader: &mut Reader<'_>,
        options: DecodeOptions,
    ) -> Result<(), Error> {
        match number {
            1 => decode::value(&mut self.reason, wire_type, reader, options),
            2 => decode::value(&mut self.message, wire_type, reader, options),
            3 => decode::value(&mut self.field, wire_type, reader, options),
            _ => reader.skip(wire_type),
        }
    }
}

impl EncodeProto for StatusCause {
    fn encode_fields(&self, writer: &mut Writer) {
        encode::value(writer, 1, &self.reason);
        encode::value(writer, 2, &self.message);
        encode::value(writer, 3, &self.field);
    }
}
