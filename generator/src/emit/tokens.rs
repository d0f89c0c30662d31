//! Rust spelled as tokens, shared by every emitter: identifiers, the path
//! of a generated type, the Rust type of a field type, doc attributes and
//! feature gates. Emitters import these and the plan, never each other.

use proc_macro2::{Ident, Span, TokenStream};
use quote::quote;

use crate::ir::{Api, FieldType};

/// An identifier; names come from [`crate::naming`], which already escaped keywords.
pub fn ident(name: &str) -> Ident {
    Ident::new(name, Span::call_site())
}

/// `crate::api::core::v1::Pod` for a schema name; the Kubernetes crate's
/// path (`::k8s_client::apimachinery::…`) for a type it provides.
pub fn type_path(api: &Api, schema: &str) -> TokenStream {
    type_path_named(api, schema, &api.types[schema].rust_name)
}

/// The path of the item `name` in the module of a schema's type (its
/// apply configuration): `crate::api::apps::v1::DeploymentApply`.
pub fn type_path_named(api: &Api, schema: &str, name: &str) -> TokenStream {
    let def = &api.types[schema];
    let modules = def.module.iter().map(|m| ident(m));
    let name = ident(name);
    match (&api.external_crate, def.external) {
        (Some(krate), true) => {
            let krate = ident(krate);
            quote!(:: #krate #(:: #modules)* :: #name)
        }
        _ => quote!(crate #(:: #modules)* :: #name),
    }
}

/// The Rust type of a field type.
pub fn rust_type(api: &Api, ty: &FieldType) -> TokenStream {
    match ty {
        FieldType::String => quote!(::k8s_client_runtime::LeanString),
        FieldType::Bool => quote!(bool),
        FieldType::I32 => quote!(i32),
        FieldType::I64 => quote!(i64),
        FieldType::F64 => quote!(f64),
        FieldType::Bytes => quote!(::k8s_client_runtime::codec::ByteString),
        FieldType::Json => quote!(::serde_json::Value),
        FieldType::Ref(r) => type_path(api, r),
        FieldType::Array(t) => {
            let t = rust_type(api, t);
            quote!(::k8s_client_runtime::ThinVec<#t>)
        }
        // The runtime's compact sorted map; of strings by default.
        FieldType::Map(t) => match t.as_ref() {
            FieldType::String => quote!(::k8s_client_runtime::Map),
            t => {
                let t = rust_type(api, t);
                quote!(::k8s_client_runtime::Map<#t>)
            }
        },
    }
}

/// The doc attributes of an optional description.
pub fn doc_attr(doc: &Option<String>) -> TokenStream {
    doc.as_deref().map(super::text::doc).unwrap_or_default()
}

/// `#[cfg(all(feature = ...))]` for a set of features, or nothing.
pub fn gate<'a>(features: impl IntoIterator<Item = &'a str>) -> TokenStream {
    let fs: Vec<&str> = features.into_iter().collect();
    match fs.as_slice() {
        [] => quote!(),
        [f] => quote!(#[cfg(feature = #f)]),
        _ => quote!(#[cfg(all(#(feature = #fs),*))]),
    }
}
