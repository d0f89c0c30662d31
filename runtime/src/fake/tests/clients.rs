//! The runtime's higher-level clients over the fake: informers, leader
//! election, the event recorder, and a rough cost figure.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use super::*;
use crate::cache::{ResourceEventHandlerFuncs, SharedInformerFactory};
use crate::leaderelection::{LeaderCallbacks, LeaderElectionConfig, LeaderElector, LeaseLock};
use crate::record::{EventBroadcaster, EventType, RestEventSink};
use crate::rest::{DeleteOptions, ListOptions, WriteOptions};

/// Waits until `check` holds, up to five seconds.
async fn eventually(what: &str, check: impl Fn() -> bool) {
    for _ in 0..500 {
        if check() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("{what} did not happen within 5 s");
}

#[tokio::test]
async fn an_informer_syncs_and_sees_adds_updates_and_deletes() {
    let fake = FakeCluster::new();
    fake.add(&pod("ns", "seeded", "")).unwrap();
    let factory = SharedInformerFactory::new(fake.client(), Duration::ZERO);
    let informer = factory.informer_for::<Pod>();
    let (adds, updates, deletes) =
        (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let (a, u, d) = (adds.clone(), updates.clone(), deletes.clone());
    informer
        .add_event_handler(
            ResourceEventHandlerFuncs::new()
                .on_add(move |_, _| {
                    a.fetch_add(1, Ordering::SeqCst);
                })
                .on_update(move |_, _| {
                    u.fetch_add(1, Ordering::SeqCst);
                })
                .on_delete(move |_| {
                    d.fetch_add(1, Ordering::SeqCst);
                }),
        )
        .unwrap();
    factory.start();
    factory.wait_for_cache_sync_within(Duration::from_secs(5)).await.unwrap();
    let lister = informer.lister();
    assert_eq!(lister.list(&crate::selector::LabelSelector::everything()).len(), 1);
    let client = pods(&fake, "ns");
    let created = client.create(&pod("ns", "new", ""), &WriteOptions::default()).await.unwrap();
    let mut changed = created.clone();
    changed.node = "n1".into();
    client.update(&changed, &WriteOptions::default()).await.unwrap();
    client.delete("seeded", &DeleteOptions::default()).await.unwrap();
    eventually("the informer's add, update and delete", || {
        adds.load(Ordering::SeqCst) == 2 && updates.load(Ordering::SeqCst) == 1 && deletes.load(Ordering::SeqCst) == 1
    })
    .await;
    let names: Vec<_> = lister
        .list(&crate::selector::LabelSelector::everything())
        .iter()
        .map(|p| p.metadata.name.clone().unwrap())
        .collect();
    assert_eq!(names, ["new"]);
    assert_eq!(lister.list(&crate::selector::LabelSelector::everything())[0].node, "n1");
    // The informer listed with watch-list, as by default.
    assert!(fake.actions().iter().any(|a| a.verb == "watch" && a.query_param("sendInitialEvents") == Some("true")));
    factory.shutdown();
}

#[tokio::test]
async fn leader_election_acquires_a_lease() {
    let fake = FakeCluster::new();
    let lock = LeaseLock::new(fake.client(), "kube-system", "controller", "pod-1");
    let led = Arc::new(AtomicUsize::new(0));
    let led_in = led.clone();
    let callbacks = LeaderCallbacks::new().on_started_leading(move |_token| {
        let led = led_in.clone();
        async move {
            led.fetch_add(1, Ordering::SeqCst);
        }
    });
    let config = LeaderElectionConfig { callbacks, ..LeaderElectionConfig::default() };
    let elector = LeaderElector::new(config, lock).unwrap();
    let running = elector.clone();
    let stop = tokio_util::sync::CancellationToken::new();
    let cancel = stop.clone();
    let run = tokio::spawn(async move { running.run(cancel.cancelled_owned()).await });
    eventually("leadership", || led.load(Ordering::SeqCst) == 1).await;
    assert!(elector.is_leader());
    let leases = DynamicResource {
        group: "coordination.k8s.io".into(),
        version: "v1".into(),
        kind: "Lease".into(),
        plural: "leases".into(),
        namespaced: true,
    };
    let lease = fake.object_dynamic(&leases, "kube-system", "controller").expect("the lease");
    assert_eq!(lease["spec"]["holderIdentity"], "pod-1");
    stop.cancel();
    run.await.unwrap();
}

#[tokio::test]
async fn the_event_recorder_writes_events() {
    let fake = FakeCluster::new();
    let broadcaster = EventBroadcaster::new();
    let _sink = broadcaster.start_recording_to_sink(RestEventSink::new(fake.client())).unwrap();
    let recorder = broadcaster.new_recorder("my-controller");
    let mut involved = pod("ns", "web", "");
    involved.metadata.uid = Some("0000".into());
    recorder.event(&involved, EventType::Normal, "Synced", "all good");
    let events = DynamicResource {
        group: String::new(),
        version: "v1".into(),
        kind: "Event".into(),
        plural: "events".into(),
        namespaced: true,
    };
    let client = DynamicClient::namespaced_with(fake.client(), "ns", &events);
    let mut found = Vec::new();
    for _ in 0..500 {
        found = client.list(&ListOptions::default()).await.unwrap().items;
        if !found.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(found.len(), 1, "one event written");
    let event = &found[0].data;
    assert_eq!((&event["reason"], &event["message"]), (&"Synced".into(), &"all good".into()));
    assert_eq!(event["involvedObject"]["name"], "web");
    assert_eq!(event["source"]["component"], "my-controller");
    broadcaster.shutdown();
}

#[tokio::test]
async fn discovery_lists_the_registered_resources() {
    let (fake, _) = super::widget_cluster();
    fake.register::<Pod>();
    let discovery = crate::discovery::DiscoveryClient::new(fake.client());
    let groups: Vec<_> = discovery.groups().await.unwrap().into_iter().map(|g| g.name).collect();
    assert_eq!(groups, ["", "example.com"]);
    let widgets = discovery.resources_for("example.com/v1").await.unwrap();
    let names: Vec<_> = widgets.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["widgets", "widgets/status", "widgets/scale"]);
    assert!(widgets[0].namespaced && widgets[0].supports("watch"));
    assert_eq!(widgets[0].kind, "Widget");
    let core = discovery.resources_for("v1").await.unwrap();
    assert_eq!(core.iter().map(|r| r.name.as_str()).collect::<Vec<_>>(), ["pods"]);
    assert_eq!(discovery.server_version().await.unwrap().major, "1");
}

#[tokio::test]
async fn an_informer_recovers_from_closed_watches_and_compaction() {
    let fake = FakeCluster::new();
    let factory = SharedInformerFactory::new(fake.client(), Duration::ZERO);
    let informer = factory.informer_for::<Pod>();
    factory.start();
    factory.wait_for_cache_sync_within(Duration::from_secs(5)).await.unwrap();
    let client = pods(&fake, "ns");
    client.create(&pod("ns", "before", ""), &WriteOptions::default()).await.unwrap();
    let lister = informer.lister();
    let everything = crate::selector::LabelSelector::everything();
    eventually("the first pod", || lister.list(&everything).len() == 1).await;
    fake.compact();
    fake.close_watches();
    client.create(&pod("ns", "after", ""), &WriteOptions::default()).await.unwrap();
    eventually("the pod created after the compaction", || lister.list(&everything).len() == 2).await;
    factory.shutdown();
}
