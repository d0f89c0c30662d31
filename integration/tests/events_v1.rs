//! The events.k8s.io/v1 recorder (`k8s_client_runtime::events`) against
//! the real apiserver.

mod support;

use std::time::{Duration, Instant};

use k8s_client::api::core::v1::ConfigMap;
use k8s_client::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_client_runtime::dynamic::DynamicObject;
use k8s_client_runtime::events::{BroadcasterOptions, EventBroadcaster, EventType, RestEventSink};
use k8s_client_runtime::rest::{CreateOptions, ListOptions};
use k8s_client_runtime::{DynamicResource, Map, ResourceClient};

const CONTROLLER: &str = "example.com/integration-controller";

fn events_v1(ns: &str) -> ResourceClient<DynamicObject> {
    let resource = DynamicResource {
        group: "events.k8s.io".into(),
        version: "v1".into(),
        kind: "Event".into(),
        plural: "events".into(),
        namespaced: true,
    };
    ResourceClient::namespaced_with(support::client(), ns, &resource)
}

async fn list(ns: &str) -> Vec<DynamicObject> {
    events_v1(ns).list(&ListOptions::default()).await.unwrap().items
}

/// Lists the namespace's events until `check` holds for them.
async fn eventually(ns: &str, what: &str, check: impl Fn(&[DynamicObject]) -> bool) -> Vec<DynamicObject> {
    let start = Instant::now();
    loop {
        let events = list(ns).await;
        if check(&events) {
            return events;
        }
        assert!(start.elapsed() < Duration::from_secs(30), "timed out waiting for {what}: {events:#?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn series_count(event: &DynamicObject) -> Option<i64> {
    event.data.get("series")?.get("count")?.as_i64()
}

fn by_reason<'a>(events: &'a [DynamicObject], reason: &str) -> Vec<&'a DynamicObject> {
    events.iter().filter(|e| e.data["reason"] == reason).collect()
}

/// A `metav1.MicroTime` as the apiserver stores it: six fraction digits.
fn assert_micro_time(value: &serde_json::Value) {
    let text = value.as_str().unwrap_or_else(|| panic!("not a time: {value}"));
    let fraction = text.strip_suffix('Z').and_then(|t| t.split_once('.')).map(|(_, f)| f);
    assert_eq!(fraction.map(str::len), Some(6), "{text}");
}

#[tokio::test]
async fn a_burst_becomes_one_event_with_a_series() {
    let ns = support::namespace("events-v1");
    let cm = ConfigMap {
        metadata: ObjectMeta { name: Some("subject".into()), ..Default::default() },
        data: Some(Map::new()),
        ..Default::default()
    };
    let cm = support::clientset().core_v1().config_maps(&ns).create(&cm, &CreateOptions::default()).await.unwrap();

    // Series end after 2 s without a repeat instead of 6 minutes.
    let opts = BroadcasterOptions { finish_period: Duration::from_secs(2), ..Default::default() };
    let broadcaster = EventBroadcaster::with_options(opts);
    broadcaster.start_recording_to_sink(RestEventSink::new(support::client())).unwrap();
    let recorder = broadcaster.new_recorder(CONTROLLER);
    for _ in 0..5 {
        recorder.event(&cm, EventType::Normal, "Synced", "Sync", "synced the config map");
    }

    // As in client-go: the first repeat starts the series at 2 at once ...
    let events = eventually(&ns, "a series of 2", |events| events.iter().any(|e| series_count(e) == Some(2))).await;
    assert_eq!(events.len(), 1, "one Event for the burst: {events:#?}");
    // ... and the other three reach the apiserver when the series ends.
    let events = eventually(&ns, "the final count", |events| events.iter().any(|e| series_count(e) == Some(5))).await;
    assert_eq!(events.len(), 1, "{events:#?}");
    let synced = &events[0];
    let name = synced.metadata.name.as_deref().unwrap();
    assert!(name.starts_with("subject."), "{name}");
    assert_eq!(synced.metadata.namespace.as_deref(), Some(ns.as_str()));
    let d = &synced.data;
    assert_eq!((&d["type"], &d["reason"], &d["action"]), (&"Normal".into(), &"Synced".into(), &"Sync".into()));
    assert_eq!(d["note"], "synced the config map");
    assert_eq!(d["reportingController"], CONTROLLER);
    assert_eq!(d["reportingInstance"], recorder.reporting_instance());
    assert!(recorder.reporting_instance().starts_with(&format!("{CONTROLLER}-")));
    assert_eq!(d["regarding"]["kind"], "ConfigMap");
    assert_eq!(d["regarding"]["apiVersion"], "v1");
    assert_eq!(d["regarding"]["name"], "subject");
    assert_eq!(d["regarding"]["namespace"], ns.as_str());
    assert_eq!(d["regarding"]["uid"].as_str(), cm.metadata.uid.as_deref());
    assert_micro_time(&d["eventTime"]);
    assert_micro_time(&d["series"]["lastObservedTime"]);
    // The generated kind reads it too.
    let typed: k8s_client::api::events::v1::Event = synced.clone().try_into_typed().unwrap();
    assert_eq!(typed.series.map(|s| s.count), Some(5));

    // Another reason is another Event; repeated after the series ended,
    // the first reason is a new Event as well.
    recorder.event(&cm, EventType::Warning, "Failed", "Sync", "could not sync");
    recorder.event(&cm, EventType::Normal, "Synced", "Sync", "synced again");
    broadcaster.drain().await;
    let events = list(&ns).await;
    assert_eq!(events.len(), 3, "{events:#?}");
    let failed = by_reason(&events, "Failed");
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0].data["type"], "Warning");
    assert_eq!(series_count(failed[0]), None);
    let synced = by_reason(&events, "Synced");
    let mut counts: Vec<_> = synced.iter().map(|e| series_count(e)).collect();
    counts.sort();
    assert_eq!(counts, [None, Some(5)]);

    // The core/v1 API serves the same Events.
    let core = support::clientset().core_v1().events(&ns).list(&ListOptions::default()).await.unwrap().items;
    let core_synced = core.iter().find(|e| e.metadata.name.as_deref() == Some(name)).expect("the series' Event");
    assert_eq!(core_synced.reporting_component.as_deref(), Some(CONTROLLER));
    assert_eq!(core_synced.involved_object.name.as_deref(), Some("subject"));
}

#[tokio::test]
async fn drain_writes_a_series_count_not_yet_written() {
    let ns = support::namespace("events-v1-drain");
    let cm =
        ConfigMap { metadata: ObjectMeta { name: Some("subject".into()), ..Default::default() }, ..Default::default() };
    let cm = support::clientset().core_v1().config_maps(&ns).create(&cm, &CreateOptions::default()).await.unwrap();
    // client-go's periods: only the drain can write the final count.
    let broadcaster = EventBroadcaster::with_client(support::client()).unwrap();
    let recorder = broadcaster.new_recorder(CONTROLLER);
    for _ in 0..4 {
        recorder.event(&cm, EventType::Normal, "Synced", "Sync", "synced");
    }
    broadcaster.drain().await;
    let events = list(&ns).await;
    assert_eq!(events.len(), 1, "{events:#?}");
    assert_eq!(series_count(&events[0]), Some(4));
}
