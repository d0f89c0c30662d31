//! Decoded values that repeat across objects share one buffer: this
//! thread's tables of recent strings and of recent maps of text.
//!
//! Most strings of a Kubernetes object fit a [`LeanString`]'s 16 inline
//! bytes and cost no allocation. Of the longer ones, most are the same in
//! thousands of cached objects: image names and digests, mount paths,
//! toleration and annotation keys, owner UIDs, node names, defaulted values
//! such as `/dev/termination-log` or `PreemptLowerPriority`. Likewise the
//! pods of one ReplicaSet, DaemonSet or Job carry the same labels, mostly
//! the same annotations, and the same resource requests and limits per
//! container. Each decoding thread keeps the last such values it decoded in
//! small direct-mapped tables, by a hash of their text; a value equal to the
//! one in its slot is a clone of it (a reference count) instead of a copy.
//! Watch events, decoded one object at a time, share with the objects
//! decoded before them on the same thread.
//!
//! When to use what:
//! - [`shared`]: a string decoded from text (the codec's string fields, map
//!   keys); [`SharedText`] is the serde seed that reads one so.
//! - [`set_shared_checked`]: the same from bytes not yet known to be UTF-8
//!   (the protobuf decoder's strings), checked only when no kept string has
//!   those bytes, and put straight into the field.
//! - [`shared_map`]: a small map of text (labels, annotations, quantities),
//!   staged as the text the input holds, so that a map found in the table
//!   costs no allocation at all; [`Map`](crate::Map)'s decoder uses it.
//! - [`checked_raw_json`]: JSON text held as its text (`FieldsV1`, the
//!   managedFields of the protobuf decoder), checked to be JSON only when
//!   this thread has not checked the same text recently: the pods of one
//!   ReplicaSet carry the same managedFields, and comparing the text costs
//!   a fraction of parsing it. (The copy is the caller's own; what is saved
//!   is the parse.)
//!
//! # Bounds
//!
//! A collision only replaces a slot, so input can make lookups neither slow
//! nor the tables grow; a value stays alive while a slot holds it, until
//! another value takes the slot. Per thread, at most:
//! - strings: [`STRING_SLOTS`] (1024) of 17 to [`MAX_LEN`] (256) bytes:
//!   16 bytes a slot plus a buffer of at most 16 + 256 bytes, 288 KiB;
//! - maps: [`MAX_MAP_TABLES`] (4) tables, one per value type (the runtime's
//!   strings and the generated `Quantity` make two), of [`MAP_SLOTS`] (256)
//!   maps of at most [`MAX_ENTRIES`] (16) entries of at most
//!   [`MAX_ENTRY_BYTES`] (32) bytes and [`MAX_TEXT`] (512) bytes of keys and
//!   values: 16 bytes a slot, an array of at most 16 + 16 × 32 bytes, and at
//!   most 512 bytes of text in at most 30 buffers of a 16-byte header each,
//!   1536 bytes a slot, 384 KiB a table, 1536 KiB for four;
//! - JSON texts: [`RAW_JSON_SLOTS`] (32) of at most [`MAX_RAW_JSON_LEN`]
//!   (4080) bytes: 16 bytes a slot and the text, 128 KiB.
//!
//! That is 1952 KiB in all ([`MAX_BYTES_PER_THREAD`]), besides the
//! allocator's own overhead. Values outside these limits are built as they
//! come, unshared.

use std::any::{Any, TypeId};
use std::cell::RefCell;
use std::fmt;
use std::hash::BuildHasher;

use lean_string::LeanString;
use serde::de::{self, DeserializeSeed, Deserializer, Visitor};

use crate::raw_json::RawJson;
use crate::read::Staged;

/// Strings up to this length live inline in a [`LeanString`]: nothing to share.
const INLINE: usize = 2 * size_of::<usize>();
/// Longer strings are rarely repeated, and the table should not keep large
/// values alive.
const MAX_LEN: usize = 256;
/// Strings kept per thread; a power of two.
const STRING_SLOTS: usize = 1024;

