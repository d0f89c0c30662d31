//! A kind that speaks protobuf, written by hand as the generator writes
//! one: core/v1 `ConfigMap` {metadata = 1, data = 2}, its metadata the
//! runtime's [`Meta`] read and written as `ObjectMeta` {name = 1,
//! generateName = 2, namespace = 3, selfLink = 4, uid = 5,
//! resourceVersion = 6, generation = 7, creationTimestamp = 8, annotations
//! = 12, managedFields = 17}, each entry reduced to its manager. Its bytes
//! are Go's, byte for byte, for the objects the tests use; and the bytes
//! Go wrote for the tests' answers.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::protobuf::{DecodeOptions, DecodeProto, EncodeProto, Error, Reader, WireType, Writer, decode, encode};
use crate::testing::Meta;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct ConfigMap {
    #[serde(default)]
    pub metadata: Meta,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub data: BTreeMap<String, String>,
}

crate::impl_resource!(
    ConfigMap, "", "v1", "v1", "ConfigMap", "configmaps", Namespaced, "ConfigMapList", Meta; protobuf if all()
);
crate::impl_verbs!(ConfigMap: Get, List, Watch, Create, Update, Patch, Delete, DeleteCollection);
// Config maps have no status; the test kind has one to test `update_status`.
impl crate::rest::HasStatus for ConfigMap {}

impl crate::codec::DecodeWith for ConfigMap {
    fn deserialize_with<'de, D: serde::Deserializer<'de>>(d: D, options: DecodeOptions) -> Result<Self, D::Error> {
        crate::object::deserialize_then_apply(d, options)
    }
}

/// A `ConfigMap` in `ns` with a resourceVersion and one datum.
pub(crate) fn config_map(name: &str, resource_version: &str, data: &[(&str, &str)]) -> ConfigMap {
    ConfigMap {
        metadata: Meta {
            name: Some(name.into()),
            namespace: Some("ns".into()),
            resource_version: Some(resource_version.into()),
            ..Meta::default()
        },
        data: data.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
    }
}

fn string(wire_type: WireType, reader: &mut Reader<'_>) -> Result<String, Error> {
    wire_type.expect(WireType::Len)?;
    Ok(reader.read_str()?.to_owned())
}

fn write_str(writer: &mut Writer, number: u32, text: &str) {
    writer.key(number, WireType::Len);
    writer.bytes(text.as_bytes());
}

/// A `map<string, string>` entry.
fn entry(wire_type: WireType, reader: &mut Reader<'_>) -> Result<(String, String), Error> {
    wire_type.expect(WireType::Len)?;
    let (mut key, mut value) = (String::new(), String::new());
    crate::protobuf::for_each_field("map entry", &mut reader.nested()?, |number, wire_type, reader| match number {
        1 => string(wire_type, reader).map(|k| key = k),
        2 => string(wire_type, reader).map(|v| value = v),
        _ => reader.skip(wire_type),
    })?;
    Ok((key, value))
}

fn write_entry(writer: &mut Writer, number: u32, key: &str, value: &str) {
    writer.key(number, WireType::Len);
    writer.len_delimited(|writer| {
        write_str(writer, 1, key);
        write_str(writer, 2, value);
    });
}

/// `ObjectMeta` over the runtime's [`Meta`].
#[derive(Default)]
struct ObjectMeta(Meta);

impl DecodeProto for ObjectMeta {
    const NAME: &'static str = "ObjectMeta";
    fn merge_field(
        &mut self,
        number: u32,
        wire_type: WireType,
        reader: &mut Reader<'_>,
        options: DecodeOptions,
    ) -> Result<(), Error> {
        let meta = &mut self.0;
        match number {
            1 => string(wire_type, reader).map(|v| meta.name = Some(v)),
            3 => string(wire_type, reader).map(|v| meta.namespace = Some(v)),
            6 => string(wire_type, reader).map(|v| meta.resource_version = Some(v)),
            12 => decode::option_map(&mut meta.annotations, wire_type, reader, options),
            17 if options.skips_managed_fields() => {
                meta.managed_fields = None;
                reader.skip(wire_type)
            }
            17 => {
                wire_type.expect(WireType::Len)?;
                let mut manager = String::new();
                crate::protobuf::for_each_field("ManagedFieldsEntry", &mut reader.nested()?, |n, w, r| match n {
                    1 => string(w, r).map(|m| manager = m),
                    _ => r.skip(w),
                })?;
                let entries = meta.managed_fields.get_or_insert_with(|| serde_json::json!([]));
                if let Some(list) = entries.as_array_mut() {
                    list.push(serde_json::json!({ "manager": manager }));
                }
                Ok(())
            }
            _ => reader.skip(wire_type),
        }
    }
}

