//! Broadcaster, recorder and series tests against an in-memory sink, on
//! tokio's paused clock.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;

use super::event::EventV1;
use super::*;
use crate::dynamic::DynamicObject;
use crate::rest::{Error as RestError, Status};
use crate::testing::Pod;

#[derive(Debug, Clone)]
struct Call {
    verb: &'static str,
    event: EventV1,
    patch: Option<serde_json::Value>,
}

/// Succeeds unless a scripted failure is queued for the verb.
#[derive(Clone, Default)]
struct MemorySink {
    calls: Arc<Mutex<Vec<Call>>>,
    failures: Arc<Mutex<VecDeque<(&'static str, RestError)>>>,
}

impl MemorySink {
    fn fail(&self, verb: &'static str, err: RestError) {
        self.failures.lock().push_back((verb, err));
    }
    fn calls(&self) -> Vec<Call> {
        self.calls.lock().clone()
    }
    /// `(verb, reason, series count)` of each call.
    fn summary(&self) -> Vec<(&'static str, String, Option<i32>)> {
        self.calls().into_iter().map(|c| (c.verb, c.event.reason, c.event.series.map(|s| s.count))).collect()
    }
    fn answer(
        &self,
        verb: &'static str,
        event: &DynamicObject,
        patch: Option<&serde_json::Value>,
    ) -> Result<DynamicObject, RestError> {
        assert_eq!((event.api_version.as_str(), event.kind.as_str()), ("events.k8s.io/v1", "Event"));
        let parsed = EventV1::from_object(event).unwrap();
        self.calls.lock().push(Call { verb, event: parsed, patch: patch.cloned() });
        let mut failures = self.failures.lock();
        if failures.front().is_some_and(|(v, _)| *v == verb)
            && let Some((_, e)) = failures.pop_front()
        {
            return Err(e);
        }
        Ok(event.clone())
    }
}

impl EventSink for MemorySink {
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

const MINUTE: Duration = Duration::from_secs(60);

/// A broadcaster with client-go's periods recording to a new memory sink,
/// and a recorder of it.
fn recording(opts: BroadcasterOptions) -> (EventBroadcaster, MemorySink, EventRecorder) {
    let b = EventBroadcaster::with_options(opts);
    let sink = MemorySink::default();
    b.start_recording_to_sink(sink.clone()).unwrap();
    let r = b.new_recorder("example.com/ctrl");
    (b, sink, r)
}

/// Lets the sink writer handle what is queued (the clock is paused, so
/// no timer fires meanwhile).
async fn settle() {
    for _ in 0..20 {
        tokio::task::yield_now().await;
    }
}

#[tokio::test(start_paused = true)]
async fn first_event_is_created_with_the_v1_fields() {
    let (b, sink, r) = recording(BroadcasterOptions::default());
    let mut node = crate::testing::pod("", "node-1", "");
    node.metadata.uid = Some("n-1".into());
    r.eventf(&pod(), Some(&node), EventType::Warning, "FailedMount", "Mount", format_args!("volume {}", "data"));
    b.drain().await;

    let calls = sink.calls();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].verb, "create");
    let e = &calls[0].event;
    assert_eq!((e.type_.as_str(), e.reason.as_str(), e.action.as_str()), ("Warning", "FailedMount", "Mount"));
    assert_eq!(e.note, "volume data");
    assert_eq!(e.reporting_controller, "example.com/ctrl");
    let host = gethostname::gethostname().to_string_lossy().into_owned();
    assert_eq!(e.reporting_instance, format!("example.com/ctrl-{host}"));
    assert_eq!((e.regarding.kind.as_str(), e.regarding.api_version.as_str()), ("Pod", "v1"));
    assert_eq!((e.regarding.namespace.as_str(), e.regarding.name.as_str()), ("ns", "web-0"));
    assert_eq!((e.regarding.uid.as_str(), e.regarding.resource_version.as_str()), ("u-1", "8"));
    let related = e.related.as_ref().expect("related");
    assert_eq!((related.name.as_str(), related.uid.as_str()), ("node-1", "n-1"));
    assert_eq!(e.series, None);
    assert_eq!(e.metadata.namespace.as_deref(), Some("ns"));
    let name = e.metadata.name.as_deref().unwrap();
    let suffix = name.strip_prefix("web-0.").expect("named after the regarding object");
    assert!(u64::from_str_radix(suffix, 16).is_ok(), "{name}");
}

