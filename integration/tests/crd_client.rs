//! A custom resource through its generated crate, against the real
//! apiserver: the CRD (`integration/crds/widgets.yaml`) is applied through
//! the generated Kubernetes clientset, then the generated Widget client, its
//! status and scale subresources, an informer and a lister, and both served
//! versions are used as a controller would. Zalando's `postgresql`
//! (`integration/crds/postgresqls.yaml`), a kind that is not
//! UpperCamelCase, works the same through its type `Postgresql`.

mod support;

use std::time::Duration;

use futures_util::StreamExt;
use k8s_client::apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta, Time};
use k8s_client::apimachinery::pkg::util::intstr::IntOrString;
use k8s_client_runtime::cache::SharedInformerFactory;
use k8s_client_runtime::codec::parse_time;
use k8s_client_runtime::rest::{
    ApplyOptions, CreateOptions, DeleteOptions, GetOptions, ListOptions, Patch, PatchOptions, UpdateOptions, WatchEvent,
};
use k8s_client_runtime::{Map, thin_vec};
use k8s_client_test_widgets::clientset::Clientset;
use k8s_client_test_widgets::com::example::{v1, v1beta1};
use k8s_client_test_widgets::do_::zalan::acid;
use k8s_client_test_widgets::prelude::*;
use serde_json::json;

fn widgets() -> Clientset {
    Clientset::new(support::client())
}

/// A fresh namespace, once the test CRDs are served.
async fn crd_namespace(prefix: &str) -> String {
    support::install_crds(&support::test_crds()).await;
    support::namespace(prefix)
}

fn widget(name: &str) -> v1::Widget {
    v1::Widget {
        metadata: ObjectMeta { name: Some(name.into()), labels: Some(Map::from([("app", "w")])), ..Default::default() },
        spec: v1::WidgetSpec {
            replicas: 2,
            color: Some(v1::WidgetSpecColor::Green),
            size: Some(IntOrString::String("50%".into())),
            labels: Some(Map::from([("tier", "gold")])),
            tags: Some(thin_vec!["a".into(), "b".into()]),
            ports: Some(thin_vec![v1::WidgetSpecPorts {
                name: "http".into(),
                port: 80,
                protocol: Some(v1::WidgetSpecPortsProtocol::Tcp),
            }]),
            template: Some(json!({"any": {"thing": [1, "two", null]}})),
            not_before: Some(Time::new(parse_time("2030-01-02T03:04:05Z").unwrap())),
        },
        status: None,
    }
}

