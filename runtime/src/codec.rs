//! Wire formats of the Kubernetes value types that JSON has no word for.
//!
//! The generated types for `metav1.Time`, `metav1.MicroTime`,
//! `intstr.IntOrString`, `metav1.FieldsV1` and `format: byte` fields call into
//! here, so the encoding rules live (and are tested) in one place.
//!
//! Times follow apimachinery: they are read as Go reads RFC 3339
//! ([`parse_time`]) and written in UTC. `MicroTime` is written with exactly
//! six fraction digits, truncated, as Go's `MarshalJSON` writes it: the
//! apiserver parses it with that layout and refuses any other length.
//! `Time` is written in whole seconds, as Go writes it, except that a
//! fraction the value carries is kept (the apiserver reads `Time` with any
//! fraction): a custom resource's `date-time` field read and written back
//! is not changed.

use std::fmt;

use base64::Engine as _;
use lean_string::LeanString;
use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, Visitor};
use serde::ser::{Serialize, Serializer};

use crate::read;

pub use jiff::Timestamp;

mod compact_time;
pub mod fields;
mod options;
mod rfc3339;

pub use crate::intern::shared;
pub use crate::raw_json::RawJson;
pub use compact_time::CompactTimestamp;
pub use options::{DecodeOptions, DecodeWith, ManagedFieldsMode, WithOptions};
pub use rfc3339::TimeError;

/// Decodes a JSON body or frame, as every response and watch event the
/// runtime reads is decoded, with the default [`DecodeOptions`] (everything
/// kept).
///
/// The text's UTF-8 is checked once, as a whole, and then read as `str`:
/// reading bytes, serde_json checks each string again as it meets it, and a
/// `PodList` of `shared/bench/podlist-5000.json.gz` decoded about 30% faster
/// this way (`cargo bench -p k8s-client-bench --bench decode`). The check
/// is simdutf8's, which uses the CPU's vector instructions where it finds
/// them: the standard library's was about 4% of that decode's profile, and
/// the decode 1–2% slower with it. Text that is not UTF-8 is read as bytes
/// instead, so the error says where it fails.
pub fn decode_json<T: serde::de::DeserializeOwned>(json: &[u8]) -> Result<T, serde_json::Error> {
    decode_json_seed(json, std::marker::PhantomData::<T>)
}

/// [`decode_json`] leaving out what `options` say (e.g. every
/// `metadata.managedFields`), for a [`DecodeWith`] type: a generated struct,
/// an [`ObjectList`](crate::object::ObjectList) of them, a dynamic object.
pub fn decode_json_with<T: DecodeWith>(json: &[u8], options: DecodeOptions) -> Result<T, serde_json::Error> {
    decode_json_seed(json, WithOptions::<T>::new(options))
}

/// The whole of `json` read through `seed`: as text when it is UTF-8 (see
/// [`decode_json`]), else as bytes.
pub(crate) fn decode_json_seed<T, S: for<'de> DeserializeSeed<'de, Value = T>>(
    json: &[u8],
    seed: S,
) -> Result<T, serde_json::Error> {
    /// What `serde_json::from_str` does, with a seed.
    fn read_all<'de, R: serde_json::de::Read<'de>, S: DeserializeSeed<'de>>(
        read: R,
        seed: S,
    ) -> Result<S::Value, serde_json::Error> {
        let mut deserializer = serde_json::Deserializer::new(read);
        let value = seed.deserialize(&mut deserializer)?;
        deserializer.end()?;
        Ok(value)
    }
    match simdutf8::basic::from_utf8(json) {
        Ok(text) => read_all(serde_json::de::StrRead::new(text), seed),
        Err(_) => read_all(serde_json::de::SliceRead::new(json), seed),
    }
}

/// Reads an RFC 3339 timestamp as apimachinery does (Go's
/// `time.Parse(time.RFC3339, s)`): a fraction of any length (truncated to
/// nanoseconds), an offset converted to UTC; a leap second, a year that is
/// not four digits, or anything after the zone is an error.
pub fn parse_time(s: &str) -> Result<Timestamp, TimeError> {
    rfc3339::parse(s)
}

/// Formats like apimachinery's `metav1.Time` (`2006-01-02T15:04:05Z`),
/// keeping a non-zero fraction instead of truncating it (in as few of
/// three, six or nine digits as hold it).
pub fn format_time(t: &Timestamp) -> String {
    let nanos = subsec_nanos(t);
    let digits = match nanos {
        0 => 0,
        n if n.is_multiple_of(1_000_000) => 3,
        n if n.is_multiple_of(1_000) => 6,
        _ => 9,
    };
    format_with_fraction(t, digits)
}

