//! The apply configuration of each generated struct (client-go's
//! `applyconfigurations`), decided from the struct's [`FieldPlan`]s: a
//! twin `<Type>Apply` whose every field is optional, so that a partial
//! server-side apply sends only what its caller set (the struct itself
//! holds required fields plainly and would send them empty).
//!
//! Struct-valued fields hold the referenced struct's apply configuration
//! (through lists and maps too); every other value keeps the struct's own
//! type. Each field gets a builder named as client-go's: a value is set,
//! a list appended to, a map merged into. A kind also gets a constructor
//! and the `metadata` builders client-go's kinds have through embedding,
//! and, when its resource serves `patch`, `extract`.
//!
//! Every struct has one but a list kind no other struct holds (client-go
//! has none for lists): what a type references always has one.

use std::collections::{BTreeMap, BTreeSet};

use super::KindPlan;
use super::fields::{Codec, FieldPlan, Seed, StructPlan};
use super::fields::{is_struct, is_text_map};
use crate::ir::{
    Api, Field, FieldType, Gvk, LIST_META, ListType, MapType, MergeFacts, OBJECT_META, PatchStrategy, Shape, Special,
    TypeDef, Verb,
};
use crate::naming;

/// The apply configuration of one struct.
#[derive(Debug)]
pub struct ApplyPlan<'a> {
    /// `<Type>Apply` ([`naming::apply_type_name`]).
    pub name: String,
    /// The declared fields, in the struct's order, all optional.
    pub fields: Vec<ApplyField<'a>>,
    /// The field holding undeclared keys (as the struct's), and its builder.
    pub rest: Option<(&'a Field, String)>,
    /// A kind: its `apiVersion`/`kind`, always written.
    pub type_meta: Option<&'a Gvk>,
    /// What a kind has beyond its fields.
    pub kind: Option<ApplyKind<'a>>,
    /// How the fields that are not atomic merge, sorted by JSON name: what
    /// `extract` reads the managed fields by (`MergeFields`).
    pub merge_fields: Vec<(&'a str, Merge<'a>)>,
}

impl<'a> ApplyPlan<'a> {
    /// The apply configuration's codec.
    pub fn codec(&self) -> Codec<'_, 'a> {
        Codec {
            name: &self.name,
            fields: self.fields.iter().map(|af| &af.codec).collect(),
            rest: self.rest.as_ref().map(|(f, _)| *f),
            type_meta: self.type_meta,
        }
    }
}

/// One field of an apply configuration.
#[derive(Debug)]
pub struct ApplyField<'a> {
    /// How it is held, read and written: optional, boxed where the
    /// struct's field is, never written as `null`.
    pub codec: FieldPlan<'a>,
    /// What it holds.
    pub ty: ApplyType<'a>,
    /// What its builder does.
    pub builder: Builder,
    /// The builder's name (`with_replicas`).
    pub method: String,
}

