//! [`PartialObjectMetadata`] on the protobuf wire, as client-go's metadata
//! client asks for it: `metav1.PartialObjectMetadata` is `{metadata = 1}`,
//! its `ObjectMeta` the message every kind holds as field 1, so an
//! apiserver that answers with the whole object instead of the metadata
//! alone is read the same way (every other field skipped).
//!
//! Read as the JSON decoder reads the apiserver's JSON: Go writes every
//! string of `ObjectMeta` and `generation` even when empty, and an empty
//! one is absent (`None`), as the JSON omits it; the zero
//! `creationTimestamp` (an empty message) is absent too; labels,
//! annotations and strings longer than the inline size are shared with
//! equal ones decoded recently; `managedFields` become the JSON value the JSON
//! decoder holds (`fieldsV1` parsed from its raw text).

use serde::Deserialize;

use crate::LeanString;
use crate::codec::{CompactTimestamp, zero_time};
use crate::protobuf::special::{decode_json_value, decode_time, encode_json_value, encode_time};
use crate::protobuf::{
    Codec, DecodeOptions, DecodeProto, EncodeProto, Error, FieldValue, Reader, WireType, Writer, decode, encode,
    for_each_field,
};

use super::{OwnerReference, PartialMeta, PartialObjectMetadata};

/// The codec of [`PartialObjectMetadata`].
pub(super) const CODEC: Codec<PartialObjectMetadata> = Codec::of::<PartialObjectMetadata>();

impl DecodeProto for PartialObjectMetadata {
    const NAME: &'static str = "PartialObjectMetadata";

    /// The fields, then `apiVersion` and `kind`, which the message does not
    /// hold: a protobuf answer to [`ACCEPT_PROTOBUF`](super::ACCEPT_PROTOBUF)
    /// is always the metadata-only representation (whole objects, from a
    /// server that cannot transform, come only as plain JSON), and its
    /// items and watch events carry no type of their own.
    fn merge_from(&mut self, reader: &mut Reader<'_>, options: DecodeOptions) -> Result<(), Error> {
        crate::protobuf::merge_fields(self, reader, options)?;
        if self.api_version.is_empty() && self.kind.is_empty() {
            self.api_version = LeanString::from_static_str(super::API_VERSION);
            self.kind = LeanString::from_static_str(super::KIND);
        }
        Ok(())
    }

    fn merge_field(
        &mut self,
        number: u32,
        wire_type: WireType,
        reader: &mut Reader<'_>,
        options: DecodeOptions,
    ) -> Result<(), Error> {
        match number {
            1 => decode::value(&mut self.metadata, wire_type, reader, options),
            _ => reader.skip(wire_type),
        }
    }
}

impl EncodeProto for PartialObjectMetadata {
    fn encode_fields(&self, writer: &mut Writer) {
        encode::value(writer, 1, &self.metadata);
    }
}

/// A `metav1.Time` field: `None` for Go's zero time, as the JSON's `null`.
fn time(wire_type: WireType, reader: &mut Reader<'_>) -> Result<Option<CompactTimestamp>, Error> {
    wire_type.expect(WireType::Len)?;
    let time = decode_time(&mut reader.nested()?)?;
    Ok((time.timestamp() != zero_time()).then_some(time))
}

/// Writes a `metav1.Time` field; `None` as Go's zero time, an empty message.
fn write_time(writer: &mut Writer, number: u32, time: Option<CompactTimestamp>) {
    writer.key(number, WireType::Len);
    writer.len_delimited(|writer| {
        if let Some(time) = time {
            encode_time(writer, time);
        }
    });
}

impl DecodeProto for PartialMeta {
    const NAME: &'static str = "ObjectMeta";

    fn merge_field(
        &mut self,
        number: u32,
        wire_type: WireType,
        reader: &mut Reader<'_>,
        options: DecodeOptions,
    ) -> Result<(), Error> {
        match number {
            1 => decode::option_unless_default(&mut self.name, wire_type, reader, options),
            2 => decode::option_unless_default(&mut self.generate_name, wire_type, reader, options),
            3 => decode::option_unless_default(&mut self.namespace, wire_type, reader, options),
            4 => decode::option_unless_default(&mut self.self_link, wire_type, reader, options),
            5 => decode::option_unless_default(&mut self.uid, wire_type, reader, options),
            6 => decode::option_unless_default(&mut self.resource_version, wire_type, reader, options),
            7 => decode::option_unless_default(&mut self.generation, wire_type, reader, options),
            8 => time(wire_type, reader).map(|t| self.creation_timestamp = t),
            // A pointer in Go: present means set, even to the zero time.
            9 => {
                wire_type.expect(WireType::Len)?;
                self.deletion_timestamp = Some(decode_time(&mut reader.nested()?)?);
                Ok(())
            }
            10 => decode::option(&mut self.deletion_grace_period_seconds, wire_type, reader, options),
            11 => decode::option_shared_map(&mut self.labels, wire_type, reader),
            12 => decode::option_shared_map(&mut self.annotations, wire_type, reader),
            13 => decode::option_repeated(&mut self.owner_references, wire_type, reader, options),
            14 => decode::option_repeated(&mut self.finalizers, wire_type, reader, options),
            17 if options.skips_managed_fields() => {
                wire_type.expect(WireType::Len)?;
                self.managed_fields = None;
                reader.skip(wire_type)
            }
            17 => {
                let entry = managed_fields_entry(wire_type, reader)?;
                let list = self.managed_fields.get_or_insert_with(|| Box::new(serde_json::Value::Array(Vec::new())));
                if let serde_json::Value::Array(entries) = &mut **list {
                    entries.push(entry);
                }
                Ok(())
            }
            _ => reader.skip(wire_type),
        }
    }
}

