//! Reading apiserver OpenAPI v3 documents into the IR.
//!
//! The only module that knows about `openapiv3`. Input is a directory in the
//! apiserver's layout (`api/v1.json`, `apis/<group>/<version>.json`); every
//! error names the file and the JSON pointer of the node it is about.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use openapiv3::{
    AdditionalProperties, IntegerFormat, OpenAPI, Operation, Parameter, ParameterSchemaOrContent, ReferenceOr, Schema,
    SchemaKind, StringFormat, Type, VariantOrUnknownOrEmpty,
};

use crate::error::{Error, Result, pointer_token};
use crate::ir::{Api, Field, FieldType, Gvk, Param, Resource, Shape, Special, Subresource, TypeDef, Verb};
use crate::naming;

/// One parsed input document.
pub struct Document {
    /// Path relative to the specs directory, with `/` separators (`apis/apps/v1.json`).
    pub rel_path: String,
    pub path: PathBuf,
    pub openapi: OpenAPI,
}

/// Finds and parses every document of a specs directory, in sorted order.
pub fn load_dir(dir: &Path) -> Result<Vec<Document>> {
    let mut rel_paths = Vec::new();
    let core = dir.join("api").join("v1.json");
    if core.is_file() {
        rel_paths.push("api/v1.json".to_owned());
    }
    let apis = dir.join("apis");
    if apis.is_dir() {
        for group in read_dir_sorted(&apis)? {
            if !group.is_dir() {
                continue;
            }
            for file in read_dir_sorted(&group)? {
                if file.extension().is_some_and(|e| e == "json") {
                    let rel = file.strip_prefix(dir).unwrap_or(&file);
                    rel_paths.push(rel.to_string_lossy().replace('\\', "/"));
                }
            }
        }
    }
    if rel_paths.is_empty() {
        return Err(Error::NoDocuments(dir.to_owned()));
    }
    rel_paths.sort();
    rel_paths.into_iter().map(|rel| load_file(&dir.join(&rel), rel)).collect()
}

fn read_dir_sorted(dir: &Path) -> Result<Vec<PathBuf>> {
    let read = |source| Error::Read { path: dir.to_owned(), source };
    let mut entries: Vec<PathBuf> =
        std::fs::read_dir(dir).map_err(read)?.map(|e| e.map(|e| e.path())).collect::<Result<_, _>>().map_err(read)?;
    entries.sort();
    Ok(entries)
}

/// Parses one document, reporting a JSON pointer on failure.
pub fn load_file(path: &Path, rel_path: String) -> Result<Document> {
    let bytes = std::fs::read(path).map_err(|source| Error::Read { path: path.to_owned(), source })?;
    let mut de = serde_json::Deserializer::from_slice(&bytes);
    let openapi: OpenAPI = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let pointer = path_to_pointer(e.path());
        Error::Json { path: path.to_owned(), pointer, source: e.into_inner() }
    })?;
    Ok(Document { rel_path, path: path.to_owned(), openapi })
}

fn path_to_pointer(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut out = String::new();
    for seg in path.iter() {
        match seg {
            Segment::Seq { index } => out.push_str(&format!("/{index}")),
            Segment::Map { key } => {
                out.push('/');
                out.push_str(&pointer_token(key));
            }
            Segment::Enum { variant } => {
                out.push('/');
                out.push_str(&pointer_token(variant));
            }
            Segment::Unknown => out.push_str("/?"),
        }
    }
    if out.is_empty() { "/".to_owned() } else { out }
}

