//! [`EventBroadcaster`] fans recorded events out to watchers;
//! [`EventRecorder`] is the handle controllers record with.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;

use super::Error;
use super::event::{EventV1, reporting_instance, truncate_note};
use super::sink::RestEventSink;
use super::writer::SeriesWriter;
use crate::broadcast::fanout::{Fanout, WatcherHandle, current_runtime};
use crate::broadcast::{EventSink, EventType, InvolvedObject, unique_event_name};
use crate::dynamic::DynamicObject;
use crate::object::Object;
use crate::rest::Client;

/// Tuning of an [`EventBroadcaster`]; the defaults are client-go's.
#[derive(Debug, Clone, PartialEq)]
pub struct BroadcasterOptions {
    /// Events buffered per watcher before new ones are dropped
    /// (`maxQueuedEvents`).
    pub queue_length: usize,
    /// Pause between attempts to write an event (`defaultSleepDuration`),
    /// lengthened by up to a random quarter so that many clients do not
    /// retry in lockstep after an apiserver outage.
    pub sleep_duration: Duration,
    /// Attempts per event before giving up (`maxTriesPerEvent`).
    pub max_tries: u32,
    /// How long an event is remembered for starting or extending a series
    /// after it was last seen, and how often that is checked
    /// (`finishTime`). A series not seen for that long is finished: its
    /// final count is written and it is forgotten.
    pub finish_period: Duration,
    /// How often every open series is written again (`refreshTime`), which
    /// keeps its Event from expiring on the apiserver (events live an hour
    /// by default) and brings its count up to date.
    pub refresh_period: Duration,
}

impl Default for BroadcasterOptions {
    fn default() -> Self {
        BroadcasterOptions {
            queue_length: 1000,
            sleep_duration: Duration::from_secs(10),
            max_tries: 12,
            finish_period: Duration::from_secs(6 * 60),
            refresh_period: Duration::from_secs(30 * 60),
        }
    }
}

struct Shared {
    opts: BroadcasterOptions,
    fanout: Arc<Fanout<EventV1>>,
}

/// Distributes recorded events.k8s.io/v1 events to watchers (client-go's
/// `events.EventBroadcaster`). Cheap to clone; clones share watchers.
///
/// Recording never blocks: each watcher has a bounded queue
/// ([`BroadcasterOptions::queue_length`]) and an event that does not fit is
/// dropped with a warning.
#[derive(Clone)]
#[doc(alias = "NewBroadcaster")]
pub struct EventBroadcaster {
    shared: Arc<Shared>,
}

impl fmt::Debug for EventBroadcaster {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EventBroadcaster")
            .field("watchers", &self.shared.fanout.watcher_count())
            .field("shut_down", &self.shared.fanout.is_shut_down())
            .finish()
    }
}

impl Default for EventBroadcaster {
    fn default() -> Self {
        Self::new()
    }
}

/// A raw subscription to every recorded event (client-go's `Watch`).
#[derive(Debug)]
pub struct EventWatcher {
    rx: mpsc::Receiver<EventV1>,
}

impl EventWatcher {
    /// The next event, an events.k8s.io/v1 Event as a [`DynamicObject`]
    /// (`try_into_typed` turns it into the generated kind), as recorded:
    /// without `series`, which only the sink writer keeps. `None` once
    /// the broadcaster is shut down.
    ///
    /// # Cancel safety
    /// Cancel safe: no event is lost when the future is dropped.
    pub async fn recv(&mut self) -> Option<DynamicObject> {
        self.rx.recv().await.map(|e| e.to_object())
    }
}

impl EventBroadcaster {
    /// A broadcaster with client-go's defaults and no watchers yet: events
    /// go nowhere until a sink or watcher is started.
    pub fn new() -> Self {
        Self::with_options(BroadcasterOptions::default())
    }

    /// A broadcaster tuned by `opts`, with no watchers yet.
    pub fn with_options(opts: BroadcasterOptions) -> Self {
        let fanout = Arc::new(Fanout::new(opts.queue_length));
        EventBroadcaster { shared: Arc::new(Shared { opts, fanout }) }
    }

    /// The usual setup: record to the apiserver's events.k8s.io/v1 Events
    /// through `client` and log every event with `tracing`. Must be called
    /// within a tokio runtime.
    pub fn with_client(client: Client) -> Result<Self, Error> {
        let b = Self::new();
        b.start_recording_to_sink(RestEventSink::new(client))?;
        b.start_structured_logging()?;
        Ok(b)
    }

    /// The tuning this broadcaster was made with.
    pub fn options(&self) -> &BroadcasterOptions {
        &self.shared.opts
    }

