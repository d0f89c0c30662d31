//! One suite of what controllers rely on (create, conflicts, selectors,
//! paging, patches, server-side apply and its conflicts, finalizers, the
//! status and scale subresources, watches), run against the real apiserver
//! and against [`FakeCluster`]: each scenario asserts the apiserver's exact
//! answers, so the fake passes only by giving the same ones.

mod support;

use std::time::Duration;

use futures_util::StreamExt as _;
use k8s_client::api::apps::v1::{Deployment, DeploymentApply, DeploymentSpecApply};
use k8s_client::api::core::v1::{ConfigMap, ContainerApply, Namespace, PodSpecApply, PodTemplateSpecApply};
use k8s_client::apimachinery::pkg::apis::meta::v1::{LabelSelectorApply, ObjectMeta, ObjectMetaApply};
use k8s_client::clientset::Clientset;
use k8s_client_runtime::Map;
use k8s_client_runtime::fake::FakeCluster;
use k8s_client_runtime::rest::{
    ApplyOptions, Client, CreateOptions, DeleteOptions, GetOptions, ListOptions, Patch, PatchOptions, Preconditions,
    UpdateOptions, WatchEvent,
};
use serde_json::json;

fn config_map(name: &str, tier: &str) -> ConfigMap {
    let mut cm = support::config_map(name, ("tier", tier), &[("k", "v")]);
    cm.metadata.labels.get_or_insert_default().insert("suite", "parity".into());
    cm
}

fn names(items: &[ConfigMap]) -> Vec<String> {
    items.iter().map(|c| c.metadata.name.as_deref().unwrap_or_default().to_owned()).collect()
}

/// A deployment `web` with two containers, applied whole by `shaper`.
fn web(namespace: &str) -> DeploymentApply {
    let container = |name: &str, image: &str| ContainerApply::default().with_name(name).with_image(image);
    DeploymentApply::new("web", namespace).with_spec(
        DeploymentSpecApply::default()
            .with_replicas(1)
            .with_selector(LabelSelectorApply::default().with_match_labels([("app", "web")]))
            .with_template(
                PodTemplateSpecApply::default()
                    .with_metadata(ObjectMetaApply::default().with_labels([("app", "web")]))
                    .with_spec(
                        PodSpecApply::default()
                            .with_containers(vec![container("app", "nginx:1"), container("sidecar", "busybox:1")]),
                    ),
            ),
    )
}

fn replicas(namespace: &str, count: i32) -> DeploymentApply {
    DeploymentApply::new("web", namespace).with_spec(DeploymentSpecApply::default().with_replicas(count))
}

