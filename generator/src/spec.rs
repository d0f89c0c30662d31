//! Reading apiserver OpenAPI v3 documents into the IR.
//!
//! Input is a directory in the apiserver's layout (`api/v1.json`,
//! `apis/<group>/<version>.json`), or documents made from CRD manifests or
//! fetched from a cluster; [`crate::lower`] turns their schemas into types,
//! this module their paths into resources. Every error names the file and
//! the JSON pointer of the node it is about.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result, pointer_of, pointer_token};
use crate::ir::{Api, FieldType, Gvk, Param, Resource, Shape, Subresource, TypeDef, Verb};
use crate::lower::{self, Lowering};
use crate::naming;
use crate::schema::{OpenApi, Operation, Parameter, Schema};

/// One input document: read from a file, made from a CRD manifest, or
/// fetched from a cluster.
#[derive(Debug, Clone)]
pub struct Document {
    /// Label naming it in headers and as the home of its types: relative
    /// to the input (`apis/apps/v1.json`), never absolute.
    pub rel_path: String,
    /// Where it came from, for errors.
    pub path: PathBuf,
    /// The parsed document.
    pub openapi: OpenApi,
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
                    let group_name = group.file_name().unwrap_or_default().to_string_lossy();
                    let version = file.file_stem().unwrap_or_default().to_string_lossy();
                    check_group_version(&group_name, &version).map_err(|message| Error::Input {
                        path: file.clone(),
                        message: format!("not a document of a group/version (apis/<group>/<version>.json): {message}"),
                    })?;
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
    parse_document(&bytes, path, rel_path)
}

/// Parses a document from bytes; `path` names it in errors.
pub fn parse_document(bytes: &[u8], path: &Path, rel_path: String) -> Result<Document> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let openapi: OpenApi = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let pointer = pointer_of(e.path());
        let pointer = if pointer.is_empty() { "/".to_owned() } else { pointer };
        Error::Json { path: path.to_owned(), pointer, source: e.into_inner() }
    })?;
    Ok(Document { rel_path, path: path.to_owned(), openapi })
}

/// How to build the IR.
#[derive(Debug, Clone, Default)]
pub struct BuildOptions {
    /// Take Kubernetes' own types (metadata, `Time`, `Scale`, `Condition`,
    /// ...) from this crate (a Rust identifier, `k8s_client`) instead of
    /// generating them: for crates of custom resources.
    pub external_crate: Option<String>,
}

/// Builds the IR from parsed documents, generating every type.
pub fn build(docs: &[Document]) -> Result<Api> {
    build_with(docs, &BuildOptions::default())
}

/// Builds the IR from parsed documents.
pub fn build_with(docs: &[Document], opts: &BuildOptions) -> Result<Api> {
    let mut api = Api { external_crate: opts.external_crate.clone(), ..Api::default() };
    let seeds = if opts.external_crate.is_some() { lower::known::external_types() } else { Vec::new() };
    let mut known: BTreeSet<String> = seeds.iter().map(|d| d.schema_name.clone()).collect();
    for doc in docs {
        known.extend(doc.openapi.components.schemas.keys().cloned());
    }
    let mut nested = Vec::new();
    // The same apimachinery schema appears in many documents: the first
    // document in sorted order names it, unless its own group's does.
    for doc in docs {
        let mut lowering = Lowering {
            path: &doc.path,
            source: &doc.rel_path,
            known: &known,
            nested: Vec::new(),
            reusable: lower::known::reusable(),
        };
        for (name, schema) in &doc.openapi.components.schemas {
            let def = lowering.type_def(name, schema)?;
            match api.types.get(name) {
                Some(existing) if !prefers(doc, &def, existing) => {}
                _ => {
                    api.types.insert(name.clone(), def);
                }
            }
        }
        // Inline types of a schema that another document defines are
        // dropped with it.
        let kept: BTreeSet<&str> =
            api.types.values().filter(|d| d.source == doc.rel_path).map(|d| d.schema_name.as_str()).collect();
        nested.extend(lowering.nested.into_iter().filter(|n| kept.contains(n.owner.as_str())));
    }
    if opts.external_crate.is_some() {
        nested.retain(|n| !lower::is_builtin_schema(&n.owner));
        for def in api.types.values_mut() {
            def.external |= lower::is_builtin_schema(&def.schema_name);
        }
        for seed in seeds {
            api.types.entry(seed.schema_name.clone()).or_insert(seed);
        }
    }
    dedupe_type_names(&mut api);
    lower::nested::resolve(&mut api, nested);
    for doc in docs {
        collect_resources(doc, &known, &mut api)?;
    }
    link_resource_types(&mut api);
    break_cycles(&mut api);
    Ok(api)
}

