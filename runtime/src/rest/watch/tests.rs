use super::*;
use proptest::prelude::*;
use serde_json::{Value, json};

type Decoded = (Vec<Result<WatchEvent<Value>, String>>, Result<(), String>);

fn decode_all(chunks: &[&[u8]], max: usize) -> Decoded {
    let mut d = WatchDecoder::new(max);
    let mut out = Vec::new();
    for c in chunks {
        d.push(c);
        loop {
            match d.next_frame() {
                Ok(Some(f)) => out.push(decode_event::<Value>(&f).map_err(|e| e.to_string())),
                Ok(None) => break,
                Err(e) => return (out, Err(e.to_string())),
            }
        }
    }
    (out, d.finish().map_err(|e| e.to_string()))
}

fn sample_stream() -> Vec<u8> {
    let mut s = Vec::new();
    s.extend_from_slice(br#"{"type":"ADDED","object":{"metadata":{"name":"a \"}{[ x","resourceVersion":"1"}}}"#);
    s.push(b'\n');
    s.extend_from_slice(
        br#"{"type":"MODIFIED","object":{"metadata":{"name":"b\\","resourceVersion":"2"},"list":[1,{"x":"]"}]}}"#,
    );
    s.extend_from_slice(b"\r\n  ");
    // Concatenated without a separator, as the apiserver's JSON framer allows.
    s.extend_from_slice(br#"{"type":"BOOKMARK","object":{"kind":"Pod","metadata":{"resourceVersion":"3","annotations":{"k8s.io/initial-events-end":"true"}}}}"#);
    s.extend_from_slice(br#"{"type":"DELETED","object":{"metadata":{"name":"c"}}}"#);
    s.push(b'\n');
    s
}

fn check_sample(events: &[Result<WatchEvent<Value>, String>]) {
    assert_eq!(events.len(), 4);
    match &events[0] {
        Ok(WatchEvent::Added(v)) => assert_eq!(v["metadata"]["name"], "a \"}{[ x"),
        e => panic!("{e:?}"),
    }
    match &events[1] {
        Ok(WatchEvent::Modified(v)) => assert_eq!(v["metadata"]["name"], "b\\"),
        e => panic!("{e:?}"),
    }
    match &events[2] {
        Ok(WatchEvent::Bookmark(b)) => assert!(b.resource_version == "3" && b.is_initial_events_end()),
        e => panic!("{e:?}"),
    }
    assert!(matches!(&events[3], Ok(WatchEvent::Deleted(_))));
}

#[test]
fn whole_stream_in_one_chunk() {
    let s = sample_stream();
    let (events, end) = decode_all(&[&s], 1 << 20);
    check_sample(&events);
    assert!(end.is_ok());
}

#[test]
fn split_at_every_byte_position() {
    let s = sample_stream();
    for i in 0..=s.len() {
        for j in i..=s.len() {
            let (events, end) = decode_all(&[&s[..i], &s[i..j], &s[j..]], 1 << 20);
            check_sample(&events);
            assert!(end.is_ok());
        }
    }
}

#[test]
fn one_byte_at_a_time() {
    let s = sample_stream();
    let chunks: Vec<&[u8]> = s.chunks(1).collect();
    let (events, end) = decode_all(&chunks, 1 << 20);
    check_sample(&events);
    assert!(end.is_ok());
}

#[test]
fn error_event_is_typed_status() {
    let s = br#"{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure","message":"too old resource version: 1 (5)","reason":"Expired","code":410}}"#;
    let mut d = WatchDecoder::default();
    d.push(s);
    let f = d.next_frame().unwrap().unwrap();
    let err = decode_event::<Value>(&f).unwrap_err();
    assert!(err.is_gone() && err.is_resource_expired(), "{err}");
}

#[test]
fn object_before_type_and_extra_fields_decode_the_same() {
    let typed_first = br#"{"type":"MODIFIED","object":{"a":"x\"}"},"extra":[1,{"b":2}]}"#;
    let object_first = br#"{"extra":null,"object":{"a":"x\"}"},"type":"MODIFIED"}"#;
    for frame in [&typed_first[..], &object_first[..]] {
        let event = decode_event::<Value>(frame).unwrap();
        assert_eq!(event, WatchEvent::Modified(json!({"a": "x\"}"})), "{}", String::from_utf8_lossy(frame));
    }
    let bookmark = br#"{"object":{"metadata":{"resourceVersion":"7"}},"type":"BOOKMARK"}"#;
    assert!(matches!(decode_event::<Value>(bookmark).unwrap(), WatchEvent::Bookmark(b) if b.resource_version == "7"));
    let error = br#"{"object":{"kind":"Status","status":"Failure","reason":"Expired","code":410},"type":"ERROR"}"#;
    assert!(decode_event::<Value>(error).unwrap_err().is_gone());
    // An object that is not what the type says names the event, in either order.
    #[derive(Debug, serde::Deserialize, PartialEq)]
    struct Strict {
        #[allow(dead_code)]
        a: u32,
    }
    let bad = decode_event::<Strict>(br#"{"type":"ADDED","object":{"a":"text"}}"#).unwrap_err();
    assert!(bad.to_string().contains("watch event"), "{bad}");
    let bad = decode_event::<Strict>(br#"{"object":{"a":"text"},"type":"ADDED"}"#).unwrap_err();
    assert!(bad.to_string().contains("ADDED object"), "{bad}");
}

#[test]
fn huge_event_is_rejected_with_bounded_buffer() {
    let max = 1024;
    let mut d = WatchDecoder::new(max);
    d.push(br#"{"type":"ADDED","object":{"data":""#);
    let filler = vec![b'x'; 256];
    let mut failed = false;
    for _ in 0..100 {
        d.push(&filler);
        match d.next_frame() {
            Ok(None) => assert!(d.buffered() <= max + filler.len()),
            Err(e) => {
                assert!(e.to_string().contains("maximum size"), "{e}");
                failed = true;
                break;
            }
            Ok(Some(_)) => panic!("no frame expected"),
        }
    }
    assert!(failed);
    // Events up to the limit pass.
    let big = format!(r#"{{"type":"ADDED","object":{{"data":"{}"}}}}"#, "y".repeat(200_000));
    let (events, end) = decode_all(&[big.as_bytes()], 300_000);
    assert!(matches!(&events[0], Ok(WatchEvent::Added(_))) && end.is_ok());
}

#[test]
fn garbage_and_truncation_are_errors() {
    let (events, end) = decode_all(&[b"hello"], 1024);
    assert!(events.is_empty() && end.is_err());
    let (events, end) = decode_all(&[br#"{"type":"ADDED","object":{"a":1}"#], 1024);
    assert!(events.is_empty());
    assert!(end.unwrap_err().contains("ended inside"));
    let (events, _) = decode_all(&[br#"{"type":"NOPE","object":{}}"#], 1024);
    assert!(events[0].as_ref().unwrap_err().contains("unknown event type"));
    let (events, _) = decode_all(&[br#"{"type":"ADDED"}"#], 1024);
    assert!(events[0].is_err());
    let (events, _) = decode_all(&[b"{]"], 1024);
    assert!(events[0].is_err());
}

#[tokio::test]
async fn stream_adapter_yields_events_then_tail_error() {
    let s = sample_stream();
    let mut chunks: Vec<Result<Bytes, Error>> = s.chunks(7).map(|c| Ok(Bytes::copy_from_slice(c))).collect();
    chunks.push(Ok(Bytes::from_static(br#"{"type":"ADDED","obj"#)));
    let body: ByteStream = futures_util::stream::iter(chunks).boxed();
    let events: Vec<_> = watch_stream::<Value>(body, 1 << 20).collect().await;
    assert_eq!(events.len(), 5);
    assert!(events[..4].iter().all(|e| e.is_ok()));
    assert!(events[4].as_ref().unwrap_err().to_string().contains("ended inside"));
}

#[tokio::test]
async fn stream_adapter_decodes_typed_objects() {
    #[derive(Debug, serde::Deserialize, PartialEq)]
    struct Obj {
        metadata: Value,
    }
    let body: ByteStream = futures_util::stream::iter(vec![Ok(Bytes::from(sample_stream()))]).boxed();
    let events: Vec<_> = watch_stream::<Obj>(body, 1 << 20).collect().await;
    assert_eq!(events.len(), 4);
    assert!(events.iter().all(|e| e.is_ok()));
}

proptest! {
    #[test]
    fn random_objects_round_trip_through_random_chunking(
        names in proptest::collection::vec("[ -~]{0,20}", 1..8),
        cuts in proptest::collection::vec(0usize..4000, 0..10),
    ) {
        let mut stream = Vec::new();
        for (i, n) in names.iter().enumerate() {
            let ev = json!({"type": "MODIFIED", "object": {"metadata": {"name": n, "resourceVersion": i.to_string()}, "nested": [[{}], {"k": n}]}});
            stream.extend_from_slice(serde_json::to_string(&ev).unwrap().as_bytes());
            if i % 2 == 0 { stream.push(b'\n'); }
        }
        let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c % (stream.len() + 1)).collect();
        cuts.sort();
        let mut chunks = Vec::new();
        let mut last = 0;
        for c in cuts { chunks.push(&stream[last..c]); last = c; }
        chunks.push(&stream[last..]);
        let (events, end) = decode_all(&chunks, 1 << 20);
        prop_assert!(end.is_ok());
        prop_assert_eq!(events.len(), names.len());
        for (e, n) in events.iter().zip(&names) {
            match e {
                Ok(WatchEvent::Modified(v)) => prop_assert_eq!(v["metadata"]["name"].as_str(), Some(n.as_str())),
                other => prop_assert!(false, "{:?}", other),
            }
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..512), split in 0usize..512) {
        let split = split.min(data.len());
        let _ = decode_all(&[&data[..split], &data[split..]], 128);
    }
}

#[tokio::test]
async fn stream_skips_events_of_unknown_type_and_goes_on() {
    // A newer server's event type, with its object before or after the
    // type, or none at all: skipped, and the events after it still come.
    let body = concat!(
        r#"{"type":"ADDED","object":{"metadata":{"name":"a"}}}"#,
        r#"{"type":"FUTURE","object":{"metadata":{"name":"x"}}}"#,
        r#"{"object":{"metadata":{"name":"y"}},"type":"FUTURE"}"#,
        r#"{"type":"FUTURE"}"#,
        r#"{"type":"MODIFIED","object":{"metadata":{"name":"a"}}}"#,
    );
    let body: ByteStream = futures_util::stream::iter([Ok(Bytes::from_static(body.as_bytes()))]).boxed();
    let events: Vec<_> = watch_stream::<Value>(body, 1 << 20).collect().await;
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| match e {
            Ok(WatchEvent::Added(_)) => "ADDED",
            Ok(WatchEvent::Modified(_)) => "MODIFIED",
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(kinds, ["ADDED", "MODIFIED"]);
    // Decoded on its own, such an event says what it is.
    let err = decode_event::<Value>(br#"{"type":"FUTURE"}"#).unwrap_err();
    assert!(matches!(&err, Error::UnknownWatchEventType(t) if t == "FUTURE"), "{err}");
}

/// A pod whose metadata carries `managedFields`, as a watch sends it.
const MANAGED_POD: &str = r#"{"metadata":{"name":"a","resourceVersion":"3","managedFields":[{"manager":"kubectl"}]}}"#;

#[test]
fn events_decoded_with_options_skip_managed_fields_in_either_order() {
    use crate::testing::Pod;
    let typed_first = format!(r#"{{"type":"ADDED","object":{MANAGED_POD}}}"#);
    let object_first = format!(r#"{{"object":{MANAGED_POD},"type":"MODIFIED"}}"#);
    for frame in [typed_first, object_first] {
        let kept = decode_event::<Pod>(frame.as_bytes()).unwrap();
        let skipped = decode_event_with::<Pod>(frame.as_bytes(), DecodeOptions::WITHOUT_MANAGED_FIELDS).unwrap();
        let same = decode_event_with::<Pod>(frame.as_bytes(), DecodeOptions::KEEP_ALL).unwrap();
        assert_eq!(same, kept, "{frame}");
        let (WatchEvent::Added(kept) | WatchEvent::Modified(kept)) = kept else { panic!("{frame}") };
        let (WatchEvent::Added(skipped) | WatchEvent::Modified(skipped)) = skipped else { panic!("{frame}") };
        assert!(kept.metadata.managed_fields.is_some(), "{frame}");
        assert_eq!(skipped.metadata.managed_fields, None, "{frame}");
        assert_eq!(skipped.metadata.resource_version.as_deref(), Some("3"), "{frame}");
    }
    // Bookmarks and errors read the same with options.
    let error = br#"{"object":{"kind":"Status","status":"Failure","reason":"Expired","code":410},"type":"ERROR"}"#;
    assert!(decode_event_with::<Pod>(error, DecodeOptions::WITHOUT_MANAGED_FIELDS).unwrap_err().is_gone());
}

#[tokio::test]
async fn a_stream_with_options_decodes_every_object_with_them() {
    use crate::testing::Pod;
    let frames = format!(
        "{}\n{}\n",
        format_args!(r#"{{"type":"ADDED","object":{MANAGED_POD}}}"#),
        format_args!(r#"{{"object":{MANAGED_POD},"type":"DELETED"}}"#)
    );
    let body = || -> ByteStream { futures_util::stream::iter(vec![Ok(Bytes::from(frames.clone()))]).boxed() };
    let managed = |events: Vec<Result<WatchEvent<Pod>, Error>>| -> Vec<bool> {
        events
            .into_iter()
            .map(|e| match e.unwrap() {
                WatchEvent::Added(p) | WatchEvent::Modified(p) | WatchEvent::Deleted(p) => {
                    p.metadata.managed_fields.is_some()
                }
                WatchEvent::Bookmark(_) => panic!("no bookmark was sent"),
            })
            .collect()
    };
    let skip = DecodeOptions::WITHOUT_MANAGED_FIELDS;
    assert_eq!(managed(watch_stream::<Pod>(body(), 1 << 20).collect().await), [true, true]);
    assert_eq!(managed(watch_stream_with::<Pod>(body(), 1 << 20, skip).collect().await), [false, false]);
}

/// A kind decoded as generated kinds are, field by field through
/// `codec::fields`: its `managedFields` go through the `ManagedFields` seed,
/// so skipped ones are never read (not decoded and then cleared).
mod seeded {
    use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess};
    use thin_vec::ThinVec;

    use crate::codec::DecodeOptions;
    use crate::codec::fields::{DecodeFields, ManagedFields, Struct, deserialize};

    /// One `managedFields` entry.
    #[derive(Debug, Default, PartialEq)]
    pub(super) struct Entry {
        pub(super) manager: Option<String>,
    }

    #[derive(Debug, Default, PartialEq)]
    pub(super) struct Meta {
        pub(super) name: Option<String>,
        pub(super) managed_fields: Option<ThinVec<Entry>>,
    }

    #[derive(Debug, Default, PartialEq)]
    pub(super) struct Object {
        pub(super) metadata: Meta,
    }

    impl DecodeFields for Entry {
        const NAME: &'static str = "Entry";
        fn field_index(key: &str) -> Option<u16> {
            (key == "manager").then_some(0)
        }
        fn decode_field<'de, A: MapAccess<'de>>(
            &mut self,
            _index: u16,
            map: &mut A,
            _options: DecodeOptions,
        ) -> Result<(), A::Error> {
            self.manager = map.next_value()?;
            Ok(())
        }
    }

    impl DecodeFields for Meta {
        const NAME: &'static str = "Meta";
        fn field_index(key: &str) -> Option<u16> {
            Some(match key {
                "name" => 0,
                "managedFields" => 1,
                _ => return None,
            })
        }
        fn decode_field<'de, A: MapAccess<'de>>(
            &mut self,
            index: u16,
            map: &mut A,
            options: DecodeOptions,
        ) -> Result<(), A::Error> {
            match index {
                0 => self.name = map.next_value()?,
                1 => map.next_value_seed(ManagedFields(&mut self.managed_fields, options))?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            Ok(())
        }
    }

    impl DecodeFields for Object {
        const NAME: &'static str = "Object";
        fn field_index(key: &str) -> Option<u16> {
            (key == "metadata").then_some(0)
        }
        fn decode_field<'de, A: MapAccess<'de>>(
            &mut self,
            _index: u16,
            map: &mut A,
            options: DecodeOptions,
        ) -> Result<(), A::Error> {
            map.next_value_seed(Struct(&mut self.metadata, options))
        }
    }

    impl<'de> Deserialize<'de> for Object {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            deserialize(d)
        }
    }
}

/// The object of an added, modified or deleted event.
fn object_of<T: std::fmt::Debug>(event: WatchEvent<T>) -> T {
    match event {
        WatchEvent::Added(o) | WatchEvent::Modified(o) | WatchEvent::Deleted(o) => o,
        WatchEvent::Bookmark(b) => panic!("unexpected bookmark {b:?}"),
    }
}

/// The frames of one event of each kind carrying `object`, with the object
/// after its type and before it (held raw until the type is read).
fn frames_around(object: &str) -> Vec<String> {
    ["ADDED", "MODIFIED", "DELETED"]
        .iter()
        .flat_map(|kind| {
            [format!(r#"{{"type":"{kind}","object":{object}}}"#), format!(r#"{{"object":{object},"type":"{kind}"}}"#)]
        })
        .collect()
}

#[test]
fn watch_frames_of_generated_kinds_keep_or_skip_managed_fields_as_the_options_say() {
    use seeded::{Entry, Meta, Object};
    let (keep, skip) = (DecodeOptions::KEEP_ALL, DecodeOptions::WITHOUT_MANAGED_FIELDS);
    let managed = r#"{"metadata":{"managedFields":[{"manager":"kubectl"},{"manager":"kcm"}],"name":"a"}}"#;
    let entries = [Entry { manager: Some("kubectl".into()) }, Entry { manager: Some("kcm".into()) }];
    let with =
        Object { metadata: Meta { name: Some("a".into()), managed_fields: Some(entries.into_iter().collect()) } };
    let without = Object { metadata: Meta { name: Some("a".into()), managed_fields: None } };
    for frame in frames_around(managed) {
        let frame = frame.as_bytes();
        let plain = object_of(decode_event::<Object>(frame).unwrap());
        assert_eq!(plain, with, "Deserialize keeps them");
        assert_eq!(object_of(decode_event_with::<Object>(frame, keep).unwrap()), with);
        assert_eq!(object_of(decode_event_with::<Object>(frame, skip).unwrap()), without);
    }

    // Skipped means unread: entries this kind cannot decode are no error
    // when skipped, but still are when kept; and they must still be JSON.
    let undecodable = r#"{"metadata":{"name":"a","managedFields":[{"manager":7}]}}"#;
    for frame in frames_around(undecodable) {
        let frame = frame.as_bytes();
        assert_eq!(object_of(decode_event_with::<Object>(frame, skip).unwrap()), without);
        let err = decode_event_with::<Object>(frame, keep).unwrap_err();
        assert!(matches!(&err, Error::Decode { .. }), "{err}");
        assert!(decode_event::<Object>(frame).is_err());
    }
    let broken = br#"{"type":"ADDED","object":{"metadata":{"managedFields":[1,}}}"#;
    assert!(matches!(decode_event_with::<Object>(broken, skip), Err(Error::Decode { .. })));
}

#[tokio::test]
async fn a_stream_of_a_generated_kind_decodes_every_object_with_its_options() {
    let undecodable = r#"{"metadata":{"name":"a","managedFields":[{"manager":7}]}}"#;
    let body: String = frames_around(undecodable).iter().map(|frame| format!("{frame}\n")).collect();
    let body = || -> ByteStream { futures_util::stream::iter([Ok(Bytes::from(body.clone()))]).boxed() };
    let skipped: Vec<_> =
        watch_stream_with::<seeded::Object>(body(), 1 << 20, DecodeOptions::WITHOUT_MANAGED_FIELDS).collect().await;
    assert_eq!(skipped.len(), 6);
    for event in skipped {
        let object = object_of(event.unwrap());
        assert_eq!((object.metadata.name.as_deref(), object.metadata.managed_fields), (Some("a"), None));
    }
    // Kept, every one of them is read, and fails.
    let kept: Vec<_> = watch_stream_with::<seeded::Object>(body(), 1 << 20, DecodeOptions::KEEP_ALL).collect().await;
    assert!(!kept.is_empty() && kept.iter().all(Result::is_err), "{kept:?}");
}
