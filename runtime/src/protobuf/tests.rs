//! Test types written as the generator will write them, and the tests.

use lean_string::LeanString;
use thin_vec::ThinVec;

use super::*;
use crate::codec::{CompactTimestamp, zero_time};
use crate::map::Map;

mod go_reference;
mod helpers;
mod malformed;
mod roundtrip;

/// Hex to bytes, for the expected bytes of the tests.
fn hex(text: &str) -> Vec<u8> {
    let text: String = text.split_whitespace().collect();
    (0..text.len()).step_by(2).map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap()).collect()
}

/// `metav1.Time`, as the generated type holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Time(CompactTimestamp);

impl Default for Time {
    fn default() -> Self {
        Time(zero_time().into())
    }
}

impl Time {
    fn at(seconds: i64, nanos: i32) -> Time {
        Time(crate::codec::Timestamp::new(seconds, nanos).unwrap().into())
    }
}

impl DecodeProto for Time {
    const NAME: &'static str = "Time";
    fn merge_field(
        &mut self,
        _: u32,
        wire_type: WireType,
        reader: &mut Reader<'_>,
        _: DecodeOptions,
    ) -> Result<(), Error> {
        reader.skip(wire_type)
    }
    fn merge_from(&mut self, reader: &mut Reader<'_>, _: DecodeOptions) -> Result<(), Error> {
        self.0 = special::decode_time(reader)?;
        Ok(())
    }
}

impl EncodeProto for Time {
    fn encode_fields(&self, writer: &mut Writer) {
        special::encode_time(writer, self.0);
    }
}

/// `resource.Quantity`, as the generated type holds it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Quantity(LeanString);

impl DecodeProto for Quantity {
    const NAME: &'static str = "Quantity";
    fn merge_field(
        &mut self,
        _: u32,
        wire_type: WireType,
        reader: &mut Reader<'_>,
        _: DecodeOptions,
    ) -> Result<(), Error> {
        reader.skip(wire_type)
    }
    fn merge_from(&mut self, reader: &mut Reader<'_>, _: DecodeOptions) -> Result<(), Error> {
        self.0 = special::decode_quantity(reader)?;
        Ok(())
    }
}

impl EncodeProto for Quantity {
    fn encode_fields(&self, writer: &mut Writer) {
        special::encode_quantity(writer, &self.0);
    }
}

/// A `ManagedFieldsEntry` reduced to its manager (field 1).
#[derive(Debug, Clone, Default, PartialEq)]
struct ManagedEntry {
    manager: Option<LeanString>,
}

impl DecodeProto for ManagedEntry {
    const NAME: &'static str = "ManagedFieldsEntry";
    fn merge_field(
        &mut self,
        number: u32,
        wire_type: WireType,
        reader: &mut Reader<'_>,
        options: DecodeOptions,
    ) -> Result<(), Error> {
        match number {
            1 => decode::option(&mut self.manager, wire_type, reader, options),
            _ => reader.skip(wire_type),
        }
    }
}

impl EncodeProto for ManagedEntry {
    fn encode_fields(&self, writer: &mut Writer) {
        encode::option_or_default(writer, 1, &self.manager);
    }
}

/// `metav1.ObjectMeta`'s fields up to the finalizers and managedFields,
/// numbered as `generated.proto` numbers them, presence as in Go.
#[derive(Debug, Clone, Default, PartialEq)]
struct ObjectMeta {
    name: Option<LeanString>,
    generate_name: Option<LeanString>,
    namespace: Option<LeanString>,
    self_link: LeanString,
    uid: Option<LeanString>,
    resource_version: Option<LeanString>,
    generation: Option<i64>,
    creation_timestamp: Option<Time>,
    deletion_timestamp: Option<Time>,
    deletion_grace_period_seconds: Option<i64>,
    labels: Option<Map>,
    annotations: Option<Map>,
    finalizers: Option<ThinVec<LeanString>>,
    managed_fields: Option<ThinVec<ManagedEntry>>,
}