#[tokio::test]
async fn crud_watch_status_scale_and_apply() {
    let ns = crd_namespace("crd-crud").await;
    let client = widgets().example_com_v1().widgets(&ns);
    let start = client.list(&ListOptions::default()).await.unwrap().metadata.resource_version.unwrap();
    let mut watch = client.watch(&ListOptions::default().resource_version(start).timeout(60)).await.unwrap();

    // create: the server's answer decodes to what was sent.
    let sent = widget("one");
    let created = client.create(&sent, &CreateOptions::default()).await.unwrap();
    assert_eq!(created.spec, sent.spec, "the decoded answer equals what was sent");
    assert_eq!(created.metadata.labels, sent.metadata.labels);
    assert!(created.metadata.uid.is_some());

    // get, list
    let mut got = client.get("one", &GetOptions::default()).await.unwrap();
    assert_eq!(got, created);
    let listed = client.list(&ListOptions::default().labels("app=w")).await.unwrap();
    assert_eq!(listed.items.len(), 1);
    assert_eq!(listed.items[0].spec, sent.spec);

    // update
    got.spec.replicas = 3;
    got.spec.color = Some(v1::WidgetSpecColor::Blue);
    let updated = client.update(&got, &UpdateOptions::default()).await.unwrap();
    assert_eq!((updated.spec.replicas, updated.spec.color.clone()), (3, Some(v1::WidgetSpecColor::Blue)));

    // update_status: conditions are apimachinery's Condition
    let mut with_status = updated.clone();
    with_status.status = Some(v1::WidgetStatus {
        replicas: Some(3),
        selector: Some("app=w".into()),
        observed_generation: updated.metadata.generation,
        conditions: Some(thin_vec![Condition {
            type_: "Ready".into(),
            status: "True".into(),
            reason: "AllGood".into(),
            message: "ready".into(),
            last_transition_time: Time::new(parse_time("2030-01-02T03:04:05Z").unwrap()),
            observed_generation: updated.metadata.generation,
        }]),
    });
    let status = client.update_status(&with_status, &UpdateOptions::default()).await.unwrap();
    assert_eq!(status.status, with_status.status);
    assert_eq!(client.get_status("one").await.unwrap().status, with_status.status);

    // scale
    let scale = client.get_scale("one").await.unwrap();
    assert_eq!(scale.spec.as_ref().and_then(|s| s.replicas), Some(3));
    assert_eq!(scale.status.as_ref().map(|s| s.replicas), Some(3));
    let mut scale = scale;
    scale.spec.get_or_insert_default().replicas = Some(5);
    client.update_scale("one", &scale, &UpdateOptions::default()).await.unwrap();
    assert_eq!(client.get("one", &GetOptions::default()).await.unwrap().spec.replicas, 5);

    // patch (merge): an enum value the server accepts
    let patched =
        client.patch("one", &Patch::Merge(json!({"spec": {"color": "red"}})), &PatchOptions::default()).await.unwrap();
    assert_eq!(patched.spec.color, Some(v1::WidgetSpecColor::Red));

    // apply (server-side), of a typed object
    let mut config = widget("two");
    config.spec.replicas = 7;
    let applied = client.apply("two", &config, &ApplyOptions::new("crd-test")).await.unwrap();
    assert_eq!(applied.spec, config.spec);

    // delete
    client.delete("one", &DeleteOptions::default()).await.unwrap();
    client.delete("two", &DeleteOptions::default()).await.unwrap();
    assert!(client.get_opt("one", &GetOptions::default()).await.unwrap().is_none());

    // The watch saw it all, decoded as Widgets.
    let mut seen = Vec::new();
    while !seen.contains(&("DELETED", "two".to_owned())) {
        let event = tokio::time::timeout(Duration::from_secs(30), watch.next()).await.expect("event in time");
        match event.expect("stream open").expect("watch error") {
            WatchEvent::Added(w) => seen.push(("ADDED", w.metadata.name.unwrap().into())),
            WatchEvent::Modified(w) => seen.push(("MODIFIED", w.metadata.name.unwrap().into())),
            WatchEvent::Deleted(w) => seen.push(("DELETED", w.metadata.name.unwrap().into())),
            WatchEvent::Bookmark(_) => {}
        }
    }
    assert_eq!(seen.first(), Some(&("ADDED", "one".to_owned())));
    assert!(seen.contains(&("ADDED", "two".to_owned())));
    assert!(seen.contains(&("DELETED", "one".to_owned())));
}

#[tokio::test]
async fn a_value_unknown_to_the_enum_is_kept() {
    let ns = crd_namespace("crd-enum").await;
    let client = widgets().example_com_v1().widgets(&ns);
    client.create(&widget("w"), &CreateOptions::default()).await.unwrap();
    // The object as the server sends it, with a value a newer CRD might allow.
    let dynamic = k8s_client_runtime::dynamic::DynamicClient::namespaced_with(
        support::client(),
        &ns,
        &k8s_client_runtime::object::DynamicResource::of::<v1::Widget>(),
    );
    let mut raw = serde_json::to_value(dynamic.get("w", &GetOptions::default()).await.unwrap()).unwrap();
    raw["spec"]["ports"][0]["protocol"] = json!("SCTP");
    let typed: v1::Widget = serde_json::from_value(raw.clone()).unwrap();
    let protocol = typed.spec.ports.as_ref().unwrap()[0].protocol.clone();
    assert_eq!(protocol, Some(v1::WidgetSpecPortsProtocol::Other("SCTP".into())));
    assert_eq!(serde_json::to_value(&typed).unwrap(), raw, "written back unchanged");
    // This server's CRD does not allow it, and says so.
    let err = client.update(&typed, &UpdateOptions::default()).await.unwrap_err();
    assert!(err.to_string().contains("SCTP"), "{err}");
}

