//! The RESTClient, typed ClientSet, DynamicClient and DiscoveryClient against
//! the real kube-apiserver of the testenv.

mod support;

use std::collections::BTreeSet;

use futures_util::StreamExt;
use k8s_client::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_client::api::core::v1::{ConfigMap, Container, Pod, PodSpec, PodTemplateSpec};
use k8s_client::api::policy::v1::Eviction;
use k8s_client::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_client::prelude::*;
use k8s_client_runtime::discovery::DiscoveryClient;
use k8s_client_runtime::dynamic::{DynamicClient, DynamicObject};
use k8s_client_runtime::object::{DynamicResource, Resource as _};
use k8s_client_runtime::rest::{
    ApplyOptions, CreateOptions, DeleteOptions, GetOptions, ListOptions, Patch, UpdateOptions, WatchEvent,
};
use k8s_client_runtime::{Map, thin_vec};

fn config_map(name: &str, data: &[(&str, &str)]) -> ConfigMap {
    support::config_map(name, ("app", "it"), data)
}

#[tokio::test]
async fn config_map_crud() {
    let ns = support::namespace("crud");
    let cms = support::clientset().core_v1().config_maps(&ns);
    let created = cms.create(&config_map("one", &[("k", "v1")]), &CreateOptions::default()).await.unwrap();
    assert_eq!(created.metadata.namespace.as_deref(), Some(ns.as_str()));
    assert!(created.metadata.resource_version.is_some());

    let mut got = cms.get("one", &GetOptions::default()).await.unwrap();
    assert_eq!(got.data.as_ref().unwrap()["k"], "v1");
    got.data.as_mut().unwrap().insert("k", "v2".into());
    let updated = cms.update(&got, &UpdateOptions::default()).await.unwrap();
    assert_eq!(updated.data.as_ref().unwrap()["k"], "v2");

    let patched = cms
        .patch("one", &Patch::Merge(serde_json::json!({"data": {"extra": "x"}})), &Default::default())
        .await
        .unwrap();
    assert_eq!(patched.data.as_ref().unwrap()["extra"], "x");

    let listed = cms.list(&ListOptions::default().labels("app=it")).await.unwrap();
    assert_eq!(listed.items.len(), 1);
    assert!(cms.list(&ListOptions::default().labels("app=other")).await.unwrap().items.is_empty());

    cms.delete("one", &DeleteOptions::default()).await.unwrap();
    let err = cms.get("one", &GetOptions::default()).await.unwrap_err();
    assert!(err.is_not_found(), "{err}");
}

#[tokio::test]
async fn list_pages_through_1200_objects() {
    let ns = support::namespace("paging");
    let cms = support::clientset().core_v1().config_maps(&ns);
    let creates = (0..1200).map(|i| {
        let cms = cms.clone();
        async move { cms.create(&config_map(&format!("cm-{i:04}"), &[("i", "x")]), &CreateOptions::default()).await }
    });
    let results = futures_util::stream::iter(creates).buffer_unordered(32).collect::<Vec<_>>().await;
    assert!(results.iter().all(Result::is_ok), "a create failed: {:?}", results.iter().find(|r| r.is_err()));

    let mut names = BTreeSet::new();
    let mut pages = 0;
    let mut opts = ListOptions::default().limit(500);
    loop {
        let page = cms.list(&opts).await.unwrap();
        pages += 1;
        assert!(page.items.len() <= 500);
        names.extend(page.items.iter().map(|cm| cm.metadata.name.clone().unwrap()));
        match page.metadata.continue_.filter(|c| !c.is_empty()) {
            Some(token) => opts = ListOptions::default().limit(500).continue_token(token),
            None => break,
        }
    }
    assert_eq!(pages, 3);
    assert_eq!(names.len(), 1200);
}

#[tokio::test]
async fn watch_sees_events_in_order_and_resumes() {
    let ns = support::namespace("watch");
    let cms = support::clientset().core_v1().config_maps(&ns);
    let start_rv = cms.list(&ListOptions::default()).await.unwrap().metadata.resource_version.unwrap();
    let mut stream = cms.watch(&ListOptions::default().resource_version(start_rv.clone()).timeout(60)).await.unwrap();

    let created = cms.create(&config_map("w", &[("k", "1")]), &CreateOptions::default()).await.unwrap();
    let mut changed = created.clone();
    changed.data = Some(Map::from([("k", "2")]));
    cms.update(&changed, &UpdateOptions::default()).await.unwrap();
    cms.delete("w", &DeleteOptions::default()).await.unwrap();

    let mut seen = Vec::new();
    while seen.len() < 3 {
        match stream.next().await.expect("stream ended early").expect("watch error") {
            WatchEvent::Added(cm) => seen.push(("ADDED", cm)),
            WatchEvent::Modified(cm) => seen.push(("MODIFIED", cm)),
            WatchEvent::Deleted(cm) => seen.push(("DELETED", cm)),
            WatchEvent::Bookmark(_) => {}
        }
    }
    assert_eq!(seen.iter().map(|(t, _)| *t).collect::<Vec<_>>(), ["ADDED", "MODIFIED", "DELETED"]);
    assert_eq!(seen[1].1.data.as_ref().unwrap()["k"], "2");

    // Resuming from the ADDED event's resourceVersion replays what came after.
    let added_rv = seen[0].1.metadata.resource_version.clone().unwrap();
    let mut resumed = cms.watch(&ListOptions::default().resource_version(added_rv).timeout(60)).await.unwrap();
    let mut after = Vec::new();
    while after.len() < 2 {
        match resumed.next().await.expect("resumed stream ended").expect("watch error") {
            WatchEvent::Modified(_) => after.push("MODIFIED"),
            WatchEvent::Deleted(_) => after.push("DELETED"),
            WatchEvent::Added(_) => after.push("ADDED"),
            WatchEvent::Bookmark(_) => {}
        }
    }
    assert_eq!(after, ["MODIFIED", "DELETED"]);
}

