//! Decoding of the generated object types: one visitor, here, for every
//! struct, instead of a derived one per struct.
//!
//! A generated struct implements [`DecodeFields`]: a `match` from JSON key to
//! field number (not generic, compiled once) and a `match` from field number
//! to the code reading that field. Everything else (the map loop, unknown
//! keys, `null`s, list sizing) is written once below. Compared with
//! `#[derive(Deserialize)]` this drops the per-struct field-name visitor and
//! the sequence form no Kubernetes object uses, which is most of the code
//! rustc has to check for a generated crate.
//!
//! Objects are read **in place**: a struct-valued field, an optional boxed
//! one, or the elements of a list of structs are decoded directly into their
//! final memory, which starts as the type's `Default`. A derived visitor
//! builds each value on the stack and moves it outward, level by level; for a
//! `PodList` those copies of kilobyte-sized structs were about 6% of the
//! decoding time.
//!
//! Behaviour, as JSON sees it, is that of the derive with `#[serde(default)]`
//! on every field, and of Go's `encoding/json`: absent fields keep their
//! default, unknown keys are skipped (or kept, for kinds that preserve
//! unknown fields), and a key given twice is read twice, the later value
//! winning (objects are merged, as Go does).
//!
//! Every struct seed carries the decode's [`DecodeOptions`], from where the
//! decode started ([`DecodeWith`] for a generated struct, default options
//! for its `Deserialize`) down to each [`DecodeFields::decode_field`], which
//! hands them to the seeds of its own fields; [`ManagedFields`] reads them
//! to keep or skip `metadata.managedFields`. A field a struct reads through
//! its own `Deserialize` (a map of structs, say) is decoded with the
//! default options.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use lean_string::LeanString;
use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use thin_vec::ThinVec;

pub use crate::intern::SharedText;

mod encode;

pub use encode::{EncodeFields, FieldWriter, serialize};

use super::{DecodeOptions, DecodeWith};
use crate::map::Map;
use crate::read::Staged;
/// serde, for [`impl_codec!`](crate::impl_codec) to name from any crate.
#[doc(hidden)]
pub use serde as __serde;

/// A generated struct, decoded field by field through this module.
pub trait DecodeFields: Default {
    /// The type's name, for error messages (`struct Pod`).
    const NAME: &'static str;

    /// The number of the field a JSON key names, or `None` for a key the
    /// type does not declare.
    fn field_index(key: &str) -> Option<u16>;

    /// Reads the value of field `index` (from [`field_index`](Self::field_index))
    /// out of `map`, into `self`, with the decode's `options` (passed on to
    /// the seeds of struct-valued fields). Must read exactly one value.
    fn decode_field<'de, A: MapAccess<'de>>(
        &mut self,
        index: u16,
        map: &mut A,
        options: DecodeOptions,
    ) -> Result<(), A::Error>;

    /// Whether keys the type does not declare go to
    /// [`decode_unknown`](Self::decode_unknown) (a kind preserving unknown
    /// fields) rather than being skipped.
    const KEEPS_UNKNOWN: bool = false;

    /// Keeps the value of an undeclared key. Called only when
    /// [`KEEPS_UNKNOWN`](Self::KEEPS_UNKNOWN) is set; must read exactly one value.
    fn decode_unknown<'de, A: MapAccess<'de>>(&mut self, key: String, map: &mut A) -> Result<(), A::Error> {
        let _ = key;
        map.next_value::<IgnoredAny>().map(drop)
    }
}

/// `Deserialize::deserialize` of a generated struct: decoded with the
/// default [`DecodeOptions`] (everything kept).
pub fn deserialize<'de, T: DecodeFields, D: Deserializer<'de>>(deserializer: D) -> Result<T, D::Error> {
    T::deserialize_with(deserializer, DecodeOptions::default())
}

