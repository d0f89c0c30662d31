//! Field helpers for [`EncodeProto::encode_fields`](super::EncodeProto::encode_fields):
//! each writes one field, key and value, called in ascending field-number
//! order.
//!
//! Go writes a field of a non-pointer type always, even when it holds the
//! zero value (`""`, `0`, `false`, an empty message), and leaves out a nil
//! pointer, an empty list and an empty map. Which one a field is comes from
//! the Go type, not the `.proto`; the generator picks the helper:
//! - non-pointer Go field held as `V` → [`value`] (always written);
//! - pointer Go field held as `Option<V>` → [`option`] (`None` left out);
//! - non-pointer Go field held as `Option<V>` → [`option_or_default`]
//!   (`None` written as the zero value, as Go would write its zero);
//!   boxed: [`option_box`], [`option_box_or_default`];
//! - Go `[]byte` held as a plain [`ByteString`](crate::codec::ByteString)
//!   (Go leaves out a nil slice) → [`unless_default`];
//! - lists → [`repeated`] (unpacked, as Go writes them; `Option<ThinVec>`:
//!   `field.as_deref().unwrap_or_default()`);
//! - maps → [`map`] / [`option_map`] (entries in key order, as Go sorts them).

use super::message::FieldValue;
use super::wire::{WireType, Writer};
use crate::map::Map;

/// A field written always, even with its zero value.
#[inline]
pub fn value<V: FieldValue>(writer: &mut Writer, number: u32, value: &V) {
    writer.key(number, V::WIRE_TYPE);
    value.encode_value(writer);
}

/// An optional field: written when `Some` (even with a zero value), left
/// out when `None`.
#[inline]
pub fn option<V: FieldValue>(writer: &mut Writer, number: u32, place: &Option<V>) {
    if let Some(v) = place {
        value(writer, number, v);
    }
}

/// An optional field of a Go type that is not a pointer: `None` written as
/// the zero value.
#[inline]
pub fn option_or_default<V: FieldValue>(writer: &mut Writer, number: u32, place: &Option<V>) {
    match place {
        Some(v) => value(writer, number, v),
        None => value(writer, number, &V::default()),
    }
}

/// An optional boxed field: written when `Some`, left out when `None`.
#[inline]
pub fn option_box<V: FieldValue>(writer: &mut Writer, number: u32, place: &Option<Box<V>>) {
    if let Some(v) = place {
        value(writer, number, &**v);
    }
}

/// An optional boxed field of a Go type that is not a pointer: `None`
/// written as the zero value.
#[inline]
pub fn option_box_or_default<V: FieldValue>(writer: &mut Writer, number: u32, place: &Option<Box<V>>) {
    match place {
        Some(v) => value(writer, number, &**v),
        None => value(writer, number, &V::default()),
    }
}

/// A field written only when it differs from its default: a Go `[]byte`
/// held as a plain `ByteString`, which Go leaves out when nil.
#[inline]
pub fn unless_default<V: FieldValue + PartialEq>(writer: &mut Writer, number: u32, place: &V) {
    if *place != V::default() {
        value(writer, number, place);
    }
}

/// A repeated field: one key and value per element (unpacked, as Go
/// writes the `proto2` fields of Kubernetes); nothing for an empty list.
#[inline]
pub fn repeated<V: FieldValue>(writer: &mut Writer, number: u32, items: &[V]) {
    for item in items {
        value(writer, number, item);
    }
}

/// A `map<string, V>` field: one entry message {key = 1, value = 2} per
/// entry, in key order, both always written (as Go writes them); nothing
/// for an empty map.
pub fn map<V: FieldValue>(writer: &mut Writer, number: u32, entries: &Map<V>) {
    for (key, item) in entries {
        writer.key(number, WireType::Len);
        writer.len_delimited(|writer| {
            writer.key(1, WireType::Len);
            writer.bytes(key.as_bytes());
            value(writer, 2, item);
        });
    }
}

/// An optional map field: its entries, nothing for `None`.
#[inline]
pub fn option_map<V: FieldValue>(writer: &mut Writer, number: u32, entries: &Option<Map<V>>) {
    if let Some(entries) = entries {
        map(writer, number, entries);
    }
}
