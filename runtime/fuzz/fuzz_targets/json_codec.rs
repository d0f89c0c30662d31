//! Arbitrary bytes decoded, as responses and watch objects are, into
//! generated kinds through [`decode_json`]: kinds with label and annotation
//! maps, quantities, times and micro-times, int-or-strings, base64 bytes,
//! nested lists.
//!
//! Checked for every kind the bytes decode as:
//! - encoding never fails, and decoding the encoding gives an equal value,
//!   whose encoding is the same text (a round trip loses nothing), except
//!   for one documented case where Go loses the same (see `round_trip`);
//! - decoding from a `serde_json::Value` (as the dynamic client converts)
//!   gives the same value as decoding the text;
//! - for kinds with metadata, decoding with `managedFields` skipped gives
//!   the full decoding without its `managedFields`.
#![no_main]

use std::fmt::Debug;

use k8s_client::api::core::v1::{ConfigMap, Endpoints, Event, Node, Pod, PodList, Secret, Service};
use k8s_client_runtime::codec::{WithoutManagedFields, decode_json};
use k8s_client_runtime::object::{Metadata as _, Object};
use libfuzzer_sys::fuzz_target;
use serde::Serialize;
use serde::de::DeserializeOwned;

fuzz_target!(|data: &[u8]| {
    if let Some(pod) = round_trip::<Pod>(data) {
        without_managed_fields(data, pod);
    }
    if let Some(list) = round_trip::<PodList>(data) {
        let skipped: WithoutManagedFields<PodList> = decode_json(data).expect("skipping can only drop errors");
        let mut full = list;
        full.items.iter_mut().for_each(|p| p.metadata_mut().clear_managed_fields());
        assert_eq!(full, skipped.0, "skipping managedFields changed more than them");
    }
    if let Some(map) = round_trip::<ConfigMap>(data) {
        without_managed_fields(data, map);
    }
    round_trip::<Secret>(data);
    round_trip::<Node>(data);
    round_trip::<Service>(data);
    round_trip::<Endpoints>(data);
    round_trip::<Event>(data);
});

/// Decodes `data` as `T`; if it is one, checks its round trips.
fn round_trip<T>(data: &[u8]) -> Option<T>
where
    T: DeserializeOwned + Serialize + PartialEq + Debug,
{
    let value: T = decode_json(data).ok()?;
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

    // Bytes that are not UTF-8 decode as a kind when the bad bytes are in a
    // field the kind ignores (serde_json skips an unknown field's string
    // without checking it), but never as a JSON tree, which keeps them all.
    if std::str::from_utf8(data).is_ok() {
        let tree: serde_json::Value = serde_json::from_slice(data)
            .unwrap_or_else(|e| panic!("text decodes as a {} but not as JSON: {e}", type_name::<T>()));
        let from_tree: T = serde_json::from_value(tree)
            .unwrap_or_else(|e| panic!("a {} decodes from text but not from a JSON value: {e}", type_name::<T>()));
        assert_eq!(value, from_tree, "a {} decodes differently from a JSON value", type_name::<T>());
    }
    Some(value)
}

/// `WithoutManagedFields<T>` is the full decoding minus `managedFields`.
fn without_managed_fields<T>(data: &[u8], mut full: T)
where
    T: Object + DeserializeOwned + PartialEq + Debug,
{
    let skipped: WithoutManagedFields<T> = decode_json(data).expect("skipping can only drop errors");
    full.metadata_mut().clear_managed_fields();
    assert_eq!(full, skipped.0, "skipping managedFields changed more than them");
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

fn type_name<T>() -> &'static str {
    std::any::type_name::<T>().rsplit("::").next().unwrap_or_default()
}