impl<T: DecodeFields> DecodeWith for T {
    fn deserialize_with<'de, D: Deserializer<'de>>(deserializer: D, options: DecodeOptions) -> Result<T, D::Error> {
        let mut out = T::default();
        deserializer.deserialize_map(FillVisitor(&mut out, options))?;
        Ok(out)
    }
}

/// Reads a JSON object into `place`, field by field, over what it holds
/// (a `Default` value, or an earlier value of a repeated key).
struct FillVisitor<'a, T>(&'a mut T, DecodeOptions);

impl<'de, T: DecodeFields> Visitor<'de> for FillVisitor<'_, T> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "struct {}", T::NAME)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let seed = KeySeed::<T>(PhantomData);
        while let Some(key) = map.next_key_seed(seed)? {
            match key {
                Key::Field(index) => self.0.decode_field(index, &mut map, self.1)?,
                Key::Unknown(Some(name)) => self.0.decode_unknown(name.into_owned(), &mut map)?,
                Key::Unknown(None) => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

/// A key read from the input: a declared field, or another key (its text
/// only when the type keeps undeclared fields).
enum Key<'de> {
    Field(u16),
    Unknown(Option<Cow<'de, str>>),
}

/// Reads a key of `T`, borrowing it from the input when the input allows
/// and `T` keeps undeclared keys. Generic over `T` so that the lookup is
/// inlined: called through a pointer, its target changed from one struct to
/// the next, and a `PodList` decoded 14% slower.
struct KeySeed<T>(PhantomData<T>);

impl<T> Clone for KeySeed<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for KeySeed<T> {}

impl<T: DecodeFields> KeySeed<T> {
    #[inline]
    fn key<'de>(text: &str, borrowed: Option<&'de str>) -> Key<'de> {
        match T::field_index(text) {
            Some(index) => Key::Field(index),
            None if !T::KEEPS_UNKNOWN => Key::Unknown(None),
            None => Key::Unknown(Some(borrowed.map_or_else(|| Cow::Owned(text.to_owned()), Cow::Borrowed))),
        }
    }
}

impl<'de, T: DecodeFields> DeserializeSeed<'de> for KeySeed<T> {
    type Value = Key<'de>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Key<'de>, D::Error> {
        d.deserialize_identifier(self)
    }
}

impl<'de, T: DecodeFields> Visitor<'de> for KeySeed<T> {
    type Value = Key<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a field name")
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Key<'de>, E> {
        Ok(Self::key(v, Some(v)))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Key<'de>, E> {
        Ok(Self::key(v, None))
    }
    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Key<'de>, E> {
        let text = std::str::from_utf8(v).map_err(|_| E::invalid_value(de::Unexpected::Bytes(v), &self))?;
        Ok(Self::key(text, None))
    }
}

/// Seed for a plain struct-valued field: decodes into the field in place,
/// with the decode's options. `null` is an error, as it is for the derive.
pub struct Struct<'a, T>(pub &'a mut T, pub DecodeOptions);

impl<'de, T: DecodeFields> DeserializeSeed<'de> for Struct<'_, T> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(FillVisitor(self.0, self.1))
    }
}

/// Seed for an optional struct-valued field: `null` clears it, an object is
/// decoded in place, with the decode's options.
pub struct OptionStruct<'a, T>(pub &'a mut Option<T>, pub DecodeOptions);

/// Seed for an optional boxed struct-valued field: `null` clears it, an
/// object is decoded in place, in a new box, with the decode's options.
pub struct OptionBox<'a, T>(pub &'a mut Option<Box<T>>, pub DecodeOptions);

impl<'de, T: DecodeFields> DeserializeSeed<'de> for OptionStruct<'_, T> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_option(OptionFill { place: self.0, target: |t| t, options: self.1 })
    }
}

impl<'de, T: DecodeFields> DeserializeSeed<'de> for OptionBox<'_, T> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_option(OptionFill { place: self.0, target: |b| &mut **b, options: self.1 })
    }
}

