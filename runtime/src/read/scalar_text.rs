//! A JSON string or number read as text: the string's contents, or the
//! number exactly as written.
//!
//! A `resource.Quantity` is canonically a string (`"500m"`), but
//! apimachinery's `Quantity.UnmarshalJSON` also takes a bare number and
//! reads its bytes as the quantity's text, so `memory: 1e3` is `1e3` and a
//! 24-digit count keeps its digits. serde's data model hands a number over
//! as an `i64`, `u64` or `f64`, which loses that text (`1e3` would be
//! `1000.0`). serde_json lends the text of any value through its raw-value
//! protocol, the one `serde_json::value::RawValue` is read by, so that is
//! asked for here: from serde_json's readers (str, bytes, I/O, `Value`)
//! the text is exact; from any other deserializer (YAML, say) a number
//! comes as serde's data model gives it and is written out in decimal.

use std::fmt;
use std::sync::OnceLock;

use lean_string::{LeanString, ToLeanString as _};
use serde::de::{self, Deserialize, Deserializer, MapAccess, Unexpected, Visitor};

/// Text as read: borrowed from the input where it could be.
pub(crate) enum Text<'de> {
    /// Lent by the input (a string without escapes, a number's digits).
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

/// Reads a JSON string's contents or a number's text as written;
/// anything else is refused as `expecting` (e.g. "a quantity").
pub(crate) fn deserialize_string_or_number<'de, D: Deserializer<'de>>(
    d: D,
    expecting: &'static str,
) -> Result<Text<'de>, D::Error> {
    let visitor = StringOrNumber { expecting };
    match raw_value_name() {
        Some(name) => d.deserialize_newtype_struct(name, visitor),
        None => d.deserialize_any(visitor),
    }
}

/// The name serde_json's readers recognise as a request for a value's raw
/// text: learnt once from `RawValue`'s own `Deserialize`, so it is never
/// spelled here. `None` if that ever stops naming one (numbers are then
/// read through serde's data model; the tests say so).
fn raw_value_name() -> Option<&'static str> {
    static NAME: OnceLock<Option<&'static str>> = OnceLock::new();
    *NAME.get_or_init(|| match Box::<serde_json::value::RawValue>::deserialize(NameProbe) {
        Err(Probed(name)) => name,
        Ok(_) => None,
    })
}

/// A deserializer that answers every request with the name of the
/// newtype it was asked for.
struct NameProbe;

#[derive(Debug)]
struct Probed(Option<&'static str>);

impl fmt::Display for Probed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "probed {:?}", self.0)
    }
}

impl std::error::Error for Probed {}

impl de::Error for Probed {
    fn custom<T: fmt::Display>(_: T) -> Self {
        Probed(None)
    }
}

impl<'de> Deserializer<'de> for NameProbe {
    type Error = Probed;
    fn deserialize_newtype_struct<V: Visitor<'de>>(self, name: &'static str, _: V) -> Result<V::Value, Probed> {
        Err(Probed(Some(name)))
    }
    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Probed> {
        Err(Probed(None))
    }
    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct seq tuple tuple_struct map struct enum identifier ignored_any
    }
}

struct StringOrNumber {
    expecting: &'static str,
}

impl<'de> Visitor<'de> for StringOrNumber {
    type Value = Text<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{} (a string or a number)", self.expecting)
    }

    /// serde_json's raw value: one entry, its key the raw-value name and
    /// its value the text. A real map is refused.
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Text<'de>, A::Error> {
        let raw = match map.next_key_seed(RawKey)? {
            Some(true) => map.next_value_seed(RawText)?,
            _ => return Err(de::Error::invalid_type(Unexpected::Map, &self)),
        };
        let text = raw.as_ref();
        match text.as_bytes().first() {
            Some(b'"') => match raw {
                // No escapes: the contents are the text between the quotes.
                Text::Borrowed(text) if !text.contains('\\') => Ok(Text::Borrowed(&text[1..text.len() - 1])),
                _ => serde_json::from_str::<String>(text)
                    .map(|s| Text::Owned(s.into()))
                    .map_err(|e| de::Error::custom(format_args!("{e}"))),
            },
            Some(b'-' | b'0'..=b'9') => Ok(raw),
            Some(b'{') => Err(de::Error::invalid_type(Unexpected::Map, &self)),
            Some(b'[') => Err(de::Error::invalid_type(Unexpected::Seq, &self)),
            Some(b't') => Err(de::Error::invalid_type(Unexpected::Bool(true), &self)),
            Some(b'f') => Err(de::Error::invalid_type(Unexpected::Bool(false), &self)),
            _ => Err(de::Error::invalid_type(Unexpected::Unit, &self)),
        }
    }

    /// Not serde_json: whatever the value is.
    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<Text<'de>, D::Error> {
        d.deserialize_any(self)
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Text<'de>, E> {
        Ok(Text::Borrowed(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Text<'de>, E> {
        Ok(Text::Owned(v.into()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Text<'de>, E> {
        Ok(Text::Owned(v.into()))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Text<'de>, E> {
        Ok(Text::Owned(v.to_lean_string()))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Text<'de>, E> {
        Ok(Text::Owned(v.to_lean_string()))
    }
    fn visit_i128<E: de::Error>(self, v: i128) -> Result<Text<'de>, E> {
        Ok(Text::Owned(v.to_lean_string()))
    }
    fn visit_u128<E: de::Error>(self, v: u128) -> Result<Text<'de>, E> {
        Ok(Text::Owned(v.to_lean_string()))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Text<'de>, E> {
        // The shortest decimal that reads back as `v`, without exponent.
        Ok(Text::Owned(v.to_lean_string()))
    }
}

