//! Decoded maps of text that repeat across objects share one array.
//!
//! The pods of one ReplicaSet, DaemonSet or Job carry the same labels,
//! mostly the same annotations, and the same resource requests and limits
//! per container; so do the objects of many other kinds. As for long
//! strings ([`crate::codec::shared`]), each decoding thread keeps the maps
//! it decoded last in a small direct-mapped table, by a hash of their text;
//! a map equal to the one in its slot is a clone of it (a reference count)
//! instead of a new array.
//!
//! Only maps of text are kept (the value type gives its text through
//! `AsRef<str>`: strings, quantities), and only small ones: at most
//! [`MAX_ENTRIES`] entries and [`MAX_TEXT`] bytes of keys and values, so
//! the table (at most [`SLOTS`] maps per value type and thread) never keeps
//! large values alive, and comparing a map with its slot stays cheap. A
//! collision only replaces the slot, so input cannot make lookups slow or
//! the table grow.

use std::any::{Any, TypeId};
use std::cell::RefCell;

use super::Map;
use crate::codec::fields::Staged;

/// Larger maps are decoded into arrays of their own.
const MAX_ENTRIES: usize = 16;
/// Bytes of keys and values together.
const MAX_TEXT: usize = 512;
/// Slots per value type and thread; a power of two.
const SLOTS: usize = 256;

thread_local! {
    /// One table per value type: `Vec<Option<Map<V>>>` of [`SLOTS`] slots.
    static RECENT: RefCell<Vec<(TypeId, Box<dyn Any>)>> = const { RefCell::new(Vec::new()) };
}

/// The map of `entries` (sorted, keys unique, as text): an equal map this
/// thread decoded recently, sharing its array, or else the one `build`
/// makes of them, which is then kept. The entries are lent, not moved: six
/// of them staged on the stack are a few hundred bytes to copy.
pub(crate) fn shared<K, W, V>(entries: &mut Staged<(K, W)>, build: impl Fn(&mut Staged<(K, W)>) -> Map<V>) -> Map<V>
where
    K: AsRef<str>,
    W: AsRef<str>,
    V: Clone + AsRef<str> + 'static,
{
    let Some(slot) = slot_of(entries) else {
        return build(entries);
    };
    with_table::<V, _>(|table| match &table[slot] {
        Some(recent) if same(recent, entries) => recent.clone(),
        _ => table[slot].insert(build(entries)).clone(),
    })
    // The table is unavailable while the thread's locals are torn down.
    .unwrap_or_else(|| build(entries))
}

/// Runs `f` on this thread's table of maps of `V`, made on first use.
fn with_table<V: Clone + 'static, R>(f: impl FnOnce(&mut Vec<Option<Map<V>>>) -> R) -> Option<R> {
    RECENT
        .try_with(|tables| {
            let mut tables = tables.try_borrow_mut().ok()?;
            let id = TypeId::of::<V>();
            let index = match tables.iter().position(|(of, _)| *of == id) {
                Some(index) => index,
                None => {
                    tables.push((id, Box::new(vec![None::<Map<V>>; SLOTS])));
                    tables.len() - 1
                }
            };
            tables[index].1.downcast_mut::<Vec<Option<Map<V>>>>().map(f)
        })
        .ok()
        .flatten()
}

fn same<V: AsRef<str>, K: AsRef<str>, W: AsRef<str>>(recent: &Map<V>, entries: &[(K, W)]) -> bool {
    recent.len() == entries.len()
        && recent.iter().zip(entries).all(|((k, v), (key, value))| k == key.as_ref() && v.as_ref() == value.as_ref())
}

/// The slot of a small map of text, or `None` for a map not to keep: a hash
/// of each key's and value's length and first and last eight bytes (where
/// strings of one kind differ: a hash suffix, an image tag, a quantity).
fn slot_of<K: AsRef<str>, W: AsRef<str>>(entries: &[(K, W)]) -> Option<usize> {
    if entries.is_empty() || entries.len() > MAX_ENTRIES {
        return None;
    }
    let mut text = 0;
    let mut mixed = 0u64;
    for (key, value) in entries {
        for part in [key.as_ref(), value.as_ref()] {
            text += part.len();
            mixed = (mixed ^ fingerprint(part.as_bytes())).wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(23);
        }
    }
    if text > MAX_TEXT {
        return None;
    }
    // Fibonacci hashing: the top bits of the product are the best mixed.
    Some((mixed.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - SLOTS.trailing_zeros())) as usize)
}