    /// Subscribes to every event recorded from now on.
    #[doc(alias = "Watch")]
    pub fn watch(&self) -> EventWatcher {
        EventWatcher { rx: self.shared.fanout.subscribe().1 }
    }

    /// Calls `handler` for every event (an events.k8s.io/v1 Event as a
    /// [`DynamicObject`]), from a task of its own.
    #[doc(alias = "StartEventWatcher")]
    pub fn start_event_watcher<F>(&self, mut handler: F) -> Result<WatcherHandle, Error>
    where
        F: FnMut(&DynamicObject) + Send + 'static,
    {
        self.start_v1_watcher(move |e| handler(&e.to_object()))
    }

    fn start_v1_watcher<F>(&self, mut handler: F) -> Result<WatcherHandle, Error>
    where
        F: FnMut(&EventV1) + Send + 'static,
    {
        let rt = current_runtime().map_err(Error::NoRuntime)?;
        let fanout = &self.shared.fanout;
        let (id, mut rx) = fanout.subscribe();
        let guard = fanout.running_guard();
        let task = rt.spawn(async move {
            let _guard = guard;
            while let Some(ev) = rx.recv().await {
                handler(&ev);
            }
        });
        Ok(WatcherHandle::new(id, fanout, task))
    }

    /// Logs every event at `info` level with `tracing`.
    #[doc(alias = "StartStructuredLogging")]
    #[doc(alias = "StartLogging")]
    pub fn start_structured_logging(&self) -> Result<WatcherHandle, Error> {
        self.start_v1_watcher(|e| {
            tracing::info!(
                object = %format_args!("{}/{}", e.regarding.namespace, e.regarding.name),
                kind = %e.regarding.kind,
                api_version = %e.regarding.api_version,
                r#type = %e.type_,
                reason = %e.reason,
                action = %e.action,
                note = %e.note,
                "Event occurred"
            );
        })
    }

    /// Writes every event to `sink`, folding repeats into series (see the
    /// [module docs](super)), retrying transport failures
    /// [`BroadcasterOptions::max_tries`] times. The sink is given
    /// events.k8s.io/v1 Events; its `patch` gets strategic merge patches
    /// of `series`.
    #[doc(alias = "StartRecordingToSink")]
    #[doc(alias = "StartRecordingToSinkWithContext")]
    pub fn start_recording_to_sink<S: EventSink>(&self, sink: S) -> Result<WatcherHandle, Error> {
        let rt = current_runtime().map_err(Error::NoRuntime)?;
        let fanout = &self.shared.fanout;
        let (id, rx) = fanout.subscribe();
        let writer = SeriesWriter::new(sink, self.shared.opts.clone(), fanout.shutdown_signal());
        let guard = fanout.running_guard();
        let task = rt.spawn(async move {
            let _guard = guard;
            writer.run(rx).await;
        });
        Ok(WatcherHandle::new(id, fanout, task))
    }

    /// A recorder reporting as `reporting_controller` (e.g.
    /// `example.com/my-controller`; the apiserver wants a qualified name),
    /// its instance named `<reporting_controller>-<hostname>`.
    #[doc(alias = "NewRecorder")]
    pub fn new_recorder(&self, reporting_controller: impl Into<String>) -> EventRecorder {
        let reporting_controller = reporting_controller.into();
        EventRecorder {
            broadcaster: self.clone(),
            reporting_instance: reporting_instance(&reporting_controller),
            reporting_controller,
        }
    }

    /// Stops all watchers: queued events are still handed to them, retry
    /// sleeps end at once, series not yet written are dropped, and later
    /// events are discarded (client-go's `Shutdown`).
    pub fn shutdown(&self) {
        self.shared.fanout.shutdown();
    }

    /// Stops accepting events and waits until the watchers have handled
    /// everything already queued, including the sink's retries, and the
    /// sink writer has written every series' latest count. Use it before
    /// exiting (or in tests) to make sure recorded events were written;
    /// [`shutdown`](Self::shutdown) instead drops what is pending.
    ///
    /// # Cancel safety
    /// Cancel safe: dropping the future stops only the waiting; the
    /// broadcaster stays closed and its watchers finish on their own.
    pub async fn drain(&self) {
        self.shared.fanout.drain().await;
    }
}

/// Records events.k8s.io/v1 events for one controller (client-go's
/// `events.EventRecorder`). Cheap to clone; never blocks and never fails:
/// events that cannot be queued are dropped with a warning.
///
/// The `regarding` and `related` objects can be any [`Object`]: a
/// generated kind, an `Arc` of one from a cache, or a [`DynamicObject`].
/// They are named by their [`Object::type_meta`] and metadata (name,
/// namespace, uid, resourceVersion), as client-go's
/// `reference.GetReference` does.
#[derive(Debug, Clone)]
pub struct EventRecorder {
    broadcaster: EventBroadcaster,
    reporting_controller: String,
    reporting_instance: String,
}

