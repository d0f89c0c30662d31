//! Arbitrary bytes decoded, as responses and watch objects are, into
//! generated kinds through [`decode_json`]: kinds with label and annotation
//! maps, quantities, times and micro-times, int-or-strings, base64 bytes,
//! nested lists; and into the runtime's own [`DynamicObject`] and
//! [`Status`] (error bodies).
//!
//! Checked for every type the bytes decode as:
//! - encoding never fails, and decoding the encoding gives an equal value,
//!   whose encoding is the same text (a round trip loses nothing), except
//!   for one documented case where Go loses the same (see `round_trip`);
//! - decoding from a `serde_json::Value` (as the dynamic client converts)
//!   gives the same value as decoding the text;
//! - a kind made dynamic and typed again is unchanged;
//! - for kinds with metadata, decoding with `managedFields` skipped gives
//!   the full decoding without its `managedFields`.
#![no_main]

use std::cell::{Cell, OnceCell};
use std::fmt::Debug;

use k8s_client::api::core::v1::{ConfigMap, Endpoints, Event, Node, Pod, PodList, Secret, Service};
use k8s_client_runtime::Resource;
use k8s_client_runtime::codec::{DecodeOptions, DecodeWith, decode_json, decode_json_with};
use k8s_client_runtime::dynamic::DynamicObject;
use k8s_client_runtime::object::{Metadata as _, Object};
use k8s_client_runtime::rest::Status;
use libfuzzer_sys::fuzz_target;
use serde::Serialize;
use serde::de::DeserializeOwned;

fuzz_target!(|data: &[u8]| {
    let input = Input { data, tree: OnceCell::new() };
    if let Some(pod) = round_trip::<Pod>(&input) {
        through_dynamic(&pod);
        without_managed_fields(data, pod);
    }
    if let Some(list) = round_trip::<PodList>(&input) {
        let skipped: PodList =
            decode_json_with(data, DecodeOptions::WITHOUT_MANAGED_FIELDS).expect("skipping can only drop errors");
        let mut full = list;
        full.items.iter_mut().for_each(|p| p.metadata_mut().clear_managed_fields());
        assert_eq!(full, skipped, "skipping managedFields changed more than them");
    }
    if let Some(map) = round_trip::<ConfigMap>(&input) {
        through_dynamic(&map);
        without_managed_fields(data, map);
    }
    round_trip::<Secret>(&input).inspect(through_dynamic);
    round_trip::<Node>(&input).inspect(through_dynamic);
    round_trip::<Service>(&input).inspect(through_dynamic);
    round_trip::<Endpoints>(&input).inspect(through_dynamic);
    round_trip::<Event>(&input).inspect(through_dynamic);
    if let Some(object) = round_trip::<DynamicObject>(&input) {
        without_managed_fields(data, object);
    }
    round_trip::<Status>(&input);
    let _ = Status::from_body(data);
    let _ = Status::from_http(500, data, "GET", "/api/v1/pods");
});

/// serde_json's errors for what it does not check in a value it skips.
const SKIPPED_UNCHECKED: [&str; 3] = ["surrogate", "end of hex escape", "number out of range"];

/// The bytes, and their JSON tree once a type needs it.
struct Input<'a> {
    data: &'a [u8],
    tree: OnceCell<Option<serde_json::Value>>,
}

impl Input<'_> {
    /// The JSON tree every type's decoding must agree with; `None` where
    /// the bytes leave room for two readings:
    /// - bytes that are not UTF-8, a `\u` escape of half a surrogate pair
    ///   or a number beyond `f64` decode as a kind when they are in a field
    ///   it ignores (serde_json, as Go, skips an unknown field's value
    ///   checking only its syntax), but never as a tree, which keeps them;
    /// - an object that holds a key twice: a tree keeps the last value,
    ///   while the kinds, as Go's `encoding/json`, decode the second value
    ///   of a struct field into what the first one filled in.
    fn tree(&self) -> Option<&serde_json::Value> {
        self.tree
            .get_or_init(|| {
                let text = std::str::from_utf8(self.data).ok()?;
                if has_duplicate_keys(text) {
                    return None;
                }
                match serde_json::from_str(text) {
                    Ok(tree) => Some(tree),
                    // "lone leading surrogate in hex escape", a leading one
                    // not followed by `\u` ("unexpected end of hex escape"),
                    // "number out of range".
                    Err(e) if SKIPPED_UNCHECKED.iter().any(|m| e.to_string().contains(m)) => None,
                    Err(e) => panic!("text decodes as a type but not as JSON: {e}"),
                }
            })
            .as_ref()
    }
}

