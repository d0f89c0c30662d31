//! Recording Kubernetes Events (client-go's `tools/record`).
//!
//! Controllers tell humans what they did by writing core/v1 Events about
//! the objects they act on; `kubectl describe` shows them.
//! [`crate::events`] writes the newer events.k8s.io/v1 Events instead;
//! its docs say which to use when.
//!
//! * Make one [`EventBroadcaster`] per process, usually with
//!   [`EventBroadcaster::with_client`] (write to the apiserver, log with
//!   `tracing`). For other destinations use
//!   [`EventBroadcaster::start_recording_to_sink`] with your own
//!   [`EventSink`], [`EventBroadcaster::start_event_watcher`] or
//!   [`EventBroadcaster::watch`].
//! * Hand an [`EventRecorder`] from [`EventBroadcaster::new_recorder`] to
//!   each component and call [`EventRecorder::event`] /
//!   [`EventRecorder::eventf`] with the object the event is about: any
//!   [`Object`](crate::object::Object), named in the event by its
//!   [`type_meta`](crate::object::Object::type_meta) and metadata.
//!   Recording never blocks or fails.
//! * On the way to the sink an [`EventCorrelator`] folds repeats into
//!   count updates (a PATCH of `count`/`lastTimestamp`), aggregates similar
//!   events with varying messages and rate-limits chatty objects; see
//!   [`CorrelatorOptions`] for the rules.
//!
//! Events are best effort by design, as in client-go: a full queue drops
//! events, the server's refusals are logged and not retried, and transport
//! failures are retried a bounded number of times.
//!
//! Sinks, watchers and the correlator see each event as a
//! [`DynamicObject`](crate::dynamic::DynamicObject) of kind `Event`,
//! apiVersion `v1`, with the event's fields in its `data`: the runtime does
//! not depend on the generated crate. For the generated kind, convert:
//! `let event: k8s_client::api::core::v1::Event = object.try_into_typed()?`
//! (see [`DynamicObject::try_into_typed`](crate::dynamic::DynamicObject::try_into_typed)).

pub(crate) mod broadcaster;
mod correlator;
pub(crate) mod event;
#[cfg(test)]
mod tests;

pub use broadcaster::{BroadcasterOptions, EventBroadcaster, EventRecorder, EventWatcher};
pub use correlator::{COMBINED_MESSAGE_PREFIX, CorrelateResult, CorrelatorOptions, EventCorrelator};
pub use crate::broadcast::{EventSink, EventType, RestEventSink, WatcherHandle};

/// Errors of the `record` module. Recording itself never fails; only
/// starting watchers can.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Watchers run as tokio tasks; there was no runtime to spawn them on.
    #[error("event watchers need a tokio runtime")]
    NoRuntime(#[source] tokio::runtime::TryCurrentError),
}