async fn config_maps_behave_alike(client: Client, ns: &str) {
    let cms = Clientset::new(client).core_v1().config_maps(ns);
    let create = CreateOptions::default();

    // generateName, and what the server sets on create.
    let mut generated = config_map("", "a");
    generated.metadata.name = None;
    generated.metadata.generate_name = Some("gen-".into());
    let generated = cms.create(&generated, &create).await.unwrap();
    let name = generated.metadata.name.as_deref().unwrap();
    assert!(name.starts_with("gen-") && name.len() == "gen-".len() + 5, "{name}");
    assert!(generated.metadata.uid.is_some() && generated.metadata.creation_timestamp.is_some());
    assert!(generated.metadata.resource_version.is_some());
    assert_eq!(generated.metadata.namespace.as_deref(), Some(ns));

    // Already exists; not found.
    let first = cms.create(&config_map("c0", "a"), &create).await.unwrap();
    assert!(cms.create(&config_map("c0", "a"), &create).await.unwrap_err().is_already_exists());
    assert!(cms.get("absent", &GetOptions::default()).await.unwrap_err().is_not_found());
    assert!(cms.delete("absent", &DeleteOptions::default()).await.unwrap_err().is_not_found());

    // Optimistic concurrency: an update from a stale copy is a conflict.
    let mut fresh = first.clone();
    fresh.data.get_or_insert_default().insert("k", "v2".into());
    let updated = cms.update(&fresh, &UpdateOptions::default()).await.unwrap();
    assert_ne!(updated.metadata.resource_version, first.metadata.resource_version);
    let mut stale = first.clone();
    stale.data.get_or_insert_default().insert("k", "stale".into());
    assert!(cms.update(&stale, &UpdateOptions::default()).await.unwrap_err().is_conflict());
    let precondition = DeleteOptions {
        preconditions: Some(Preconditions {
            resource_version: first.metadata.resource_version.as_deref().map(str::to_owned),
            uid: None,
        }),
        ..Default::default()
    };
    assert!(cms.delete("c0", &precondition).await.unwrap_err().is_conflict());

    // Selectors and paging.
    for (name, tier) in [("c1", "b"), ("c2", "c"), ("c3", "a"), ("c4", "b")] {
        cms.create(&config_map(name, tier), &create).await.unwrap();
    }
    let select = |labels: &str| ListOptions::default().labels(format!("suite=parity,{labels}"));
    let listed = cms.list(&select("tier in (a,b),tier!=c")).await.unwrap();
    let mut selected = names(&listed.items);
    selected.retain(|n| !n.starts_with("gen-"));
    assert_eq!(selected, ["c0", "c1", "c3", "c4"], "in name order");
    assert_eq!(names(&cms.list(&ListOptions::default().fields("metadata.name=c2")).await.unwrap().items), ["c2"]);
    let page = cms.list(&select("!missing").limit(2)).await.unwrap();
    assert_eq!(page.items.len(), 2);
    let token = page.metadata.continue_.clone().expect("a continue token");
    let rest = cms.list(&select("!missing").limit(10).continue_token(token)).await.unwrap();
    assert_eq!(page.items.len() + rest.items.len(), 6);
    assert!(rest.metadata.continue_.as_deref().unwrap_or_default().is_empty());

    // Merge and JSON patches.
    let merged = cms.patch("c1", &Patch::Merge(json!({"data": {"m": "1", "k": null}})), &PatchOptions::default()).await;
    assert_eq!(merged.unwrap().data, Some(Map::from([("m", "1")])));
    let ops = json!([{"op": "add", "path": "/data/j", "value": "2"}, {"op": "test", "path": "/data/m", "value": "1"}]);
    let patched = cms.patch("c1", &Patch::Json(ops), &PatchOptions::default()).await.unwrap();
    assert_eq!(patched.data, Some(Map::from([("j", "2"), ("m", "1")])));
    let failing = json!([{"op": "test", "path": "/data/m", "value": "other"}]);
    let err = cms.patch("c1", &Patch::Json(failing), &PatchOptions::default()).await.unwrap_err();
    assert!(err.is_invalid() || err.code() == Some(422), "{err}");

    // Finalizers hold a deleted object until they are removed.
    let mut held = config_map("held", "z");
    held.metadata.finalizers = Some(["example.com/hold".into()].into_iter().collect());
    cms.create(&held, &create).await.unwrap();
    cms.delete("held", &DeleteOptions::default()).await.unwrap();
    let deleting = cms.get("held", &GetOptions::default()).await.unwrap();
    assert!(deleting.metadata.deletion_timestamp.is_some());
    let release = Patch::Merge(json!({"metadata": {"finalizers": null}}));
    cms.patch("held", &release, &PatchOptions::default()).await.unwrap();
    assert!(cms.get("held", &GetOptions::default()).await.unwrap_err().is_not_found());

    // A collection goes by selector.
    cms.delete_collection(&DeleteOptions::default(), &select("tier=b")).await.unwrap();
    let left = names(&cms.list(&select("!missing")).await.unwrap().items);
    assert!(!left.contains(&"c1".to_owned()) && !left.contains(&"c4".to_owned()) && left.contains(&"c3".to_owned()));
}

async fn a_watch_sees_every_change_in_order(client: Client, ns: &str) {
    let cms = Clientset::new(client).core_v1().config_maps(ns);
    let start = cms.list(&ListOptions::default()).await.unwrap().metadata.resource_version.unwrap();
    let mut watch = cms.watch(&ListOptions::default().resource_version(start).timeout(60)).await.unwrap();
    let created = cms.create(&config_map("w", "a"), &CreateOptions::default()).await.unwrap();
    cms.patch("w", &Patch::Merge(json!({"data": {"k": "v2"}})), &PatchOptions::default()).await.unwrap();
    cms.delete("w", &DeleteOptions::default()).await.unwrap();
    let mut seen = Vec::new();
    while seen.len() < 3 {
        let event = tokio::time::timeout(Duration::from_secs(30), watch.next()).await.expect("an event in time");
        match event.expect("stream open").expect("event") {
            WatchEvent::Added(o) => seen.push(("ADDED", o.data.unwrap_or_default()["k"].to_string())),
            WatchEvent::Modified(o) => seen.push(("MODIFIED", o.data.unwrap_or_default()["k"].to_string())),
            WatchEvent::Deleted(o) => seen.push(("DELETED", o.data.unwrap_or_default()["k"].to_string())),
            WatchEvent::Bookmark(_) => {}
        }
    }
    let seen: Vec<_> = seen.iter().map(|(t, v)| (*t, v.as_str())).collect();
    assert_eq!(seen, [("ADDED", "v"), ("MODIFIED", "v2"), ("DELETED", "v2")]);
    assert!(created.metadata.resource_version.is_some());
}

