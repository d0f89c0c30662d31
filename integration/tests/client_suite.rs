//! One CRUD, watch and apply suite, run through the typed client
//! (`ResourceClient<ConfigMap>`) and the DynamicClient
//! (`ResourceClient<DynamicObject>`) against the real apiserver, and on the
//! fake cluster: the verbs exist once, so both must behave the same.

mod support;

use std::collections::BTreeMap;
use std::time::Duration;

use futures_util::StreamExt;
use k8s_client::api::core::v1::ConfigMap;
use k8s_client_runtime::Map;
use k8s_client_runtime::dynamic::{DynamicClient, DynamicObject};
use k8s_client_runtime::object::{DynamicResource, Metadata as _};
use k8s_client_runtime::rest::{
    ApplyOptions, CreateOptions, DeleteOptions, GetOptions, ListOptions, Patch, ResourceClient, UpdateOptions,
    WatchEvent, verbs,
};
use serde_json::json;

/// How the suite builds and reads a ConfigMap in one representation.
trait ConfigMapLike: verbs::All + std::fmt::Debug {
    fn build(name: &str, data: &[(&str, &str)]) -> Self;
    fn data(&self) -> BTreeMap<String, String>;
    fn set_data(&mut self, key: &str, value: &str);
}

impl ConfigMapLike for ConfigMap {
    fn build(name: &str, data: &[(&str, &str)]) -> Self {
        support::config_map(name, ("suite", "yes"), data)
    }
    fn data(&self) -> BTreeMap<String, String> {
        self.data.iter().flatten().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }
    fn set_data(&mut self, key: &str, value: &str) {
        self.data.get_or_insert_default().insert(key, value.into());
    }
}

impl ConfigMapLike for DynamicObject {
    fn build(name: &str, data: &[(&str, &str)]) -> Self {
        let data: serde_json::Map<String, serde_json::Value> =
            data.iter().map(|(k, v)| ((*k).to_owned(), json!(v))).collect();
        let mut obj = DynamicObject::new(&DynamicResource::of::<ConfigMap>(), name).with_data(json!({ "data": data }));
        obj.metadata.labels = Some(Map::from([("suite", "yes")]));
        obj
    }
    fn data(&self) -> BTreeMap<String, String> {
        serde_json::from_value(self.data.get("data").cloned().unwrap_or(json!({}))).unwrap()
    }
    fn set_data(&mut self, key: &str, value: &str) {
        let data = self.data.entry("data").or_insert_with(|| json!({}));
        data[key] = json!(value);
    }
}

async fn suite<K: ConfigMapLike>(client: ResourceClient<K>) {
    let opts = ListOptions::default().labels("suite=yes");
    let start_rv = client.list(&opts).await.unwrap().metadata.resource_version.unwrap();
    let mut watch = client.watch(&opts.clone().resource_version(start_rv).timeout(60)).await.unwrap();

    // create, get, get_opt
    let created = client.create(&K::build("one", &[("k", "v1")]), &CreateOptions::default()).await.unwrap();
    assert!(created.metadata().resource_version().is_some());
    let mut got = client.get("one", &GetOptions::default()).await.unwrap();
    assert_eq!(got.data()["k"], "v1");
    assert!(client.get_opt("absent", &GetOptions::default()).await.unwrap().is_none());

    // update, patch, apply
    got.set_data("k", "v2");
    let updated = client.update(&got, &UpdateOptions::default()).await.unwrap();
    assert_eq!(updated.data()["k"], "v2");
    let patch = Patch::Merge(json!({"data": {"patched": "yes"}}));
    let patched = client.patch("one", &patch, &Default::default()).await.unwrap();
    assert_eq!(patched.data()["patched"], "yes");
    let config = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "two", "labels": {"suite": "yes"}},
        "data": {"applied": "1"}});
    let applied = client.apply("two", &config, &ApplyOptions::new("suite")).await.unwrap();
    assert_eq!(applied.data()["applied"], "1");

    // list with a selector, list_all in pages
    let listed = client.list(&opts).await.unwrap();
    let mut names: Vec<_> = listed.items.iter().map(|o| o.metadata().name().unwrap().to_owned()).collect();
    names.sort();
    assert_eq!(names, ["one", "two"]);
    assert_eq!(client.list_all(&opts.clone().limit(1)).await.unwrap().items.len(), 2);

    // delete one, then the rest as a collection
    client.delete("one", &DeleteOptions::default()).await.unwrap();
    assert!(client.get("one", &GetOptions::default()).await.unwrap_err().is_not_found());
    client.delete_collection(&DeleteOptions::default(), &opts).await.unwrap();
    assert!(client.list(&opts).await.unwrap().items.is_empty());

    // The watch saw every change, in order.
    let mut seen = Vec::new();
    while seen.len() < 6 {
        let event = tokio::time::timeout(Duration::from_secs(30), watch.next()).await.expect("watch event in time");
        match event.expect("stream ended").expect("watch error") {
            WatchEvent::Added(o) => seen.push(("ADDED", o.metadata().name().unwrap().to_owned())),
            WatchEvent::Modified(o) => seen.push(("MODIFIED", o.metadata().name().unwrap().to_owned())),
            WatchEvent::Deleted(o) => seen.push(("DELETED", o.metadata().name().unwrap().to_owned())),
            WatchEvent::Bookmark(_) => {}
        }
    }
    let seen: Vec<(&str, &str)> = seen.iter().map(|(t, n)| (*t, n.as_str())).collect();
    assert_eq!(
        seen,
        [
            ("ADDED", "one"),
            ("MODIFIED", "one"),
            ("MODIFIED", "one"),
            ("ADDED", "two"),
            ("DELETED", "one"),
            ("DELETED", "two")
        ]
    );
}