/// Schemas whose representation is chosen by hand, by schema name.
fn special_for(schema_name: &str) -> Option<Special> {
    Some(match schema_name {
        "io.k8s.apimachinery.pkg.util.intstr.IntOrString" => Special::IntOrString,
        "io.k8s.apimachinery.pkg.api.resource.Quantity" => Special::Quantity,
        "io.k8s.apimachinery.pkg.apis.meta.v1.Time" => Special::Time,
        "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime" => Special::MicroTime,
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

struct Ctx<'a> {
    doc: &'a Document,
    known: &'a BTreeSet<String>,
}

impl Ctx<'_> {
    fn err(&self, pointer: &str, message: impl Into<String>) -> Error {
        Error::Schema { path: self.doc.path.clone(), pointer: pointer.to_owned(), message: message.into() }
    }

    fn reference(&self, reference: &str, pointer: &str) -> Result<String> {
        let name = reference
            .strip_prefix("#/components/schemas/")
            .ok_or_else(|| self.err(pointer, format!("unsupported $ref {reference:?}")))?;
        if !self.known.contains(name) {
            return Err(self.err(pointer, format!("$ref to a schema that does not exist: {reference:?}")));
        }
        Ok(name.to_owned())
    }

    fn field_type(&self, schema: &ReferenceOr<Box<Schema>>, pointer: &str) -> Result<FieldType> {
        match schema {
            ReferenceOr::Reference { reference } => Ok(FieldType::Ref(self.reference(reference, pointer)?)),
            ReferenceOr::Item(schema) => self.inline_type(schema, pointer),
        }
    }

    fn inline_type(&self, schema: &Schema, pointer: &str) -> Result<FieldType> {
        Ok(match &schema.schema_kind {
            SchemaKind::AllOf { all_of } if all_of.len() == 1 => match &all_of[0] {
                ReferenceOr::Reference { reference } => {
                    FieldType::Ref(self.reference(reference, &format!("{pointer}/allOf/0"))?)
                }
                ReferenceOr::Item(inner) => self.inline_type(inner, &format!("{pointer}/allOf/0"))?,
            },
            SchemaKind::Type(Type::String(s)) => match &s.format {
                VariantOrUnknownOrEmpty::Item(StringFormat::Byte) => FieldType::Bytes,
                _ => FieldType::String,
            },
            SchemaKind::Type(Type::Integer(i)) => match &i.format {
                VariantOrUnknownOrEmpty::Item(IntegerFormat::Int32) => FieldType::I32,
                _ => FieldType::I64,
            },
            SchemaKind::Type(Type::Number(_)) => FieldType::F64,
            SchemaKind::Type(Type::Boolean(_)) => FieldType::Bool,
            SchemaKind::Type(Type::Array(a)) => match &a.items {
                Some(items) => FieldType::Array(Box::new(self.field_type(items, &format!("{pointer}/items"))?)),
                None => FieldType::Array(Box::new(FieldType::Json)),
            },
            SchemaKind::Type(Type::Object(o)) => match &o.additional_properties {
                Some(AdditionalProperties::Schema(s)) => {
                    let p = format!("{pointer}/additionalProperties");
                    FieldType::Map(Box::new(match s.as_ref() {
                        ReferenceOr::Reference { reference } => FieldType::Ref(self.reference(reference, &p)?),
                        ReferenceOr::Item(inner) => self.inline_type(inner, &p)?,
                    }))
                }
                Some(AdditionalProperties::Any(true)) => FieldType::Map(Box::new(FieldType::Json)),
                _ if !o.properties.is_empty() => {
                    return Err(self.err(pointer, "inline object schemas with properties are not supported here"));
                }
                _ => FieldType::Json,
            },
            SchemaKind::Any(any) if is_unconstrained(any) => FieldType::Json,
            // Parameters such as `{"type":"string","uniqueItems":true}` parse
            // as an untyped schema carrying a `type`.
            SchemaKind::Any(any) if is_plain_typed(any) => match (any.typ.as_deref(), any.format.as_deref()) {
                (Some("string"), Some("byte")) => FieldType::Bytes,
                (Some("string"), _) => FieldType::String,
                (Some("integer"), Some("int32")) => FieldType::I32,
                (Some("integer"), _) => FieldType::I64,
                (Some("number"), _) => FieldType::F64,
                (Some("boolean"), _) => FieldType::Bool,
                _ => return Err(self.err(pointer, format!("unsupported type {:?}", any.typ))),
            },
            other => return Err(self.err(pointer, format!("unsupported schema shape: {}", shape_name(other)))),
        })
    }

    fn type_def(&self, name: &str, schema: &Schema) -> Result<TypeDef> {
        let pointer = format!("/components/schemas/{}", pointer_token(name));
        let (module, rust_name) = naming::schema_path(name);
        let rust_name = rust_name.ok_or_else(|| {
            self.err(&pointer, format!("the type name of schema {name:?} is not a Rust identifier (letters, digits, `-`, `_`, starting with a letter)"))
        })?;
        let all_gvks = gvks(&schema.schema_data.extensions, &pointer, self)?;
        let gvk = if all_gvks.len() == 1 { all_gvks.first().cloned() } else { None };
        let shape = if let Some(special) = special_for(name) {
            Shape::Special(special)
        } else {
            match &schema.schema_kind {
                SchemaKind::Type(Type::Object(o)) => {
                    if o.additional_properties.is_some() && !o.properties.is_empty() {
                        return Err(self
                            .err(&pointer, "objects with both properties and additionalProperties are not supported"));
                    }
                    let required: BTreeSet<&str> = o.required.iter().map(String::as_str).collect();
                    let mut fields = Vec::with_capacity(o.properties.len());
                    for (json_name, prop) in &o.properties {
                        let p = format!("{pointer}/properties/{}", pointer_token(json_name));
                        let ty = self.field_type(prop, &p)?;
                        let doc = match prop {
                            ReferenceOr::Item(s) => s.schema_data.description.clone(),
                            ReferenceOr::Reference { .. } => None,
                        };
                        fields.push(Field {
                            json_name: json_name.clone(),
                            rust_name: String::new(),
                            ty,
                            required: required.contains(json_name.as_str()),
                            doc,
                            boxed: false,
                        });
                    }
                    fields.sort_by(|a, b| a.json_name.cmp(&b.json_name));
                    name_fields(&mut fields);
                    Shape::Struct(fields)
                }
                SchemaKind::Any(any) if is_unconstrained(any) => Shape::Special(Special::JsonValue),
                other => {
                    return Err(
                        self.err(&pointer, format!("unsupported top-level schema shape: {}", shape_name(other)))
                    );
                }
            }
        };
        Ok(TypeDef {
            schema_name: name.to_owned(),
            feature: naming::module_feature(&module),
            module,
            rust_name,
            source: self.doc.rel_path.clone(),
            doc: schema.schema_data.description.clone(),
            gvk,
            gvks: all_gvks,
            shape,
        })
    }
}

/// Rust names for sorted fields, by the naming module's one rule
/// (properties that differ only in case or punctuation are numbered).
fn name_fields(fields: &mut [Field]) {
    let wire: Vec<&str> = fields.iter().map(|f| f.json_name.as_str()).collect();
    let names = naming::dedupe(&wire, naming::field_name);
    for (f, name) in fields.iter_mut().zip(names) {
        f.rust_name = name;
    }
}

fn is_unconstrained(any: &openapiv3::AnySchema) -> bool {
    any.typ.is_none()
        && any.properties.is_empty()
        && any.items.is_none()
        && any.one_of.is_empty()
        && any.any_of.is_empty()
        && any.all_of.is_empty()
        && any.not.is_none()
        && any.additional_properties.is_none()
}

fn is_plain_typed(any: &openapiv3::AnySchema) -> bool {
    matches!(any.typ.as_deref(), Some("string" | "integer" | "number" | "boolean"))
        && any.properties.is_empty()
        && any.items.is_none()
        && any.one_of.is_empty()
        && any.any_of.is_empty()
        && any.all_of.is_empty()
        && any.not.is_none()
}

fn shape_name(kind: &SchemaKind) -> &'static str {
    match kind {
        SchemaKind::Type(_) => "type",
        SchemaKind::OneOf { .. } => "oneOf",
        SchemaKind::AllOf { .. } => "allOf with several members",
        SchemaKind::AnyOf { .. } => "anyOf",
        SchemaKind::Not { .. } => "not",
        SchemaKind::Any(_) => "untyped schema with constraints",
    }
}

