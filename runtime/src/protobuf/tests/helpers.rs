//! Each helper against bytes worked out by hand from the protobuf encoding
//! rules.

use super::*;
use crate::codec::ByteString;

fn written(write: impl FnOnce(&mut Writer)) -> Vec<u8> {
    let mut writer = Writer::new();
    write(&mut writer);
    writer.into_vec()
}

/// Every field of `bytes` read into `place` by `read`.
fn read_all<P>(
    bytes: &[u8],
    place: &mut P,
    read: impl Fn(&mut P, WireType, &mut Reader<'_>) -> Result<(), Error>,
) -> Result<(), Error> {
    let mut reader = Reader::new(bytes);
    while let Some((_, wire_type)) = reader.read_key()? {
        read(place, wire_type, &mut reader)?;
    }
    Ok(())
}

/// `bytes` read into a default `V` through [`decode::value`].
fn read_value<V: FieldValue>(bytes: &[u8]) -> Result<V, Error> {
    let mut value = V::default();
    read_all(bytes, &mut value, |p, wt, r| decode::value(p, wt, r, OPTIONS))?;
    Ok(value)
}

const OPTIONS: DecodeOptions = DecodeOptions::KEEP_ALL;

#[test]
fn scalars_are_varints_and_doubles_eight_bytes() {
    assert_eq!(written(|w| encode::value(w, 1, &true)), [0x08, 0x01]);
    assert_eq!(written(|w| encode::value(w, 2, &150i32)), [0x10, 0x96, 0x01]);
    // int32 -1 is sign-extended to ten bytes, as Go and protoc write it.
    assert_eq!(written(|w| encode::value(w, 1, &-1i32)), hex("08 ffffffffffffffffff01"));
    assert_eq!(written(|w| encode::value(w, 1, &-2i64)), hex("08 feffffffffffffffff01"));
    assert_eq!(written(|w| encode::value(w, 3, &1.5f64)), hex("19 000000000000f83f"));

    assert!(read_value::<bool>(&hex("0801")).unwrap());
    assert_eq!(read_value::<i32>(&hex("08ffffffffffffffffff01")).unwrap(), -1);
    assert_eq!(read_value::<i64>(&hex("08feffffffffffffffff01")).unwrap(), -2);
    assert_eq!(read_value::<f64>(&hex("19000000000000f83f")).unwrap(), 1.5);
}

#[test]
fn strings_and_bytes_are_length_delimited() {
    assert_eq!(written(|w| encode::value(w, 1, &LeanString::from("hi"))), hex("0a02 6869"));
    assert_eq!(written(|w| encode::value(w, 2, &ByteString(vec![0, 255]))), hex("1202 00ff"));
    assert_eq!(read_value::<LeanString>(&hex("0a02 6869")).unwrap(), "hi");
    assert_eq!(read_value::<ByteString>(&hex("1202 00ff")).unwrap(), ByteString(vec![0, 255]));
    // A long string shares its buffer with an equal one read before.
    let long = "an image name longer than sixteen bytes";
    let bytes = written(|w| encode::value(w, 1, &LeanString::from(long)));
    let (a, b) = (read_value::<LeanString>(&bytes).unwrap(), read_value::<LeanString>(&bytes).unwrap());
    assert_eq!(a.as_str().as_ptr(), b.as_str().as_ptr());
}

#[test]
fn a_present_zero_value_is_some_and_none_is_left_out_or_written_as_zero() {
    let mut name: Option<LeanString> = None;
    read_all(&hex("0a00"), &mut name, |p, wt, r| decode::option(p, wt, r, OPTIONS)).unwrap();
    assert_eq!(name.as_deref(), Some(""));
    let mut count: Option<i32> = None;
    read_all(&hex("0800"), &mut count, |p, wt, r| decode::option(p, wt, r, OPTIONS)).unwrap();
    assert_eq!(count, Some(0));

    assert_eq!(written(|w| encode::option::<i32>(w, 1, &None)), b"");
    assert_eq!(written(|w| encode::option(w, 1, &Some(0i32))), hex("0800"));
    assert_eq!(written(|w| encode::option_or_default::<i32>(w, 1, &None)), hex("0800"));
    assert_eq!(written(|w| encode::option_or_default::<LeanString>(w, 1, &None)), hex("0a00"));
    assert_eq!(written(|w| encode::option_box::<ObjectMeta>(w, 1, &None)), b"");
    assert_eq!(written(|w| encode::option_box_or_default::<ManagedEntry>(w, 1, &None)), hex("0a02 0a00"));
    assert_eq!(written(|w| encode::unless_default(w, 1, &ByteString::default())), b"");
    assert_eq!(written(|w| encode::unless_default(w, 1, &ByteString(vec![1]))), hex("0a01 01"));
}

#[test]
fn a_zero_value_read_unless_default_is_none_and_the_last_value_wins() {
    let read = |bytes: &str, name: &mut Option<LeanString>| {
        read_all(&hex(bytes), name, |p, wt, r| decode::option_unless_default(p, wt, r, OPTIONS))
    };
    let long = "an image name longer than sixteen bytes";
    let mut name = None;
    read("0a03 616263", &mut name).unwrap();
    assert_eq!(name.as_deref(), Some("abc"));
    // A later empty value replaces the earlier one, and is none.
    read("0a03 616263 0a00", &mut name).unwrap();
    assert_eq!(name, None);
    let mut bytes = vec![0x0a, long.len() as u8];
    bytes.extend_from_slice(long.as_bytes());
    read_all(&bytes, &mut name, |p, wt, r| decode::option_unless_default(p, wt, r, OPTIONS)).unwrap();
    assert_eq!(name.as_deref(), Some(long));
    // Not UTF-8, or not length-delimited: an error.
    assert!(matches!(read("0a01 ff", &mut None).unwrap_err().kind(), ErrorKind::InvalidUtf8 { .. }));
    assert!(matches!(read("0800", &mut None).unwrap_err().kind(), ErrorKind::WrongWireType { .. }));

    let mut count: Option<i32> = None;
    read_all(&hex("0805"), &mut count, |p, wt, r| decode::option_unless_default(p, wt, r, OPTIONS)).unwrap();
    assert_eq!(count, Some(5));
    read_all(&hex("0800"), &mut count, |p, wt, r| decode::option_unless_default(p, wt, r, OPTIONS)).unwrap();
    assert_eq!(count, None);
}

#[test]
fn repeated_fields_are_unpacked_and_read_packed_too() {
    let items: ThinVec<i64> = thin_vec::thin_vec![1, 300];
    assert_eq!(written(|w| encode::repeated(w, 2, &items)), hex("1001 10ac02"));
    assert_eq!(written(|w| encode::repeated::<i64>(w, 2, &[])), b"");
    let mut read: ThinVec<i64> = ThinVec::new();
    read_all(&hex("1001 10ac02"), &mut read, |p, wt, r| decode::repeated(p, wt, r, OPTIONS)).unwrap();
    assert_eq!(read, items);
    // Packed: one length-delimited field of varints, appended to what is there.
    read_all(&hex("1203 05ac02"), &mut read, |p, wt, r| decode::repeated(p, wt, r, OPTIONS)).unwrap();
    assert_eq!(&read[..], [1, 300, 5, 300]);

    let mut names: Option<ThinVec<LeanString>> = None;
    read_all(&hex("0a01 61 0a00"), &mut names, |p, wt, r| decode::option_repeated(p, wt, r, OPTIONS)).unwrap();
    assert_eq!(names.as_deref(), Some(&["a".into(), "".into()][..]));
}

#[test]
fn repeated_messages_decode_in_place_and_nested_lengths_are_put_before_them() {
    let entries: ThinVec<ManagedEntry> =
        thin_vec::thin_vec![ManagedEntry { manager: Some("kubectl".into()) }, ManagedEntry { manager: None }];
    let bytes = written(|w| encode::repeated(w, 17, &entries));
    assert_eq!(bytes, hex("8a01 09 0a07 6b7562656374 6c 8a01 02 0a00"));
    let mut read: ThinVec<ManagedEntry> = ThinVec::new();
    read_all(&bytes, &mut read, |p, wt, r| decode::repeated(p, wt, r, OPTIONS)).unwrap();
    assert_eq!(read[0], entries[0]);
    assert_eq!(read[1].manager.as_deref(), Some(""));

    // A message of 128 bytes or more: a two-byte length, the body moved.
    let long = ManagedEntry { manager: Some("m".repeat(200).into()) };
    let bytes = written(|w| encode::value(w, 1, &long));
    assert_eq!(bytes[..6], hex("0acb01 0ac801"));
    assert_eq!(bytes.len(), 6 + 200);
    assert_eq!(read_value::<ManagedEntry>(&bytes).unwrap(), long);
}

#[test]
fn maps_are_entry_messages_in_key_order() {
    let labels: Map = Map::from([("b", "2"), ("a", "1")]);
    let bytes = written(|w| encode::map(w, 11, &labels));
    assert_eq!(bytes, hex("5a06 0a0161 120131 5a06 0a0162 120132"));
    let mut read: Map = Map::new();
    read_all(&bytes, &mut read, |p, wt, r| decode::map(p, wt, r, OPTIONS)).unwrap();
    assert_eq!(read, labels);
    // An entry without a value is the empty string; a repeated key, the later wins.
    read_all(&hex("5a03 0a0161 5a06 0a0163 120133"), &mut read, |p, wt, r| decode::map(p, wt, r, OPTIONS)).unwrap();
    assert_eq!(read, Map::from([("a", ""), ("b", "2"), ("c", "3")]));
    assert_eq!(written(|w| encode::option_map::<LeanString>(w, 11, &None)), b"");

    // `ExtraValue` values: a message of repeated strings.
    let extra: Map<ThinVec<LeanString>> = Map::from([("groups", thin_vec::thin_vec!["x".into(), "y".into()])]);
    let bytes = written(|w| encode::map(w, 4, &extra));
    assert_eq!(bytes, hex("2210 0a06 67726f757073 1206 0a0178 0a0179"));
    let mut read = Map::new();
    read_all(&bytes, &mut read, |p, wt, r| decode::map(p, wt, r, OPTIONS)).unwrap();
    assert_eq!(read, extra);
}

#[test]
fn managed_fields_are_skipped_when_the_options_say_so() {
    let bytes = hex("8a01 09 0a07 6b7562656374 6c");
    let keep = ObjectMeta::decode(&bytes, DecodeOptions::KEEP_ALL).unwrap();
    assert_eq!(keep.managed_fields.unwrap()[0].manager.as_deref(), Some("kubectl"));
    let skip = ObjectMeta::decode(&bytes, DecodeOptions::WITHOUT_MANAGED_FIELDS).unwrap();
    assert_eq!(skip, ObjectMeta::default());
}

#[test]
fn unknown_fields_of_every_wire_type_are_skipped_and_groups_refused() {
    // name = "a", then fields 20 to 23 as varint, i64, len and i32, then uid = "b".
    let bytes = hex("0a0161 a001 ac02 a901 0102030405060708 b201 03 aabbcc bd01 01020304 2a0162");
    let meta = ObjectMeta::decode(&bytes, OPTIONS).unwrap();
    assert_eq!((meta.name.as_deref(), meta.uid.as_deref()), (Some("a"), Some("b")));

    let error = ObjectMeta::decode(&hex("a3 01"), OPTIONS).unwrap_err();
    assert_eq!(error.innermost(), &ErrorKind::Group(WireType::StartGroup));
    assert_eq!(error.path(), [("ObjectMeta", Some(20))]);
    assert_eq!(error.to_string(), "ObjectMeta field 20 (SGROUP): groups (SGROUP) are not supported");
}

#[test]
fn errors_name_the_message_the_field_and_the_wire_type() {
    // name written as a varint.
    let error = ObjectMeta::decode(&hex("0801"), OPTIONS).unwrap_err();
    assert_eq!(error.to_string(), "ObjectMeta field 1 (VARINT): expected wire type LEN, found VARINT");

    // A label value that is not UTF-8, inside a ConfigMap's metadata.
    let error = ConfigMap::decode(&hex("0a09 5a07 0a0161 1202 c328"), OPTIONS).unwrap_err();
    assert_eq!(
        error.to_string(),
        "ConfigMap field 1 (LEN) > ObjectMeta field 11 (LEN) > map entry field 2 (LEN): \
         string is not UTF-8 (valid up to byte 0 of 2)"
    );
    assert_eq!(error.path(), [("ConfigMap", Some(1)), ("ObjectMeta", Some(11)), ("map entry", Some(2))]);

    // A length past the end of the message.
    let error = ObjectMeta::decode(&hex("0a05 6162"), OPTIONS).unwrap_err();
    assert_eq!(error.to_string(), "ObjectMeta field 1 (LEN): length 5 runs past the end of the data (2 bytes left)");

    // A key cut short, a key of field 0, a wire type that does not exist.
    let error = ObjectMeta::decode(&hex("0a0161 80"), OPTIONS).unwrap_err();
    assert_eq!(error.to_string(), "ObjectMeta key at byte 3: varint runs past the end of the data");
    assert_eq!(ObjectMeta::decode(&hex("00"), OPTIONS).unwrap_err().innermost(), &ErrorKind::InvalidKey { key: 0 });
    assert_eq!(ObjectMeta::decode(&hex("0e"), OPTIONS).unwrap_err().innermost(), &ErrorKind::InvalidWireType(6));
    // An overlong varint.
    let error = ObjectMeta::decode(&hex("38 ffffffffffffffffffff01"), OPTIONS).unwrap_err();
    assert_eq!(error.innermost(), &ErrorKind::InvalidVarint);
}

#[test]
fn nesting_is_bounded() {
    // A recursive type, as JSONSchemaProps is.
    #[derive(Debug, Default, PartialEq)]
    struct Node(Option<Box<Node>>);
    impl DecodeProto for Node {
        const NAME: &'static str = "Node";
        fn merge_field(
            &mut self,
            number: u32,
            wt: WireType,
            r: &mut Reader<'_>,
            o: DecodeOptions,
        ) -> Result<(), Error> {
            match number {
                1 => decode::option_box(&mut self.0, wt, r, o),
                _ => r.skip(wt),
            }
        }
    }
    impl EncodeProto for Node {
        fn encode_fields(&self, w: &mut Writer) {
            encode::option_box(w, 1, &self.0);
        }
    }
    let nest = |depth: usize| (0..depth).fold(Node(None), |inner, _| Node(Some(Box::new(inner))));
    let bytes = nest(MAX_DEPTH).encode_to_vec();
    assert_eq!(Node::decode(&bytes, OPTIONS).unwrap(), nest(MAX_DEPTH));
    let error = Node::decode(&nest(MAX_DEPTH + 1).encode_to_vec(), OPTIONS).unwrap_err();
    assert_eq!(error.innermost(), &ErrorKind::TooDeep(MAX_DEPTH));
    assert_eq!(error.path().len(), MAX_DEPTH + 1);
}

#[test]
fn special_types_refuse_what_go_cannot_mean() {
    let error = special::decode_int_or_string(&mut Reader::new(&hex("0802"))).unwrap_err();
    assert_eq!(error.to_string(), "IntOrString field 1 (VARINT): IntOrString type 2 is neither 0 (int) nor 1 (string)");
    let error = special::decode_time(&mut Reader::new(&hex("08 ffffffffffffffff7f"))).unwrap_err();
    assert!(matches!(error.kind(), ErrorKind::TimeOutOfRange { .. }), "{error}");
    // MicroTime nanos beyond a second carry into the seconds, as Go's time.Unix.
    let time = special::decode_micro_time(&mut Reader::new(&hex("0800 1080a8d6b907"))).unwrap();
    assert_eq!(time, Time::at(2, 0).0);
}

#[test]
fn the_envelope_refuses_what_is_not_one_and_says_what_it_got() {
    let error = Envelope::decode(br#"{"kind":"Pod"}"#).unwrap_err();
    assert_eq!(
        error.to_string(),
        r#"not a Kubernetes protobuf message: expected the prefix "k8s\0", received "{\"kind\":" (7b 22 6b 69 6e 64 22 3a, 14 bytes in all)"#
    );
    assert_eq!(
        Envelope::decode(b"k8s").unwrap_err().to_string(),
        r#"not a Kubernetes protobuf message: expected the prefix "k8s\0", received "k8s" (6b 38 73)"#
    );
    assert!(Envelope::decode(b"").unwrap_err().to_string().ends_with("received no data"));
    assert_eq!(Envelope::decode(b"k8s\0").unwrap_err(), ErrorKind::EmptyBody);

    let bytes =
        Envelope { api_version: "v1", kind: "Pod", raw: b"\x0a\x00", content_encoding: "", content_type: "" }.encode();
    assert_eq!(bytes, hex("6b387300 0a09 0a02 7631 1203 506f64 1202 0a00 1a00 2200"));
    let envelope = Envelope::decode(&bytes).unwrap();
    assert_eq!((envelope.api_version, envelope.kind, envelope.raw), ("v1", "Pod", &b"\x0a\x00"[..]));
}

#[test]
fn frames_over_the_maximum_are_refused_before_they_are_buffered() {
    let mut decoder = FrameDecoder::new(16);
    decoder.push(&[0, 0, 0, 17]);
    assert_eq!(decoder.next_frame().unwrap_err(), ErrorKind::FrameTooLarge { length: 17, max: 16 });
    assert_eq!(decoder.buffered(), 0);
    assert_eq!(decoder.next_frame().unwrap_err(), ErrorKind::DecoderFailed);

    let mut decoder = FrameDecoder::new(16);
    decoder.push(&[0, 0, 0, 3, 1]);
    assert_eq!(decoder.next_frame().unwrap(), None);
    assert_eq!(decoder.finish().unwrap_err(), ErrorKind::TruncatedStream { buffered: 5 });
}

#[test]
fn a_watch_event_without_an_object_or_with_a_bad_one_says_so() {
    let error = WatchEventFrame::decode(&hex("0a05 4144444544")).unwrap_err();
    assert_eq!(error.to_string(), "WatchEvent has no field 2 (object)");
    let error = WatchEventFrame::decode(&hex("0a05 4144444544 1204 0a02 7b7d")).unwrap_err();
    assert_eq!(
        error.to_string(),
        r#"WatchEvent field 2 (LEN) > RawExtension field 1 (LEN): not a Kubernetes protobuf message: expected the prefix "k8s\0", received "{}" (7b 7d)"#
    );
}

#[test]
fn a_run_of_elements_is_sized_exactly() {
    // Three elements of field 1, then a field 2 and one more element of
    // field 1 apart from the run (not Go's writing, still read).
    let bytes = hex("0a0161 0a0162 0a0163 1001 0a0164");
    let mut list: ThinVec<LeanString> = ThinVec::new();
    read_all(
        &bytes,
        &mut list,
        |p, wt, r| if wt == WireType::Len { decode::repeated(p, wt, r, OPTIONS) } else { r.skip(wt) },
    )
    .unwrap();
    assert_eq!(list.iter().map(LeanString::as_str).collect::<Vec<_>>(), ["a", "b", "c", "d"]);
    let mut run: ThinVec<LeanString> = ThinVec::new();
    read_all(&hex("0a0161 0a0162 0a0163"), &mut run, |p, wt, r| decode::repeated(p, wt, r, OPTIONS)).unwrap();
    assert_eq!((run.len(), run.capacity()), (3, 3), "no room beyond the run's elements");
}

#[test]
fn maps_of_text_are_read_whole_and_shared_with_equal_maps() {
    let labels: Map = Map::from([("b", "2"), ("a", "1")]);
    let bytes = written(|w| encode::map(w, 11, &labels));
    let read = || {
        let mut read: Map = Map::new();
        read_all(&bytes, &mut read, decode::shared_map).unwrap();
        read
    };
    let (first, second) = (read(), read());
    assert_eq!(first, labels);
    // Keys this short live in the map's array: equal addresses, one array.
    let at = |m: &Map| m.keys().next().unwrap().as_ptr();
    assert_eq!(at(&first), at(&second), "the second decode reuses the first's array");
    // Entries of the same field given apart are added to the map.
    let mut apart: Map = Map::new();
    read_all(&hex("5a06 0a0161 120131 1001 5a06 0a0162 120132"), &mut apart, |p, wt, r| {
        if wt == WireType::Len { decode::shared_map(p, wt, r) } else { r.skip(wt) }
    })
    .unwrap();
    assert_eq!(apart, labels);
}
