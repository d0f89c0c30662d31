//! Metadata-only access against the real apiserver: the metadata client
//! (get, list with paging, label patches, delete, deletecollection) and the
//! metadata informer factory, on pods and on the test `widgets` custom
//! resource (`integration/crds/widgets.yaml`).

mod support;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use k8s_client_runtime::cache::{DeltaObject, ResourceEventHandlerFuncs, SharedIndexInformer};
use k8s_client_runtime::dynamic::{DynamicClient, DynamicObject};
use k8s_client_runtime::metadata::{self, MetadataClient, MetadataInformerFactory, PartialObjectMetadata};
use k8s_client_runtime::rest::{CreateOptions, DeleteOptions, GetOptions, ListOptions, Patch, PatchOptions};
use k8s_client_runtime::selector::LabelSelector;
use k8s_client_runtime::{DynamicResource, Metadata as _, Object as _};
use serde_json::json;

fn pods() -> DynamicResource {
    DynamicResource {
        group: String::new(),
        version: "v1".into(),
        kind: "Pod".into(),
        plural: "pods".into(),
        namespaced: true,
    }
}

fn widgets() -> DynamicResource {
    DynamicResource {
        group: "example.com".into(),
        version: "v1".into(),
        kind: "Widget".into(),
        plural: "widgets".into(),
        namespaced: true,
    }
}

fn config_maps() -> DynamicResource {
    DynamicResource { kind: "ConfigMap".into(), plural: "configmaps".into(), ..pods() }
}

/// An object of `resource` named `name` with the label `app=<app>`, its
/// spec filled as the resource requires.
fn object(resource: &DynamicResource, name: &str, app: &str) -> DynamicObject {
    let data = match resource.plural.as_str() {
        "pods" => json!({"spec": {"containers": [{"name": "c", "image": "registry.invalid/none:1"}]}}),
        "widgets" => json!({"spec": {"replicas": 1}}),
        _ => json!({"data": {"big": "x".repeat(4096)}}),
    };
    let mut obj = DynamicObject::new(resource, name).with_data(data);
    obj.metadata.labels = Some(k8s_client_runtime::Map::from([("app", app)]));
    obj
}

/// Waits up to 30 s for `check` to hold of the informer's cache.
async fn eventually(
    what: &str,
    informer: &SharedIndexInformer<PartialObjectMetadata>,
    check: impl Fn(&[Arc<PartialObjectMetadata>]) -> bool,
) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let cached = informer.lister().list(&LabelSelector::everything());
        if check(&cached) {
            return;
        }
        assert!(Instant::now() < deadline, "{what}: not seen within 30 s; cache: {cached:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn app_label(obj: &PartialObjectMetadata) -> Option<&str> {
    obj.labels().and_then(|l| l.get("app")).map(|v| v.as_str())
}

/// What the informer's handler was told, as `add/update/delete name app`.
type Seen = Arc<Mutex<Vec<String>>>;

fn record(informer: &SharedIndexInformer<PartialObjectMetadata>) -> Seen {
    let seen: Seen = Arc::default();
    let describe = |verb: &str, o: &PartialObjectMetadata| {
        format!("{verb} {} {}", o.name().unwrap_or_default(), app_label(o).unwrap_or_default())
    };
    let (add, update, delete) = (Arc::clone(&seen), Arc::clone(&seen), Arc::clone(&seen));
    let handler = ResourceEventHandlerFuncs::new()
        .on_add(move |o: &Arc<PartialObjectMetadata>, _| add.lock().unwrap().push(describe("add", o)))
        .on_update(move |_, o: &Arc<PartialObjectMetadata>| update.lock().unwrap().push(describe("update", o)))
        .on_delete(move |o: &DeltaObject<PartialObjectMetadata>| {
            if let DeltaObject::Object(o) = o {
                delete.lock().unwrap().push(describe("delete", o));
            }
        });
    informer.add_event_handler(handler).unwrap();
    seen
}

