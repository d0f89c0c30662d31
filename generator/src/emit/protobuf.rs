//! The protobuf codec of a generated struct: `DecodeProto` (a field-number
//! `match` reading each field in place through the runtime's helpers of
//! `k8s_client_runtime::protobuf::decode`) and `EncodeProto` (each field in
//! ascending number order through `protobuf::encode`), from the numbers and
//! Go facts the plan carries ([`crate::ir::proto::FieldEncoding`]). Only
//! structs with a message get one (built-in types from specs with
//! `proto/`), all under the crate's `protobuf` feature.
//!
//! Which helper renders a field is decided here, once, from three facts:
//! how the struct holds it (plain, `Option`, boxed), its cardinality, and
//! whether the Go field is a pointer. A Go value field is always on the
//! wire, its zero value included: it encodes `None` as that zero value, and
//! decodes a zero value back to `None` where JSON leaves it out (see
//! [`decodes_zero_as_none`]), so that both wire formats give the same
//! struct.

use std::collections::BTreeMap;

use proc_macro2::{Literal, TokenStream};
use quote::quote;

use super::tokens::ident;
use crate::ir::proto::{Cardinality, FieldEncoding, InlineStep};
use crate::ir::{Api, FieldType, Shape, Special, TypeDef};
use crate::plan::{FieldPlan, Seed, StructPlan};

/// The feature gating every protobuf item of a generated crate.
pub const FEATURE: &str = "protobuf";

/// The short name of a message (`Pod` of `k8s.io.api.core.v1.Pod`).
fn short(message: &str) -> &str {
    message.rsplit('.').next().unwrap_or(message)
}

/// The special schema a field's single value is, if any.
fn special_of(api: &Api, ty: &FieldType) -> Option<Special> {
    match &api.types.get(ty.direct_ref()?)?.shape {
        Shape::Special(s) => Some(*s),
        _ => None,
    }
}

/// Whether a present zero value decodes to `None`: a Go value field
/// written on the wire even when zero, which JSON leaves out (scalars and
/// bytes with `omitempty`) or writes as `null` (a zero `metav1.Time`).
fn decodes_zero_as_none(api: &Api, fp: &FieldPlan, enc: &FieldEncoding) -> bool {
    if fp.plain || enc.go_pointer || enc.cardinality != Cardinality::Single {
        return false;
    }
    match &fp.field.ty {
        FieldType::String | FieldType::Bool | FieldType::I32 | FieldType::I64 | FieldType::F64 | FieldType::Bytes => {
            enc.omit_empty
        }
        ty => matches!(special_of(api, ty), Some(Special::Time | Special::MicroTime)),
    }
}

