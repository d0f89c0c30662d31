//! Encoding of the generated object types: the twin of decoding. A
//! generated struct implements [`EncodeFields`] beside
//! [`DecodeFields`](super::DecodeFields), listing its fields once for each
//! direction; the object's frame (struct or map, `apiVersion`/`kind` for a
//! kind written as a document, left out where it is embedded in another
//! object, as Go leaves out an empty TypeMeta) is written once, here.
//!
//! Compared with `#[derive(Serialize)]` and its per-field attributes, which
//! described half of the codec in one place and the decoder the other half
//! in another, a field's whole encoding now reads next to its decoding in
//! the generated file.

use serde::Serialize;
use serde::ser::{Error as _, SerializeMap, SerializeStruct, Serializer};

use super::DecodeFields;
use crate::codec::SerializeEmbedded;

/// A generated struct, encoded field by field through this module.
pub trait EncodeFields: DecodeFields {
    /// `apiVersion` and `kind` of a kind, written first when the object is
    /// the document and left out where it is embedded; `None` for other
    /// structs.
    const TYPE_META: Option<(&'static str, &'static str)> = None;

    /// How many declared fields [`encode_fields`](Self::encode_fields)
    /// writes (a length hint; undeclared fields are not counted).
    fn field_count(&self) -> usize;

    /// Writes every field that is set, declared ones first, then (for a
    /// type that [keeps them](DecodeFields::KEEPS_UNKNOWN)) the undeclared.
    fn encode_fields<W: FieldWriter>(&self, out: &mut W) -> Result<(), W::Error>;
}

/// Where [`EncodeFields::encode_fields`] writes: an object being serialized.
pub trait FieldWriter {
    /// The serializer's error.
    type Error: serde::ser::Error;
    /// Writes a declared field.
    fn field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result<(), Self::Error>;
    /// Writes an undeclared field kept from the input.
    fn entry(&mut self, key: &str, value: &serde_json::Value) -> Result<(), Self::Error>;
}

struct AsStruct<S>(S);

impl<S: SerializeStruct> FieldWriter for AsStruct<S> {
    type Error = S::Error;
    fn field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result<(), S::Error> {
        self.0.serialize_field(key, value)
    }
    fn entry(&mut self, key: &str, _: &serde_json::Value) -> Result<(), S::Error> {
        Err(S::Error::custom(format_args!("undeclared field {key:?} in a type that keeps none")))
    }
}

struct AsMap<M>(M);

impl<M: SerializeMap> FieldWriter for AsMap<M> {
    type Error = M::Error;
    fn field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result<(), M::Error> {
        self.0.serialize_entry(key, value)
    }
    fn entry(&mut self, key: &str, value: &serde_json::Value) -> Result<(), M::Error> {
        self.0.serialize_entry(key, value)
    }
}

/// `Serialize::serialize` of a generated struct: a kind with its
/// `apiVersion` and `kind`.
pub fn serialize<T: EncodeFields, S: Serializer>(value: &T, serializer: S) -> Result<S::Ok, S::Error> {
    write(value, serializer, T::TYPE_META)
}

/// A generated kind embedded in another object, without its TypeMeta.
impl<T: EncodeFields> SerializeEmbedded for T {
    fn serialize_embedded<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        write(self, serializer, None)
    }
}

fn write<T: EncodeFields, S: Serializer>(
    value: &T,
    serializer: S,
    type_meta: Option<(&'static str, &'static str)>,
) -> Result<S::Ok, S::Error> {
    // An object with undeclared fields has keys known only now: a map.
    if T::KEEPS_UNKNOWN {
        let mut out = AsMap(serializer.serialize_map(None)?);
        if let Some((api_version, kind)) = type_meta {
            out.field("apiVersion", api_version)?;
            out.field("kind", kind)?;
        }
        value.encode_fields(&mut out)?;
        out.0.end()
    } else {
        let len = value.field_count() + if type_meta.is_some() { 2 } else { 0 };
        let mut out = AsStruct(serializer.serialize_struct(T::NAME, len)?);
        if let Some((api_version, kind)) = type_meta {
            out.field("apiVersion", api_version)?;
            out.field("kind", kind)?;
        }
        value.encode_fields(&mut out)?;
        out.0.end()
    }
}

/// `Serialize` and `Deserialize` of a generated struct, through
/// [`serialize`] and [`deserialize`](super::deserialize):
/// `impl_codec!(Pod);`.
#[macro_export]
macro_rules! impl_codec {
    ($ty:ident) => {
        impl $crate::codec::fields::__serde::Serialize for $ty {
            fn serialize<S: $crate::codec::fields::__serde::Serializer>(
                &self,
                serializer: S,
            ) -> ::std::result::Result<S::Ok, S::Error> {
                $crate::codec::fields::serialize(self, serializer)
            }
        }

        impl<'de> $crate::codec::fields::__serde::Deserialize<'de> for $ty {
            fn deserialize<D: $crate::codec::fields::__serde::Deserializer<'de>>(
                deserializer: D,
            ) -> ::std::result::Result<Self, D::Error> {
                $crate::codec::fields::deserialize(deserializer)
            }
        }
    };
}
