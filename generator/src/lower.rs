//! Schemas → IR types: the one place that decides how a JSON Schema node is
//! represented in Rust, for built-in documents, CRD manifests and live
//! clusters alike.
//!
//! # Mapping
//! | schema | Rust |
//! |---|---|
//! | `$ref`, or `allOf` with one member | the referenced type |
//! | object with `properties` | a struct; inline ones are named from their path (see [`nested`]) |
//! | object with `additionalProperties: <schema>` / `true` | `BTreeMap<String, T>` / `BTreeMap<String, Value>` |
//! | object without either, `x-kubernetes-preserve-unknown-fields` (also beside `properties`), no `type` | `serde_json::Value`, kept as received |
//! | `x-kubernetes-preserve-unknown-fields` at a kind's root | its struct, with the undeclared fields in a flattened `extra` map |
//! | `x-kubernetes-int-or-string` | `IntOrString` |
//! | `x-kubernetes-embedded-resource` | a struct of its properties whose `metadata` is `ObjectMeta`; raw JSON when it also preserves unknown fields |
//! | string `enum` (custom resources) | an enum with an `Other(String)` fallback for values a newer server sends |
//! | integer or boolean `enum`, mixed `enum` | the plain type; the allowed values are listed in the docs |
//! | `format`: `date-time` / `byte` / `int32` / `int64`, `double` | `Time` / `ByteString` / `i32` / `i64` / `f64` |
//! | array (also of arrays) | `Vec<T>` |
//! | `nullable`, not `required` | `Option<T>` (a required, nullable field too, written as `null` when `None`) |
//! | `oneOf`, `anyOf`, `allOf` (several), `not` | validation only: the type comes from the node's own keywords |
//! | `default`, `x-kubernetes-validations`, list and map types | documentation |
//!
//! Built-in Kubernetes types (schemas under `io.k8s.api`,
//! `io.k8s.apimachinery`, `io.k8s.apiextensions-apiserver` and
//! `io.k8s.kube-aggregator`) keep `String` for enum-valued fields, as
//! client-go's Go types do: the apiserver adds values over releases.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::error::{Error, Result, pointer_token};
use crate::ir::{
    Field, FieldType, Gvk, ListType, MapType, MergeFacts, OBJECT_META, PatchStrategy, Shape, Special, TypeDef, Variant,
};
use crate::naming;
use crate::schema::{AdditionalProperties, Schema};

pub mod known;
pub mod nested;

/// `metav1.Time`, which a custom resource's `format: date-time` string
/// becomes.
pub const TIME: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Time";
/// `intstr.IntOrString`, which every `x-kubernetes-int-or-string` node
/// becomes.
pub const INT_OR_STRING: &str = "io.k8s.apimachinery.pkg.util.intstr.IntOrString";
/// `metav1.MicroTime`, written with six fraction digits.
pub const MICRO_TIME: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime";
/// `resource.Quantity`, kept as the text it was given.
pub const QUANTITY: &str = "io.k8s.apimachinery.pkg.api.resource.Quantity";

/// Schemas of Kubernetes' own Go types, as opposed to custom resources.
pub fn is_builtin_schema(name: &str) -> bool {
    ["io.k8s.api.", "io.k8s.apimachinery.", "io.k8s.apiextensions-apiserver.", "io.k8s.kube-aggregator."]
        .iter()
        .any(|p| name.starts_with(p))
}

/// Schemas whose representation is chosen by hand, by schema name.
pub fn special_for(schema_name: &str) -> Option<Special> {
    Some(match schema_name {
        INT_OR_STRING => Special::IntOrString,
        QUANTITY => Special::Quantity,
        TIME => Special::Time,
        MICRO_TIME => Special::MicroTime,
        "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1" => Special::RawJsonText,
        "io.k8s.apimachinery.pkg.runtime.RawExtension" => Special::JsonValue,
        "io.k8s.apimachinery.pkg.apis.meta.v1.Patch" => Special::JsonValue,
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON" => Special::JsonValue,
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrArray" => Special::SchemaOrArray,
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrBool" => Special::SchemaOrBool,
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrStringArray" => {
            Special::SchemaOrStringArray
        }
        _ => return None,
    })
}

/// A type defined inline in another schema, named later from its path.
#[derive(Debug, Clone)]
pub struct Nested {
    /// The schema that holds it.
    pub owner: String,
    /// Property names from the owner down to it (array items and map
    /// values add none).
    pub segments: Vec<String>,
    /// Its definition; `rust_name` is set when names are assigned.
    pub def: TypeDef,
}

