//! Events and leader election against the real apiserver.

mod support;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use k8s_client::api::coordination::v1::Lease;
use k8s_client::api::core::v1::{ConfigMap, Event};
use k8s_client::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_client_runtime::Map;
use k8s_client_runtime::leaderelection::{LeaderCallbacks, LeaderElectionConfig, LeaderElector, LeaseLock};
use k8s_client_runtime::record::{EventBroadcaster, EventRecorder, EventType};
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
        data: Some(Map::new()),
        ..Default::default()
    };
    let cm = clientset.core_v1().config_maps(&ns).create(&cm, &CreateOptions::default()).await.unwrap();

    let broadcaster = EventBroadcaster::with_client(support::client()).unwrap();
    let mut watcher = broadcaster.watch();
    let recorder = broadcaster.new_recorder("integration-controller").with_host("node-a");
    for _ in 0..3 {
        recorder.event(&cm, EventType::Normal, "Synced", "synced the config map");
    }
    recorder.event(&cm, EventType::Warning, "Failed", "something else");
    broadcaster.drain().await;

    // What the apiserver stored, read through the generated clientset.
    let events = clientset.core_v1().events(&ns).list(&ListOptions::default()).await.unwrap().items;
    assert_eq!(events.len(), 2, "{events:#?}");
    let synced = events.iter().find(|e| e.reason.as_deref() == Some("Synced")).expect("Synced event");
    assert_eq!(synced.count, Some(3));
    assert_eq!(synced.involved_object.name.as_deref(), Some("subject"));
    assert_eq!(synced.involved_object.kind.as_deref(), Some("ConfigMap"));
    assert_eq!(synced.involved_object.api_version.as_deref(), Some("v1"));
    assert_eq!(synced.involved_object.namespace.as_deref(), Some(ns.as_str()));
    assert_eq!(synced.involved_object.uid, cm.metadata.uid);
    assert_eq!(synced.involved_object.resource_version, cm.metadata.resource_version);
    let source = synced.source.as_ref().expect("source");
    assert_eq!(source.component.as_deref(), Some("integration-controller"));
    assert_eq!(source.host.as_deref(), Some("node-a"));
    let failed = events.iter().find(|e| e.reason.as_deref() == Some("Failed")).expect("Failed event");
    assert_eq!(failed.type_.as_deref(), Some("Warning"));
    assert_eq!(failed.count, Some(1));

    // What watchers get: the recorded events, each decoding as the generated kind.
    let mut watched = Vec::new();
    while let Some(event) = watcher.recv().await {
        watched.push(event.try_into_typed::<Event>().unwrap());
    }
    let reasons: Vec<_> = watched.iter().map(|e| e.reason.as_deref().unwrap_or_default()).collect();
    assert_eq!(reasons, ["Synced", "Synced", "Synced", "Failed"]);
    assert!(watched.iter().all(|e| e.involved_object == synced.involved_object));
}

fn elector(ns: &str, id: &str, leaders: Arc<Mutex<Vec<String>>>, recorder: EventRecorder) -> LeaderElector<LeaseLock> {
    let config = LeaderElectionConfig {
        lease_duration: Duration::from_secs(4),
        renew_deadline: Duration::from_secs(3),
        retry_period: Duration::from_millis(250),
        release_on_cancel: true,
        name: "integration".into(),
        callbacks: LeaderCallbacks::new().on_new_leader(move |id| leaders.lock().unwrap().push(id.to_owned())),
    };
    let lock = LeaseLock::new(support::client(), ns, "integration-lock", id).with_event_recorder(recorder);
    LeaderElector::new(config, lock).unwrap()
}

/// Runs `e`'s election in a task until the sender is used.
fn running(e: &LeaderElector<LeaseLock>) -> (tokio::sync::oneshot::Sender<()>, tokio::task::JoinHandle<()>) {
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let e = e.clone();
    let task = tokio::spawn(async move {
        e.run(async {
            let _ = stopped.await;
        })
        .await
    });
    (stop, task)
}

#[tokio::test]
async fn leadership_hands_over_between_two_electors() {
    let ns = support::namespace("leader");
    let seen_by_b = Arc::new(Mutex::new(Vec::new()));
    let broadcaster = EventBroadcaster::with_client(support::client()).unwrap();
    let recorder = broadcaster.new_recorder("integration-elector");
    let a = elector(&ns, "candidate-a", Arc::new(Mutex::new(Vec::new())), recorder.clone());
    let b = elector(&ns, "candidate-b", seen_by_b.clone(), recorder);

    let (stop_a, run_a) = running(&a);
    eventually("a to lead", Duration::from_secs(20), || a.is_leader()).await;

    let (stop_b, run_b) = running(&b);
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
    let spec = lease.spec.expect("lease spec");
    assert_eq!(spec.holder_identity.as_deref(), Some("candidate-b"));
    assert_eq!(spec.lease_transitions, Some(1));
    assert!(seen_by_b.lock().unwrap().iter().any(|id| id == "candidate-a"));
    // The lock's own copy of the Lease decodes as the generated kind too.
    let held: Lease = b.lock().lease().expect("lease read or written").try_into_typed().unwrap();
    assert_eq!(held.metadata.uid, lease.metadata.uid);
    assert_eq!(held.spec.and_then(|s| s.holder_identity).as_deref(), Some("candidate-b"));

    stop_b.send(()).unwrap();
    run_b.await.unwrap();

    // Leadership changes were recorded as events about the Lease.
    broadcaster.drain().await;
    let events = support::clientset().core_v1().events(&ns).list(&ListOptions::default()).await.unwrap().items;
    let messages: Vec<_> = events
        .iter()
        .filter(|e| e.reason.as_deref() == Some("LeaderElection"))
        .inspect(|e| {
            assert_eq!(e.involved_object.kind.as_deref(), Some("Lease"));
            assert_eq!(e.involved_object.api_version.as_deref(), Some("coordination.k8s.io/v1"));
            assert_eq!(e.involved_object.name.as_deref(), Some("integration-lock"));
        })
        .filter_map(|e| e.message.as_deref())
        .collect();
    assert!(messages.contains(&"candidate-a became leader"), "{messages:?}");
    assert!(messages.contains(&"candidate-b became leader"), "{messages:?}");
}