/// Formats like apimachinery's `metav1.MicroTime`
/// (`2006-01-02T15:04:05.000000Z`): exactly six fraction digits, the
/// nanoseconds beyond them truncated as Go's `Format` truncates them.
pub fn format_micro_time(t: &Timestamp) -> String {
    format_with_fraction(t, 6)
}

/// The nanoseconds past the whole second (rounded down), `0..1e9`.
fn subsec_nanos(t: &Timestamp) -> u32 {
    t.subsec_nanosecond().rem_euclid(1_000_000_000).unsigned_abs()
}

/// `t` in UTC with `digits` (0 to 9) fraction digits, truncated.
fn format_with_fraction(t: &Timestamp, digits: usize) -> String {
    use std::fmt::Write as _;
    let secs = t.as_second();
    let nanos = t.subsec_nanosecond();
    // Whole seconds first (rounded down: before 1970 a fraction counts
    // back from the next second), then the fraction by hand.
    let whole = Timestamp::from_second(if nanos < 0 { secs - 1 } else { secs }).unwrap_or(*t);
    let nanos = subsec_nanos(t);
    let mut out = whole.strftime("%Y-%m-%dT%H:%M:%S").to_string();
    if digits > 0 {
        let frac = format!("{nanos:09}");
        let _ = write!(out, ".{}", &frac[..digits]);
    }
    out.push('Z');
    out
}

/// Go's zero `time.Time` (`0001-01-01T00:00:00Z`), which apimachinery
/// writes as JSON `null`; the default of the generated `Time`/`MicroTime`.
#[inline]
pub fn zero_time() -> Timestamp {
    Timestamp::constant(-62_135_596_800, 0)
}

struct TimeVisitor;

impl<'de> Visitor<'de> for TimeVisitor {
    type Value = Timestamp;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an RFC 3339 timestamp or null")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Timestamp, E> {
        parse_time(v).map_err(|e| E::custom(format_args!("invalid timestamp {v:?}: {e}")))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Timestamp, E> {
        Ok(zero_time())
    }
    fn visit_none<E: de::Error>(self) -> Result<Timestamp, E> {
        Ok(zero_time())
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Timestamp, D::Error> {
        d.deserialize_str(TimeVisitor)
    }
}

/// `#[serde(with = ...)]` helpers for `metav1.Time`: zero is `null`.
pub mod time {
    use super::*;
    /// Writes the time as `metav1.Time` does: RFC 3339 in UTC, whole seconds
    /// unless the value carries a fraction, and the zero time as `null`.
    pub fn serialize<S: Serializer>(t: &CompactTimestamp, s: S) -> Result<S::Ok, S::Error> {
        let t = t.timestamp();
        if t == zero_time() { s.serialize_none() } else { s.serialize_str(&format_time(&t)) }
    }
    /// Reads an RFC 3339 timestamp; `null` reads as the zero time.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<CompactTimestamp, D::Error> {
        d.deserialize_option(TimeVisitor).map(CompactTimestamp::from)
    }
}

/// `#[serde(with = ...)]` helpers for `metav1.MicroTime`: zero is `null`.
pub mod micro_time {
    use super::*;
    /// Writes the time as `metav1.MicroTime` does: RFC 3339 in UTC with at
    /// least six fraction digits, and the zero time as `null`.
    pub fn serialize<S: Serializer>(t: &CompactTimestamp, s: S) -> Result<S::Ok, S::Error> {
        let t = t.timestamp();
        if t == zero_time() { s.serialize_none() } else { s.serialize_str(&format_micro_time(&t)) }
    }
    /// Reads an RFC 3339 timestamp; `null` reads as the zero time.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<CompactTimestamp, D::Error> {
        d.deserialize_option(TimeVisitor).map(CompactTimestamp::from)
    }
}

/// Kinds write `apiVersion`/`kind` when they are the document; embedded in
/// another object (list items, StatefulSet claim templates) they are written
/// without, as Go does for an empty TypeMeta. Every generated struct has it
/// through [`fields::EncodeFields`].
pub trait SerializeEmbedded {
    /// Serializes the object without `apiVersion` and `kind`.
    fn serialize_embedded<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error>;
}

/// Serializes a kind without its TypeMeta.
pub struct EmbeddedRef<'a, T>(pub &'a T);

impl<T: SerializeEmbedded> Serialize for EmbeddedRef<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize_embedded(s)
    }
}

/// Serializes a list of kinds without their TypeMeta.
pub struct EmbeddedSeq<'a, T>(pub &'a [T]);

impl<T: SerializeEmbedded> Serialize for EmbeddedSeq<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(EmbeddedRef))
    }
}

/// Bytes carried in JSON as standard base64 (`format: byte`), e.g. the
/// values of a Secret's `data`.
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ByteString(pub Vec<u8>);