/// Where a node sits: the owning schema and the property path to it.
struct Place<'p> {
    owner: &'p TypeDef,
    segments: Vec<String>,
    pointer: String,
}

impl Place<'_> {
    fn child(&self, segment: Option<&str>, pointer_suffix: &str) -> Place<'_> {
        let mut segments = self.segments.clone();
        segments.extend(segment.map(str::to_owned));
        Place { owner: self.owner, segments, pointer: format!("{}{pointer_suffix}", self.pointer) }
    }
}

/// Lowers the schemas of one document.
pub struct Lowering<'a> {
    /// The document's path, for errors.
    pub path: &'a std::path::Path,
    /// Its label, recorded as each type's source.
    pub source: &'a str,
    /// Every schema name a `$ref` may name.
    pub known: &'a BTreeSet<String>,
    /// Inline types found so far, keyed by [`nested_key`].
    pub nested: Vec<Nested>,
    /// Apimachinery shapes an inline object of a custom resource is
    /// replaced by when it matches one ([`known::reusable`]).
    pub reusable: Vec<(&'static str, Vec<Field>)>,
}

/// The schema a `$ref` names, which must be one of `known`.
pub fn resolve_ref(known: &BTreeSet<String>, reference: &str) -> std::result::Result<String, String> {
    let name =
        reference.strip_prefix("#/components/schemas/").ok_or_else(|| format!("unsupported $ref {reference:?}"))?;
    if !known.contains(name) {
        return Err(format!("$ref to a schema that does not exist: {reference:?}"));
    }
    Ok(name.to_owned())
}

/// The schema name of an inline type: its owner and JSON pointer, which no
/// real schema name contains.
pub fn nested_key(owner: &str, pointer: &str) -> String {
    format!("{owner}#{pointer}")
}

impl<'a> Lowering<'a> {
    fn err(&self, pointer: &str, message: impl Into<String>) -> Error {
        Error::Schema { path: self.path.to_owned(), pointer: pointer.to_owned(), message: message.into() }
    }

    fn reference(&self, reference: &str, pointer: &str) -> Result<String> {
        resolve_ref(self.known, reference).map_err(|m| self.err(pointer, m))
    }

    /// One named schema (`components.schemas[name]`) as a type definition.
    pub fn type_def(&mut self, name: &str, schema: &Schema) -> Result<TypeDef> {
        let pointer = format!("/components/schemas/{}", pointer_token(name));
        if schema.reference.is_some() {
            return Err(self.err(&pointer, "a schema that is only a $ref is not supported"));
        }
        let (module, rust_name) = naming::schema_path(name);
        let rust_name = rust_name.ok_or_else(|| {
            self.err(
                &pointer,
                format!(
                    "the type name of schema {name:?} is not a Rust identifier (letters, digits, `-`, `_`, starting with a letter)"
                ),
            )
        })?;
        let gvks = gvks(schema.gvk.as_ref())
            .map_err(|m| self.err(&format!("{pointer}/x-kubernetes-group-version-kind"), m))?;
        let map_type = self.map_type(schema, &pointer)?;
        let mut def = TypeDef {
            schema_name: name.to_owned(),
            feature: naming::module_feature(&module),
            module,
            rust_name,
            source: self.source.to_owned(),
            doc: schema.description.clone(),
            gvk: if gvks.len() == 1 { gvks.first().cloned() } else { None },
            gvks,
            shape: Shape::Special(Special::JsonValue),
            owner: None,
            external: false,
            map_type,
            declared_at: None,
            keywords: Default::default(),
        };
        def.shape = if let Some(special) = special_for(name) {
            Shape::Special(special)
        } else if is_object(schema) {
            let place = Place { owner: &def, segments: Vec::new(), pointer: pointer.clone() };
            let mut fields = self.fields(schema, &place)?;
            if schema.preserves_unknown_fields() && !is_builtin_schema(name) {
                fields.push(rest_field(&fields));
            }
            Shape::Struct(fields)
        } else if is_unconstrained(schema) {
            Shape::Special(Special::JsonValue)
        } else {
            return Err(self.err(&pointer, "unsupported top-level schema shape: not an object"));
        };
        Ok(def)
    }

