//! Recording events.k8s.io/v1 Events (client-go's `tools/events`).
//!
//! # `events` or [`record`](crate::record)?
//! Both tell humans what a controller did by writing Events about the
//! objects it acts on.
//!
//! * **`events`** writes the newer `events.k8s.io/v1` Events: who acted
//!   (`reportingController`, `reportingInstance`), what it did (`action`)
//!   and why (`reason`) to which object (`regarding`, and an optional
//!   `related` one), with a microsecond `eventTime`. Current controllers
//!   (scheduler, kube-controller-manager) record this way, and `kubectl
//!   events` shows these fields. Use it for new code.
//! * **[`record`](crate::record)** writes the older core/v1 Events
//!   (`involvedObject`, `source`, `count`), which every tool reads,
//!   `kubectl describe` of old clusters included. Use it for compatibility
//!   with tooling that reads core/v1 fields, or where its aggregation and
//!   spam filter are wanted.
//!
//! The apiserver stores one kind of Event and serves both APIs, so either
//! is visible through the other.
//!
//! # How repeats are folded
//! `record` bumps `count` with a patch on every repeat, rate-limits each
//! object's events and aggregates events that differ only in message.
//! `events` has no spam filter and no aggregation; it groups occurrences
//! into a **series** instead, as client-go does:
//!
//! 1. The first occurrence of an event is created. Occurrences are the
//!    same when type, action, reason, reporting controller and instance,
//!    and the `regarding` and `related` references (resourceVersion and
//!    fieldPath included) are equal; the note does not count.
//! 2. Its first repeat starts a series: the Event is patched (a strategic
//!    merge patch) with `series: {count: 2, lastObservedTime}` at once.
//! 3. Later repeats only count, in memory. The count reaches the apiserver
//!    when the series is **finished**, once it has not been seen for
//!    [`BroadcasterOptions::finish_period`] (6 minutes; checked that
//!    often), or **refreshed**, every
//!    [`BroadcasterOptions::refresh_period`] (30 minutes), which also keeps
//!    the Event from expiring. [`EventBroadcaster::drain`] writes every
//!    count not yet written. So five quick repeats show `series.count: 2`
//!    until then, and `5` afterwards.
//! 4. An event alone for a finish period is forgotten: the next occurrence
//!    is a new Event.
//!
//! Notes longer than the apiserver's limit ([`MAX_NOTE_LENGTH`] bytes) are
//! cut, ending with ` ...`, rather than refused.
//!
//! # Use
//! Make one [`EventBroadcaster`] per process, usually with
//! [`EventBroadcaster::with_client`], and hand each component an
//! [`EventRecorder`] from [`EventBroadcaster::new_recorder`]. Recording
//! never blocks or fails; events are best effort, as in client-go: a full
//! queue drops events, the server's refusals are logged and not retried,
//! and transport failures are retried a bounded number of times.
//!
//! ```no_run
//! # async fn demo(
//! #     client: k8s_client_runtime::Client,
//! #     pod: k8s_client_runtime::dynamic::DynamicObject,
//! #     node: k8s_client_runtime::dynamic::DynamicObject,
//! # ) -> Result<(), k8s_client_runtime::events::Error> {
//! use k8s_client_runtime::events::{EventBroadcaster, EventType};
//!
//! let broadcaster = EventBroadcaster::with_client(client)?;
//! let recorder = broadcaster.new_recorder("example.com/pod-placer");
//! recorder.event(&pod, EventType::Normal, "Synced", "Sync", "pod synced");
//! let name = "node-1";
//! recorder.eventf(&pod, Some(&node), EventType::Normal, "Scheduled", "Binding", format_args!("bound to {name}"));
//! // Before exiting: write what is queued and the series' counts.
//! broadcaster.drain().await;
//! # Ok(()) }
//! ```
//!
//! Sinks and watchers see each event as a
//! [`DynamicObject`](crate::dynamic::DynamicObject) of kind `Event`,
//! apiVersion `events.k8s.io/v1`: the runtime does not depend on the
//! generated crate. For the generated kind, convert:
//! `let event: k8s_client::api::events::v1::Event = object.try_into_typed()?`.
//! The [`EventSink`] trait, the [`EventType`] enum and the
//! [`WatcherHandle`] are [`record`](crate::record)'s.

mod broadcaster;
mod event;
mod sink;
#[cfg(test)]
mod tests;
mod writer;

pub use crate::broadcast::{EventSink, EventType, WatcherHandle};
pub use broadcaster::{BroadcasterOptions, EventBroadcaster, EventRecorder, EventWatcher};
pub use event::MAX_NOTE_LENGTH;
pub use sink::RestEventSink;

/// Errors of the `events` module. Recording itself never fails; only
/// starting watchers can.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Watchers run as tokio tasks; there was no runtime to spawn them on.
    #[error("event watchers need a tokio runtime")]
    NoRuntime(#[source] tokio::runtime::TryCurrentError),
}
