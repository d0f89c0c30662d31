//! Bytes written by the Go types themselves (apimachinery and api
//! v0.35.8, each value's `Marshal()` or the serializer named), decoded and
//! encoded back byte for byte.

use super::*;
use crate::codec::IntOrStr;

/// `metav1.NewTime(time.Unix(1700000000, 123456789)).Marshal()`: the nanos
/// are dropped, written as 0.
const TIME: &str = "0880e2cfaa06 1000";
/// `(&metav1.Time{}).Marshal()`: the zero time is nothing at all.
const TIME_ZERO: &str = "";
/// `metav1.NewTime(time.Unix(0, 0)).Marshal()`.
const TIME_EPOCH: &str = "0800 1000";
/// `metav1.NewTime(time.Unix(-1, 500)).Marshal()`.
const TIME_BEFORE_EPOCH: &str = "08ffffffffffffffffff01 1000";
/// `metav1.NewMicroTime(time.Unix(1700000000, 123456789)).Marshal()`: the
/// nanos truncated to microseconds.
const MICRO_TIME: &str = "0880e2cfaa06 108094ef3a";
/// `resource.MustParse("500m").Marshal()`.
const QUANTITY: &str = "0a04 3530306d";
/// `(&resource.Quantity{}).Marshal()`.
const QUANTITY_ZERO: &str = "0a01 30";
/// `intstr.FromInt32(8080).Marshal()`.
const INTSTR_INT: &str = "0800 10903f 1a00";
/// `intstr.FromString("http").Marshal()`.
const INTSTR_STRING: &str = "0801 1000 1a04 68747470";
/// `(&runtime.RawExtension{Raw: []byte(`{"a":1}`)}).Marshal()`.
const RAW_EXTENSION: &str = "0a07 7b2261223a317d";
/// `metav1.ObjectMeta{Name: "web-0", Namespace: "default", UID: "1234",
/// ResourceVersion: "42", Generation: 3, CreationTimestamp:
/// NewTime(time.Unix(1700000000, 0)), DeletionTimestamp:
/// &NewTime(time.Unix(1700000100, 0)), DeletionGracePeriodSeconds: &30,
/// Labels: {"app": "web", "tier": "front"}, Annotations: {"note": ""},
/// Finalizers: {"a", "b"}}.Marshal()`.
const OBJECT_META: &str = "0a05 7765622d30 1200 1a07 64656661756c74 2200 2a04 31323334 3202 3432 3803
    4208 0880e2cfaa06 1000 4a08 08e4e2cfaa06 1000 501e
    5a0a 0a03 617070 1203 776562 5a0d 0a04 74696572 1205 66726f6e74 6208 0a04 6e6f7465 1200
    7201 61 7201 62";
/// `metav1.ObjectMeta{}.Marshal()`: every non-pointer field, zero.
const OBJECT_META_EMPTY: &str = "0a00 1200 1a00 2200 2a00 3200 3800 4200";
/// `corev1.ResourceRequirements{Limits: {cpu: 2, memory: 1Gi}}.Marshal()`.
const RESOURCE_REQUIREMENTS: &str = "0a0a 0a03 637075 1203 0a01 32 0a0f 0a06 6d656d6f7279 1205 0a03 314769";
/// `protobuf.NewSerializer(scheme.Scheme, scheme.Scheme).Encode(&corev1.ConfigMap{
/// TypeMeta: {v1, ConfigMap}, ObjectMeta: {Name: "cm", Namespace: "ns"},
/// Data: {"k": "v"}})`.
const ENVELOPE_CONFIGMAP: &str = "6b387300 0a0f 0a02 7631 1209 436f6e6669674d6170
    121e 0a14 0a02 636d 1200 1a02 6e73 2200 2a00 3200 3800 4200 1206 0a016b 120176
    1a00 2200";
/// `streaming.NewEncoder(protobuf.LengthDelimitedFramer.NewFrameWriter(w),
/// protobuf.NewRawSerializer(scheme.Scheme, scheme.Scheme)).Encode(
/// &metav1.WatchEvent{Type: "ADDED", Object: {Raw: ENVELOPE_CONFIGMAP}})`:
/// the apiserver's watch frame, a bare WatchEvent.
const WATCH_FRAME: &str = "00000044 0a05 4144444544 123b 0a39 6b387300 0a0f 0a02 7631 1209 436f6e6669674d6170
    121e 0a14 0a02 636d 1200 1a02 6e73 2200 2a00 3200 3800 4200 1206 0a016b 120176
    1a00 2200";

