//! Rust spelled as tokens, shared by every emitter: identifiers, the path
//! of a generated type, the Rust type of a field type, doc attributes and
//! feature gates. Emitters import these and the plan, never each other.

use proc_macro2::{Ident, Span, TokenStream};
use quote::{ToTokens, quote};

use crate::ir::{Api, FieldType};

/// An identifier; names come from [`crate::naming`], which already escaped keywords.
pub fn ident(name: &str) -> Ident {
    // A derive's input may name a field `r#type`.
    if let Some(raw) = name.strip_prefix("r#") {
        return Ident::new_raw(raw, Span::call_site());
    }
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
    if let Some(path) = &def.declared_at {
        return declared_path(path, name);
    }
    let modules = def.module.iter().map(|m| ident(m));
    let name = ident(name);
    if api.in_place && !def.external {
        return quote!(#name);
    }
    match (&api.external_crate, def.external) {
        (Some(krate), true) => {
            let krate = ident(krate);
            quote!(:: #krate #(:: #modules)* :: #name)
        }
        _ => quote!(crate #(:: #modules)* :: #name),
    }
}

/// The item `name` beside a type the user declared at `path`
/// (`crate::v1::Settings`, `Settings`): `crate::v1::SettingsApply`.
fn declared_path(path: &str, name: &str) -> TokenStream {
    match syn::parse_str::<syn::Path>(path) {
        Ok(mut path) => {
            if let Some(last) = path.segments.last_mut() {
                last.ident = ident(name);
            }
            path.into_token_stream()
        }
        // Paths come from parsed Rust; a bad one shows as itself.
        Err(_) => ident(name).into_token_stream(),
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