/// Whether a map's key is the raw-value name.
struct RawKey;

impl<'de> de::DeserializeSeed<'de> for RawKey {
    type Value = bool;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_identifier(self)
    }
}

impl<'de> Visitor<'de> for RawKey {
    type Value = bool;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a map key")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<bool, E> {
        Ok(Some(v) == raw_value_name())
    }
}

/// The raw text, borrowed where the input lends it.
struct RawText;

impl<'de> de::DeserializeSeed<'de> for RawText {
    type Value = Text<'de>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Text<'de>, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for RawText {
    type Value = Text<'de>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("raw JSON text")
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Text<'de>, E> {
        Ok(Text::Borrowed(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Text<'de>, E> {
        Ok(Text::Owned(v.into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(json: &str) -> Result<String, String> {
        let mut d = serde_json::Deserializer::from_str(json);
        deserialize_string_or_number(&mut d, "a quantity").map(|t| t.as_ref().to_owned()).map_err(|e| e.to_string())
    }

    #[test]
    fn the_raw_value_protocol_is_found() {
        assert!(raw_value_name().is_some(), "serde_json no longer names its raw values: numbers lose their text");
    }

    #[test]
    fn numbers_keep_their_text_from_every_serde_json_reader() {
        for number in ["2", "-0", "1e3", "1E+3", "0.5", "123456789012345678901234", "1.50", "-7e-2"] {
            assert_eq!(read(number).as_deref(), Ok(number), "from str");
            let mut d = serde_json::Deserializer::from_slice(number.as_bytes());
            assert_eq!(deserialize_string_or_number(&mut d, "q").unwrap().as_ref(), number, "from bytes");
            let mut d = serde_json::Deserializer::from_reader(number.as_bytes());
            assert_eq!(deserialize_string_or_number(&mut d, "q").unwrap().as_ref(), number, "from a reader");
        }
        // A `Value` keeps what serde_json kept of the number.
        let value: serde_json::Value = serde_json::from_str("[2, 1e3]").unwrap();
        let texts: Vec<String> = value
            .as_array()
            .unwrap()
            .iter()
            .map(|v| deserialize_string_or_number(v, "q").unwrap().as_ref().to_owned())
            .collect();
        assert_eq!(texts, ["2", "1000.0"]);
    }

    #[test]
    fn strings_are_their_contents_borrowed_where_possible() {
        assert_eq!(read(r#""500m""#).as_deref(), Ok("500m"));
        assert_eq!(read(r#""a\"b\u00e9""#).as_deref(), Ok("a\"bé"));
        let mut d = serde_json::Deserializer::from_str(r#""100Mi""#);
        assert!(matches!(deserialize_string_or_number(&mut d, "q").unwrap(), Text::Borrowed("100Mi")));
    }

    #[test]
    fn other_values_are_refused_as_what_they_are() {
        for (json, what) in [("{}", "map"), ("[1]", "sequence"), ("true", "boolean"), ("null", "null")] {
            let err = read(json).unwrap_err();
            assert!(err.contains(what) && err.contains("a quantity"), "{json}: {err}");
        }
        // A map whose key merely looks like the protocol's is still a map.
        assert!(read(r#"{"x": "1"}"#).unwrap_err().contains("map"));
    }

    #[test]
    fn other_deserializers_give_serde_values() {
        let v: Vec<serde_yaml_ng::Value> = serde_yaml_ng::from_str("[2, '3', 1.5]").unwrap();
        let texts: Vec<String> =
            v.into_iter().map(|v| deserialize_string_or_number(v, "q").unwrap().as_ref().to_owned()).collect();
        assert_eq!(texts, ["2", "3", "1.5"]);
    }
}