fn decode_with<T>(bytes: &[u8], decode: impl FnOnce(&mut Reader<'_>) -> Result<T, Error>) -> T {
    let mut reader = Reader::new(bytes);
    let value = decode(&mut reader).unwrap();
    assert!(reader.is_empty());
    value
}

fn encoded(encode: impl FnOnce(&mut Writer)) -> Vec<u8> {
    let mut writer = Writer::new();
    encode(&mut writer);
    writer.into_vec()
}

#[test]
fn time_agrees_with_go() {
    for (go, time) in [
        (TIME, Time::at(1_700_000_000, 0)),
        (TIME_ZERO, Time::default()),
        (TIME_EPOCH, Time::at(0, 0)),
        (TIME_BEFORE_EPOCH, Time::at(-1, 0)),
    ] {
        assert_eq!(Time::decode(&hex(go), DecodeOptions::default()).unwrap(), time, "{go}");
        assert_eq!(time.encode_to_vec(), hex(go), "{go}");
    }
    // Go drops the fraction a Time holds when writing it, and so do we.
    assert_eq!(Time::at(1_700_000_000, 123_456_789).encode_to_vec(), hex(TIME));
    assert_eq!(Time::at(-1, 500).encode_to_vec(), hex(TIME_BEFORE_EPOCH));
}

#[test]
fn micro_time_agrees_with_go() {
    let go = hex(MICRO_TIME);
    let time = decode_with(&go, special::decode_micro_time);
    assert_eq!(time, Time::at(1_700_000_000, 123_456_000).0);
    assert_eq!(encoded(|w| special::encode_micro_time(w, Time::at(1_700_000_000, 123_456_789).0)), go);
    assert_eq!(encoded(|w| special::encode_micro_time(w, time)), go);
    assert_eq!(decode_with(&[], special::decode_micro_time), CompactTimestamp::from(zero_time()));
}

#[test]
fn quantity_agrees_with_go() {
    assert_eq!(decode_with(&hex(QUANTITY), special::decode_quantity), "500m");
    assert_eq!(encoded(|w| special::encode_quantity(w, "500m")), hex(QUANTITY));
    assert_eq!(encoded(|w| special::encode_quantity(w, "")), hex(QUANTITY_ZERO));
}

#[test]
fn int_or_string_agrees_with_go() {
    for (go, value) in [(INTSTR_INT, IntOrStr::Int(8080)), (INTSTR_STRING, IntOrStr::Str("http".into()))] {
        assert_eq!(decode_with(&hex(go), special::decode_int_or_string), value);
        assert_eq!(encoded(|w| special::encode_int_or_string(w, &value)), hex(go));
    }
}

#[test]
fn raw_extension_agrees_with_go() {
    let go = hex(RAW_EXTENSION);
    let mut reader = Reader::new(&go);
    assert_eq!(special::decode_raw_extension(&mut reader).unwrap(), br#"{"a":1}"#);
    assert_eq!(encoded(|w| special::encode_raw_extension(w, br#"{"a":1}"#)), go);
}

fn populated_meta() -> ObjectMeta {
    ObjectMeta {
        name: Some("web-0".into()),
        generate_name: Some("".into()),
        namespace: Some("default".into()),
        uid: Some("1234".into()),
        resource_version: Some("42".into()),
        generation: Some(3),
        creation_timestamp: Some(Time::at(1_700_000_000, 0)),
        deletion_timestamp: Some(Time::at(1_700_000_100, 0)),
        deletion_grace_period_seconds: Some(30),
        labels: Some(Map::from([("app", "web"), ("tier", "front")])),
        annotations: Some(Map::from([("note", "")])),
        finalizers: Some(thin_vec::thin_vec!["a".into(), "b".into()]),
        ..ObjectMeta::default()
    }
}

#[test]
fn object_meta_agrees_with_go() {
    let go = hex(OBJECT_META);
    assert_eq!(ObjectMeta::decode(&go, DecodeOptions::default()).unwrap(), populated_meta());
    assert_eq!(populated_meta().encode_to_vec(), go);
}

#[test]
fn an_empty_object_meta_writes_every_non_pointer_field_as_go_does() {
    let go = hex(OBJECT_META_EMPTY);
    assert_eq!(ObjectMeta::default().encode_to_vec(), go);
    // Read back, each of those fields is present with its zero value.
    let meta = ObjectMeta::decode(&go, DecodeOptions::default()).unwrap();
    assert_eq!(meta.name.as_deref(), Some(""));
    assert_eq!(meta.generation, Some(0));
    assert_eq!(meta.creation_timestamp, Some(Time::default()));
    assert_eq!(meta.deletion_timestamp, None);
}

#[test]
fn a_map_of_quantities_agrees_with_go() {
    let go = hex(RESOURCE_REQUIREMENTS);
    let expected = ResourceRequirements {
        limits: Some(Map::from([("cpu", Quantity("2".into())), ("memory", Quantity("1Gi".into()))])),
        requests: None,
    };
    assert_eq!(ResourceRequirements::decode(&go, DecodeOptions::default()).unwrap(), expected);
    assert_eq!(expected.encode_to_vec(), go);
}

/// The ConfigMap of `ENVELOPE_CONFIGMAP`, as read: Go wrote its metadata's
/// non-pointer fields, zero, so they are present.
fn config_map() -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some("cm".into()),
            generate_name: Some("".into()),
            namespace: Some("ns".into()),
            uid: Some("".into()),
            resource_version: Some("".into()),
            generation: Some(0),
            creation_timestamp: Some(Time::default()),
            ..ObjectMeta::default()
        },
        data: Some(Map::from([("k", "v")])),
    }
}

#[test]
fn the_envelope_agrees_with_go() {
    let go = hex(ENVELOPE_CONFIGMAP);
    let envelope = Envelope::decode(&go).unwrap();
    assert_eq!((envelope.api_version, envelope.kind), ("v1", "ConfigMap"));
    assert_eq!((envelope.content_encoding, envelope.content_type), ("", ""));
    assert_eq!(envelope.decode_object::<ConfigMap>(DecodeOptions::default()).unwrap(), config_map());
    assert_eq!(envelope.encode(), go);
    assert_eq!(encode_object("v1", "ConfigMap", &config_map()), go);
}

#[test]
fn a_watch_frame_agrees_with_go() {
    let go = hex(WATCH_FRAME);
    let mut frames = FrameDecoder::new(1 << 20);
    frames.push(&go);
    let frame = frames.next_frame().unwrap().unwrap();
    assert_eq!(frames.next_frame().unwrap(), None);
    frames.finish().unwrap();

    let event = WatchEventFrame::decode(&frame).unwrap();
    assert_eq!(event.event_type, "ADDED");
    assert_eq!(event.object.kind, "ConfigMap");
    assert_eq!(event.object.decode_object::<ConfigMap>(DecodeOptions::default()).unwrap(), config_map());

    assert_eq!(encode_frame(&event.encode()), go);
    assert_eq!(encode_frame(&encode_watch_event("ADDED", &hex(ENVELOPE_CONFIGMAP))), go);
}

#[test]
fn a_watch_frame_in_an_envelope_is_read_too() {
    let bare = hex(WATCH_FRAME)[4..].to_vec();
    let wrapped =
        Envelope { api_version: "meta.k8s.io/v1", kind: "WatchEvent", raw: &bare, ..Envelope::default() }.encode();
    assert_eq!(WatchEventFrame::decode(&wrapped).unwrap(), WatchEventFrame::decode(&bare).unwrap());
}

/// Every frame of `stream`, pushed in chunks of `chunk` bytes.
pub(super) fn frames_in_chunks(stream: &[u8], chunk: usize) -> Result<Vec<bytes::Bytes>, Error> {
    let mut decoder = FrameDecoder::new(1 << 20);
    let mut frames = Vec::new();
    for piece in stream.chunks(chunk) {
        decoder.push(piece);
        while let Some(frame) = decoder.next_frame()? {
            frames.push(frame);
        }
    }
    decoder.finish()?;
    Ok(frames)
}

#[test]
fn frames_split_across_chunks_and_several_in_one_chunk_come_out_whole() {
    let one = hex(WATCH_FRAME);
    let stream: Vec<u8> = [one.clone(), encode_frame(b""), one.clone()].concat();
    for chunk in [1, 2, 3, 5, 70, 72, stream.len()] {
        let frames = frames_in_chunks(&stream, chunk).unwrap();
        assert_eq!(frames, [&one[4..], &[][..], &one[4..]], "chunks of {chunk}");
    }
}