#[tokio::test(start_paused = true)]
async fn event_time_is_a_micro_time_with_six_fraction_digits() {
    let (b, sink, r) = recording(BroadcasterOptions::default());
    r.event(&pod(), EventType::Normal, "Synced", "Sync", "ok");
    r.event(&pod(), EventType::Normal, "Synced", "Sync", "ok");
    b.drain().await;
    let calls = sink.calls();
    let micro = |t: &str| {
        let (_, fraction) = t.strip_suffix('Z').unwrap().split_once('.').unwrap();
        assert_eq!(fraction.len(), 6, "{t}");
        assert!(fraction.bytes().all(|b| b.is_ascii_digit()), "{t}");
        crate::codec::parse_time(t).unwrap();
    };
    micro(&calls[0].event.event_time);
    micro(&calls[1].event.series.as_ref().unwrap().last_observed_time);
}

#[tokio::test(start_paused = true)]
async fn cluster_scoped_objects_get_events_in_default() {
    let (b, sink, r) = recording(BroadcasterOptions::default());
    r.event(&crate::testing::pod("", "node-1", ""), EventType::Normal, "Ready", "Check", "");
    b.drain().await;
    assert_eq!(sink.calls()[0].event.metadata.namespace.as_deref(), Some("default"));
}

#[tokio::test(start_paused = true)]
async fn annotated_events_carry_their_annotations_on_the_event() {
    let (b, sink, r) = recording(BroadcasterOptions::default());
    let mut watcher = b.watch();
    let node = crate::testing::pod("", "node-1", "");
    let ann = crate::Map::from([("example.com/trace", "t-1")]);
    r.annotated_eventf(
        &pod(),
        Some(&node),
        ann.clone(),
        EventType::Warning,
        "Failed",
        "Sync",
        format_args!("try {}", 1),
    );
    // The same occurrence with other annotations: as in client-go the
    // annotations are not part of what makes occurrences the same, so
    // this only starts the first Event's series.
    let other = crate::Map::from([("example.com/trace", "t-2")]);
    r.annotated_eventf(&pod(), Some(&node), other, EventType::Warning, "Failed", "Sync", format_args!("try {}", 2));
    r.annotated_eventf(&pod(), None::<&Pod>, crate::Map::new(), EventType::Normal, "Empty", "Sync", format_args!(""));
    r.eventf(&pod(), None::<&Pod>, EventType::Normal, "Plain", "Sync", format_args!(""));
    b.drain().await;

    let seen = watcher.recv().await.unwrap();
    assert_eq!(seen.metadata.annotations, Some(ann.clone()), "watchers see the annotations too");
    let calls = sink.calls();
    assert_eq!(
        sink.summary(),
        [
            ("create", "Failed".into(), None),
            ("patch", "Failed".into(), Some(2)),
            ("create", "Empty".into(), None),
            ("create", "Plain".into(), None)
        ]
    );
    let first = &calls[0].event;
    assert_eq!(first.metadata.annotations, Some(ann.clone()));
    assert_eq!((first.note.as_str(), first.related.as_ref().map(|r| r.name.as_str())), ("try 1", Some("node-1")));
    assert_eq!(calls[1].event.metadata.annotations, Some(ann), "the series keeps the first occurrence's");
    assert_eq!(calls[1].patch.as_ref().unwrap().as_object().unwrap().keys().collect::<Vec<_>>(), ["series"]);
    assert_eq!(calls[2].event.metadata.annotations, None, "an empty map sets none");
    assert_eq!(calls[3].event.metadata.annotations, None);
    assert!(calls[3].event.to_object().metadata.annotations.is_none());
}

#[tokio::test(start_paused = true)]
async fn repeats_start_a_series_patched_once_then_counted_until_finished() {
    let (b, sink, r) = recording(BroadcasterOptions::default());
    let record = || r.event(&pod(), EventType::Normal, "Synced", "Sync", "synced");
    record();
    settle().await;
    assert_eq!(sink.summary(), [("create", "Synced".into(), None)]);

    record();
    settle().await;
    let calls = sink.calls();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[1].verb, "patch");
    assert_eq!(calls[1].event.metadata.name, calls[0].event.metadata.name, "the first event is patched");
    let patch = calls[1].patch.clone().unwrap();
    assert_eq!(patch.as_object().unwrap().keys().collect::<Vec<_>>(), ["series"]);
    assert_eq!(patch["series"]["count"], 2);

    // As in client-go, later repeats only count until the series ends.
    record();
    record();
    settle().await;
    assert_eq!(sink.calls().len(), 2);

    // Seen last at t=0; the finish check at 6 minutes finds it not yet
    // older than the window, the one at 12 minutes writes the final count.
    tokio::time::sleep(6 * MINUTE + Duration::from_secs(1)).await;
    assert_eq!(sink.calls().len(), 2);
    tokio::time::sleep(6 * MINUTE).await;
    let calls = sink.calls();
    assert_eq!(calls.len(), 3);
    assert_eq!(calls[2].verb, "patch");
    assert_eq!(calls[2].patch.as_ref().unwrap()["series"]["count"], 4);
    assert_eq!(calls[2].event.metadata.name, calls[0].event.metadata.name);

    // The finished series is forgotten: the next occurrence is a new Event.
    record();
    settle().await;
    let calls = sink.calls();
    assert_eq!(calls.len(), 4);
    assert_eq!((calls[3].verb, calls[3].event.series.as_ref()), ("create", None));
    assert_ne!(calls[3].event.metadata.name, calls[0].event.metadata.name);
    b.shutdown();
}