/// An optional field holding `P`, which holds the struct `T`.
struct OptionFill<'a, P, T> {
    place: &'a mut Option<P>,
    target: fn(&mut P) -> &mut T,
    options: DecodeOptions,
}

impl<'de, P: Default, T: DecodeFields> Visitor<'de> for OptionFill<'_, P, T> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "struct {} or null", T::NAME)
    }
    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        *self.place = None;
        Ok(())
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.visit_none()
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        let target = (self.target)(self.place.get_or_insert_with(P::default));
        d.deserialize_map(FillVisitor(target, self.options))
    }
}

/// Seed for a plain list field: exactly sized (a list grown by doubling
/// would keep up to half its room unused), `null` read as empty, as Go
/// clients do.
pub struct List<'a, T>(pub &'a mut ThinVec<T>);

/// Seed for an optional list field: exactly sized; `null` clears it.
pub struct OptionList<'a, T>(pub &'a mut Option<ThinVec<T>>);

/// Seed for a plain list of structs: exactly sized, `null` read as empty,
/// each element decoded in place, with the decode's options.
pub struct StructList<'a, T>(pub &'a mut ThinVec<T>, pub DecodeOptions);

/// Seed for an optional list of structs: exactly sized, `null` clears it,
/// each element decoded in place, with the decode's options.
pub struct OptionStructList<'a, T>(pub &'a mut Option<ThinVec<T>>, pub DecodeOptions);

/// How a list's elements are read: [`ByValue`] or [`InPlace`].
trait ReadElements<'de, T>: Copy {
    /// Reads the next element onto `items`; `false` at the end of the list.
    fn read_next<A: SeqAccess<'de>>(self, items: &mut Gathered<T>, seq: &mut A) -> Result<bool, A::Error>;
}

/// A list's elements as they are read: [`Staged`] while they fit, then in
/// heap blocks, each twice the size of the one before, which are never
/// grown in place: a long list (a `PodList`'s items) is moved once, into a
/// block of exactly its size, when it has been read. Grown by `realloc`
/// instead, such a list was copied at each doubling whenever the block
/// could not grow where it lay, which depended on what the heap held from
/// earlier decodes.
enum Gathered<T> {
    Staged(Staged<T>),
    Heap { full: Vec<ThinVec<T>>, last: ThinVec<T> },
}

impl<T> Gathered<T> {
    /// Adds `item`, leaving the stack when it is full.
    fn push(&mut self, item: T) -> &mut T {
        if let Gathered::Staged(staged) = self
            && staged.len() == staged.inline_size()
        {
            let mut last = ThinVec::with_capacity(2 * staged.len());
            last.extend(staged.drain(..));
            *self = Gathered::Heap { full: Vec::new(), last };
        }
        match self {
            Gathered::Staged(staged) => {
                staged.push(item);
                let at = staged.len() - 1;
                &mut staged[at]
            }
            Gathered::Heap { full, last } => {
                if last.len() == last.capacity() {
                    let next = ThinVec::with_capacity(2 * last.len());
                    full.push(std::mem::replace(last, next));
                }
                last.push(item);
                let at = last.len() - 1;
                &mut last[at]
            }
        }
    }

    /// The list read, in a block of exactly its size. Taken by reference:
    /// moved by value, the stack's room ([`Staged`], e.g. 1.4 KB for six
    /// containers) was copied whole on the way, however few elements it
    /// held.
    fn take_list(&mut self) -> ThinVec<T> {
        match self {
            Gathered::Staged(staged) => {
                let mut items = ThinVec::with_capacity(staged.len());
                items.extend(staged.drain(..));
                items
            }
            Gathered::Heap { full, last } if full.is_empty() => {
                let mut last = std::mem::take(last);
                last.shrink_to_fit();
                last
            }
            Gathered::Heap { full, last } => {
                let mut list = ThinVec::with_capacity(full.iter().map(ThinVec::len).sum::<usize>() + last.len());
                for block in full.drain(..) {
                    list.extend(block);
                }
                list.extend(std::mem::take(last));
                list
            }
        }
    }
}