fn gvks(ext: &indexmap::IndexMap<String, serde_json::Value>, pointer: &str, ctx: &Ctx) -> Result<Vec<Gvk>> {
    let Some(value) = ext.get("x-kubernetes-group-version-kind") else { return Ok(Vec::new()) };
    let parse_one = |v: &serde_json::Value| -> Option<Gvk> {
        Some(Gvk {
            group: v.get("group")?.as_str()?.to_owned(),
            version: v.get("version")?.as_str()?.to_owned(),
            kind: v.get("kind")?.as_str()?.to_owned(),
        })
    };
    let bad = || ctx.err(&format!("{pointer}/x-kubernetes-group-version-kind"), "expected {group, version, kind}");
    match value {
        serde_json::Value::Array(items) => items.iter().map(|v| parse_one(v).ok_or_else(bad)).collect(),
        v => Ok(vec![parse_one(v).ok_or_else(bad)?]),
    }
}

/// Builds the IR from parsed documents.
pub fn build(docs: &[Document]) -> Result<Api> {
    let mut api = Api::default();
    let mut known = BTreeSet::new();
    for doc in docs {
        if let Some(c) = &doc.openapi.components {
            known.extend(c.schemas.keys().cloned());
        }
    }
    // The same apimachinery schema appears in many documents: the first
    // document in sorted order names it, unless its own group's does.
    for doc in docs {
        let ctx = Ctx { doc, known: &known };
        let Some(components) = &doc.openapi.components else { continue };
        for (name, schema) in &components.schemas {
            let pointer = format!("/components/schemas/{}", pointer_token(name));
            let schema = match schema {
                ReferenceOr::Item(s) => s,
                ReferenceOr::Reference { .. } => {
                    return Err(ctx.err(&pointer, "a schema that is only a $ref is not supported"));
                }
            };
            let def = ctx.type_def(name, schema)?;
            match api.types.get(name) {
                Some(existing) if !prefers(doc, &def, existing) => {}
                _ => {
                    api.types.insert(name.clone(), def);
                }
            }
        }
    }
    for doc in docs {
        collect_resources(&Ctx { doc, known: &known }, &mut api)?;
    }
    link_resource_types(&mut api);
    break_cycles(&mut api);
    Ok(api)
}

