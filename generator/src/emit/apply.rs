//! The apply configuration of a struct (`<Type>Apply`, see
//! [`crate::plan::apply`]), in the struct's file behind the crate's `apply`
//! feature: the struct of optional fields, its codec (the same renderers
//! as the struct's), its builders and, for a kind, its constructor,
//! `metadata` builders and extraction from `managedFields`.
//!
//! Every method is `#[inline]`: compiled only into a program that calls
//! it. `extract` serializes the whole kind and decodes the configuration,
//! and compiling that for every kind in this crate took the core group's
//! release build with apply configurations from about 5 to 22 seconds.

use proc_macro2::TokenStream;
use quote::quote;

use super::tokens::{doc_attr, ident, rust_type, type_path, type_path_named};
use crate::ir::{Api, FieldType, ListType, PatchStrategy};
use crate::plan::{ApplyField, ApplyKind, ApplyPlan, ApplyType, Builder, Merge, StructPlan};

/// The crate feature the apply configurations are behind.
pub const FEATURE: &str = "apply";

/// The Rust type an apply configuration's field holds (without its `Option`).
fn apply_type(api: &Api, ty: &ApplyType) -> TokenStream {
    match ty {
        ApplyType::Leaf(t) => rust_type(api, t),
        ApplyType::Struct { schema, name } => type_path_named(api, schema, name),
        ApplyType::Declared(schema) => {
            let path = type_path(api, schema);
            quote!(<#path as ::k8s_client_runtime::apply::ApplyValue>::Apply)
        }
        ApplyType::List(inner) => {
            let inner = apply_type(api, inner);
            quote!(::k8s_client_runtime::ThinVec<#inner>)
        }
        ApplyType::Map(inner) => {
            let inner = apply_type(api, inner);
            quote!(::k8s_client_runtime::Map<#inner>)
        }
    }
}

/// `value` as the field holds it: in a `Box` where it is boxed.
fn held(boxed: bool, value: TokenStream) -> TokenStream {
    if boxed { quote!(::std::boxed::Box::new(#value)) } else { value }
}

/// Everything of `sp`'s apply configuration `ap`.
pub fn emit_apply(api: &Api, sp: &StructPlan, ap: &ApplyPlan, cfg: &TokenStream) -> TokenStream {
    let name = ident(&ap.name);
    let target = &sp.def.rust_name;
    let option = if sp.option_shadowed { quote!(::std::option::Option) } else { quote!(Option) };
    let fields = ap.fields.iter().map(|af| {
        let f = af.codec.field;
        let field = ident(&f.rust_name);
        let doc = doc_attr(&f.doc);
        let ty = apply_type(api, &af.ty);
        let ty = if af.codec.boxed { quote!(::std::boxed::Box<#ty>) } else { ty };
        quote! {
            #doc
            pub #field: #option<#ty>,
        }
    });
    let rest = ap.rest.as_ref().map(|(f, _)| {
        let field = ident(&f.rust_name);
        let doc = doc_attr(&f.doc);
        quote! {
            #doc
            pub #field: ::std::collections::BTreeMap<::std::string::String, ::serde_json::Value>,
        }
    });
    let type_meta = if ap.type_meta.is_some() { " It always sends its `apiVersion` and `kind`." } else { "" };
    let doc = super::text::doc(&format!(
        "The apply configuration of [`{target}`], for server-side apply: every field is optional and only the \
         fields set are sent, so an apply states exactly the fields its field manager owns.{type_meta}\n\n\
         Built with the `with_` methods, as client-go's `{target}ApplyConfiguration`."
    ));
    let codec = ap.codec();
    let decode = super::decode::decode_impl(&codec);
    let encode = super::encode::encode_impl(&codec);
    let codec_macro = super::encode::codec_macro(&ap.name);
    let builders = ap.fields.iter().map(|af| builder(api, af));
    let rest_builder = ap.rest.as_ref().map(|(f, method)| {
        let field = ident(&f.rust_name);
        let method = ident(method);
        quote! {
            /// Adds the entries to the fields the schema does not declare,
            /// replacing the values of keys already there.
            #[inline]
            pub fn #method(mut self, entries: impl ::std::iter::IntoIterator<Item = (impl ::std::convert::Into<::std::string::String>, ::serde_json::Value)>) -> Self {
                for (key, value) in entries {
                    self.#field.insert(key.into(), value);
                }
                self
            }
        }
    });
    let (constructor, delegates) = ap.kind.as_ref().map(|k| kind_items(api, ap, k)).unwrap_or_default();
    let extract = ap.kind.as_ref().map(|k| extract(sp, k));
    let trait_impl = ap.kind.as_ref().and_then(|k| k.extract).map(|_| {
        let target = ident(target);
        quote! {
            #cfg
            impl ::k8s_client_runtime::apply::ApplyConfiguration<#target> for #name {}
        }
    });
    // The kind merges as its apply configuration does: its schema, for
    // `Patch::strategic_diff` of two versions of the kind.
    let kind_merge_fields = ap.kind.as_ref().map(|_| {
        let target = ident(target);
        quote! {
            #cfg
            impl ::k8s_client_runtime::apply::MergeFields for #target {
                #[inline]
                fn merge_fields() -> &'static [(&'static str, ::k8s_client_runtime::apply::Merge)] {
                    <#name as ::k8s_client_runtime::apply::MergeFields>::merge_fields()
                }
            }
        }
    });
    let target_ident = ident(target);
    // A struct replaced whole merges atomically wherever it is held.
    let value_merge = if sp.def.map_type == Some(crate::ir::MapType::Atomic) {
        quote!(::k8s_client_runtime::apply::Merge::Atomic)
    } else {
        quote!(::k8s_client_runtime::apply::Merge::Struct(<#name as ::k8s_client_runtime::apply::MergeFields>::merge_fields))
    };
    let merge_fields = ap.merge_fields.iter().map(|(json, m)| {
        let m = merge(api, m);
        quote!((#json, #m),)
    });
    quote! {
        #doc
        #cfg
        #[derive(Clone, Debug, Default, PartialEq)]
        pub struct #name {
            #(#fields)*
            #rest
        }
        #cfg
        #decode
        #cfg
        #encode
        #cfg
        #codec_macro
        #cfg
        impl #name {
            #constructor
            #(#builders)*
            #rest_builder
            #delegates
            #extract
        }
        #trait_impl
        #kind_merge_fields
        #cfg
        impl ::k8s_client_runtime::apply::MergeFields for #name {
            #[inline]
            fn merge_fields() -> &'static [(&'static str, ::k8s_client_runtime::apply::Merge)] {
                const FIELDS: &[(&str, ::k8s_client_runtime::apply::Merge)] = &[#(#merge_fields)*];
                FIELDS
            }
        }
        #cfg
        impl ::k8s_client_runtime::apply::ApplyValue for #target_ident {
            type Apply = #name;
            const MERGE: ::k8s_client_runtime::apply::Merge = #value_merge;
        }
    }
}

/// The runtime's `Merge` value of `m`; a struct's names its apply
/// configuration's field list, so nested structs cost no table here.
fn merge(api: &Api, m: &Merge) -> TokenStream {
    let runtime = quote!(::k8s_client_runtime::apply::Merge);
    match m {
        Merge::Atomic => quote!(#runtime::Atomic),
        Merge::Deduced => quote!(#runtime::Deduced),
        Merge::Struct { schema, name } => {
            let path = type_path_named(api, schema, name);
            quote!(#runtime::Struct(<#path as ::k8s_client_runtime::apply::MergeFields>::merge_fields))
        }
        Merge::Declared(schema) => {
            let path = type_path(api, schema);
            quote!(<#path as ::k8s_client_runtime::apply::ApplyValue>::MERGE)
        }
        Merge::Map(inner) => {
            let inner = merge(api, inner);
            quote!(#runtime::Map(&#inner))
        }
        Merge::List { apply, patch, element } => {
            let element = merge(api, element);
            let apply = match apply {
                ListType::Atomic => quote!(::k8s_client_runtime::apply::ListType::Atomic),
                ListType::Set => quote!(::k8s_client_runtime::apply::ListType::Set),
                ListType::Map(keys) => quote!(::k8s_client_runtime::apply::ListType::Map(&[#(#keys),*])),
            };
            let patch = match patch {
                PatchStrategy::Replace => quote!(::k8s_client_runtime::apply::PatchStrategy::Replace),
                PatchStrategy::Merge { key: None } => quote!(::k8s_client_runtime::apply::PatchStrategy::MergeByValue),
                PatchStrategy::Merge { key: Some(key) } => {
                    quote!(::k8s_client_runtime::apply::PatchStrategy::MergeByKey(#key))
                }
            };
            quote!(#runtime::List(&::k8s_client_runtime::apply::ListMerge {
                apply: #apply,
                patch: #patch,
                element: #element,
            }))
        }
        Merge::RetainKeys(inner) => {
            let inner = merge(api, inner);
            quote!(#runtime::RetainKeys(&#inner))
        }
    }
}

/// The parameter of a field's builder, and its name (a kind's `metadata`
/// builders take what `ObjectMetaApply`'s take, and pass it on).
fn builder_parts(api: &Api, af: &ApplyField) -> (TokenStream, TokenStream) {
    let into = |t: &TokenStream| quote!(impl ::std::convert::Into<#t>);
    let element = |ty: &ApplyType| match ty {
        ApplyType::Leaf(t) => into(&rust_type(api, t)),
        other => apply_type(api, other),
    };
    match (af.builder, &af.ty) {
        (Builder::Set, ApplyType::Leaf(t)) => {
            let t = into(&rust_type(api, t));
            (quote!(value: #t), quote!(value))
        }
        (Builder::Set, ty) => {
            let t = apply_type(api, ty);
            (quote!(value: #t), quote!(value))
        }
        (Builder::Append, ty) => {
            let item = match ty {
                ApplyType::List(inner) => element(inner),
                ApplyType::Leaf(FieldType::Array(inner)) => into(&rust_type(api, inner)),
                other => element(other),
            };
            (quote!(values: impl ::std::iter::IntoIterator<Item = #item>), quote!(values))
        }
        (Builder::Merge, ty) => {
            let value = match ty {
                ApplyType::Map(inner) => element(inner),
                ApplyType::Leaf(FieldType::Map(inner)) => into(&rust_type(api, inner)),
                other => element(other),
            };
            let key = quote!(impl ::std::convert::Into<::k8s_client_runtime::LeanString>);
            (quote!(entries: impl ::std::iter::IntoIterator<Item = (#key, #value)>), quote!(entries))
        }
    }
}

/// Whether `ty`'s values are passed as `impl Into<_>` (leaves) and so need
/// `.into()`.
fn takes_into(ty: &ApplyType) -> bool {
    match ty {
        ApplyType::Leaf(_) => true,
        ApplyType::List(inner) | ApplyType::Map(inner) => matches!(**inner, ApplyType::Leaf(_)),
        ApplyType::Struct { .. } | ApplyType::Declared(_) => false,
    }
}

/// What a builder of the field at `path` does.
fn builder_doc(builder: Builder, path: &str) -> TokenStream {
    super::text::doc(&match builder {
        Builder::Set => format!("Sets `{path}`, replacing an earlier value."),
        Builder::Append => format!("Appends the values to `{path}` (a later call appends more)."),
        Builder::Merge => format!("Adds the entries to `{path}`, replacing the values of keys already there."),
    })
}

fn builder(api: &Api, af: &ApplyField) -> TokenStream {
    let f = af.codec.field;
    let field = ident(&f.rust_name);
    let method = ident(&af.method);
    let json = &f.json_name;
    let (param, _) = builder_parts(api, af);
    let convert = if takes_into(&af.ty) { quote!(.into()) } else { quote!() };
    let body = match af.builder {
        Builder::Set => {
            let value = held(af.codec.boxed, quote!(value #convert));
            quote!(self.#field = ::std::option::Option::Some(#value);)
        }
        Builder::Append => quote! {
            for value in values {
                self.#field.get_or_insert_with(::std::default::Default::default).push(value #convert);
            }
        },
        Builder::Merge => quote! {
            for (key, value) in entries {
                self.#field.get_or_insert_with(::std::default::Default::default).insert(key, value #convert);
            }
        },
    };
    let doc = builder_doc(af.builder, json);
    quote! {
        #doc
        #[inline]
        pub fn #method(mut self, #param) -> Self {
            #body
            self
        }
    }
}

/// A kind's constructor and `metadata` builders.
fn kind_items(api: &Api, ap: &ApplyPlan, k: &ApplyKind) -> (TokenStream, TokenStream) {
    let (mut constructor, mut delegates) = (TokenStream::new(), TokenStream::new());
    let Some(metadata) = k.metadata.map(|i| &ap.fields[i]) else {
        return (constructor, delegates);
    };
    let meta_field = ident(&metadata.codec.field.rust_name);
    let meta_type = apply_type(api, &metadata.ty);
    let boxed = metadata.codec.boxed;
    if let Some(c) = &k.constructor {
        let with_name = ident(&c.with_name);
        let string = quote!(impl ::std::convert::Into<::k8s_client_runtime::LeanString>);
        let (params, namespace, doc) = match &c.with_namespace {
            Some(with_namespace) => {
                let with_namespace = ident(with_namespace);
                (
                    quote!(name: #string, namespace: #string),
                    quote!(.#with_namespace(namespace)),
                    "The apply configuration of the object `name` in `namespace` (client-go's \
                     `<Kind>(name, namespace)`): its `metadata` names it, nothing else is set.",
                )
            }
            None => (
                quote!(name: #string),
                quote!(),
                "The apply configuration of the object `name` (client-go's `<Kind>(name)`): its `metadata` \
                 names it, nothing else is set.",
            ),
        };
        let doc = super::text::doc(doc);
        let meta = held(boxed, quote!(<#meta_type>::default().#with_name(name) #namespace));
        constructor.extend(quote! {
            #doc
            #[inline]
            pub fn new(#params) -> Self {
                Self {
                    #meta_field: ::std::option::Option::Some(#meta),
                    ..::std::default::Default::default()
                }
            }
        });
    }
    for d in &k.delegates {
        let method = ident(&d.method);
        let (param, arg) = builder_parts(api, d);
        let doc = builder_doc(d.builder, &format!("metadata.{}", d.codec.field.json_name));
        let taken = if boxed {
            quote!(self.#meta_field.take().map(|meta| *meta).unwrap_or_default())
        } else {
            quote!(self.#meta_field.take().unwrap_or_default())
        };
        let updated = held(boxed, quote!(#taken.#method(#arg)));
        delegates.extend(quote! {
            #doc
            #[inline]
            pub fn #method(mut self, #param) -> Self {
                self.#meta_field = ::std::option::Option::Some(#updated);
                self
            }
        });
    }
    (constructor, delegates)
}

/// `extract` (and `extract_status`) of a kind whose resource serves `patch`.
fn extract(sp: &StructPlan, k: &ApplyKind) -> TokenStream {
    let Some(e) = k.extract else { return TokenStream::new() };
    let target = ident(&sp.def.rust_name);
    let doc = |what: &str| {
        super::text::doc(&format!(
            "The apply configuration holding exactly the fields{what} that `field_manager` owns through \
             Apply, read from the object's `managedFields` (client-go's `Extract<Kind>`): change it and apply \
             it again to update those fields without taking others.\n\n\
             The object must carry its `managedFields`: one a client `get` returned, not one from an \
             informer's cache, which drops them."
        ))
    };
    let main = doc("");
    let status = e.status.then(|| {
        let doc = doc(" of the `status` subresource");
        quote! {
            #doc
            #[inline]
            pub fn extract_status(object: &#target, field_manager: &str) -> ::std::result::Result<Self, ::k8s_client_runtime::apply::ExtractError> {
                ::k8s_client_runtime::apply::extract(object, field_manager, "status")
            }
        }
    });
    quote! {
        #main
        #[inline]
        pub fn extract(object: &#target, field_manager: &str) -> ::std::result::Result<Self, ::k8s_client_runtime::apply::ExtractError> {
            ::k8s_client_runtime::apply::extract(object, field_manager, "")
        }
        #status
    }
}
