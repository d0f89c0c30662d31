//! Talking to the apiserver.
//!
//! * [`ResourceClient<K>`]: every verb of one resource — what most code
//!   uses; the generated ClientSet hands it out per kind, and the dynamic
//!   client is the same type over a run-time object. It offers the verbs
//!   the kind's resource serves ([`verbs`]); [`subresource`] has the
//!   generic subresource calls and the `HasStatus`/`HasScale` markers.
//! * [`Client`]: the shared transport (client-go's `RESTClient`); build
//!   raw requests with [`Client::request`] for anything else (`/version`,
//!   proxies, custom paths).
//! * [`watch`]: the watch event decoder, usable on any byte source.
//!
//! Every client applies a token-bucket rate limit (QPS 5, burst 10 unless
//! configured), retries 429/5xx answers that carry `Retry-After` (at most
//! [`MAX_RETRIES`] times) and GETs whose connection was reset, and turns
//! non-2xx answers into [`Error::Api`] with the server's `Status`.

mod client;
mod connect;
mod error;
mod limiter;
mod options;
mod request;
mod resource;
pub mod subresource;
mod target;
pub mod verbs;
pub mod watch;

pub use client::{Client, MAX_RETRIES};
pub use connect::TLS_HANDSHAKE_TIMEOUT;
pub use error::{Error, Status, StatusCause, StatusDetails};
pub use limiter::RateLimiter;
pub use options::{
    ApplyOptions, CreateOptions, DeleteOptions, FieldValidation, GetOptions, ListOptions, Patch, PatchOptions,
    Preconditions, PropagationPolicy, QueryPairs, UpdateOptions, VersionMatch, WatchOptions, WriteOptions,
};
pub use request::Request;
pub use resource::{ClientObject, DeleteResult, ResourceClient};
pub use subresource::{HasScale, HasStatus};
pub use watch::{Bookmark, ByteStream, DEFAULT_MAX_EVENT_SIZE, WatchEvent, WatchStream};

#[cfg(test)]
pub(crate) mod tests;