impl EncodeProto for ObjectMeta {
    fn encode_fields(&self, writer: &mut Writer) {
        let meta = &self.0;
        write_str(writer, 1, meta.name.as_deref().unwrap_or_default());
        write_str(writer, 2, "");
        write_str(writer, 3, meta.namespace.as_deref().unwrap_or_default());
        write_str(writer, 4, "");
        write_str(writer, 5, "");
        write_str(writer, 6, meta.resource_version.as_deref().unwrap_or_default());
        encode::value(writer, 7, &0i64);
        // The zero creationTimestamp: an empty message.
        writer.key(8, WireType::Len);
        writer.bytes(&[]);
        encode::option_map(writer, 12, &meta.annotations);
        let managers = meta.managed_fields.as_ref().and_then(|m| m.as_array()).into_iter().flatten();
        for manager in managers {
            writer.key(17, WireType::Len);
            writer.len_delimited(|writer| {
                write_str(writer, 1, manager["manager"].as_str().unwrap_or_default());
                for number in [2, 3, 6, 8] {
                    write_str(writer, number, "");
                }
            });
        }
    }
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
            1 => {
                let mut meta = ObjectMeta(std::mem::take(&mut self.metadata));
                let result = decode::value(&mut meta, wire_type, reader, options);
                self.metadata = meta.0;
                result
            }
            2 => entry(wire_type, reader).map(|(k, v)| {
                self.data.insert(k, v);
            }),
            _ => reader.skip(wire_type),
        }
    }
}

impl EncodeProto for ConfigMap {
    fn encode_fields(&self, writer: &mut Writer) {
        writer.key(1, WireType::Len);
        writer.len_delimited(|writer| ObjectMeta(self.metadata.clone()).encode_fields(writer));
        for (key, value) in &self.data {
            write_entry(writer, 2, key, value);
        }
    }
}

/// Hex to bytes.
pub(crate) fn hex(text: &str) -> Vec<u8> {
    let text: String = text.split_whitespace().collect();
    (0..text.len()).step_by(2).map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap()).collect()
}

// The bytes below were written by apimachinery v0.35.8's
// `protobuf.NewSerializer(scheme.Scheme, scheme.Scheme).Encode(obj, w)`
// (client-go's `kubernetes/scheme`) for these objects.

/// `corev1.ConfigMapList{TypeMeta: {v1, ConfigMapList}, ListMeta:
/// {ResourceVersion: "9", Continue: "next", RemainingItemCount: &1}, Items:
/// [{ObjectMeta: {Name: "a", Namespace: "ns", ResourceVersion: "1",
/// ManagedFields: [{Manager: "kubectl"}]}, Data: {"k": "v"}}, {ObjectMeta:
/// {Name: "b", Namespace: "ns", ResourceVersion: "2"}}]}`.
pub(crate) const CONFIGMAP_LIST: &str = "6b387300 0a13 0a02 7631 120d 436f6e6669674d61704c697374
    125b 0a0d 0a00 1201 39 1a04 6e657874 2001
    1232 0a28 0a01 61 1200 1a02 6e73 2200 2a00 3201 31 3800 4200 8a0111 0a07 6b75626563746c 1200 1a00 3200 4200
         1206 0a01 6b 1201 76
    1216 0a14 0a01 62 1200 1a02 6e73 2200 2a00 3201 32 3800 4200
    1a00 2200";

/// `corev1.ConfigMap{TypeMeta: {v1, ConfigMap}, ObjectMeta: {Name: "a",
/// Namespace: "ns", ResourceVersion: "1"}, Data: {"k": "v"}}`.
pub(crate) const CONFIGMAP: &str = "6b387300 0a0f 0a02 7631 1209 436f6e6669674d6170
    121e 0a14 0a01 61 1200 1a02 6e73 2200 2a00 3201 31 3800 4200 1206 0a01 6b 1201 76
    1a00 2200";

/// `metav1.Status{TypeMeta: {v1, Status}, Status: "Failure", Message:
/// "configmaps \"missing\" not found", Reason: "NotFound", Details:
/// &{Name: "missing", Kind: "configmaps", Causes: [{Type:
/// "FieldValueRequired", Message: "Required value", Field: "data"}],
/// RetryAfterSeconds: 3}, Code: 404}`.
pub(crate) const STATUS_NOT_FOUND: &str = "6b387300 0a0c 0a02 7631 1206 537461747573
    128701 0a06 0a00 1200 1a00 1207 4661696c757265
    1a1e 636f6e6669676d61707320226d697373696e6722206e6f7420666f756e64 2208 4e6f74466f756e64
    2a47 0a07 6d697373696e67 1200 1a0a 636f6e6669676d617073
         222a 0a12 4669656c6456616c75655265717569726564 120e 52657175697265642076616c7565 1a04 64617461
         2803 3200
    309403 1a00 2200";

/// `metav1.Status{TypeMeta: {v1, Status}, Status: "Failure", Message: "too
/// old resource version: 1 (5)", Reason: "Expired", Code: 410}`.
pub(crate) const STATUS_EXPIRED: &str = "6b387300 0a0c 0a02 7631 1206 537461747573
    123e 0a06 0a00 1200 1a00 1207 4661696c757265
    1a1f 746f6f206f6c64207265736f757263652076657273696f6e3a203120283529 2207 45787069726564 309a03
    1a00 2200";
