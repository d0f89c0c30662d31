//! Messages onto IR types, proto fields onto IR fields.
//!
//! A message encodes the IR type of the same Go package and name: the
//! message `k8s.io.api.core.v1.Pod` (Go `k8s.io/api/core/v1.Pod`) the schema
//! `io.k8s.api.core.v1.Pod`. Its fields match the IR fields by JSON name;
//! a field of a struct inlined into the JSON object (`Volume`'s
//! `volumeSource`) contributes its message's fields, reached through an
//! [`InlineStep`]. A kind's `apiVersion` and `kind` have no field: the
//! envelope carries them.
//!
//! Every type reached from a kind must map completely (each field both ways,
//! with agreeing types), or [`map`] fails naming the `.proto` file and the
//! OpenAPI document. Messages without an IR type (`runtime.Unknown`, test
//! groups) and types not reached from a kind that do not fit are listed in
//! the [`Report`], not errors.

use std::collections::{BTreeMap, BTreeSet};

use super::source::{Message, Sources};
use crate::error::{Error, Result};
use crate::ir::proto::{Cardinality, Encodings, FieldEncoding, InlineStep, MessageEncoding, ProtoType, Report, Scalar};
use crate::ir::{Api, Field, FieldType, Shape};

/// Maps the messages of `sources` onto the types of `api`.
pub fn map(api: &Api, sources: &Sources) -> Result<Encodings> {
    let mut report = Report::default();
    let schema_of: BTreeMap<&str, String> =
        sources.messages.values().map(|m| (m.full_name.as_str(), schema_name(&m.go_package, &m.name))).collect();
    let reached = reached_from_kinds(api);
    let mut types = BTreeMap::new();
    for message in sources.messages.values() {
        let schema = &schema_of[message.full_name.as_str()];
        let Some(def) = api.types.get(schema).filter(|d| !d.external) else {
            report.without_type.push(message.full_name.clone());
            continue;
        };
        let is_reached = reached.contains(schema.as_str());
        let fields = match &def.shape {
            Shape::Special(_) => {
                report.special.push(schema.clone());
                BTreeMap::new()
            }
            Shape::Enum { .. } | Shape::Declared => BTreeMap::new(),
            Shape::Struct(ir_fields) => {
                match map_struct(sources, &schema_of, def.gvks.is_empty(), ir_fields, message) {
                    Ok(fields) => fields,
                    Err(why) if is_reached => {
                        return Err(Error::ProtobufMismatch {
                            proto: sources.specs.join(&message.file),
                            document: sources.specs.join(&def.source),
                            message: format!("message {} for schema {schema}: {why}", message.full_name),
                        });
                    }
                    Err(why) => {
                        report.unmatched.push(format!("{schema} ({}): {why}", message.full_name));
                        continue;
                    }
                }
            }
        };
        report.messages += 1;
        report.fields += fields.len();
        if is_reached {
            report.reached_messages += 1;
            report.reached_fields += fields.len();
        }
        let encoding = MessageEncoding { message: message.full_name.clone(), file: message.file.clone(), fields };
        types.insert(schema.clone(), encoding);
    }
    report.without_message = reached
        .iter()
        .filter(|s| !types.contains_key(**s))
        .filter(|s| matches!(api.types[**s].shape, Shape::Struct(_)))
        .map(|s| (*s).to_owned())
        .collect();
    Ok(Encodings { types, report })
}

/// The OpenAPI name kube-openapi gives a Go type: the package path with
/// its domain reversed (`k8s.io/api/core/v1` → `io.k8s.api.core.v1`), then
/// the type name.
pub fn schema_name(go_package: &str, name: &str) -> String {
    let (domain, path) = go_package.split_once('/').unwrap_or((go_package, ""));
    let mut out: Vec<&str> = domain.split('.').rev().collect();
    out.extend(path.split('/').filter(|s| !s.is_empty()));
    out.push(name);
    out.join(".")
}

/// The generated types reached from a kind through fields, lists and maps
/// (the kinds included).
pub fn reached_from_kinds(api: &Api) -> BTreeSet<&str> {
    let mut reached = BTreeSet::new();
    let mut todo: Vec<&str> =
        api.types.values().filter(|d| !d.external && d.is_kind()).map(|d| d.schema_name.as_str()).collect();
    while let Some(name) = todo.pop() {
        let Some((key, def)) = api.types.get_key_value(name) else { continue };
        if !reached.insert(key.as_str()) {
            continue;
        }
        if let Shape::Struct(fields) = &def.shape {
            let mut refs = BTreeSet::new();
            fields.iter().for_each(|f| f.ty.refs(&mut refs));
            todo.extend(refs.iter().filter_map(|r| api.types.get_key_value(r.as_str()).map(|(k, _)| k.as_str())));
        }
    }
    reached
}

/// The encodings of a struct's fields, or why its message does not fit.
/// `own_type_meta`: the type has no GVK, so `apiVersion`/`kind` fields are
/// its own data (an `ObjectReference`'s), not the envelope's.
fn map_struct(
    sources: &Sources,
    schema_of: &BTreeMap<&str, String>,
    own_type_meta: bool,
    ir_fields: &[Field],
    message: &Message,
) -> Result<BTreeMap<String, FieldEncoding>, String> {
    let mut by_json = BTreeMap::new();
    flatten(sources, message, &mut Vec::new(), &mut by_json)?;
    let mut out = BTreeMap::new();
    for field in ir_fields.iter().filter(|f| !f.flatten) {
        let Some(encoding) = by_json.remove(&field.json_name) else {
            let type_meta = field.json_name == "apiVersion" || field.json_name == "kind";
            if type_meta && !own_type_meta {
                continue;
            }
            return Err(format!("field {} has no proto field", field.json_name));
        };
        check_type(schema_of, sources, &field.ty, &encoding)
            .map_err(|why| format!("field {} = {}: {why}", field.json_name, encoding.number))?;
        out.insert(field.json_name.clone(), encoding);
    }
    if let Some((json, encoding)) = by_json.into_iter().next() {
        return Err(format!(
            "proto field {} = {} (JSON {json}) has no field in the schema",
            encoding.name, encoding.number
        ));
    }
    Ok(out)
}

