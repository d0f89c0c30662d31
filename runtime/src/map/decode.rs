//! Reading a map of text so that an equal map decoded recently is found
//! before anything is built.
//!
//! The entries are first read as the text the input holds (borrowed from
//! it where the JSON string has no escapes), and looked up in this thread's
//! table of recent maps ([`super::recent`]) as that text. Only a map not
//! found there becomes keys and values of its own. The maps of one
//! workload's objects are nearly always found, and then cost no
//! allocation: built first and dropped on a hit, as they were, maps were
//! about a tenth of decoding a `PodList`.

use std::fmt;
use std::marker::PhantomData;

use lean_string::LeanString;
use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, IntoDeserializer, MapAccess, SeqAccess, Visitor};

use super::{Map, recent};
use crate::codec::fields::Staged;

/// A value of the maps the decoder shares ([`super::recent`]): text, such
/// as a string or a `Quantity`.
///
/// The runtime implements it for [`LeanString`]; the generated crate for
/// `Quantity`.
pub trait TextValue: Clone + AsRef<str> + 'static {
    /// Whether a JSON value that is not a string is read too, through the
    /// type's `Deserialize` (a quantity may be a bare number); otherwise
    /// only strings are.
    const NOT_ONLY_STRINGS: bool = false;

    /// The value whose text is `text`, as decoding a JSON string gives it.
    fn from_text(text: &str) -> Self;
}

impl TextValue for LeanString {
    fn from_text(text: &str) -> Self {
        LeanString::from(text)
    }
}

/// A map of text read from `deserializer`, sharing the array of an equal
/// map this thread decoded recently ([`recent`]). The generated decoders
/// read labels, annotations, node selectors and resource quantities so.
pub(crate) fn deserialize_shared<'de, V, D>(deserializer: D) -> Result<Map<V>, D::Error>
where
    V: TextValue + Deserialize<'de>,
    D: Deserializer<'de>,
{
    let mut entries = Staged::new();
    deserializer.deserialize_map(Entries(&mut entries))?;
    super::sort(&mut entries);
    Ok(recent::shared(&mut entries, |entries| {
        Map::from_sorted(
            entries
                .drain(..)
                // Keys (`app.kubernetes.io/name`, `pod-template-hash`)
                // repeat across objects: they share buffers.
                .map(|(key, value)| (crate::codec::shared(key.as_ref()), value.into_value())),
        )
    }))
}

/// Text as read: borrowed from the input where it could be.
enum Text<'de> {
    Borrowed(&'de str),
    /// A JSON string with escapes, or input that lends nothing.
    Owned(LeanString),
}

impl AsRef<str> for Text<'_> {
    fn as_ref(&self) -> &str {
        match self {
            Text::Borrowed(text) => text,
            Text::Owned(text) => text,
        }
    }
}

/// A value as read: the text of a string, or a value that was not one,
/// already decoded.
enum Value<'de, V> {
    Text(Text<'de>),
    Decoded(V),
}

impl<V: AsRef<str>> AsRef<str> for Value<'_, V> {
    fn as_ref(&self) -> &str {
        match self {
            Value::Text(text) => text.as_ref(),
            Value::Decoded(value) => value.as_ref(),
        }
    }
}

impl<V: TextValue> Value<'_, V> {
    fn into_value(self) -> V {
        match self {
            Value::Text(text) => V::from_text(text.as_ref()),
            Value::Decoded(value) => value,
        }
    }
}

/// Reads a JSON object's entries as text, in the order they come, onto
/// the staged entries it holds.
struct Entries<'a, 'de, V>(&'a mut Staged<(Text<'de>, Value<'de, V>)>);

impl<'de, V: TextValue + Deserialize<'de>> Visitor<'de> for Entries<'_, 'de, V> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a map")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<(), A::Error> {
        while let Some(key) = access.next_key_seed(ReadText)? {
            self.0.push((key, access.next_value_seed(ReadValue(PhantomData))?));
        }
        Ok(())
    }
}

/// Reads a string as [`Text`].
struct ReadText;

impl<'de> DeserializeSeed<'de> for ReadText {
    type Value = Text<'de>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Text<'de>, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for ReadText {
    type Value = Text<'de>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Text<'de>, E> {
        Ok(Text::Borrowed(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Text<'de>, E> {
        Ok(Text::Owned(v.into()))
    }
}

/// Reads a map's value: a string as [`Text`]; anything else, where the
/// value type reads more than strings, through its `Deserialize`.
struct ReadValue<V>(PhantomData<V>);

impl<'de, V: TextValue + Deserialize<'de>> DeserializeSeed<'de> for ReadValue<V> {
    type Value = Value<'de, V>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value<'de, V>, D::Error> {
        if V::NOT_ONLY_STRINGS {
            d.deserialize_any(self)
        } else {
            // What is not a string is refused as `V` would refuse it.
            ReadText.deserialize(d).map(Value::Text)
        }
    }
}

impl<'de, V: TextValue + Deserialize<'de>> ReadValue<V> {
    fn decoded<E: de::Error, I: IntoDeserializer<'de, E>>(value: I) -> Result<Value<'de, V>, E> {
        V::deserialize(value.into_deserializer()).map(Value::Decoded)
    }
}

impl<'de, V: TextValue + Deserialize<'de>> Visitor<'de> for ReadValue<V> {
    type Value = Value<'de, V>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a map value")
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Value::Text(Text::Borrowed(v)))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Value::Text(Text::Owned(v.into())))
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        Self::decoded(v)
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Self::decoded(v)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Self::decoded(v)
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        Self::decoded(v)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Self::decoded(())
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        V::deserialize(MapAccessDeserializer::new(map)).map(Value::Decoded)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        V::deserialize(SeqAccessDeserializer::new(seq)).map(Value::Decoded)
    }
}
