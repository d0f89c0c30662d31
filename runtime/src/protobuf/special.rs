//! The wire forms apimachinery gives its hand-written types, over the plain
//! values the generated types hold. A generated special type implements
//! [`DecodeProto`](super::DecodeProto) by overriding
//! [`merge_from`](super::DecodeProto::merge_from) with the decoder here
//! (its `merge_field` only skips), and [`EncodeProto`](super::EncodeProto)
//! with the encoder:
//!
//! | type | message | decoder / encoder |
//! |---|---|---|
//! | `metav1.Time` | `{seconds = 1, nanos = 2}` | [`decode_time`] / [`encode_time`] |
//! | `metav1.MicroTime` | `{seconds = 1, nanos = 2}` | [`decode_micro_time`] / [`encode_micro_time`] |
//! | `resource.Quantity` | `{string = 1}` | [`decode_quantity`] / [`encode_quantity`] |
//! | `intstr.IntOrString` | `{type = 1, intVal = 2, strVal = 3}` | [`decode_int_or_string`] / [`encode_int_or_string`] |
//! | `runtime.RawExtension` | `{raw = 1}` | [`decode_raw_extension`] / [`encode_raw_extension`] |
//!
//! What Go does, which these follow (apimachinery's `time_proto.go`,
//! `micro_time_proto.go`, `quantity_proto.go`, intstr's and runtime's
//! `generated.pb.go`):
//! - Go's zero time is an empty message, and an empty message is the zero
//!   time ([`zero_time`]); any other time writes
//!   both fields, even when 0.
//! - `Time` carries whole seconds: its nanos are written as 0 and ignored
//!   when read (its JSON form has no fraction either).
//! - `MicroTime` carries microseconds: nanos are truncated to them, written
//!   and read.
//! - A quantity is its text; Go's zero quantity writes `"0"`, and so does
//!   an empty text here (the generated `Quantity`'s default).
//! - `IntOrString` writes all three fields, whichever it holds.

use lean_string::LeanString;

use super::message::for_each_field;
use super::wire::{Reader, WireType, Writer, str_from_utf8};
use super::{DecodeOptions, Error, ErrorKind, FieldValue};
use crate::codec::{CompactTimestamp, IntOrStr, RawJson, Timestamp, zero_time};

/// A `metav1.Time` message: whole seconds (nanos ignored); the empty
/// message is Go's zero time.
pub fn decode_time(reader: &mut Reader<'_>) -> Result<CompactTimestamp, Error> {
    decode_timestamp("Time", reader, |_| 0)
}

/// A `metav1.MicroTime` message: seconds and nanos, truncated to
/// microseconds; the empty message is Go's zero time.
pub fn decode_micro_time(reader: &mut Reader<'_>) -> Result<CompactTimestamp, Error> {
    decode_timestamp("MicroTime", reader, |nanos| nanos - nanos % 1_000)
}

fn decode_timestamp(
    message: &'static str,
    reader: &mut Reader<'_>,
    nanos_kept: fn(i64) -> i64,
) -> Result<CompactTimestamp, Error> {
    if reader.is_empty() {
        return Ok(zero_time().into());
    }
    let (mut seconds, mut nanos) = (0i64, 0i32);
    let options = DecodeOptions::default();
    for_each_field(message, reader, |number, wire_type, reader| match number {
        1 => seconds.merge_value(wire_type, reader, options),
        2 => nanos.merge_value(wire_type, reader, options),
        _ => reader.skip(wire_type),
    })?;
    // Go's `time.Unix` takes nanos outside a second and carries them.
    let nanos = nanos_kept(i64::from(nanos));
    let whole = seconds.checked_add(nanos.div_euclid(1_000_000_000));
    whole
        .and_then(|whole| Timestamp::new(whole, nanos.rem_euclid(1_000_000_000) as i32).ok())
        .map(CompactTimestamp::from)
        .ok_or_else(|| ErrorKind::TimeOutOfRange { seconds }.into())
}

/// Writes a `metav1.Time` message: nothing for Go's zero time, else the
/// seconds (rounded down) and nanos 0.
pub fn encode_time(writer: &mut Writer, time: CompactTimestamp) {
    encode_timestamp(writer, time, |_| 0);
}

/// Writes a `metav1.MicroTime` message: nothing for Go's zero time, else
/// the seconds (rounded down) and the nanos truncated to microseconds.
pub fn encode_micro_time(writer: &mut Writer, time: CompactTimestamp) {
    encode_timestamp(writer, time, |nanos| nanos - nanos % 1_000);
}

fn encode_timestamp(writer: &mut Writer, time: CompactTimestamp, nanos_kept: fn(i32) -> i32) {
    let time = time.timestamp();
    if time == zero_time() {
        return;
    }
    let (mut seconds, mut nanos) = (time.as_second(), time.subsec_nanosecond());
    if nanos < 0 {
        // jiff counts a fraction before the epoch backwards; Go forwards.
        seconds -= 1;
        nanos += 1_000_000_000;
    }
    super::encode::value(writer, 1, &seconds);
    super::encode::value(writer, 2, &nanos_kept(nanos));
}

