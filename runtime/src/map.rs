//! [`Map`]: the string-keyed maps of Kubernetes objects (labels,
//! annotations, resource quantities, ConfigMap data, node selectors).
//!
//! These maps are small (a few entries) and mostly read, and a controller's
//! cache holds one or more of them per object. A `BTreeMap<String, String>`
//! spends a 544-byte node on even one entry, plus an allocation per key and
//! per value. A [`Map`] keeps its entries in one exactly sized, sorted array
//! of [`LeanString`]s, which hold up to 16 bytes inline, a longer key
//! decoded from JSON sharing its buffer with the same key of other objects
//! ([`crate::codec::shared`]): four labels of ordinary length take one
//! 144-byte allocation instead of nine.
//!
//! The array is reference-counted (an `ecow::EcoVec`: a pointer and a
//! length), so that equal maps can be one array. The pods of one workload
//! carry the same labels, annotations and resource quantities; the
//! generated decoders read those maps through this thread's table of recent
//! maps, and a map equal to one its thread decoded recently is a clone of
//! that one. A shared
//! array is copied before it is changed (`insert`, `get_mut`, `retain`, ...),
//! so sharing is never seen, except in memory.
//!
//! Lookups are a binary search, and an insertion shifts the entries after
//! it, which costs little at these sizes. Iteration, and encoding, are in
//! key order, as with `BTreeMap` and as the apiserver writes maps.

use std::borrow::Borrow;
use std::fmt;
use std::marker::PhantomData;

use ecow::EcoVec;
use lean_string::LeanString;
use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, Serializer};

use crate::intern::{SharedText, TextMap};
use crate::read::Staged;

mod decode;

pub use decode::TextValue;
pub(crate) use decode::deserialize_shared;
pub(crate) use decode::shared_from_text;

/// A map from string keys to `V` (by default strings), in key order.
///
/// It reads like `BTreeMap<String, V>`: `get("app")`, `contains_key`,
/// `iter()`, `insert("app", "web".into())`, `remove`. It is built
/// with `Map::from([("app", "web")])` or `collect()` from pairs of anything
/// that converts (`&str`, `String`).
///
/// Clones share the entries; changing a map whose entries are shared copies
/// them first, which is why the methods that change a map need `V: Clone`.
#[derive(PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Map<V = LeanString> {
    /// Sorted by key, keys unique.
    entries: EcoVec<(LeanString, V)>,
}

impl<V: Clone> Clone for Map<V> {
    fn clone(&self) -> Self {
        Map { entries: self.entries.clone() }
    }
}

impl<V> Default for Map<V> {
    fn default() -> Self {
        Map { entries: EcoVec::new() }
    }
}

impl<V> Map<V> {
    /// An empty map; it allocates nothing until an entry is inserted.
    pub const fn new() -> Self {
        Map { entries: EcoVec::new() }
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the map has no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn position(&self, key: &str) -> Result<usize, usize> {
        self.entries.binary_search_by(|(k, _)| k.as_str().cmp(key))
    }

    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<&V> {
        self.position(key).ok().map(|i| &self.entries[i].1)
    }

    /// Whether the map has `key`.
    pub fn contains_key(&self, key: &str) -> bool {
        self.position(key).is_ok()
    }

    /// The entries, in key order.
    pub fn iter(&self) -> Iter<'_, V> {
        Iter(self.entries.iter())
    }

    /// The keys, in order.
    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &LeanString> + ExactSizeIterator {
        self.entries.iter().map(|(k, _)| k)
    }

    /// The values, in key order.
    pub fn values(&self) -> impl DoubleEndedIterator<Item = &V> + ExactSizeIterator {
        self.entries.iter().map(|(_, v)| v)
    }

    /// Removes every entry.
    pub fn clear(&mut self) {
        self.entries.clear();
    }
}

