//! [`EventBroadcaster`] fans recorded events out to watchers (the sink
//! writer, a logger, your own closures); [`EventRecorder`] is the handle
//! controllers record with.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, watch};

use super::Error;
use super::correlator::{Correlated, CorrelatorOptions, EventCorrelator};
use super::event::{EventRecord, Source, format_time};
use crate::broadcast::fanout::{Fanout, WatcherHandle, current_runtime};
use crate::broadcast::{EventSink, EventType, InvolvedObject, RestEventSink, is_retryable, unique_event_name};
use crate::dynamic::DynamicObject;
use crate::object::Object;
use crate::rest::Client;

/// Tuning of an [`EventBroadcaster`]; the defaults are client-go's.
#[derive(Debug, Clone, PartialEq)]
pub struct BroadcasterOptions {
    /// Events buffered per watcher before new ones are dropped
    /// (client-go's `maxQueuedEvents`).
    pub queue_length: usize,
    /// Pause between attempts to write an event (`defaultSleepDuration`);
    /// the first pause is a random fraction of it so that many clients do
    /// not retry in lockstep after an apiserver outage.
    #[doc(alias = "WithSleepDuration")]
    pub sleep_duration: Duration,
    /// Attempts per event before giving up (`maxTriesPerEvent`).
    pub max_tries: u32,
    /// Aggregation, count and spam filter settings of the sink pipeline.
    pub correlator: CorrelatorOptions,
}

impl Default for BroadcasterOptions {
    fn default() -> Self {
        BroadcasterOptions {
            queue_length: 1000,
            sleep_duration: Duration::from_secs(10),
            max_tries: 12,
            correlator: CorrelatorOptions::default(),
        }
    }
}

struct Shared {
    opts: BroadcasterOptions,
    fanout: Arc<Fanout<EventRecord>>,
}

/// Distributes recorded events to watchers (client-go's
/// `EventBroadcaster`). Cheap to clone; clones share watchers.
///
/// Recording never blocks: each watcher has a bounded queue
/// ([`BroadcasterOptions::queue_length`]) and an event that does not fit is
/// dropped with a warning.
///
/// ```no_run
/// # async fn demo(client: k8s_client_runtime::Client, pod: k8s_client_runtime::dynamic::DynamicObject) {
/// use k8s_client_runtime::record::{EventBroadcaster, EventType};
/// let broadcaster = EventBroadcaster::with_client(client).unwrap();
/// let recorder = broadcaster.new_recorder("my-controller");
/// recorder.event(&pod, EventType::Normal, "Synced", "pod synced");
/// # }
/// ```
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
    rx: mpsc::Receiver<EventRecord>,
}

impl EventWatcher {
    /// The next event, a core/v1 Event as a [`DynamicObject`] (see
    /// [`EventSink`] for the typed kind); `None` once the broadcaster is shut
    /// down.
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
    #[doc(alias = "NewBroadcasterWithCorrelatorOptions")]
    pub fn with_options(opts: BroadcasterOptions) -> Self {
        let fanout = Arc::new(Fanout::new(opts.queue_length));
        EventBroadcaster { shared: Arc::new(Shared { opts, fanout }) }
    }

    /// The usual setup: record to the apiserver through `client` and log
    /// every event with `tracing`. Must be called within a tokio runtime.
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

    /// Calls `handler` for every event (a core/v1 Event as a
    /// [`DynamicObject`]), from a task of its own.
    pub fn start_event_watcher<F>(&self, mut handler: F) -> Result<WatcherHandle, Error>
    where
        F: FnMut(&DynamicObject) + Send + 'static,
    {
        self.start_record_watcher(move |e| handler(&e.to_object()))
    }

