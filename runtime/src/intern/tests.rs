use std::cell::Cell;
use std::sync::Arc;

use proptest::prelude::*;

use super::*;

#[test]
fn a_repeated_long_string_shares_its_buffer() {
    let image = "registry.example.com/team/web:1.2.3";
    let a = shared(image);
    let b = shared(image);
    assert_eq!(a, image);
    assert_eq!(b, image);
    assert_eq!(a.as_ptr(), b.as_ptr(), "the second decode reuses the first buffer");
    // A copy made without the table has its own buffer.
    assert_ne!(LeanString::from(image).as_ptr(), a.as_ptr());
}

#[test]
fn short_and_very_long_strings_are_not_kept() {
    let short = shared("Running");
    assert_eq!(short, "Running");
    let long = "x".repeat(MAX_LEN + 1);
    let (a, b) = (shared(&long), shared(&long));
    assert_eq!(a, long.as_str());
    assert_ne!(a.as_ptr(), b.as_ptr(), "a string over MAX_LEN is copied each time");
}

#[test]
fn a_string_collision_replaces_the_slot_and_values_stay_right() {
    // More distinct strings than slots: every one still reads back as
    // itself, whatever the table evicted.
    let texts: Vec<String> = (0..STRING_SLOTS * 3).map(|i| format!("kube-api-access-{i:08}")).collect();
    for text in texts.iter().chain(&texts) {
        assert_eq!(shared(text), text.as_str());
    }
}

#[test]
fn the_bytes_of_a_kept_string_are_not_checked_again() {
    thread_local! {
        static CHECKS: Cell<usize> = const { Cell::new(0) };
    }
    fn counted(bytes: &[u8]) -> Option<&str> {
        CHECKS.with(|checks| checks.set(checks.get() + 1));
        std::str::from_utf8(bytes).ok()
    }
    on_a_fresh_thread(|| {
        let image = b"registry.example.com/team/web:1.2.3";
        let (mut a, mut b) = (LeanString::new(), LeanString::new());
        assert!(set_shared_checked(&mut a, image, counted));
        assert!(set_shared_checked(&mut b, image, counted));
        assert_eq!((a.as_str(), a.as_ptr()), ("registry.example.com/team/web:1.2.3", b.as_ptr()));
        assert_eq!(CHECKS.with(Cell::get), 1, "the second read compares bytes instead");
        // Bytes that are not UTF-8 are refused, short, kept-length or long.
        let mut bad = image.to_vec();
        bad[3] = 0xff;
        let long = [&b"x".repeat(MAX_LEN)[..], b"\xff"].concat();
        for bytes in [&b"\xff"[..], &bad, &long] {
            assert!(!set_shared_checked(&mut a, bytes, counted));
        }
    });
}

#[test]
fn a_shared_string_changed_by_its_owner_is_copied_first() {
    let key = "node.kubernetes.io/unreachable";
    let mut mine = shared(key);
    mine.push_str("-x");
    assert_eq!(shared(key), key, "the table's copy is unchanged");
    assert_eq!(mine, "node.kubernetes.io/unreachable-x");
}

#[test]
fn shared_text_reads_a_string_through_the_table() {
    let json = r#"["registry.example.com/team/web:1.2.3", "registry.example.com/team/web:1.2.3"]"#;
    let mut de = serde_json::Deserializer::from_str(json);
    struct Two;
    impl<'de> Visitor<'de> for Two {
        type Value = (LeanString, LeanString);
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("two strings")
        }
        fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            Ok((seq.next_element_seed(SharedText)?.unwrap(), seq.next_element_seed(SharedText)?.unwrap()))
        }
    }
    let (a, b) = de::Deserializer::deserialize_seq(&mut de, Two).unwrap();
    assert_eq!(a, "registry.example.com/team/web:1.2.3");
    assert_eq!(a.as_ptr(), b.as_ptr());
    let err = SharedText.deserialize(&mut serde_json::Deserializer::from_str("1")).unwrap_err();
    assert!(err.to_string().contains("expected a string"), "{err}");
}

