//! Field helpers for [`DecodeProto::merge_field`](super::DecodeProto::merge_field):
//! each reads one occurrence of a field, written with `wire_type`, into the
//! struct's field in place.
//!
//! When to use what, by the Rust field's type (`V` any [`FieldValue`]):
//! - `V` → [`value`]; `Option<V>` → [`option`]; `Option<Box<V>>` → [`option_box`];
//! - `ThinVec<V>` → [`repeated`]; `Option<ThinVec<V>>` → [`option_repeated`];
//! - `Map<V>` (`map<string, V>`) → [`map`]; `Option<Map<V>>` → [`option_map`];
//! - `ObjectMeta.managedFields` → [`managed_fields`], which honours
//!   [`DecodeOptions::skips_managed_fields`].
//!
//! A present value is `Some` even when it is the zero value (`""`, `0`,
//! `false`): on the wire, a field is there or not. Which Go fields are
//! pointers matters only for encoding.

use lean_string::LeanString;
use thin_vec::ThinVec;

use super::message::{FieldValue, for_each_field};
use super::wire::{Reader, WireType};
use super::{DecodeOptions, Error};
use crate::map::{Map, TextValue};
use crate::read::Staged;

/// A plain field: the value replaces (scalars) or is merged into (messages)
/// what the field holds.
#[inline]
pub fn value<V: FieldValue>(
    place: &mut V,
    wire_type: WireType,
    reader: &mut Reader<'_>,
    options: DecodeOptions,
) -> Result<(), Error> {
    place.merge_value(wire_type, reader, options)
}

/// An optional field: `Some` once present, even with a zero value; a
/// message given twice is merged.
#[inline]
pub fn option<V: FieldValue>(
    place: &mut Option<V>,
    wire_type: WireType,
    reader: &mut Reader<'_>,
    options: DecodeOptions,
) -> Result<(), Error> {
    place.get_or_insert_with(V::default).merge_value(wire_type, reader, options)
}

/// An optional field of a Go value (not pointer) field that JSON leaves out
/// when zero (`omitempty`, or a zero `metav1.Time`, written as `null`): Go
/// always writes it on the wire, so a zero value read here is `None`, as
/// the JSON decode of the same object has it.
#[inline]
pub fn option_unless_default<V: FieldValue + PartialEq>(
    place: &mut Option<V>,
    wire_type: WireType,
    reader: &mut Reader<'_>,
    options: DecodeOptions,
) -> Result<(), Error> {
    V::merge_unless_default(place, wire_type, reader, options)
}

/// A Go struct that JSON inlines into its parent but protobuf keeps as a
/// nested message (a `Volume`'s `VolumeSource`): `field` reads each of its
/// fields into the parent, errors naming `message`.
#[inline]
pub fn inline<'a>(
    message: &'static str,
    wire_type: WireType,
    reader: &mut Reader<'a>,
    field: impl FnMut(u32, WireType, &mut Reader<'a>) -> Result<(), Error>,
) -> Result<(), Error> {
    wire_type.expect(WireType::Len)?;
    for_each_field(message, &mut reader.nested()?, field)
}

/// An optional boxed field (a large or recursive message), as [`option`].
#[inline]
pub fn option_box<V: FieldValue>(
    place: &mut Option<Box<V>>,
    wire_type: WireType,
    reader: &mut Reader<'_>,
    options: DecodeOptions,
) -> Result<(), Error> {
    place.get_or_insert_with(Box::default).merge_value(wire_type, reader, options)
}

/// One element of a repeated field, appended; a message element is decoded
/// in place, at the end of the list. Numeric scalars are also read packed
/// (several in one length-delimited value), as protobuf requires of a
/// reader.
#[inline]
pub fn repeated<V: FieldValue>(
    place: &mut ThinVec<V>,
    wire_type: WireType,
    reader: &mut Reader<'_>,
    options: DecodeOptions,
) -> Result<(), Error> {
    if V::PACKABLE && wire_type == WireType::Len {
        let packed = reader.read_len()?;
        let mut values = Reader::new(packed);
        while !values.is_empty() {
            let mut item = V::default();
            item.merge_value(V::WIRE_TYPE, &mut values, options)?;
            place.push(item);
        }
        return Ok(());
    }
    // The element is checked before its room is made, so that a wrong
    // wire type leaves no default element behind.
    wire_type.expect(V::WIRE_TYPE)?;
    if place.is_empty() {
        // Sized for the whole run, as the JSON decoder sizes lists: a
        // list grown by doubling holds up to twice its elements' room.
        place.reserve_exact(reader.count_run(wire_type));
    }
    place.push(V::default());
    let at = place.len() - 1;
    let result = place[at].merge_value(wire_type, reader, options);
    if result.is_err() {
        place.pop();
    }
    result
}