#[tokio::test(start_paused = true)]
async fn repeat_within_a_short_finish_period_counts_two_then_three() {
    let opts = BroadcasterOptions { finish_period: Duration::from_secs(2), ..Default::default() };
    let (b, sink, r) = recording(opts);
    let record = || r.event(&pod(), EventType::Normal, "Synced", "Sync", "synced");
    record();
    record();
    settle().await;
    record();
    // Finished after 2 to 4 seconds without a repeat.
    tokio::time::sleep(Duration::from_secs(5)).await;
    let counts: Vec<_> = sink.summary().into_iter().map(|(v, _, c)| (v, c)).collect();
    assert_eq!(counts, [("create", None), ("patch", Some(2)), ("patch", Some(3))]);
    b.shutdown();
}

#[tokio::test(start_paused = true)]
async fn lone_events_are_forgotten_after_the_finish_period() {
    let (b, sink, r) = recording(BroadcasterOptions::default());
    r.event(&pod(), EventType::Normal, "Synced", "Sync", "synced");
    tokio::time::sleep(13 * MINUTE).await;
    r.event(&pod(), EventType::Normal, "Synced", "Sync", "synced");
    b.drain().await;
    let calls = sink.calls();
    assert_eq!(sink.summary(), [("create", "Synced".into(), None), ("create", "Synced".into(), None)]);
    assert_ne!(calls[0].event.metadata.name, calls[1].event.metadata.name);
}

#[tokio::test(start_paused = true)]
async fn refresh_rewrites_open_series_every_period() {
    // Finishing never comes first here: the series keeps being seen.
    let opts = BroadcasterOptions { refresh_period: 10 * MINUTE, ..Default::default() };
    let (b, sink, r) = recording(opts);
    let record = || r.event(&pod(), EventType::Normal, "Synced", "Sync", "synced");
    record();
    record();
    for _ in 0..4 {
        tokio::time::sleep(3 * MINUTE).await;
        record();
    }
    // t = 12 min: the refresh at 10 min wrote the count seen by then:
    // 2 at once, then one more at 3, 6 and 9 minutes.
    settle().await;
    let counts: Vec<_> = sink.summary().into_iter().map(|(v, _, c)| (v, c)).collect();
    assert_eq!(counts, [("create", None), ("patch", Some(2)), ("patch", Some(5))]);
    b.shutdown();
}

#[tokio::test(start_paused = true)]
async fn distinct_reasons_actions_and_objects_are_distinct_events() {
    let (b, sink, r) = recording(BroadcasterOptions::default());
    let mut other = pod();
    other.metadata.name = Some("web-1".into());
    r.event(&pod(), EventType::Normal, "Synced", "Sync", "a");
    r.event(&pod(), EventType::Normal, "Failed", "Sync", "a");
    r.event(&pod(), EventType::Normal, "Synced", "Delete", "a");
    r.event(&pod(), EventType::Warning, "Synced", "Sync", "a");
    r.event(&other, EventType::Normal, "Synced", "Sync", "a");
    // Only the note differs: a repeat.
    r.event(&pod(), EventType::Normal, "Synced", "Sync", "b");
    b.drain().await;
    let verbs: Vec<_> = sink.calls().into_iter().map(|c| c.verb).collect();
    assert_eq!(verbs, ["create", "create", "create", "create", "create", "patch"]);
}

#[tokio::test(start_paused = true)]
async fn long_notes_are_truncated_to_the_apiserver_limit() {
    let (b, sink, r) = recording(BroadcasterOptions::default());
    r.event(&pod(), EventType::Normal, "Synced", "Sync", &"x".repeat(5000));
    b.drain().await;
    let note = &sink.calls()[0].event.note;
    assert_eq!(note.len(), MAX_NOTE_LENGTH);
    assert!(note.ends_with(" ..."));
}