    fn fields(&mut self, schema: &Schema, place: &Place) -> Result<Vec<Field>> {
        let required: BTreeSet<&str> = schema.required.iter().map(String::as_str).collect();
        let mut fields = Vec::with_capacity(schema.properties.len());
        let holds_object = (place.segments.is_empty() || schema.embedded_resource) && is_kind_like(schema);
        for (json_name, prop) in &schema.properties {
            let p = place.child(Some(json_name), &format!("/properties/{}", pointer_token(json_name)));
            let merge = self.merge_facts(prop, &p.pointer)?;
            let ty = if json_name == "metadata" && holds_object {
                // A kind's (or embedded resource's) metadata is always
                // ObjectMeta, whatever the CRD says of it.
                self.metadata_type(prop, &p)?
            } else {
                self.field_type(prop, &p)?
            };
            fields.push(Field {
                json_name: json_name.clone(),
                rust_name: String::new(),
                ty,
                required: required.contains(json_name.as_str()),
                nullable: prop.nullable,
                doc: field_doc(prop, !is_builtin_schema(&place.owner.schema_name)),
                boxed: false,
                flatten: false,
                merge,
                keywords: Default::default(),
            });
        }
        let wire: Vec<&str> = fields.iter().map(|f| f.json_name.as_str()).collect();
        let names = naming::dedupe(&wire, naming::field_name);
        for (f, name) in fields.iter_mut().zip(names) {
            f.rust_name = name;
        }
        Ok(fields)
    }

    fn metadata_type(&mut self, prop: &Schema, place: &Place) -> Result<FieldType> {
        if prop.reference.is_some() || !prop.all_of.is_empty() || !self.known.contains(OBJECT_META) {
            return self.field_type(prop, place);
        }
        Ok(FieldType::Ref(OBJECT_META.to_owned()))
    }

    /// The type of a property, array item or map value.
    fn field_type(&mut self, schema: &Schema, place: &Place) -> Result<FieldType> {
        let pointer = &place.pointer;
        if let Some(r) = &schema.reference {
            return Ok(FieldType::Ref(self.reference(r, &format!("{pointer}/$ref"))?));
        }
        if schema.ty.is_none() && schema.all_of.len() == 1 && schema.properties.is_empty() {
            let inner = place.child(None, "/allOf/0");
            return self.field_type(&schema.all_of[0], &inner);
        }
        if schema.int_or_string {
            return self.well_known(INT_OR_STRING, pointer);
        }
        let custom = !is_builtin_schema(&place.owner.schema_name);
        if schema.preserves_unknown_fields() && (custom || schema.properties.is_empty()) {
            return Ok(FieldType::Json);
        }
        Ok(match schema.ty.as_deref() {
            Some("string") => match schema.format.as_deref() {
                _ if custom && string_enum(schema).is_some() => self.nested_enum(schema, place),
                Some("byte") => FieldType::Bytes,
                Some("date-time") if custom => self.well_known(TIME, pointer)?,
                _ => FieldType::String,
            },
            Some("integer") => match schema.format.as_deref() {
                Some("int32") => FieldType::I32,
                _ => FieldType::I64,
            },
            Some("number") => FieldType::F64,
            Some("boolean") => FieldType::Bool,
            Some("array") => match &schema.items {
                Some(items) => FieldType::Array(Box::new(self.field_type(items, &place.child(None, "/items"))?)),
                None => FieldType::Array(Box::new(FieldType::Json)),
            },
            Some("object") | None => self.object_type(schema, place)?,
            Some(other) => return Err(self.err(pointer, format!("unsupported type {other:?}"))),
        })
    }

    fn object_type(&mut self, schema: &Schema, place: &Place) -> Result<FieldType> {
        if !schema.properties.is_empty() {
            return self.nested_struct(schema, place);
        }
        Ok(match &schema.additional_properties {
            Some(AdditionalProperties::Schema(values)) => {
                FieldType::Map(Box::new(self.field_type(values, &place.child(None, "/additionalProperties"))?))
            }
            Some(AdditionalProperties::Bool(true)) => FieldType::Map(Box::new(FieldType::Json)),
            _ => FieldType::Json,
        })
    }