/// Whether `doc` is a better home for a schema than where it was first seen.
fn prefers(doc: &Document, def: &TypeDef, existing: &TypeDef) -> bool {
    let Some(feature) = &def.feature else { return false };
    let Some(version) = def.module.last() else { return false };
    let home = |rel: &str| {
        let mut parts = rel.trim_end_matches(".json").split('/');
        match (parts.next(), parts.next(), parts.next()) {
            (Some("apis"), Some(group), Some(v)) => group.split('.').next() == Some(feature.as_str()) && v == version,
            (Some("api"), Some(v), None) => feature == "core" && v == version,
            _ => false,
        }
    };
    home(&doc.rel_path) && !home(&existing.source)
}

/// A parsed request path: `/apis/<g>/<v>[/watch][/namespaces/{namespace}]/<plural>[/{name}[/<sub>]]`.
struct PathShape {
    group: String,
    version: String,
    namespaced: bool,
    watch: bool,
    plural: String,
    has_name: bool,
    subresource: Option<String>,
}

fn parse_path(path: &str) -> Option<PathShape> {
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    let (group, version, rest) = match segs.as_slice() {
        ["api", v, rest @ ..] => (String::new(), (*v).to_owned(), rest),
        ["apis", g, v, rest @ ..] => ((*g).to_owned(), (*v).to_owned(), rest),
        _ => return None,
    };
    let (watch, rest) = match rest {
        ["watch", rest @ ..] => (true, rest),
        _ => (false, rest),
    };
    let (namespaced, rest) = match rest {
        ["namespaces", "{namespace}", rest @ ..] if !rest.is_empty() => (true, rest),
        _ => (false, rest),
    };
    match rest {
        [plural] => Some(PathShape {
            group,
            version,
            namespaced,
            watch,
            plural: (*plural).to_owned(),
            has_name: false,
            subresource: None,
        }),
        [plural, "{name}"] => Some(PathShape {
            group,
            version,
            namespaced,
            watch,
            plural: (*plural).to_owned(),
            has_name: true,
            subresource: None,
        }),
        [plural, "{name}", sub] => Some(PathShape {
            group,
            version,
            namespaced,
            watch,
            plural: (*plural).to_owned(),
            has_name: true,
            subresource: Some((*sub).to_owned()),
        }),
        // Proxy paths with a trailing {path}: connect operations.
        _ => None,
    }
}