#[tokio::test(start_paused = true)]
async fn drain_writes_pending_counts_and_shutdown_drops_them() {
    let (b, sink, r) = recording(BroadcasterOptions::default());
    for _ in 0..5 {
        r.event(&pod(), EventType::Normal, "Synced", "Sync", "synced");
    }
    r.event(&pod(), EventType::Normal, "Lonely", "Sync", "once");
    b.drain().await;
    let mut summary = sink.summary();
    summary.sort();
    assert_eq!(
        summary,
        [
            ("create", "Lonely".into(), None),
            ("create", "Synced".into(), None),
            ("patch", "Synced".into(), Some(2)),
            ("patch", "Synced".into(), Some(5)),
        ]
    );

    let (b, sink, r) = recording(BroadcasterOptions::default());
    for _ in 0..5 {
        r.event(&pod(), EventType::Normal, "Synced", "Sync", "synced");
    }
    settle().await;
    b.shutdown();
    settle().await;
    let counts: Vec<_> = sink.summary().into_iter().map(|(v, _, c)| (v, c)).collect();
    assert_eq!(counts, [("create", None), ("patch", Some(2))]);
}

#[tokio::test(start_paused = true)]
async fn unreachable_apiserver_is_retried_and_a_gone_series_event_recreated() {
    let (b, sink, r) = recording(BroadcasterOptions::default());
    sink.fail("create", RestError::Timeout(Duration::from_secs(1)));
    r.event(&pod(), EventType::Normal, "Synced", "Sync", "synced");
    // Tried again after 10 to 12.5 s.
    tokio::time::sleep(Duration::from_secs(13)).await;
    assert_eq!(sink.calls().len(), 2);
    // The Event expired meanwhile: the series is created with its count.
    sink.fail("patch", api_error("NotFound", 404));
    r.event(&pod(), EventType::Normal, "Synced", "Sync", "synced");
    b.drain().await;
    let counts: Vec<_> = sink.summary().into_iter().map(|(v, _, c)| (v, c)).collect();
    assert_eq!(counts, [("create", None), ("create", None), ("patch", Some(2)), ("create", Some(2))]);
    let calls = sink.calls();
    assert_eq!(calls[3].event.metadata.resource_version, None);
    assert_eq!(calls[3].event.metadata.name, calls[0].event.metadata.name);
}

#[tokio::test(start_paused = true)]
async fn refused_events_are_not_retried_but_racing_series_creates_are() {
    let (b, sink, r) = recording(BroadcasterOptions::default());
    sink.fail("create", api_error("Invalid", 422));
    r.event(&pod(), EventType::Normal, "Bad", "Sync", "refused");
    settle().await;
    assert_eq!(sink.calls().len(), 1);

    // A series' patch finds no Event and its create finds one: patch again.
    r.event(&pod(), EventType::Normal, "Synced", "Sync", "synced");
    settle().await;
    sink.fail("patch", api_error("NotFound", 404));
    sink.fail("create", api_error("AlreadyExists", 409));
    r.event(&pod(), EventType::Normal, "Synced", "Sync", "synced");
    tokio::time::sleep(Duration::from_secs(13)).await;
    let verbs: Vec<_> = sink.calls().into_iter().map(|c| c.verb).collect();
    assert_eq!(verbs, ["create", "create", "patch", "create", "patch"]);
    b.shutdown();
}

#[tokio::test(start_paused = true)]
async fn watchers_see_every_recording_as_events_v1() {
    let b = EventBroadcaster::new();
    let mut w = b.watch();
    let r = b.new_recorder("ctrl").with_reporting_instance("ctrl-a");
    assert_eq!((r.reporting_controller(), r.reporting_instance()), ("ctrl", "ctrl-a"));
    r.event(&pod(), EventType::Normal, "Synced", "Sync", "one");
    r.event(&pod(), EventType::Normal, "Synced", "Sync", "two");
    b.shutdown();
    let mut notes = Vec::new();
    while let Some(obj) = w.recv().await {
        assert_eq!(obj.api_version, "events.k8s.io/v1");
        assert_eq!(obj.data["reportingInstance"], "ctrl-a");
        notes.push(obj.data["note"].as_str().unwrap().to_owned());
    }
    assert_eq!(notes, ["one", "two"]);
}

#[test]
fn starting_a_sink_needs_a_runtime() {
    let b = EventBroadcaster::new();
    assert!(matches!(b.start_recording_to_sink(MemorySink::default()), Err(Error::NoRuntime(_))));
}
