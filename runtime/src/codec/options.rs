//! What a decode leaves out, chosen where the decode starts and passed
//! down explicitly.
//!
//! A decode starts at a response body ([`decode_json_with`](super::decode_json_with),
//! `Request::json_with`), a list ([`ObjectList`](crate::object::ObjectList)
//! through [`DecodeWith`]) or a watch frame
//! (`rest::watch::decode_event_with`, `watch_stream_with`). From there
//! the [`DecodeOptions`] travel as an argument: through every struct seed
//! of [`fields`](super::fields) into each generated struct's
//! [`decode_field`](super::fields::DecodeFields::decode_field), which hands
//! them on to the seeds of its own fields. Nothing about a decode depends
//! on where or on which thread it runs.
//!
//! Plain `Deserialize` (`serde_json::from_str::<Pod>`,
//! [`decode_json`](super::decode_json)) decodes with the default options:
//! everything is kept.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{DeserializeSeed, Deserializer};

/// How one decode treats the parts of an object a caller may not need.
///
/// The default keeps everything. Informers skip `metadata.managedFields`
/// (their [`InformerBuilder`](crate::cache::InformerBuilder) decides it),
/// and so does a [`ResourceClient`](crate::rest::ResourceClient) made
/// [`without_managed_fields`](crate::rest::ResourceClient::without_managed_fields).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct DecodeOptions {
    /// Whether `metadata.managedFields` are read or skipped.
    pub managed_fields: ManagedFieldsMode,
}

/// What a decode does with `metadata.managedFields`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum ManagedFieldsMode {
    /// Read them, as any other field.
    #[default]
    Keep,
    /// Check they are JSON and skip them, leaving the field `None`: for a
    /// cache that would drop them, the time and the allocations of reading
    /// them are spared, and so are the holes that freeing them would leave
    /// among the cached objects.
    Skip,
}

impl DecodeOptions {
    /// Everything read: the default, and what `Deserialize` does.
    pub const KEEP_ALL: DecodeOptions = DecodeOptions { managed_fields: ManagedFieldsMode::Keep };

    /// Every `metadata.managedFields` skipped.
    pub const WITHOUT_MANAGED_FIELDS: DecodeOptions = DecodeOptions { managed_fields: ManagedFieldsMode::Skip };

    /// Whether `metadata.managedFields` are skipped.
    pub fn skips_managed_fields(self) -> bool {
        self.managed_fields == ManagedFieldsMode::Skip
    }

    /// These options, also skipping whatever `other` skips: for a decode two
    /// parties configure (a client's own options and an informer's), where
    /// either may know that a part is not needed.
    #[must_use]
    pub fn skipping_also(self, other: DecodeOptions) -> DecodeOptions {
        let managed_fields = if self.skips_managed_fields() || other.skips_managed_fields() {
            ManagedFieldsMode::Skip
        } else {
            ManagedFieldsMode::Keep
        };
        DecodeOptions { managed_fields }
    }
}

/// A type decoded with [`DecodeOptions`].
///
/// Every generated struct has it through
/// [`DecodeFields`](super::fields::DecodeFields), which passes the options
/// to each field; [`ObjectList`](crate::object::ObjectList) passes them to
/// its items. A type decoded by its own `Deserialize` (the dynamic object, a
/// hand-written kind) implements it with
/// [`object::deserialize_then_apply`](crate::object::deserialize_then_apply):
/// decoded whole, then trimmed as the options say.
pub trait DecodeWith: Sized {
    /// Decodes a value from `deserializer`, leaving out what `options` say.
    fn deserialize_with<'de, D: Deserializer<'de>>(deserializer: D, options: DecodeOptions) -> Result<Self, D::Error>;
}

/// [`DecodeWith`] as a serde seed: decodes a `T` with the options it holds,
/// wherever serde takes a seed (a map value, a list element, a whole text).
pub struct WithOptions<T> {
    options: DecodeOptions,
    kind: PhantomData<fn() -> T>,
}

impl<T> WithOptions<T> {
    /// Decodes `T` with `options`.
    pub const fn new(options: DecodeOptions) -> Self {
        WithOptions { options, kind: PhantomData }
    }

    /// The options it decodes with.
    pub fn options(&self) -> DecodeOptions {
        self.options
    }
}

impl<T> Clone for WithOptions<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for WithOptions<T> {}

impl<T> fmt::Debug for WithOptions<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("WithOptions").field(&self.options).finish()
    }
}

impl<'de, T: DecodeWith> DeserializeSeed<'de> for WithOptions<T> {
    type Value = T;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<T, D::Error> {
        T::deserialize_with(deserializer, self.options)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skipping_also_skips_what_either_skips() {
        let (keep, skip) = (DecodeOptions::KEEP_ALL, DecodeOptions::WITHOUT_MANAGED_FIELDS);
        assert_eq!(DecodeOptions::default(), keep);
        assert_eq!(keep.skipping_also(keep), keep);
        assert_eq!(keep.skipping_also(skip), skip);
        assert_eq!(skip.skipping_also(keep), skip);
        assert_eq!(skip.skipping_also(skip), skip);
        assert!(skip.skips_managed_fields() && !keep.skips_managed_fields());
    }
}