/// One element of an optional repeated field: `Some` once an element is
/// present.
#[inline]
pub fn option_repeated<V: FieldValue>(
    place: &mut Option<ThinVec<V>>,
    wire_type: WireType,
    reader: &mut Reader<'_>,
    options: DecodeOptions,
) -> Result<(), Error> {
    repeated(place.get_or_insert_with(ThinVec::new), wire_type, reader, options)
}

/// `metadata.managedFields` (an optional list of messages): read as
/// [`option_repeated`], or skipped, leaving the field `None`, when
/// `options` [skip them](DecodeOptions::skips_managed_fields).
#[inline]
pub fn managed_fields<V: FieldValue>(
    place: &mut Option<ThinVec<V>>,
    wire_type: WireType,
    reader: &mut Reader<'_>,
    options: DecodeOptions,
) -> Result<(), Error> {
    if options.skips_managed_fields() {
        wire_type.expect(V::WIRE_TYPE)?;
        *place = None;
        return reader.skip(wire_type);
    }
    option_repeated(place, wire_type, reader, options)
}

/// One entry of a `map<string, V>` field (a message {key = 1, value = 2}),
/// inserted: of two entries with one key, the later wins. A missing key is
/// `""`, a missing value `V`'s default, as protobuf says. Keys repeated
/// across objects share one buffer ([`crate::codec::shared`]).
pub fn map<V: FieldValue + Clone>(
    place: &mut Map<V>,
    wire_type: WireType,
    reader: &mut Reader<'_>,
    options: DecodeOptions,
) -> Result<(), Error> {
    wire_type.expect(WireType::Len)?;
    let mut entry = reader.nested()?;
    let mut key: &str = "";
    let mut value = V::default();
    for_each_field(MAP_ENTRY, &mut entry, |number, wire_type, reader| match number {
        1 => {
            wire_type.expect(WireType::Len)?;
            key = reader.read_str()?;
            Ok(())
        }
        2 => value.merge_value(wire_type, reader, options),
        _ => reader.skip(wire_type),
    })?;
    let key: LeanString = crate::intern::shared(key);
    place.insert(key, value);
    Ok(())
}

/// One entry of an optional map field: `Some` once an entry is present.
pub fn option_map<V: FieldValue + Clone>(
    place: &mut Option<Map<V>>,
    wire_type: WireType,
    reader: &mut Reader<'_>,
    options: DecodeOptions,
) -> Result<(), Error> {
    map(place.get_or_insert_with(Map::new), wire_type, reader, options)
}

/// The message name errors give a map's entries.
pub(crate) const MAP_ENTRY: &str = "map entry";

/// A map of text (labels, annotations, node selectors, quantities) read
/// whole: this entry and the ones following it in the same run, looked up
/// as the text the input holds in this thread's table of recent maps
/// (the runtime's `intern` tables), so that equal maps share one array and a map found
/// there costs no allocation, as the JSON decoder reads them. Entries of
/// the same field given apart (not Go's writing) are added to the map.
pub fn shared_map<V: TextValue>(place: &mut Map<V>, wire_type: WireType, reader: &mut Reader<'_>) -> Result<(), Error> {
    let mut entries: Staged<(&str, &str)> = Staged::new();
    loop {
        wire_type.expect(WireType::Len)?;
        let mut entry = reader.nested()?;
        let (mut key, mut value) = ("", "");
        for_each_field(MAP_ENTRY, &mut entry, |number, wire_type, reader| match number {
            1 => {
                wire_type.expect(WireType::Len)?;
                key = reader.read_str()?;
                Ok(())
            }
            2 if V::PROTOBUF_MESSAGE => {
                wire_type.expect(WireType::Len)?;
                for_each_field("Quantity", &mut reader.nested()?, |number, wire_type, reader| match number {
                    1 => {
                        wire_type.expect(WireType::Len)?;
                        value = reader.read_str()?;
                        Ok(())
                    }
                    _ => reader.skip(wire_type),
                })
            }
            2 => {
                wire_type.expect(WireType::Len)?;
                value = reader.read_str()?;
                Ok(())
            }
            _ => reader.skip(wire_type),
        })?;
        entries.push((key, value));
        if !reader.next_in_run(wire_type) {
            break;
        }
    }
    if !place.is_empty() {
        for (key, value) in entries {
            place.insert(crate::intern::shared(key), V::from_text(value));
        }
        return Ok(());
    }
    *place = crate::map::shared_from_text(&mut entries);
    Ok(())
}

/// An optional map of text, as [`shared_map`].
pub fn option_shared_map<V: TextValue>(
    place: &mut Option<Map<V>>,
    wire_type: WireType,
    reader: &mut Reader<'_>,
) -> Result<(), Error> {
    shared_map(place.get_or_insert_with(Map::new), wire_type, reader)
}