/// Tells apart the named types of each module whose names or files would
/// be the same (`Foo` and `foo`, `HTTPRoute` and `HttpRoute`), by
/// [`naming::dedupe_type_names`] in schema-name order; the types of the
/// Kubernetes crate keep their names.
fn dedupe_type_names(api: &mut Api) {
    let mut modules: BTreeMap<Vec<String>, (Vec<String>, Vec<String>)> = BTreeMap::new();
    for (name, def) in &api.types {
        let (fixed, renamed) = modules.entry(def.module.clone()).or_default();
        if def.external { fixed.push(def.rust_name.clone()) } else { renamed.push(name.clone()) }
    }
    for (fixed, schemas) in modules.values() {
        let fixed: Vec<&str> = fixed.iter().map(String::as_str).collect();
        let names: Vec<&str> = schemas.iter().map(|s| api.types[s].rust_name.as_str()).collect();
        let deduped = naming::dedupe_type_names(&fixed, &names);
        for (schema, name) in schemas.iter().zip(deduped) {
            if let Some(def) = api.types.get_mut(schema) {
                def.rust_name = name;
            }
        }
    }
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

/// Refuses a group or version that the apiserver would not serve: a group
/// that is neither empty (the core group) nor a DNS-1123 subdomain, a
/// version that is not a DNS-1035 label. They become module and file names.
pub fn check_group_version(group: &str, version: &str) -> std::result::Result<(), String> {
    if let Some(e) = naming::group_error(group, false) {
        return Err(format!("group {group:?} is not a DNS-1123 subdomain: {e}"));
    }
    if let Some(e) = naming::dns1035_label_error(version) {
        return Err(format!("version {version:?} is not a DNS-1035 label: {e}"));
    }
    Ok(())
}

/// A parsed request path: `/apis/<g>/<v>[/watch][/namespaces/{namespace}]/<plural>[/{name}[/<sub>]]`.
struct PathShape {
    group: String,
    version: String,
    namespaced: bool,
    watch: bool,
    plural: String,
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
        [plural] => {
            Some(PathShape { group, version, namespaced, watch, plural: (*plural).to_owned(), subresource: None })
        }
        [plural, "{name}"] => {
            Some(PathShape { group, version, namespaced, watch, plural: (*plural).to_owned(), subresource: None })
        }
        [plural, "{name}", sub] => Some(PathShape {
            group,
            version,
            namespaced,
            watch,
            plural: (*plural).to_owned(),
            subresource: Some((*sub).to_owned()),
        }),
        // Proxy paths with a trailing {path}: connect operations.
        _ => None,
    }
}

/// Reads what a document's paths say about its resources.
struct Paths<'a> {
    doc: &'a Document,
    known: &'a BTreeSet<String>,
}

impl Paths<'_> {
    fn err(&self, pointer: &str, message: impl Into<String>) -> Error {
        Error::Schema { path: self.doc.path.clone(), pointer: pointer.to_owned(), message: message.into() }
    }

    /// The schema a body names by `$ref`; `None` for inline bodies.
    fn schema_ref(&self, schema: &Schema, pointer: &str) -> Result<Option<String>> {
        let Some(reference) = &schema.reference else { return Ok(None) };
        lower::resolve_ref(self.known, reference).map(Some).map_err(|m| self.err(pointer, m))
    }

    fn request_schema(&self, op: &Operation, pointer: &str) -> Result<Option<String>> {
        let Some(body) = &op.request_body else { return Ok(None) };
        // Request bodies are listed under `*/*`, patches under their patch types.
        for content_type in ["application/json", "*/*"] {
            if let Some(s) = body.content.get(content_type).and_then(|m| m.schema.as_ref()) {
                let p = format!("{pointer}/requestBody/content/{}/schema", pointer_token(content_type));
                return self.schema_ref(s, &p);
            }
        }
        Ok(None)
    }

    fn response_schema(&self, op: &Operation, pointer: &str) -> Result<Option<String>> {
        for (code, resp) in &op.responses {
            if !code.starts_with('2') {
                continue;
            }
            if let Some(s) = resp.content.get("application/json").and_then(|m| m.schema.as_ref()) {
                return self.schema_ref(s, &format!("{pointer}/responses/{code}/content/application~1json/schema"));
            }
        }
        Ok(None)
    }
}

