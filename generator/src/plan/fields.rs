//! What each field of each generated struct is, decided once: how the
//! struct holds it (plain, `Option`, boxed), how it is read (the runtime's
//! decode seed), whether an absent value is written as `null`, and whether
//! it holds kinds written without their `apiVersion`/`kind`. The type
//! emitter (declaration and encoding) and the decode emitter both render
//! these entries, so they cannot disagree.

use std::collections::{BTreeMap, BTreeSet};

use crate::ir::proto::FieldEncoding;
use crate::ir::{Api, Field, FieldType, Gvk, LIST_META, OBJECT_META, Shape, Special, TypeDef};

/// A generated struct and its fields.
#[derive(Debug)]
pub struct StructPlan<'a> {
    /// The type definition the struct is emitted from.
    pub def: &'a TypeDef,
    /// The declared fields, in schema order, without a kind's `apiVersion`
    /// and `kind` (those are its type's, written from [`Self::type_meta`]).
    pub fields: Vec<FieldPlan<'a>>,
    /// The field holding undeclared keys (a kind that keeps unknown fields).
    pub rest: Option<&'a Field>,
    /// A kind: its own `apiVersion`/`kind`, written first on encode (and
    /// left out where it is embedded in another object).
    pub type_meta: Option<&'a Gvk>,
    /// A type of the struct's module is named `Option`: the prelude's must
    /// be spelled out.
    pub option_shadowed: bool,
    /// The protobuf message encoding it (`k8s.io.api.core.v1.Pod`); `None`
    /// for custom resources and specs without `proto/`.
    pub message: Option<&'a str>,
    /// Its apply configuration (`<Type>Apply`), if it has one; set by
    /// [`super::plan`] once the kinds are known.
    pub apply: Option<super::apply::ApplyPlan<'a>>,
}

/// What the codec emitters render of a struct or of its apply
/// configuration: the type's name, its declared fields, the field of
/// undeclared keys, its TypeMeta.
#[derive(Debug)]
pub struct Codec<'p, 'a> {
    /// The Rust type's name, also its name in decode errors.
    pub name: &'p str,
    /// The declared fields, in order.
    pub fields: Vec<&'p FieldPlan<'a>>,
    /// The field holding undeclared keys.
    pub rest: Option<&'a Field>,
    /// A kind's own `apiVersion`/`kind`.
    pub type_meta: Option<&'a Gvk>,
}

impl<'a> StructPlan<'a> {
    /// The struct's codec.
    pub fn codec(&self) -> Codec<'_, 'a> {
        Codec {
            name: &self.def.rust_name,
            fields: self.fields.iter().collect(),
            rest: self.rest,
            type_meta: self.type_meta,
        }
    }
}

/// One declared field.
#[derive(Debug)]
pub struct FieldPlan<'a> {
    /// The field as the IR has it (names, type, docs).
    pub field: &'a Field,
    /// A plain value rather than an `Option`: required and not nullable,
    /// or a kind's metadata.
    pub plain: bool,
    /// Held behind a `Box`: to break a cycle, or because it is an optional
    /// object (an absent one then costs a pointer instead of its size).
    pub boxed: bool,
    /// `None` is written as `null` (a required field that is nullable),
    /// not left out.
    pub writes_null: bool,
    /// Holds a kind, or a list of kinds, written without TypeMeta.
    pub embedding: Option<Embedding>,
    /// How the runtime reads it.
    pub seed: Seed,
    /// Its protobuf field: number, proto type, repeated or map, Go
    /// pointer-ness; `None` where the struct has no message.
    pub protobuf: Option<&'a FieldEncoding>,
}

/// How a field holds kinds, whose TypeMeta is then left out on encode (as
/// Go leaves out an empty TypeMeta: list items, a StatefulSet's claim
/// templates).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Embedding {
    /// The field holds one kind (or an `Option` of one).
    One,
    /// The field holds a list of kinds (a list's `items`, a StatefulSet's
    /// `volumeClaimTemplates`).
    Many,
}