/// Larger maps are decoded into arrays of their own.
const MAX_ENTRIES: usize = 16;
/// Bytes of a map's keys and values together.
const MAX_TEXT: usize = 512;
/// Bytes of one entry of a kept map's array: a key and a value of one
/// [`LeanString`] each (or a type wrapping one, such as `Quantity`).
const MAX_ENTRY_BYTES: usize = 2 * size_of::<LeanString>();
/// Maps kept per value type and thread; a power of two.
const MAP_SLOTS: usize = 256;
/// Value types whose maps are kept; the maps of any further type are not.
const MAX_MAP_TABLES: usize = 4;

/// JSON texts kept per thread; a power of two.
const RAW_JSON_SLOTS: usize = 32;
/// Longer JSON texts are checked each time.
const MAX_RAW_JSON_LEN: usize = 4080;

/// Bytes of one slot: an optional [`LeanString`] or map handle.
const SLOT_BYTES: usize = 16;
/// The header of a shared buffer ([`LeanString`]'s or a map array's): its
/// reference count and its capacity.
const BUFFER_HEADER: usize = 16;
/// Bytes the strings' table holds at most.
const STRING_TABLE_BYTES: usize = STRING_SLOTS * (SLOT_BYTES + BUFFER_HEADER + MAX_LEN);
/// Bytes one table of maps holds at most: each map's array, and its text in
/// buffers of strings too long to be inline.
const MAP_TABLE_BYTES: usize = MAP_SLOTS
    * (SLOT_BYTES + BUFFER_HEADER + MAX_ENTRIES * MAX_ENTRY_BYTES + MAX_TEXT + MAX_TEXT / (INLINE + 1) * BUFFER_HEADER);
/// Bytes the table of JSON texts holds at most.
const RAW_JSON_TABLE_BYTES: usize = RAW_JSON_SLOTS * (SLOT_BYTES + MAX_RAW_JSON_LEN);
/// Bytes the tables of one thread hold at most, besides the allocator's own
/// overhead (see the module docs).
const MAX_BYTES_PER_THREAD: usize = STRING_TABLE_BYTES + MAX_MAP_TABLES * MAP_TABLE_BYTES + RAW_JSON_TABLE_BYTES;
// The figures the module docs state.
const _: () = assert!(MAX_BYTES_PER_THREAD == 1952 * 1024);
const _: () = assert!(size_of::<Option<LeanString>>() <= SLOT_BYTES);
const _: () = assert!(size_of::<Option<RawJson>>() <= SLOT_BYTES);

thread_local! {
    /// [`STRING_SLOTS`] slots, made on first use.
    static STRINGS: RefCell<Vec<Option<LeanString>>> = const { RefCell::new(Vec::new()) };
    /// [`RAW_JSON_SLOTS`] JSON texts checked, made on first use.
    static RAW_JSON: RefCell<Vec<Option<RawJson>>> = const { RefCell::new(Vec::new()) };
    /// One table per map type: `Vec<Option<M>>` of [`MAP_SLOTS`] slots.
    static MAPS: RefCell<Vec<(TypeId, Box<dyn Any>)>> = const { RefCell::new(Vec::new()) };
}

/// `text` as a [`LeanString`], sharing the buffer of an equal string this
/// thread decoded recently when the text is too long to be held inline
/// (and not over 256 bytes).
#[inline]
pub fn shared(text: &str) -> LeanString {
    let mut shared = LeanString::new();
    // `check` never refuses: `shared` is always set.
    set_shared_checked(&mut shared, text.as_bytes(), |_| Some(text));
    shared
}

/// Where [`set_shared_checked`] puts a string: a field of type
/// [`LeanString`], or of type `Option<LeanString>`.
pub(crate) trait StringPlace {
    /// Replaces what the place holds with `string`.
    fn put(&mut self, string: LeanString);
}

impl StringPlace for LeanString {
    #[inline(always)]
    fn put(&mut self, string: LeanString) {
        *self = string;
    }
}

impl StringPlace for Option<LeanString> {
    #[inline(always)]
    fn put(&mut self, string: LeanString) {
        *self = Some(string);
    }
}

