//! The derives' front end: Rust items (a spec struct with
//! `#[derive(CustomResource)]`, a struct or enum with `#[derive(Schema)]`)
//! read into the [`crate::ir`] the OpenAPI front end builds, then planned
//! and rendered by the same [`crate::plan`] and [`crate::emit`]: a derived
//! kind gets the codec, `Resource` impl and apply configuration a
//! generated kind gets, and cannot drift from it. The proc-macro crate
//! (`k8s-client-derive`) only hands token streams to [`custom_resource`]
//! and [`schema`].
//!
//! The user's types stay as written ([`TypeDef::declared_at`]): the derive
//! adds impls beside them and, for a kind, the kind's struct, its
//! constructor and its `crd()`. Types a field holds are named where the
//! field names them and answer for themselves through the runtime's
//! `Schema` and `ApplyValue` ([`Shape::Declared`]), so each derive reads
//! one item.

mod attrs;
mod crd;
mod types;

use proc_macro2::TokenStream;
use quote::quote;
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Error, Fields, Result};

use crate::emit::types::{Gates, emit_type_with};
use crate::ir::{Api, Field, MergeFacts, Shape, TypeDef, Variant};
use crate::naming::GroupNames;

pub use attrs::{ResourceAttrs, SchemaAttrs};

/// What the derive crate was built with.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// Emit apply configurations (`<Type>Apply`): the Kubernetes crate's
    /// `apply` feature is on, so the ones a derived type holds exist.
    pub apply: bool,
}

impl Options {
    fn gates(self) -> Gates {
        Gates { apply: self.apply.then(TokenStream::new) }
    }
}

/// `#[derive(CustomResource)]` on a spec struct: its impls, and the kind
/// `#[resource(...)]` describes.
pub fn custom_resource(input: TokenStream, options: Options) -> Result<TokenStream> {
    let input: DeriveInput = syn::parse2(input)?;
    reject_generics(&input)?;
    let resource = ResourceAttrs::parse(&input.attrs, input.ident.span())?;
    let Data::Struct(data) = &input.data else {
        return Err(Error::new(input.ident.span(), "#[derive(CustomResource)] goes on a struct: the kind's spec"));
    };
    let mut api = base_api();
    let spec = declared_struct(&input, &data.fields, &mut api)?;
    let kind = crd::add_kind(&mut api, &resource, &spec, input.ident.span())?;
    let plan = crate::plan::plan(&api, &GroupNames::default()).map_err(|e| Error::new(input.ident.span(), e))?;
    let gates = options.gates();
    let mut out = emit_type_with(&api, &plan, &api.types[&spec], &gates);
    out.extend(emit_type_with(&api, &plan, &api.types[&kind.schema], &gates));
    out.extend(crd::kind_items(&api, &resource, &kind));
    // What the kind's client serves.
    for c in plan.group_versions.values().flat_map(|gv| &gv.clients).filter(|c| c.schema == kind.schema) {
        out.extend(crate::emit::clientset::client_markers(&api, c, false));
    }
    Ok(out)
}

/// `#[derive(Schema)]` on a struct (its codec, schema and apply
/// configuration) or an enum of unit variants (a string enum).
pub fn schema(input: TokenStream, options: Options) -> Result<TokenStream> {
    let input: DeriveInput = syn::parse2(input)?;
    reject_generics(&input)?;
    if let Some(attr) = input.attrs.iter().find(|a| a.path().is_ident("resource")) {
        return Err(Error::new(attr.span(), "#[resource(...)] belongs to #[derive(CustomResource)], not Schema"));
    }
    let mut api = base_api();
    let name = match &input.data {
        Data::Struct(data) => declared_struct(&input, &data.fields, &mut api)?,
        Data::Enum(data) => declared_enum(&input, data, &mut api)?,
        Data::Union(u) => {
            return Err(Error::new(u.union_token.span(), "a union has no schema: derive Schema on a struct or enum"));
        }
    };
    let plan = crate::plan::plan(&api, &GroupNames::default()).map_err(|e| Error::new(input.ident.span(), e))?;
    Ok(emit_type_with(&api, &plan, &api.types[&name], &options.gates()))
}

fn reject_generics(input: &DeriveInput) -> Result<()> {
    if let Some(param) = input.generics.params.first() {
        return Err(Error::new(
            param.span(),
            "a type with a schema cannot be generic: a CRD's schema is one tree, fixed when it is written",
        ));
    }
    Ok(())
}

/// What every derive's IR starts from: the Kubernetes crate's types a
/// field may name by their schema, as a crate of custom resources has them.
fn base_api() -> Api {
    let mut api = Api { external_crate: Some(crate::CLIENT_CRATE.to_owned()), in_place: true, ..Api::default() };
    for def in crate::lower::known::external_types() {
        api.types.insert(def.schema_name.clone(), def);
    }
    api
}

