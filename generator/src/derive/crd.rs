//! The kind a `#[derive(CustomResource)]` makes: its IR (a kind whose
//! `spec` is the derived struct, served by one resource with the CRD's
//! standard verbs and subresources), and what the emitters do not make of
//! a generated kind: `new(name, spec)`, `crd()` and `crd_yaml()`.

use std::collections::{BTreeMap, BTreeSet};

use proc_macro2::TokenStream;
use quote::quote;
use serde_json::{Map, Value, json};
use syn::{Error, Result};

use super::attrs::ResourceAttrs;
use super::declared_def;
use crate::emit::schema::schema_body;
use crate::emit::tokens::{ident, type_path};
use crate::ir::{Api, Field, FieldType, Gvk, OBJECT_META, Resource, Shape, Subresource, TypeDef, Verb};
use crate::lower::known::SCALE;

/// The schema of a CRD, in the Kubernetes crate.
const CRD: &str = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition";

/// The kind added to the IR.
pub struct Kind {
    /// Its schema name (its Rust name).
    pub schema: String,
    /// The spec's schema name.
    pub spec: String,
    /// The status type's schema name, if it has one.
    pub status: Option<String>,
    /// Its resource's REST name.
    pub plural: String,
    /// Its singular name.
    pub singular: String,
}

/// A kind's plural as Kubernetes tools guess it: the kind lowercased, in
/// English (`Policy` → `policies`, `Ingress` → `ingresses`).
pub fn plural(kind: &str) -> String {
    let lower = kind.to_lowercase();
    let consonant_y = lower.ends_with('y') && !lower[..lower.len() - 1].ends_with(['a', 'e', 'i', 'o', 'u']);
    if consonant_y {
        format!("{}ies", &lower[..lower.len() - 1])
    } else if ["s", "x", "z", "ch", "sh"].iter().any(|end| lower.ends_with(end)) {
        format!("{lower}es")
    } else {
        format!("{lower}s")
    }
}

fn field(json: &str, ty: FieldType, required: bool, doc: &str) -> Field {
    Field {
        json_name: json.to_owned(),
        rust_name: json.to_owned(),
        ty,
        required,
        nullable: false,
        doc: (!doc.is_empty()).then(|| doc.to_owned()),
        boxed: false,
        flatten: false,
        merge: Default::default(),
        keywords: Default::default(),
    }
}

/// The kind `attrs` describes, with `spec` its spec, added to `api`.
pub fn add_kind(api: &mut Api, attrs: &ResourceAttrs, spec: &str, span: proc_macro2::Span) -> Result<Kind> {
    let (group, version, kind) = (
        attrs.group.clone().unwrap_or_default(),
        attrs.version.clone().unwrap_or_default(),
        attrs.kind.clone().unwrap_or_default(),
    );
    if kind == spec {
        return Err(Error::new(
            span,
            format!("the spec struct is named `{spec}`, the kind's own name: name it `{kind}Spec`"),
        ));
    }
    let status = match &attrs.status {
        Some((path, span)) => {
            if path == spec || path == &kind {
                return Err(Error::new(*span, "the status is a type of its own, deriving Schema"));
            }
            if !api.types.contains_key(path) {
                let name = path.rsplit("::").next().unwrap_or(path);
                let mut def = declared_def(path, name, None, Shape::Declared);
                def.external = true;
                api.types.insert(path.clone(), def);
            }
            Some(path.clone())
        }
        None => None,
    };
    let plural = attrs.plural.clone().unwrap_or_else(|| plural(&kind));
    let singular = attrs.singular.clone().unwrap_or_else(|| kind.to_lowercase());
    let gvk = Gvk { group: group.clone(), version: version.clone(), kind: kind.clone() };
    let mut fields = vec![
        field("apiVersion", FieldType::String, false, ""),
        field("kind", FieldType::String, false, ""),
        field(
            "metadata",
            FieldType::Ref(OBJECT_META.to_owned()),
            true,
            "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
        ),
        field("spec", FieldType::Ref(spec.to_owned()), true, "What the object asks for."),
    ];
    if let Some(status) = &status {
        fields.push(field("status", FieldType::Ref(status.clone()), false, "What was last observed of the object."));
    }
    let scope = if attrs.namespaced { "namespaced" } else { "cluster-scoped" };
    let def = TypeDef {
        schema_name: kind.clone(),
        module: Vec::new(),
        rust_name: kind.clone(),
        source: String::new(),
        feature: None,
        doc: Some(format!(
            "Custom resource `{plural}.{group}` ({}), {scope}, with [`{spec}`] as its spec (`#[derive(CustomResource)]`).",
            gvk.api_version()
        )),
        gvk: Some(gvk.clone()),
        gvks: vec![gvk],
        shape: Shape::Struct(fields),
        owner: None,
        external: false,
        map_type: None,
        declared_at: None,
        keywords: Default::default(),
    };
    let (module, crd_name) = crate::naming::schema_path(CRD);
    let mut crd = declared_def(CRD, &crd_name.unwrap_or_default(), None, Shape::Declared);
    (crd.module, crd.declared_at, crd.external) = (module, None, true);
    api.types.insert(CRD.to_owned(), crd);
    if api.types.insert(kind.clone(), def).is_some() {
        return Err(Error::new(span, format!("`{kind}` names both the kind and a type its spec holds")));
    }
    let standard = [
        Verb::Get,
        Verb::List,
        Verb::Watch,
        Verb::Create,
        Verb::Update,
        Verb::Patch,
        Verb::Delete,
        Verb::DeleteCollection,
    ];
    let mut subresources = BTreeMap::new();
    let sub_verbs = BTreeSet::from([Verb::Get, Verb::Update, Verb::Patch]);
    if status.is_some() {
        subresources.insert(
            "status".to_owned(),
            Subresource {
                name: "status".into(),
                verbs: sub_verbs.clone(),
                gvk: None,
                body_schema: Some(kind.clone()),
                response_schema: Some(kind.clone()),
                params: BTreeMap::new(),
            },
        );
    }
    if attrs.scale.is_some() {
        subresources.insert(
            "scale".to_owned(),
            Subresource {
                name: "scale".into(),
                verbs: sub_verbs,
                gvk: Some(Gvk { group: "autoscaling".into(), version: "v1".into(), kind: "Scale".into() }),
                body_schema: Some(SCALE.into()),
                response_schema: Some(SCALE.into()),
                params: BTreeMap::new(),
            },
        );
    }
    api.resources.insert(
        (group.clone(), version.clone(), plural.clone()),
        Resource {
            group,
            version,
            kind: kind.clone(),
            plural: plural.clone(),
            type_schema: Some(kind.clone()),
            list_schema: None,
            namespaced: attrs.namespaced,
            verbs: standard.into_iter().collect(),
            subresources,
            source: String::new(),
        },
    );
    Ok(Kind { schema: kind, spec: spec.to_owned(), status, plural, singular })
}