/// The type of an apply configuration's field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApplyType<'a> {
    /// A value holding no struct: the struct's own field type.
    Leaf(&'a FieldType),
    /// A struct: its apply configuration.
    Struct {
        /// The struct's schema (for its module).
        schema: &'a str,
        /// Its apply configuration's name.
        name: String,
    },
    /// A type written in Rust elsewhere ([`Shape::Declared`]): its
    /// `ApplyValue::Apply`.
    Declared(&'a str),
    /// A list holding structs.
    List(Box<ApplyType<'a>>),
    /// A map holding structs.
    Map(Box<ApplyType<'a>>),
}

/// How server-side apply (and strategic merge patch, for lists) merges a
/// value (the runtime's `k8s_client_runtime::apply::Merge`), decided from
/// the field's [`MergeFacts`] and its type: what tells `extract` whether a
/// member of the managed fields owns the value whole or only the parts
/// listed below it, and what the runtime's merges go by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Merge<'a> {
    /// Replaced whole: a scalar, or an atomic list, map or struct.
    Atomic,
    /// A struct merged field by field, as its apply configuration's
    /// fields say.
    Struct {
        /// The struct's schema (for its module).
        schema: &'a str,
        /// Its apply configuration's name.
        name: String,
    },
    /// A type written in Rust elsewhere ([`Shape::Declared`]): as its
    /// `ApplyValue::MERGE` says.
    Declared(&'a str),
    /// A map merged key by key; how each value merges.
    Map(Box<Merge<'a>>),
    /// A list that server-side apply merges element by element (list type
    /// `set` or `map`), or strategic merge patch does (patch strategy
    /// `merge`), or both.
    List {
        /// How server-side apply merges it.
        apply: &'a ListType,
        /// How strategic merge patch merges it.
        patch: &'a PatchStrategy,
        /// How each element merges.
        element: Box<Merge<'a>>,
    },
    /// Untyped JSON (preserved unknown fields, `RawExtension`): objects
    /// merged key by key, lists and scalars whole.
    Deduced,
    /// Merged as the wrapped value, whose strategic merge patches (each
    /// element's, for a list) carry `$retainKeys` (patch strategy
    /// `retainKeys`); server-side apply ignores it.
    RetainKeys(Box<Merge<'a>>),
}

/// What a field's builder does, as client-go's `With<Field>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Builder {
    /// Sets the value, replacing an earlier one.
    Set,
    /// Appends the values to the list.
    Append,
    /// Adds the entries to the map, replacing earlier values of their keys.
    Merge,
}

/// A kind's constructor, `metadata` builders and extraction.
#[derive(Debug)]
pub struct ApplyKind<'a> {
    /// The kind's `metadata: ObjectMeta` field, if it has one: its index in
    /// [`ApplyPlan::fields`].
    pub metadata: Option<usize>,
    /// `new(name[, namespace])`, when the kind has `metadata: ObjectMeta`.
    pub constructor: Option<Constructor>,
    /// `ObjectMeta`'s builders the kind offers itself, delegating into
    /// `metadata` (client-go's embedding), each as `ObjectMetaApply` has
    /// it; none that a field of the kind's own would name alike.
    pub delegates: Vec<ApplyField<'a>>,
    /// `ApplyConfiguration` and `extract`, when the kind's resource serves
    /// `patch`.
    pub extract: Option<Extract>,
}

/// `new`: the `ObjectMetaApply` builders it calls on `metadata`.
#[derive(Debug)]
pub struct Constructor {
    /// `with_name` of `ObjectMetaApply`.
    pub with_name: String,
    /// `with_namespace`, for a namespaced kind (or one served by no
    /// resource, as client-go takes it).
    pub with_namespace: Option<String>,
}

/// The extraction of a kind from the `managedFields` of an object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Extract {
    /// The resource has a `status` subresource that serves `patch`:
    /// `extract_status` too.
    pub status: bool,
}

/// The fields of `ObjectMeta` whose builders a kind offers itself, as
/// client-go's kinds do through embedding.
pub const METADATA_DELEGATES: [&str; 13] = [
    "name",
    "generateName",
    "namespace",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
];

/// The apply configuration's name of every struct that has one, generated
/// or external (a custom-resource crate's field of a Kubernetes type holds
/// that crate's), by schema name.
pub fn apply_names(api: &Api) -> BTreeMap<&str, String> {
    let structs = || api.types.values().filter(|d| matches!(d.shape, Shape::Struct(_)));
    let lists: BTreeSet<&str> = structs().filter(|d| is_list_kind(d)).map(|d| d.schema_name.as_str()).collect();
    // A list kind another struct holds keeps one, as does what it holds:
    // grow from the other structs.
    let mut with: BTreeSet<&str> = structs().map(|d| d.schema_name.as_str()).filter(|s| !lists.contains(s)).collect();
    loop {
        let held: Vec<&str> = lists
            .iter()
            .copied()
            .filter(|l| !with.contains(l))
            .filter(|l| with.iter().any(|s| holds(api, s, l)))
            .collect();
        if held.is_empty() {
            break;
        }
        with.extend(held);
    }
    // The Kubernetes crate's own are named there, among its types, which
    // take no `<Type>Apply` name: never numbered.
    let mut taken: BTreeMap<&[String], BTreeSet<String>> = BTreeMap::new();
    for def in api.types.values().filter(|d| !d.external) {
        taken.entry(&def.module).or_default().insert(def.rust_name.clone());
    }
    let mut names = BTreeMap::new();
    for schema in with {
        let def = &api.types[schema];
        let name = if def.external {
            naming::apply_type_name(&def.rust_name, |_| false)
        } else {
            let module = taken.entry(&def.module).or_default();
            let name = naming::apply_type_name(&def.rust_name, |n| module.contains(n));
            module.insert(name.clone());
            name
        };
        names.insert(schema, name);
    }
    names
}

/// Whether the struct `schema` has a field mentioning `other`.
fn holds(api: &Api, schema: &str, other: &str) -> bool {
    let Some(TypeDef { shape: Shape::Struct(fields), .. }) = api.types.get(schema) else { return false };
    fields.iter().any(|f| {
        let mut refs = BTreeSet::new();
        f.ty.refs(&mut refs);
        refs.contains(other)
    })
}

/// A kind of lists: `metadata: ListMeta` and `items`.
fn is_list_kind(def: &TypeDef) -> bool {
    let Shape::Struct(fields) = &def.shape else { return false };
    def.is_kind()
        && fields.iter().any(|f| f.json_name == "metadata" && f.ty == FieldType::Ref(LIST_META.into()))
        && fields.iter().any(|f| f.json_name == "items" && matches!(f.ty, FieldType::Array(_)))
}

/// The apply configuration of `sp`, if it has one (`names`:
/// [`apply_names`]); `kind` when it implements `Resource`.
pub fn apply_plan<'a>(
    api: &'a Api,
    names: &BTreeMap<&'a str, String>,
    sp: &StructPlan<'a>,
    kind: Option<&KindPlan<'a>>,
) -> Option<ApplyPlan<'a>> {
    let name = names.get(sp.def.schema_name.as_str())?.clone();
    let fields: Vec<ApplyField<'a>> = sp.fields.iter().map(|fp| apply_field(api, names, fp.field, fp)).collect();
    let rest = sp.rest.map(|f| (f, naming::apply_method_name(&f.rust_name)));
    let kind_extras = sp.type_meta.map(|_| apply_kind(api, names, &fields, kind));
    let mut merge_fields: Vec<(&'a str, Merge<'a>)> = sp
        .fields
        .iter()
        .map(|fp| (fp.field.json_name.as_str(), merge(api, names, &fp.field.ty, &fp.field.merge)))
        .filter(|(_, m)| *m != Merge::Atomic)
        .collect();
    merge_fields.sort_by(|a, b| a.0.cmp(b.0));
    Some(ApplyPlan { name, fields, rest, type_meta: sp.type_meta, kind: kind_extras, merge_fields })
}

