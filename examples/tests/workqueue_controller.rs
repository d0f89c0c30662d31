//! The `workqueue_controller` example's reconcile logic, unit-tested on the
//! fake cluster: the same `run`, informers, workqueue and recorder as
//! against a real apiserver, with no apiserver.

// The example, as it is; its `main` is not called here.
#[allow(dead_code)]
#[path = "../examples/workqueue_controller.rs"]
mod controller;

use std::time::Duration;

use k8s_client::api::core::v1::ConfigMap;
use k8s_client::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_client::clientset::Clientset;
use k8s_client_runtime::Map;
use k8s_client_runtime::fake::FakeCluster;
use k8s_client_runtime::rest::GetOptions;

fn config_map(name: &str, greet: Option<&str>) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("demo".into()),
            annotations: greet.map(|who| Map::from([("example.com/greet", who)])),
            ..Default::default()
        },
        ..Default::default()
    }
}

#[tokio::test]
async fn an_annotated_config_map_gets_its_greeting_and_an_event() {
    let fake = FakeCluster::new();
    fake.add(&config_map("alice", Some("Alice"))).unwrap();
    fake.add(&config_map("plain", None)).unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let controller = tokio::spawn(controller::run(fake.client(), async move {
        let _ = stopped.await;
    }));

    let configmaps = Clientset::new(fake.client()).core_v1().config_maps("demo");
    let greeting = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            match configmaps.get("alice-greeting", &GetOptions::default()).await {
                Ok(greeting) => break greeting,
                Err(e) if e.is_not_found() => tokio::time::sleep(Duration::from_millis(20)).await,
                Err(e) => panic!("{e}"),
            }
        }
    })
    .await
    .expect("the controller creates the greeting");
    assert_eq!(greeting.data.as_ref().and_then(|d| d.get("greeting")).map(|g| g.as_str()), Some("hello Alice"));
    let owner = &greeting.metadata.owner_references.as_ref().expect("an owner")[0];
    let alice = configmaps.get("alice", &GetOptions::default()).await.unwrap();
    let uid = alice.metadata.uid.as_deref().unwrap_or_default();
    assert_eq!((owner.name.as_str(), owner.uid.as_str(), owner.controller), ("alice", uid, Some(true)));

    stop.send(()).unwrap();
    controller.await.unwrap().unwrap();
    // Only the annotated ConfigMap was answered, and the Event says so.
    let creates: Vec<_> = fake
        .actions()
        .into_iter()
        .filter(|a| a.verb == "create")
        .map(|a| (a.resource.clone(), a.body.and_then(|b| b.get("reason").cloned())))
        .collect();
    let greetings = creates.iter().filter(|(resource, _)| resource == "configmaps").count();
    assert_eq!(greetings, 1, "{creates:?}");
    assert!(creates.contains(&("events".to_owned(), Some(serde_json::json!("Greeted")))), "{creates:?}");
    assert!(configmaps.get("plain-greeting", &GetOptions::default()).await.unwrap_err().is_not_found());
}