/// Elements read by value.
struct ByValue<T>(PhantomData<fn() -> T>);
/// Elements decoded in place, with the decode's options.
struct InPlace<T>(DecodeOptions, PhantomData<fn() -> T>);

impl<T> Clone for ByValue<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for ByValue<T> {}

impl<T> Clone for InPlace<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for InPlace<T> {}

/// Reads a JSON list into `items`, replacing what they held, in a block of
/// exactly its size (see [`Gathered`]).
struct ListVisitor<'a, T, R> {
    items: &'a mut ThinVec<T>,
    read: R,
}

impl<'de, T: Deserialize<'de>> ReadElements<'de, T> for ByValue<T> {
    fn read_next<A: SeqAccess<'de>>(self, items: &mut Gathered<T>, seq: &mut A) -> Result<bool, A::Error> {
        let Some(item) = seq.next_element()? else { return Ok(false) };
        items.push(item);
        Ok(true)
    }
}

impl<'de, T: DecodeFields> ReadElements<'de, T> for InPlace<T> {
    fn read_next<A: SeqAccess<'de>>(self, items: &mut Gathered<T>, seq: &mut A) -> Result<bool, A::Error> {
        Ok(seq.next_element_seed(PushInPlace(items, self.0))?.is_some())
    }
}

/// Seed for one element of a list of structs: its room is made only once
/// the JSON has one more element, and it is decoded there.
struct PushInPlace<'a, T>(&'a mut Gathered<T>, DecodeOptions);

impl<'de, T: DecodeFields> DeserializeSeed<'de> for PushInPlace<'_, T> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        Struct(self.0.push(T::default()), self.1).deserialize(d)
    }
}

impl<'de, T, R: ReadElements<'de, T>> Visitor<'de> for ListVisitor<'_, T, R> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut items = Gathered::Staged(Staged::new());
        while self.read.read_next(&mut items, &mut seq)? {}
        *self.items = items.take_list();
        Ok(())
    }
}

/// `null` or a list, into a `Vec` (`null` empties it) or an `Option<Vec>`
/// (`null` clears it).
struct NullableList<'a, T, R> {
    items: &'a mut Option<ThinVec<T>>,
    read: R,
}

impl<'de, T, R: ReadElements<'de, T>> Visitor<'de> for NullableList<'_, T, R> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list or null")
    }
    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        *self.items = None;
        Ok(())
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.visit_none()
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        let items = self.items.get_or_insert_with(ThinVec::new);
        d.deserialize_seq(ListVisitor { items, read: self.read })
    }
}

fn read_list<'de, T, R: ReadElements<'de, T>, D: Deserializer<'de>>(
    d: D,
    items: &mut ThinVec<T>,
    read: R,
) -> Result<(), D::Error> {
    // `null` empties a plain list: read into an `Option` that starts as the
    // list itself, and take it back.
    let mut held = Some(std::mem::take(items));
    let result = d.deserialize_option(NullableList { items: &mut held, read });
    *items = held.unwrap_or_default();
    result
}

fn read_option_list<'de, T, R: ReadElements<'de, T>, D: Deserializer<'de>>(
    d: D,
    items: &mut Option<ThinVec<T>>,
    read: R,
) -> Result<(), D::Error> {
    d.deserialize_option(NullableList { items, read })
}

impl<'de, T: Deserialize<'de>> DeserializeSeed<'de> for List<'_, T> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        read_list(d, self.0, ByValue(PhantomData))
    }
}

impl<'de, T: Deserialize<'de>> DeserializeSeed<'de> for OptionList<'_, T> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        read_option_list(d, self.0, ByValue(PhantomData))
    }
}