#[tokio::test]
async fn both_served_versions_work() {
    let ns = crd_namespace("crd-versions").await;
    let cs = widgets();
    let v1_client = cs.example_com_v1().widgets(&ns);
    let beta_client = cs.example_com_v1beta1().widgets(&ns);

    v1_client.create(&widget("from-v1"), &CreateOptions::default()).await.unwrap();
    let as_beta = beta_client.get("from-v1", &GetOptions::default()).await.unwrap();
    assert_eq!(as_beta.spec.replicas, 2);
    assert_eq!(as_beta.spec.color, Some(v1beta1::WidgetSpecColor::Green));

    let beta = v1beta1::Widget {
        metadata: ObjectMeta { name: Some("from-beta".into()), ..Default::default() },
        spec: v1beta1::WidgetSpec { replicas: 4, ..Default::default() },
        status: None,
    };
    let created = beta_client.create(&beta, &CreateOptions::default()).await.unwrap();
    assert_eq!(created.spec.replicas, 4);
    assert_eq!(v1_client.get("from-beta", &GetOptions::default()).await.unwrap().spec.replicas, 4);
    assert_eq!(beta_client.get_scale("from-beta").await.unwrap().spec.and_then(|s| s.replicas), Some(4));
}

#[tokio::test]
async fn informer_and_lister_see_changes() {
    let ns = crd_namespace("crd-informer").await;
    let client = widgets().example_com_v1().widgets(&ns);
    client.create(&widget("before"), &CreateOptions::default()).await.unwrap();

    let factory = SharedInformerFactory::builder(support::client()).namespace(ns.clone()).build();
    let widgets_informer = factory.example_com_v1().widgets();
    let lister = widgets_informer.lister();
    factory.start();
    assert!(tokio::time::timeout(Duration::from_secs(30), factory.wait_for_cache_sync()).await.is_ok());
    assert_eq!(lister.namespace(&ns).get("before").unwrap().spec.replicas, 2);

    client.create(&widget("after"), &CreateOptions::default()).await.unwrap();
    client.patch("before", &Patch::Merge(json!({"spec": {"replicas": 9}})), &PatchOptions::default()).await.unwrap();
    client.delete("after", &DeleteOptions::default()).await.unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let replicas = lister.namespace(&ns).get("before").map(|w| w.spec.replicas);
        let after_gone = lister.namespace(&ns).get("after").is_err();
        if replicas.ok() == Some(9) && after_gone {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the cache did not follow the server");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let all = lister.list(&Default::default());
    assert_eq!(all.len(), 1);
    assert_eq!(all[0].metadata.name.as_deref(), Some("before"));
    factory.shutdown();
}

/// A kind whose root keeps undeclared fields: they arrive in `extra`, and
/// an update through the typed client keeps them on the server.
#[tokio::test]
async fn undeclared_root_fields_are_kept() {
    let ns = crd_namespace("crd-open").await;
    let dynamic = k8s_client_runtime::dynamic::DynamicClient::namespaced_with(
        support::client(),
        &ns,
        &k8s_client_runtime::object::DynamicResource::of::<v1::Gadget>(),
    );
    let raw = k8s_client_runtime::dynamic::DynamicObject::new(
        &k8s_client_runtime::object::DynamicResource::of::<v1::Gadget>(),
        "g",
    )
    .with_data(json!({"spec": {"size": 1}, "owner": "team-a", "limits": {"cpu": 2}}));
    dynamic.create(&raw, &CreateOptions::default()).await.unwrap();

    let client = widgets().example_com_v1().gadgets(&ns);
    let mut gadget = client.get("g", &GetOptions::default()).await.unwrap();
    assert_eq!(gadget.extra.get("owner"), Some(&json!("team-a")));
    assert_eq!(gadget.extra.get("limits"), Some(&json!({"cpu": 2})));
    gadget.spec.get_or_insert_default().size = Some(2);
    let updated = client.update(&gadget, &UpdateOptions::default()).await.unwrap();
    assert_eq!(updated.extra, gadget.extra);
    let back = serde_json::to_value(dynamic.get("g", &GetOptions::default()).await.unwrap()).unwrap();
    assert_eq!(back["owner"], json!("team-a"));
    assert_eq!(back["spec"]["size"], json!(2));
}

/// A kind that is not UpperCamelCase (`postgresql`, list kind
/// `postgresqlList`): its type is `Postgresql`, and the client, status,
/// watch, informer and lister work as for any kind, with the kind as
/// declared on the wire.
#[tokio::test]
async fn a_lower_case_kind_works_through_its_type() {
    use k8s_client_runtime::object::{DynamicResource, Resource};

    assert_eq!((acid::v1::Postgresql::KIND, acid::v1::Postgresql::LIST_KIND), ("postgresql", "postgresqlList"));
    let ns = crd_namespace("crd-lower-kind").await;
    let client = widgets().acid_zalan_do_v1().postgresqls(&ns);
    let start = client.list(&ListOptions::default()).await.unwrap().metadata.resource_version.unwrap();
    let mut watch = client.watch(&ListOptions::default().resource_version(start).timeout(60)).await.unwrap();

    let sent = acid::v1::Postgresql {
        metadata: ObjectMeta { name: Some("acid-minimal".into()), ..Default::default() },
        spec: acid::v1::PostgresqlSpec { number_of_instances: 2, team_id: "acid".into() },
        status: None,
    };
    let created = client.create(&sent, &CreateOptions::default()).await.unwrap();
    assert_eq!(created.spec, sent.spec);
    // What the server stores names the kind as the CRD declares it.
    let dynamic = k8s_client_runtime::dynamic::DynamicClient::namespaced_with(
        support::client(),
        &ns,
        &DynamicResource::of::<acid::v1::Postgresql>(),
    );
    let stored = serde_json::to_value(dynamic.get("acid-minimal", &GetOptions::default()).await.unwrap()).unwrap();
    assert_eq!(
        (stored["apiVersion"].as_str(), stored["kind"].as_str()),
        (Some("acid.zalan.do/v1"), Some("postgresql"))
    );

    let mut with_status = created.clone();
    with_status.status = Some(Map::from([("PostgresClusterStatus", "Running")]));
    let updated = client.update_status(&with_status, &UpdateOptions::default()).await.unwrap();
    assert_eq!(updated.status, with_status.status);
    let listed = client.list(&ListOptions::default()).await.unwrap();
    assert_eq!(listed.items.len(), 1);
    assert_eq!(listed.items[0].status, with_status.status);
    match watch.next().await.unwrap().unwrap() {
        WatchEvent::Added(p) => assert_eq!(p.spec, sent.spec),
        other => panic!("expected Added, got {other:?}"),
    }

    let factory = SharedInformerFactory::builder(support::client()).namespace(ns.clone()).build();
    let lister = factory.acid_zalan_do_v1().postgresqls().lister();
    factory.start();
    assert!(tokio::time::timeout(Duration::from_secs(30), factory.wait_for_cache_sync()).await.is_ok());
    let cached = lister.namespace(&ns).get("acid-minimal").unwrap();
    assert_eq!(cached.status, with_status.status);
    factory.shutdown();
    client.delete("acid-minimal", &DeleteOptions::default()).await.unwrap();
}