impl fmt::Debug for ByteString {
    // Secrets travel as ByteString: never print the bytes themselves.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ByteString(<{} bytes>)", self.0.len())
    }
}

impl From<Vec<u8>> for ByteString {
    fn from(v: Vec<u8>) -> Self {
        ByteString(v)
    }
}

impl From<&[u8]> for ByteString {
    fn from(v: &[u8]) -> Self {
        ByteString(v.to_vec())
    }
}

impl Serialize for ByteString {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&base64::engine::general_purpose::STANDARD.encode(&self.0))
    }
}

impl<'de> Deserialize<'de> for ByteString {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ByteString;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a base64 string")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<ByteString, E> {
                base64::engine::general_purpose::STANDARD
                    .decode(v.trim_end_matches(['\n', '\r']))
                    .map(ByteString)
                    .map_err(|e| E::custom(format_args!("invalid base64: {e}")))
            }
            fn visit_unit<E: de::Error>(self) -> Result<ByteString, E> {
                Ok(ByteString::default())
            }
        }
        d.deserialize_any(V)
    }
}

/// Either half of an `IntOrString` as read from JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IntOrStr {
    /// A JSON number, e.g. a port number or a replica count.
    Int(i32),
    /// A JSON string, e.g. a named port or a percentage such as `"25%"`.
    Str(LeanString),
}

