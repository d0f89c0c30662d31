use std::time::Duration;

use futures_util::StreamExt as _;
use serde_json::json;

use super::*;
use crate::codec::{DecodeOptions, decode_json, decode_json_with};
use crate::object::DynamicResource;
use crate::rest::tests::server::{Reply, TestServer};
use crate::rest::{DeleteOptions, GetOptions, ListOptions, Patch, PatchOptions, WatchEvent};
use crate::selector::LabelSelector;

fn widgets() -> DynamicResource {
    DynamicResource {
        group: "example.com".into(),
        version: "v1".into(),
        kind: "Widget".into(),
        plural: "widgets".into(),
        namespaced: true,
    }
}

fn partial(name: &str, rv: &str) -> serde_json::Value {
    json!({
        "apiVersion": "meta.k8s.io/v1",
        "kind": "PartialObjectMetadata",
        "metadata": {
            "name": name, "namespace": "ns", "uid": format!("uid-{name}"), "resourceVersion": rv,
            "creationTimestamp": "2024-05-01T10:00:00Z",
            "labels": {"app": "web"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u1", "controller": true}],
            "finalizers": ["example.com/keep"],
            "managedFields": [{"manager": "kubectl", "operation": "Apply"}]
        }
    })
}

#[test]
fn partial_object_metadata_round_trips() {
    let value = partial("a", "5");
    let obj: PartialObjectMetadata = decode_json(value.to_string().as_bytes()).unwrap();
    assert_eq!((obj.api_version.as_str(), obj.kind.as_str()), (API_VERSION, KIND));
    assert_eq!((obj.name(), obj.namespace(), obj.resource_version()), (Some("a"), Some("ns"), Some("5")));
    assert_eq!(obj.labels().unwrap()["app"], "web");
    assert_eq!(obj.metadata.owner_references()[0].kind, "ReplicaSet");
    assert_eq!(obj.metadata.owner_references()[0].controller, Some(true));
    assert_eq!(obj.metadata.finalizers(), ["example.com/keep"]);
    assert!(obj.metadata.managed_fields.is_some());
    assert_eq!(serde_json::to_value(&obj).unwrap(), value, "every field is written back as read");
    assert_eq!(obj.type_meta().unwrap().1, KIND);

    let trimmed: PartialObjectMetadata =
        decode_json_with(value.to_string().as_bytes(), DecodeOptions::WITHOUT_MANAGED_FIELDS).unwrap();
    assert_eq!(trimmed.metadata.managed_fields, None);
    assert_eq!(trimmed.metadata.uid.as_deref(), Some("uid-a"));
}

#[test]
fn what_a_workload_repeats_is_held_once() {
    // The pods of one workload: the same labels, annotations and owner.
    let pod = |name: &str| {
        json!({"metadata": {
            "name": name,
            "labels": {"app": "web", "pod-template-hash": "7d9c8b5f6d"},
            "annotations": {"prometheus.io/scrape": "true"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-7d9c8b5f6d",
                                 "uid": "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"}],
            "finalizers": ["example.com/a", "example.com/b"]
        }})
        .to_string()
    };
    let a: PartialObjectMetadata = decode_json(pod("a").as_bytes()).unwrap();
    let b: PartialObjectMetadata = decode_json(pod("b").as_bytes()).unwrap();
    let first_entry = |map: Option<&Map>| std::ptr::from_ref(map.unwrap().iter().next().unwrap().0);
    assert_eq!(first_entry(a.labels()), first_entry(b.labels()), "one array of labels");
    assert_eq!(
        first_entry(a.metadata.annotations()),
        first_entry(b.metadata.annotations()),
        "one array of annotations"
    );
    let owner = |o: &PartialObjectMetadata| o.metadata.owner_references()[0].uid.as_ptr();
    assert_eq!(owner(&a), owner(&b), "one buffer for the owner's uid");
    // Decoding grows a list's allocation; a cache keeps it, so it is exact.
    assert_eq!(a.metadata.owner_references.as_ref().map(|o| o.capacity()), Some(1));
    assert_eq!(a.metadata.finalizers.as_ref().map(|f| f.capacity()), Some(2));

    let empty: PartialObjectMetadata =
        decode_json(br#"{"metadata": {"labels": null, "annotations": null, "ownerReferences": null}}"#).unwrap();
    assert_eq!(
        (empty.labels(), empty.metadata.annotations(), empty.metadata.owner_references.as_ref()),
        (None, None, None)
    );
}

#[test]
fn a_whole_object_decodes_as_its_metadata() {
    let pod = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "p", "namespace": "ns", "deletionTimestamp": "2024-05-01T10:00:00Z"},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
        "status": {"phase": "Running"}
    });
    let obj: PartialObjectMetadata = decode_json(pod.to_string().as_bytes()).unwrap();
    assert_eq!((obj.api_version.as_str(), obj.kind.as_str(), obj.name()), ("v1", "Pod", Some("p")));
    assert!(obj.metadata().is_being_deleted());
    let written = serde_json::to_value(&obj).unwrap();
    assert_eq!(written.get("spec"), None, "only the metadata is kept");
    let list: PartialObjectMetadataList = decode_json(
        json!({"kind": "PodList", "metadata": {"resourceVersion": "3"}, "items": [pod]}).to_string().as_bytes(),
    )
    .unwrap();
    assert_eq!(list.items[0].name(), Some("p"));
}

