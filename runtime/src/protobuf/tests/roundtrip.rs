//! Written then read gives back what was written, for any values; fields a
//! reader does not know are skipped.

use proptest::prelude::*;

use super::*;
use crate::codec::ByteString;

/// A message with a field of each kind the helpers cover.
#[derive(Debug, Clone, Default, PartialEq)]
struct Sample {
    text: LeanString,
    count: Option<i32>,
    big: i64,
    flag: bool,
    ratio: f64,
    names: ThinVec<LeanString>,
    numbers: Option<ThinVec<i64>>,
    labels: Map,
    child: Option<Box<Sample>>,
    children: ThinVec<ManagedEntry>,
    data: ByteString,
    quantities: Option<Map<Quantity>>,
}

impl DecodeProto for Sample {
    const NAME: &'static str = "Sample";
    fn merge_field(&mut self, number: u32, wt: WireType, r: &mut Reader<'_>, o: DecodeOptions) -> Result<(), Error> {
        match number {
            1 => decode::value(&mut self.text, wt, r, o),
            2 => decode::option(&mut self.count, wt, r, o),
            3 => decode::value(&mut self.big, wt, r, o),
            4 => decode::value(&mut self.flag, wt, r, o),
            5 => decode::value(&mut self.ratio, wt, r, o),
            6 => decode::repeated(&mut self.names, wt, r, o),
            7 => decode::option_repeated(&mut self.numbers, wt, r, o),
            8 => decode::map(&mut self.labels, wt, r, o),
            9 => decode::option_box(&mut self.child, wt, r, o),
            10 => decode::repeated(&mut self.children, wt, r, o),
            11 => decode::value(&mut self.data, wt, r, o),
            12 => decode::option_map(&mut self.quantities, wt, r, o),
            _ => r.skip(wt),
        }
    }
}

impl EncodeProto for Sample {
    fn encode_fields(&self, w: &mut Writer) {
        encode::value(w, 1, &self.text);
        encode::option(w, 2, &self.count);
        encode::value(w, 3, &self.big);
        encode::value(w, 4, &self.flag);
        encode::value(w, 5, &self.ratio);
        encode::repeated(w, 6, &self.names);
        // `Some(empty)` writes nothing and reads back as `None`: as in Go.
        encode::repeated(w, 7, self.numbers.as_deref().unwrap_or_default());
        encode::map(w, 8, &self.labels);
        encode::option_box(w, 9, &self.child);
        encode::repeated(w, 10, &self.children);
        encode::value(w, 11, &self.data);
        encode::option_map(w, 12, &self.quantities);
    }
}

/// What [`Sample`]'s encoding keeps: an empty optional list or map is
/// written as nothing, so reads back as `None`; a `None` manager is written
/// as `""` (a non-pointer Go field), so reads back as `Some("")`.
fn normalized(mut sample: Sample) -> Sample {
    for child in &mut sample.children {
        child.manager.get_or_insert_default();
    }
    if sample.numbers.as_ref().is_some_and(|n| n.is_empty()) {
        sample.numbers = None;
    }
    if sample.quantities.as_ref().is_some_and(|q| q.is_empty()) {
        sample.quantities = None;
    }
    sample.child = sample.child.map(|c| Box::new(normalized(*c)));
    sample
}

fn text() -> impl Strategy<Value = LeanString> {
    ".{0,40}".prop_map(LeanString::from)
}

fn leaf() -> impl Strategy<Value = Sample> {
    (
        (text(), any::<Option<i32>>(), any::<i64>(), any::<bool>(), -1e300f64..1e300),
        (
            proptest::collection::vec(text(), 0..4),
            proptest::option::of(proptest::collection::vec(any::<i64>(), 0..4)),
            proptest::collection::btree_map(".{0,12}", ".{0,12}", 0..4),
            proptest::collection::vec(proptest::option::of(text()), 0..3),
            proptest::collection::vec(any::<u8>(), 0..40),
            proptest::option::of(proptest::collection::btree_map("[a-z]{1,8}", "[0-9]{1,4}[mMGK]?", 0..3)),
        ),
    )
        .prop_map(|((text, count, big, flag, ratio), (names, numbers, labels, children, data, quantities))| {
            Sample {
                text,
                count,
                big,
                flag,
                ratio,
                names: names.into_iter().collect(),
                numbers: numbers.map(|n| n.into_iter().collect()),
                labels: labels.into(),
                child: None,
                children: children.into_iter().map(|manager| ManagedEntry { manager }).collect(),
                data: ByteString(data),
                quantities: quantities.map(|q| q.into_iter().map(|(k, v)| (k, Quantity(v.into()))).collect()),
            }
        })
}