    /// What the node at `pointer` (a property, array item or map value)
    /// says of how server-side apply merges its value, as kube-openapi's
    /// `schemaconv` reads it.
    fn merge_facts(&self, schema: &Schema, pointer: &str) -> Result<MergeFacts> {
        // A one-member `allOf` stands for its member, whose keywords count
        // where the node has none of its own.
        let member = (schema.ty.is_none() && schema.all_of.len() == 1 && schema.properties.is_empty())
            .then(|| (&schema.all_of[0], format!("{pointer}/allOf/0")));
        let mut map_type = self.map_type(schema, pointer)?;
        let mut list_type = self.list_type(schema, pointer)?;
        let mut patch = patch_strategy(schema);
        let mut retain_keys = retains_keys(schema);
        let (node, node_pointer) = match &member {
            Some((m, at)) => {
                map_type = map_type.or(self.map_type(m, at)?);
                if schema.list_type.is_none() && schema.patch_strategy.is_none() {
                    list_type = self.list_type(m, at)?;
                }
                if schema.patch_strategy.is_none() {
                    patch = patch_strategy(m);
                    retain_keys = retains_keys(m);
                }
                (*m, at.as_str())
            }
            // An inline node names no schema whose map type could apply:
            // one lowered to a type it copies (a CRD's selector written out
            // is `LabelSelector`, which is atomic) stays granular.
            None if schema.reference.is_none() => {
                map_type = map_type.or(Some(MapType::Granular));
                (schema, pointer)
            }
            None => (schema, pointer),
        };
        let inner = if let Some(items) = &node.items {
            Some(self.merge_facts(items, &format!("{node_pointer}/items"))?)
        } else if let Some(AdditionalProperties::Schema(values)) = &node.additional_properties {
            Some(self.merge_facts(values, &format!("{node_pointer}/additionalProperties"))?)
        } else if node.ty.as_deref() == Some("array") {
            // The items of an array without `items` are untyped and atomic.
            Some(MergeFacts { map_type: Some(MapType::Atomic), ..MergeFacts::default() })
        } else {
            None
        };
        Ok(MergeFacts { map_type, list_type, patch, retain_keys, inner: inner.map(Box::new) })
    }

    /// A node's `x-kubernetes-map-type`.
    fn map_type(&self, schema: &Schema, pointer: &str) -> Result<Option<MapType>> {
        Ok(match schema.map_type.as_deref() {
            None => None,
            Some("atomic") => Some(MapType::Atomic),
            Some("granular") => Some(MapType::Granular),
            Some(other) => {
                return Err(self.err(
                    &format!("{pointer}/x-kubernetes-map-type"),
                    format!("unknown map type {other:?}: expected \"atomic\" or \"granular\""),
                ));
            }
        })
    }

    /// A node's list type: `x-kubernetes-list-type`, else, as for built-in
    /// types without one, a patch strategy containing `merge` makes the
    /// list associative; otherwise atomic. A `map` list is keyed by its
    /// `x-kubernetes-list-map-keys`, else (as kube-openapi's `schemaconv`
    /// reads a merge strategy) its patch merge key.
    fn list_type(&self, schema: &Schema, pointer: &str) -> Result<ListType> {
        Ok(match schema.list_type.as_deref() {
            Some("atomic") => ListType::Atomic,
            Some("set") => ListType::Set,
            Some("map") if !schema.list_map_keys.is_empty() => ListType::Map(schema.list_map_keys.clone()),
            Some("map") => match &schema.patch_merge_key {
                Some(key) => ListType::Map(vec![key.clone()]),
                None => {
                    return Err(self.err(
                        pointer,
                        "x-kubernetes-list-type \"map\" without x-kubernetes-list-map-keys: the key fields are needed",
                    ));
                }
            },
            Some(other) => {
                return Err(self.err(
                    &format!("{pointer}/x-kubernetes-list-type"),
                    format!("unknown list type {other:?}: expected \"atomic\", \"set\" or \"map\""),
                ));
            }
            None => match schema.patch_strategy.as_deref() {
                Some(strategy) if strategy.split(',').any(|s| s == "merge") => match &schema.patch_merge_key {
                    Some(key) => ListType::Map(vec![key.clone()]),
                    None => ListType::Set,
                },
                _ => ListType::Atomic,
            },
        })
    }

    /// A schema every crate has (`IntOrString`, `Time`), by name.
    fn well_known(&self, name: &str, pointer: &str) -> Result<FieldType> {
        if self.known.contains(name) {
            Ok(FieldType::Ref(name.to_owned()))
        } else {
            Err(self.err(pointer, format!("needs the schema {name}, which is not among the inputs")))
        }
    }