#[tokio::test]
async fn a_client_without_managed_fields_lists_and_watches_objects_without_them() {
    let ns = support::namespace("nomf");
    let cms = support::clientset().core_v1().config_maps(&ns);
    let lean = cms.clone().without_managed_fields();
    cms.create(&config_map("a", &[("k", "1")]), &CreateOptions::default()).await.unwrap();

    // The server keeps managedFields: the plain client reads them.
    let full = cms.list(&ListOptions::default()).await.unwrap();
    assert!(full.items[0].metadata.managed_fields.as_ref().is_some_and(|m| !m.is_empty()));
    let listed = lean.list(&ListOptions::default()).await.unwrap();
    assert_eq!(listed.items.len(), 1);
    assert_eq!(listed.items[0].metadata.managed_fields, None);
    // Everything else reads as the plain client's does.
    let mut expected = full.items[0].clone();
    expected.metadata.managed_fields = None;
    assert_eq!(listed.items[0], expected);
    assert_eq!(lean.list_all(&ListOptions::default()).await.unwrap().items, vec![expected]);

    let rv = listed.metadata.resource_version.unwrap();
    let opts = ListOptions::default().resource_version(rv).timeout(60);
    let (mut plain, mut skipping) = (cms.watch(&opts).await.unwrap(), lean.watch(&opts).await.unwrap());
    cms.patch("a", &Patch::Merge(serde_json::json!({"data": {"k": "2"}})), &Default::default()).await.unwrap();
    let modified = |event: WatchEvent<ConfigMap>| match event {
        WatchEvent::Modified(cm) => Some(cm),
        _ => None,
    };
    let seen = loop {
        if let Some(cm) = modified(skipping.next().await.expect("stream ended").expect("watch error")) {
            break cm;
        }
    };
    let full = loop {
        if let Some(cm) = modified(plain.next().await.expect("stream ended").expect("watch error")) {
            break cm;
        }
    };
    assert_eq!(seen.data.as_ref().unwrap()["k"], "2");
    assert_eq!(seen.metadata.managed_fields, None);
    assert!(full.metadata.managed_fields.is_some());
}

#[tokio::test]
async fn server_side_apply_conflicts_unless_forced() {
    let ns = support::namespace("apply");
    let cms = support::clientset().core_v1().config_maps(&ns);
    let config = |value: &str| serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "applied"}, "data": {"key": value}});
    let first = cms.apply("applied", &config("a"), &ApplyOptions::new("manager-a")).await.unwrap();
    assert_eq!(first.data.as_ref().unwrap()["key"], "a");
    let err = cms.apply("applied", &config("b"), &ApplyOptions::new("manager-b")).await.unwrap_err();
    assert!(err.is_conflict(), "expected a 409 conflict, got {err}");
    let forced = cms.apply("applied", &config("b"), &ApplyOptions::new("manager-b").force()).await.unwrap();
    assert_eq!(forced.data.as_ref().unwrap()["key"], "b");
}

#[tokio::test]
async fn api_errors_map_to_their_kinds() {
    let ns = support::namespace("errors");
    let cms = support::clientset().core_v1().config_maps(&ns);
    let missing = cms.get("absent", &GetOptions::default()).await.unwrap_err();
    assert!(missing.is_not_found() && missing.code() == Some(404), "{missing}");
    assert_eq!(missing.status().and_then(|s| s.details.as_ref()).map(|d| d.name.as_str()), Some("absent"));

    cms.create(&config_map("dup", &[]), &CreateOptions::default()).await.unwrap();
    let dup = cms.create(&config_map("dup", &[]), &CreateOptions::default()).await.unwrap_err();
    assert!(dup.is_already_exists() && dup.code() == Some(409), "{dup}");

    let invalid = cms.create(&config_map("Not_A_Valid_Name", &[]), &CreateOptions::default()).await.unwrap_err();
    assert!(invalid.is_invalid() && invalid.code() == Some(422), "{invalid}");
}

#[tokio::test]
async fn unprivileged_user_is_forbidden() {
    let ns = support::namespace("rbac");
    let clientset = k8s_client::clientset::Clientset::new(support::client_for(Some("unprivileged")));
    let err = clientset.core_v1().config_maps(&ns).list(&ListOptions::default()).await.unwrap_err();
    assert!(err.is_forbidden() && err.code() == Some(403), "{err}");
}

