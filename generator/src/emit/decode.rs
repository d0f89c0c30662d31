//! `Deserialize` of a generated struct: a key → field-number `match` and a
//! field-number → read `match`, over the runtime's one visitor
//! (`k8s_client_runtime::codec::fields`). Structs, optional boxed structs
//! and lists of structs are read in place; lists exactly sized; `null` in a
//! plain list or map read as empty, as Go clients do; strings through the
//! runtime's table of recent strings, and maps of text (labels,
//! annotations, quantities) through its table of recent maps, to share
//! repeated ones. The decode's options (`DecodeOptions`: whether
//! `managedFields` are skipped) go to every seed of a struct-valued field,
//! so they reach every nested struct.

use proc_macro2::{Literal, TokenStream};
use quote::quote;

use super::tokens::ident;
use crate::plan::{Codec, FieldPlan, Seed};

/// The statement reading field `fp` from `map` into `self`, with the seed
/// the plan chose.
fn read_field(fp: &FieldPlan) -> TokenStream {
    let name = ident(&fp.field.rust_name);
    let place = if fp.boxed && fp.seed == Seed::Struct { quote!(&mut *self.#name) } else { quote!(&mut self.#name) };
    let seed = match fp.seed {
        Seed::Struct => quote!(Struct),
        Seed::StructList => quote!(StructList),
        Seed::List => quote!(List),
        Seed::SharedMap => quote!(SharedMap),
        Seed::Text => quote!(Text),
        Seed::OptionBox => quote!(OptionBox),
        Seed::OptionStruct => quote!(OptionStruct),
        Seed::OptionStructList => quote!(OptionStructList),
        Seed::OptionList => quote!(OptionList),
        Seed::OptionText => quote!(OptionText),
        Seed::OptionSharedMap => quote!(OptionSharedMap),
        Seed::ManagedFields => quote!(ManagedFields),
        Seed::OrDefault => return quote!(self.#name = ::k8s_client_runtime::codec::fields::or_default(map)?),
        Seed::Value => return quote!(self.#name = map.next_value()?),
    };
    if fp.seed.takes_options() {
        quote!(map.next_value_seed(::k8s_client_runtime::codec::fields::#seed(#place, options))?)
    } else {
        quote!(map.next_value_seed(::k8s_client_runtime::codec::fields::#seed(#place))?)
    }
}

/// `DecodeFields` for a struct or apply configuration (its `Deserialize`
/// comes with its `Serialize` from the runtime's `impl_codec!`).
pub fn decode_impl(sp: &Codec) -> TokenStream {
    let name = ident(sp.name);
    let type_name = sp.name;
    let declared = &sp.fields;
    let numbers = (0..declared.len()).map(|i| Literal::u16_unsuffixed(i as u16));
    let keys = declared.iter().map(|fp| &fp.field.json_name);
    let reads = declared.iter().map(|fp| read_field(fp));
    let rest = sp.rest;
    // A kind's `apiVersion` and `kind` are its type's, not data: skipped
    // even by a kind keeping undeclared fields.
    let type_meta = (rest.is_some() && sp.type_meta.is_some()).then(|| quote!("apiVersion" | "kind" => u16::MAX,));
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
    let options_param =
        if declared.iter().any(|fp| fp.seed.takes_options()) { quote!(options) } else { quote!(_options) };
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
        impl ::k8s_client_runtime::codec::fields::DecodeFields for #name {
            const NAME: &'static str = #type_name;
            #keeps_unknown
            #field_index
            fn decode_field<'de, A: ::serde::de::MapAccess<'de>>(&mut self, #index_param: u16, map: &mut A, #options_param: ::k8s_client_runtime::codec::DecodeOptions) -> ::std::result::Result<(), A::Error> {
                #body
                ::std::result::Result::Ok(())
            }
            #unknown
        }
    }
}
