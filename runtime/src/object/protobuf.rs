//! [`ListMeta`] and [`ObjectList`] over protobuf.
//!
//! Every `<Kind>List` message is {metadata = 1 `ListMeta`, items = 2
//! repeated `<Kind>`}, and `ListMeta` is {selfLink = 1, resourceVersion =
//! 2, continue = 3, remainingItemCount = 4} (apimachinery's
//! `meta/v1/generated.proto`), so one generic decoder serves every list,
//! its items read through the kind's [`Codec`].

use crate::protobuf::{
    Codec, DecodeOptions, DecodeProto, EncodeProto, Error, Reader, WireType, Writer, decode, encode,
};

use super::{ListMeta, ObjectList};

/// Go writes `ListMeta`'s strings always, empty or not; JSON leaves them
/// out when empty. Read back as `None` when empty, a list decodes alike
/// from both formats.
impl DecodeProto for ListMeta {
    const NAME: &'static str = "ListMeta";

    fn merge_field(
        &mut self,
        number: u32,
        wire_type: WireType,
        reader: &mut Reader<'_>,
        options: DecodeOptions,
    ) -> Result<(), Error> {
        match number {
            1 => decode::option_unless_default(&mut self.self_link, wire_type, reader, options),
            2 => decode::option_unless_default(&mut self.resource_version, wire_type, reader, options),
            3 => decode::option_unless_default(&mut self.continue_, wire_type, reader, options),
            4 => decode::option(&mut self.remaining_item_count, wire_type, reader, options),
            _ => reader.skip(wire_type),
        }
    }
}

/// As Go writes it: the three strings always, the count when set.
impl EncodeProto for ListMeta {
    fn encode_fields(&self, writer: &mut Writer) {
        encode::option_or_default(writer, 1, &self.self_link);
        encode::option_or_default(writer, 2, &self.resource_version);
        encode::option_or_default(writer, 3, &self.continue_);
        encode::option(writer, 4, &self.remaining_item_count);
    }
}

/// The message name errors give a list.
const LIST: &str = "List";

impl<K> ObjectList<K> {
    /// A `<Kind>List` message (the envelope's `raw`), its items decoded by
    /// `codec` with `options` (which reach every item's fields, e.g. to
    /// skip `metadata.managedFields`).
    pub fn decode_protobuf(message: &[u8], codec: &Codec<K>, options: DecodeOptions) -> Result<Self, Error> {
        let mut list = ObjectList { metadata: ListMeta::default(), items: Vec::new() };
        crate::protobuf::for_each_field(LIST, &mut Reader::new(message), |number, wire_type, reader| match number {
            1 => decode::value(&mut list.metadata, wire_type, reader, options),
            2 => {
                wire_type.expect(WireType::Len)?;
                if list.items.is_empty() {
                    // Sized for every item: a list grown by doubling holds
                    // up to twice its items' room for as long as it lives.
                    list.items.reserve_exact(reader.count_run(wire_type));
                }
                let item = codec.decode_message(&mut reader.nested()?, options)?;
                list.items.push(item);
                Ok(())
            }
            _ => reader.skip(wire_type),
        })?;
        Ok(list)
    }

    /// The list's message (without the envelope), as Go writes it: the
    /// metadata, then each item through `codec`.
    pub fn encode_protobuf(&self, codec: &Codec<K>) -> Vec<u8> {
        let mut writer = Writer::new();
        encode::value(&mut writer, 1, &self.metadata);
        for item in &self.items {
            writer.key(2, WireType::Len);
            writer.len_delimited(|writer| codec.encode_fields(item, writer));
        }
        writer.into_vec()
    }
}