impl EventRecorder {
    /// The same recorder with another `reportingInstance` than
    /// `<controller>-<hostname>`, e.g. when the host name is longer than
    /// the 128 bytes the apiserver accepts.
    #[must_use]
    pub fn with_reporting_instance(mut self, instance: impl Into<String>) -> Self {
        self.reporting_instance = instance.into();
        self
    }

    /// The events' `reportingController`.
    pub fn reporting_controller(&self) -> &str {
        &self.reporting_controller
    }

    /// The events' `reportingInstance`.
    pub fn reporting_instance(&self) -> &str {
        &self.reporting_instance
    }

    /// Records that the controller took `action` on `regarding` because of
    /// `reason` (both UpperCamelCase, at most 128 bytes, as the apiserver
    /// requires), `note` saying more to humans.
    pub fn event(&self, regarding: &impl Object, type_: EventType, reason: &str, action: &str, note: &str) {
        self.record(InvolvedObject::of(regarding), None, None, type_, reason, action, note.to_owned());
    }

    /// client-go's `Eventf`: [`event`](Self::event) with a `related`
    /// object (e.g. the node a pod was bound to) and a formatted note:
    /// `recorder.eventf(&pod, Some(&node), EventType::Normal, "Scheduled", "Binding", format_args!("bound to {n}"))`.
    /// Without a related object, use [`event`](Self::event) (or pass
    /// `None::<&DynamicObject>`).
    pub fn eventf(
        &self,
        regarding: &impl Object,
        related: Option<&impl Object>,
        type_: EventType,
        reason: &str,
        action: &str,
        note: fmt::Arguments<'_>,
    ) {
        let related = related.map(InvolvedObject::of);
        self.record(InvolvedObject::of(regarding), related, None, type_, reason, action, note.to_string());
    }

    /// client-go's `AnnotatedEventf`: [`eventf`](Self::eventf) with
    /// `annotations` set on the Event object's metadata (an empty map sets
    /// none). Meant for a little correlation data for tools, not as a
    /// channel of structured data: events are best effort, and a repeat
    /// folded into a series keeps the first occurrence's annotations.
    #[doc(alias = "AnnotatedEventf")]
    #[allow(clippy::too_many_arguments)] // client-go's parameters, in its order.
    pub fn annotated_eventf(
        &self,
        regarding: &impl Object,
        related: Option<&impl Object>,
        annotations: crate::Map,
        type_: EventType,
        reason: &str,
        action: &str,
        note: fmt::Arguments<'_>,
    ) {
        let related = related.map(InvolvedObject::of);
        let regarding = InvolvedObject::of(regarding);
        self.record(regarding, related, Some(annotations), type_, reason, action, note.to_string());
    }

    #[allow(clippy::too_many_arguments)]
    fn record(
        &self,
        regarding: InvolvedObject,
        related: Option<InvolvedObject>,
        annotations: Option<crate::Map>,
        type_: EventType,
        reason: &str,
        action: &str,
        note: String,
    ) {
        let now = jiff::Timestamp::now();
        let event = make_event(self, regarding, related, annotations, type_, reason, action, note, now);
        self.broadcaster.shared.fanout.action_or_drop(event, EventV1::describe);
    }
}

/// client-go's `makeEvent`: a fresh event without series, named after the
/// regarding object, in its namespace (`default` for cluster-scoped ones),
/// with the annotations of `annotated_eventf`.
#[allow(clippy::too_many_arguments)]
fn make_event(
    recorder: &EventRecorder,
    regarding: InvolvedObject,
    related: Option<InvolvedObject>,
    annotations: Option<crate::Map>,
    type_: EventType,
    reason: &str,
    action: &str,
    note: String,
    now: jiff::Timestamp,
) -> EventV1 {
    let namespace = if regarding.namespace.is_empty() { "default".to_owned() } else { regarding.namespace.clone() };
    let mut event = EventV1 {
        event_time: crate::codec::format_micro_time(&now),
        series: None,
        reporting_controller: recorder.reporting_controller.clone(),
        reporting_instance: recorder.reporting_instance.clone(),
        action: action.to_owned(),
        reason: reason.to_owned(),
        related,
        note: truncate_note(note),
        type_: type_.as_str().to_owned(),
        ..Default::default()
    };
    event.metadata.name = Some(unique_event_name(&regarding.name, now));
    event.metadata.namespace = Some(namespace);
    // As the core/v1 recorder: an empty map would only write `{}`.
    event.metadata.annotations = annotations.filter(|a| !a.is_empty());
    event.regarding = regarding;
    event
}
