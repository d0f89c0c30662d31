//! The traits generated structs implement ([`DecodeProto`],
//! [`EncodeProto`]) and [`FieldValue`], what one value of a field is on
//! the wire, which the field helpers are generic over.

use lean_string::LeanString;
use thin_vec::ThinVec;

use super::wire::{Reader, WireType, Writer, not_utf8, str_from_utf8, utf8};
use super::{DecodeOptions, Error, ErrorKind};
use crate::codec::ByteString;

/// A message type decoded field by field, in place, into its `Default`.
///
/// The generated code is a `match` from field number to a helper of
/// [`decode`](super::decode) reading that field into `self`, with a last
/// arm skipping the numbers the type does not know:
///
/// ```ignore
/// fn merge_field(&mut self, number: u32, wire_type: WireType, reader: &mut Reader<'_>, options: DecodeOptions)
///     -> Result<(), Error> {
///     match number {
///         1 => decode::value(&mut self.metadata, wire_type, reader, options),
///         2 => decode::option_box(&mut self.spec, wire_type, reader, options),
///         _ => reader.skip(wire_type),
///     }
/// }
/// ```
///
/// The loop over the keys, and the path an error carries (this type's
/// [`NAME`](Self::NAME) and the field's number), are
/// [`merge_from`](Self::merge_from)'s.
pub trait DecodeProto: Default {
    /// The type's name, for errors (`Pod`).
    const NAME: &'static str;

    /// Reads one value of field `number`, written with `wire_type`, from
    /// `reader` into `self`; skips it (`reader.skip(wire_type)`) when the
    /// type has no such field. A field given twice is read twice: a scalar
    /// or string replaced, a message merged, a repeated field or map
    /// appended to, as protobuf says.
    fn merge_field(
        &mut self,
        number: u32,
        wire_type: WireType,
        reader: &mut Reader<'_>,
        options: DecodeOptions,
    ) -> Result<(), Error>;

    /// Reads every field of the message `reader` holds into `self`.
    ///
    /// Types whose wire form is not field by field (the special types of
    /// [`special`](super::special)) override it; nothing else should.
    fn merge_from(&mut self, reader: &mut Reader<'_>, options: DecodeOptions) -> Result<(), Error> {
        merge_fields(self, reader, options)
    }

    /// The message `bytes` (without the `k8s\0` envelope), decoded.
    fn decode(bytes: &[u8], options: DecodeOptions) -> Result<Self, Error> {
        let mut value = Self::default();
        value.merge_from(&mut Reader::new(bytes), options)?;
        Ok(value)
    }
}

/// The loop of [`DecodeProto::merge_from`]: each key, then the field's
/// value through [`DecodeProto::merge_field`], errors wrapped with `T`'s
/// name and the field's number.
pub fn merge_fields<T: DecodeProto>(
    target: &mut T,
    reader: &mut Reader<'_>,
    options: DecodeOptions,
) -> Result<(), Error> {
    for_each_field(T::NAME, reader, |number, wire_type, reader| target.merge_field(number, wire_type, reader, options))
}

/// Calls `field` for each key of the message `reader` holds, errors
/// wrapped with `message` and the field's number.
///
/// Compiled with each message type's `merge_field` inlined into it. Once
/// the string fields stopped stalling on their copies, the one loop that
/// called every type's fields through `dyn FnMut` measured 2–3% slower
/// (decoding the 5,000-pod list); before, no difference showed.
pub(crate) fn for_each_field<'a>(
    message: &'static str,
    reader: &mut Reader<'a>,
    mut field: impl FnMut(u32, WireType, &mut Reader<'a>) -> Result<(), Error>,
) -> Result<(), Error> {
    loop {
        let offset = reader.offset();
        let key = reader.read_key().map_err(|error| Error::from(ErrorKind::Key { message, offset, error }))?;
        let Some((number, wire_type)) = key else { return Ok(()) };
        field(number, wire_type, reader).map_err(|error| error.in_field(message, number, wire_type))?;
    }
}

/// A message type encoded field by field.
///
/// The generated code writes each field through a helper of
/// [`encode`](super::encode), in ascending field-number order as Go's
/// marshalers do (so that the bytes are Go's, byte for byte):
///
/// ```ignore
/// fn encode_fields(&self, writer: &mut Writer) {
///     encode::value(writer, 1, &self.metadata);
///     encode::option_box(writer, 2, &self.spec);
/// }
/// ```
pub trait EncodeProto {
    /// Writes every field, without a length or key of the message itself.
    fn encode_fields(&self, writer: &mut Writer);