/// How a value of type `ty` merges, given what its schema node says
/// (`facts`), as kube-openapi's `schemaconv` reads a schema: a
/// `x-kubernetes-map-type: atomic` node (or referenced schema, unless the
/// property says `granular`) is atomic; structs and maps are otherwise
/// granular; a list is granular when its list type is `set` or `map`;
/// untyped JSON is deduced from the value. A list strategic merge patch
/// merges (patch strategy `merge`) is listed even where apply replaces it
/// whole, and a value whose patches retain keys (patch strategy
/// `retainKeys`) is wrapped in [`Merge::RetainKeys`] whatever apply does.
pub fn merge<'a>(
    api: &'a Api,
    names: &BTreeMap<&'a str, String>,
    ty: &'a FieldType,
    facts: &'a MergeFacts,
) -> Merge<'a> {
    let merged = merge_ignoring_retain_keys(api, names, ty, facts);
    if facts.retain_keys { Merge::RetainKeys(Box::new(merged)) } else { merged }
}

/// [`merge`] without the `RetainKeys` wrapper `facts` may ask for.
fn merge_ignoring_retain_keys<'a>(
    api: &'a Api,
    names: &BTreeMap<&'a str, String>,
    ty: &'a FieldType,
    facts: &'a MergeFacts,
) -> Merge<'a> {
    static NO_FACTS: MergeFacts = MergeFacts {
        map_type: None,
        list_type: ListType::Atomic,
        patch: PatchStrategy::Replace,
        retain_keys: false,
        inner: None,
    };
    let inner = facts.inner.as_deref().unwrap_or(&NO_FACTS);
    let atomic = facts.map_type == Some(MapType::Atomic);
    match ty {
        FieldType::Ref(r) => {
            let def = api.types.get(r.as_str());
            if facts.map_type.or(def.and_then(|d| d.map_type)) == Some(MapType::Atomic) {
                return Merge::Atomic;
            }
            match def.map(|d| &d.shape) {
                Some(Shape::Declared) => Merge::Declared(r),
                Some(Shape::Struct(_)) => match names.get_key_value(r.as_str()) {
                    Some((schema, name)) => Merge::Struct { schema, name: name.clone() },
                    None => Merge::Atomic,
                },
                Some(Shape::Special(
                    Special::JsonValue
                    | Special::RawJsonText
                    | Special::SchemaOrArray
                    | Special::SchemaOrBool
                    | Special::SchemaOrStringArray,
                )) => Merge::Deduced,
                _ => Merge::Atomic,
            }
        }
        FieldType::Json if !atomic => Merge::Deduced,
        FieldType::Array(item) if facts.list_type.is_associative() || facts.patch != PatchStrategy::Replace => {
            Merge::List {
                apply: &facts.list_type,
                patch: &facts.patch,
                element: Box::new(merge(api, names, item, inner)),
            }
        }
        FieldType::Map(value) if !atomic => Merge::Map(Box::new(merge(api, names, value, inner))),
        _ => Merge::Atomic,
    }
}