impl DecodeProto for ObjectMeta {
    const NAME: &'static str = "ObjectMeta";
    fn merge_field(
        &mut self,
        number: u32,
        wire_type: WireType,
        reader: &mut Reader<'_>,
        options: DecodeOptions,
    ) -> Result<(), Error> {
        match number {
            1 => decode::option(&mut self.name, wire_type, reader, options),
            2 => decode::option(&mut self.generate_name, wire_type, reader, options),
            3 => decode::option(&mut self.namespace, wire_type, reader, options),
            4 => decode::value(&mut self.self_link, wire_type, reader, options),
            5 => decode::option(&mut self.uid, wire_type, reader, options),
            6 => decode::option(&mut self.resource_version, wire_type, reader, options),
            7 => decode::option(&mut self.generation, wire_type, reader, options),
            8 => decode::option(&mut self.creation_timestamp, wire_type, reader, options),
            9 => decode::option(&mut self.deletion_timestamp, wire_type, reader, options),
            10 => decode::option(&mut self.deletion_grace_period_seconds, wire_type, reader, options),
            11 => decode::option_map(&mut self.labels, wire_type, reader, options),
            12 => decode::option_map(&mut self.annotations, wire_type, reader, options),
            14 => decode::option_repeated(&mut self.finalizers, wire_type, reader, options),
            17 => decode::managed_fields(&mut self.managed_fields, wire_type, reader, options),
            _ => reader.skip(wire_type),
        }
    }
}

impl EncodeProto for ObjectMeta {
    fn encode_fields(&self, writer: &mut Writer) {
        encode::option_or_default(writer, 1, &self.name);
        encode::option_or_default(writer, 2, &self.generate_name);
        encode::option_or_default(writer, 3, &self.namespace);
        encode::value(writer, 4, &self.self_link);
        encode::option_or_default(writer, 5, &self.uid);
        encode::option_or_default(writer, 6, &self.resource_version);
        encode::option_or_default(writer, 7, &self.generation);
        encode::option_or_default(writer, 8, &self.creation_timestamp);
        encode::option(writer, 9, &self.deletion_timestamp);
        encode::option(writer, 10, &self.deletion_grace_period_seconds);
        encode::option_map(writer, 11, &self.labels);
        encode::option_map(writer, 12, &self.annotations);
        encode::repeated(writer, 14, self.finalizers.as_deref().unwrap_or_default());
        encode::repeated(writer, 17, self.managed_fields.as_deref().unwrap_or_default());
    }
}

/// `core/v1.ConfigMap`: metadata = 1, data = 2.
#[derive(Debug, Clone, Default, PartialEq)]
struct ConfigMap {
    metadata: ObjectMeta,
    data: Option<Map>,
}

impl DecodeProto for ConfigMap {
    const NAME: &'static str = "ConfigMap";
    fn merge_field(
        &mut self,
        number: u32,
        wire_type: WireType,
        reader: &mut Reader<'_>,
        options: DecodeOptions,
    ) -> Result<(), Error> {
        match number {
            1 => decode::value(&mut self.metadata, wire_type, reader, options),
            2 => decode::option_map(&mut self.data, wire_type, reader, options),
            _ => reader.skip(wire_type),
        }
    }
}

impl EncodeProto for ConfigMap {
    fn encode_fields(&self, writer: &mut Writer) {
        encode::value(writer, 1, &self.metadata);
        encode::option_map(writer, 2, &self.data);
    }
}

/// `core/v1.ResourceRequirements`: limits = 1, requests = 2 (maps of
/// quantities).
#[derive(Debug, Clone, Default, PartialEq)]
struct ResourceRequirements {
    limits: Option<Map<Quantity>>,
    requests: Option<Map<Quantity>>,
}

impl DecodeProto for ResourceRequirements {
    const NAME: &'static str = "ResourceRequirements";
    fn merge_field(
        &mut self,
        number: u32,
        wire_type: WireType,
        reader: &mut Reader<'_>,
        options: DecodeOptions,
    ) -> Result<(), Error> {
        match number {
            1 => decode::option_map(&mut self.limits, wire_type, reader, options),
            2 => decode::option_map(&mut self.requests, wire_type, reader, options),
            _ => reader.skip(wire_type),
        }
    }
}

impl EncodeProto for ResourceRequirements {
    fn encode_fields(&self, writer: &mut Writer) {
        encode::option_map(writer, 1, &self.limits);
        encode::option_map(writer, 2, &self.requests);
    }
}
