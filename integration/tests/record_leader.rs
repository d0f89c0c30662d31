//! Events and leader election against the real apiserver.

mod support;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use k8s_client::api::core::v1::ConfigMap;
use k8s_client::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_client_runtime::leaderelection::{LeaderCallbacks, LeaderElectionConfig, LeaderElector, LeaseLock};
use k8s_client_runtime::record::{EventBroadcaster, EventSource, EventType};
use k8s_client_runtime::rest::{CreateOptions, GetOptions, ListOptions};

async fn eventually(what: &str, timeout: Duration, mut check: impl FnMut() -> bool) {
    let start = Instant::now();
    while !check() {
        assert!(start.elapsed() < timeout, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn repeated_events_are_counted_on_one_event() {
    let ns = support::namespace("events");
    let clientset = support::clientset();
    let cm = ConfigMap {
        metadata: ObjectMeta { name: Some("subject".into()), ..Default::default() },
        data: Some(BTreeMap::new()),
        ..Default::default()
    };
    let cm = clientset.core_v1().config_maps(&ns).create(&cm, &CreateOptions::default()).await.unwrap();

    let broadcaster = EventBroadcaster::with_client(support::client()).unwrap();
    let recorder = broadcaster.new_recorder(EventSource::new("integration-controller"));
    for _ in 0..3 {
        recorder.event(&cm, EventType::Normal, "Synced", "synced the config map");
    }
    recorder.event(&cm, EventType::Warning, "Failed", "something else");
    broadcaster.drain().await;

    let events = clientset.core_v1().events(&ns).list(&ListOptions::default()).await.unwrap().items;
    assert_eq!(events.len(), 2, "{events:#?}");
    let synced = events.iter().find(|e| e.reason.as_deref() == Some("Synced")).expect("Synced event");
    assert_eq!(synced.count, Some(3));
    assert_eq!(synced.involved_object.name.as_deref(), Some("subject"));
    assert_eq!(synced.involved_object.kind.as_deref(), Some("ConfigMap"));
    assert_eq!(synced.source.as_ref().and_then(|s| s.component.as_deref()), Some("integration-controller"));
    let failed = events.iter().find(|e| e.reason.as_deref() == Some("Failed")).expect("Failed event");
    assert_eq!(failed.type_.as_deref(), Some("Warning"));
    assert_eq!(failed.count, Some(1));
}

fn elector(ns: &str, id: &str, leaders: Arc<Mutex<Vec<String>>>) -> LeaderElector<LeaseLock> {
    let config = LeaderElectionConfig {
        lease_duration: Duration::from_secs(4),
        renew_deadline: Duration::from_secs(3),
        retry_period: Duration::from_millis(250),
        release_on_cancel: true,
        name: "integration".into(),
        callbacks: LeaderCallbacks::new().on_new_leader(move |id| leaders.lock().unwrap().push(id.to_owned())),
    };
    LeaderElector::new(config, LeaseLock::new(support::client(), ns, "integration-lock", id)).unwrap()
}

#[tokio::test]
async fn leadership_hands_over_between_two_electors() {
    let ns = support::namespace("leader");
    let seen_by_b = Arc::new(Mutex::new(Vec::new()));
    let a = elector(&ns, "candidate-a", Arc::new(Mutex::new(Vec::new())));
    let b = elector(&ns, "candidate-b", seen_by_b.clone());

    let (stop_a, stopped_a) = tokio::sync::oneshot::channel::<()>();
    let run_a = tokio::spawn({
        let a = a.clone();
        async move {
            a.run(async {
                let _ = stopped_a.await;
            })
            .await
        }
    });
    eventually("a to lead", Duration::from_secs(20), || a.is_leader()).await;

    let (stop_b, stopped_b) = tokio::sync::oneshot::channel::<()>();
    let run_b = tokio::spawn({
        let b = b.clone();
        async move {
            b.run(async {
                let _ = stopped_b.await;
            })
            .await
        }
    });
    eventually("b to see a as leader", Duration::from_secs(10), || b.get_leader() == "candidate-a").await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(!b.is_leader(), "b must not lead while a renews");

    // a steps down and releases the lease: b takes over well before a lease
    // duration would have run out.
    let released = Instant::now();
    stop_a.send(()).unwrap();
    run_a.await.unwrap();
    eventually("b to lead", Duration::from_secs(10), || b.is_leader()).await;
    assert!(released.elapsed() < Duration::from_secs(4), "took {:?}", released.elapsed());

    let lease = support::clientset()
        .coordination_v1()
        .leases(&ns)
        .get("integration-lock", &GetOptions::default())
        .await
        .unwrap();
    assert_eq!(lease.spec.and_then(|s| s.holder_identity).as_deref(), Some("candidate-b"));
    assert!(seen_by_b.lock().unwrap().iter().any(|id| id == "candidate-a"));

    stop_b.send(()).unwrap();
    run_b.await.unwrap();
}
