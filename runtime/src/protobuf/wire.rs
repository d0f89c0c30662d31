//! The wire layer: [`Reader`] over a message's bytes and [`Writer`] into a
//! buffer, keys, varints, fixed-width values and length-delimited values.
//!
//! Varints are read and written by `prost::encoding` (the protobuf crate
//! the Rust ecosystem uses; its slice fast path reads a varint without a
//! loop per byte when ten bytes are available). Keys, wire types and
//! skipping are done here on top of it, so that each failure becomes an
//! [`Error`] that says what it is, rather than prost's opaque
//! `DecodeError`, and so that groups are refused.

use prost::encoding::{decode_varint, encode_varint, encoded_len_varint};

use super::{Error, ErrorKind};

/// How deep messages may nest. Recursive types (`JSONSchemaProps`) could
/// otherwise make input recurse until the stack overflows; 100 is prost's
/// limit too, and no Kubernetes object comes near it.
pub const MAX_DEPTH: usize = 100;

/// The wire type of a field: how its value is delimited on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WireType {
    /// A varint: `int32`, `int64`, `bool`, enums.
    Varint = 0,
    /// Eight bytes, little-endian: `double`, `fixed64`.
    Fixed64 = 1,
    /// A varint length, then that many bytes: strings, bytes, messages,
    /// packed repeated scalars, map entries.
    Len = 2,
    /// The start of a group (deprecated; refused).
    StartGroup = 3,
    /// The end of a group (deprecated; refused).
    EndGroup = 4,
    /// Four bytes, little-endian: `float`, `fixed32`.
    Fixed32 = 5,
}

impl WireType {
    #[inline]
    fn from_key(key: u64) -> Result<WireType, Error> {
        Ok(match key & 7 {
            0 => WireType::Varint,
            1 => WireType::Fixed64,
            2 => WireType::Len,
            3 => WireType::StartGroup,
            4 => WireType::EndGroup,
            5 => WireType::Fixed32,
            other => return Err(ErrorKind::InvalidWireType(other as u8).into()),
        })
    }

    /// `Ok` when `self` is `expected`, else [`ErrorKind::WrongWireType`].
    #[inline]
    pub fn expect(self, expected: WireType) -> Result<(), Error> {
        if self == expected { Ok(()) } else { Err(ErrorKind::WrongWireType { expected, found: self }.into()) }
    }
}

/// Reads the fields of one message from its bytes.
///
/// A nested message is read by a reader of its own ([`nested`](Self::nested)),
/// which knows how deep it is.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    rest: &'a [u8],
    len: usize,
    depth: usize,
    /// The number of the field whose key was read last: the field a helper
    /// is reading, whose run of values it may size or take whole.
    number: u32,
}

impl<'a> Reader<'a> {
    /// A reader of the message `bytes` (the outermost one).
    pub fn new(bytes: &'a [u8]) -> Self {
        Reader { rest: bytes, len: bytes.len(), depth: 0, number: 0 }
    }

    /// Whether the message has been read to its end.
    pub fn is_empty(&self) -> bool {
        self.rest.is_empty()
    }

    /// Bytes read so far, from the start of this message.
    pub fn offset(&self) -> usize {
        self.len - self.rest.len()
    }

    /// Bytes left in this message.
    pub fn remaining(&self) -> usize {
        self.rest.len()
    }

    /// The next field's number and wire type, `None` at the end of the
    /// message.
    #[inline]
    pub fn read_key(&mut self) -> Result<Option<(u32, WireType)>, Error> {
        if self.rest.is_empty() {
            return Ok(None);
        }
        let key = self.read_varint()?;
        let wire_type = WireType::from_key(key)?;
        let number = key >> 3;
        if number == 0 || number > u64::from(u32::MAX >> 3) {
            return Err(ErrorKind::InvalidKey { key }.into());
        }
        self.number = number as u32;
        Ok(Some((number as u32, wire_type)))
    }

    /// How many values of the current field (the one whose key was read
    /// last) come one after another from here, this one included: Go
    /// writes a repeated field's elements and a map's entries as such a
    /// run, so a list can be sized exactly before its elements are read.
    /// Malformed data ends the count; reading the values reports it.
    pub fn count_run(&self, wire_type: WireType) -> usize {
        let mut ahead = self.clone();
        let mut count = 0;
        while ahead.skip(wire_type).is_ok() {
            count += 1;
            match ahead.read_key() {
                Ok(Some((number, next))) if number == self.number && next == wire_type => {}
                _ => break,
            }
        }
        count.max(1)
    }

    /// Takes the key of the next value when it is another of the current
    /// field's run (same number and wire type); otherwise reads nothing.
    pub fn next_in_run(&mut self, wire_type: WireType) -> bool {
        let mut ahead = self.clone();
        match ahead.read_key() {
            Ok(Some((number, next))) if number == self.number && next == wire_type => {
                *self = ahead;
                true
            }
            _ => false,
        }
    }

