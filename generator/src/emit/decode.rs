//! `Deserialize` of a generated struct: a key → field-number `match` and a
//! field-number → read `match`, over the runtime's one visitor
//! (`k8s_client_runtime::codec::fields`). Structs, optional boxed structs
//! and lists of structs are read in place; lists exactly sized; `null` in a
//! plain list or map read as empty, as Go clients do; strings through the
//! runtime's table of recent strings, and maps of text (labels,
//! annotations, quantities) through its table of recent maps, to share
//! repeated ones.

use proc_macro2::{Literal, TokenStream};
use quote::quote;

use super::types::{ident, is_boxed, is_kind, is_plain, is_struct};
use crate::ir::{Api, Field, FieldType, Shape, Special, TypeDef};
use crate::lower::OBJECT_META;

/// The statement reading field `f` from `map` into `self`.
fn read_field(api: &Api, def: &TypeDef, f: &Field) -> TokenStream {
    let name = ident(&f.rust_name);
    let boxed = is_boxed(api, def, f);
    let seed = |seed: TokenStream, place: TokenStream| quote!(map.next_value_seed(::k8s_client_runtime::codec::fields::#seed(#place))?);
    let array_of_structs = matches!(&f.ty, FieldType::Array(inner) if is_struct(api, inner));
    if is_plain(def, f) {
        match &f.ty {
            ty if is_struct(api, ty) && boxed => seed(quote!(Struct), quote!(&mut *self.#name)),
            ty if is_struct(api, ty) => seed(quote!(Struct), quote!(&mut self.#name)),
            FieldType::Array(_) if !boxed && array_of_structs => seed(quote!(StructList), quote!(&mut self.#name)),
            FieldType::Array(_) if !boxed => seed(quote!(List), quote!(&mut self.#name)),
            ty if is_text_map(api, ty) && !boxed => seed(quote!(SharedMap), quote!(&mut self.#name)),
            FieldType::Map(_) => quote!(self.#name = ::k8s_client_runtime::codec::fields::or_default(map)?),
            FieldType::String if !boxed => seed(quote!(Text), quote!(&mut self.#name)),
            _ => quote!(self.#name = map.next_value()?),
        }
    } else {
        match &f.ty {
            // Skipped unread where the runtime decodes for a cache that
            // drops them (`codec::WithoutManagedFields`).
            FieldType::Array(_)
                if !boxed && array_of_structs && def.schema_name == OBJECT_META && f.json_name == "managedFields" =>
            {
                seed(quote!(ManagedFields), quote!(&mut self.#name))
            }
            ty if is_struct(api, ty) && boxed => seed(quote!(OptionBox), quote!(&mut self.#name)),
            ty if is_struct(api, ty) => seed(quote!(OptionStruct), quote!(&mut self.#name)),
            FieldType::Array(_) if !boxed && array_of_structs => {
                seed(quote!(OptionStructList), quote!(&mut self.#name))
            }
            FieldType::Array(_) if !boxed => seed(quote!(OptionList), quote!(&mut self.#name)),
            FieldType::String if !boxed => seed(quote!(OptionText), quote!(&mut self.#name)),
            ty if is_text_map(api, ty) && !boxed => seed(quote!(OptionSharedMap), quote!(&mut self.#name)),
            _ => quote!(self.#name = map.next_value()?),
        }
    }
}

/// Whether `ty` is a map of strings or quantities: those the runtime shares
/// between equal maps as it decodes them.
fn is_text_map(api: &Api, ty: &FieldType) -> bool {
    match ty {
        FieldType::Map(value) => match &**value {
            FieldType::String => true,
            FieldType::Ref(r) => {
                matches!(api.types.get(r.as_str()).map(|d| &d.shape), Some(Shape::Special(Special::Quantity)))
            }
            _ => false,
        },
        _ => false,
    }
}

/// `Deserialize` and `DecodeFields` for a struct with `fields`.
pub fn decode_impls(api: &Api, def: &TypeDef, fields: &[&Field]) -> TokenStream {
    let name = ident(&def.rust_name);
    let type_name = &def.rust_name;
    let declared: Vec<&Field> = fields.iter().copied().filter(|f| !f.flatten).collect();
    let numbers = (0..declared.len()).map(|i| Literal::u16_unsuffixed(i as u16));
    let keys = declared.iter().map(|f| &f.json_name);
    let reads = declared.iter().map(|f| read_field(api, def, f));
    let rest = fields.iter().find(|f| f.flatten);
    // A kind's `apiVersion` and `kind` are its type's, not data: skipped
    // even by a kind keeping undeclared fields.
    let type_meta = (rest.is_some() && is_kind(def)).then(|| quote!("apiVersion" | "kind" => u16::MAX,));
    let field_index = if declared.is_empty() && type_meta.is_none() {
        quote! {
            fn field_index(_key: &str) -> ::std::option::Option<u16> {
                ::std::option::Option::None
            }
        }
    } else {
        let numbers = numbers.clone();
        quote! {
            fn field_index(key: &str) -> ::std::option::Option<u16> {
                ::std::option::Option::Some(match key {
                    #(#keys => #numbers,)*
                    #type_meta
                    _ => return ::std::option::Option::None,
                })
            }
        }
    };
    let index_param = if declared.is_empty() { quote!(_index) } else { quote!(index) };
    let body = if declared.is_empty() {
        quote! {
            map.next_value::<::serde::de::IgnoredAny>()?;
        }
    } else {
        quote! {
            match index {
                #(#numbers => #reads,)*
                _ => {
                    map.next_value::<::serde::de::IgnoredAny>()?;
                }
            }
        }
    };
    let keeps_unknown = rest.is_some().then(|| {
        quote!(
            const KEEPS_UNKNOWN: bool = true;
        )
    });
    let unknown = rest.map(|f| {
        let rest = ident(&f.rust_name);
        quote! {
            fn decode_unknown<'de, A: ::serde::de::MapAccess<'de>>(&mut self, key: ::std::string::String, map: &mut A) -> ::std::result::Result<(), A::Error> {
                self.#rest.insert(key, map.next_value()?);
                ::std::result::Result::Ok(())
            }
        }
    });
    quote! {
        impl<'de> ::serde::Deserialize<'de> for #name {
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> ::std::result::Result<Self, D::Error> {
                ::k8s_client_runtime::codec::fields::deserialize(deserializer)
            }
        }

        impl ::k8s_client_runtime::codec::fields::DecodeFields for #name {
            const NAME: &'static str = #type_name;
            #keeps_unknown
            #field_index
            fn decode_field<'de, A: ::serde::de::MapAccess<'de>>(&mut self, #index_param: u16, map: &mut A) -> ::std::result::Result<(), A::Error> {
                #body
                ::std::result::Result::Ok(())
            }
            #unknown
        }
    }
}