    fn nested_struct(&mut self, schema: &Schema, place: &Place) -> Result<FieldType> {
        let mark = self.nested.len();
        let fields = self.fields(schema, place)?;
        if !is_builtin_schema(&place.owner.schema_name)
            && let Some(reused) = self.reused(&fields)
        {
            // The inline types made for its fields (an enum of condition
            // statuses) go with it.
            self.nested.truncate(mark);
            return Ok(FieldType::Ref(reused.to_owned()));
        }
        let mut def = self.nested_def(schema, place);
        def.shape = Shape::Struct(fields);
        Ok(self.push_nested(def, place))
    }

    /// The apimachinery type these fields copy, if one is among the inputs.
    fn reused(&self, fields: &[Field]) -> Option<&'static str> {
        let is_string_enum = |key: &str| {
            self.nested.iter().any(|n| n.def.schema_name == key && matches!(n.def.shape, Shape::Enum { .. }))
        };
        self.reusable
            .iter()
            .find(|(schema, candidate)| {
                self.known.contains(*schema) && known::same_fields(fields, candidate, is_string_enum)
            })
            .map(|(schema, _)| *schema)
    }

    fn nested_enum(&mut self, schema: &Schema, place: &Place) -> FieldType {
        let values = string_enum(schema).unwrap_or_default();
        let mut def = self.nested_def(schema, place);
        let wire: Vec<&str> = values.iter().map(String::as_str).collect();
        let names = naming::dedupe(&wire, naming::variant_name);
        // The fallback is `Other`, numbered like any name when a value takes it.
        let mut fallback = "Other".to_owned();
        let mut n = 2;
        while names.contains(&fallback) {
            fallback = format!("Other_{n}");
            n += 1;
        }
        def.shape = Shape::Enum {
            variants: values.iter().zip(names).map(|(v, n)| Variant { wire: v.clone(), rust_name: n }).collect(),
            fallback,
        };
        self.push_nested(def, place)
    }

    fn nested_def(&self, schema: &Schema, place: &Place) -> TypeDef {
        let owner = place.owner;
        TypeDef {
            schema_name: nested_key(&owner.schema_name, &place.pointer),
            module: owner.module.clone(),
            rust_name: String::new(),
            source: owner.source.clone(),
            feature: owner.feature.clone(),
            doc: schema.description.clone(),
            gvk: None,
            gvks: Vec::new(),
            shape: Shape::Special(Special::JsonValue),
            owner: Some(owner.schema_name.clone()),
            external: false,
            // Validated with the property's merge facts.
            map_type: self.map_type(schema, &place.pointer).ok().flatten(),
            declared_at: None,
            keywords: Default::default(),
        }
    }

    fn push_nested(&mut self, def: TypeDef, place: &Place) -> FieldType {
        let key = def.schema_name.clone();
        self.nested.push(Nested { owner: place.owner.schema_name.clone(), segments: place.segments.clone(), def });
        FieldType::Ref(key)
    }
}

/// The field keeping a kind's undeclared fields when its root schema
/// preserves unknown fields: `extra`, numbered if a property takes the name.
fn rest_field(fields: &[Field]) -> Field {
    let taken = |n: &str| fields.iter().any(|f| f.rust_name == n);
    let name = std::iter::once("extra".to_owned())
        .chain((2..).map(|n| format!("extra_{n}")))
        .find(|n| !taken(n))
        .unwrap_or_default();
    Field {
        json_name: String::new(),
        rust_name: name,
        ty: FieldType::Map(Box::new(FieldType::Json)),
        required: true,
        nullable: false,
        doc: Some(
            "Fields the schema does not declare, kept as received (`x-kubernetes-preserve-unknown-fields`).".into(),
        ),
        boxed: false,
        flatten: true,
        merge: MergeFacts::default(),
        keywords: Default::default(),
    }
}

/// An object schema: `type: object` or properties without a type.
fn is_object(schema: &Schema) -> bool {
    schema.ty.as_deref() == Some("object") || (schema.ty.is_none() && !schema.properties.is_empty())
}

/// A schema with `apiVersion`, `kind` and `metadata`: a kind, or an
/// embedded resource.
fn is_kind_like(schema: &Schema) -> bool {
    ["apiVersion", "kind", "metadata"].iter().all(|p| schema.properties.contains_key(*p))
}

fn is_unconstrained(schema: &Schema) -> bool {
    schema.ty.is_none()
        && schema.properties.is_empty()
        && schema.items.is_none()
        && schema.one_of.is_empty()
        && schema.any_of.is_empty()
        && schema.all_of.is_empty()
        && schema.not.is_none()
        && schema.additional_properties.is_none()
}

