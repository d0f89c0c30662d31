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
//!   [`ResourceClient::watch`] is one watch request; the
//!   [`watcher`](crate::watcher) resumes and relists on its own.
//! * Streams of a pod, methods of `ResourceClient<Pod>` (and of the
//!   dynamic client) given by marker traits the generator implements from
//!   the spec's connect operations: [`remotecommand`] (`exec`, `attach`:
//!   stdin, stdout, stderr, TTY, exit status), [`portforward`]
//!   (`port_forward` to in-process streams, `port_forward_listener` for a
//!   local TCP port), [`logs`] (`log_stream`, following a log line by
//!   line), and [`proxy`] (plain HTTP to a pod, service or node through
//!   the apiserver). Exec, attach and port-forward are WebSockets, each on
//!   an HTTP/1.1 connection of its own with the client's TLS, proxy and
//!   credentials.
//!
//! * [`ClientBuilder`] ([`Client::builder`]): a client with
//!   [`metrics`] (client-go's `rest_client_*`) or tower layers around its
//!   transport. Every request runs in a `request` tracing span.
//!
//! Every client applies a token-bucket rate limit (QPS 5, burst 10 unless
//! configured) to every request but watches (as client-go), retries
//! 429/5xx answers that carry `Retry-After` (at most [`MAX_RETRIES`]
//! times) and GETs whose connection was reset, and turns non-2xx answers
//! into [`Error::Api`] with the server's `Status`.
//!
//! # Connections
//! A client opens as many HTTP/2 connections as its open streams need:
//! kube-apiserver takes 100 at once on one connection, and watches,
//! followed logs and port-forwards each hold one for minutes. Requests go
//! to the first connection with room, so a short request never waits
//! behind long ones ([`Client::connections`] shows how they are spread).
//! Flow control is Go's transport's (a connection window of 1 GiB, 4 MiB
//! per stream): a stream the program reads slowly holds up only itself.
//!
//! # Content types
//! A [`ResourceClient<K>`] made by [`ResourceClient::new`] (the generated
//! ClientSet's and the informers' clients) speaks Kubernetes' protobuf when
//! `K` does ([`Resource::PROTOBUF`](crate::object::Resource::PROTOBUF) is
//! `Some`: the built-in kinds of a crate generated with protobuf) and
//! [`Config::content_type`](crate::Config::content_type) is
//! [`ContentType::Protobuf`], the default, as client-go's clientset does:
//! get, list, watch, create, update, `update_status` and delete accept
//! `application/vnd.kubernetes.protobuf,application/json`, create and
//! update send protobuf, and each answer is decoded by its `Content-Type`,
//! so a server answering JSON (an aggregated API) is still understood;
//! another type is [`Error::UnexpectedContentType`]. Errors come back as a
//! `Status` in either format. The metadata-only client
//! ([`MetadataClient`](crate::metadata::MetadataClient), of any resource,
//! custom ones included) asks for the metadata in protobuf first, as
//! client-go's does ([`Object::protobuf_as`](crate::object::Object::protobuf_as)).
//! Everything else speaks JSON: custom resources (`PROTOBUF` is `None`),
//! the dynamic client, discovery, patch and apply bodies, the generic
//! subresource calls, [`Client::request`], and every client when the
//! configuration says [`ContentType::Json`].

mod builder;
mod client;
mod connect;
mod content;
mod error;
mod gzip;
mod limiter;
pub mod logs;
pub mod metrics;
mod options;
mod pool;
crate::cfg_feature!("ws" => pub mod portforward;);
pub mod proxy;
crate::cfg_feature!("ws" => pub mod remotecommand;);
mod request;
mod resource;
mod settings;
pub mod subresource;
mod target;
#[cfg(feature = "ws")]
mod upgrade;
pub mod verbs;
pub mod watch;

pub use crate::config::ContentType;
pub use builder::{ClientBuilder, TransportRequest, TransportService};
pub use client::{Client, MAX_RETRIES};
pub use connect::TLS_HANDSHAKE_TIMEOUT;
pub use error::{ApplyConflict, Error, Status, StatusCause, StatusDetails};
/// The `json-patch` crate, whose typed operations [`Patch::json_ops`] takes.
pub use json_patch;
pub use limiter::RateLimiter;
pub use logs::HasLog;
pub use options::{
    ApplyOptions, CreateOptions, DeleteOptions, FieldValidation, GetOptions, ListOptions, Patch, PatchOptions,
    Preconditions, PropagationPolicy, QueryPairs, UpdateOptions, VersionMatch, WatchOptions, WriteOptions,
};
pub use pool::Body;
crate::cfg_feature!("ws" => pub use portforward::HasPortForward;);
pub use proxy::HasProxy;
crate::cfg_feature!("ws" => pub use remotecommand::{HasAttach, HasExec};);
pub use request::Request;
pub use resource::{ClientObject, DeleteResult, ResourceClient};
pub use subresource::{HasScale, HasStatus};
pub use watch::{Bookmark, ByteStream, DEFAULT_MAX_EVENT_SIZE, WatchEvent, WatchStream};

#[cfg(test)]
pub(crate) mod tests;