fn collect_resources(doc: &Document, known: &BTreeSet<String>, api: &mut Api) -> Result<()> {
    let ctx = Paths { doc, known };
    let has_watch_paths = doc.openapi.paths.keys().any(|p| parse_path(p).is_some_and(|s| s.watch));
    for (path, item) in &doc.openapi.paths {
        let Some(shape) = parse_path(path) else { continue };
        check_group_version(&shape.group, &shape.version)
            .map_err(|m| ctx.err(&format!("/paths/{}", pointer_token(path)), m))?;
        for (method, op) in item.operations() {
            let pointer = format!("/paths/{}/{method}", pointer_token(path));
            let Some(action) = op.action.as_deref() else { continue };
            let verb = Verb::from_action(action).ok_or_else(|| {
                ctx.err(&format!("{pointer}/x-kubernetes-action"), format!("unknown action {action:?}"))
            })?;
            let verb = if shape.watch { Verb::Watch } else { verb };
            let gvk = lower::gvks(op.gvk.as_ref())
                .map_err(|m| ctx.err(&format!("{pointer}/x-kubernetes-group-version-kind"), m))?
                .into_iter()
                .next();
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
                source: doc.rel_path.clone(),
            });
            resource.namespaced |= shape.namespaced;
            match &shape.subresource {
                None => {
                    resource.verbs.insert(verb);
                    // A list that takes `watch=true` also watches where the
                    // document has no `/watch/` paths: the apiserver
                    // publishes none for custom resources, only the parameter.
                    let mut params = item.parameters.iter().chain(&op.parameters);
                    if verb == Verb::List
                        && !has_watch_paths
                        && params.any(|p| p.location == "query" && p.name == "watch")
                    {
                        resource.verbs.insert(Verb::Watch);
                    }
                    if let Some(gvk) = gvk
                        && resource.kind.is_empty()
                    {
                        resource.kind = gvk.kind;
                    }
                    // The list kind is what a list answers (a CRD's
                    // `listKind` need not be `<kind>List`).
                    if verb == Verb::List && resource.list_schema.is_none() {
                        resource.list_schema = ctx.response_schema(op, &pointer)?;
                    }
                }
                Some(sub) => {
                    let body = ctx.request_schema(op, &pointer)?;
                    let response = ctx.response_schema(op, &pointer)?;
                    let params = query_params(op, &item.parameters);
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

/// The query parameters of an operation and its path, by name.
fn query_params(op: &Operation, path_params: &[Parameter]) -> BTreeMap<String, Param> {
    let mut out = BTreeMap::new();
    for p in path_params.iter().chain(&op.parameters) {
        if p.location != "query" {
            continue;
        }
        let ty = p.schema.as_ref().map_or(FieldType::String, param_type);
        out.insert(p.name.clone(), Param { name: p.name.clone(), ty, doc: p.description.clone() });
    }
    out
}

/// Query parameters are scalars.
fn param_type(schema: &Schema) -> FieldType {
    match (schema.ty.as_deref(), schema.format.as_deref()) {
        (Some("integer"), Some("int32")) => FieldType::I32,
        (Some("integer"), _) => FieldType::I64,
        (Some("number"), _) => FieldType::F64,
        (Some("boolean"), _) => FieldType::Bool,
        _ => FieldType::String,
    }
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
        if r.list_schema.is_none() {
            r.list_schema = by_gvk.get(&gvk(&format!("{}List", r.kind))).cloned();
        }
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
                Shape::Special(_) | Shape::Enum { .. } | Shape::Declared => Vec::new(),
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
        assert!(p.namespaced);
        assert_eq!(p.subresource.as_deref(), Some("status"));
        let p = parse_path("/api/v1/namespaces/{name}/finalize").unwrap();
        assert_eq!(p.plural, "namespaces");
        assert!(!p.namespaced);
        assert_eq!(p.subresource.as_deref(), Some("finalize"));
        let p = parse_path("/apis/apps/v1/watch/namespaces/{namespace}/deployments").unwrap();
        assert!(p.watch && p.namespaced);
        assert!(parse_path("/api/v1/namespaces/{namespace}/pods/{name}/proxy/{path}").is_none());
        assert!(parse_path("/version/").is_none());
    }
}