/// The CRD of the kind, as JSON, with the pointers where the spec's and
/// status's schemas go.
fn crd_template(attrs: &ResourceAttrs, kind: &Kind) -> (Value, Vec<(String, String)>) {
    let group = attrs.group.as_deref().unwrap_or_default();
    let kind_name = attrs.kind.as_deref().unwrap_or_default();
    let mut names = Map::new();
    names.insert("kind".into(), kind_name.into());
    names.insert("listKind".into(), format!("{kind_name}List").into());
    names.insert("plural".into(), kind.plural.clone().into());
    names.insert("singular".into(), kind.singular.clone().into());
    if !attrs.short_names.is_empty() {
        names.insert("shortNames".into(), attrs.short_names.clone().into());
    }
    if !attrs.categories.is_empty() {
        names.insert("categories".into(), attrs.categories.clone().into());
    }
    let mut properties = Map::new();
    properties.insert("spec".into(), json!({}));
    let root = "/spec/versions/0/schema/openAPIV3Schema/properties";
    let mut places = vec![(format!("{root}/spec"), kind.spec.clone())];
    if let Some(status) = &kind.status {
        properties.insert("status".into(), json!({}));
        places.push((format!("{root}/status"), status.clone()));
    }
    let mut version = Map::new();
    version.insert("name".into(), attrs.version.clone().unwrap_or_default().into());
    version.insert("served".into(), attrs.served.unwrap_or(true).into());
    version.insert("storage".into(), true.into());
    version.insert(
        "schema".into(),
        json!({"openAPIV3Schema": {"type": "object", "properties": properties, "required": ["spec"]}}),
    );
    let mut subresources = Map::new();
    if kind.status.is_some() {
        subresources.insert("status".into(), json!({}));
    }
    if let Some(scale) = &attrs.scale {
        subresources.insert("scale".into(), scale.clone());
    }
    if !subresources.is_empty() {
        version.insert("subresources".into(), subresources.into());
    }
    if !attrs.printer_columns.is_empty() {
        version.insert("additionalPrinterColumns".into(), attrs.printer_columns.clone().into());
    }
    if !attrs.selectable_fields.is_empty() {
        let fields: Vec<Value> = attrs.selectable_fields.iter().map(|p| json!({"jsonPath": p})).collect();
        version.insert("selectableFields".into(), fields.into());
    }
    if attrs.deprecated {
        version.insert("deprecated".into(), true.into());
    }
    if let Some(warning) = &attrs.deprecation_warning {
        version.insert("deprecationWarning".into(), warning.clone().into());
    }
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{}.{group}", kind.plural)},
        "spec": {
            "group": group,
            "names": names,
            "scope": if attrs.namespaced { "Namespaced" } else { "Cluster" },
            "versions": [version],
        },
    });
    (crd, places)
}

/// `new`, `crd` and `crd_yaml` of the kind.
pub fn kind_items(api: &Api, attrs: &ResourceAttrs, kind: &Kind) -> TokenStream {
    let name = ident(&kind.schema);
    let spec = type_path(api, &kind.spec);
    let crd_type = type_path(api, CRD);
    let meta = type_path(api, OBJECT_META);
    let status = kind.status.as_ref().map(|_| quote!(status: ::std::option::Option::None,));
    let (template, places) = crd_template(attrs, kind);
    let body = schema_body(api, &template, &places);
    let crd_name = template["metadata"]["name"].as_str().unwrap_or_default().to_owned();
    let new_doc = format!("A `{}` named `name`, with `spec`: what `create` takes.", kind.schema);
    let crd_doc = format!(
        "The CustomResourceDefinition `{crd_name}` serving this version, with the structural schema of [`{}`]: \
         what `kubectl apply -f` takes, and the apiserver accepts as it is.",
        kind.spec
    );
    quote! {
        impl #name {
            #[doc = #new_doc]
            pub fn new(name: impl ::std::convert::Into<::k8s_client_runtime::LeanString>, spec: #spec) -> Self {
                Self {
                    metadata: #meta { name: ::std::option::Option::Some(name.into()), ..::std::default::Default::default() },
                    spec,
                    #status
                }
            }

            #[doc = #crd_doc]
            pub fn crd() -> #crd_type {
                let crd = #body;
                ::serde_json::from_value(crd).expect("the derived CRD is a CustomResourceDefinition")
            }

            /// [`Self::crd`] as YAML, as kubectl prints it: for manifests and charts.
            pub fn crd_yaml() -> ::std::string::String {
                ::k8s_client_runtime::schema::to_yaml(&Self::crd()).expect("a CRD is JSON")
            }
        }
    }
}