#[tokio::test]
async fn discovery_lists_the_served_groups() {
    let discovery = DiscoveryClient::new(support::client());
    let version = discovery.server_version().await.unwrap();
    assert!(version.git_version.starts_with("v1.37."), "{version:?}");
    let groups: BTreeSet<String> = discovery.groups().await.unwrap().into_iter().map(|g| g.name).collect();
    for expected in ["", "apps", "batch", "rbac.authorization.k8s.io", "coordination.k8s.io", "apiextensions.k8s.io"] {
        assert!(groups.contains(expected), "group {expected:?} missing from {groups:?}");
    }
    let resources = discovery.resources_for("apps/v1").await.unwrap();
    let deployments = resources.iter().find(|r| r.name == "deployments").expect("deployments served");
    assert!(deployments.namespaced && deployments.kind == "Deployment");
    assert!(resources.iter().any(|r| r.name == "deployments/scale"));
}

#[tokio::test]
async fn dynamic_and_typed_clients_agree() {
    let ns = support::namespace("dynamic");
    let typed = support::clientset().core_v1().config_maps(&ns);
    let created = typed.create(&config_map("same", &[("k", "v")]), &CreateOptions::default()).await.unwrap();

    let dynamic = DynamicClient::namespaced_with(support::client(), &ns, &DynamicResource::of::<ConfigMap>());
    let fetched = dynamic.get("same", &GetOptions::default()).await.unwrap();
    assert_eq!(fetched.kind, ConfigMap::KIND);
    assert_eq!(fetched.name(), Some("same"));
    let as_typed: ConfigMap = fetched.clone().try_into_typed().unwrap();
    assert_eq!(as_typed, created);

    // Created dynamically, read back typed.
    let obj = DynamicObject::from_typed(&config_map("from-dynamic", &[("x", "y")])).unwrap();
    dynamic.create(&obj, &CreateOptions::default()).await.unwrap();
    let back = typed.get("from-dynamic", &GetOptions::default()).await.unwrap();
    assert_eq!(back.data.unwrap()["x"], "y");
    let listed = dynamic.list(&ListOptions::default()).await.unwrap();
    assert_eq!(listed.items.len(), typed.list(&ListOptions::default()).await.unwrap().items.len());
}

fn pod(name: &str) -> Pod {
    Pod {
        metadata: ObjectMeta { name: Some(name.into()), ..Default::default() },
        spec: Some(PodSpec {
            containers: thin_vec![Container {
                name: "main".into(),
                image: Some("registry.invalid/none:1".into()),
                ..Default::default()
            }],
            ..Default::default()
        }),
        ..Default::default()
    }
}

#[tokio::test]
async fn subresources_status_scale_and_eviction() {
    let ns = support::namespace("subres");
    let clientset = support::clientset();
    let pods = clientset.core_v1().pods(&ns);
    let created = pods.create(&pod("p"), &CreateOptions::default()).await.unwrap();

    let mut with_status = created.clone();
    with_status.status.get_or_insert_with(Default::default).message = Some("set through /status".into());
    let updated = pods.update_status(&with_status, &UpdateOptions::default()).await.unwrap();
    assert_eq!(updated.status.unwrap().message.as_deref(), Some("set through /status"));

    let eviction = Eviction {
        metadata: ObjectMeta { name: Some("p".into()), namespace: Some(ns.as_str().into()), ..Default::default() },
        ..Default::default()
    };
    pods.create_eviction("p", &eviction, &CreateOptions::default()).await.unwrap();
    // With no kubelet, the evicted pod is deleted at once (no grace period to run out).
    let after = pods.get("p", &GetOptions::default()).await;
    assert!(after.as_ref().is_err_and(|e| e.is_not_found()) || after.unwrap().metadata.deletion_timestamp.is_some());

    let labels = Map::from([("app", "web")]);
    let deployment = Deployment {
        metadata: ObjectMeta { name: Some("web".into()), ..Default::default() },
        spec: DeploymentSpec {
            replicas: Some(1),
            selector: LabelSelector { match_labels: Some(labels.clone()), ..Default::default() },
            template: PodTemplateSpec {
                metadata: Some(Box::new(ObjectMeta { labels: Some(labels), ..Default::default() })),
                spec: Some(Box::new(pod("x").spec.unwrap())),
            },
            ..Default::default()
        },
        ..Default::default()
    };
    let deployments = clientset.apps_v1().deployments(&ns);
    deployments.create(&deployment, &CreateOptions::default()).await.unwrap();
    let mut scale = deployments.get_scale("web").await.unwrap();
    assert_eq!(scale.spec.as_ref().and_then(|s| s.replicas), Some(1));
    scale.spec.get_or_insert_with(Default::default).replicas = Some(3);
    deployments.update_scale("web", &scale, &UpdateOptions::default()).await.unwrap();
    let reread = deployments.get("web", &GetOptions::default()).await.unwrap();
    assert_eq!(reread.spec.replicas, Some(3));
}