#[test]
fn bad_metadata_names_the_field() {
    let err = decode_json::<PartialObjectMetadata>(br#"{"metadata": {"labels": ["a"]}}"#).unwrap_err();
    assert!(err.to_string().contains("map"), "{err}");
    let err = decode_json::<PartialObjectMetadata>(br#"{"metadata": {"creationTimestamp": "yesterday"}}"#).unwrap_err();
    assert!(err.to_string().contains("yesterday") || err.to_string().contains("time"), "{err}");
}

/// Runs every verb of a metadata client against a server answering JSON,
/// its client configured for `content_type`; returns each request's
/// method, path and `Accept` header.
async fn metadata_verbs_accepting(content_type: crate::config::ContentType) -> Vec<(String, String)> {
    let server = TestServer::start(|r, _| match (r.method.as_str(), r.path.as_str()) {
        ("GET", p) if p.contains("watch=true") => Reply::Chunks {
            status: 200,
            chunks: vec![
                format!("{}\n", json!({"type": "ADDED", "object": partial("w", "7")})).into_bytes(),
                format!("{}\n", json!({"type": "DELETED", "object": partial("w", "8")})).into_bytes(),
            ],
        },
        ("GET", p) if p.ends_with("/widgets") || p.contains("/widgets?") => Reply::json(
            200,
            json!({"apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadataList",
                "metadata": {"resourceVersion": "6"}, "items": [partial("a", "5"), partial("b", "6")]}),
        ),
        ("DELETE", p) if p.ends_with("/widgets") => {
            Reply::json(200, json!({"kind": "Status", "apiVersion": "v1", "status": "Success"}))
        }
        ("DELETE", _) => Reply::json(200, json!({"kind": "Status", "apiVersion": "v1", "status": "Success"})),
        // A server that cannot transform answers with the whole object.
        _ => Reply::json(
            200,
            json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "a", "labels": {"x": "y"}},
                "spec": {"size": 3}}),
        ),
    })
    .await;
    let mut config = crate::config::Config::new(server.url.parse().unwrap());
    config.qps = 0.0;
    config.content_type = content_type;
    let client = MetadataClient::namespaced_with(crate::rest::Client::new(config).unwrap(), "ns", &widgets());
    assert_eq!(client.content_type(), content_type);
    let list = client.list(&ListOptions::default()).await.unwrap();
    assert_eq!(list.items.len(), 2);
    assert_eq!(list.items[1].metadata.uid.as_deref(), Some("uid-b"));
    assert_eq!(list.metadata.resource_version.as_deref(), Some("6"));
    let got = client.get("a", &GetOptions::default()).await.unwrap();
    assert_eq!((got.kind.as_str(), got.labels().unwrap()["x"].as_str()), ("Widget", "y"));
    let patch = Patch::Merge(json!({"metadata": {"labels": {"x": "z"}}}));
    client.patch("a", &patch, &PatchOptions::default()).await.unwrap();
    let events: Vec<_> = client.watch(&ListOptions::default()).await.unwrap().collect().await;
    assert!(matches!(&events[0], Ok(WatchEvent::Added(o)) if o.name() == Some("w") && o.kind == KIND));
    assert!(matches!(&events[1], Ok(WatchEvent::Deleted(o)) if o.resource_version() == Some("8")));
    client.delete("a", &DeleteOptions::default()).await.unwrap();
    client.delete_collection(&DeleteOptions::default(), &ListOptions::default()).await.unwrap();
    server
        .requests()
        .iter()
        .map(|r| {
            (format!("{} {}", r.method, r.path.split('?').next().unwrap()), r.header("accept").unwrap().to_owned())
        })
        .collect()
}