/// A map of text as the table sees one: `N` only makes distinct types.
#[derive(Clone, Debug)]
struct Pairs<const N: usize>(Arc<[(LeanString, LeanString)]>);

impl<const N: usize> TextMap for Pairs<N> {
    const ENTRY_BYTES: usize = size_of::<(LeanString, LeanString)>();
    fn holds<K: AsRef<str>, W: AsRef<str>>(&self, entries: &[(K, W)]) -> bool {
        self.0.len() == entries.len()
            && self.0.iter().zip(entries).all(|((k, v), (key, value))| k == key.as_ref() && v == value.as_ref())
    }
}

/// A map whose entries are too wide for the bounds.
#[derive(Clone)]
struct Wide(Arc<[(LeanString, [LeanString; 2])]>);

impl TextMap for Wide {
    const ENTRY_BYTES: usize = size_of::<(LeanString, [LeanString; 2])>();
    fn holds<K: AsRef<str>, W: AsRef<str>>(&self, entries: &[(K, W)]) -> bool {
        self.0.len() == entries.len() && self.0.iter().zip(entries).all(|((k, _), (key, _))| k == key.as_ref())
    }
}

fn staged(pairs: &[(&str, &str)]) -> Staged<(String, String)> {
    pairs.iter().map(|&(k, v)| (k.to_owned(), v.to_owned())).collect()
}

/// Looks `pairs` up in the table of `M`, counting the maps built.
fn lookup<M: TextMap>(pairs: &[(&str, &str)], built: &Cell<usize>, make: fn(&[(String, String)]) -> M) -> M {
    shared_map(&mut staged(pairs), |entries| {
        built.set(built.get() + 1);
        make(entries)
    })
}

fn pairs<const N: usize>(entries: &[(String, String)]) -> Pairs<N> {
    Pairs(entries.iter().map(|(k, v)| (k.as_str().into(), v.as_str().into())).collect())
}

/// Runs `f` on a thread of its own: the tables are the thread's, and the
/// test harness may run tests one after another on one thread.
fn on_a_fresh_thread(f: impl FnOnce() + Send + 'static) {
    std::thread::spawn(f).join().unwrap();
}

#[test]
fn an_equal_map_is_shared_and_a_different_one_is_built() {
    on_a_fresh_thread(|| {
        let built = Cell::new(0);
        let labels = [("app", "web"), ("pod-template-hash", "7d9c8b5f6d")];
        let a = lookup(&labels, &built, pairs::<0>);
        let b = lookup(&labels, &built, pairs::<0>);
        assert!(Arc::ptr_eq(&a.0, &b.0), "the second lookup answers the first map");
        assert_eq!(built.get(), 1);
        let c = lookup(&[("app", "web"), ("pod-template-hash", "5f6d7d9c8b")], &built, pairs::<0>);
        assert_eq!(built.get(), 2);
        assert_eq!(c.0[1].1, "5f6d7d9c8b");
    });
}

#[test]
fn maps_of_at_most_four_types_are_kept() {
    on_a_fresh_thread(|| {
        let built = Cell::new(0);
        let labels = [("app", "web")];
        fn twice<M: TextMap>(labels: &[(&str, &str)], built: &Cell<usize>, make: fn(&[(String, String)]) -> M) {
            lookup(labels, built, make);
            lookup(labels, built, make);
        }
        twice(&labels, &built, pairs::<1>);
        twice(&labels, &built, pairs::<2>);
        twice(&labels, &built, pairs::<3>);
        twice(&labels, &built, pairs::<4>);
        assert_eq!(built.get(), MAX_MAP_TABLES, "one map built per type, then found");
        twice(&labels, &built, pairs::<5>);
        assert_eq!(built.get(), MAX_MAP_TABLES + 2, "a fifth type has no table: built each time");
        twice(&labels, &built, pairs::<1>);
        assert_eq!(built.get(), MAX_MAP_TABLES + 2, "the first four keep theirs");
    });
}