/// A type the user wrote, by the path naming it where the derive expands.
fn declared_def(path: &str, rust_name: &str, doc: Option<String>, shape: Shape) -> TypeDef {
    TypeDef {
        schema_name: path.to_owned(),
        module: Vec::new(),
        rust_name: rust_name.to_owned(),
        source: String::new(),
        feature: None,
        doc,
        gvk: None,
        gvks: Vec::new(),
        shape,
        owner: None,
        external: false,
        map_type: None,
        declared_at: Some(path.to_owned()),
        keywords: Default::default(),
    }
}

/// The struct being derived, into `api` with the types its fields name;
/// its schema name.
fn declared_struct(input: &DeriveInput, fields: &Fields, api: &mut Api) -> Result<String> {
    let Fields::Named(named) = fields else {
        return Err(Error::new(
            input.ident.span(),
            "a struct with a schema has named fields: its schema is an object of properties",
        ));
    };
    let own = input.ident.to_string();
    let attrs = SchemaAttrs::parse(&input.attrs)?;
    let mut ir_fields = Vec::with_capacity(named.named.len());
    let mut wire_names = std::collections::BTreeMap::new();
    for f in &named.named {
        let ident = f.ident.as_ref().ok_or_else(|| Error::new(f.span(), "a field without a name"))?;
        let field_attrs = SchemaAttrs::parse(&f.attrs)?;
        let rust_name = ident.to_string();
        let json_name = field_attrs
            .rename
            .clone()
            .unwrap_or_else(|| heck::ToLowerCamelCase::to_lower_camel_case(rust_name.trim_start_matches("r#")));
        if let Some(earlier) = wire_names.insert(json_name.clone(), rust_name.clone()) {
            return Err(Error::new(
                ident.span(),
                format!("field `{rust_name}` and field `{earlier}` are both `{json_name}` in JSON"),
            ));
        }
        let held = types::field_type(&f.ty, &own, api)?;
        let mut keywords = held.keywords;
        keywords.extend(field_attrs.keywords);
        let mut merge = MergeFacts::default();
        if let Some(list_type) = field_attrs.list_type {
            if !matches!(held.ty, crate::ir::FieldType::Array(_)) {
                return Err(Error::new(f.ty.span(), format!("field `{rust_name}`: list_type is for lists")));
            }
            merge.list_type = list_type;
        }
        merge.map_type = field_attrs.map_type;
        ir_fields.push(Field {
            json_name,
            rust_name,
            ty: held.ty,
            required: !held.optional,
            nullable: field_attrs.nullable,
            doc: attrs::doc(&f.attrs),
            boxed: held.boxed,
            flatten: false,
            merge,
            keywords,
        });
    }
    let mut def = declared_def(&own, &own, attrs::doc(&input.attrs), Shape::Struct(ir_fields));
    def.keywords = attrs.keywords;
    def.map_type = attrs.map_type;
    api.types.insert(own.clone(), def);
    Ok(own)
}

/// An enum of unit variants, a string enum.
fn declared_enum(input: &DeriveInput, data: &syn::DataEnum, api: &mut Api) -> Result<String> {
    let own = input.ident.to_string();
    let mut variants = Vec::with_capacity(data.variants.len());
    for v in &data.variants {
        if !matches!(v.fields, Fields::Unit) {
            return Err(Error::new(
                v.ident.span(),
                format!(
                    "variant `{}` holds data: only an enum of unit variants (a string enum) has a structural \
                     schema; hold the data in a struct with an optional field per case",
                    v.ident
                ),
            ));
        }
        let attrs = SchemaAttrs::parse(&v.attrs)?;
        let wire = attrs.rename.unwrap_or_else(|| v.ident.to_string());
        if variants.iter().any(|other: &Variant| other.wire == wire) {
            return Err(Error::new(v.ident.span(), format!("two variants are {wire:?} on the wire")));
        }
        variants.push(Variant { wire, rust_name: v.ident.to_string() });
    }
    if variants.is_empty() {
        return Err(Error::new(input.ident.span(), "an enum without variants has no value to hold"));
    }
    let def = declared_def(&own, &own, attrs::doc(&input.attrs), Shape::Enum { variants, fallback: String::new() });
    api.types.insert(own.clone(), def);
    Ok(own)
}

/// Token streams of errors, for the proc-macro crate.
pub fn to_compile_error(e: Error) -> TokenStream {
    let error = e.to_compile_error();
    quote!(#error)
}

#[cfg(test)]
mod tests;