/// The apply field of `f`, held as the struct's field `fp` is (boxed or
/// not, embedding kinds or not).
fn apply_field<'a>(
    api: &'a Api,
    names: &BTreeMap<&'a str, String>,
    f: &'a Field,
    fp: &FieldPlan<'a>,
) -> ApplyField<'a> {
    let ty = apply_type(api, names, &f.ty);
    let builder = match &f.ty {
        FieldType::Array(_) => Builder::Append,
        FieldType::Map(_) => Builder::Merge,
        _ => Builder::Set,
    };
    let codec = FieldPlan {
        field: f,
        plain: false,
        boxed: fp.boxed,
        writes_null: false,
        embedding: fp.embedding,
        seed: seed(api, &f.ty, fp.boxed),
        protobuf: None,
    };
    ApplyField { codec, ty, builder, method: naming::apply_method_name(&f.rust_name) }
}

fn apply_type<'a>(api: &'a Api, names: &BTreeMap<&'a str, String>, ty: &'a FieldType) -> ApplyType<'a> {
    let declared = |r: &str| api.types.get(r).is_some_and(|d| d.shape == Shape::Declared);
    let holds_struct = |t: &FieldType| {
        let mut refs = BTreeSet::new();
        t.refs(&mut refs);
        refs.iter().any(|r| names.contains_key(r.as_str()) || declared(r))
    };
    match ty {
        FieldType::Ref(r) if declared(r) => ApplyType::Declared(r),
        FieldType::Ref(r) => match names.get_key_value(r.as_str()) {
            Some((schema, name)) => ApplyType::Struct { schema, name: name.clone() },
            None => ApplyType::Leaf(ty),
        },
        FieldType::Array(inner) if holds_struct(inner) => ApplyType::List(Box::new(apply_type(api, names, inner))),
        FieldType::Map(inner) if holds_struct(inner) => ApplyType::Map(Box::new(apply_type(api, names, inner))),
        _ => ApplyType::Leaf(ty),
    }
}

/// The runtime's reading of an optional field: as the struct's optional
/// fields are read ([`super::fields`]), `managedFields` always.
fn seed(api: &Api, ty: &FieldType, boxed: bool) -> Seed {
    let object = is_struct(api, ty);
    let list_of_objects = matches!(ty, FieldType::Array(inner) if is_struct(api, inner));
    match ty {
        _ if object && boxed => Seed::OptionBox,
        _ if object => Seed::OptionStruct,
        FieldType::Array(_) if !boxed && list_of_objects => Seed::OptionStructList,
        FieldType::Array(_) if !boxed => Seed::OptionList,
        FieldType::String if !boxed => Seed::OptionText,
        _ if is_text_map(api, ty) && !boxed => Seed::OptionSharedMap,
        _ => Seed::Value,
    }
}

fn apply_kind<'a>(
    api: &'a Api,
    names: &BTreeMap<&'a str, String>,
    fields: &[ApplyField<'a>],
    kind: Option<&KindPlan<'a>>,
) -> ApplyKind<'a> {
    let metadata = fields.iter().position(|af| {
        af.codec.field.json_name == "metadata" && af.codec.field.ty == FieldType::Ref(OBJECT_META.into())
    });
    let meta_fields: &[Field] = match api.types.get(OBJECT_META).map(|d| &d.shape) {
        Some(Shape::Struct(fields)) if metadata.is_some() => fields,
        _ => &[],
    };
    let meta_field = |json: &str| meta_fields.iter().find(|f| f.json_name == json);
    let own: BTreeSet<&str> = fields.iter().map(|af| af.method.as_str()).collect();
    let delegates = METADATA_DELEGATES
        .iter()
        .filter_map(|json| meta_field(json))
        .map(|f| {
            let fp = super::fields::field_plan(api, &api.types[OBJECT_META], f);
            apply_field(api, names, f, &fp)
        })
        .filter(|af| !own.contains(af.method.as_str()))
        .collect();
    // A kind served by no resource is taken as namespaced, as client-go does.
    let namespaced = kind.is_none_or(|k| k.resource.namespaced);
    let constructor = meta_field("name").map(|name| Constructor {
        with_name: naming::apply_method_name(&name.rust_name),
        with_namespace: meta_field("namespace").filter(|_| namespaced).map(|f| naming::apply_method_name(&f.rust_name)),
    });
    let extract = kind.filter(|k| k.object && k.resource.verbs.contains(&Verb::Patch)).map(|k| Extract {
        status: k.resource.subresources.get("status").is_some_and(|s| s.verbs.contains(&Verb::Patch)),
    });
    ApplyKind { metadata, constructor, delegates, extract }
}

#[cfg(test)]
mod tests;
