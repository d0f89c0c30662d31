//! One Rust type per schema: serde structs for object schemas, and the
//! hand-designed representations of [`Special`] schemas.

use std::collections::{BTreeMap, BTreeSet};

use proc_macro2::{Ident, Span, TokenStream};
use quote::quote;

use crate::ir::{Api, Field, FieldType, Shape, Special, TypeDef, Variant};
use crate::plan::{KindPlan, OBJECT_META};
const LIST_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta";

/// An identifier; names come from [`crate::naming`], which already escaped keywords.
pub fn ident(name: &str) -> Ident {
    Ident::new(name, Span::call_site())
}

/// `crate::api::core::v1::Pod` for a schema name; the Kubernetes crate's
/// path (`::k8s_client::apimachinery::…`) for a type it provides.
pub fn type_path(api: &Api, schema: &str) -> TokenStream {
    let def = &api.types[schema];
    let modules = def.module.iter().map(|m| ident(m));
    let name = ident(&def.rust_name);
    match (&api.external_crate, def.external) {
        (Some(krate), true) => {
            let krate = ident(krate);
            quote!(:: #krate #(:: #modules)* :: #name)
        }
        _ => quote!(crate #(:: #modules)* :: #name),
    }
}

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

fn doc_attr(doc: &Option<String>) -> TokenStream {
    doc.as_deref().map(super::text::doc).unwrap_or_default()
}

pub use crate::plan::is_kind;

/// How a field holds a kind, whose TypeMeta is then left out on encode.
enum Embedding {
    One,
    Many,
}

fn embedded_kind(api: &Api, ty: &FieldType) -> Option<Embedding> {
    let holds_kind = |r: &str| api.types.get(r).is_some_and(is_kind);
    match ty {
        FieldType::Ref(r) if holds_kind(r) => Some(Embedding::One),
        FieldType::Array(inner) => match inner.as_ref() {
            FieldType::Ref(r) if holds_kind(r) => Some(Embedding::Many),
            _ => None,
        },
        _ => None,
    }
}

/// Fields of a kind's metadata that are never optional (`ObjectMeta`, `ListMeta`).
fn is_kind_metadata(def: &TypeDef, f: &Field) -> bool {
    f.json_name == "metadata"
        && is_kind(def)
        && matches!(&f.ty, FieldType::Ref(r) if r == OBJECT_META || r == LIST_META)
}

fn struct_fields(def: &TypeDef) -> Vec<&Field> {
    let Shape::Struct(fields) = &def.shape else { return Vec::new() };
    let kind = is_kind(def);
    fields.iter().filter(|f| !(kind && (f.json_name == "apiVersion" || f.json_name == "kind"))).collect()
}

/// Fields that are plain values rather than `Option`s.
pub(super) fn is_plain(def: &TypeDef, f: &Field) -> bool {
    (f.required && !f.nullable) || is_kind_metadata(def, f)
}

/// Whether `ty` names a generated struct (not an enum or special type).
pub(super) fn is_struct(api: &Api, ty: &FieldType) -> bool {
    matches!(ty, FieldType::Ref(r) if matches!(api.types.get(r.as_str()).map(|d| &d.shape), Some(Shape::Struct(_))))
}

/// Whether a field holds its value behind a `Box`: to break a cycle, or
/// because it is an optional object. An absent optional object then costs a
/// pointer instead of its whole size (a `Volume` holds some thirty optional
/// sources, a `Container` three optional probes). A kind's `spec` and
/// `status` stay inline: they are present on nearly every object.
pub(super) fn is_boxed(api: &Api, def: &TypeDef, f: &Field) -> bool {
    let optional_object = !is_plain(def, f)
        && is_struct(api, &f.ty)
        && !(is_kind(def) && (f.json_name == "spec" || f.json_name == "status"));
    f.boxed || optional_object
}

/// The deepest chain of object types held inside one another, through
/// fields, lists and maps (a cycle counts once).
pub fn nesting_depth(api: &Api) -> usize {
    fn depth(api: &Api, name: &str, memo: &mut BTreeMap<String, usize>, path: &mut BTreeSet<String>) -> usize {
        if let Some(d) = memo.get(name) {
            return *d;
        }
        let Some(TypeDef { shape: Shape::Struct(fields), .. }) = api.types.get(name) else { return 0 };
        if !path.insert(name.to_owned()) {
            return 0;
        }
        let mut refs = BTreeSet::new();
        fields.iter().for_each(|f| f.ty.refs(&mut refs));
        let d = 1 + refs.iter().map(|r| depth(api, r, memo, path)).max().unwrap_or(0);
        path.remove(name);
        memo.insert(name.to_owned(), d);
        d
    }
    let mut memo = BTreeMap::new();
    api.types.keys().map(|name| depth(api, name, &mut memo, &mut BTreeSet::new())).max().unwrap_or(0)
}

/// Optional fields written even when `None`, as `null`: required but nullable.
fn writes_null(def: &TypeDef, f: &Field) -> bool {
    f.required && f.nullable && !is_plain(def, f)
}

fn field_tokens(api: &Api, def: &TypeDef, f: &Field) -> TokenStream {
    let name = ident(&f.rust_name);
    let json = &f.json_name;
    let doc = doc_attr(&f.doc);
    // A kind's Serialize is written by hand (`serialize_fields`) and every
    // Deserialize is (`decode`): only a derived Serialize reads attributes.
    let derives_serialize = !is_kind(def);
    if f.flatten {
        // Undeclared fields: any keys, any values, rare enough for a tree.
        let ty = quote!(::std::collections::BTreeMap<::std::string::String, ::serde_json::Value>);
        let attr = derives_serialize.then(|| quote!(#[serde(flatten)]));
        return quote! {
            #doc
            #attr
            pub #name: #ty,
        };
    }
    let mut ty = rust_type(api, &f.ty);
    if is_boxed(api, def, f) {
        ty = quote!(::std::boxed::Box<#ty>);
    }
    let embedded = if f.boxed || !derives_serialize { None } else { embedded_kind(api, &f.ty) };
    if is_plain(def, f) {
        let ser = match embedded {
            None => quote!(),
            Some(Embedding::One) => quote!(, serialize_with = "::k8s_client_runtime::codec::embedded"),
            Some(Embedding::Many) => quote!(, serialize_with = "::k8s_client_runtime::codec::embedded_vec"),
        };
        let attr = derives_serialize.then(|| quote!(#[serde(rename = #json #ser)]));
        quote! {
            #doc
            #attr
            pub #name: #ty,
        }
    } else {
        let ser = match embedded {
            None => quote!(),
            Some(Embedding::One) => quote!(, serialize_with = "::k8s_client_runtime::codec::embedded_option"),
            Some(Embedding::Many) => quote!(, serialize_with = "::k8s_client_runtime::codec::embedded_option_vec"),
        };
        // `Option` from the prelude, unless a schema of this module takes the name.
        let (option, is_none) = if option_shadowed(api, def) {
            (quote!(::std::option::Option), "::std::option::Option::is_none")
        } else {
            (quote!(Option), "Option::is_none")
        };
        let skip = (!writes_null(def, f)).then(|| quote!(, skip_serializing_if = #is_none));
        let attr = derives_serialize.then(|| quote!(#[serde(rename = #json #skip #ser)]));
        quote! {
            #doc
            #attr
            pub #name: #option<#ty>,
        }
    }
}

/// The items of one type's file.
/// Whether a type named `Option` lives in `def`'s module, hiding the prelude's.
fn option_shadowed(api: &Api, def: &TypeDef) -> bool {
    api.types.values().any(|d| d.module == def.module && d.rust_name == "Option")
}

/// The items of one type's file; `kind` when the schema implements the
/// runtime's `Resource`.
pub fn emit_type(api: &Api, def: &TypeDef, kind: Option<&KindPlan>) -> TokenStream {
    match &def.shape {
        Shape::Special(s) => emit_special(def, *s),
        Shape::Struct(_) => emit_struct(api, def, kind),
        Shape::Enum { variants, fallback } => emit_enum(def, variants, fallback),
    }
}

fn emit_struct(api: &Api, def: &TypeDef, resource: Option<&KindPlan>) -> TokenStream {
    let name = ident(&def.rust_name);
    let doc = doc_attr(&def.doc);
    let fields = struct_fields(def);
    let field_defs = fields.iter().map(|f| field_tokens(api, def, f));
    let kind = is_kind(def);
    let derive_ser = if kind { quote!() } else { quote!(, ::serde::Serialize) };
    let mut out = quote! {
        #doc
        #[derive(Clone, Debug, Default, PartialEq #derive_ser)]
        pub struct #name {
            #(#field_defs)*
        }
    };
    out.extend(super::decode::decode_impls(api, def, &fields));
    if let (true, Some(gvk)) = (kind, &def.gvk) {
        let api_version = gvk.api_version();
        let kind_name = &gvk.kind;
        let struct_name = &def.rust_name;
        // A kind keeping undeclared fields is written as a map, those fields
        // after the declared ones; any other as a struct.
        let rest = fields.iter().find(|f| f.flatten);
        let put = if rest.is_some() { quote!(serialize_entry) } else { quote!(serialize_field) };
        let writes = fields.iter().filter(|f| !f.flatten).map(|f| {
            let n = ident(&f.rust_name);
            let json = &f.json_name;
            let wrap = |value: TokenStream| match embedded_kind(api, &f.ty) {
                None => value,
                Some(Embedding::One) => quote!(&::k8s_client_runtime::codec::EmbeddedRef(#value)),
                Some(Embedding::Many) => quote!(&::k8s_client_runtime::codec::EmbeddedSeq(#value)),
            };
            if is_plain(def, f) || writes_null(def, f) {
                let value = wrap(quote!(&self.#n));
                quote!(state.#put(#json, #value)?;)
            } else {
                let value = wrap(quote!(value));
                quote! {
                    if let ::std::option::Option::Some(value) = &self.#n {
                        state.#put(#json, #value)?;
                    }
                }
            }
        });
        let rest_writes = rest.map(|f| {
            let n = ident(&f.rust_name);
            quote! {
                for (key, value) in &self.#n {
                    state.serialize_entry(key, value)?;
                }
            }
        });
        let plain = fields.iter().filter(|f| !f.flatten && (is_plain(def, f) || writes_null(def, f))).count();
        let optional = fields.iter().filter(|f| !is_plain(def, f) && !writes_null(def, f)).map(|f| {
            let n = ident(&f.rust_name);
            quote!(+ usize::from(self.#n.is_some()))
        });
        let begin = match rest {
            Some(_) => quote! {
                use ::serde::ser::SerializeMap as _;
                let mut state = serializer.serialize_map(::std::option::Option::None)?;
            },
            None => quote! {
                use ::serde::ser::SerializeStruct as _;
                let len = 2 * usize::from(type_meta) + #plain #(#optional)*;
                let mut state = serializer.serialize_struct(#struct_name, len)?;
            },
        };
        // Served kinds have these constants through the `Resource` trait.
        let consts = resource.is_none().then(|| {
            quote! {
                /// `apiVersion` of this kind.
                pub const API_VERSION: &'static str = #api_version;
                /// `kind` of this kind.
                pub const KIND: &'static str = #kind_name;
            }
        });
        out.extend(quote! {
            impl #name {
                #consts

                fn serialize_fields<S: ::serde::Serializer>(&self, serializer: S, type_meta: bool) -> ::std::result::Result<S::Ok, S::Error> {
                    #begin
                    if type_meta {
                        state.#put("apiVersion", #api_version)?;
                        state.#put("kind", #kind_name)?;
                    }
                    #(#writes)*
                    #rest_writes
                    state.end()
                }
            }

            impl ::serde::Serialize for #name {
                fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> ::std::result::Result<S::Ok, S::Error> {
                    self.serialize_fields(serializer, true)
                }
            }

            impl ::k8s_client_runtime::codec::SerializeEmbedded for #name {
                fn serialize_embedded<S: ::serde::Serializer>(&self, serializer: S) -> ::std::result::Result<S::Ok, S::Error> {
                    self.serialize_fields(serializer, false)
                }
            }
        });
        if let Some(k) = resource {
            out.extend(resource_impls(api, def, k));
        }
    }
    if def.schema_name == OBJECT_META {
        out.extend(object_meta_impl());
    }
    if def.schema_name == LABEL_SELECTOR {
        out.extend(label_selector_impl());
    }
    out
}

/// A string enum: one variant per known value, and a fallback holding any
/// other value, so that a value a newer server sends still decodes and is
/// written back unchanged.
fn emit_enum(def: &TypeDef, variants: &[Variant], fallback: &str) -> TokenStream {
    let name = ident(&def.rust_name);
    let doc = doc_attr(&def.doc);
    let fallback = ident(fallback);
    let idents: Vec<Ident> = variants.iter().map(|v| ident(&v.rust_name)).collect();
    let wires: Vec<&str> = variants.iter().map(|v| v.wire.as_str()).collect();
    let variant_docs = wires.iter().map(|w| super::text::doc(&format!("`{}`", serde_json::Value::from(*w))));
    let first =
        idents.first().map_or_else(|| quote!(#name::#fallback(::std::string::String::new())), |v| quote!(#name::#v));
    quote! {
        #doc
        #[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum #name {
            #( #variant_docs #idents, )*
            /// A value not known when this crate was generated.
            #fallback(::std::string::String),
        }

        impl #name {
            /// The value on the wire.
            pub fn as_str(&self) -> &str {
                match self {
                    #( #name::#idents => #wires, )*
                    #name::#fallback(value) => value,
                }
            }
        }

        impl ::std::convert::From<&str> for #name {
            fn from(value: &str) -> Self {
                match value {
                    #( #wires => #name::#idents, )*
                    other => #name::#fallback(other.to_owned()),
                }
            }
        }

        /// The first known value.
        impl ::std::default::Default for #name {
            fn default() -> Self {
                #first
            }
        }

        impl ::std::fmt::Display for #name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ::serde::Serialize for #name {
            fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> ::std::result::Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> ::serde::Deserialize<'de> for #name {
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> ::std::result::Result<Self, D::Error> {
                ::k8s_client_runtime::codec::deserialize_str_as(deserializer, |value| #name::from(value))
            }
        }
    }
}

const LABEL_SELECTOR: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector";

/// metav1.LabelSelector → the runtime's selector, as `metav1.LabelSelectorAsSelector`.
fn label_selector_impl() -> TokenStream {
    quote! {
        impl LabelSelector {
            /// This selector in the form listers and `ListOptions` use. An empty
            /// selector selects everything, as in apimachinery.
            pub fn to_selector(&self) -> ::std::result::Result<::k8s_client_runtime::selector::LabelSelector, ::k8s_client_runtime::selector::Error> {
                let labels = self.match_labels.iter().flatten().map(|(k, v)| (k.clone(), v.clone()));
                let mut expressions = ::std::vec::Vec::new();
                for e in self.match_expressions.iter().flatten() {
                    expressions.push(::k8s_client_runtime::selector::Requirement::from_expression(
                        e.key.clone(),
                        &e.operator,
                        e.values.iter().flatten().cloned(),
                    )?);
                }
                ::k8s_client_runtime::selector::LabelSelector::from_match(labels, expressions)
            }
        }
    }
}

fn resource_impls(api: &Api, def: &TypeDef, k: &KindPlan) -> TokenStream {
    let name = ident(&def.rust_name);
    let r = k.resource;
    let (group, version, kind, plural) = (&r.group, &r.version, &r.kind, &r.plural);
    let (api_version, list_kind) = (&k.api_version, &k.list_kind);
    let scope = if r.namespaced {
        quote!(::k8s_client_runtime::object::Scope::Namespaced)
    } else {
        quote!(::k8s_client_runtime::object::Scope::Cluster)
    };
    let mut out = quote! {
        impl ::k8s_client_runtime::object::Resource for #name {
            const GROUP: &'static str = #group;
            const VERSION: &'static str = #version;
            const API_VERSION: &'static str = #api_version;
            const KIND: &'static str = #kind;
            const PLURAL: &'static str = #plural;
            const SCOPE: ::k8s_client_runtime::object::Scope = #scope;
            const LIST_KIND: &'static str = #list_kind;
        }
    };
    if k.object {
        let meta = type_path(api, OBJECT_META);
        out.extend(quote! {
            impl ::k8s_client_runtime::object::Object for #name {
                type Meta = #meta;
                fn metadata(&self) -> &Self::Meta {
                    &self.metadata
                }
                fn metadata_mut(&mut self) -> &mut Self::Meta {
                    &mut self.metadata
                }
                fn type_meta(&self) -> ::std::option::Option<(::std::borrow::Cow<'_, str>, ::std::borrow::Cow<'_, str>)> {
                    ::std::option::Option::Some((
                        ::std::borrow::Cow::Borrowed(<Self as ::k8s_client_runtime::object::Resource>::API_VERSION),
                        ::std::borrow::Cow::Borrowed(<Self as ::k8s_client_runtime::object::Resource>::KIND),
                    ))
                }
            }
        });
    }
    out
}

fn object_meta_impl() -> TokenStream {
    quote! {
        impl ::k8s_client_runtime::object::Metadata for ObjectMeta {
            fn name(&self) -> ::std::option::Option<&str> { self.name.as_deref() }
            fn generate_name(&self) -> ::std::option::Option<&str> { self.generate_name.as_deref() }
            fn namespace(&self) -> ::std::option::Option<&str> { self.namespace.as_deref() }
            fn uid(&self) -> ::std::option::Option<&str> { self.uid.as_deref() }
            fn resource_version(&self) -> ::std::option::Option<&str> { self.resource_version.as_deref() }
            fn generation(&self) -> ::std::option::Option<i64> { self.generation }
            fn labels(&self) -> ::std::option::Option<&::k8s_client_runtime::Map> {
                self.labels.as_ref()
            }
            fn annotations(&self) -> ::std::option::Option<&::k8s_client_runtime::Map> {
                self.annotations.as_ref()
            }
            fn is_being_deleted(&self) -> bool { self.deletion_timestamp.is_some() }
            fn set_name(&mut self, name: ::std::option::Option<::std::string::String>) { self.name = name.map(::std::convert::Into::into); }
            fn set_namespace(&mut self, namespace: ::std::option::Option<::std::string::String>) {
                self.namespace = namespace.map(::std::convert::Into::into);
            }
            fn set_resource_version(&mut self, resource_version: ::std::option::Option<::std::string::String>) {
                self.resource_version = resource_version.map(::std::convert::Into::into);
            }
            fn clear_managed_fields(&mut self) { self.managed_fields = ::std::option::Option::None; }
        }
    }
}

fn emit_special(def: &TypeDef, special: Special) -> TokenStream {
    let name = ident(&def.rust_name);
    let doc = doc_attr(&def.doc);
    // The JSONSchemaProps that the schema-or-X types hold lives beside them.
    let props = {
        let modules = def.module.iter().map(|m| ident(m));
        quote!(crate #(:: #modules)* :: JSONSchemaProps)
    };
    // JSONSchemaProps or another JSON shape, told apart by the JSON itself.
    let schema_or = |other: TokenStream| {
        quote! {
            #doc
            #[derive(Clone, Debug, PartialEq, ::serde::Serialize, ::serde::Deserialize)]
            #[serde(untagged)]
            pub enum #name {
                #other,
                Schema(::std::boxed::Box<#props>),
            }
        }
    };
    match special {
        Special::IntOrString => quote! {
            #doc
            #[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
            pub enum #name {
                Int(i32),
                String(::k8s_client_runtime::LeanString),
            }

            impl ::std::default::Default for #name {
                fn default() -> Self {
                    #name::Int(0)
                }
            }

            impl ::serde::Serialize for #name {
                fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> ::std::result::Result<S::Ok, S::Error> {
                    match self {
                        #name::Int(i) => serializer.serialize_i32(*i),
                        #name::String(s) => serializer.serialize_str(s),
                    }
                }
            }

            impl<'de> ::serde::Deserialize<'de> for #name {
                fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> ::std::result::Result<Self, D::Error> {
                    ::k8s_client_runtime::codec::deserialize_int_or_string(deserializer).map(|v| match v {
                        ::k8s_client_runtime::codec::IntOrStr::Int(i) => #name::Int(i),
                        ::k8s_client_runtime::codec::IntOrStr::Str(s) => #name::String(s),
                    })
                }
            }
        },
        Special::Quantity => quote! {
            #doc
            #[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, ::serde::Serialize)]
            pub struct #name(pub ::k8s_client_runtime::LeanString);

            /// A string, or a bare JSON number kept as the text it was
            /// written with (`1e3` stays `1e3`), as apimachinery reads it.
            impl<'de> ::serde::Deserialize<'de> for #name {
                fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> ::std::result::Result<Self, D::Error> {
                    ::k8s_client_runtime::codec::deserialize_quantity(deserializer).map(#name)
                }
            }

            /// The quantity as written (`"500m"`).
            impl ::std::convert::AsRef<str> for #name {
                fn as_ref(&self) -> &str {
                    &self.0
                }
            }

            /// The quantity as written (`500m`).
            impl ::std::fmt::Display for #name {
                fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                    f.write_str(&self.0)
                }
            }

            /// `"500m".into()`.
            impl ::std::convert::From<&str> for #name {
                fn from(text: &str) -> Self {
                    #name(text.into())
                }
            }

            /// `String::from("500m").into()`.
            impl ::std::convert::From<::std::string::String> for #name {
                fn from(text: ::std::string::String) -> Self {
                    #name(text.into())
                }
            }

            /// Decoded maps of quantities are shared through their text.
            impl ::k8s_client_runtime::map::TextValue for #name {
                const NUMBERS_AS_TEXT: bool = true;
                const EXPECTING: &'static str = "a quantity";
                fn from_text(text: &str) -> Self {
                    #name(text.into())
                }
            }
        },
        Special::Time | Special::MicroTime => {
            let with = if special == Special::Time {
                "::k8s_client_runtime::codec::time"
            } else {
                "::k8s_client_runtime::codec::micro_time"
            };
            quote! {
                #doc
                #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, ::serde::Serialize, ::serde::Deserialize)]
                pub struct #name(#[serde(with = #with)] ::k8s_client_runtime::codec::CompactTimestamp);

                impl #name {
                    /// The time `t`.
                    pub fn new(t: ::k8s_client_runtime::codec::Timestamp) -> Self {
                        #name(t.into())
                    }

                    /// The current time, as Go's `metav1.Now()`.
                    pub fn now() -> Self {
                        #name::new(::k8s_client_runtime::codec::Timestamp::now())
                    }

                    /// The time as a `jiff::Timestamp`, to compute with.
                    pub fn timestamp(self) -> ::k8s_client_runtime::codec::Timestamp {
                        self.0.timestamp()
                    }
                }

                impl ::std::convert::From<::k8s_client_runtime::codec::Timestamp> for #name {
                    fn from(t: ::k8s_client_runtime::codec::Timestamp) -> Self {
                        #name::new(t)
                    }
                }

                impl ::std::convert::From<#name> for ::k8s_client_runtime::codec::Timestamp {
                    fn from(t: #name) -> Self {
                        t.timestamp()
                    }
                }

                /// Go's zero time, written as `null`.
                impl ::std::default::Default for #name {
                    fn default() -> Self {
                        #name::new(::k8s_client_runtime::codec::zero_time())
                    }
                }
            }
        }
        Special::RawJsonText => quote! {
            #doc
            #[derive(Clone, Debug, Default, PartialEq, ::serde::Serialize, ::serde::Deserialize)]
            pub struct #name(pub ::k8s_client_runtime::codec::RawJson);
        },
        Special::JsonValue => quote! {
            #doc
            #[derive(Clone, Debug, Default, PartialEq, ::serde::Serialize, ::serde::Deserialize)]
            pub struct #name(pub ::serde_json::Value);
        },
        Special::SchemaOrArray => schema_or(quote!(Schemas(::std::vec::Vec<#props>))),
        Special::SchemaOrBool => schema_or(quote!(Bool(bool))),
        Special::SchemaOrStringArray => schema_or(quote!(Strings(::std::vec::Vec<::std::string::String>))),
    }
}