/// [`shared`] of text given as bytes, which `check` turns into text (a
/// UTF-8 check; `None` when they are not): it is called unless the bytes
/// are those of a string the table holds, which were checked when it was
/// kept. Comparing a kept string's bytes costs less than checking them
/// again. The string is put in `place`; `false` when `check` refused the
/// bytes (the caller makes its error), and `place` is then unchanged.
///
/// Put in place rather than returned: a [`LeanString`] returned, then
/// stored, was copied through the stack up to three times as a pointer,
/// seven bytes and a tag byte, and each copy read eight bytes across two
/// earlier stores, which the processor cannot forward (a stall of a dozen
/// cycles or more). Decoding a `PodList` from protobuf spent about a tenth
/// of its time there.
#[inline(always)]
pub(crate) fn set_shared_checked<'b>(
    place: &mut impl StringPlace,
    bytes: &'b [u8],
    check: impl FnOnce(&'b [u8]) -> Option<&'b str>,
) -> bool {
    // Inline, so that a short string, most of an object's, costs no call;
    // the table's lookup stays out of line.
    if bytes.len() <= INLINE || bytes.len() > MAX_LEN {
        let Some(text) = check(bytes) else { return false };
        place.put(LeanString::from(text));
        return true;
    }
    set_in_table(place, bytes, check)
}

/// [`set_shared_checked`] of a string the table may hold.
fn set_in_table<'b>(
    place: &mut impl StringPlace,
    bytes: &'b [u8],
    check: impl FnOnce(&'b [u8]) -> Option<&'b str>,
) -> bool {
    let slot = slot(fingerprint(bytes), STRING_SLOTS);
    let hit = STRINGS.try_with(|recent| {
        let recent = recent.try_borrow().ok()?;
        let kept = recent.get(slot)?.as_ref().filter(|kept| kept.as_bytes() == bytes)?;
        place.put(kept.clone());
        Some(())
    });
    if let Ok(Some(())) = hit {
        return true;
    }
    let Some(text) = check(bytes) else { return false };
    let fresh = LeanString::from(text);
    // The table is unavailable while the thread's locals are torn down.
    let _ = STRINGS.try_with(|recent| {
        if let Ok(mut recent) = recent.try_borrow_mut() {
            if recent.is_empty() {
                recent.resize(STRING_SLOTS, None);
            }
            recent[slot] = Some(fresh.clone());
        }
    });
    place.put(fresh);
    true
}

/// `text` as [`RawJson`]: a copy of an equal text this thread checked
/// recently, or else checked to be one JSON value (the error
/// [`RawJson::from_text`]'s) and then kept.
pub fn checked_raw_json(text: &str) -> Result<RawJson, serde_json::Error> {
    if text.len() > MAX_RAW_JSON_LEN {
        return RawJson::from_text(text);
    }
    // The whole text is hashed: managedFields of different objects often
    // share their length, their start and their end.
    let slot = slot(foldhash::fast::FixedState::with_seed(0).hash_one(text), RAW_JSON_SLOTS);
    let found = RAW_JSON.try_with(|recent| {
        let recent = recent.try_borrow().ok()?;
        recent.get(slot)?.as_ref().filter(|kept| kept.as_str() == text).cloned()
    });
    if let Ok(Some(found)) = found {
        return Ok(found);
    }
    let fresh = RawJson::from_text(text)?;
    // The table is unavailable while the thread's locals are torn down.
    let _ = RAW_JSON.try_with(|recent| {
        if let Ok(mut recent) = recent.try_borrow_mut() {
            if recent.is_empty() {
                recent.resize(RAW_JSON_SLOTS, None);
            }
            recent[slot] = Some(fresh.clone());
        }
    });
    Ok(fresh)
}

/// Reads a JSON string as a [`LeanString`] through [`shared`].
pub struct SharedText;

impl<'de> DeserializeSeed<'de> for SharedText {
    type Value = LeanString;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<LeanString, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for SharedText {
    type Value = LeanString;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<LeanString, E> {
        Ok(shared(v))
    }
}

/// A map of text that [`shared_map`] can keep: [`Map`](crate::Map).
pub(crate) trait TextMap: Clone + 'static {
    /// Bytes of one entry of the map's array; over [`MAX_ENTRY_BYTES`], the
    /// maps are not kept.
    const ENTRY_BYTES: usize;

