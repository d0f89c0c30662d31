//! The hand-designed representations of [`Special`] schemas: int-or-string,
//! quantity, the two times, opaque and free JSON, and apiextensions' schema-or-X
//! unions, each with the wire format apimachinery gives it.

use proc_macro2::TokenStream;
use quote::quote;

use super::tokens::{doc_attr, ident};
use crate::ir::{Special, TypeDef};

/// The path of the JSONSchemaProps that the schema-or-X type `def` holds:
/// it lives beside it.
pub fn schema_props(def: &TypeDef) -> TokenStream {
    let modules = def.module.iter().map(|m| ident(m));
    quote!(crate #(:: #modules)* :: JSONSchemaProps)
}

/// The items of a special schema's type.
pub fn emit_special(def: &TypeDef, special: Special) -> TokenStream {
    let name = ident(&def.rust_name);
    let doc = doc_attr(&def.doc);
    let props = schema_props(def);
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
                const PROTOBUF_MESSAGE: bool = true;
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