    /// A varint.
    #[inline]
    pub fn read_varint(&mut self) -> Result<u64, Error> {
        // A byte without the continuation bit is the whole varint: nearly
        // every key and length of an object. Taken here, inline, rather
        // than through prost's function, which the compiler keeps out of
        // line.
        if let Some((&byte, rest)) = self.rest.split_first()
            && byte < 0x80
        {
            self.rest = rest;
            return Ok(u64::from(byte));
        }
        // Two bytes: the keys of fields numbered 16 and up, the lengths of
        // most strings and nested messages over 127 bytes.
        if let Some((&[low, high], rest)) = self.rest.split_first_chunk::<2>()
            && high < 0x80
        {
            self.rest = rest;
            return Ok(u64::from(low & 0x7f) | u64::from(high) << 7);
        }
        self.read_varint_long()
    }

    /// A varint of more than two bytes, or a malformed one.
    fn read_varint_long(&mut self) -> Result<u64, Error> {
        let before = self.rest;
        decode_varint(&mut self.rest).map_err(|_| {
            self.rest = before;
            // prost says "invalid varint" for both; a varint whose every
            // byte has the continuation bit merely stopped early.
            if before.len() < 10 && before.iter().all(|b| b & 0x80 != 0) {
                ErrorKind::TruncatedVarint.into()
            } else {
                ErrorKind::InvalidVarint.into()
            }
        })
    }

    /// Eight little-endian bytes.
    pub fn read_fixed64(&mut self) -> Result<u64, Error> {
        let Some((value, rest)) = self.rest.split_first_chunk::<8>() else {
            return Err(ErrorKind::TruncatedFixed { width: 8, remaining: self.rest.len() }.into());
        };
        self.rest = rest;
        Ok(u64::from_le_bytes(*value))
    }

    /// Four little-endian bytes.
    pub fn read_fixed32(&mut self) -> Result<u32, Error> {
        let Some((value, rest)) = self.rest.split_first_chunk::<4>() else {
            return Err(ErrorKind::TruncatedFixed { width: 4, remaining: self.rest.len() }.into());
        };
        self.rest = rest;
        Ok(u32::from_le_bytes(*value))
    }

    /// A length-delimited value's bytes (the length read first).
    #[inline]
    pub fn read_len(&mut self) -> Result<&'a [u8], Error> {
        let before = self.rest;
        let length = self.read_varint()?;
        match usize::try_from(length).ok().filter(|&n| n <= self.rest.len()) {
            Some(n) => {
                let (value, rest) = self.rest.split_at(n);
                self.rest = rest;
                Ok(value)
            }
            None => {
                let remaining = self.rest.len();
                self.rest = before;
                Err(ErrorKind::LengthPastEnd { length, remaining }.into())
            }
        }
    }

    /// A length-delimited string, checked to be UTF-8.
    #[inline]
    pub fn read_str(&mut self) -> Result<&'a str, Error> {
        let bytes = self.read_len()?;
        str_from_utf8(bytes)
    }

    /// A reader of the nested message that follows (length-delimited), one
    /// level deeper.
    #[inline]
    pub fn nested(&mut self) -> Result<Reader<'a>, Error> {
        if self.depth >= MAX_DEPTH {
            return Err(ErrorKind::TooDeep(MAX_DEPTH).into());
        }
        let bytes = self.read_len()?;
        Ok(Reader { rest: bytes, len: bytes.len(), depth: self.depth + 1, number: 0 })
    }

    /// Skips the value of a field the reader does not know (a field a newer
    /// server added): every wire type but the groups, which are refused.
    ///
    /// Length-delimited values (messages and strings: nearly all that is
    /// skipped, and every element of the runs [`count_run`](Self::count_run)
    /// counts) go through the inlined length read; the other wire types
    /// through a call.
    #[inline]
    pub fn skip(&mut self, wire_type: WireType) -> Result<(), Error> {
        if wire_type == WireType::Len {
            return self.read_len().map(drop);
        }
        self.skip_scalar(wire_type)
    }

    /// [`skip`](Self::skip) of a value that is not length-delimited.
    fn skip_scalar(&mut self, wire_type: WireType) -> Result<(), Error> {
        match wire_type {
            WireType::Varint => self.read_varint().map(drop),
            WireType::Fixed64 => self.read_fixed64().map(drop),
            WireType::Len => self.read_len().map(drop),
            WireType::Fixed32 => self.read_fixed32().map(drop),
            WireType::StartGroup | WireType::EndGroup => Err(ErrorKind::Group(wire_type).into()),
        }
    }
}

