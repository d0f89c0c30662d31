//! CustomResourceDefinition manifests → the documents the apiserver would
//! publish for them.
//!
//! Each served version of a CRD becomes what `/openapi/v3` serves for it:
//! the kind's schema (its `openAPIV3Schema`, with `metadata` as
//! `ObjectMeta` and `apiVersion`/`kind`), its list kind, and the paths of
//! every verb and declared subresource, named as the apiserver names them
//! (`monitoring.coreos.com/v1 ServiceMonitor` is
//! `com.coreos.monitoring.v1.ServiceMonitor`). From there a manifest and a
//! live cluster take the same road to Rust.
//!
//! Input: files or directories (searched recursively, sorted) of YAML or
//! JSON, with several documents per file (`---`) and `List`s of objects.
//! Documents that are not `apiextensions.k8s.io/v1` CRDs are skipped with
//! a note. Errors name the file, the document index and the JSON pointer.
//!
//! A CRD the apiserver would refuse is refused (module `validate`): its names
//! (group, version, kind, plural, ...) by the apiserver's rules, since
//! paths, modules and types are made of them, and its schema by the
//! structural-schema rules the mapping relies on. What the apiserver checks
//! but the code does not depend on is generated anyway, with a warning
//! among the notes (`warning: <file>: document <n>: <pointer>: ...`): a
//! storage version count other than one (catalogs publish one version per
//! file). Conversion settings are not read at all. A CRD without a served
//! version gets a note saying so.

mod validate;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{Value, json};

use crate::error::{Error, Result, pointer_of};
use crate::ir::{LIST_META, OBJECT_META};
use crate::lower::known;
use crate::naming;
use crate::schema::{OpenApi, Schema};
use crate::spec::Document;