/// The runtime's reading of a field (`k8s_client_runtime::codec::fields`):
/// structs and lists of structs read in place, text through the table of
/// recent strings, maps of text through the table of recent maps, `null`
/// in a plain list or map read as empty.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seed {
    /// A plain struct, read in place.
    Struct,
    /// A plain list of structs.
    StructList,
    /// A plain list.
    List,
    /// A plain map of strings or quantities.
    SharedMap,
    /// A plain map of anything else, `null` read as empty.
    OrDefault,
    /// A plain string.
    Text,
    /// An optional struct held in a `Box`.
    OptionBox,
    /// An optional struct held inline.
    OptionStruct,
    /// An optional list of structs.
    OptionStructList,
    /// An optional list.
    OptionList,
    /// An optional string.
    OptionText,
    /// An optional map of strings or quantities.
    OptionSharedMap,
    /// `ObjectMeta.managedFields`: skipped unread when the decode's options
    /// say so (an informer's cache, which drops them).
    ManagedFields,
    /// Anything else, through its own `Deserialize`.
    Value,
}

impl Seed {
    /// Whether the runtime's seed takes the decode's options: those of
    /// struct-valued fields, which hand them to the struct's own fields.
    pub fn takes_options(self) -> bool {
        match self {
            Seed::Struct
            | Seed::StructList
            | Seed::OptionBox
            | Seed::OptionStruct
            | Seed::OptionStructList
            | Seed::ManagedFields => true,
            Seed::List
            | Seed::SharedMap
            | Seed::OrDefault
            | Seed::Text
            | Seed::OptionList
            | Seed::OptionText
            | Seed::OptionSharedMap
            | Seed::Value => false,
        }
    }
}

/// The plan of every generated (not external) struct, by schema name.
pub fn structs(api: &Api) -> BTreeMap<&str, StructPlan<'_>> {
    api.types
        .iter()
        .filter(|(_, def)| !def.external)
        .filter_map(|(name, def)| struct_plan(api, def).map(|p| (name.as_str(), p)))
        .collect()
}

fn struct_plan<'a>(api: &'a Api, def: &'a TypeDef) -> Option<StructPlan<'a>> {
    let Shape::Struct(all) = &def.shape else { return None };
    let kind = def.is_kind();
    let declared =
        all.iter().filter(|f| !f.flatten && !(kind && (f.json_name == "apiVersion" || f.json_name == "kind")));
    let encoding = api.protobuf.as_ref().and_then(|p| p.types.get(&def.schema_name));
    Some(StructPlan {
        def,
        fields: declared
            .map(|f| FieldPlan {
                protobuf: encoding.and_then(|e| e.fields.get(&f.json_name)),
                ..field_plan(api, def, f)
            })
            .collect(),
        rest: all.iter().find(|f| f.flatten),
        type_meta: if kind { def.gvk.as_ref() } else { None },
        option_shadowed: api.types.values().any(|d| d.module == def.module && d.rust_name == "Option"),
        message: encoding.map(|e| e.message.as_str()),
        apply: None,
    })
}

pub(super) fn field_plan<'a>(api: &Api, def: &TypeDef, f: &'a Field) -> FieldPlan<'a> {
    if def.declared_at.is_some() {
        return declared_field_plan(f);
    }
    let kind_metadata = f.json_name == "metadata"
        && def.is_kind()
        && matches!(&f.ty, FieldType::Ref(r) if r == OBJECT_META || r == LIST_META);
    let plain = (f.required && !f.nullable) || kind_metadata;
    let object = is_struct(api, &f.ty);
    // A kind's `spec` and `status` stay inline: nearly every object has them.
    let optional_object = !plain && object && !(def.is_kind() && (f.json_name == "spec" || f.json_name == "status"));
    let boxed = f.boxed || optional_object;
    let writes_null = f.required && f.nullable && !plain;
    // A field boxed to break a cycle holds no kind: kinds do not nest.
    let embedding = if f.boxed { None } else { embedded_kind(api, &f.ty) };
    FieldPlan { field: f, plain, boxed, writes_null, embedding, seed: seed(api, def, f, plain, boxed), protobuf: None }
}