/// `bytes` as text, or [`ErrorKind::InvalidUtf8`].
#[inline]
pub(crate) fn str_from_utf8(bytes: &[u8]) -> Result<&str, Error> {
    utf8(bytes).ok_or_else(|| not_utf8(bytes))
}

/// `bytes` as text, if they are UTF-8. Under 64 bytes, where simdutf8
/// hands over to the standard library's check (a call, then a byte at a
/// time), ASCII is tried first: a word at a time, and nearly every string
/// of an object is ASCII (names, keys, quantities, enums). It took a
/// string-heavy decode's UTF-8 checks from 8% of its time to 5–6%. Longer
/// text and the rest go to simdutf8, as the JSON side uses.
#[inline]
pub(crate) fn utf8(bytes: &[u8]) -> Option<&str> {
    if bytes.len() < 64
        && let Ok(ascii) = ascii::AsciiStr::from_ascii(bytes)
    {
        return Some(ascii.as_str());
    }
    simdutf8::basic::from_utf8(bytes).ok()
}

/// The error of bytes [`utf8`] refused, with the position the standard
/// library finds (computed again only here, on failure).
#[cold]
pub(crate) fn not_utf8(bytes: &[u8]) -> Error {
    ErrorKind::InvalidUtf8 {
        valid_up_to: std::str::from_utf8(bytes).err().map_or(0, |e| e.valid_up_to()),
        len: bytes.len(),
    }
    .into()
}

/// Writes fields into a growing buffer.
///
/// A nested message's length comes before it, and is known only once the
/// message is written: [`len_delimited`](Self::len_delimited) leaves one
/// byte for it, writes the message, and puts the length there, moving the
/// message along when the length needs more than one byte (a message of
/// 128 bytes or more). The alternative, prost's, is an `encoded_len` pass
/// over every message before writing it, which at each nesting level
/// measures everything below it again, and which the generated code would
/// have to keep in step with its writing, field by field. Moving the bytes
/// of the larger messages (a `memmove`, once per level) is cheaper than
/// walking their fields again, and there is one function per type to
/// generate instead of two.
#[derive(Debug, Default, Clone)]
pub struct Writer {
    buf: Vec<u8>,
}

impl Writer {
    /// An empty writer.
    pub fn new() -> Self {
        Writer::default()
    }

    /// A writer appending to `buf` (after what it holds).
    pub fn from_vec(buf: Vec<u8>) -> Self {
        Writer { buf }
    }

    /// The bytes written.
    pub fn into_vec(self) -> Vec<u8> {
        self.buf
    }

    /// The bytes written so far.
    pub fn as_slice(&self) -> &[u8] {
        &self.buf
    }

    /// The number of bytes written so far.
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// Whether nothing has been written.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// A field's key: its number and wire type.
    #[inline]
    pub fn key(&mut self, number: u32, wire_type: WireType) {
        self.varint(u64::from(number) << 3 | wire_type as u64);
    }

    /// A varint.
    #[inline]
    pub fn varint(&mut self, value: u64) {
        encode_varint(value, &mut self.buf);
    }

    /// Eight little-endian bytes.
    pub fn fixed64(&mut self, value: u64) {
        self.buf.extend_from_slice(&value.to_le_bytes());
    }

    /// Four little-endian bytes.
    pub fn fixed32(&mut self, value: u32) {
        self.buf.extend_from_slice(&value.to_le_bytes());
    }

    /// A length-delimited value whose bytes are at hand: the length, then
    /// the bytes (no key).
    #[inline]
    pub fn bytes(&mut self, bytes: &[u8]) {
        self.varint(bytes.len() as u64);
        self.buf.extend_from_slice(bytes);
    }

    /// A length-delimited value written by `body`: the length, then what
    /// `body` writes (no key). See the type's docs for how the length is
    /// put before the body.
    #[inline]
    pub fn len_delimited(&mut self, body: impl FnOnce(&mut Writer)) {
        let at = self.begin_len();
        body(self);
        self.end_len(at);
    }

    /// Reserves the one byte a short length takes; where it is.
    fn begin_len(&mut self) -> usize {
        let at = self.buf.len();
        self.buf.push(0);
        at
    }

    /// Writes the length of what follows the byte reserved at `at`, moving
    /// it along when the length needs more than that byte. Apart from
    /// [`len_delimited`](Self::len_delimited) so that its copy per message
    /// type is only the body.
    fn end_len(&mut self, at: usize) {
        let length = self.buf.len() - at - 1;
        if length < 0x80 {
            self.buf[at] = length as u8;
        } else {
            let mut prefix = [0u8; 10];
            let width = encoded_len_varint(length as u64);
            encode_varint(length as u64, &mut &mut prefix[..]);
            self.buf.splice(at..at + 1, prefix[..width].iter().copied());
        }
    }

    /// A raw byte, for the envelope's prefix.
    pub(crate) fn raw(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }
}
