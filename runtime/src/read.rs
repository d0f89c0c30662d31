//! What the decoders of [`codec`](crate::codec) and of [`Map`](crate::Map)
//! both read with: text lent by the input where it can be, and the first
//! few elements of a map or a list staged on the stack.
//!
//! Both sides use this module and it uses neither, so the codec can decode
//! into maps without the maps depending on the codec.

mod scalar_text;

pub(crate) use scalar_text::{Text, deserialize_string_or_number};

/// A map or a short list being read: its first elements on the stack. JSON
/// says nothing of a length up front, and a heap block grown by doubling
/// and then shrunk would cost a reallocation or two per list and leave the
/// room it gave back as holes among the objects kept (a pod has about
/// fifteen lists). Staged first, each gets one block of exactly its size.
pub(crate) type Staged<T> = smallvec::SmallVec<[T; 6]>;
