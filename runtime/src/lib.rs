//! Runtime for the generated Kubernetes client.
//!
//! The generated crate (`k8s-client`) holds the API types, the typed ClientSet,
//! listers and informers; everything they stand on lives here, handwritten and
//! independent of any particular Kubernetes version. This crate never depends
//! on the generated one: generic code works on any type implementing
//! [`object::Resource`].
//!
//! Layering (each floor only uses the floors below it):
//! 1. [`object`], [`codec`], [`map`], [`selector`], [`workqueue`]: no I/O.
//!    Under the codec and the maps, two private modules both use: `read`
//!    (text lent by the input, elements staged on the stack) and `intern`
//!    (this thread's tables of recent strings and maps); the codec uses the
//!    maps, never the other way round.
//! 2. `config`, `rest`: talking to an apiserver.
//! 3. `dynamic`, `discovery`, `cache`, `record`, `leaderelection`.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod cache;
pub mod codec;
pub mod config;
pub mod discovery;
pub mod dynamic;
mod error_chain;
mod intern;
pub mod leaderelection;
pub mod map;
pub mod object;
mod read;
pub mod record;
pub mod rest;
pub mod selector;
pub mod workqueue;

#[cfg(test)]
pub(crate) mod testing;

pub use config::Config;
pub use error_chain::ErrorChain;
/// The string of generated objects' fields: 16 bytes, as a Go string (an
/// absent `Option<LeanString>` too). Up to 16 bytes of text are held inline,
/// without an allocation, which most of a Kubernetes object's strings fit
/// (namespaces, label values, enum values, IPs); a longer one is in a
/// reference-counted buffer, which a decoded string shares with an equal
/// one decoded recently ([`codec::shared`]): an image name cached in
/// thousands of pods is held once. It derefs to `str`, converts from `&str`
/// and `String` with `.into()` (and into a `String` the same way), and is
/// copied on write when shared.
pub use lean_string::LeanString;
pub use map::Map;
pub use object::{DynamicResource, GroupVersion, ListMeta, Metadata, Object, ObjectList, Resource, Scope};
pub use rest::{Client, ResourceClient};
/// The list of generated objects' fields: one pointer (an absent or empty
/// list costs 8 bytes, not a `Vec`'s 24), with its length and capacity kept
/// in the heap block beside the elements. It derefs to a slice, grows with
/// `push` as a `Vec` does, and converts from a `Vec` or an array with
/// `.into()`; `thin_vec![…]` builds one as `vec![…]` builds a `Vec`.
pub use thin_vec::{ThinVec, thin_vec};