impl EncodeProto for PartialMeta {
    fn encode_fields(&self, writer: &mut Writer) {
        encode::option_or_default(writer, 1, &self.name);
        encode::option_or_default(writer, 2, &self.generate_name);
        encode::option_or_default(writer, 3, &self.namespace);
        encode::option_or_default(writer, 4, &self.self_link);
        encode::option_or_default(writer, 5, &self.uid);
        encode::option_or_default(writer, 6, &self.resource_version);
        encode::option_or_default(writer, 7, &self.generation);
        write_time(writer, 8, self.creation_timestamp);
        if let Some(time) = self.deletion_timestamp {
            write_time(writer, 9, Some(time));
        }
        encode::option(writer, 10, &self.deletion_grace_period_seconds);
        encode::option_map(writer, 11, &self.labels);
        encode::option_map(writer, 12, &self.annotations);
        if let Some(owners) = &self.owner_references {
            encode::repeated(writer, 13, owners);
        }
        if let Some(finalizers) = &self.finalizers {
            encode::repeated(writer, 14, finalizers);
        }
        let entries = self.managed_fields.as_deref().and_then(serde_json::Value::as_array).into_iter().flatten();
        for entry in entries {
            writer.key(17, WireType::Len);
            writer.len_delimited(|writer| write_managed_fields_entry(writer, entry));
        }
    }
}

/// `ManagedFieldsEntry` fields, by number, and their JSON names.
const ENTRY_STRINGS: [(u32, &str); 5] =
    [(1, "manager"), (2, "operation"), (3, "apiVersion"), (6, "fieldsType"), (8, "subresource")];

/// One `metav1.ManagedFieldsEntry` as the JSON object the apiserver writes
/// (empty strings and an unset time left out).
fn managed_fields_entry(wire_type: WireType, reader: &mut Reader<'_>) -> Result<serde_json::Value, Error> {
    wire_type.expect(WireType::Len)?;
    let mut entry = serde_json::Map::new();
    for_each_field("ManagedFieldsEntry", &mut reader.nested()?, |number, wire_type, reader| {
        if let Some((_, name)) = ENTRY_STRINGS.iter().find(|(n, _)| *n == number) {
            wire_type.expect(WireType::Len)?;
            let text = reader.read_str()?;
            if !text.is_empty() {
                entry.insert((*name).to_owned(), serde_json::Value::String(text.to_owned()));
            }
            return Ok(());
        }
        match number {
            4 => {
                wire_type.expect(WireType::Len)?;
                let time = decode_time(&mut reader.nested()?)?;
                entry.insert("time".to_owned(), serde_json::to_value(super::Time(time)).unwrap_or_default());
                Ok(())
            }
            7 => {
                wire_type.expect(WireType::Len)?;
                let fields = decode_json_value("FieldsV1", &mut reader.nested()?)?;
                entry.insert("fieldsV1".to_owned(), fields);
                Ok(())
            }
            _ => reader.skip(wire_type),
        }
    })?;
    Ok(serde_json::Value::Object(entry))
}

/// Writes a `ManagedFieldsEntry` from its JSON form, as Go does: every
/// string (empty when absent), the time when set, `fieldsV1` when set.
fn write_managed_fields_entry(writer: &mut Writer, entry: &serde_json::Value) {
    let text = |name: &str| entry.get(name).and_then(serde_json::Value::as_str).unwrap_or_default();
    for (number, name) in &ENTRY_STRINGS[..3] {
        encode::value(writer, *number, &LeanString::from(text(name)));
    }
    let time = entry.get("time").and_then(|t| super::Time::deserialize(t).ok());
    if let Some(super::Time(time)) = time {
        write_time(writer, 4, Some(time));
    }
    encode::value(writer, 6, &LeanString::from(text("fieldsType")));
    if let Some(fields) = entry.get("fieldsV1").filter(|f| !f.is_null()) {
        writer.key(7, WireType::Len);
        writer.len_delimited(|writer| encode_json_value(writer, fields));
    }
    encode::value(writer, 8, &LeanString::from(text("subresource")));
}

impl DecodeProto for OwnerReference {
    const NAME: &'static str = "OwnerReference";

    fn merge_field(
        &mut self,
        number: u32,
        wire_type: WireType,
        reader: &mut Reader<'_>,
        options: DecodeOptions,
    ) -> Result<(), Error> {
        match number {
            // Strings past the inline size are shared with equal ones
            // (owners' kinds, versions and uids repeat).
            1 => self.kind.merge_value(wire_type, reader, options),
            3 => self.name.merge_value(wire_type, reader, options),
            4 => self.uid.merge_value(wire_type, reader, options),
            5 => self.api_version.merge_value(wire_type, reader, options),
            6 => decode::option(&mut self.controller, wire_type, reader, options),
            7 => decode::option(&mut self.block_owner_deletion, wire_type, reader, options),
            _ => reader.skip(wire_type),
        }
    }
}

impl EncodeProto for OwnerReference {
    fn encode_fields(&self, writer: &mut Writer) {
        encode::value(writer, 1, &self.kind);
        encode::value(writer, 3, &self.name);
        encode::value(writer, 4, &self.uid);
        encode::value(writer, 5, &self.api_version);
        encode::option(writer, 6, &self.controller);
        encode::option(writer, 7, &self.block_owner_deletion);
    }
}