    /// The message's bytes (without the `k8s\0` envelope).
    fn encode_to_vec(&self) -> Vec<u8> {
        let mut writer = Writer::new();
        self.encode_fields(&mut writer);
        writer.into_vec()
    }
}

/// One value of a field, as the wire has it: a scalar, a string, bytes or a
/// message. The helpers of [`decode`](super::decode) and
/// [`encode`](super::encode) take any `FieldValue`: a plain field, an
/// optional one, a repeated one's elements, a map's values.
///
/// Every message type ([`DecodeProto`] + [`EncodeProto`]) is one; so are
/// `bool`, `i32` (`int32`), `i64` (`int64`), `f64` (`double`),
/// [`LeanString`] (`string`), [`ByteString`] (`bytes`), and
/// `ThinVec<LeanString>` as `ExtraValue`'s message (`repeated string
/// items = 1`), which the generated types hold as a plain list.
pub trait FieldValue: Default {
    /// The wire type a value is written with.
    const WIRE_TYPE: WireType;

    /// Whether a repeated field of this type may come packed (several
    /// values in one length-delimited field): the numeric scalars. Go
    /// writes them unpacked, but a protobuf reader must take both.
    const PACKABLE: bool = false;

    /// Reads one value written with `wire_type` into `self`: a scalar,
    /// string or bytes replaces what `self` holds, a message is merged
    /// into it.
    fn merge_value(
        &mut self,
        wire_type: WireType,
        reader: &mut Reader<'_>,
        options: DecodeOptions,
    ) -> Result<(), Error>;

    /// Writes the value, after its key: a scalar as it is, a
    /// length-delimited value with its length.
    fn encode_value(&self, writer: &mut Writer);

    /// Reads one value into `place` as [`merge_value`](Self::merge_value)
    /// does, then leaves `place` `None` when the value is the default
    /// ([`decode::option_unless_default`](super::decode::option_unless_default)).
    /// A type may read it another way with the same outcome.
    #[inline]
    fn merge_unless_default(
        place: &mut Option<Self>,
        wire_type: WireType,
        reader: &mut Reader<'_>,
        options: DecodeOptions,
    ) -> Result<(), Error>
    where
        Self: PartialEq,
    {
        let value = place.get_or_insert_with(Self::default);
        value.merge_value(wire_type, reader, options)?;
        if *value == Self::default() {
            *place = None;
        }
        Ok(())
    }
}

impl<T: DecodeProto + EncodeProto> FieldValue for T {
    const WIRE_TYPE: WireType = WireType::Len;

    #[inline]
    fn merge_value(
        &mut self,
        wire_type: WireType,
        reader: &mut Reader<'_>,
        options: DecodeOptions,
    ) -> Result<(), Error> {
        wire_type.expect(WireType::Len)?;
        self.merge_from(&mut reader.nested()?, options)
    }

    #[inline]
    fn encode_value(&self, writer: &mut Writer) {
        writer.len_delimited(|writer| self.encode_fields(writer));
    }
}

impl FieldValue for bool {
    const WIRE_TYPE: WireType = WireType::Varint;
    const PACKABLE: bool = true;

    fn merge_value(&mut self, wire_type: WireType, reader: &mut Reader<'_>, _: DecodeOptions) -> Result<(), Error> {
        wire_type.expect(WireType::Varint)?;
        *self = reader.read_varint()? != 0;
        Ok(())
    }

    fn encode_value(&self, writer: &mut Writer) {
        writer.varint(u64::from(*self));
    }
}

/// `int32`: a varint of the value sign-extended to 64 bits (ten bytes when
/// negative), read back by truncation, as Go does.
impl FieldValue for i32 {
    const WIRE_TYPE: WireType = WireType::Varint;
    const PACKABLE: bool = true;

    fn merge_value(&mut self, wire_type: WireType, reader: &mut Reader<'_>, _: DecodeOptions) -> Result<(), Error> {
        wire_type.expect(WireType::Varint)?;
        *self = reader.read_varint()? as i32;
        Ok(())
    }

    fn encode_value(&self, writer: &mut Writer) {
        writer.varint(i64::from(*self) as u64);
    }
}

/// `int64`: a varint of the two's complement value.
impl FieldValue for i64 {
    const WIRE_TYPE: WireType = WireType::Varint;
    const PACKABLE: bool = true;

    fn merge_value(&mut self, wire_type: WireType, reader: &mut Reader<'_>, _: DecodeOptions) -> Result<(), Error> {
        wire_type.expect(WireType::Varint)?;
        *self = reader.read_varint()? as i64;
        Ok(())
    }

    fn encode_value(&self, writer: &mut Writer) {
        writer.varint(*self as u64);
    }
}