/// A field of a struct the user wrote, held as written: an `Option` when
/// not required, a `Box` where boxed, read and written through its own
/// `Deserialize` and `Serialize` (it need not be the runtime's string or
/// list types).
fn declared_field_plan(f: &Field) -> FieldPlan<'_> {
    FieldPlan {
        field: f,
        plain: f.required,
        boxed: f.boxed,
        writes_null: false,
        embedding: None,
        seed: Seed::Value,
        protobuf: None,
    }
}

fn seed(api: &Api, def: &TypeDef, f: &Field, plain: bool, boxed: bool) -> Seed {
    let object = is_struct(api, &f.ty);
    let list_of_objects = matches!(&f.ty, FieldType::Array(inner) if is_struct(api, inner));
    let text_map = is_text_map(api, &f.ty);
    if plain {
        return match &f.ty {
            _ if object => Seed::Struct,
            FieldType::Array(_) if !boxed && list_of_objects => Seed::StructList,
            FieldType::Array(_) if !boxed => Seed::List,
            _ if text_map && !boxed => Seed::SharedMap,
            FieldType::Map(_) => Seed::OrDefault,
            FieldType::String if !boxed => Seed::Text,
            _ => Seed::Value,
        };
    }
    match &f.ty {
        FieldType::Array(_)
            if !boxed && list_of_objects && def.schema_name == OBJECT_META && f.json_name == "managedFields" =>
        {
            Seed::ManagedFields
        }
        _ if object && boxed => Seed::OptionBox,
        _ if object => Seed::OptionStruct,
        FieldType::Array(_) if !boxed && list_of_objects => Seed::OptionStructList,
        FieldType::Array(_) if !boxed => Seed::OptionList,
        FieldType::String if !boxed => Seed::OptionText,
        _ if text_map && !boxed => Seed::OptionSharedMap,
        _ => Seed::Value,
    }
}

/// The deepest chain of object types held inside one another, through
/// fields, lists and maps (a cycle counts once): a crate this deep raises
/// its recursion limit.
pub fn nesting_depth(api: &Api) -> usize {
    fn depth(api: &Api, name: &str, memo: &mut BTreeMap<String, usize>, path: &mut BTreeSet<String>) -> usize {
        if let Some(d) = memo.get(name) {
            return *d;
        }
        let Some(TypeDef { shape: Shape::Struct(fields), .. }) = api.types.get(name) else { return 0 };
        if !path.insert(name.to_owned()) {
            return 0;
        }
        let mut refs = BTreeSet::new();
        fields.iter().for_each(|f| f.ty.refs(&mut refs));
        let d = 1 + refs.iter().map(|r| depth(api, r, memo, path)).max().unwrap_or(0);
        path.remove(name);
        memo.insert(name.to_owned(), d);
        d
    }
    let mut memo = BTreeMap::new();
    api.types.keys().map(|name| depth(api, name, &mut memo, &mut BTreeSet::new())).max().unwrap_or(0)
}

/// Whether `ty` names a generated struct (not an enum or special type).
pub(super) fn is_struct(api: &Api, ty: &FieldType) -> bool {
    matches!(ty, FieldType::Ref(r) if matches!(api.types.get(r.as_str()).map(|d| &d.shape), Some(Shape::Struct(_))))
}

fn embedded_kind(api: &Api, ty: &FieldType) -> Option<Embedding> {
    let holds_kind = |r: &str| api.types.get(r).is_some_and(TypeDef::is_kind);
    match ty {
        FieldType::Ref(r) if holds_kind(r) => Some(Embedding::One),
        FieldType::Array(inner) => match inner.as_ref() {
            FieldType::Ref(r) if holds_kind(r) => Some(Embedding::Many),
            _ => None,
        },
        _ => None,
    }
}

/// Whether `ty` is a map of strings or quantities: those the runtime shares
/// between equal maps as it decodes them.
pub(super) fn is_text_map(api: &Api, ty: &FieldType) -> bool {
    match ty {
        FieldType::Map(value) => match &**value {
            FieldType::String => true,
            FieldType::Ref(r) => {
                matches!(api.types.get(r.as_str()).map(|d| &d.shape), Some(Shape::Special(Special::Quantity)))
            }
            _ => false,
        },
        _ => false,
    }
}
