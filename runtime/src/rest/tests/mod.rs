//! Transport tests against a scripted loopback HTTP/1.1 server. They check
//! what this client sends and how it reacts to answers; they make no claim
//! about what a real apiserver does.

mod client_tests;
mod metrics_tests;
pub(crate) mod proto_kind;
mod protobuf_tests;
mod resource_tests;
pub(crate) mod server;
mod streaming_tests;