async fn deployments_apply_patch_and_scale_alike(client: Client, ns: &str) {
    let deployments = Clientset::new(client).apps_v1().deployments(ns);
    let applied = deployments.apply("web", &web(ns), &ApplyOptions::new("shaper")).await.unwrap();
    assert_eq!(applied.spec.replicas, Some(1));

    // Another manager changing a field `shaper` owns conflicts, naming both.
    let err = deployments.apply("web", &replicas(ns, 3), &ApplyOptions::new("scaler")).await.unwrap_err();
    assert!(err.is_conflict(), "{err}");
    let conflicts: Vec<_> = err.apply_conflicts().into_iter().map(|c| (c.field, c.manager)).collect();
    assert_eq!(conflicts, [(".spec.replicas".to_owned(), "shaper".to_owned())]);
    // Forced, it takes the field over; `shaper` keeps the rest.
    let forced = deployments.apply("web", &replicas(ns, 3), &ApplyOptions::new("scaler").force()).await.unwrap();
    assert_eq!(forced.spec.replicas, Some(3));
    let shaper = DeploymentApply::extract(&forced, "shaper").unwrap();
    assert_eq!(shaper.spec.as_ref().and_then(|s| s.replicas), None);
    assert!(shaper.spec.as_ref().and_then(|s| s.template.as_ref()).is_some());

    // A strategic merge patch changes one container by its name.
    let image = json!({"spec": {"template": {"spec": {"containers": [{"name": "sidecar", "image": "busybox:2"}]}}}});
    let patched = deployments.patch("web", &Patch::Strategic(image), &PatchOptions::default()).await.unwrap();
    let containers = &patched.spec.template.spec.unwrap().containers;
    let images: Vec<_> = containers.iter().map(|c| (c.name.as_str(), c.image.as_deref().unwrap_or_default())).collect();
    assert_eq!(images, [("app", "nginx:1"), ("sidecar", "busybox:2")]);

    // Status is written through its subresource only.
    let mut current = deployments.get("web", &GetOptions::default()).await.unwrap();
    current.status.get_or_insert_default().replicas = Some(7);
    let through_main = deployments.update(&current, &UpdateOptions::default()).await.unwrap();
    assert_eq!(through_main.status.as_ref().and_then(|s| s.replicas), None);
    let mut current = through_main;
    current.status.get_or_insert_default().replicas = Some(7);
    let through_status = deployments.update_status(&current, &UpdateOptions::default()).await.unwrap();
    assert_eq!(through_status.status.as_ref().and_then(|s| s.replicas), Some(7));

    // Scale reads and writes spec.replicas.
    let mut scale = deployments.get_scale("web").await.unwrap();
    assert_eq!(scale.spec.as_ref().and_then(|s| s.replicas), Some(3));
    scale.spec.get_or_insert_default().replicas = Some(5);
    deployments.update_scale("web", &scale, &UpdateOptions::default()).await.unwrap();
    let scaled = deployments.get("web", &GetOptions::default()).await.unwrap();
    assert_eq!(scaled.spec.replicas, Some(5));
}

/// The fake, with what it cannot learn from requests registered:
/// deployments' status and scale subresources, and their merge schema
/// (from their apply configuration) for strategic merge patches and
/// server-side apply.
fn fake() -> FakeCluster {
    let fake = FakeCluster::new();
    fake.register_with_status::<Deployment>()
        .register_with_scale::<Deployment>()
        .register_merge::<Deployment, DeploymentApply>();
    fake
}

/// A namespace on the fake, created as on a cluster.
async fn fake_namespace(fake: &FakeCluster, name: &str) -> String {
    let namespace =
        Namespace { metadata: ObjectMeta { name: Some(name.into()), ..Default::default() }, ..Default::default() };
    Clientset::new(fake.client()).core_v1().namespaces().create(&namespace, &CreateOptions::default()).await.unwrap();
    name.to_owned()
}

#[tokio::test]
async fn config_maps_on_the_apiserver() {
    config_maps_behave_alike(support::client(), &support::namespace("parity-cm")).await;
}

#[tokio::test]
async fn config_maps_on_the_fake() {
    let fake = fake();
    let ns = fake_namespace(&fake, "parity-cm").await;
    config_maps_behave_alike(fake.client(), &ns).await;
}

#[tokio::test]
async fn watches_on_the_apiserver() {
    a_watch_sees_every_change_in_order(support::client(), &support::namespace("parity-watch")).await;
}

#[tokio::test]
async fn watches_on_the_fake() {
    let fake = fake();
    let ns = fake_namespace(&fake, "parity-watch").await;
    a_watch_sees_every_change_in_order(fake.client(), &ns).await;
}

#[tokio::test]
async fn deployments_on_the_apiserver() {
    deployments_apply_patch_and_scale_alike(support::client(), &support::namespace("parity-deploy")).await;
}

#[tokio::test]
async fn deployments_on_the_fake() {
    let fake = fake();
    let ns = fake_namespace(&fake, "parity-deploy").await;
    deployments_apply_patch_and_scale_alike(fake.client(), &ns).await;
}
