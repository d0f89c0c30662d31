//! One Rust type per schema: structs for object schemas (their fields as
//! the plan decides them: [`crate::plan::fields`]), string enums, and the
//! hand-designed representations of special schemas (module `special`).

use proc_macro2::{Ident, TokenStream};
use quote::quote;

use super::tokens::{doc_attr, ident, rust_type, type_path};
use crate::ir::{Api, CONDITION, LABEL_SELECTOR, OBJECT_META, OWNER_REFERENCE, Shape, Special, TypeDef, Variant};
use crate::plan::{FieldPlan, KindPlan, Plan, StructPlan};

/// The declaration of a field: its Rust type as the plan holds it.
fn field_tokens(api: &Api, sp: &StructPlan, fp: &FieldPlan) -> TokenStream {
    let f = fp.field;
    let name = ident(&f.rust_name);
    let doc = doc_attr(&f.doc);
    let mut ty = rust_type(api, &f.ty);
    if fp.boxed {
        ty = quote!(::std::boxed::Box<#ty>);
    }
    if !fp.plain {
        // `Option` from the prelude, unless a schema of this module takes the name.
        let option = if sp.option_shadowed { quote!(::std::option::Option) } else { quote!(Option) };
        ty = quote!(#option<#ty>);
    }
    quote! {
        #doc
        pub #name: #ty,
    }
}

/// The field holding undeclared keys: any keys, any values, rare enough for
/// a tree.
fn rest_tokens(sp: &StructPlan) -> Option<TokenStream> {
    let f = sp.rest?;
    let name = ident(&f.rust_name);
    let doc = doc_attr(&f.doc);
    Some(quote! {
        #doc
        pub #name: ::std::collections::BTreeMap<::std::string::String, ::serde_json::Value>,
    })
}

/// The items of one type's file.
pub fn emit_type(api: &Api, plan: &Plan, def: &TypeDef) -> TokenStream {
    emit_type_with(api, plan, def, &Gates::crate_features())
}

/// What the items of a type are compiled under.
#[derive(Debug, Clone)]
pub struct Gates {
    /// The attribute put on apply configurations (and on what names them);
    /// `None`: they are left out.
    pub apply: Option<TokenStream>,
}

impl Gates {
    /// A generated crate's: apply configurations behind its `apply` feature.
    pub fn crate_features() -> Gates {
        let feature = super::apply::FEATURE;
        Gates { apply: Some(quote!(#[cfg(feature = #feature)])) }
    }
}

/// [`emit_type`] under the given gates: what a derive, expanding into a
/// crate without the generated crate's features, decides itself.
pub fn emit_type_with(api: &Api, plan: &Plan, def: &TypeDef, gates: &Gates) -> TokenStream {
    let mut out = match &def.shape {
        Shape::Special(s) => {
            let mut out = super::special::emit_special(def, *s);
            out.extend(super::protobuf::special_proto_impl(api, def, *s));
            out
        }
        Shape::Struct(_) => match plan.structs.get(def.schema_name.as_str()) {
            Some(sp) => emit_struct(api, sp, plan.kinds.get(def.schema_name.as_str()), gates),
            None => TokenStream::new(),
        },
        Shape::Enum { variants, .. } if def.declared_at.is_some() => declared_enum_impls(def, variants),
        Shape::Enum { variants, fallback } => emit_enum(def, variants, fallback),
        // Declared by the user, with whatever it implements.
        Shape::Declared => TokenStream::new(),
    };
    if plan.schemas.contains(def.schema_name.as_str()) {
        out.extend(super::schema::schema_impl(api, def));
    }
    if let Some(gate) = &gates.apply {
        out.extend(scalar_apply_value(def, gate));
    }
    out
}

/// A type that is its own apply configuration (an enum, a special type):
/// `ApplyValue` with `Apply = Self`.
fn scalar_apply_value(def: &TypeDef, gate: &TokenStream) -> Option<TokenStream> {
    let merge = match &def.shape {
        Shape::Enum { .. } => quote!(Atomic),
        Shape::Special(Special::JsonValue | Special::RawJsonText) => quote!(Deduced),
        Shape::Special(Special::SchemaOrArray | Special::SchemaOrBool | Special::SchemaOrStringArray) => {
            quote!(Deduced)
        }
        Shape::Special(_) => quote!(Atomic),
        Shape::Struct(_) | Shape::Declared => return None,
    };
    let name = ident(&def.rust_name);
    Some(quote! {
        #gate
        impl ::k8s_client_runtime::apply::ApplyValue for #name {
            type Apply = #name;
            const MERGE: ::k8s_client_runtime::apply::Merge = ::k8s_client_runtime::apply::Merge::#merge;
        }
    })
}

/// A string enum the user wrote (unit variants): read and written as its
/// values, with no fallback (a value it does not list is an error).
fn declared_enum_impls(def: &TypeDef, variants: &[Variant]) -> TokenStream {
    let name = ident(&def.rust_name);
    let type_name = &def.rust_name;
    let idents: Vec<Ident> = variants.iter().map(|v| ident(&v.rust_name)).collect();
    let wires: Vec<&str> = variants.iter().map(|v| v.wire.as_str()).collect();
    quote! {
        impl #name {
            /// The value on the wire.
            pub fn as_str(&self) -> &'static str {
                match self {
                    #( #name::#idents => #wires, )*
                }
            }
        }

        impl ::serde::Serialize for #name {
            fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> ::std::result::Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> ::serde::Deserialize<'de> for #name {
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> ::std::result::Result<Self, D::Error> {
                let value = <::std::borrow::Cow<'de, str> as ::serde::Deserialize>::deserialize(deserializer)?;
                match &*value {
                    #( #wires => ::std::result::Result::Ok(#name::#idents), )*
                    other => ::std::result::Result::Err(<D::Error as ::serde::de::Error>::custom(::std::format_args!(
                        "unknown value {:?} of {}, expected one of {}", other, #type_name, [#(#wires),*].join(", ")
                    ))),
                }
            }
        }
    }
}

/// A struct, its decoding ([`super::decode`]), and for a kind its encoding
/// with and without TypeMeta; `resource` when it implements the runtime's
/// `Resource`.
fn emit_struct(api: &Api, sp: &StructPlan, resource: Option<&KindPlan>, gates: &Gates) -> TokenStream {
    let def = sp.def;
    let name = ident(&def.rust_name);
    let doc = doc_attr(&def.doc);
    let field_defs = sp.fields.iter().map(|fp| field_tokens(api, sp, fp));
    let rest_def = rest_tokens(sp);
    // A struct the user wrote gets its impls only.
    let mut out = if def.declared_at.is_some() {
        TokenStream::new()
    } else {
        quote! {
            #doc
            #[derive(Clone, Debug, Default, PartialEq)]
            pub struct #name {
                #(#field_defs)*
                #rest_def
            }
        }
    };
    out.extend(super::decode::decode_impl(&sp.codec()));
    out.extend(super::encode::encode_impl(&sp.codec()));
    out.extend(super::encode::codec_macro(&def.rust_name));
    out.extend(super::protobuf::proto_impl(api, sp));
    if let Some(gvk) = sp.type_meta {
        // Served kinds have these constants through the `Resource` trait.
        if resource.is_none() {
            let (api_version, kind_name) = (gvk.api_version(), &gvk.kind);
            out.extend(quote! {
                impl #name {
                    /// `apiVersion` of this kind.
                    pub const API_VERSION: &'static str = #api_version;
                    /// `kind` of this kind.
                    pub const KIND: &'static str = #kind_name;
                }
            });
        }
        if let Some(k) = resource {
            out.extend(resource_impls(api, def, k));
        }
    }
    if let (Some(apply), Some(gate)) = (&sp.apply, &gates.apply) {
        out.extend(super::apply::emit_apply(api, sp, apply, gate));
    }
    if def.schema_name == OBJECT_META {
        out.extend(object_meta_impl(api, def));
    }
    if def.schema_name == OWNER_REFERENCE {
        out.extend(owner_reference_impls(sp.apply.is_some()));
    }
    if def.schema_name == CONDITION {
        out.extend(condition_impl());
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
    let scope = if r.namespaced { quote!(Namespaced) } else { quote!(Cluster) };
    // The metadata type goes in by a name of its own: the formatter prints
    // a `crate::` path inside a macro call as `crate ::`. No generated
    // type name starts with `_`.
    let (meta_use, meta) = if k.object {
        let path = type_path(api, OBJECT_META);
        (quote!(use #path as __ObjectMeta;), quote!(, __ObjectMeta))
    } else {
        (quote!(), quote!())
    };
    // Built-in kinds with a message speak protobuf under the crate's
    // feature; custom resources are JSON only.
    let protobuf = api.protobuf.as_ref().is_some_and(|p| p.types.contains_key(&def.schema_name)).then(|| {
        let feature = super::protobuf::FEATURE;
        quote!(; protobuf if feature = #feature)
    });
    // In a block of its own, so that the name stays there: a module of a
    // crate deriving several kinds has several.
    if k.object {
        quote! {
            const _: () = {
                #meta_use
                ::k8s_client_runtime::impl_resource!(#name, #group, #version, #api_version, #kind, #plural, #scope, #list_kind #meta #protobuf);
            };
        }
    } else {
        quote! {
            ::k8s_client_runtime::impl_resource!(#name, #group, #version, #api_version, #kind, #plural, #scope, #list_kind #protobuf);
        }
    }
}

fn object_meta_impl(api: &Api, def: &TypeDef) -> TokenStream {
    // A trimmed-down schema (a test fixture) may lack these fields: an
    // object of it has no owners and no finalizers.
    let has = |json: &str| matches!(&def.shape, Shape::Struct(fields) if fields.iter().any(|f| f.json_name == json));
    let owners = if has("ownerReferences") && api.types.contains_key(OWNER_REFERENCE) {
        let owner_reference = type_path(api, OWNER_REFERENCE);
        quote! {
            fn owner_references(&self) -> ::std::borrow::Cow<'_, [::k8s_client_runtime::object::OwnerReference]> {
                ::std::borrow::Cow::Owned(self.owner_references.iter().flatten().map(::std::convert::Into::into).collect())
            }
            fn set_owner_references(&mut self, references: ::std::vec::Vec<::k8s_client_runtime::object::OwnerReference>) {
                self.owner_references = (!references.is_empty())
                    .then(|| references.into_iter().map(#owner_reference::from).collect());
            }
        }
    } else {
        quote! {
            fn owner_references(&self) -> ::std::borrow::Cow<'_, [::k8s_client_runtime::object::OwnerReference]> {
                ::std::borrow::Cow::Borrowed(&[])
            }
            fn set_owner_references(&mut self, _references: ::std::vec::Vec<::k8s_client_runtime::object::OwnerReference>) {}
        }
    };
    let finalizers = if has("finalizers") {
        quote! {
            fn finalizers(&self) -> ::std::vec::Vec<&str> {
                self.finalizers.iter().flatten().map(|f| f.as_str()).collect()
            }
        }
    } else {
        quote! {
            fn finalizers(&self) -> ::std::vec::Vec<&str> { ::std::vec::Vec::new() }
        }
    };
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
            fn set_name(&mut self, name: ::std::option::Option<::k8s_client_runtime::LeanString>) { self.name = name; }
            fn set_namespace(&mut self, namespace: ::std::option::Option<::k8s_client_runtime::LeanString>) {
                self.namespace = namespace;
            }
            fn set_resource_version(&mut self, resource_version: ::std::option::Option<::k8s_client_runtime::LeanString>) {
                self.resource_version = resource_version;
            }
            fn clear_managed_fields(&mut self) { self.managed_fields = ::std::option::Option::None; }
            #owners
            #finalizers
        }
    }
}

/// Conversions between the runtime's owner reference, which generic code
/// (the controller runtime) makes and reads, and the generated one.
fn owner_reference_impls(apply: bool) -> TokenStream {
    let apply = apply.then(|| {
        let feature = super::apply::FEATURE;
        quote! {
            #[cfg(feature = #feature)]
            impl ::std::convert::From<::k8s_client_runtime::object::OwnerReference> for OwnerReferenceApply {
                fn from(r: ::k8s_client_runtime::object::OwnerReference) -> Self {
                    OwnerReferenceApply {
                        api_version: ::std::option::Option::Some(r.api_version),
                        block_owner_deletion: r.block_owner_deletion,
                        controller: r.controller,
                        kind: ::std::option::Option::Some(r.kind),
                        name: ::std::option::Option::Some(r.name),
                        uid: ::std::option::Option::Some(r.uid),
                    }
                }
            }
        }
    });
    quote! {
        impl ::std::convert::From<::k8s_client_runtime::object::OwnerReference> for OwnerReference {
            fn from(r: ::k8s_client_runtime::object::OwnerReference) -> Self {
                OwnerReference {
                    api_version: r.api_version,
                    block_owner_deletion: r.block_owner_deletion,
                    controller: r.controller,
                    kind: r.kind,
                    name: r.name,
                    uid: r.uid,
                }
            }
        }
        impl ::std::convert::From<&OwnerReference> for ::k8s_client_runtime::object::OwnerReference {
            fn from(r: &OwnerReference) -> Self {
                ::k8s_client_runtime::object::OwnerReference {
                    api_version: r.api_version.clone(),
                    kind: r.kind.clone(),
                    name: r.name.clone(),
                    uid: r.uid.clone(),
                    controller: r.controller,
                    block_owner_deletion: r.block_owner_deletion,
                }
            }
        }
        #apply
    }
}

/// `metav1.Condition` for the runtime's condition helpers
/// (`set_status_condition`).
fn condition_impl() -> TokenStream {
    quote! {
        impl ::k8s_client_runtime::object::StatusCondition for Condition {
            fn condition_type(&self) -> &str { &self.type_ }
            fn status(&self) -> &str { &self.status }
            fn last_transition_time(&self) -> ::std::option::Option<::k8s_client_runtime::codec::Timestamp> {
                let t = self.last_transition_time.timestamp();
                (t != ::k8s_client_runtime::codec::zero_time()).then_some(t)
            }
            fn set_last_transition_time(&mut self, time: ::k8s_client_runtime::codec::Timestamp) {
                self.last_transition_time = time.into();
            }
        }
    }
}