fn sample() -> impl Strategy<Value = Sample> {
    leaf().prop_recursive(3, 8, 1, |inner| {
        (leaf(), inner).prop_map(|(mut outer, child)| {
            outer.child = Some(Box::new(child));
            outer
        })
    })
}

/// A field of a number [`Sample`] does not know, of any wire type but the
/// groups.
fn unknown_field() -> impl Strategy<Value = Vec<u8>> {
    (13u32..1000, 0u8..4, any::<u64>(), proptest::collection::vec(any::<u8>(), 0..20)).prop_map(
        |(number, kind, n, bytes)| {
            let mut w = Writer::new();
            match kind {
                0 => {
                    w.key(number, WireType::Varint);
                    w.varint(n);
                }
                1 => {
                    w.key(number, WireType::Fixed64);
                    w.fixed64(n);
                }
                2 => {
                    w.key(number, WireType::Len);
                    w.bytes(&bytes);
                }
                _ => {
                    w.key(number, WireType::Fixed32);
                    w.fixed32(n as u32);
                }
            }
            w.into_vec()
        },
    )
}

proptest! {
    #[test]
    fn what_is_written_reads_back(sample in sample()) {
        let bytes = sample.encode_to_vec();
        let read = Sample::decode(&bytes, DecodeOptions::default()).unwrap();
        prop_assert_eq!(&read, &normalized(sample));
        // And writing what was read gives the same bytes.
        prop_assert_eq!(read.encode_to_vec(), bytes);
    }

    #[test]
    fn unknown_fields_anywhere_are_skipped(
        sample in leaf(),
        before in proptest::collection::vec(unknown_field(), 0..4),
        after in proptest::collection::vec(unknown_field(), 0..4),
    ) {
        let bytes = [before.concat(), sample.encode_to_vec(), after.concat()].concat();
        prop_assert_eq!(Sample::decode(&bytes, DecodeOptions::default()).unwrap(), normalized(sample));
    }

    #[test]
    fn an_older_reader_keeps_the_fields_it_knows(sample in sample()) {
        // ManagedEntry knows only field 1 (text, here); the rest is skipped.
        let entry = ManagedEntry::decode(&sample.encode_to_vec(), DecodeOptions::default()).unwrap();
        prop_assert_eq!(entry.manager, Some(sample.text));
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let _ = Sample::decode(&bytes, DecodeOptions::default());
        let _ = ObjectMeta::decode(&bytes, DecodeOptions::default());
        let _ = WatchEventFrame::decode(&bytes);
        let _ = Envelope::decode(&bytes);
    }

    #[test]
    fn frames_come_out_the_same_however_the_stream_is_cut(
        frames in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..100), 0..6),
        chunk in 1usize..64,
    ) {
        let stream: Vec<u8> = frames.iter().flat_map(|f| encode_frame(f)).collect();
        let read = go_reference::frames_in_chunks(&stream, chunk).unwrap();
        prop_assert_eq!(read, frames);
    }
}

proptest! {
    /// The reader's own paths for one- and two-byte varints agree with
    /// prost's decoder, which reads the longer ones, on any bytes: the
    /// value, the bytes taken, and whether it fails.
    #[test]
    fn varints_are_read_as_prost_reads_them(bytes in proptest::collection::vec(any::<u8>(), 0..12), n in any::<u64>()) {
        let mut ours = Reader::new(&bytes);
        let mut prost_rest = &bytes[..];
        match (ours.read_varint(), prost::encoding::decode_varint(&mut prost_rest)) {
            (Ok(ours_value), Ok(prost_value)) => {
                prop_assert_eq!(ours_value, prost_value);
                prop_assert_eq!(ours.remaining(), prost_rest.len());
            }
            (Err(_), Err(_)) => prop_assert_eq!(ours.remaining(), bytes.len(), "a failed read takes nothing"),
            (ours, prost) => prop_assert!(false, "{:?} against prost's {:?}", ours, prost),
        }
        let mut writer = Writer::new();
        writer.varint(n);
        prop_assert_eq!(Reader::new(&writer.into_vec()).read_varint().unwrap(), n);
    }
}
