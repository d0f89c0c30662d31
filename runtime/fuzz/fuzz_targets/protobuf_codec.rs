//! Arbitrary bytes decoded from protobuf, as responses and watch objects
//! are, into generated kinds through their generated codecs
//! (`DecodeProto`): kinds with label and annotation maps, quantities,
//! times, int-or-strings, bytes, inlined structs (a `Volume`'s source),
//! nested lists; both as a bare message and inside the `k8s\0` envelope.
//!
//! Checked for every type the bytes decode as:
//! - decoding never panics: malformed input is an `Error` naming where;
//! - encoding is stable after one decode: what the first encoding decodes
//!   to encodes to the same bytes (the first decode may normalise, as Go's
//!   does: a Time's fraction, a value field absent from the input);
//! - for kinds with metadata, decoding with `managedFields` skipped gives
//!   the full decoding without its `managedFields`.
#![no_main]

use std::fmt::Debug;

use k8s_client::api::core::v1::{ConfigMap, Event, Node, Pod, PodList, Secret, Service};
use k8s_client_runtime::codec::DecodeOptions;
use k8s_client_runtime::object::{Metadata as _, Object};
use k8s_client_runtime::protobuf::{DecodeProto, EncodeProto, Envelope};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let message = match Envelope::decode(data) {
        Ok(envelope) => envelope.raw,
        Err(_) => data,
    };
    if let Some(pod) = stable::<Pod>(message) {
        without_managed_fields(message, pod);
    }
    if let Some(list) = stable::<PodList>(message) {
        let skipped = PodList::decode(message, DecodeOptions::WITHOUT_MANAGED_FIELDS).expect("skipping can only drop errors");
        let mut full = list;
        full.items.iter_mut().for_each(|p| p.metadata_mut().clear_managed_fields());
        assert_eq!(full, skipped, "skipping managedFields changed more than them");
    }
    if let Some(map) = stable::<ConfigMap>(message) {
        without_managed_fields(message, map);
    }
    stable::<Secret>(message);
    stable::<Node>(message);
    stable::<Service>(message);
    stable::<Event>(message);
});

/// Decodes `message` as `T`; when it decodes, checks that encoding is
/// stable after one decode.
fn stable<T: DecodeProto + EncodeProto + PartialEq + Debug>(message: &[u8]) -> Option<T> {
    let value = T::decode(message, DecodeOptions::default()).ok()?;
    let first = value.encode_to_vec();
    let again = T::decode(&first, DecodeOptions::default()).expect("our own encoding decodes");
    let second = again.encode_to_vec();
    assert_eq!(first, second, "encoding is not stable after one decode: {again:?}");
    Some(value)
}

fn without_managed_fields<T>(message: &[u8], full: T)
where
    T: DecodeProto + PartialEq + Debug + Object,
{
    let skipped = T::decode(message, DecodeOptions::WITHOUT_MANAGED_FIELDS).expect("skipping can only drop errors");
    let mut full = full;
    full.metadata_mut().clear_managed_fields();
    assert_eq!(full, skipped, "skipping managedFields changed more than them");
}