    /// Whether the map holds exactly `entries` (sorted, keys unique),
    /// compared as text.
    fn holds<K: AsRef<str>, W: AsRef<str>>(&self, entries: &[(K, W)]) -> bool;
}

/// The map of `entries` (sorted, keys unique, as text): an equal map this
/// thread decoded recently, sharing its array, or else the one `build`
/// makes of them, which is then kept. The entries are lent, not moved: six
/// of them staged on the stack are a few hundred bytes to copy.
pub(crate) fn shared_map<K, W, M>(entries: &mut Staged<(K, W)>, build: impl Fn(&mut Staged<(K, W)>) -> M) -> M
where
    K: AsRef<str>,
    W: AsRef<str>,
    M: TextMap,
{
    // Known when compiling: a map type the bounds do not cover is not kept.
    if size_of::<Option<M>>() > SLOT_BYTES || M::ENTRY_BYTES > MAX_ENTRY_BYTES {
        return build(entries);
    }
    let Some(slot) = map_slot(entries) else {
        return build(entries);
    };
    with_map_table::<M, _>(|table| match &table[slot] {
        Some(recent) if recent.holds(entries) => recent.clone(),
        _ => table[slot].insert(build(entries)).clone(),
    })
    // The table is unavailable while the thread's locals are torn down, or
    // when the thread already keeps maps of MAX_MAP_TABLES other types.
    .unwrap_or_else(|| build(entries))
}

/// Runs `f` on this thread's table of maps of type `M`, made on first use.
fn with_map_table<M: TextMap, R>(f: impl FnOnce(&mut Vec<Option<M>>) -> R) -> Option<R> {
    MAPS.try_with(|tables| {
        let mut tables = tables.try_borrow_mut().ok()?;
        let id = TypeId::of::<M>();
        let index = match tables.iter().position(|(of, _)| *of == id) {
            Some(index) => index,
            None if tables.len() < MAX_MAP_TABLES => {
                tables.push((id, Box::new(vec![None::<M>; MAP_SLOTS])));
                tables.len() - 1
            }
            None => return None,
        };
        tables[index].1.downcast_mut::<Vec<Option<M>>>().map(f)
    })
    .ok()
    .flatten()
}

/// The slot of a small map of text, or `None` for a map not to keep: the
/// [`fingerprint`]s of its keys and values, mixed in order.
fn map_slot<K: AsRef<str>, W: AsRef<str>>(entries: &[(K, W)]) -> Option<usize> {
    if entries.is_empty() || entries.len() > MAX_ENTRIES {
        return None;
    }
    let mut text = 0;
    let mut mixed = 0u64;
    for (key, value) in entries {
        for part in [key.as_ref(), value.as_ref()] {
            text += part.len();
            mixed = (mixed ^ fingerprint(part.as_bytes())).wrapping_mul(GOLDEN).rotate_left(23);
        }
    }
    if text > MAX_TEXT {
        return None;
    }
    Some(slot(mixed, MAP_SLOTS))
}

/// 2⁶⁴ divided by the golden ratio: multiplying by it spreads a hash's bits
/// over the top of the product (Fibonacci hashing).
const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

/// The hash of every table: a string's length and its first and last eight
/// bytes, where strings of one kind differ (`kube-api-access-x7k2p`, a UID,
/// an image tag, a hash suffix, a quantity). Equal strings always meet;
/// different ones that collide only replace each other in a table. With
/// `foldhash` over the whole string, [`shared`] was 5.6% of a `PodList`
/// decode's profile; 4.5% with this.
#[inline]
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

/// The slot of `hash` in a table of `slots` (a power of two): the top bits
/// of its product with [`GOLDEN`], the best mixed.
#[inline]
fn slot(hash: u64, slots: usize) -> usize {
    (hash.wrapping_mul(GOLDEN) >> (64 - slots.trailing_zeros())) as usize
}

#[cfg(test)]
mod tests;