/// What reading manifests gave: one document per CRD and served version,
/// and notes on what was skipped.
#[derive(Debug, Default)]
pub struct Manifests {
    /// The documents the apiserver would publish, one per CRD and served
    /// version, in input order (files sorted, documents as written).
    pub documents: Vec<Document>,
    /// One line per thing skipped (a document that is no CRD, a version
    /// not served), naming file and document, for the user to read; and
    /// warnings, each starting with `warning: `, for what the apiserver
    /// would refuse but the code does not depend on (the storage version).
    pub notes: Vec<String>,
    /// The names each group's CRDs claimed so far ([`claim_names`]).
    claimed: BTreeMap<(String, &'static str, String), (String, String)>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Crd {
    #[serde(default)]
    metadata: CrdMeta,
    spec: CrdSpec,
}

#[derive(Debug, Default, Deserialize)]
struct CrdMeta {
    #[serde(default)]
    name: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct CrdSpec {
    group: String,
    names: Names,
    scope: String,
    #[serde(default)]
    versions: Vec<Version>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Names {
    kind: String,
    plural: String,
    #[serde(default)]
    list_kind: Option<String>,
    #[serde(default)]
    singular: Option<String>,
    #[serde(default)]
    short_names: Vec<String>,
    #[serde(default)]
    categories: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Version {
    name: String,
    #[serde(default)]
    served: bool,
    #[serde(default)]
    storage: bool,
    #[serde(default)]
    deprecated: bool,
    deprecation_warning: Option<String>,
    schema: Option<VersionSchema>,
    #[serde(default)]
    subresources: Subresources,
    #[serde(default)]
    additional_printer_columns: Vec<PrinterColumn>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct VersionSchema {
    #[serde(rename = "openAPIV3Schema")]
    open_api_v3_schema: Option<Schema>,
}

#[derive(Debug, Default, Deserialize)]
struct Subresources {
    status: Option<Value>,
    scale: Option<Value>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PrinterColumn {
    name: String,
    #[serde(rename = "type", default)]
    ty: String,
    #[serde(default)]
    json_path: String,
    description: Option<String>,
}

/// Reads every manifest below `inputs` (files or directories).
pub fn load(inputs: &[PathBuf]) -> Result<Manifests> {
    let mut out = Manifests::default();
    for input in inputs {
        let files = manifest_files(input)?;
        if files.is_empty() {
            return Err(Error::NoDocuments(input.clone()));
        }
        for file in files {
            read_file(&file, &display_path(&file), &mut out)?;
        }
    }
    Ok(out)
}

/// Claims a CRD's names within its group as the apiserver's naming
/// controller does: plurals, singulars and short names share one set,
/// kinds and list kinds another. A name another CRD of the group has
/// claimed is an error (the apiserver would create the CRD but never
/// serve it: `NamesAccepted` false), naming both CRDs; it also keeps every
/// kind's type and list type apart in the generated module.
fn claim_names(
    crd: &Crd,
    crd_name: &str,
    place: &str,
    claimed: &mut BTreeMap<(String, &'static str, String), (String, String)>,
) -> std::result::Result<(), (String, String)> {
    let names = &crd.spec.names;
    let list_kind = names.list_kind.clone().unwrap_or_else(|| format!("{}List", names.kind));
    let mut wanted = vec![
        ("resources", "plural", names.plural.clone(), "/spec/names/plural".to_owned()),
        ("kinds", "kind", names.kind.clone(), "/spec/names/kind".to_owned()),
        ("kinds", "list kind", list_kind, "/spec/names/listKind".to_owned()),
    ];
    // The apiserver defaults the singular to the kind in lower case.
    let singular = names.singular.clone().filter(|s| !s.is_empty()).unwrap_or_else(|| names.kind.to_lowercase());
    wanted.push(("resources", "singular", singular, "/spec/names/singular".to_owned()));
    for (i, short) in names.short_names.iter().enumerate() {
        wanted.push(("resources", "short name", short.clone(), format!("/spec/names/shortNames/{i}")));
    }
    let mut mine = Vec::new();
    for (set, what, name, pointer) in wanted {
        let key = (crd.spec.group.clone(), set, name.clone());
        if let Some((owner, owner_place)) = claimed.get(&key) {
            if owner == crd_name {
                return Err((
                    "/metadata/name".to_owned(),
                    format!("{crd_name} is defined twice, also in {owner_place}"),
                ));
            }
            return Err((
                pointer,
                format!(
                    "{crd_name}: the {what} {name:?} is already a name of {owner} ({owner_place}) in the group {}; \
                     the apiserver would not serve this CRD (NamesAccepted: False)",
                    crd.spec.group
                ),
            ));
        }
        mine.push((key, (crd_name.to_owned(), place.to_owned())));
    }
    claimed.extend(mine);
    Ok(())
}

/// A path as headers and messages name it: relative to the working
/// directory when it lies below it (so a header does not depend on where
/// the checkout lives), else as given; with `/` as separator.
pub fn display_path(path: &Path) -> String {
    let relative = std::env::current_dir().ok().and_then(|cwd| path.strip_prefix(cwd).ok().map(Path::to_path_buf));
    let shown = relative.as_deref().unwrap_or(path);
    let shown = shown.strip_prefix(".").unwrap_or(shown);
    shown.to_string_lossy().replace('\\', "/")
}

fn manifest_files(input: &Path) -> Result<Vec<PathBuf>> {
    let read = |source| Error::Read { path: input.to_owned(), source };
    let meta = std::fs::metadata(input).map_err(read)?;
    if meta.is_file() {
        return Ok(vec![input.to_owned()]);
    }
    let mut files = Vec::new();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(input)
        .map_err(read)?
        .map(|e| e.map(|e| e.path()))
        .collect::<std::result::Result<_, _>>()
        .map_err(read)?;
    entries.sort();
    for path in entries {
        if path.is_dir() {
            files.extend(manifest_files(&path)?);
        } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml" || e == "json") {
            files.push(path);
        }
    }
    Ok(files)
}

fn read_file(path: &Path, label: &str, out: &mut Manifests) -> Result<()> {
    let text = std::fs::read_to_string(path).map_err(|source| Error::Read { path: path.to_owned(), source })?;
    out.add_text(&text, path, label)
}

impl Manifests {
    /// Adds the CRDs of one manifest's text, as [`load`] does for each file:
    /// `path` names it in errors and `label` in headers. For text that does
    /// not come from a file (a fuzzer, a test, another tool's output).
    pub fn add_text(&mut self, text: &str, path: &Path, label: &str) -> Result<()> {
        read_text(text, path, label, self)
    }
}

fn read_text(text: &str, path: &Path, label: &str, out: &mut Manifests) -> Result<()> {
    for (index, doc) in serde_yaml_ng::Deserializer::from_str(text).enumerate() {
        let value = Value::deserialize(doc).map_err(|e| Error::Manifest {
            path: path.to_owned(),
            document: index,
            pointer: String::new(),
            message: format!("invalid YAML: {e}"),
        })?;
        let items = match value.get("kind").and_then(Value::as_str) {
            Some("List") => value.get("items").and_then(Value::as_array).cloned().unwrap_or_default(),
            _ => vec![value],
        };
        for item in items {
            read_object(path, label, index, item, out)?;
        }
    }
    Ok(())
}

fn read_object(path: &Path, label: &str, index: usize, value: Value, out: &mut Manifests) -> Result<()> {
    if value.is_null() {
        return Ok(());
    }
    let api_version = value.get("apiVersion").and_then(Value::as_str).unwrap_or_default();
    let kind = value.get("kind").and_then(Value::as_str).unwrap_or_default();
    let name = value.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default();
    if kind != "CustomResourceDefinition" || !api_version.starts_with("apiextensions.k8s.io/") {
        let what = if kind.is_empty() { "an object without kind".to_owned() } else { format!("{kind} {name:?}") };
        out.notes.push(format!("{label}: document {index}: skipped {what}, not a CustomResourceDefinition"));
        return Ok(());
    }
    let err = |pointer: &str, message: String| Error::Manifest {
        path: path.to_owned(),
        document: index,
        pointer: pointer.to_owned(),
        message,
    };
    if api_version != "apiextensions.k8s.io/v1" {
        return Err(err(
            "/apiVersion",
            format!("{api_version} CRDs are not supported; convert to apiextensions.k8s.io/v1"),
        ));
    }
    let crd: Crd =
        serde_path_to_error::deserialize(value).map_err(|e| err(&pointer_of(e.path()), e.into_inner().to_string()))?;
    let crd_name = if crd.metadata.name.is_empty() { crd.spec.names.plural.clone() } else { crd.metadata.name.clone() };
    if crd.spec.versions.is_empty() {
        return Err(err("/spec/versions", format!("{crd_name} has no versions")));
    }
    validate::names(&crd).map_err(|(pointer, message)| err(&pointer, message))?;
    claim_names(&crd, &crd_name, &format!("{label} (document {index})"), &mut out.claimed)
        .map_err(|(pointer, message)| err(&pointer, message))?;
    for (i, version) in crd.spec.versions.iter().enumerate() {
        if let Some(schema) = version.schema.as_ref().and_then(|s| s.open_api_v3_schema.as_ref()) {
            validate::schema(schema, &format!("/spec/versions/{i}/schema/openAPIV3Schema"))
                .map_err(|(pointer, message)| err(&pointer, message))?;
        }
    }
    if let Some((pointer, message)) = validate::storage(&crd) {
        out.notes
            .push(format!("warning: {label}: document {index}: {pointer}: {crd_name}: {message}; generated anyway"));
    }
    if !crd.spec.versions.iter().any(|v| v.served) {
        out.notes
            .push(format!("{label}: document {index}: {crd_name} has no served version: nothing generated for it"));
    }
    for (i, version) in crd.spec.versions.iter().enumerate() {
        let pointer = format!("/spec/versions/{i}");
        if !version.served {
            out.notes.push(format!("{label}: document {index}: {crd_name} {} is not served: skipped", version.name));
            continue;
        }
        let schema = version.schema.as_ref().and_then(|s| s.open_api_v3_schema.as_ref()).ok_or_else(|| {
            err(&format!("{pointer}/schema/openAPIV3Schema"), format!("{crd_name} {} has no schema", version.name))
        })?;
        let rel_path = format!("{label} (document {index}, {}/{})", crd.spec.group, version.name);
        let openapi =
            published(&crd, version, schema).map_err(|e| err(&pointer, format!("making its document: {e}")))?;
        out.documents.push(Document { rel_path, path: path.to_owned(), openapi });
    }
    Ok(())
}

/// The document the apiserver publishes for one served version of a CRD.
fn published(crd: &Crd, version: &Version, schema: &Schema) -> serde_json::Result<OpenApi> {
    let spec = &crd.spec;
    let (group, v, kind) = (spec.group.as_str(), version.name.as_str(), spec.names.kind.as_str());
    let list_kind = spec.names.list_kind.clone().unwrap_or_else(|| format!("{kind}List"));
    let name = naming::published_schema_name(group, v, kind);
    let list_name = naming::published_schema_name(group, v, &list_kind);
    let gvk = |k: &str| json!([{"group": group, "version": v, "kind": k}]);

    let mut kind_schema = schema.clone();
    kind_schema.ty = Some("object".into());
    kind_schema.description = Some(kind_doc(crd, version, schema.description.as_deref()));
    kind_schema.gvk = Some(gvk(kind));
    let props = &mut kind_schema.properties;
    props.insert("metadata".into(), reference_to(OBJECT_META, METADATA_DOC));
    for (prop, doc) in [("apiVersion", API_VERSION_DOC), ("kind", KIND_DOC)] {
        props.entry(prop.into()).or_insert_with(|| Schema {
            ty: Some("string".into()),
            description: Some(doc.into()),
            ..Schema::default()
        });
    }

    let list_schema = Schema {
        ty: Some("object".into()),
        description: Some(format!("{list_kind} is a list of {kind}")),
        required: vec!["items".into()],
        properties: BTreeMap::from([
            (
                "apiVersion".into(),
                Schema { ty: Some("string".into()), description: Some(API_VERSION_DOC.into()), ..Schema::default() },
            ),
            (
                "items".into(),
                Schema {
                    ty: Some("array".into()),
                    description: Some(format!("List of {}. More info: {CONVENTIONS}", spec.names.plural)),
                    items: Some(Box::new(reference(&name))),
                    ..Schema::default()
                },
            ),
            (
                "kind".into(),
                Schema { ty: Some("string".into()), description: Some(KIND_DOC.into()), ..Schema::default() },
            ),
            (
                "metadata".into(),
                reference_to(LIST_META, &format!("Standard list metadata. More info: {CONVENTIONS}#types-kinds")),
            ),
        ]),
        gvk: Some(gvk(&list_kind)),
        ..Schema::default()
    };

    let paths = paths(crd, version, &name, &list_name);
    let mut doc: OpenApi = serde_json::from_value(json!({ "paths": paths }))?;
    doc.components.schemas.insert(name, kind_schema);
    doc.components.schemas.insert(list_name, list_schema);
    Ok(doc)
}

const CONVENTIONS: &str = "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md";
const METADATA_DOC: &str = "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";
const API_VERSION_DOC: &str = "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources";
const KIND_DOC: &str = "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds";

fn reference(schema: &str) -> Schema {
    Schema { reference: Some(format!("#/components/schemas/{schema}")), ..Schema::default() }
}

/// `{"allOf": [{"$ref": ...}]}`, how the apiserver refers to a type with a description.
fn reference_to(schema: &str, doc: &str) -> Schema {
    Schema { all_of: vec![reference(schema)], description: Some(doc.into()), ..Schema::default() }
}

/// The kind's doc: its description, then what the CRD says beside the schema.
fn kind_doc(crd: &Crd, version: &Version, description: Option<&str>) -> String {
    let spec = &crd.spec;
    let mut lines = Vec::new();
    if let Some(d) = description.filter(|d| !d.trim().is_empty()) {
        lines.push(d.trim_end().to_owned());
        lines.push(String::new());
    }
    // A manifest may mark no version as stored, or several (a warning).
    let stored: Vec<&str> = spec.versions.iter().filter(|v| v.storage).map(|v| v.name.as_str()).collect();
    let storage = match stored.as_slice() {
        [] => String::new(),
        [one] => format!("; stored as {one}"),
        several => format!("; stored as one of {}", several.join(", ")),
    };
    lines.push(format!(
        "Custom resource `{}` ({}/{}), {}{storage}.",
        crd.metadata.name,
        spec.group,
        version.name,
        spec.scope.to_lowercase()
    ));
    if version.deprecated {
        let warning = version.deprecation_warning.as_deref().unwrap_or("this version is deprecated");
        lines.push(format!("Deprecated: {warning}"));
    }
    if !spec.names.short_names.is_empty() {
        lines.push(format!("Short names: {}.", spec.names.short_names.join(", ")));
    }
    if !spec.names.categories.is_empty() {
        lines.push(format!("Categories: {}.", spec.names.categories.join(", ")));
    }
    for v in &schema_rules(version) {
        let message = v.message.as_deref().map(|m| format!(" ({m})")).unwrap_or_default();
        lines.push(format!("Validation: `{}`{message}.", v.rule.replace('`', "'")));
    }
    if !version.additional_printer_columns.is_empty() {
        lines.push(String::new());
        lines.push("Printer columns:".into());
        for c in &version.additional_printer_columns {
            let d = c.description.as_deref().map(|d| format!(": {d}")).unwrap_or_default();
            lines.push(format!("- `{}` ({}, `{}`){d}", c.name, c.ty, c.json_path));
        }
    }
    lines.join("\n")
}

/// The `x-kubernetes-validations` rules of a version's root schema.
fn schema_rules(version: &Version) -> Vec<crate::schema::Validation> {
    version
        .schema
        .as_ref()
        .and_then(|s| s.open_api_v3_schema.as_ref())
        .map(|s| s.validations.clone())
        .unwrap_or_default()
}

/// The paths the apiserver serves for one version of a CRD, with the
/// extensions the IR reads from them.
fn paths(crd: &Crd, version: &Version, name: &str, list_name: &str) -> Value {
    let spec = &crd.spec;
    let (group, v, plural) = (spec.group.as_str(), version.name.as_str(), spec.names.plural.as_str());
    let namespaced = spec.scope != "Cluster";
    let body = |schema: &str| json!({"content": {"application/json": {"schema": {"$ref": format!("#/components/schemas/{schema}")}}}});
    let op = |action: &str, kind: &str, request: Option<&str>, response: &str| {
        let mut o = json!({
            "x-kubernetes-action": action,
            "x-kubernetes-group-version-kind": {"group": group, "version": v, "kind": kind},
            "responses": {"200": body(response)},
        });
        if let Some(r) = request {
            o["requestBody"] = body(r);
        }
        o
    };
    let kind = spec.names.kind.as_str();
    let ns = if namespaced { "/namespaces/{namespace}" } else { "" };
    let base = format!("/apis/{group}/{v}");
    let mut paths = serde_json::Map::new();
    paths.insert(
        format!("{base}{ns}/{plural}"),
        json!({
            "get": op("list", kind, None, list_name),
            "post": op("post", kind, Some(name), name),
            "delete": op("deletecollection", kind, None, known::STATUS),
        }),
    );
    paths.insert(
        format!("{base}{ns}/{plural}/{{name}}"),
        json!({
            "get": op("get", kind, None, name),
            "put": op("put", kind, Some(name), name),
            "patch": op("patch", kind, None, name),
            "delete": op("delete", kind, None, known::STATUS),
        }),
    );
    paths.insert(format!("{base}/watch{ns}/{plural}"), json!({"get": op("watchlist", kind, None, name)}));
    if namespaced {
        paths.insert(format!("{base}/{plural}"), json!({"get": op("list", kind, None, list_name)}));
        paths.insert(format!("{base}/watch/{plural}"), json!({"get": op("watchlist", kind, None, name)}));
    }
    if version.subresources.status.is_some() {
        paths.insert(
            format!("{base}{ns}/{plural}/{{name}}/status"),
            json!({
                "get": op("get", kind, None, name),
                "put": op("put", kind, Some(name), name),
                "patch": op("patch", kind, None, name),
            }),
        );
    }
    if version.subresources.scale.is_some() {
        let scale = |action: &str, request: Option<&str>| {
            let mut o = op(action, "Scale", request, known::SCALE);
            o["x-kubernetes-group-version-kind"] = json!({"group": "autoscaling", "version": "v1", "kind": "Scale"});
            o
        };
        paths.insert(
            format!("{base}{ns}/{plural}/{{name}}/scale"),
            json!({
                "get": scale("get", None),
                "put": scale("put", Some(known::SCALE)),
                "patch": scale("patch", None),
            }),
        );
    }
    Value::Object(paths)
}