impl<'de, T: DecodeFields> DeserializeSeed<'de> for StructList<'_, T> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        read_list(d, self.0, InPlace(self.1, PhantomData))
    }
}

impl<'de, T: DecodeFields> DeserializeSeed<'de> for OptionStructList<'_, T> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        read_option_list(d, self.0, InPlace(self.1, PhantomData))
    }
}

/// Seed for `ObjectMeta.managedFields`: an optional list of structs, read
/// as [`OptionStructList`] reads it, or, when the decode's options
/// [skip them](DecodeOptions::skips_managed_fields), checked to be JSON and
/// left `None`.
pub struct ManagedFields<'a, T>(pub &'a mut Option<ThinVec<T>>, pub DecodeOptions);

impl<'de, T: DecodeFields> DeserializeSeed<'de> for ManagedFields<'_, T> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        if self.1.skips_managed_fields() {
            IgnoredAny::deserialize(d)?;
            *self.0 = None;
            return Ok(());
        }
        OptionStructList(self.0, self.1).deserialize(d)
    }
}

/// Seed for a plain string field; a long string repeated across objects
/// shares one buffer ([`super::shared`]).
pub struct Text<'a>(pub &'a mut LeanString);

/// Seed for an optional string field: `null` clears it; a long string
/// repeated across objects shares one buffer ([`super::shared`]).
pub struct OptionText<'a>(pub &'a mut Option<LeanString>);

impl<'de> DeserializeSeed<'de> for Text<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        *self.0 = SharedText.deserialize(d)?;
        Ok(())
    }
}

impl<'de> DeserializeSeed<'de> for OptionText<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_option(Nullable { into: self.0, read: SharedText, expecting: "a string or null" })
    }
}

/// Reads `null` into `into` as `None`, anything else through `read` as
/// `Some`: the optional fields that have a seed of their own.
struct Nullable<'a, T, S> {
    into: &'a mut Option<T>,
    read: S,
    expecting: &'static str,
}

impl<'de, T, S: DeserializeSeed<'de, Value = T>> Visitor<'de> for Nullable<'_, T, S> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.expecting)
    }
    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        *self.into = None;
        Ok(())
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.visit_none()
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        *self.into = Some(self.read.deserialize(d)?);
        Ok(())
    }
}

/// Reads a map of text (strings, quantities) into `.0`, sharing the array
/// of an equal map the thread decoded recently (`crate::map`); `null` reads
/// as empty, as Go clients read it.
pub struct SharedMap<'a, V>(pub &'a mut Map<V>);

/// Reads an optional map of text into `.0`, as [`SharedMap`] does.
pub struct OptionSharedMap<'a, V>(pub &'a mut Option<Map<V>>);

impl<'de, V: crate::map::TextValue> DeserializeSeed<'de> for SharedMap<'_, V> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        let mut read = None;
        OptionSharedMap(&mut read).deserialize(d)?;
        *self.0 = read.unwrap_or_default();
        Ok(())
    }
}

impl<'de, V: crate::map::TextValue> DeserializeSeed<'de> for OptionSharedMap<'_, V> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_option(Nullable { into: self.0, read: SharedMapOf(PhantomData), expecting: "a map or null" })
    }
}

/// Reads a map of text through the table of recent maps.
struct SharedMapOf<V>(PhantomData<V>);

impl<'de, V: crate::map::TextValue> DeserializeSeed<'de> for SharedMapOf<V> {
    type Value = Map<V>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Map<V>, D::Error> {
        crate::map::deserialize_shared(d)
    }
}

/// Reads a plain map or other defaulted value, `null` read as its default
/// (Go clients decode a JSON `null` map as empty).
pub fn or_default<'de, T: Deserialize<'de> + Default, A: MapAccess<'de>>(map: &mut A) -> Result<T, A::Error> {
    Ok(map.next_value::<Option<T>>()?.unwrap_or_default())
}

#[cfg(test)]
mod tests;