/// The values of a string enum, without `null`; `None` when the node has
/// no enum or one with values that are not strings.
fn string_enum(schema: &Schema) -> Option<Vec<String>> {
    let values = schema.enum_values.as_ref()?;
    let mut out = Vec::new();
    for v in values {
        match v {
            Value::String(s) => {
                if !out.contains(s) {
                    out.push(s.clone());
                }
            }
            Value::Null => {}
            _ => return None,
        }
    }
    (!out.is_empty()).then_some(out)
}

/// The group/version/kinds of an `x-kubernetes-group-version-kind`: one
/// or a list, each of names the apiserver would accept (a group that is
/// empty or a DNS-1123 subdomain, a DNS-1035 version, a kind), since they
/// become paths, modules and type names.
pub fn gvks(value: Option<&Value>) -> std::result::Result<Vec<Gvk>, String> {
    let Some(value) = value else { return Ok(Vec::new()) };
    let parse_one = |v: &Value| -> std::result::Result<Gvk, String> {
        let field = |name: &str| v.get(name).and_then(Value::as_str).map(str::to_owned);
        let (Some(group), Some(version), Some(kind)) = (field("group"), field("version"), field("kind")) else {
            return Err("expected {group, version, kind}".to_owned());
        };
        if let Some(e) = naming::group_error(&group, false) {
            return Err(format!("group {group:?} is not a DNS-1123 subdomain: {e}"));
        }
        if let Some(e) = naming::dns1035_label_error(&version) {
            return Err(format!("version {version:?} is not a DNS-1035 label: {e}"));
        }
        if let Some(e) = naming::kind_error(&kind) {
            return Err(format!("kind {kind:?} is not a kind name: {e}"));
        }
        Ok(Gvk { group, version, kind })
    };
    match value {
        Value::Array(items) => items.iter().map(parse_one).collect(),
        v => Ok(vec![parse_one(v)?]),
    }
}

/// A field's doc: the description and, for custom resources, what else the
/// schema says that Rust types do not (default, allowed values, rules).
fn field_doc(schema: &Schema, extended: bool) -> Option<String> {
    let mut doc = schema.description.clone().unwrap_or_default();
    if extended {
        let mut notes = Vec::new();
        // A referenced type's `default: {}` is the publisher's, not the field's.
        let is_ref = schema.reference.is_some() || !schema.all_of.is_empty();
        if let Some(d) = schema.default.as_ref().filter(|_| !is_ref) {
            notes.push(format!("Default: `{d}`."));
        }
        if let Some(values) = &schema.enum_values
            && (string_enum(schema).is_none() || schema.ty.as_deref() != Some("string"))
        {
            let list: Vec<String> = values.iter().map(|v| format!("`{v}`")).collect();
            notes.push(format!("Allowed values: {}.", list.join(", ")));
        }
        if schema.preserves_unknown_fields() && !schema.properties.is_empty() {
            let known: Vec<String> = schema.properties.keys().map(|k| format!("`{k}`")).collect();
            notes.push(format!("Raw JSON, keeping unknown fields; known fields: {}.", known.join(", ")));
        }
        for v in &schema.validations {
            let message = v.message.as_deref().map(|m| format!(" ({m})")).unwrap_or_default();
            notes.push(format!("Validation: `{}`{message}.", v.rule.replace('`', "'")));
        }
        if !notes.is_empty() {
            if !doc.is_empty() {
                doc.push_str("\n\n");
            }
            doc.push_str(&notes.join("\n"));
        }
    }
    (!doc.trim().is_empty()).then_some(doc)
}

/// How strategic merge patch merges the array at a node: `merge` among the
/// comma-separated `x-kubernetes-patch-strategy` (beside `retainKeys`, see
/// [`retains_keys`]) merges it, by its `x-kubernetes-patch-merge-key` if it
/// has one.
fn patch_strategy(schema: &Schema) -> PatchStrategy {
    match schema.patch_strategy.as_deref() {
        Some(strategy) if strategy.split(',').any(|s| s == "merge") => {
            PatchStrategy::Merge { key: schema.patch_merge_key.clone() }
        }
        _ => PatchStrategy::Replace,
    }
}

/// Whether `retainKeys` is among a node's comma-separated
/// `x-kubernetes-patch-strategy`: its strategic merge patches carry
/// `$retainKeys`.
fn retains_keys(schema: &Schema) -> bool {
    schema.patch_strategy.as_deref().is_some_and(|strategy| strategy.split(',').any(|s| s == "retainKeys"))
}