/// The requests of every verb, as `accept` asks for one object and a list.
fn expected_accepts(accept: AcceptAs) -> Vec<(String, String)> {
    let (object, list) = (accept.object.to_owned(), accept.list.to_owned());
    vec![
        ("GET /apis/example.com/v1/namespaces/ns/widgets".into(), list.clone()),
        ("GET /apis/example.com/v1/namespaces/ns/widgets/a".into(), object.clone()),
        ("PATCH /apis/example.com/v1/namespaces/ns/widgets/a".into(), object.clone()),
        ("GET /apis/example.com/v1/namespaces/ns/widgets".into(), object.clone()),
        ("DELETE /apis/example.com/v1/namespaces/ns/widgets/a".into(), object),
        ("DELETE /apis/example.com/v1/namespaces/ns/widgets".into(), list),
    ]
}

#[tokio::test]
async fn requests_accept_the_metadata_representation_in_protobuf_then_json() {
    let accepts = metadata_verbs_accepting(crate::config::ContentType::Protobuf).await;
    assert_eq!(accepts, expected_accepts(ACCEPT_PROTOBUF));
    assert_eq!(
        ACCEPT_PROTOBUF.object,
        "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,\
         application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"
    );
    assert!(ACCEPT_PROTOBUF.list.starts_with("application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;"));
}

#[tokio::test]
async fn a_client_configured_for_json_accepts_the_metadata_representation_in_json() {
    let accepts = metadata_verbs_accepting(crate::config::ContentType::Json).await;
    assert_eq!(accepts, expected_accepts(ACCEPT));
    assert_eq!(ACCEPT.object, "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json");
    assert_eq!(ACCEPT.list, "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json");
}

#[tokio::test]
async fn other_clients_still_accept_plain_json() {
    let server = TestServer::start(|_, _| Reply::json(200, json!({"metadata": {"name": "a"}}))).await;
    let client = crate::dynamic::DynamicClient::namespaced_with(server.client(), "ns", &widgets());
    client.get("a", &GetOptions::default()).await.unwrap();
    assert_eq!(server.requests()[0].header("accept"), Some("application/json"));
}

#[tokio::test]
async fn the_factory_shares_one_informer_per_resource_and_drops_managed_fields() {
    let server = TestServer::start(|r, _| {
        if r.path.contains("sendInitialEvents=true") {
            let bookmark = json!({"type": "BOOKMARK", "object": {"apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata",
                "metadata": {"resourceVersion": "6", "annotations": {"k8s.io/initial-events-end": "true"}}}});
            let added = json!({"type": "ADDED", "object": partial("a", "5")});
            return Reply::Chunks {
                status: 200,
                chunks: vec![format!("{added}\n").into_bytes(), format!("{bookmark}\n").into_bytes()],
            };
        }
        if r.path.contains("watch=true") {
            return Reply::Hang;
        }
        Reply::json(
            200,
            json!({"apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadataList",
                "metadata": {"resourceVersion": "6"}, "items": [partial("a", "5")]}),
        )
    })
    .await;
    let factory = MetadataInformerFactory::new(server.client(), Duration::ZERO);
    let informer = factory.for_resource(&widgets());
    let again = factory.for_resource(&DynamicResource { kind: "Other".into(), ..widgets() });
    let gadgets = factory.for_resource(&DynamicResource { plural: "gadgets".into(), ..widgets() });
    factory.start();
    factory.wait_for_cache_sync_within(Duration::from_secs(10)).await.unwrap();
    let cached = informer.lister().list(&LabelSelector::everything());
    assert_eq!(cached.len(), 1);
    assert_eq!(cached[0].metadata.managed_fields, None, "dropped from the cache");
    assert_eq!(cached[0].metadata.finalizers(), ["example.com/keep"]);
    assert_eq!(again.lister().list(&LabelSelector::everything()).len(), 1, "the same informer");
    assert_eq!(
        gadgets.lister().list(&LabelSelector::everything()).len(),
        1,
        "its own informer, of the same answers here"
    );
    let requests = server.requests();
    let streams = requests.iter().filter(|r| r.path.contains("sendInitialEvents=true")).count();
    assert_eq!(streams, 2, "one watch-list per resource");
    // In protobuf, as the server.client() speaks by default.
    assert!(
        requests.iter().all(|r| r.header("accept") == Some(ACCEPT_PROTOBUF.object)),
        "watches ask for the metadata"
    );
    factory.shutdown();
}