fn collect_resources(ctx: &Ctx, api: &mut Api) -> Result<()> {
    for (path, item) in &ctx.doc.openapi.paths.paths {
        let ReferenceOr::Item(item) = item else { continue };
        let Some(shape) = parse_path(path) else { continue };
        let path_params = &item.parameters;
        for (method, op) in item.iter() {
            let pointer = format!("/paths/{}/{method}", pointer_token(path));
            let Some(action) = op.extensions.get("x-kubernetes-action").and_then(|v| v.as_str()) else { continue };
            let verb = Verb::from_action(action).ok_or_else(|| {
                ctx.err(&format!("{pointer}/x-kubernetes-action"), format!("unknown action {action:?}"))
            })?;
            let verb = if shape.watch { Verb::Watch } else { verb };
            let gvk = gvks(&op.extensions, &pointer, ctx)?.into_iter().next();
            let key = (shape.group.clone(), shape.version.clone(), shape.plural.clone());
            let resource = api.resources.entry(key).or_insert_with(|| Resource {
                group: shape.group.clone(),
                version: shape.version.clone(),
                kind: String::new(),
                plural: shape.plural.clone(),
                type_schema: None,
                list_schema: None,
                namespaced: false,
                verbs: BTreeSet::new(),
                subresources: BTreeMap::new(),
                source: ctx.doc.rel_path.clone(),
            });
            resource.namespaced |= shape.namespaced;
            match &shape.subresource {
                None => {
                    // A Get/Delete without {name} would be a list / deletecollection.
                    let _ = shape.has_name;
                    resource.verbs.insert(verb);
                    if let Some(gvk) = gvk
                        && resource.kind.is_empty()
                    {
                        resource.kind = gvk.kind;
                    }
                }
                Some(sub) => {
                    let body = request_schema(op, ctx, &pointer)?;
                    let response = response_schema(op, ctx, &pointer)?;
                    let params = query_params(op, path_params, ctx, &pointer)?;
                    let entry = resource.subresources.entry(sub.clone()).or_insert_with(|| Subresource {
                        name: sub.clone(),
                        verbs: BTreeSet::new(),
                        gvk: None,
                        body_schema: None,
                        response_schema: None,
                        params: BTreeMap::new(),
                    });
                    entry.verbs.insert(verb);
                    if entry.gvk.is_none() {
                        entry.gvk = gvk;
                    }
                    if entry.body_schema.is_none() {
                        entry.body_schema = body;
                    }
                    if entry.response_schema.is_none() {
                        entry.response_schema = response;
                    }
                    if verb == Verb::Get {
                        entry.params = params;
                    }
                }
            }
        }
    }
    Ok(())
}

fn schema_ref(schema: &ReferenceOr<Schema>, ctx: &Ctx, pointer: &str) -> Result<Option<String>> {
    match schema {
        ReferenceOr::Reference { reference } => Ok(Some(ctx.reference(reference, pointer)?)),
        ReferenceOr::Item(_) => Ok(None),
    }
}

fn request_schema(op: &Operation, ctx: &Ctx, pointer: &str) -> Result<Option<String>> {
    let Some(ReferenceOr::Item(body)) = &op.request_body else { return Ok(None) };
    // Request bodies are listed under `*/*`, patches under their patch types.
    for content_type in ["application/json", "*/*"] {
        if let Some(s) = body.content.get(content_type).and_then(|m| m.schema.as_ref()) {
            let p = format!("{pointer}/requestBody/content/{}/schema", pointer_token(content_type));
            return schema_ref(s, ctx, &p);
        }
    }
    Ok(None)
}

fn response_schema(op: &Operation, ctx: &Ctx, pointer: &str) -> Result<Option<String>> {
    for (code, resp) in &op.responses.responses {
        let ReferenceOr::Item(resp) = resp else { continue };
        let code = code.to_string();
        if !code.starts_with('2') {
            continue;
        }
        if let Some(s) = resp.content.get("application/json").and_then(|m| m.schema.as_ref()) {
            return schema_ref(s, ctx, &format!("{pointer}/responses/{code}/content/application~1json/schema"));
        }
    }
    Ok(None)
}