#[test]
fn maps_outside_the_bounds_are_built_each_time() {
    on_a_fresh_thread(|| {
        let built = Cell::new(0);
        let wide = |entries: &[(String, String)]| {
            Wide(entries.iter().map(|(k, v)| (k.as_str().into(), [v.as_str().into(), v.as_str().into()])).collect())
        };
        lookup(&[("app", "web")], &built, wide);
        lookup(&[("app", "web")], &built, wide);
        assert_eq!(built.get(), 2, "entries wider than MAX_ENTRY_BYTES");

        let long = "x".repeat(MAX_TEXT);
        let keys: Vec<String> = (0..=MAX_ENTRIES).map(|i| format!("k{i:02}")).collect();
        let many: Vec<(&str, &str)> = keys.iter().map(|k| (k.as_str(), "v")).collect();
        for entries in [&[("note", long.as_str())][..], &many, &[]] {
            let built = Cell::new(0);
            lookup(entries, &built, pairs::<0>);
            lookup(entries, &built, pairs::<0>);
            assert_eq!(built.get(), 2, "{} entries", entries.len());
        }
    });
}

#[test]
fn a_map_collision_replaces_the_slot_and_values_stay_right() {
    let built = Cell::new(0);
    let maps: Vec<[(String, String); 2]> = (0..MAP_SLOTS * 3)
        .map(|i| [("app".to_owned(), format!("web-{i}")), ("pod-template-hash".to_owned(), format!("{i:010}"))])
        .collect();
    for map in maps.iter().chain(&maps) {
        let entries: Vec<(&str, &str)> = map.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let found = lookup(&entries, &built, pairs::<0>);
        let read: Vec<(&str, &str)> = found.0.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        assert_eq!(read, entries);
    }
}

#[test]
fn raw_json_is_checked_unless_seen_and_reads_back() {
    on_a_fresh_thread(|| {
        let fields = r#"{"f:metadata":{"f:labels":{".":{},"f:app":{}}}}"#;
        let first = checked_raw_json(fields).unwrap();
        let again = checked_raw_json(fields).unwrap();
        assert_eq!((first.as_str(), again.as_str()), (fields, fields));
        // Text that is not JSON is refused, kept texts or not, and more
        // texts than slots all read back as themselves.
        for text in [r#"{"f:metadata":"#, "", "{} {}", fields.strip_suffix('}').unwrap()] {
            assert!(checked_raw_json(text).is_err(), "{text:?}");
        }
        let texts: Vec<String> = (0..RAW_JSON_SLOTS * 3).map(|i| format!(r#"{{"f:n{i}":{{}}}}"#)).collect();
        for text in texts.iter().chain(&texts) {
            assert_eq!(checked_raw_json(text).unwrap().as_str(), text.as_str());
        }
        let long = format!(r#"{{"f:x":"{}"}}"#, "y".repeat(MAX_RAW_JSON_LEN));
        assert_eq!(checked_raw_json(&long).unwrap().as_str(), long);
        assert!(checked_raw_json(&long[1..]).is_err());
    });
}

proptest! {
    /// Any text reads back as itself, and its slot is within the table.
    #[test]
    fn shared_strings_read_back_and_slots_stay_in_range(text in ".{0,300}") {
        let read = shared(&text);
        prop_assert_eq!(read.as_str(), text.as_str());
        let hash = fingerprint(text.as_bytes());
        prop_assert!(slot(hash, STRING_SLOTS) < STRING_SLOTS);
        prop_assert!(slot(hash, MAP_SLOTS) < MAP_SLOTS);
    }

    /// A map is found by its text, whatever types hold the text.
    #[test]
    fn maps_are_found_by_their_text(pairs in proptest::collection::btree_map("[a-z./-]{1,20}", "[a-z0-9]{0,20}", 1..8)) {
        let owned: Staged<(LeanString, LeanString)> = pairs.iter().map(|(k, v)| (k.as_str().into(), v.as_str().into())).collect();
        let borrowed: Staged<(&str, &str)> = pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        prop_assert_eq!(map_slot(&owned), map_slot(&borrowed));
    }
}