impl<V: Clone> Map<V> {
    /// The value of `key`, to change.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut V> {
        self.position(key).ok().map(|i| &mut self.entries.make_mut()[i].1)
    }

    /// Sets `key` (a `&str`, `String` or `LeanString`) to `value`; returns
    /// the value it replaces.
    pub fn insert(&mut self, key: impl Into<LeanString>, value: V) -> Option<V> {
        let key = key.into();
        match self.position(&key) {
            Ok(i) => Some(std::mem::replace(&mut self.entries.make_mut()[i].1, value)),
            Err(i) => {
                self.entries.insert(i, (key, value));
                None
            }
        }
    }

    /// The value of `key` (a `&str`, `String` or `LeanString`), inserted
    /// from `default` first if absent.
    pub fn get_or_insert_with(&mut self, key: impl Into<LeanString>, default: impl FnOnce() -> V) -> &mut V {
        let key = key.into();
        let i = match self.position(&key) {
            Ok(i) => i,
            Err(i) => {
                self.entries.insert(i, (key, default()));
                i
            }
        };
        &mut self.entries.make_mut()[i].1
    }

    /// Removes `key`; returns its value.
    pub fn remove(&mut self, key: &str) -> Option<V> {
        self.position(key).ok().map(|i| self.entries.remove(i).1)
    }

    /// Keeps only the entries for which `keep` is true.
    pub fn retain(&mut self, mut keep: impl FnMut(&str, &mut V) -> bool) {
        self.entries.retain(|(k, v)| keep(k, v));
    }

    /// The entries, in key order, values to change.
    pub fn iter_mut(&mut self) -> IterMut<'_, V> {
        IterMut(self.entries.make_mut().iter_mut())
    }

    /// The values, in key order, to change.
    pub fn values_mut(&mut self) -> impl DoubleEndedIterator<Item = &mut V> + ExactSizeIterator {
        self.entries.make_mut().iter_mut().map(|(_, v)| v)
    }

    /// Builds a map from entries in any order; of equal keys the last wins.
    fn from_entries(mut entries: Staged<(LeanString, V)>) -> Self {
        sort(&mut entries);
        Map::from_sorted(entries.drain(..))
    }

    /// One block of exactly the entries' number.
    fn from_sorted(entries: impl ExactSizeIterator<Item = (LeanString, V)>) -> Self {
        let mut exact = EcoVec::with_capacity(entries.len());
        for entry in entries {
            exact.push(entry);
        }
        Map { entries: exact }
    }
}

/// The entries of a [`Map`], in key order.
pub struct Iter<'a, V>(std::slice::Iter<'a, (LeanString, V)>);

impl<'a, V> Iterator for Iter<'a, V> {
    type Item = (&'a LeanString, &'a V);
    fn next(&mut self) -> Option<Self::Item> {
        self.0.next().map(|(k, v)| (k, v))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl<V> DoubleEndedIterator for Iter<'_, V> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.0.next_back().map(|(k, v)| (k, v))
    }
}

impl<V> ExactSizeIterator for Iter<'_, V> {}

/// The entries of a [`Map`], in key order, values to change.
pub struct IterMut<'a, V>(std::slice::IterMut<'a, (LeanString, V)>);