#[tokio::test]
async fn typed_client_passes_the_suite() {
    let ns = support::namespace("suite-typed");
    suite(support::clientset().core_v1().config_maps(&ns)).await;
}

/// The typed client speaks protobuf to the apiserver by default (a
/// built-in kind); the same suite passes over JSON, chosen in the config.
#[tokio::test]
async fn typed_client_passes_the_suite_over_json_too() {
    use k8s_client_runtime::config::ContentType;
    let protobuf = support::clientset().core_v1().config_maps("default");
    assert_eq!(protobuf.content_type(), ContentType::Protobuf);
    let mut config = support::config_for(support::env(), None);
    config.content_type = ContentType::Json;
    let json = k8s_client::clientset::Clientset::new(k8s_client_runtime::Client::new(config).unwrap());
    let ns = support::namespace("suite-json");
    let client = json.core_v1().config_maps(&ns);
    assert_eq!(client.content_type(), ContentType::Json);
    suite(client).await;
}

#[tokio::test]
async fn dynamic_client_passes_the_suite() {
    let ns = support::namespace("suite-dynamic");
    let client = DynamicClient::namespaced_with(support::client(), &ns, &DynamicResource::of::<ConfigMap>());
    suite(client).await;
}

/// The same suite, typed and dynamic, on the in-memory fake cluster.
#[tokio::test]
async fn both_clients_pass_the_suite_on_the_fake() {
    let fake = k8s_client_runtime::fake::FakeCluster::new();
    suite(k8s_client::clientset::Clientset::new(fake.client()).core_v1().config_maps("typed")).await;
    suite(DynamicClient::namespaced_with(fake.client(), "dynamic", &DynamicResource::of::<ConfigMap>())).await;
}

/// Dynamic list items arrive without apiVersion/kind; the client fills them in.
#[tokio::test]
async fn dynamic_list_items_carry_their_type() {
    let ns = support::namespace("suite-type");
    let client = DynamicClient::namespaced_with(support::client(), &ns, &DynamicResource::of::<ConfigMap>());
    client.create(&DynamicObject::build("t", &[("a", "b")]), &CreateOptions::default()).await.unwrap();
    let list = client.list(&ListOptions::default()).await.unwrap();
    assert_eq!((list.items[0].api_version.as_str(), list.items[0].kind.as_str()), ("v1", "ConfigMap"));
}

/// What the typed client asks for, the apiserver answers: a `k8s\0`
/// envelope of protobuf for a ConfigMap, list and object, which the
/// generated codec decodes into what the JSON answer decodes into.
#[tokio::test]
async fn the_apiserver_answers_protobuf_that_decodes_as_its_json_does() {
    use k8s_client::api::core::v1::ConfigMapList;
    use k8s_client_runtime::object::Resource;
    use k8s_client_runtime::protobuf::{DecodeOptions, DecodeProto, Envelope};

    let ns = support::namespace("suite-protobuf");
    let configmaps = support::clientset().core_v1().config_maps(&ns);
    configmaps.create(&ConfigMap::build("raw", &[("k", "v")]), &CreateOptions::default()).await.unwrap();
    let client = support::client();
    let get = |accept: &'static str| {
        let (client, ns) = (client.clone(), ns.clone());
        async move {
            let response =
                client.get("/api/v1").namespace(&ns).resource("configmaps").accept(accept).send().await.unwrap();
            let content_type = response.headers()["content-type"].to_str().unwrap().to_owned();
            let body = http_body_util::BodyExt::collect(response.into_body()).await.unwrap().to_bytes();
            (content_type, body)
        }
    };
    let (content_type, body) = get("application/vnd.kubernetes.protobuf, application/json").await;
    assert_eq!(content_type, "application/vnd.kubernetes.protobuf");
    let envelope = Envelope::decode(&body).unwrap();
    assert_eq!((envelope.api_version, envelope.kind), ("v1", "ConfigMapList"));
    let from_protobuf = ConfigMapList::decode(envelope.raw, DecodeOptions::default()).unwrap();
    let (content_type, body) = get("application/json").await;
    assert_eq!(content_type, "application/json");
    let from_json: ConfigMapList = k8s_client_runtime::codec::decode_json(&body).unwrap();
    assert_eq!(from_protobuf.items.len(), 1);
    assert_eq!(from_protobuf.items[0].data(), from_json.items[0].data());
    assert_eq!(from_protobuf.items[0].metadata, from_json.items[0].metadata);
    assert!(ConfigMap::PROTOBUF.is_some(), "a built-in kind speaks protobuf");
}
