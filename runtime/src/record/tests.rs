//! Broadcaster and recorder tests against an in-memory sink. Timing uses
//! tokio's paused clock.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::time::Instant;

use super::event::{EventRecord, Source};
use crate::broadcast::InvolvedObject;
use super::*;
use crate::dynamic::DynamicObject;
use crate::rest::{Error as RestError, Status};
use crate::testing::{Node, Pod};

#[derive(Debug, Clone)]
struct Call {
    verb: &'static str,
    /// What the sink was given, read back as a record.
    event: EventRecord,
    patch: Option<serde_json::Value>,
    at: Instant,
}

/// Succeeds unless a scripted failure is queued for the verb.
#[derive(Clone, Default)]
struct MockSink {
    calls: Arc<Mutex<Vec<Call>>>,
    failures: Arc<Mutex<VecDeque<(&'static str, RestError)>>>,
    rv: Arc<Mutex<u64>>,
}

impl MockSink {
    fn fail(&self, verb: &'static str, err: RestError) {
        self.failures.lock().push_back((verb, err));
    }
    fn calls(&self) -> Vec<Call> {
        self.calls.lock().clone()
    }
    fn answer(
        &self,
        verb: &'static str,
        event: &DynamicObject,
        patch: Option<&serde_json::Value>,
    ) -> Result<DynamicObject, RestError> {
        let record = EventRecord::from_object(event).unwrap();
        self.calls.lock().push(Call { verb, event: record, patch: patch.cloned(), at: Instant::now() });
        let mut failures = self.failures.lock();
        if failures.front().is_some_and(|(v, _)| *v == verb)
            && let Some((_, e)) = failures.pop_front()
        {
            return Err(e);
        }
        let mut rv = self.rv.lock();
        *rv += 1;
        let mut written = event.clone();
        written.metadata.resource_version = Some(rv.to_string());
        Ok(written)
    }
}

impl EventSink for MockSink {
    async fn create(&self, event: &DynamicObject) -> Result<DynamicObject, RestError> {
        self.answer("create", event, None)
    }
    async fn update(&self, event: &DynamicObject) -> Result<DynamicObject, RestError> {
        self.answer("update", event, None)
    }
    async fn patch(&self, event: &DynamicObject, patch: &serde_json::Value) -> Result<DynamicObject, RestError> {
        self.answer("patch", event, Some(patch))
    }
}

fn api_error(reason: &str, code: u16) -> RestError {
    RestError::Api(Box::new(Status { reason: reason.into(), code, ..Default::default() }))
}

fn pod() -> Pod {
    let mut pod = crate::testing::pod("ns", "web-0", "");
    pod.metadata.uid = Some("u-1".into());
    pod.metadata.resource_version = Some("8".into());
    pod
}

/// The next event a watcher gets, as a record.
async fn next(w: &mut EventWatcher) -> Option<EventRecord> {
    let obj = w.recv().await?;
    assert_eq!((obj.api_version.as_str(), obj.kind.as_str()), ("v1", "Event"));
    Some(EventRecord::from_object(&obj).unwrap())
}

/// `b` recording to a new sink that first fails as `failures` say, in
/// order, and a recorder of `b`.
fn recording(
    b: &EventBroadcaster,
    failures: impl IntoIterator<Item = (&'static str, RestError)>,
) -> (MockSink, WatcherHandle, EventRecorder) {
    let sink = MockSink::default();
    for (verb, err) in failures {
        sink.fail(verb, err);
    }
    let h = b.start_recording_to_sink(sink.clone()).unwrap();
    (sink, h, b.new_recorder("ctrl"))
}

/// `n` failed creates, as when the apiserver cannot be reached.
fn create_timeouts(n: usize) -> impl Iterator<Item = (&'static str, RestError)> {
    (0..n).map(|_| ("create", RestError::Timeout(Duration::from_secs(1))))
}

/// Stops the sink's watcher and waits for it; what the sink was asked.
async fn stopped(h: WatcherHandle, sink: &MockSink) -> Vec<Call> {
    h.stop();
    h.join().await;
    sink.calls()
}

fn options(sleep: Duration) -> BroadcasterOptions {
    BroadcasterOptions { sleep_duration: sleep, ..Default::default() }
}

#[tokio::test(start_paused = true)]
async fn recorder_builds_client_go_shaped_events() {
    let b = EventBroadcaster::new();
    let mut w = b.watch();
    let r = b.new_recorder("ctrl").with_host("node-1");
    assert_eq!((r.component(), r.host()), ("ctrl", "node-1"));
    r.eventf(&pod(), EventType::Warning, "Failed", format_args!("pulling {}", "img"));
    let mut node = Node::default();
    node.metadata.name = Some("n1".into());
    let ann = crate::Map::from([("k", "v")]);
    r.annotated_eventf(&Arc::new(node), ann.clone(), EventType::Normal, "Ready", format_args!("ok"));

    let e = next(&mut w).await.unwrap();
    assert!(e.metadata.name.as_deref().unwrap().starts_with("web-0."));
    assert_eq!(e.metadata.namespace.as_deref(), Some("ns"));
    assert_eq!((e.type_.as_str(), e.reason.as_str(), e.message.as_str()), ("Warning", "Failed", "pulling img"));
    assert_eq!(e.count, 1);
    assert_eq!(e.source, Source { component: "ctrl".into(), host: "node-1".into() });
    let involved = InvolvedObject {
        kind: "Pod".into(),
        namespace: "ns".into(),
        name: "web-0".into(),
        uid: "u-1".into(),
        api_version: "v1".into(),
        resource_version: "8".into(),
        field_path: String::new(),
    };
    assert_eq!(e.involved_object, involved);
    assert!(e.first_timestamp.is_some() && e.first_timestamp == e.last_timestamp);

    let e = next(&mut w).await.unwrap();
    assert_eq!(e.metadata.namespace.as_deref(), Some("default"), "cluster-scoped objects' events go to default");
    assert_eq!(e.metadata.annotations, Some(ann));
    assert_eq!(
        (e.involved_object.kind.as_str(), e.involved_object.api_version.as_str()),
        ("Node", "example.io/v1beta1")
    );
    assert_eq!((e.involved_object.namespace.as_str(), e.involved_object.name.as_str()), ("", "n1"));
}

#[tokio::test(start_paused = true)]
async fn repeated_event_is_patched_with_count() {
    let b = EventBroadcaster::new();
    let (sink, h, r) = recording(&b, []);
    for _ in 0..3 {
        r.event(&pod(), EventType::Normal, "Synced", "synced");
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    let calls = stopped(h, &sink).await;
    let verbs: Vec<_> = calls.iter().map(|c| c.verb).collect();
    assert_eq!(verbs, ["create", "patch", "patch"]);
    let name = calls[0].event.metadata.name.clone();
    assert_eq!(calls[1].event.metadata.name, name, "patches the created event");
    assert_eq!(calls[1].event.metadata.resource_version.as_deref(), Some("1"));
    assert_eq!(calls[1].patch.as_ref().unwrap()["count"], 2);
    assert_eq!(calls[2].patch.as_ref().unwrap()["count"], 3);
    assert_eq!(calls[2].patch.as_ref().unwrap()["message"], "synced");
}

#[tokio::test(start_paused = true)]
async fn patch_of_deleted_event_creates_it_anew() {
    let b = EventBroadcaster::new();
    let (sink, h, r) = recording(&b, []);
    r.event(&pod(), EventType::Normal, "Synced", "synced");
    tokio::time::sleep(Duration::from_secs(1)).await;
    sink.fail("patch", api_error("NotFound", 404));
    r.event(&pod(), EventType::Normal, "Synced", "synced");
    tokio::time::sleep(Duration::from_secs(1)).await;
    r.event(&pod(), EventType::Normal, "Synced", "synced");
    let calls = stopped(h, &sink).await;
    let verbs: Vec<_> = calls.iter().map(|c| c.verb).collect();
    assert_eq!(verbs, ["create", "patch", "create", "patch"]);
    assert_eq!(calls[2].event.count, 2, "client-go keeps the count when recreating");
    assert_eq!(calls[2].event.metadata.resource_version, None, "create carries no resourceVersion");
    assert_eq!(calls[3].event.metadata.resource_version.as_deref(), Some("2"), "state follows the recreated event");
    assert_eq!(calls[3].patch.as_ref().unwrap()["count"], 3);
}

#[tokio::test(start_paused = true)]
async fn transport_errors_retry_twelve_times_with_jittered_first_sleep() {
    let b = EventBroadcaster::new();
    let (sink, h, r) = recording(&b, create_timeouts(20));
    r.event(&pod(), EventType::Normal, "X", "y");
    let calls = stopped(h, &sink).await;
    assert_eq!(calls.len(), 12, "maxTriesPerEvent");
    let gaps: Vec<Duration> = calls.windows(2).map(|w| w[1].at - w[0].at).collect();
    assert!(gaps[0] <= Duration::from_secs(10), "first sleep is a random fraction: {:?}", gaps[0]);
    for g in &gaps[1..] {
        assert_eq!(*g, Duration::from_secs(10));
    }
}

#[tokio::test(start_paused = true)]
async fn retry_timing_is_configurable_and_success_ends_retries() {
    let b = EventBroadcaster::with_options(options(Duration::from_millis(500)));
    let (sink, h, r) = recording(&b, create_timeouts(3));
    r.event(&pod(), EventType::Normal, "X", "y");
    let calls = stopped(h, &sink).await;
    assert_eq!(calls.len(), 4);
    assert_eq!(calls[3].at - calls[2].at, Duration::from_millis(500));
    assert_eq!(calls[2].at - calls[1].at, Duration::from_millis(500));
}

#[tokio::test(start_paused = true)]
async fn server_rejections_are_not_retried() {
    let b = EventBroadcaster::new();
    let failures = [("create", api_error("Forbidden", 403)), ("create", api_error("AlreadyExists", 409))];
    let (sink, h, r) = recording(&b, failures);
    r.event(&pod(), EventType::Normal, "A", "a");
    r.event(&pod(), EventType::Normal, "B", "b");
    assert_eq!(stopped(h, &sink).await.len(), 2);
}

#[tokio::test(start_paused = true)]
async fn full_queue_drops_instead_of_blocking() {
    let b = EventBroadcaster::with_options(BroadcasterOptions { queue_length: 2, ..Default::default() });
    let mut w = b.watch();
    let r = b.new_recorder("ctrl");
    for i in 0..5 {
        r.event(&pod(), EventType::Normal, "R", &format!("m{i}"));
    }
    assert_eq!(next(&mut w).await.unwrap().message, "m0");
    assert_eq!(next(&mut w).await.unwrap().message, "m1");
    b.shutdown();
    assert!(w.recv().await.is_none(), "m2.. were dropped");
}

#[tokio::test(start_paused = true)]
async fn shutdown_ends_retry_sleep_and_discards_later_events() {
    let b = EventBroadcaster::new();
    let (sink, h, r) = recording(&b, create_timeouts(20));
    r.event(&pod(), EventType::Normal, "X", "y");
    tokio::time::sleep(Duration::from_secs(25)).await;
    let before = sink.calls().len();
    assert!((3..=4).contains(&before), "{before} attempts in 25 s");
    let t0 = Instant::now();
    b.shutdown();
    h.join().await;
    assert_eq!(Instant::now(), t0, "no more sleeping after shutdown");
    assert_eq!(sink.calls().len(), before);
    r.event(&pod(), EventType::Normal, "X", "later");
    let mut w = b.watch();
    assert!(w.recv().await.is_none());
}

#[tokio::test(start_paused = true)]
async fn spam_filter_applies_on_the_sink_path() {
    let b = EventBroadcaster::new();
    let (sink, h, r) = recording(&b, []);
    for i in 0..40 {
        // Distinct reasons: neither counted nor aggregated, only rate-limited.
        r.event(&pod(), EventType::Normal, &format!("R{i}"), "m");
    }
    assert_eq!(stopped(h, &sink).await.len(), 25);
}

#[tokio::test]
async fn watchers_fan_out_and_need_a_runtime_only_to_start() {
    let b = EventBroadcaster::new();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let h = b.start_event_watcher(move |e| s.lock().push(e.data["reason"].clone())).unwrap();
    let mut w = b.watch();
    b.new_recorder("c").event(&pod(), EventType::Normal, "R", "m");
    assert_eq!(next(&mut w).await.unwrap().reason, "R");
    h.stop();
    h.join().await;
    assert_eq!(*seen.lock(), ["R"]);

    let outside = std::thread::spawn(|| EventBroadcaster::new().start_structured_logging().map(|_| ()));
    assert!(matches!(outside.join().unwrap(), Err(Error::NoRuntime(_))));
}

#[tokio::test(start_paused = true)]
async fn drain_waits_for_queued_events_and_their_retries() {
    let b = EventBroadcaster::new();
    let (sink, _, r) = recording(&b, create_timeouts(1));
    let seen = Arc::new(Mutex::new(0));
    let s = seen.clone();
    b.start_event_watcher(move |_| *s.lock() += 1).unwrap();
    r.event(&pod(), EventType::Normal, "A", "a");
    r.event(&pod(), EventType::Normal, "B", "b");
    b.drain().await;
    let verbs: Vec<_> = sink.calls().iter().map(|c| (c.verb, c.event.reason.clone())).collect();
    assert_eq!(verbs, [("create", "A".into()), ("create", "A".into()), ("create", "B".into())]);
    assert_eq!(*seen.lock(), 2);
    r.event(&pod(), EventType::Normal, "C", "c");
    b.drain().await;
    assert_eq!(sink.calls().len(), 3, "closed after drain");
}

#[tokio::test]
async fn dropping_the_broadcaster_ends_its_watchers() {
    let b = EventBroadcaster::new();
    let h = b.start_recording_to_sink(MockSink::default()).unwrap();
    drop(b);
    tokio::time::timeout(Duration::from_secs(5), h.join()).await.unwrap();
}
