//! The controller the README teaches, run as written
//! (`examples/examples/workqueue_controller.rs`, which the README shows in
//! full) against the real apiserver; and what a factory says when its
//! caches cannot fill.

mod support;

#[allow(dead_code)]
#[path = "../../examples/examples/workqueue_controller.rs"]
mod workqueue_controller;

use std::time::{Duration, Instant};

use k8s_client::api::core::v1::ConfigMap;
use k8s_client::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_client::prelude::*;
use k8s_client_runtime::Map;
use k8s_client_runtime::cache::{SharedInformerFactory, SyncStopped};
use k8s_client_runtime::rest::{CreateOptions, ListOptions};
use k8s_client_test_widgets::prelude::*;

#[tokio::test]
async fn the_readme_controller_greets_records_an_event_and_stops() {
    let ns = support::namespace("greet");
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let controller = tokio::spawn(workqueue_controller::run(support::client(), async {
        let _ = stop_rx.await;
    }));

    let configmaps = support::clientset().core_v1().config_maps(&ns);
    let annotated = ConfigMap {
        metadata: ObjectMeta {
            name: Some("alice".into()),
            annotations: Some(Map::from([("example.com/greet", "Alice")])),
            ..Default::default()
        },
        ..Default::default()
    };
    let annotated = configmaps.create(&annotated, &CreateOptions::default()).await.unwrap();
    let plain =
        ConfigMap { metadata: ObjectMeta { name: Some("bob".into()), ..Default::default() }, ..Default::default() };
    configmaps.create(&plain, &CreateOptions::default()).await.unwrap();

    let deadline = Instant::now() + Duration::from_secs(60);
    let greeting = loop {
        match configmaps.get_opt("alice-greeting", &Default::default()).await.unwrap() {
            Some(cm) => break cm,
            None if Instant::now() < deadline && !controller.is_finished() => {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            None => panic!("no greeting within 60 s; controller finished: {}", controller.is_finished()),
        }
    };
    assert_eq!(greeting.data.as_ref().and_then(|d| d.get("greeting")).map(|g| &**g), Some("hello Alice"));
    let owner = &greeting.metadata.owner_references.as_ref().expect("owner references")[0];
    assert_eq!((&*owner.kind, &*owner.name, owner.controller), ("ConfigMap", "alice", Some(true)));
    assert_eq!(Some(&owner.uid), annotated.metadata.uid.as_ref());

    stop_tx.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(30), controller)
        .await
        .expect("the controller stops when asked")
        .unwrap()
        .unwrap();

    // Only the annotated ConfigMap was greeted, and the Event was written
    // before `run` returned (it drains the recorder).
    let names: Vec<String> = configmaps
        .list(&ListOptions::default())
        .await
        .unwrap()
        .items
        .iter()
        .filter_map(|cm| cm.metadata.name.as_deref().map(str::to_owned))
        .filter(|n| n != "kube-root-ca.crt")
        .collect();
    assert_eq!(names, ["alice", "alice-greeting", "bob"]);
    let events = support::clientset().core_v1().events(&ns).list(&ListOptions::default()).await.unwrap();
    let greeted: Vec<_> = events.items.iter().filter(|e| e.reason.as_deref() == Some("Greeted")).collect();
    assert_eq!(greeted.len(), 1, "{:#?}", events.items);
    assert_eq!(greeted[0].involved_object.name.as_deref(), Some("alice"));
    assert_eq!(greeted[0].message.as_deref(), Some("created alice-greeting"));
}

#[tokio::test]
async fn caches_that_cannot_fill_are_named_with_the_reason() {
    // The CRDs of the test widgets are not installed in this apiserver: the
    // widgets' list fails with 404 for ever; ConfigMaps sync.
    let factory = SharedInformerFactory::new(support::client(), Duration::from_secs(0));
    let _widgets = factory.example_com_v1().widgets().lister();
    let _configmaps = factory.core_v1().config_maps().lister();
    factory.start();
    let err = factory.wait_for_cache_sync_within(Duration::from_secs(3)).await.unwrap_err();
    assert_eq!(err.reason, SyncStopped::Timeout(Duration::from_secs(3)));
    assert_eq!(err.not_synced.len(), 1, "{err}");
    assert_eq!((&*err.not_synced[0].resource.group, &*err.not_synced[0].resource.plural), ("example.com", "widgets"));
    let message = err.to_string();
    assert!(
        message.starts_with("caches not synced within 3s: example.com/v1 widgets (last list/watch error: "),
        "{message}"
    );
    assert!(message.contains("could not find the requested resource"), "{message}");

    // A factory shut down while waiting says so.
    let waiting = {
        let factory = factory.clone();
        tokio::spawn(async move { factory.wait_for_cache_sync_within(Duration::from_secs(60)).await })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    factory.shutdown();
    let err = waiting.await.unwrap().unwrap_err();
    assert_eq!(err.reason, SyncStopped::ShutDown, "{err}");
}

#[tokio::test]
async fn writes_are_recorded_under_the_programs_name() {
    let ns = support::namespace("manager");
    let configmaps = support::clientset().core_v1().config_maps(&ns);
    // A write that sets no field is recorded under no manager: give it data.
    let cm = ConfigMap {
        metadata: ObjectMeta { name: Some("owned".into()), ..Default::default() },
        data: Some(Map::from([("k", "v")])),
        ..Default::default()
    };
    let created = configmaps.create(&cm, &CreateOptions::default()).await.unwrap();
    let program = std::env::current_exe().unwrap().file_name().unwrap().to_string_lossy().into_owned();
    let managers: Vec<_> =
        created.metadata.managed_fields.iter().flatten().filter_map(|m| m.manager.as_deref()).collect();
    assert_eq!(managers, [program.as_str()]);
}
