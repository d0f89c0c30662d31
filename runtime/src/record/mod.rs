//! Recording Kubernetes Events (client-go's `tools/record`).
//!
//! Controllers tell humans what they did by writing core/v1 Events about
//! the objects they act on; `kubectl describe` shows them.
//!
//! * Make one [`EventBroadcaster`] per process, usually with
//!   [`EventBroadcaster::with_client`] (write to the apiserver, log with
//!   `tracing`). For other destinations use
//!   [`EventBroadcaster::start_recording_to_sink`] with your own
//!   [`EventSink`], [`EventBroadcaster::start_event_watcher`] or
//!   [`EventBroadcaster::watch`].
//! * Hand an [`EventRecorder`] from [`EventBroadcaster::new_recorder`] to
//!   each component and call [`EventRecorder::event`] /
//!   [`EventRecorder::eventf`]. Recording never blocks or fails.
//! * On the way to the sink an [`EventCorrelator`] folds repeats into
//!   count updates (a PATCH of `count`/`lastTimestamp`), aggregates similar
//!   events with varying messages and rate-limits chatty objects; see
//!   [`CorrelatorOptions`] for the rules.
//!
//! Events are best effort by design, as in client-go: a full queue drops
//! events, the server's refusals are logged and not retried, and transport
//! failures are retried a bounded number of times.
//!
//! [`Event`] is the runtime's own core/v1 Event type; it serializes to the
//! same JSON as the generated crate's `api::core::v1::Event`.

mod broadcaster;
mod correlator;
mod event;
mod sink;
#[cfg(test)]
mod tests;

pub use broadcaster::{BroadcasterOptions, EventBroadcaster, EventRecorder, EventWatcher, WatcherHandle};
pub use correlator::{COMBINED_MESSAGE_PREFIX, CorrelateResult, CorrelatorOptions, EventCorrelator};
pub use event::{Event, EventSource, EventType, ObjectReference, ToObjectReference};
pub use sink::{EventSink, RestEventSink};

/// Errors of the `record` module. Recording itself never fails; only
/// starting watchers can.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Watchers run as tokio tasks; there was no runtime to spawn them on.
    #[error("event watchers need a tokio runtime")]
    NoRuntime(#[source] tokio::runtime::TryCurrentError),
}