#[tokio::test]
async fn informers_see_adds_label_updates_and_deletes_of_pods_and_widgets() {
    support::install_crds(&support::test_crds()).await;
    let ns = support::namespace("metadata-informer");
    let client = support::client();
    let factory =
        MetadataInformerFactory::with_factory(MetadataInformerFactory::builder(client.clone()).namespace(&ns).build());
    let resources = [pods(), widgets()];
    let informers: Vec<_> = resources.iter().map(|r| factory.for_resource(r)).collect();
    let seen: Vec<Seen> = informers.iter().map(record).collect();
    factory.start();
    factory.wait_for_cache_sync_within(Duration::from_secs(60)).await.unwrap();

    for ((resource, informer), seen) in resources.iter().zip(&informers).zip(&seen) {
        let what = &resource.plural;
        let dynamic = DynamicClient::namespaced_with(client.clone(), &ns, resource);
        let created = dynamic.create(&object(resource, "one", "a"), &CreateOptions::default()).await.unwrap();
        eventually(&format!("{what}: add"), informer, |c| c.len() == 1 && app_label(&c[0]) == Some("a")).await;
        let cached = informer.lister().namespace(&ns).get("one").unwrap();
        assert_eq!(cached.metadata.uid.as_deref(), created.metadata.uid.as_deref());
        assert_eq!(cached.metadata.managed_fields, None, "{what}: managedFields dropped from the cache");
        assert_eq!((cached.api_version.as_str(), cached.kind.as_str()), (metadata::API_VERSION, metadata::KIND));

        let meta = MetadataClient::namespaced_with(client.clone(), &ns, resource);
        let patch = Patch::Merge(json!({"metadata": {"labels": {"app": "b"}}}));
        let patched = meta.patch("one", &patch, &PatchOptions::default()).await.unwrap();
        assert_eq!(app_label(&patched), Some("b"));
        eventually(&format!("{what}: label update"), informer, |c| c.len() == 1 && app_label(&c[0]) == Some("b")).await;

        meta.delete("one", &DeleteOptions::default()).await.unwrap();
        eventually(&format!("{what}: delete"), informer, <[_]>::is_empty).await;
        // The cache is written before handlers are told: wait for them too.
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while seen.lock().unwrap().last().map(String::as_str) != Some("delete one b") {
            assert!(std::time::Instant::now() < deadline, "{what}: no delete notification: {:?}", seen.lock().unwrap());
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        // A pod's graceful deletion may first update it (deletionTimestamp).
        let seen = seen.lock().unwrap().clone();
        assert_eq!(seen.first().map(String::as_str), Some("add one a"), "{what}: {seen:?}");
        assert_eq!(seen.get(1).map(String::as_str), Some("update one b"), "{what}: {seen:?}");
        assert_eq!(seen.last().map(String::as_str), Some("delete one b"), "{what}: {seen:?}");
    }
    factory.shutdown();
}

#[tokio::test]
async fn get_list_pages_patch_and_delete_metadata_only() {
    support::install_crds(&support::test_crds()).await;
    let ns = support::namespace("metadata-client");
    let client = support::client();
    let dynamic = DynamicClient::namespaced_with(client.clone(), &ns, &config_maps());
    for i in 0..5 {
        let app = if i < 3 { "keep" } else { "drop" };
        dynamic.create(&object(&config_maps(), &format!("cm-{i}"), app), &CreateOptions::default()).await.unwrap();
    }
    let meta = MetadataClient::namespaced_with(client.clone(), &ns, &config_maps());

    // get: the metadata only, not the data.
    let got = meta.get("cm-0", &GetOptions::default()).await.unwrap();
    assert_eq!((got.api_version.as_str(), got.kind.as_str()), (metadata::API_VERSION, metadata::KIND));
    assert_eq!((got.name(), got.namespace(), app_label(&got)), (Some("cm-0"), Some(ns.as_str()), Some("keep")));
    assert!(got.metadata.creation_timestamp.is_some() && got.metadata.uid.is_some());
    let written = serde_json::to_value(&got).unwrap();
    assert_eq!(written.get("data"), None);

    // list, one page, then all pages.
    let page = meta.list(&ListOptions::default().limit(2)).await.unwrap();
    assert_eq!(page.items.len(), 2);
    assert!(page.metadata.continue_.as_deref().is_some_and(|c| !c.is_empty()), "a continue token");
    let next = meta
        .list(&ListOptions { continue_token: page.metadata.continue_.clone(), ..ListOptions::default().limit(2) })
        .await
        .unwrap();
    assert_eq!(next.items.len(), 2);
    assert_ne!(next.items[0].name(), page.items[0].name());
    let all = meta.list_all(&ListOptions::default().limit(2)).await.unwrap();
    let mut names: Vec<&str> = all.items.iter().filter_map(|o| o.name()).collect();
    names.sort_unstable();
    assert_eq!(names, ["cm-0", "cm-1", "cm-2", "cm-3", "cm-4"]);
    assert!(all.items.iter().all(|o| o.metadata.managed_fields.is_some()), "a client keeps what the server sends");

    // patch: labels and a finalizer, through the metadata alone.
    let patch = Patch::Merge(json!({"metadata": {"labels": {"app": "patched"}, "finalizers": ["example.com/hold"]}}));
    let patched = meta.patch("cm-1", &patch, &PatchOptions::default()).await.unwrap();
    assert_eq!(app_label(&patched), Some("patched"));
    assert_eq!(patched.metadata.finalizers(), ["example.com/hold"]);
    let full = dynamic.get("cm-1", &GetOptions::default()).await.unwrap();
    assert_eq!(full.data["data"]["big"].as_str().map(str::len), Some(4096), "the rest of the object is untouched");

    // delete: held by the finalizer, the answer is the object's metadata.
    let held =
        meta.delete("cm-1", &DeleteOptions::default()).await.unwrap().object().expect("the object, being deleted");
    assert!(held.metadata().is_being_deleted());
    let release = Patch::Merge(json!({"metadata": {"finalizers": null}}));
    meta.patch("cm-1", &release, &PatchOptions::default()).await.unwrap();
    meta.delete("cm-0", &DeleteOptions::default()).await.unwrap();
    assert!(meta.get_opt("cm-0", &GetOptions::default()).await.unwrap().is_none());

    // deletecollection by label.
    meta.delete_collection(&DeleteOptions::default(), &ListOptions::default().labels("app=drop")).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let left = meta.list(&ListOptions::default()).await.unwrap();
        let mut names: Vec<String> = left.items.iter().filter_map(|o| o.name().map(str::to_owned)).collect();
        names.sort_unstable();
        if names == ["cm-2"] {
            break;
        }
        assert!(Instant::now() < deadline, "left: {names:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // A custom resource's metadata, through the same client.
    let widgets_dynamic = DynamicClient::namespaced_with(client.clone(), &ns, &widgets());
    widgets_dynamic.create(&object(&widgets(), "w", "x"), &CreateOptions::default()).await.unwrap();
    let widget =
        MetadataClient::namespaced_with(client, &ns, &widgets()).get("w", &GetOptions::default()).await.unwrap();
    assert_eq!((widget.kind.as_str(), app_label(&widget)), (metadata::KIND, Some("x")));
}

/// The metadata client speaks protobuf by default (client-go's metadata
/// client asks for `application/vnd.kubernetes.protobuf;as=PartialObjectMetadata…`)
/// and reads exactly what a client configured for JSON reads: gets, lists
/// and watch events of pods with labels, annotations, an owner,
/// finalizers, a deletion timestamp and managedFields, and of the
/// `widgets` custom resource.
#[tokio::test]
async fn metadata_over_protobuf_reads_what_json_reads() {
    use futures_util::StreamExt as _;
    use k8s_client_runtime::config::ContentType;
    use k8s_client_runtime::rest::WatchEvent;

    support::install_crds(&support::test_crds()).await;
    let ns = support::namespace("metadata-protobuf");
    let client = support::client();
    let mut json_config = support::config_for(support::env(), None);
    json_config.content_type = ContentType::Json;
    let json_client = k8s_client_runtime::Client::new(json_config).unwrap();

    let dynamic = DynamicClient::namespaced_with(client.clone(), &ns, &pods());
    let owner = dynamic.create(&object(&pods(), "owner", "web"), &CreateOptions::default()).await.unwrap();
    for i in 0..3 {
        let mut pod = object(&pods(), &format!("pod-{i}"), "web");
        pod.metadata.annotations =
            Some(k8s_client_runtime::Map::from([("example.com/note", "an annotation longer than sixteen bytes")]));
        pod.metadata.other.insert("finalizers".into(), json!(["example.com/hold"]));
        pod.metadata.other.insert(
            "ownerReferences".into(),
            json!([{"apiVersion": "v1", "kind": "Pod", "name": "owner", "uid": owner.metadata.uid, "controller": true}]),
        );
        dynamic.create(&pod, &CreateOptions::default()).await.unwrap();
    }
    // One being deleted, held by its finalizer.
    dynamic.delete("pod-2", &DeleteOptions::default()).await.unwrap();

    for resource in [pods(), widgets()] {
        if resource.plural == "widgets" {
            let widgets_dynamic = DynamicClient::namespaced_with(client.clone(), &ns, &widgets());
            widgets_dynamic.create(&object(&widgets(), "w", "x"), &CreateOptions::default()).await.unwrap();
        }
        // What the apiserver answers to that Accept: protobuf, for the
        // built-in kind and the custom resource alike.
        let prefix = if resource.group.is_empty() { "/api/v1".to_owned() } else { "/apis/example.com/v1".to_owned() };
        let raw = client
            .get(format!("{prefix}/namespaces/{ns}/{}", resource.plural))
            .accept(metadata::ACCEPT_PROTOBUF.list)
            .bytes()
            .await
            .unwrap();
        assert!(raw.starts_with(b"k8s\0"), "{} answered {:?}", resource.plural, &raw[..raw.len().min(40)]);

        let protobuf = MetadataClient::namespaced_with(client.clone(), &ns, &resource);
        let json = MetadataClient::namespaced_with(json_client.clone(), &ns, &resource);
        assert_eq!((protobuf.content_type(), json.content_type()), (ContentType::Protobuf, ContentType::Json));

        let (over_protobuf, over_json) =
            (protobuf.list(&ListOptions::default()).await.unwrap(), json.list(&ListOptions::default()).await.unwrap());
        assert!(!over_protobuf.items.is_empty());
        assert_eq!(over_protobuf.items, over_json.items, "{} listed", resource.plural);
        assert!(over_protobuf.items.iter().all(|o| o.metadata.managed_fields.is_some()));
        let name = over_protobuf.items[0].name().unwrap().to_owned();
        assert_eq!(
            protobuf.get(&name, &GetOptions::default()).await.unwrap(),
            json.get(&name, &GetOptions::default()).await.unwrap(),
            "{} got",
            resource.plural
        );

        // A watch from the list's version sees a label change the same way.
        let from = ListOptions { resource_version: over_json.metadata.resource_version.clone(), ..Default::default() };
        let (mut watch_protobuf, mut watch_json) =
            (protobuf.watch(&from).await.unwrap(), json.watch(&from).await.unwrap());
        let patch = Patch::Merge(json!({"metadata": {"labels": {"app": "changed"}}}));
        MetadataClient::namespaced_with(client.clone(), &ns, &resource)
            .patch(&name, &patch, &PatchOptions::default())
            .await
            .unwrap();
        let next = |event: Option<Result<WatchEvent<PartialObjectMetadata>, _>>| match event {
            Some(Ok(WatchEvent::Modified(o))) => o,
            other => panic!("expected MODIFIED, got {other:?}"),
        };
        let seen_protobuf = next(tokio::time::timeout(Duration::from_secs(30), watch_protobuf.next()).await.unwrap());
        let seen_json = next(tokio::time::timeout(Duration::from_secs(30), watch_json.next()).await.unwrap());
        assert_eq!(app_label(&seen_protobuf), Some("changed"));
        assert_eq!(seen_protobuf, seen_json, "{} watched", resource.plural);
    }
    let pods_metadata = MetadataClient::namespaced_with(client.clone(), &ns, &pods());
    let held = pods_metadata.get("pod-2", &GetOptions::default()).await.unwrap();
    assert!(held.metadata().is_being_deleted());
    for i in 0..3 {
        let release = Patch::Merge(json!({"metadata": {"finalizers": null}}));
        dynamic.patch(&format!("pod-{i}"), &release, &PatchOptions::default()).await.unwrap();
    }
}
