//! [`Codec`]: how generic code (the REST client, the watch, the reflector)
//! reaches a kind's [`DecodeProto`] and [`EncodeProto`] without asking
//! for them in its bounds.
//!
//! A kind says it speaks protobuf through its
//! [`Resource::PROTOBUF`](crate::object::Resource::PROTOBUF) constant:
//! `Some(Codec::of::<Self>())` for a built-in kind of a crate generated
//! with protobuf, `None` (the default) for every other kind, which the
//! clients then talk to in JSON only. A bound such as `K: DecodeProto`
//! would instead split every generic function in two.

use std::fmt;

use super::wire::{Reader, Writer};
use super::{DecodeOptions, DecodeProto, EncodeProto, Error, encode_object};

/// A kind's protobuf decoder and encoder, as plain function pointers: a
/// `const` value, made by [`Codec::of`].
///
/// `K` may be unsized so that [`Resource`](crate::object::Resource), whose
/// implementors may be, can name `Codec<Self>` in its default; a codec is
/// only ever made for a sized kind (see [`Codec::of`]).
pub struct Codec<K: ?Sized> {
    name: &'static str,
    new: fn() -> K,
    merge: fn(&mut K, &mut Reader<'_>, DecodeOptions) -> Result<(), Error>,
    encode: fn(&K, &mut Writer),
}

impl<K: ?Sized> Clone for Codec<K> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<K: ?Sized> Copy for Codec<K> {}

impl<K: ?Sized> fmt::Debug for Codec<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Codec").field(&self.name).finish()
    }
}

impl<K: ?Sized> Codec<K> {
    /// The message type's name ([`DecodeProto::NAME`]), for errors.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Reads every field of the message `reader` holds into `target`
    /// ([`DecodeProto::merge_from`]).
    pub fn merge(&self, target: &mut K, reader: &mut Reader<'_>, options: DecodeOptions) -> Result<(), Error> {
        (self.merge)(target, reader, options)
    }

    /// Writes every field of `object` ([`EncodeProto::encode_fields`]).
    pub fn encode_fields(&self, object: &K, writer: &mut Writer) {
        (self.encode)(object, writer)
    }

    /// The message of `object`, without the `k8s\0` envelope.
    pub fn encode_to_vec(&self, object: &K) -> Vec<u8> {
        let mut writer = Writer::new();
        self.encode_fields(object, &mut writer);
        writer.into_vec()
    }

    /// `object` in the envelope of `api_version` and `kind`, as a request
    /// body ([`encode_object`]).
    pub fn encode_object(&self, api_version: &str, kind: &str, object: &K) -> Vec<u8> {
        encode_object(api_version, kind, &Fields { codec: self, object })
    }
}

/// [`Codec::of`] lives on `Codec<()>` so that `Codec::of::<K>()` names the
/// kind once, as a turbofish, the codec's own parameter then inferred.
impl Codec<()> {
    /// The codec of a kind implementing both traits. `const`, so that
    /// `impl_resource!` can put it in `Resource::PROTOBUF`:
    ///
    /// ```ignore
    /// const PROTOBUF: Option<Codec<Self>> = Some(Codec::of::<Self>());
    /// ```
    pub const fn of<K: DecodeProto + EncodeProto>() -> Codec<K> {
        Codec { name: K::NAME, new: K::default, merge: K::merge_from, encode: K::encode_fields }
    }
}

impl<K> Codec<K> {
    /// The message `bytes` (without the `k8s\0` envelope), decoded into a
    /// new `K`.
    pub fn decode(&self, bytes: &[u8], options: DecodeOptions) -> Result<K, Error> {
        let mut object = (self.new)();
        self.merge(&mut object, &mut Reader::new(bytes), options)?;
        Ok(object)
    }

    /// The message `reader` holds (a nested one: a list's item), decoded
    /// into a new `K`.
    pub fn decode_message(&self, reader: &mut Reader<'_>, options: DecodeOptions) -> Result<K, Error> {
        let mut object = (self.new)();
        self.merge(&mut object, reader, options)?;
        Ok(object)
    }
}

/// An object seen through its codec, for [`encode_object`].
struct Fields<'a, K: ?Sized> {
    codec: &'a Codec<K>,
    object: &'a K,
}

impl<K: ?Sized> EncodeProto for Fields<'_, K> {
    fn encode_fields(&self, writer: &mut Writer) {
        self.codec.encode_fields(self.object, writer);
    }
}