/// A `resource.Quantity` message: its text, as written (not parsed).
pub fn decode_quantity(reader: &mut Reader<'_>) -> Result<LeanString, Error> {
    let mut text = LeanString::new();
    for_each_field("Quantity", reader, |number, wire_type, reader| match number {
        1 => text.merge_value(wire_type, reader, DecodeOptions::default()),
        _ => reader.skip(wire_type),
    })?;
    Ok(text)
}

/// Writes a `resource.Quantity` message: its text, `"0"` for an empty one
/// (as Go writes its zero quantity).
pub fn encode_quantity(writer: &mut Writer, text: &str) {
    writer.key(1, WireType::Len);
    writer.bytes(if text.is_empty() { b"0" } else { text.as_bytes() });
}

/// An `intstr.IntOrString` message: type 0 is the int, 1 the string.
pub fn decode_int_or_string(reader: &mut Reader<'_>) -> Result<IntOrStr, Error> {
    let (mut kind, mut int, mut text) = (0i64, 0i32, LeanString::new());
    let options = DecodeOptions::default();
    for_each_field("IntOrString", reader, |number, wire_type, reader| match number {
        1 => kind.merge_value(wire_type, reader, options),
        2 => int.merge_value(wire_type, reader, options),
        3 => text.merge_value(wire_type, reader, options),
        _ => reader.skip(wire_type),
    })?;
    match kind {
        0 => Ok(IntOrStr::Int(int)),
        1 => Ok(IntOrStr::Str(text)),
        other => Err(Error::from(ErrorKind::IntOrStringType(other)).in_field("IntOrString", 1, WireType::Varint)),
    }
}

/// Writes an `intstr.IntOrString` message: all three fields, the one not
/// held as its zero value.
pub fn encode_int_or_string(writer: &mut Writer, value: &IntOrStr) {
    let (kind, int, text) = match value {
        IntOrStr::Int(int) => (0i64, *int, ""),
        IntOrStr::Str(text) => (1, 0, text.as_str()),
    };
    super::encode::value(writer, 1, &kind);
    super::encode::value(writer, 2, &int);
    writer.key(3, WireType::Len);
    writer.bytes(text.as_bytes());
}

/// A `runtime.RawExtension` message: its raw bytes (JSON, or an embedded
/// object's `k8s\0` envelope), borrowed from the input.
pub fn decode_raw_extension<'a>(reader: &mut Reader<'a>) -> Result<&'a [u8], Error> {
    let mut raw: &'a [u8] = &[];
    for_each_field("RawExtension", reader, |number, wire_type, reader| match number {
        1 => {
            wire_type.expect(WireType::Len)?;
            raw = reader.read_len()?;
            Ok(())
        }
        _ => reader.skip(wire_type),
    })?;
    Ok(raw)
}

/// Writes a `runtime.RawExtension` message: its raw bytes.
pub fn encode_raw_extension(writer: &mut Writer, raw: &[u8]) {
    writer.key(1, WireType::Len);
    writer.bytes(raw);
}

/// A message whose `raw = 1` bytes hold one JSON value (`RawExtension`,
/// apiextensions' `JSON`), parsed; no bytes (Go's nil) are `null`.
pub fn decode_json_value(message: &'static str, reader: &mut Reader<'_>) -> Result<serde_json::Value, Error> {
    let raw = decode_raw_extension(reader)?;
    if raw.is_empty() {
        return Ok(serde_json::Value::Null);
    }
    serde_json::from_slice(raw).map_err(|e| raw_not_json(message, &e, raw))
}

/// Writes a message whose `raw = 1` bytes hold `value` as compact JSON;
/// `null` writes no bytes (Go's nil `Raw`).
pub fn encode_json_value(writer: &mut Writer, value: &serde_json::Value) {
    if !value.is_null() {
        // Writing a `Value` to a `Vec` cannot fail: its keys are strings.
        encode_raw_extension(writer, &serde_json::to_vec(value).unwrap_or_default());
    }
}

/// A `FieldsV1` message (`raw = 1`): its JSON text, kept as written.
pub fn decode_raw_json(reader: &mut Reader<'_>) -> Result<RawJson, Error> {
    let raw = decode_raw_extension(reader)?;
    if raw.is_empty() {
        return Ok(RawJson::default());
    }
    let text = str_from_utf8(raw)?;
    // Checked once per distinct text per thread: the objects of one
    // workload carry the same managedFields.
    crate::intern::checked_raw_json(text).map_err(|e| raw_not_json("FieldsV1", &e, raw))
}

/// Writes a `FieldsV1` message: its JSON text as the raw bytes.
pub fn encode_raw_json(writer: &mut Writer, json: &RawJson) {
    encode_raw_extension(writer, json.as_str().as_bytes());
}

fn raw_not_json(message: &'static str, reason: &dyn std::fmt::Display, raw: &[u8]) -> Error {
    ErrorKind::RawNotJson { message, reason: reason.to_string(), received: super::error::describe_prefix(raw) }.into()
}