    fn start_record_watcher<F>(&self, mut handler: F) -> Result<WatcherHandle, Error>
    where
        F: FnMut(&EventRecord) + Send + 'static,
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
        self.start_record_watcher(|e| {
            tracing::info!(
                object = %format_args!("{}/{}", e.involved_object.namespace, e.involved_object.name),
                kind = %e.involved_object.kind,
                r#type = %e.type_,
                reason = %e.reason,
                message = %e.message,
                "Event occurred"
            );
        })
    }

    /// Writes every event to `sink` through an [`EventCorrelator`]
    /// (aggregation, count updates, spam filter), retrying transport
    /// failures [`BroadcasterOptions::max_tries`] times.
    #[doc(alias = "StartRecordingToSink")]
    pub fn start_recording_to_sink<S: EventSink>(&self, sink: S) -> Result<WatcherHandle, Error> {
        let rt = current_runtime().map_err(Error::NoRuntime)?;
        let fanout = &self.shared.fanout;
        let (id, mut rx) = fanout.subscribe();
        let opts = self.shared.opts.clone();
        let mut shutdown = fanout.shutdown_signal();
        let guard = fanout.running_guard();
        let task = rt.spawn(async move {
            let _guard = guard;
            let mut correlator = EventCorrelator::new(opts.correlator.clone());
            while let Some(ev) = rx.recv().await {
                record_to_sink(&sink, ev, &mut correlator, &opts, &mut shutdown).await;
            }
        });
        Ok(WatcherHandle::new(id, fanout, task))
    }

    /// A recorder reporting as `component` (the event's `source.component`,
    /// e.g. `deployment-controller`); see [`EventRecorder::with_host`] for
    /// the host.
    #[doc(alias = "NewRecorder")]
    pub fn new_recorder(&self, component: impl Into<String>) -> EventRecorder {
        EventRecorder { broadcaster: self.clone(), source: Source { component: component.into(), host: String::new() } }
    }

    /// Stops all watchers: queued events are still delivered, retry sleeps
    /// end at once, and later events are discarded.
    pub fn shutdown(&self) {
        self.shared.fanout.shutdown();
    }

    /// Stops accepting events and waits until the watchers have handled
    /// everything already queued, including the sink's retries. Use it
    /// before exiting (or in tests) to make sure recorded events were
    /// written; [`shutdown`](Self::shutdown) instead drops pending retries.
    ///
    /// # Cancel safety
    /// Cancel safe: dropping the future stops only the waiting; the
    /// broadcaster stays closed and its watchers finish on their own.
    pub async fn drain(&self) {
        self.shared.fanout.drain().await;
    }

    /// Hands `event` to every watcher without waiting (`ActionOrDrop`).
    fn action_or_drop(&self, event: EventRecord) {
        self.shared.fanout.action_or_drop(event, |e| format!("{:?} ({})", e.metadata.name, e.reason));
    }
}

/// One write attempt; `true` when done (written or given up on for good).
async fn record_event<S: EventSink>(sink: &S, result: &mut Correlated, correlator: &mut EventCorrelator) -> bool {
    let event = &mut result.event;
    let mut outcome = None;
    if let (true, Some(patch)) = (event.count > 1, result.patch.as_ref()) {
        outcome = Some(sink.patch(&event.to_object(), patch).await);
    }
    // The event we count may have been deleted (events expire after an
    // hour by default): write it anew, keeping its count.
    let create = match &outcome {
        None => true,
        Some(Err(e)) => e.is_not_found(),
        Some(Ok(_)) => false,
    };
    if create {
        event.metadata.resource_version = None;
        outcome = Some(sink.create(&event.to_object()).await);
    }
    match outcome {
        Some(Ok(written)) => {
            correlator.update_state(&written);
            true
        }
        Some(Err(e)) if is_retryable(&e) => {
            tracing::error!(event = ?event.metadata.name, error = %crate::ErrorChain(&e), "unable to write event (may retry after sleeping)");
            false
        }
        Some(Err(e)) => {
            if e.is_already_exists() {
                tracing::debug!(event = ?event.metadata.name, error = %crate::ErrorChain(&e), "server rejected event (will not retry)");
            } else {
                tracing::error!(event = ?event.metadata.name, error = %crate::ErrorChain(&e), "server rejected event (will not retry)");
            }
            true
        }
        None => true,
    }
}