/// Every field of `ObjectMeta` set, as the apiserver writes them in JSON.
fn full_partial() -> PartialObjectMetadata {
    let mut value = partial("full", "12");
    let meta = value["metadata"].as_object_mut().unwrap();
    meta.insert("generateName".into(), json!("full-"));
    meta.insert("selfLink".into(), json!("/api/v1/namespaces/ns/pods/full"));
    meta.insert("generation".into(), json!(3));
    meta.insert("deletionTimestamp".into(), json!("2024-05-02T11:00:00Z"));
    meta.insert("deletionGracePeriodSeconds".into(), json!(30));
    meta.insert("annotations".into(), json!({"note": "a longer annotation value than sixteen bytes"}));
    meta.insert(
        "managedFields".into(),
        json!([{
            "manager": "kube-controller-manager", "operation": "Update", "apiVersion": "v1",
            "time": "2024-05-01T10:00:01Z", "fieldsType": "FieldsV1",
            "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:app": {}}}}, "subresource": "status"
        }]),
    );
    decode_json(&serde_json::to_vec(&value).unwrap()).unwrap()
}

#[test]
fn protobuf_round_trips_every_metadata_field_as_json_reads_it() {
    let full = full_partial();
    let bytes = protobuf::CODEC.encode_to_vec(&full);
    let decoded = protobuf::CODEC.decode(&bytes, DecodeOptions::default()).unwrap();
    // apiVersion and kind travel in the envelope: the metadata-only ones.
    assert_eq!(decoded, full);
    assert_eq!((decoded.api_version.as_str(), decoded.kind.as_str()), (API_VERSION, KIND));
    assert_eq!(decoded.metadata.managed_fields.as_deref().unwrap()[0]["subresource"], "status");
    let skipped = protobuf::CODEC.decode(&bytes, DecodeOptions::WITHOUT_MANAGED_FIELDS).unwrap();
    assert_eq!(skipped.metadata.managed_fields, None);
    assert_eq!(skipped.metadata.labels, full.metadata.labels);
}

#[test]
fn go_written_whole_objects_decode_as_their_metadata() {
    use crate::rest::tests::proto_kind::{CONFIGMAP_LIST, hex};
    let bytes = hex(CONFIGMAP_LIST);
    let envelope = crate::protobuf::Envelope::decode(&bytes).unwrap();
    let list = ObjectList::decode_protobuf(envelope.raw, &protobuf::CODEC, DecodeOptions::default()).unwrap();
    let names: Vec<_> = list.items.iter().map(|o| (o.name(), o.namespace(), o.resource_version())).collect();
    assert_eq!(names, [(Some("a"), Some("ns"), Some("1")), (Some("b"), Some("ns"), Some("2"))]);
    assert_eq!(list.metadata.resource_version.as_deref(), Some("9"));
    // Go writes every string even when empty: read as absent, as the JSON omits them.
    let a = &list.items[0].metadata;
    assert_eq!(
        (a.uid.as_ref(), a.generate_name.as_ref(), a.generation, a.creation_timestamp),
        (None, None, None, None)
    );
    assert_eq!(*a.managed_fields.as_deref().unwrap(), json!([{"manager": "kubectl"}]));
}

#[test]
fn bad_protobuf_metadata_names_the_message_and_field() {
    let mut writer = crate::protobuf::Writer::new();
    // ObjectMeta (field 1) whose labels (field 11) hold a truncated entry.
    writer.key(1, crate::protobuf::WireType::Len);
    writer.bytes(&[0x5a, 0x05, 0x0a, 0x09, b'x']);
    let error = protobuf::CODEC.decode(&writer.into_vec(), DecodeOptions::default()).unwrap_err().to_string();
    assert!(error.contains("PartialObjectMetadata field 1"), "{error}");
    assert!(error.contains("ObjectMeta field 11"), "{error}");
}