/// `double`: eight little-endian bytes (`JSONSchemaProps`' bounds, a few
/// resource fields).
impl FieldValue for f64 {
    const WIRE_TYPE: WireType = WireType::Fixed64;
    const PACKABLE: bool = true;

    fn merge_value(&mut self, wire_type: WireType, reader: &mut Reader<'_>, _: DecodeOptions) -> Result<(), Error> {
        wire_type.expect(WireType::Fixed64)?;
        *self = f64::from_bits(reader.read_fixed64()?);
        Ok(())
    }

    fn encode_value(&self, writer: &mut Writer) {
        writer.fixed64(self.to_bits());
    }
}

/// `string`, checked to be UTF-8; a string repeated across objects shares
/// one buffer ([`crate::codec::shared`]), as the JSON decoder does.
impl FieldValue for LeanString {
    const WIRE_TYPE: WireType = WireType::Len;

    #[inline]
    fn merge_value(&mut self, wire_type: WireType, reader: &mut Reader<'_>, _: DecodeOptions) -> Result<(), Error> {
        wire_type.expect(WireType::Len)?;
        put_text(self, reader.read_len()?)
    }

    #[inline]
    fn encode_value(&self, writer: &mut Writer) {
        writer.bytes(self.as_bytes());
    }

    /// A string replaces what the field holds, so its bytes are looked at
    /// before a string is made of them: no default to make and compare.
    #[inline]
    fn merge_unless_default(
        place: &mut Option<Self>,
        wire_type: WireType,
        reader: &mut Reader<'_>,
        _: DecodeOptions,
    ) -> Result<(), Error> {
        wire_type.expect(WireType::Len)?;
        let bytes = reader.read_len()?;
        if bytes.is_empty() {
            *place = None;
            return Ok(());
        }
        put_text(place, bytes)
    }
}

/// Puts the text `bytes` hold into `place`, checked to be UTF-8 unless it
/// is a string the shared-string table holds; put in place, not returned
/// (see [`crate::intern::set_shared_checked`]).
#[inline(always)]
fn put_text(place: &mut impl crate::intern::StringPlace, bytes: &[u8]) -> Result<(), Error> {
    if crate::intern::set_shared_checked(place, bytes, utf8) { Ok(()) } else { Err(not_utf8(bytes)) }
}

/// `string` into an owned `String`, for the runtime's own types (`Status`,
/// `ListMeta`), which are not kept by the thousand as cached objects are.
impl FieldValue for String {
    const WIRE_TYPE: WireType = WireType::Len;

    fn merge_value(&mut self, wire_type: WireType, reader: &mut Reader<'_>, _: DecodeOptions) -> Result<(), Error> {
        wire_type.expect(WireType::Len)?;
        reader.read_str()?.clone_into(self);
        Ok(())
    }

    fn encode_value(&self, writer: &mut Writer) {
        writer.bytes(self.as_bytes());
    }
}

/// `bytes`, as the JSON side holds a `format: byte` field.
impl FieldValue for ByteString {
    const WIRE_TYPE: WireType = WireType::Len;

    fn merge_value(&mut self, wire_type: WireType, reader: &mut Reader<'_>, _: DecodeOptions) -> Result<(), Error> {
        wire_type.expect(WireType::Len)?;
        self.0.clear();
        self.0.extend_from_slice(reader.read_len()?);
        Ok(())
    }

    fn encode_value(&self, writer: &mut Writer) {
        writer.bytes(&self.0);
    }
}

/// The message `ExtraValue` (`repeated string items = 1`), which the
/// generated types hold as the list it wraps (`Map<ThinVec<LeanString>>`
/// of `UserInfo.extra`). Merged as a message: items append.
impl FieldValue for ThinVec<LeanString> {
    const WIRE_TYPE: WireType = WireType::Len;

    fn merge_value(&mut self, wire_type: WireType, reader: &mut Reader<'_>, _: DecodeOptions) -> Result<(), Error> {
        wire_type.expect(WireType::Len)?;
        let mut message = reader.nested()?;
        for_each_field("ExtraValue", &mut message, |number, wire_type, reader| match number {
            1 => {
                wire_type.expect(WireType::Len)?;
                self.push(crate::intern::shared(str_from_utf8(reader.read_len()?)?));
                Ok(())
            }
            _ => reader.skip(wire_type),
        })
    }

    fn encode_value(&self, writer: &mut Writer) {
        writer.len_delimited(|writer| {
            for item in self {
                writer.key(1, WireType::Len);
                writer.bytes(item.as_bytes());
            }
        });
    }
}
