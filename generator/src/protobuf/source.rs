//! Reading `<specs>/proto/`: the `.proto` files (parsed by `protox-parse`)
//! and the Go field facts (`go-fields.json`), cross-checked against each
//! other.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use prost_types::field_descriptor_proto::{Label, Type};
use prost_types::{DescriptorProto, FieldDescriptorProto};
use serde::Deserialize;

use crate::error::{Error, Result};
use crate::ir::proto::{Cardinality, ProtoType, Scalar};

/// The facts file, relative to the proto directory.
pub const FACTS_FILE: &str = "go-fields.json";

/// Every message of the `.proto` files, by full name
/// (`k8s.io.api.core.v1.Pod`), with the Go facts of its fields.
#[derive(Debug, Default)]
pub struct Sources {
    /// The messages, by full name.
    pub messages: BTreeMap<String, Message>,
    /// The specs directory the files were read from, for errors.
    pub specs: PathBuf,
    /// The facts file, for errors.
    pub facts_path: PathBuf,
}

/// One message of a `.proto` file.
#[derive(Debug)]
pub struct Message {
    /// Full name (`k8s.io.api.core.v1.Pod`).
    pub full_name: String,
    /// The file declaring it, relative to the specs directory
    /// (`proto/k8s.io/api/core/v1/generated.proto`).
    pub file: String,
    /// The Go package it is generated from (`k8s.io/api/core/v1`): the
    /// file's `go_package`, else its directory.
    pub go_package: String,
    /// Its name within the package (`Pod`).
    pub name: String,
    /// Its fields in declaration order.
    pub fields: Vec<Field>,
    /// Whether the facts file describes its Go type (messages with a
    /// hand-written wire form, `metav1.Time`, have no tagged fields).
    pub has_facts: bool,
}

/// One field of a message, with what the Go type adds.
#[derive(Debug, Clone)]
pub struct Field {
    /// The proto field name (`volumeSource`).
    pub name: String,
    /// The field number.
    pub number: u32,
    /// What one value is.
    pub ty: ProtoType,
    /// Single, repeated or map.
    pub cardinality: Cardinality,
    /// The Go facts, when the facts file has the message.
    pub go: Option<GoField>,
}

/// A field of the facts file (written by `kube-testenv specs`).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GoField {
    /// The protobuf field number.
    pub number: u32,
    /// The proto field name.
    pub name: String,
    /// The JSON name; empty for a struct inlined into the JSON object.
    pub json: String,
    /// `json:",inline"`: the message's fields appear in the enclosing JSON
    /// object.
    pub inline: bool,
    /// `json:",omitempty"`.
    pub omitempty: bool,
    /// `json:",omitzero"`.
    pub omitzero: bool,
    /// The Go field is a pointer: nil is left out on the wire, while a
    /// non-pointer zero value is written.
    pub pointer: bool,
    /// The Go kind past the pointer (`string`, `int32`, `slice`, ...).
    pub kind: String,
}

#[derive(Deserialize)]
struct Facts {
    messages: BTreeMap<String, FactsMessage>,
}

#[derive(Deserialize)]
struct FactsMessage {
    fields: Vec<GoField>,
}

/// Reads every `.proto` file under `specs/proto` and the facts file beside
/// them, and checks that they agree on every field's number and name.
pub fn load(specs: &Path) -> Result<Sources> {
    let dir = specs.join("proto");
    let mut files = Vec::new();
    collect_proto_files(&dir, &mut files)?;
    files.sort();
    let mut messages = BTreeMap::new();
    for path in &files {
        let text = std::fs::read_to_string(path).map_err(|source| Error::Read { path: path.clone(), source })?;
        let rel = path.strip_prefix(specs).unwrap_or(path).to_string_lossy().replace('\\', "/");
        let file = protox_parse::parse(&rel, &text)
            .map_err(|e| Error::Protobuf { path: path.clone(), message: e.to_string() })?;
        let package = file.package.clone().unwrap_or_default();
        let go_package = file.options.as_ref().and_then(|o| o.go_package.clone()).unwrap_or_else(|| {
            let dir = path.parent().and_then(|p| p.strip_prefix(&dir).ok()).unwrap_or(Path::new(""));
            dir.to_string_lossy().replace('\\', "/")
        });
        for msg in &file.message_type {
            let message = message(msg, &package, &go_package, &rel)
                .map_err(|message| Error::Protobuf { path: path.clone(), message })?;
            messages.insert(message.full_name.clone(), message);
        }
    }
    let facts_path = dir.join(FACTS_FILE);
    let mut sources = Sources { messages, specs: specs.to_owned(), facts_path };
    add_facts(&mut sources)?;
    Ok(sources)
}

fn collect_proto_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let read = |source| Error::Read { path: dir.to_owned(), source };
    for entry in std::fs::read_dir(dir).map_err(read)? {
        let path = entry.map_err(read)?.path();
        if path.is_dir() {
            collect_proto_files(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "proto") {
            out.push(path);
        }
    }
    Ok(())
}

fn message(msg: &DescriptorProto, package: &str, go_package: &str, file: &str) -> Result<Message, String> {
    let name = msg.name().to_owned();
    let full_name = if package.is_empty() { name.clone() } else { format!("{package}.{name}") };
    let fields = msg
        .field
        .iter()
        .map(|f| field(f, msg, package))
        .collect::<Result<_, _>>()
        .map_err(|e| format!("message {full_name}: {e}"))?;
    Ok(Message { full_name, file: file.to_owned(), go_package: go_package.to_owned(), name, fields, has_facts: false })
}