async fn record_to_sink<S: EventSink>(
    sink: &S,
    event: EventRecord,
    correlator: &mut EventCorrelator,
    opts: &BroadcasterOptions,
    shutdown: &mut watch::Receiver<bool>,
) {
    let Some(mut result) = correlator.correlate_record(event) else {
        return;
    };
    let mut tries = 0;
    loop {
        if record_event(sink, &mut result, correlator).await {
            return;
        }
        tries += 1;
        if tries >= opts.max_tries {
            tracing::error!(event = ?result.event.metadata.name, tries, "unable to write event (retry limit exceeded)");
            return;
        }
        let delay = if tries == 1 { opts.sleep_duration.mul_f64(rand::random::<f64>()) } else { opts.sleep_duration };
        tokio::select! {
            _ = tokio::time::sleep(delay) => {}
            // Ends on shutdown or when the broadcaster is gone.
            _ = shutdown.wait_for(|down| *down) => {
                tracing::warn!(event = ?result.event.metadata.name, "shutting down, event not written");
                return;
            }
        }
    }
}

/// Records events for one component (client-go's `EventRecorder`). Cheap
/// to clone; never blocks and never fails: events that cannot be queued
/// are dropped with a warning.
///
/// Events can be recorded about any [`Object`]: a generated kind, an
/// `Arc` of one from a cache, or a [`DynamicObject`]. The event's
/// `involvedObject` names it by its [`Object::type_meta`] and its
/// metadata (name, namespace, uid, resourceVersion), as client-go's
/// `reference.GetReference` does; an object that does not know its
/// `apiVersion` and `kind` (a dynamic object that has neither) is recorded
/// without them, with a warning.
#[derive(Debug, Clone)]
pub struct EventRecorder {
    broadcaster: EventBroadcaster,
    source: Source,
}

impl EventRecorder {
    /// The same recorder, reporting from node `host` (the event's
    /// `source.host`), for components tied to a node as the kubelet is.
    #[must_use]
    pub fn with_host(mut self, host: impl Into<String>) -> Self {
        self.source.host = host.into();
        self
    }

    /// The component the recorder's events name as their `source`.
    pub fn component(&self) -> &str {
        &self.source.component
    }

    /// The host the recorder's events name as their `source`; empty unless
    /// set with [`with_host`](Self::with_host).
    pub fn host(&self) -> &str {
        &self.source.host
    }

    /// Records that `reason` happened to `object`.
    pub fn event(&self, object: &impl Object, type_: EventType, reason: &str, message: &str) {
        self.generate(object, None, type_, reason, message.to_owned());
    }

    /// [`event`](Self::event) with a formatted message:
    /// `recorder.eventf(&pod, EventType::Warning, "Failed", format_args!("pull {image}"))`.
    pub fn eventf(&self, object: &impl Object, type_: EventType, reason: &str, message: fmt::Arguments<'_>) {
        self.generate(object, None, type_, reason, message.to_string());
    }

    /// [`eventf`](Self::eventf) with annotations on the Event object.
    #[doc(alias = "AnnotatedEventf")]
    pub fn annotated_eventf(
        &self,
        object: &impl Object,
        annotations: crate::Map,
        type_: EventType,
        reason: &str,
        message: fmt::Arguments<'_>,
    ) {
        self.generate(object, Some(annotations), type_, reason, message.to_string());
    }

    fn generate(
        &self,
        object: &impl Object,
        annotations: Option<crate::Map>,
        type_: EventType,
        reason: &str,
        message: String,
    ) {
        let event = make_event(InvolvedObject::of(object), annotations, type_, reason, message, &self.source);
        self.broadcaster.action_or_drop(event);
    }
}

/// client-go's `makeEvent`: a fresh event with count 1, named after the
/// object, in the object's namespace (or `default` for cluster-scoped ones).
fn make_event(
    involved: InvolvedObject,
    annotations: Option<crate::Map>,
    type_: EventType,
    reason: &str,
    message: String,
    source: &Source,
) -> EventRecord {
    let now = jiff::Timestamp::now();
    let stamp = format_time(now);
    let namespace = if involved.namespace.is_empty() { "default".to_owned() } else { involved.namespace.clone() };
    let mut event = EventRecord {
        reason: reason.to_owned(),
        message,
        source: source.clone(),
        first_timestamp: Some(stamp.clone()),
        last_timestamp: Some(stamp),
        count: 1,
        type_: type_.as_str().to_owned(),
        ..Default::default()
    };
    event.metadata.name = Some(unique_event_name(&involved.name, now));
    event.metadata.namespace = Some(namespace);
    event.metadata.annotations = annotations.filter(|a| !a.is_empty());
    event.involved_object = involved;
    event
}