fn query_params(
    op: &Operation,
    path_params: &[ReferenceOr<Parameter>],
    ctx: &Ctx,
    pointer: &str,
) -> Result<BTreeMap<String, Param>> {
    let mut out = BTreeMap::new();
    let path_pointer = pointer.rsplit_once('/').map_or(pointer, |(p, _)| p);
    let all = path_params
        .iter()
        .enumerate()
        .map(|(i, p)| (format!("{path_pointer}/parameters/{i}"), p))
        .chain(op.parameters.iter().enumerate().map(|(i, p)| (format!("{pointer}/parameters/{i}"), p)));
    for (param_pointer, p) in all {
        let ReferenceOr::Item(Parameter::Query { parameter_data, .. }) = p else { continue };
        let ty = match &parameter_data.format {
            ParameterSchemaOrContent::Schema(s) => ctx.field_type(
                &match s {
                    ReferenceOr::Reference { reference } => ReferenceOr::Reference { reference: reference.clone() },
                    ReferenceOr::Item(item) => ReferenceOr::Item(Box::new(item.clone())),
                },
                &format!("{param_pointer}/schema"),
            )?,
            ParameterSchemaOrContent::Content(_) => FieldType::String,
        };
        out.insert(
            parameter_data.name.clone(),
            Param { name: parameter_data.name.clone(), ty, doc: parameter_data.description.clone() },
        );
    }
    Ok(out)
}

/// Ties resources to the schemas of their kind and list kind.
fn link_resource_types(api: &mut Api) {
    let mut by_gvk: BTreeMap<Gvk, String> = BTreeMap::new();
    for (name, def) in &api.types {
        if let Some(gvk) = &def.gvk {
            by_gvk.entry(gvk.clone()).or_insert_with(|| name.clone());
        }
    }
    for r in api.resources.values_mut() {
        let gvk = |kind: &str| Gvk { group: r.group.clone(), version: r.version.clone(), kind: kind.to_owned() };
        r.type_schema = by_gvk.get(&gvk(&r.kind)).cloned();
        r.list_schema = by_gvk.get(&gvk(&format!("{}List", r.kind))).cloned();
    }
}

/// Boxes every field whose type directly (not through a Vec or map) leads
/// back to the struct holding it, so no type has infinite size.
fn break_cycles(api: &mut Api) {
    let direct: BTreeMap<String, Vec<String>> = api
        .types
        .iter()
        .map(|(name, def)| {
            let refs = match &def.shape {
                Shape::Struct(fields) => fields.iter().filter_map(|f| f.ty.direct_ref().map(str::to_owned)).collect(),
                // Special schema-or-X types box their schema arm themselves.
                Shape::Special(_) => Vec::new(),
            };
            (name.clone(), refs)
        })
        .collect();
    let reaches = |from: &str, target: &str| -> bool {
        let mut stack = vec![from.to_owned()];
        let mut seen = BTreeSet::new();
        while let Some(n) = stack.pop() {
            if n == target {
                return true;
            }
            if seen.insert(n.clone()) {
                stack.extend(direct.get(&n).into_iter().flatten().cloned());
            }
        }
        false
    };
    let names: Vec<String> = api.types.keys().cloned().collect();
    for name in names {
        let Some(TypeDef { shape: Shape::Struct(fields), .. }) = api.types.get(&name) else { continue };
        let to_box: Vec<usize> = fields
            .iter()
            .enumerate()
            .filter(|(_, f)| f.ty.direct_ref().is_some_and(|r| reaches(r, &name)))
            .map(|(i, _)| i)
            .collect();
        if let Some(TypeDef { shape: Shape::Struct(fields), .. }) = api.types.get_mut(&name) {
            for i in to_box {
                fields[i].boxed = true;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_parse() {
        let p = parse_path("/api/v1/namespaces/{namespace}/pods/{name}/status").unwrap();
        assert_eq!((p.group.as_str(), p.version.as_str(), p.plural.as_str()), ("", "v1", "pods"));
        assert!(p.namespaced && p.has_name);
        assert_eq!(p.subresource.as_deref(), Some("status"));
        let p = parse_path("/api/v1/namespaces/{name}/finalize").unwrap();
        assert_eq!(p.plural, "namespaces");
        assert!(!p.namespaced);
        assert_eq!(p.subresource.as_deref(), Some("finalize"));
        let p = parse_path("/apis/apps/v1/watch/namespaces/{namespace}/deployments").unwrap();
        assert!(p.watch && p.namespaced && !p.has_name);
        assert!(parse_path("/api/v1/namespaces/{namespace}/pods/{name}/proxy/{path}").is_none());
        assert!(parse_path("/version/").is_none());
    }
}
