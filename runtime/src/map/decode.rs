//! Reading a map of text so that an equal map decoded recently is found
//! before anything is built.
//!
//! The entries are first read as the text the input holds (borrowed from
//! it where the JSON string has no escapes), and looked up in this thread's
//! table of recent maps ([`crate::intern`]) as that text. Only a map not
//! found there becomes keys and values of its own. The maps of one
//! workload's objects are nearly always found, and then cost no
//! allocation: built first and dropped on a hit, as they were, maps were
//! about a tenth of decoding a `PodList`.

use std::fmt;
use std::marker::PhantomData;

use lean_string::LeanString;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, Visitor};

use super::Map;
use crate::intern;
use crate::read::{self, Staged, Text};

/// A value of the maps the decoder shares with equal maps decoded
/// recently: text, such as a string or a `Quantity`.
///
/// The runtime implements it for [`LeanString`]; the generated crate for
/// `Quantity`.
pub trait TextValue: Clone + AsRef<str> + 'static {
    /// Whether a bare JSON number is read too, as the text it was written
    /// with (a quantity may be one: `cpu: 2`); otherwise only strings are.
    const NUMBERS_AS_TEXT: bool = false;

    /// What a value is, for errors (`"a quantity"`).
    const EXPECTING: &'static str = "a string";

    /// On the protobuf wire, the text is field 1 of a message of its own
    /// (a `Quantity`) rather than a string.
    const PROTOBUF_MESSAGE: bool = false;

    /// The value whose text is `text`, as decoding a JSON string gives it.
    fn from_text(text: &str) -> Self;
}

impl TextValue for LeanString {
    fn from_text(text: &str) -> Self {
        LeanString::from(text)
    }
}

/// A map of text read from `deserializer`, sharing the array of an equal
/// map this thread decoded recently ([`intern::shared_map`]). The generated decoders
/// read labels, annotations, node selectors and resource quantities so.
pub(crate) fn deserialize_shared<'de, V, D>(deserializer: D) -> Result<Map<V>, D::Error>
where
    V: TextValue,
    D: Deserializer<'de>,
{
    let mut entries = Staged::new();
    deserializer.deserialize_map(Entries::<V>(&mut entries, PhantomData))?;
    Ok(shared_from_text(&mut entries))
}

/// The map of `entries` read as text (in the order they came, the later of
/// equal keys kept), sharing the array of an equal map this thread decoded
/// recently ([`intern::shared_map`]): what the JSON and protobuf decoders
/// make of labels, annotations and quantities.
pub(crate) fn shared_from_text<V, K, W>(entries: &mut Staged<(K, W)>) -> Map<V>
where
    V: TextValue,
    K: AsRef<str>,
    W: AsRef<str>,
{
    super::sort(entries);
    intern::shared_map(entries, |entries| {
        Map::from_sorted(
            entries
                .drain(..)
                // Keys (`app.kubernetes.io/name`, `pod-template-hash`)
                // repeat across objects: they share buffers.
                .map(|(key, value)| (intern::shared(key.as_ref()), V::from_text(value.as_ref()))),
        )
    })
}

/// Reads a JSON object's entries as text, in the order they come, onto
/// the staged entries it holds.
struct Entries<'a, 'de, V>(&'a mut Staged<(Text<'de>, Text<'de>)>, PhantomData<V>);

impl<'de, V: TextValue> Visitor<'de> for Entries<'_, 'de, V> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a map")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<(), A::Error> {
        while let Some(key) = access.next_key_seed(ReadText)? {
            self.0.push((key, access.next_value_seed(ReadValue::<V>(PhantomData))?));
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

/// Reads a map's value: a string as [`Text`], and where the value type
/// reads numbers too, a number as the text it was written with.
struct ReadValue<V>(PhantomData<V>);

impl<'de, V: TextValue> DeserializeSeed<'de> for ReadValue<V> {
    type Value = Text<'de>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Text<'de>, D::Error> {
        if V::NUMBERS_AS_TEXT { read::deserialize_string_or_number(d, V::EXPECTING) } else { ReadText.deserialize(d) }
    }
}