impl<'a, V> Iterator for IterMut<'a, V> {
    type Item = (&'a LeanString, &'a mut V);
    fn next(&mut self) -> Option<Self::Item> {
        self.0.next().map(|(k, v)| (&*k, v))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl<V> ExactSizeIterator for IterMut<'_, V> {}

/// The entries of a [`Map`], owned, in key order (cloned when the map's
/// entries are shared).
pub struct IntoIter<V>(ecow::vec::IntoIter<(LeanString, V)>);

impl<V: Clone> Iterator for IntoIter<V> {
    type Item = (LeanString, V);
    fn next(&mut self) -> Option<Self::Item> {
        self.0.next()
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl<V: Clone> ExactSizeIterator for IntoIter<V> {}

impl<V: Clone> IntoIterator for Map<V> {
    type Item = (LeanString, V);
    type IntoIter = IntoIter<V>;
    fn into_iter(self) -> IntoIter<V> {
        IntoIter(self.entries.into_iter())
    }
}

impl<'a, V> IntoIterator for &'a Map<V> {
    type Item = (&'a LeanString, &'a V);
    type IntoIter = Iter<'a, V>;
    fn into_iter(self) -> Iter<'a, V> {
        self.iter()
    }
}

impl<'a, V: Clone> IntoIterator for &'a mut Map<V> {
    type Item = (&'a LeanString, &'a mut V);
    type IntoIter = IterMut<'a, V>;
    fn into_iter(self) -> IterMut<'a, V> {
        self.iter_mut()
    }
}

/// Keys and values convert on the way in: `[("app", "web")]` or
/// `String` pairs make a `Map` of strings.
impl<K: Into<LeanString>, W: Into<V>, V: Clone> FromIterator<(K, W)> for Map<V> {
    fn from_iter<I: IntoIterator<Item = (K, W)>>(iter: I) -> Self {
        Map::from_entries(iter.into_iter().map(|(k, v)| (k.into(), v.into())).collect())
    }
}

impl<K: Into<LeanString>, W: Into<V>, V: Clone, const N: usize> From<[(K, W); N]> for Map<V> {
    fn from(entries: [(K, W); N]) -> Self {
        entries.into_iter().collect()
    }
}

impl<K: Into<LeanString>, W: Into<V>, V: Clone> From<std::collections::BTreeMap<K, W>> for Map<V> {
    fn from(map: std::collections::BTreeMap<K, W>) -> Self {
        map.into_iter().collect()
    }
}

impl<K: Into<LeanString>, W: Into<V>, V: Clone> Extend<(K, W)> for Map<V> {
    fn extend<I: IntoIterator<Item = (K, W)>>(&mut self, iter: I) {
        for (k, v) in iter {
            self.insert(k.into(), v.into());
        }
    }
}

impl<V, Q: Borrow<str> + ?Sized> std::ops::Index<&Q> for Map<V> {
    type Output = V;
    /// # Panics
    /// When the map does not have the key, as `BTreeMap` does.
    fn index(&self, key: &Q) -> &V {
        let key = key.borrow();
        self.get(key).unwrap_or_else(|| panic!("no entry {key:?} in the map"))
    }
}

impl<V: fmt::Debug> fmt::Debug for Map<V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<V: Serialize> Serialize for Map<V> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.len()))?;
        for (k, v) in self {
            map.serialize_entry(k.as_str(), v)?;
        }
        map.end()
    }
}

impl<'de, V: Deserialize<'de> + Clone> Deserialize<'de> for Map<V> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(Map::from_entries(deserializer.deserialize_map(EntriesVisitor(PhantomData))?))
    }
}

/// What the table of recent maps needs to keep maps of `V`.
impl<V: Clone + AsRef<str> + 'static> TextMap for Map<V> {
    const ENTRY_BYTES: usize = size_of::<(LeanString, V)>();

    fn holds<K: AsRef<str>, W: AsRef<str>>(&self, entries: &[(K, W)]) -> bool {
        self.len() == entries.len()
            && self.iter().zip(entries).all(|((k, v), (key, value))| k == key.as_ref() && v.as_ref() == value.as_ref())
    }
}

/// Sorts `entries` by key; of equal keys the last wins.
fn sort<K: AsRef<str>, W>(entries: &mut Staged<(K, W)>) {
    if !entries.windows(2).all(|w| w[0].0.as_ref() < w[1].0.as_ref()) {
        // Reversed, a stable sort puts the last of equal keys first in
        // its run, and `dedup_by` keeps the first.
        entries.reverse();
        entries.sort_by(|a, b| a.0.as_ref().cmp(b.0.as_ref()));
        entries.dedup_by(|later, kept| later.0.as_ref() == kept.0.as_ref());
    }
}

/// Reads a JSON object's entries, as they come.
struct EntriesVisitor<V>(PhantomData<V>);

impl<'de, V: Deserialize<'de>> Visitor<'de> for EntriesVisitor<V> {
    type Value = Staged<(LeanString, V)>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a map")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Self::Value, A::Error> {
        let mut entries = Staged::new();
        // Keys (`app.kubernetes.io/name`, `pod-template-hash`)
        // repeat across objects: they share buffers.
        while let Some(key) = access.next_key_seed(SharedText)? {
            entries.push((key, access.next_value()?));
        }
        Ok(entries)
    }
}

#[cfg(test)]
mod tests;
