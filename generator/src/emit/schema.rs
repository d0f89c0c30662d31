//! The runtime's `Schema` of a type ([`crate::plan::schemas`]): its
//! structural OpenAPI schema, as a CRD holds it, for CRDs written from
//! Rust types (`#[derive(CustomResource)]`).
//!
//! What the IR knows is written as one JSON template at generation time;
//! the schemas of the types a field holds are placed into it when the
//! program asks (`k8s_client_runtime::schema::from_template`), so each
//! type's schema is written once, in its own impl.

use proc_macro2::TokenStream;
use quote::quote;
use serde_json::{Map, Value, json};

use super::tokens::{ident, type_path};
use crate::ir::{Api, Field, FieldType, ListType, MapType, Shape, Special, TypeDef, Variant};

/// The schema of a field type, and the JSON pointers (below `at`) where
/// the schemas of the types it names go.
fn type_schema(ty: &FieldType, at: &str, places: &mut Vec<(String, String)>) -> Value {
    match ty {
        FieldType::String => json!({"type": "string"}),
        FieldType::Bool => json!({"type": "boolean"}),
        FieldType::I32 => json!({"type": "integer", "format": "int32"}),
        FieldType::I64 => json!({"type": "integer", "format": "int64"}),
        FieldType::F64 => json!({"type": "number", "format": "double"}),
        FieldType::Bytes => json!({"type": "string", "format": "byte"}),
        FieldType::Json => json!({"x-kubernetes-preserve-unknown-fields": true}),
        FieldType::Ref(r) => {
            places.push((at.to_owned(), r.clone()));
            json!({})
        }
        FieldType::Array(inner) => {
            json!({"type": "array", "items": type_schema(inner, &format!("{at}/items"), places)})
        }
        FieldType::Map(inner) => json!({
            "type": "object",
            "additionalProperties": type_schema(inner, &format!("{at}/additionalProperties"), places),
        }),
    }
}

/// A property's schema: its type's, with what the property says of it.
fn field_schema(api: &Api, f: &Field, at: &str, places: &mut Vec<(String, String)>) -> Value {
    let mut schema = type_schema(&f.ty, at, places);
    let Value::Object(map) = &mut schema else { return schema };
    if let Some(doc) = &f.doc {
        map.insert("description".into(), doc.clone().into());
    }
    if f.nullable {
        map.insert("nullable".into(), true.into());
    }
    match &f.merge.list_type {
        ListType::Atomic => {}
        ListType::Set => {
            map.insert("x-kubernetes-list-type".into(), "set".into());
        }
        ListType::Map(keys) => {
            map.insert("x-kubernetes-list-type".into(), "map".into());
            map.insert("x-kubernetes-list-map-keys".into(), keys.clone().into());
        }
    }
    // Only an object has a map type: the apiserver refuses one elsewhere
    // (apimachinery's spec puts `granular` on scalars too).
    let object = match &f.ty {
        FieldType::Map(_) => true,
        FieldType::Ref(r) => matches!(api.types.get(r).map(|d| &d.shape), Some(Shape::Struct(_) | Shape::Declared)),
        _ => false,
    };
    match f.merge.map_type.filter(|_| object) {
        Some(MapType::Atomic) => {
            map.insert("x-kubernetes-map-type".into(), "atomic".into());
        }
        Some(MapType::Granular) => {
            map.insert("x-kubernetes-map-type".into(), "granular".into());
        }
        None => {}
    }
    for (key, value) in &f.keywords {
        map.insert(key.clone(), value.clone());
    }
    schema
}

/// The schema of a struct's fields (`properties`, `required`), with the
/// pointers of the held types' schemas.
pub fn object_schema(api: &Api, def: &TypeDef, fields: &[Field], places: &mut Vec<(String, String)>) -> Value {
    let mut map = Map::new();
    map.insert("type".into(), "object".into());
    if let Some(doc) = &def.doc {
        map.insert("description".into(), doc.clone().into());
    }
    let mut properties = Map::new();
    let mut required = Vec::new();
    for f in fields {
        if f.flatten {
            map.insert("x-kubernetes-preserve-unknown-fields".into(), true.into());
            continue;
        }
        let at = format!("/properties/{}", f.json_name.replace('~', "~0").replace('/', "~1"));
        properties.insert(f.json_name.clone(), field_schema(api, f, &at, places));
        if f.required {
            required.push(Value::from(f.json_name.clone()));
        }
    }
    if !properties.is_empty() {
        map.insert("properties".into(), properties.into());
    }
    if !required.is_empty() {
        map.insert("required".into(), required.into());
    }
    if def.map_type == Some(MapType::Atomic) {
        map.insert("x-kubernetes-map-type".into(), "atomic".into());
    }
    for (key, value) in &def.keywords {
        map.insert(key.clone(), value.clone());
    }
    Value::Object(map)
}

/// The schema of a string enum.
pub fn enum_schema(def: &TypeDef, variants: &[Variant]) -> Value {
    let mut map = Map::new();
    map.insert("type".into(), "string".into());
    if let Some(doc) = &def.doc {
        map.insert("description".into(), doc.clone().into());
    }
    map.insert("enum".into(), variants.iter().map(|v| Value::from(v.wire.clone())).collect());
    Value::Object(map)
}

/// The schema of a special type, as apimachinery's CRDs write it.
fn special_schema(special: Special) -> Option<Value> {
    Some(match special {
        Special::IntOrString => json!({"x-kubernetes-int-or-string": true}),
        Special::Quantity => json!({
            "anyOf": [{"type": "integer"}, {"type": "string"}],
            "x-kubernetes-int-or-string": true,
        }),
        Special::Time => json!({"type": "string", "format": "date-time"}),
        Special::MicroTime => json!({"type": "string", "format": "date-time"}),
        Special::RawJsonText => json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}),
        Special::JsonValue => json!({"x-kubernetes-preserve-unknown-fields": true}),
        Special::SchemaOrArray | Special::SchemaOrBool | Special::SchemaOrStringArray => return None,
    })
}

/// `Schema::schema()` returning `template` with the held types' schemas
/// placed at their pointers.
pub fn schema_body(api: &Api, template: &Value, places: &[(String, String)]) -> TokenStream {
    let text = template.to_string();
    let places = places.iter().map(|(pointer, schema)| {
        let path = type_path(api, schema);
        quote!((#pointer, <#path as ::k8s_client_runtime::schema::Schema>::schema))
    });
    quote!(::k8s_client_runtime::schema::from_template(#text, &[#(#places),*]))
}

/// The `Schema` impl of `def`, when it has one.
pub fn schema_impl(api: &Api, def: &TypeDef) -> TokenStream {
    let mut places = Vec::new();
    let template = match &def.shape {
        Shape::Struct(fields) => object_schema(api, def, fields, &mut places),
        Shape::Enum { variants, .. } => enum_schema(def, variants),
        Shape::Special(s) => match special_schema(*s) {
            Some(schema) => schema,
            None => return TokenStream::new(),
        },
        Shape::Declared => return TokenStream::new(),
    };
    let name = ident(&def.rust_name);
    let body = schema_body(api, &template, &places);
    quote! {
        impl ::k8s_client_runtime::schema::Schema for #name {
            fn schema() -> ::serde_json::Value {
                #body
            }
        }
    }
}