/// A message's fields by JSON name, inlined structs' fields included.
fn flatten(
    sources: &Sources,
    message: &Message,
    path: &mut Vec<InlineStep>,
    out: &mut BTreeMap<String, FieldEncoding>,
) -> Result<(), String> {
    // An empty message (StorageVersionSpec) has no tagged Go field to list.
    if !message.has_facts && !message.fields.is_empty() {
        return Err(format!("the Go facts ({}) have no message {}", sources.facts_path.display(), message.full_name));
    }
    for field in &message.fields {
        // Attached to every field of a message with facts (source::load).
        let Some(go) = &field.go else { continue };
        if go.inline || go.json.is_empty() {
            let ProtoType::Message(inner) = &field.ty else {
                return Err(format!("inlined field {} = {} is no message", field.name, field.number));
            };
            let inner_message =
                sources.messages.get(inner).ok_or_else(|| format!("field {}: no message {inner}", field.name))?;
            path.push(InlineStep {
                number: field.number,
                name: field.name.clone(),
                message: inner.clone(),
                go_pointer: go.pointer,
            });
            flatten(sources, inner_message, path, out)?;
            path.pop();
            continue;
        }
        let encoding = FieldEncoding {
            number: field.number,
            name: field.name.clone(),
            ty: field.ty.clone(),
            cardinality: field.cardinality,
            go_pointer: go.pointer,
            omit_empty: go.omitempty || go.omitzero,
            inline: path.clone(),
        };
        if out.insert(go.json.clone(), encoding).is_some() {
            return Err(format!("two proto fields have the JSON name {}", go.json));
        }
    }
    Ok(())
}

/// Whether the IR type and the proto field agree: a list is repeated, a
/// map a map with string keys, scalars alike, a reference the message of
/// the same type.
fn check_type(
    schema_of: &BTreeMap<&str, String>,
    sources: &Sources,
    ir: &FieldType,
    encoding: &FieldEncoding,
) -> Result<(), String> {
    match (ir, encoding.cardinality) {
        (FieldType::Array(item), Cardinality::Repeated { .. }) => check_value(schema_of, sources, item, &encoding.ty),
        (FieldType::Map(value), Cardinality::Map { key: Scalar::String }) => {
            check_value(schema_of, sources, value, &encoding.ty)
        }
        // A named Go slice type is one wrapper message (metav1's `Verbs`).
        (FieldType::Array(_), Cardinality::Single) => check_value(schema_of, sources, ir, &encoding.ty),
        (FieldType::Array(_) | FieldType::Map(_), _) | (_, Cardinality::Repeated { .. } | Cardinality::Map { .. }) => {
            Err(format!("the schema's {} is a proto {:?}", describe(ir), encoding.cardinality))
        }
        (_, Cardinality::Single) => check_value(schema_of, sources, ir, &encoding.ty),
    }
}

fn check_value(
    schema_of: &BTreeMap<&str, String>,
    sources: &Sources,
    ir: &FieldType,
    proto: &ProtoType,
) -> Result<(), String> {
    let agree = match (ir, proto) {
        (FieldType::String, ProtoType::Scalar(Scalar::String))
        | (FieldType::Bool, ProtoType::Scalar(Scalar::Bool))
        | (FieldType::I32, ProtoType::Scalar(Scalar::Int32))
        | (FieldType::I64, ProtoType::Scalar(Scalar::Int64))
        | (FieldType::F64, ProtoType::Scalar(Scalar::Double))
        | (FieldType::Bytes, ProtoType::Scalar(Scalar::Bytes)) => true,
        (FieldType::Ref(schema), ProtoType::Message(m)) => schema_of.get(m.as_str()) == Some(schema),
        // A list held in a map, or a named Go slice type, is wrapped in a
        // message of one repeated field (`ExtraValue`, `Verbs`).
        (FieldType::Array(item), ProtoType::Message(m)) => {
            let wrapper = sources.messages.get(m).filter(|w| w.fields.len() == 1);
            return match wrapper.map(|w| &w.fields[0]) {
                Some(inner) if matches!(inner.cardinality, Cardinality::Repeated { .. }) => {
                    check_value(schema_of, sources, item, &inner.ty)
                }
                _ => Err(format!("the schema's {} is the message {m}, no list wrapper", describe(ir))),
            };
        }
        _ => false,
    };
    if agree { Ok(()) } else { Err(format!("the schema's {} is a proto {}", describe(ir), describe_proto(proto))) }
}

fn describe(ty: &FieldType) -> String {
    match ty {
        FieldType::Ref(r) => format!("reference to {r}"),
        FieldType::Array(t) => format!("list of {}", describe(t)),
        FieldType::Map(t) => format!("map of {}", describe(t)),
        other => format!("{other:?}"),
    }
}

fn describe_proto(ty: &ProtoType) -> String {
    match ty {
        ProtoType::Scalar(s) => format!("{s:?}"),
        ProtoType::Message(m) => format!("message {m}"),
    }
}
