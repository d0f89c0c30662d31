//! The protobuf encodings of the IR's types: which message encodes which
//! type, and how each field is written. The protobuf stage
//! ([`crate::protobuf`]) reads them from a specs directory's `proto/`; the
//! IR holds them ([`super::Api::protobuf`]), the plan and the emitters
//! read them.

use std::collections::BTreeMap;

/// The protobuf encodings of the IR's types, by schema name.
#[derive(Debug, Default)]
pub struct Encodings {
    /// Each IR type that has a message, by schema name
    /// (`io.k8s.api.core.v1.Pod`).
    pub types: BTreeMap<String, MessageEncoding>,
    /// What did not map, and the counts.
    pub report: Report,
}

/// The message of one IR type.
#[derive(Debug, Clone, PartialEq)]
pub struct MessageEncoding {
    /// The message's full name (`k8s.io.api.core.v1.Pod`).
    pub message: String,
    /// The `.proto` file declaring it, relative to the specs directory.
    pub file: String,
    /// The IR fields' encodings, by JSON name. Empty for the special types
    /// ([`crate::ir::Shape::Special`]), whose wire form is hand-written.
    pub fields: BTreeMap<String, FieldEncoding>,
}

/// How one IR field is written in its type's message.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldEncoding {
    /// The field number within the innermost message (that of the last
    /// [`Self::inline`] step, else the type's own).
    pub number: u32,
    /// The proto field name (the JSON name, for fields not inlined).
    pub name: String,
    /// What one value is.
    pub ty: ProtoType,
    /// Single, repeated or map.
    pub cardinality: Cardinality,
    /// The Go field is a pointer: absent (nil) is left out, while a Go
    /// value field writes its zero value (`""`, `0`, `false`, an empty
    /// message).
    pub go_pointer: bool,
    /// `json:",omitempty"` on the Go field.
    pub omit_empty: bool,
    /// For a field of a struct inlined into the JSON object (a `Volume`'s
    /// `VolumeSource` fields): the message fields holding it, outermost
    /// first. Protobuf keeps such a struct as one nested message.
    pub inline: Vec<InlineStep>,
}

/// A Go struct inlined into the JSON object but nested on the wire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InlineStep {
    /// Its field number in the enclosing message.
    pub number: u32,
    /// Its proto field name (`volumeSource`).
    pub name: String,
    /// Its message (`k8s.io.api.core.v1.VolumeSource`).
    pub message: String,
    /// The Go field is a pointer.
    pub go_pointer: bool,
}

/// The type of one value of a field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProtoType {
    /// A scalar.
    Scalar(Scalar),
    /// A message, by full name (`k8s.io.apimachinery.pkg.apis.meta.v1.Time`).
    Message(String),
}

/// The proto scalar types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)] // the proto type of the same name
pub enum Scalar {
    Double,
    Float,
    Int32,
    Int64,
    Uint32,
    Uint64,
    Sint32,
    Sint64,
    Fixed32,
    Fixed64,
    Sfixed32,
    Sfixed64,
    Bool,
    String,
    Bytes,
}

/// How many values a field holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cardinality {
    /// `optional`: at most one.
    Single,
    /// `repeated`; `packed` when the values are written as one
    /// length-delimited run (not the proto2 default).
    Repeated {
        /// `[packed = true]`.
        packed: bool,
    },
    /// `map<key, value>`: repeated entries of key = 1, value = 2.
    Map {
        /// The key type.
        key: Scalar,
    },
}

/// What the mapping found, for the generator's callers and tests.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Report {
    /// Messages mapped to an IR type (specials included).
    pub messages: usize,
    /// IR fields mapped to a proto field.
    pub fields: usize,
    /// Of [`Self::messages`], those of types reached from a kind.
    pub reached_messages: usize,
    /// Of [`Self::fields`], those of types reached from a kind.
    pub reached_fields: usize,
    /// IR types with a hand-written wire form ([`super::Shape::Special`]) that
    /// have a message, by schema name.
    pub special: Vec<String>,
    /// Messages without an IR type, by full name.
    pub without_type: Vec<String>,
    /// IR structs reached from a kind without a message, by schema name.
    pub without_message: Vec<String>,
    /// Types not reached from a kind whose message does not fit, with why.
    pub unmatched: Vec<String>,
}