fn fingerprint(bytes: &[u8]) -> u64 {
    let (head, tail) = match (bytes.first_chunk::<8>(), bytes.last_chunk::<8>()) {
        (Some(head), Some(tail)) => (u64::from_le_bytes(*head), u64::from_le_bytes(*tail)),
        // Shorter text (label values, quantities) is read a byte at a
        // time: copied into a buffer instead, each part cost a call to
        // `memcpy`.
        _ => {
            let whole = bytes.iter().fold(0u64, |n, &b| n << 8 | u64::from(b));
            (whole, whole)
        }
    };
    head ^ tail.rotate_left(29) ^ bytes.len() as u64
}

#[cfg(test)]
mod tests {
    use lean_string::LeanString;

    use super::*;

    /// Entries already decoded, looked up as they are.
    fn shared<V: Clone + AsRef<str> + 'static>(mut entries: Staged<(LeanString, V)>) -> Map<V> {
        super::shared(&mut entries, |entries| Map::from_sorted(entries.drain(..)))
    }

    fn staged(pairs: &[(&str, &str)]) -> Staged<(LeanString, LeanString)> {
        pairs.iter().map(|&(k, v)| (k.into(), v.into())).collect()
    }

    #[test]
    fn an_equal_map_shares_the_array_and_a_different_one_does_not() {
        let labels = [("app", "web"), ("pod-template-hash", "7d9c8b5f6d")];
        let a = shared(staged(&labels));
        let b = shared(staged(&labels));
        assert_eq!(a, b);
        assert_eq!(a.entries.as_ptr(), b.entries.as_ptr(), "the second decode reuses the first array");
        let c = shared(staged(&[("app", "web"), ("pod-template-hash", "5f6d7d9c8b")]));
        assert_eq!(c.get("pod-template-hash").map(|v| v.as_str()), Some("5f6d7d9c8b"));
        assert_ne!(c.entries.as_ptr(), a.entries.as_ptr());
    }

    #[test]
    fn value_types_have_tables_of_their_own() {
        #[derive(Clone, PartialEq, Debug)]
        struct Quantity(LeanString);
        impl AsRef<str> for Quantity {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }
        let text = shared(staged(&[("cpu", "100m")]));
        let quantity = shared::<Quantity>([("cpu".into(), Quantity("100m".into()))].into_iter().collect());
        assert_eq!(text["cpu"], "100m");
        assert_eq!(quantity["cpu"], Quantity("100m".into()));
        assert_eq!(shared::<Quantity>(staged_quantity()).entries.as_ptr(), quantity.entries.as_ptr());

        fn staged_quantity() -> Staged<(LeanString, Quantity)> {
            [("cpu".into(), Quantity("100m".into()))].into_iter().collect()
        }
    }

    #[test]
    fn large_maps_are_not_kept() {
        let long = "x".repeat(MAX_TEXT);
        let big = [("note", long.as_str())];
        assert_ne!(shared(staged(&big)).entries.as_ptr(), shared(staged(&big)).entries.as_ptr());
        let keys: Vec<String> = (0..=MAX_ENTRIES).map(|i| format!("k{i:02}")).collect();
        let many: Vec<(&str, &str)> = keys.iter().map(|k| (k.as_str(), "v")).collect();
        let (a, b) = (shared(staged(&many)), shared(staged(&many)));
        assert_eq!(a, b);
        assert_ne!(a.entries.as_ptr(), b.entries.as_ptr(), "over MAX_ENTRIES entries: an array of its own");
        assert!(shared(staged(&[])).is_empty());
    }

    #[test]
    fn a_shared_map_changed_by_its_owner_is_copied_first() {
        let labels = [("app", "web"), ("tier", "frontend")];
        let mut mine = shared(staged(&labels));
        mine.insert("tier".into(), "backend".into());
        *mine.get_mut("app").unwrap() = "api".into();
        let theirs = shared(staged(&labels));
        assert_eq!(theirs["tier"], "frontend", "the table's map is unchanged");
        assert_eq!(theirs["app"], "web");
        assert_eq!(mine["tier"], "backend");
        assert_eq!(mine["app"], "api");
    }

    #[test]
    fn a_collision_replaces_the_slot_and_values_stay_right() {
        let maps: Vec<[(String, String); 2]> = (0..SLOTS * 3)
            .map(|i| [("app".to_owned(), format!("web-{i}")), ("pod-template-hash".to_owned(), format!("{i:010}"))])
            .collect();
        for map in maps.iter().chain(&maps) {
            let entries: Vec<(&str, &str)> = map.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            let decoded = shared(staged(&entries));
            assert_eq!(decoded.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect::<Vec<_>>(), entries);
        }
    }
}