/// Reads an `x-kubernetes-int-or-string` value: a JSON number that fits in
/// an `i32`, or a string.
pub fn deserialize_int_or_string<'de, D: Deserializer<'de>>(d: D) -> Result<IntOrStr, D::Error> {
    struct V;
    impl<'de> Visitor<'de> for V {
        type Value = IntOrStr;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("an int32 or a string")
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<IntOrStr, E> {
            i32::try_from(v).map(IntOrStr::Int).map_err(|_| E::custom(format_args!("{v} does not fit an int32")))
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<IntOrStr, E> {
            i32::try_from(v).map(IntOrStr::Int).map_err(|_| E::custom(format_args!("{v} does not fit an int32")))
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<IntOrStr, E> {
            Ok(IntOrStr::Str(v.into()))
        }
        fn visit_string<E: de::Error>(self, v: String) -> Result<IntOrStr, E> {
            Ok(IntOrStr::Str(v.into()))
        }
    }
    d.deserialize_any(V)
}

/// Reads a string-valued enum of a generated type: `from` maps the text to
/// a known variant or to the type's fallback variant (`Other(String)`), so
/// a value a newer server sends still decodes. Known values are matched on
/// the borrowed text, without allocating.
pub fn deserialize_str_as<'de, D: Deserializer<'de>, T>(d: D, from: fn(&str) -> T) -> Result<T, D::Error> {
    struct V<T>(fn(&str) -> T);
    impl<'de, T> Visitor<'de> for V<T> {
        type Value = T;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a string")
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
            Ok((self.0)(v))
        }
    }
    d.deserialize_str(V(from))
}

/// Reads a `Quantity`: canonically a string, but a bare JSON number is
/// accepted too and kept as the text it was written with (`1e3` stays
/// `1e3`), as apimachinery's `Quantity.UnmarshalJSON` keeps its bytes.
pub fn deserialize_quantity<'de, D: Deserializer<'de>>(d: D) -> Result<LeanString, D::Error> {
    read::deserialize_string_or_number(d, "a quantity").map(|text| match text {
        read::Text::Borrowed(text) => LeanString::from(text),
        read::Text::Owned(text) => text,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decode_json_reads_text_and_places_bad_utf8() {
        #[derive(serde::Deserialize, PartialEq, Debug)]
        struct W {
            name: String,
            items: Vec<String>,
        }
        let json = r#"{"name": "caf\u00e9 😀", "items": ["1"]}"#;
        let w: W = decode_json(json.as_bytes()).unwrap();
        assert_eq!(w, W { name: "café 😀".into(), items: vec!["1".into()] });
        // Not UTF-8 (a lone continuation byte) on line 2: the error says where.
        let mut bad = b"{\n\"name\": \"a".to_vec();
        bad.push(0x80);
        bad.extend_from_slice(b"b\", \"items\": []}");
        let err = decode_json::<W>(&bad).unwrap_err();
        assert_eq!(err.line(), 2, "{err}");
        // An error in valid text is placed too.
        let err = decode_json::<W>(b"{\"name\": 5}").unwrap_err();
        assert_eq!((err.line(), err.column()), (1, 10), "{err}");
    }

    #[test]
    fn quantities_and_int_or_strings_read_into_lean_strings() {
        let mut de = serde_json::Deserializer::from_str("1.5");
        assert_eq!(deserialize_quantity(&mut de).unwrap(), "1.5");
        let mut de = serde_json::Deserializer::from_str("7");
        assert_eq!(deserialize_quantity(&mut de).unwrap(), "7");
        let mut de = serde_json::Deserializer::from_str(r#""500m""#);
        assert_eq!(deserialize_quantity(&mut de).unwrap(), "500m");
        let mut de = serde_json::Deserializer::from_reader(&br#""25%""#[..]);
        assert_eq!(deserialize_int_or_string(&mut de).unwrap(), IntOrStr::Str("25%".into()));
    }

    #[test]
    fn time_formats_like_apimachinery() {
        for s in ["2008-01-01T01:01:01Z", "2025-12-31T23:59:59Z", "1970-01-01T00:00:00Z"] {
            assert_eq!(format_time(&parse_time(s).unwrap()), s);
        }
        // An offset is converted to UTC, as metav1.Time does.
        assert_eq!(format_time(&parse_time("2008-01-01T03:01:01+02:00").unwrap()), "2008-01-01T01:01:01Z");
        // A fraction is kept rather than silently dropped.
        assert_eq!(format_time(&parse_time("2008-01-01T01:01:01.5Z").unwrap()), "2008-01-01T01:01:01.500Z");
    }

    #[test]
    fn zero_time_is_null() {
        #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
        struct W {
            #[serde(with = "time")]
            t: CompactTimestamp,
        }
        let w: W = serde_json::from_str(r#"{"t":null}"#).unwrap();
        assert_eq!(w.t.timestamp(), zero_time());
        assert_eq!(serde_json::to_string(&w).unwrap(), r#"{"t":null}"#);
        assert_eq!(format_time(&zero_time()), "0001-01-01T00:00:00Z");
    }

    #[test]
    fn micro_time_has_six_digits() {
        let t = parse_time("2008-01-01T01:01:01.000001Z").unwrap();
        assert_eq!(format_micro_time(&t), "2008-01-01T01:01:01.000001Z");
        let t = parse_time("2008-01-01T01:01:01Z").unwrap();
        assert_eq!(format_micro_time(&t), "2008-01-01T01:01:01.000000Z");
        let t = parse_time("1969-12-31T23:59:59.250000Z").unwrap();
        assert_eq!(format_micro_time(&t), "1969-12-31T23:59:59.250000Z");
        // Nanoseconds are truncated, as Go's Format truncates them: the
        // apiserver refuses a MicroTime of any other length.
        let t = parse_time("2026-11-25T05:33:47.063978896Z").unwrap();
        assert_eq!(format_micro_time(&t), "2026-11-25T05:33:47.063978Z");
        let t = parse_time("1969-12-31T23:59:59.999999999Z").unwrap();
        assert_eq!(format_micro_time(&t), "1969-12-31T23:59:59.999999Z");
        let t = Timestamp::now();
        assert_eq!(format_micro_time(&t).len(), "2006-01-02T15:04:05.000000Z".len());
    }

    #[test]
    fn bad_time_names_the_value() {
        let err = serde_json::from_str::<Wrapper>(r#"{"t":"yesterday"}"#).unwrap_err();
        assert!(err.to_string().contains("yesterday"), "{err}");
    }

    #[derive(Debug, serde::Deserialize)]
    struct Wrapper {
        #[serde(with = "time")]
        #[allow(dead_code)]
        t: CompactTimestamp,
    }

    #[test]
    fn byte_string_is_base64_and_debug_hides_it() {
        let b: ByteString = serde_json::from_str(r#""c2VjcmV0""#).unwrap();
        assert_eq!(b.0, b"secret");
        assert_eq!(serde_json::to_string(&b).unwrap(), r#""c2VjcmV0""#);
        assert!(!format!("{b:?}").contains("secret"));
        assert!(serde_json::from_str::<ByteString>(r#""!!!""#).is_err());
    }

    #[test]
    fn int_or_string_bounds() {
        let mut de = serde_json::Deserializer::from_str("42");
        assert_eq!(deserialize_int_or_string(&mut de).unwrap(), IntOrStr::Int(42));
        let mut de = serde_json::Deserializer::from_str(r#""25%""#);
        assert_eq!(deserialize_int_or_string(&mut de).unwrap(), IntOrStr::Str("25%".into()));
        let mut de = serde_json::Deserializer::from_str("4294967296");
        assert!(deserialize_int_or_string(&mut de).is_err());
    }

    #[test]
    fn raw_json_round_trips_text_and_values() {
        let text = r#"{"f:metadata":{"f:labels":{".":{}}}}"#;
        let r: RawJson = serde_json::from_str(text).unwrap();
        assert_eq!(serde_json::to_string(&r).unwrap(), text);
        let v: serde_json::Value = serde_json::from_str(text).unwrap();
        let from_value: RawJson = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(from_value.to_value(), v);
    }
}