/// Decodes the input as `T`; if it is one, checks its round trips.
fn round_trip<T>(input: &Input) -> Option<T>
where
    T: DeserializeOwned + Serialize + PartialEq + Debug,
{
    let value: T = decode_json(input.data).ok()?;
    let text = serde_json::to_string(&value).expect("a decoded value encodes");
    let again: T = decode_json(text.as_bytes())
        .unwrap_or_else(|e| panic!("the encoding of a decoded {} does not decode: {e}\n{text}", type_name::<T>()));
    let text_again = serde_json::to_string(&again).expect("a decoded value encodes");
    if value == again {
        assert_eq!(text, text_again, "a {} encodes differently after a round trip", type_name::<T>());
    } else {
        // The one known loss, as in Go: an optional time given as the zero
        // time (`"0001-01-01T00:00:00Z"`) is written as `null`, as
        // apimachinery writes a zero `Time`/`MicroTime`, and `null` reads
        // back as absent, as Go reads it into a nil `*metav1.Time`.
        // Anything else that changes is a bug.
        assert_eq!(
            without_nulls(serde_json::from_str(&text).expect("encodings are JSON")),
            without_nulls(serde_json::from_str(&text_again).expect("encodings are JSON")),
            "a {} changed through its encoding by more than null fields\n{text}",
            type_name::<T>()
        );
        let third: T = decode_json(text_again.as_bytes()).expect("a second encoding decodes");
        assert_eq!(again, third, "a {} still changes after a second round trip\n{text_again}", type_name::<T>());
    }

    if let Some(tree) = input.tree() {
        let from_tree: T = serde_json::from_value(tree.clone())
            .unwrap_or_else(|e| panic!("a {} decodes from text but not from a JSON value: {e}", type_name::<T>()));
        assert_eq!(value, from_tree, "a {} decodes differently from a JSON value", type_name::<T>());
    }
    Some(value)
}

/// A kind made a [`DynamicObject`] and typed again is what it was once
/// written and read (which settles the known loss of `round_trip`).
fn through_dynamic<T>(value: &T)
where
    T: Resource + DeserializeOwned + Serialize + PartialEq + Debug,
{
    let settled: T = decode_json(serde_json::to_string(value).expect("encodes").as_bytes()).expect("decodes");
    let dynamic = DynamicObject::from_typed(&settled)
        .unwrap_or_else(|e| panic!("a {} does not convert to a DynamicObject: {e}", type_name::<T>()));
    let typed: T = dynamic
        .try_into_typed()
        .unwrap_or_else(|e| panic!("a dynamic {} does not convert back: {e}", type_name::<T>()));
    assert_eq!(settled, typed, "a {} changed through a DynamicObject", type_name::<T>());
}

/// Decoding without `managedFields` gives the full decoding minus them.
fn without_managed_fields<T>(data: &[u8], mut full: T)
where
    T: Object + DecodeWith + PartialEq + Debug,
{
    let skipped: T =
        decode_json_with(data, DecodeOptions::WITHOUT_MANAGED_FIELDS).expect("skipping can only drop errors");
    full.metadata_mut().clear_managed_fields();
    assert_eq!(full, skipped, "skipping managedFields changed more than them");
}

/// `value` without the object members that are `null`.
fn without_nulls(value: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::Object(map) => {
            Value::Object(map.into_iter().filter(|(_, v)| !v.is_null()).map(|(k, v)| (k, without_nulls(v))).collect())
        }
        Value::Array(items) => Value::Array(items.into_iter().map(without_nulls).collect()),
        other => other,
    }
}

/// Whether some object in the JSON `text` holds a key twice (`false` for
/// text that is not JSON).
fn has_duplicate_keys(text: &str) -> bool {
    use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

    struct Walk<'a>(&'a Cell<bool>);
    impl<'de> DeserializeSeed<'de> for Walk<'_> {
        type Value = ();
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
            d.deserialize_any(self)
        }
    }
    impl<'de> Visitor<'de> for Walk<'_> {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("JSON")
        }
        fn visit_bool<E>(self, _: bool) -> Result<(), E> {
            Ok(())
        }
        fn visit_i64<E>(self, _: i64) -> Result<(), E> {
            Ok(())
        }
        fn visit_u64<E>(self, _: u64) -> Result<(), E> {
            Ok(())
        }
        fn visit_f64<E>(self, _: f64) -> Result<(), E> {
            Ok(())
        }
        fn visit_str<E>(self, _: &str) -> Result<(), E> {
            Ok(())
        }
        fn visit_unit<E>(self) -> Result<(), E> {
            Ok(())
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
            while seq.next_element_seed(Walk(self.0))?.is_some() {}
            Ok(())
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            let mut seen = std::collections::HashSet::new();
            while let Some(key) = map.next_key::<String>()? {
                if !seen.insert(key) {
                    self.0.set(true);
                }
                map.next_value_seed(Walk(self.0))?;
            }
            Ok(())
        }
    }

    let found = Cell::new(false);
    let mut d = serde_json::Deserializer::from_str(text);
    Walk(&found).deserialize(&mut d).is_ok() && found.get()
}

fn type_name<T>() -> &'static str {
    std::any::type_name::<T>().rsplit("::").next().unwrap_or_default()
}