/// The statement reading one occurrence of field `fp` into `self`.
fn read_field(api: &Api, fp: &FieldPlan, enc: &FieldEncoding) -> TokenStream {
    let name = ident(&fp.field.rust_name);
    let decode = quote!(::k8s_client_runtime::protobuf::decode);
    let args = quote!(wire_type, reader, options);
    match enc.cardinality {
        Cardinality::Single if fp.plain && fp.boxed => quote!(#decode::value(&mut *self.#name, #args)),
        Cardinality::Single if fp.plain => quote!(#decode::value(&mut self.#name, #args)),
        Cardinality::Single if fp.boxed => quote!(#decode::option_box(&mut self.#name, #args)),
        Cardinality::Single if decodes_zero_as_none(api, fp, enc) => {
            quote!(#decode::option_unless_default(&mut self.#name, #args))
        }
        Cardinality::Single => quote!(#decode::option(&mut self.#name, #args)),
        Cardinality::Repeated { .. } if fp.seed == Seed::ManagedFields => {
            quote!(#decode::managed_fields(&mut self.#name, #args))
        }
        Cardinality::Repeated { .. } if fp.plain => quote!(#decode::repeated(&mut self.#name, #args)),
        Cardinality::Repeated { .. } => quote!(#decode::option_repeated(&mut self.#name, #args)),
        Cardinality::Map { .. } if fp.seed == Seed::SharedMap => {
            quote!(#decode::shared_map(&mut self.#name, wire_type, reader))
        }
        Cardinality::Map { .. } if fp.seed == Seed::OptionSharedMap => {
            quote!(#decode::option_shared_map(&mut self.#name, wire_type, reader))
        }
        Cardinality::Map { .. } if fp.plain => quote!(#decode::map(&mut self.#name, #args)),
        Cardinality::Map { .. } => quote!(#decode::option_map(&mut self.#name, #args)),
    }
}

/// The statement writing field `fp`, after the fields of lower numbers.
fn write_field(fp: &FieldPlan, enc: &FieldEncoding) -> TokenStream {
    let name = ident(&fp.field.rust_name);
    let encode = quote!(::k8s_client_runtime::protobuf::encode);
    let number = Literal::u32_unsuffixed(enc.number);
    // Go leaves a nil `[]byte` out whether or not the field is a pointer.
    let pointer = enc.go_pointer || fp.field.ty == FieldType::Bytes;
    match enc.cardinality {
        Cardinality::Single if fp.plain && fp.field.ty == FieldType::Bytes => {
            quote!(#encode::unless_default(writer, #number, &self.#name);)
        }
        Cardinality::Single if fp.plain && fp.boxed => quote!(#encode::value(writer, #number, &*self.#name);),
        Cardinality::Single if fp.plain => quote!(#encode::value(writer, #number, &self.#name);),
        Cardinality::Single if fp.boxed && pointer => quote!(#encode::option_box(writer, #number, &self.#name);),
        Cardinality::Single if fp.boxed => quote!(#encode::option_box_or_default(writer, #number, &self.#name);),
        Cardinality::Single if pointer => quote!(#encode::option(writer, #number, &self.#name);),
        Cardinality::Single => quote!(#encode::option_or_default(writer, #number, &self.#name);),
        Cardinality::Repeated { .. } if fp.plain => quote!(#encode::repeated(writer, #number, &self.#name);),
        Cardinality::Repeated { .. } => quote! {
            if let ::std::option::Option::Some(items) = &self.#name {
                #encode::repeated(writer, #number, items);
            }
        },
        Cardinality::Map { .. } if fp.plain => quote!(#encode::map(writer, #number, &self.#name);),
        Cardinality::Map { .. } => quote!(#encode::option_map(writer, #number, &self.#name);),
    }
}

/// The fields of one message: its own, by number, and the Go structs
/// inlined into the JSON object but nested on the wire, by the number of
/// the field holding them.
#[derive(Default)]
struct Level<'p, 'a> {
    fields: BTreeMap<u32, (&'p FieldPlan<'a>, &'a FieldEncoding)>,
    inlined: BTreeMap<u32, (&'a InlineStep, Level<'p, 'a>)>,
}

impl<'p, 'a> Level<'p, 'a> {
    fn of(sp: &'p StructPlan<'a>) -> Self {
        let mut top = Level::default();
        for fp in &sp.fields {
            let Some(enc) = fp.protobuf else { continue };
            let mut level = &mut top;
            for step in &enc.inline {
                level = &mut level.inlined.entry(step.number).or_insert_with(|| (step, Level::default())).1;
            }
            level.fields.insert(enc.number, (fp, enc));
        }
        top
    }

    /// The `match` arms reading this level's fields.
    fn read_arms(&self, api: &Api) -> Vec<TokenStream> {
        let mut arms: Vec<(u32, TokenStream)> = self
            .fields
            .iter()
            .map(|(number, (fp, enc))| {
                let read = read_field(api, fp, enc);
                let n = Literal::u32_unsuffixed(*number);
                (*number, quote!(#n => #read,))
            })
            .collect();
        for (number, (step, level)) in &self.inlined {
            let n = Literal::u32_unsuffixed(*number);
            let message = short(&step.message);
            let inner = level.read_arms(api);
            arms.push((
                *number,
                quote! {
                    #n => ::k8s_client_runtime::protobuf::decode::inline(#message, wire_type, reader, |number, wire_type, reader| {
                        match number {
                            #(#inner)*
                            _ => reader.skip(wire_type),
                        }
                    }),
                },
            ));
        }
        arms.sort_by_key(|(n, _)| *n);
        arms.into_iter().map(|(_, arm)| arm).collect()
    }

    /// The statements writing this level's fields in ascending number
    /// order. An inlined struct is written whole, as Go writes a value
    /// field; one held by a Go pointer only when a field of it is set.
    fn writes(&self) -> Vec<TokenStream> {
        let mut writes: Vec<(u32, TokenStream)> =
            self.fields.iter().map(|(number, (fp, enc))| (*number, write_field(fp, enc))).collect();
        for (number, (step, level)) in &self.inlined {
            let n = Literal::u32_unsuffixed(*number);
            let inner = level.writes();
            let write = quote! {
                writer.key(#n, ::k8s_client_runtime::protobuf::WireType::Len);
                writer.len_delimited(|writer| { #(#inner)* });
            };
            let write = if step.go_pointer {
                let set = level
                    .field_names()
                    .into_iter()
                    .map(|(name, plain)| if plain { quote!(true) } else { quote!(self.#name.is_some()) });
                quote!(if false #(|| #set)* { #write })
            } else {
                write
            };
            writes.push((*number, write));
        }
        writes.sort_by_key(|(n, _)| *n);
        writes.into_iter().map(|(_, w)| w).collect()
    }

    /// Whether a read of this level passes the decode's options on: all
    /// but the maps of text, read without them.
    fn uses_options(&self) -> bool {
        self.fields.values().any(|(fp, _)| !matches!(fp.seed, Seed::SharedMap | Seed::OptionSharedMap))
            || self.inlined.values().any(|(_, level)| level.uses_options())
    }

    fn field_names(&self) -> Vec<(proc_macro2::Ident, bool)> {
        let mut names: Vec<_> = self.fields.values().map(|(fp, _)| (ident(&fp.field.rust_name), fp.plain)).collect();
        for (_, level) in self.inlined.values() {
            names.extend(level.field_names());
        }
        names
    }
}

/// `DecodeProto` and `EncodeProto` for a struct with a message; nothing
/// for one without.
pub fn proto_impl(api: &Api, sp: &StructPlan) -> TokenStream {
    let Some(message) = sp.message else { return TokenStream::new() };
    let name = ident(&sp.def.rust_name);
    let message_name = short(message);
    let level = Level::of(sp);
    let arms = level.read_arms(api);
    let writes = level.writes();
    let parts = CodecParts {
        arms: quote!(#(#arms)*),
        uses_options: level.uses_options(),
        merge_from: None,
        encode: quote!(#(#writes)*),
    };
    codec_impls(&name, message_name, parts)
}

/// What differs between the `DecodeProto` and `EncodeProto` impls of two
/// types; [`codec_impls`] renders the rest.
struct CodecParts {
    /// The arms of `merge_field`'s `match` on the field number, before the
    /// one skipping the numbers the type does not know.
    arms: TokenStream,
    /// Whether the arms pass the decode's options on.
    uses_options: bool,
    /// A `merge_from` of the type's own (a special wire form), instead of
    /// the trait's loop over `merge_field`.
    merge_from: Option<TokenStream>,
    /// The body of `encode_fields`.
    encode: TokenStream,
}

/// `DecodeProto` and `EncodeProto` for `name`, message `message_name`,
/// under the crate's `protobuf` feature.
fn codec_impls(name: &proc_macro2::Ident, message_name: &str, parts: CodecParts) -> TokenStream {
    let proto = quote!(::k8s_client_runtime::protobuf);
    let CodecParts { arms, uses_options, merge_from, encode } = parts;
    let options = if uses_options { quote!(options) } else { quote!(_options) };
    let writer = if encode.is_empty() { quote!(_writer) } else { quote!(writer) };
    let (number, fields) = if arms.is_empty() {
        (quote!(_number), quote!(reader.skip(wire_type)))
    } else {
        (quote!(number), quote!(match number { #arms _ => reader.skip(wire_type), }))
    };
    let merge_from = merge_from.map(|body| {
        quote! {
            #[inline]
            fn merge_from(
                &mut self,
                reader: &mut #proto::Reader<'_>,
                _options: #proto::DecodeOptions,
            ) -> ::std::result::Result<(), #proto::Error> {
                #body
                ::std::result::Result::Ok(())
            }
        }
    });
    quote! {
        #[cfg(feature = #FEATURE)]
        impl #proto::DecodeProto for #name {
            const NAME: &'static str = #message_name;
            #[inline]
            fn merge_field(
                &mut self,
                #number: u32,
                wire_type: #proto::WireType,
                reader: &mut #proto::Reader<'_>,
                #options: #proto::DecodeOptions,
            ) -> ::std::result::Result<(), #proto::Error> {
                #fields
            }
            #merge_from
        }
        #[cfg(feature = #FEATURE)]
        impl #proto::EncodeProto for #name {
            #[inline]
            fn encode_fields(&self, #writer: &mut #proto::Writer) {
                #encode
            }
        }
    }
}

/// `DecodeProto` and `EncodeProto` of a special schema's type, over the
/// runtime's hand-written wire forms (`protobuf::special`); nothing when
/// the type has no message or the special has no wire form of its own.
pub fn special_proto_impl(api: &Api, def: &TypeDef, special: Special) -> TokenStream {
    let Some(enc) = api.protobuf.as_ref().and_then(|p| p.types.get(&def.schema_name)) else {
        return TokenStream::new();
    };
    let name = ident(&def.rust_name);
    let message_name = short(&enc.message);
    let proto = quote!(::k8s_client_runtime::protobuf);
    let special_mod = quote!(#proto::special);
    let (decode, encode) = match special {
        Special::Time => (
            quote!(*self = #name(#special_mod::decode_time(reader)?);),
            quote!(#special_mod::encode_time(writer, self.0);),
        ),
        Special::MicroTime => (
            quote!(*self = #name(#special_mod::decode_micro_time(reader)?);),
            quote!(#special_mod::encode_micro_time(writer, self.0);),
        ),
        Special::Quantity => (
            quote!(self.0 = #special_mod::decode_quantity(reader)?;),
            quote!(#special_mod::encode_quantity(writer, &self.0);),
        ),
        Special::IntOrString => (
            quote! {
                *self = match #special_mod::decode_int_or_string(reader)? {
                    ::k8s_client_runtime::codec::IntOrStr::Int(i) => #name::Int(i),
                    ::k8s_client_runtime::codec::IntOrStr::Str(s) => #name::String(s),
                };
            },
            quote! {
                let value = match self {
                    #name::Int(i) => ::k8s_client_runtime::codec::IntOrStr::Int(*i),
                    #name::String(s) => ::k8s_client_runtime::codec::IntOrStr::Str(s.clone()),
                };
                #special_mod::encode_int_or_string(writer, &value);
            },
        ),
        Special::RawJsonText => (
            quote!(self.0 = #special_mod::decode_raw_json(reader)?;),
            quote!(#special_mod::encode_raw_json(writer, &self.0);),
        ),
        Special::JsonValue => (
            quote!(self.0 = #special_mod::decode_json_value(#message_name, reader)?;),
            quote!(#special_mod::encode_json_value(writer, &self.0);),
        ),
        Special::SchemaOrArray | Special::SchemaOrBool | Special::SchemaOrStringArray => {
            return schema_or_proto_impl(def, special, message_name);
        }
    };
    let parts = CodecParts { arms: TokenStream::new(), uses_options: false, merge_from: Some(decode), encode };
    codec_impls(&name, message_name, parts)
}

/// apiextensions' schema-or-X unions: a message with a `JSONSchemaProps`
/// field beside the other form's (`OrArray`: schema = 1, jSONSchemas = 2;
/// `OrBool`: allows = 1, schema = 2; `OrStringArray`: schema = 1,
/// property = 2), written as Go's hand-written marshalers write them.
fn schema_or_proto_impl(def: &TypeDef, special: Special, message_name: &str) -> TokenStream {
    let name = ident(&def.rust_name);
    let props = super::special::schema_props(def);
    let proto = quote!(::k8s_client_runtime::protobuf);
    let decode = quote!(#proto::decode);
    let encode = quote!(#proto::encode);
    let args = quote!(wire_type, reader, options);
    // The schema, read into the one the value holds or a new one.
    let read_schema = quote! {
        if let #name::Schema(schema) = self {
            #decode::value(&mut **schema, #args)
        } else {
            let mut schema = ::std::boxed::Box::<#props>::default();
            #decode::value(&mut *schema, #args)?;
            *self = #name::Schema(schema);
            ::std::result::Result::Ok(())
        }
    };
    let (default, arms, writes) = match special {
        Special::SchemaOrArray => (
            quote!(#name::Schemas(::std::vec::Vec::new())),
            quote! {
                1 => { #read_schema }
                2 => {
                    let mut item = <#props>::default();
                    #decode::value(&mut item, #args)?;
                    match self {
                        #name::Schemas(items) => items.push(item),
                        _ => *self = #name::Schemas(::std::vec![item]),
                    }
                    ::std::result::Result::Ok(())
                }
            },
            quote! {
                match self {
                    #name::Schema(schema) => #encode::value(writer, 1, &**schema),
                    #name::Schemas(items) => #encode::repeated(writer, 2, items),
                }
            },
        ),
        Special::SchemaOrBool => (
            quote!(#name::Bool(false)),
            quote! {
                1 => {
                    let mut allows = false;
                    #decode::value(&mut allows, #args)?;
                    if let #name::Bool(b) = self {
                        *b = allows;
                    }
                    ::std::result::Result::Ok(())
                }
                2 => { #read_schema }
            },
            quote! {
                match self {
                    #name::Bool(allows) => #encode::value(writer, 1, allows),
                    #name::Schema(schema) => {
                        #encode::value(writer, 1, &true);
                        #encode::value(writer, 2, &**schema);
                    }
                }
            },
        ),
        _ => (
            quote!(#name::Strings(::std::vec::Vec::new())),
            quote! {
                1 => { #read_schema }
                2 => {
                    let mut item = ::k8s_client_runtime::LeanString::new();
                    #decode::value(&mut item, #args)?;
                    match self {
                        #name::Strings(items) => items.push(item.into()),
                        _ => *self = #name::Strings(::std::vec![item.into()]),
                    }
                    ::std::result::Result::Ok(())
                }
            },
            quote! {
                match self {
                    #name::Schema(schema) => #encode::value(writer, 1, &**schema),
                    #name::Strings(items) => {
                        for item in items {
                            writer.key(2, #proto::WireType::Len);
                            writer.bytes(item.as_bytes());
                        }
                    }
                }
            },
        ),
    };
    let mut out = quote! {
        #[cfg(feature = #FEATURE)]
        impl ::std::default::Default for #name {
            fn default() -> Self {
                #default
            }
        }
    };
    out.extend(codec_impls(
        &name,
        message_name,
        CodecParts { arms, uses_options: true, merge_from: None, encode: writes },
    ));
    out
}