fn field(f: &FieldDescriptorProto, msg: &DescriptorProto, package: &str) -> Result<Field, String> {
    let name = f.name().to_owned();
    let number = u32::try_from(f.number()).map_err(|_| format!("field {name}: bad number {}", f.number()))?;
    let repeated = f.label() == Label::Repeated;
    // protox-parse turns `map<K, V>` into a repeated nested `<Name>Entry`
    // message marked map_entry, as protoc does.
    let entry = f.type_name.as_deref().and_then(|t| {
        msg.nested_type.iter().find(|n| n.name() == t && n.options.as_ref().is_some_and(|o| o.map_entry()))
    });
    if let Some(entry) = entry {
        let part = |n: i32| {
            entry
                .field
                .iter()
                .find(|e| e.number() == n)
                .ok_or_else(|| format!("field {name}: map entry without field {n}"))
        };
        let (key, value) = (part(1)?, part(2)?);
        let key = match value_type(key, package)? {
            ProtoType::Scalar(s) => s,
            ProtoType::Message(m) => return Err(format!("field {name}: map key of message type {m}")),
        };
        return Ok(Field {
            name,
            number,
            ty: value_type(value, package)?,
            cardinality: Cardinality::Map { key },
            go: None,
        });
    }
    let ty = value_type(f, package).map_err(|e| format!("field {name}: {e}"))?;
    let packed = f.options.as_ref().is_some_and(|o| o.packed());
    let cardinality = if repeated { Cardinality::Repeated { packed } } else { Cardinality::Single };
    Ok(Field { name, number, ty, cardinality, go: None })
}

fn value_type(f: &FieldDescriptorProto, package: &str) -> Result<ProtoType, String> {
    // Named types are left unresolved by the parser: Kubernetes writes other
    // packages' messages fully qualified and its own by their bare name.
    if let Some(name) = &f.type_name {
        let name = name.strip_prefix('.').unwrap_or(name);
        return Ok(ProtoType::Message(if name.contains('.') || package.is_empty() {
            name.to_owned()
        } else {
            format!("{package}.{name}")
        }));
    }
    let scalar = match f.r#type() {
        Type::Double => Scalar::Double,
        Type::Float => Scalar::Float,
        Type::Int64 => Scalar::Int64,
        Type::Uint64 => Scalar::Uint64,
        Type::Int32 => Scalar::Int32,
        Type::Fixed64 => Scalar::Fixed64,
        Type::Fixed32 => Scalar::Fixed32,
        Type::Bool => Scalar::Bool,
        Type::String => Scalar::String,
        Type::Bytes => Scalar::Bytes,
        Type::Uint32 => Scalar::Uint32,
        Type::Sfixed32 => Scalar::Sfixed32,
        Type::Sfixed64 => Scalar::Sfixed64,
        Type::Sint32 => Scalar::Sint32,
        Type::Sint64 => Scalar::Sint64,
        other @ (Type::Group | Type::Message | Type::Enum) => return Err(format!("unsupported type {other:?}")),
    };
    Ok(ProtoType::Scalar(scalar))
}

/// Attaches the facts to the messages, checking numbers and names: the
/// facts come from the Go struct tags, the `.proto` from go-to-protobuf,
/// and a capture mixing versions would disagree.
fn add_facts(sources: &mut Sources) -> Result<()> {
    let path = &sources.facts_path;
    let bytes = std::fs::read(path).map_err(|source| Error::Read { path: path.clone(), source })?;
    let mut de = serde_json::Deserializer::from_slice(&bytes);
    let facts: Facts = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let pointer = crate::error::pointer_of(e.path());
        Error::Json {
            path: path.clone(),
            pointer: if pointer.is_empty() { "/".into() } else { pointer },
            source: e.into_inner(),
        }
    })?;
    for (name, facts) in facts.messages {
        let Some(message) = sources.messages.get_mut(&name) else {
            return Err(Error::Protobuf {
                path: path.clone(),
                message: format!("message {name} is in no .proto file under {}", display_dir(path)),
            });
        };
        let proto = sources.specs.join(&message.file);
        let mismatch = |what: String| Error::ProtobufFacts {
            proto: proto.clone(),
            facts: path.clone(),
            message: format!("message {name}: {what}"),
        };
        for go in facts.fields {
            let Some(field) = message.fields.iter_mut().find(|f| f.number == go.number) else {
                return Err(mismatch(format!("Go field {} (number {}) has no proto field", go.name, go.number)));
            };
            if field.name != go.name {
                return Err(mismatch(format!(
                    "field number {} is {} in the .proto but {} in Go",
                    go.number, field.name, go.name
                )));
            }
            field.go = Some(go);
        }
        if let Some(f) = message.fields.iter().find(|f| f.go.is_none()) {
            return Err(mismatch(format!("proto field {} = {} has no Go field", f.name, f.number)));
        }
        message.has_facts = true;
    }
    Ok(())
}

fn display_dir(path: &Path) -> String {
    path.parent().unwrap_or(Path::new(".")).display().to_string()
}
