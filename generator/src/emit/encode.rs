//! `EncodeFields` of a generated struct: the encoding twin of
//! [`super::decode`], one statement per field as the plan holds it (the
//! runtime's `k8s_client_runtime::codec::fields` writes the object around
//! them). A plain field is always written; an optional one only when set,
//! or as `null` when the schema requires it but allows null; a field
//! holding kinds writes them without their TypeMeta.

use proc_macro2::TokenStream;
use quote::quote;

use super::tokens::ident;
use crate::plan::{Codec, Embedding, FieldPlan};

/// The statement writing field `fp` to `out`.
fn write_field(fp: &FieldPlan) -> TokenStream {
    let name = ident(&fp.field.rust_name);
    let json = &fp.field.json_name;
    let embedded = |value: TokenStream, boxed: bool| match fp.embedding {
        None => value,
        Some(Embedding::One) if boxed => quote!(&::k8s_client_runtime::codec::EmbeddedRef(&**#value)),
        Some(Embedding::One) => quote!(&::k8s_client_runtime::codec::EmbeddedRef(#value)),
        Some(Embedding::Many) => quote!(&::k8s_client_runtime::codec::EmbeddedSeq(#value)),
    };
    if fp.plain {
        let value = embedded(quote!(&self.#name), fp.boxed);
        quote!(out.field(#json, #value)?;)
    } else if fp.writes_null {
        // `None` is written as `null`; kinds are never required and nullable.
        quote!(out.field(#json, &self.#name)?;)
    } else {
        let value = embedded(quote!(value), fp.boxed);
        quote! {
            if let ::std::option::Option::Some(value) = &self.#name {
                out.field(#json, #value)?;
            }
        }
    }
}

/// `EncodeFields` for a struct or apply configuration (its `Serialize` and
/// `Deserialize` are the runtime's `impl_codec!`: [`codec_macro`]).
pub fn encode_impl(sp: &Codec) -> TokenStream {
    let name = ident(sp.name);
    let writes = sp.fields.iter().map(|fp| write_field(fp));
    let rest = sp.rest.map(|f| {
        let rest = ident(&f.rust_name);
        quote! {
            for (key, value) in &self.#rest {
                out.entry(key, value)?;
            }
        }
    });
    let always = sp.fields.iter().filter(|fp| fp.plain || fp.writes_null).count();
    let when_set = sp.fields.iter().filter(|fp| !fp.plain && !fp.writes_null).map(|fp| {
        let n = ident(&fp.field.rust_name);
        quote!(+ usize::from(self.#n.is_some()))
    });
    let type_meta = sp.type_meta.map(|gvk| {
        let (api_version, kind) = (gvk.api_version(), &gvk.kind);
        quote! {
            const TYPE_META: ::std::option::Option<(&'static str, &'static str)> =
                ::std::option::Option::Some((#api_version, #kind));
        }
    });
    let out_param = if sp.fields.is_empty() && sp.rest.is_none() { quote!(_out) } else { quote!(out) };
    quote! {
        impl ::k8s_client_runtime::codec::fields::EncodeFields for #name {
            #type_meta
            fn field_count(&self) -> usize {
                #always #(#when_set)*
            }
            fn encode_fields<W: ::k8s_client_runtime::codec::fields::FieldWriter>(&self, #out_param: &mut W) -> ::std::result::Result<(), W::Error> {
                #(#writes)*
                #rest
                ::std::result::Result::Ok(())
            }
        }
    }
}

/// `Serialize` and `Deserialize` of a type with `EncodeFields` and
/// `DecodeFields`.
pub fn codec_macro(name: &str) -> TokenStream {
    let name = ident(name);
    quote!(::k8s_client_runtime::impl_codec!(#name);)
}
