//! What 1.36 and 1.37 added, through the generated types against the real
//! apiserver: a kind 1.35 lacks (`certificates.k8s.io/v1`
//! `ClusterTrustBundle`) and a field it lacks (`Pod.spec.evictionResponders`)
//! are written by the typed client, and what the apiserver then serves for
//! them decodes and encodes again to the same JSON: nothing of them is
//! hidden from the types.

mod support;

use k8s_client::api::certificates::v1::{ClusterTrustBundle, ClusterTrustBundleSpec};
use k8s_client::api::core::v1::{Container, EvictionResponder, Pod, PodSpec};
use k8s_client::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_client_runtime::rest::{CreateOptions, DeleteOptions, ResourceClient};
use k8s_client_runtime::{Object, thin_vec};
use serde_json::Value;

/// The object as the apiserver serves it (JSON), and that JSON decoded into
/// `K` and encoded again.
async fn served_and_typed<K: Object + serde::de::DeserializeOwned + serde::Serialize>(path: &str) -> (Value, Value) {
    let raw = support::client().get(path).bytes().await.expect("get");
    let served: Value = serde_json::from_slice(&raw).expect("JSON");
    let typed: K = serde_json::from_slice(&raw).expect("decodes into the generated type");
    (served, serde_json::to_value(&typed).expect("encodes"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kind_new_in_1_37_round_trips() {
    let bundles = ResourceClient::<ClusterTrustBundle>::all(support::client());
    let name = format!("testenv-ca-{}", std::process::id());
    let bundle = ClusterTrustBundle {
        metadata: ObjectMeta { name: Some(name.as_str().into()), ..Default::default() },
        spec: ClusterTrustBundleSpec { trust_bundle: support::env().ca_pem().into(), signer_name: None },
    };
    let created = bundles.create(&bundle, &CreateOptions::default()).await.expect("create ClusterTrustBundle v1");
    assert_eq!(created.spec.trust_bundle.trim(), support::env().ca_pem().trim());

    let (served, typed) =
        served_and_typed::<ClusterTrustBundle>(&format!("/apis/certificates.k8s.io/v1/clustertrustbundles/{name}"))
            .await;
    assert_eq!(served["spec"]["trustBundle"].as_str().map(str::trim), Some(support::env().ca_pem().trim()));
    assert_eq!(typed, served, "the served ClusterTrustBundle and its round trip through the type differ");
    bundles.delete(&name, &DeleteOptions::default()).await.expect("delete");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_field_new_in_1_37_round_trips() {
    let namespace = support::namespace("new-in-1-37");
    let pods = ResourceClient::<Pod>::namespaced(support::client(), &namespace);
    let pod = Pod {
        metadata: ObjectMeta { name: Some("responders".into()), ..Default::default() },
        spec: Some(PodSpec {
            containers: thin_vec![Container {
                name: "main".into(),
                image: Some("registry.example/app:1".into()),
                ..Default::default()
            }],
            eviction_responders: Some(thin_vec![EvictionResponder {
                name: "example.com/drainer".into(),
                priority: 10000,
            }]),
            ..Default::default()
        }),
        ..Default::default()
    };
    let created = pods.create(&pod, &CreateOptions::default()).await.expect("create Pod");
    let responders = created.spec.as_ref().and_then(|s| s.eviction_responders.as_deref()).unwrap_or_default();
    assert_eq!(
        responders.len(),
        1,
        "the apiserver kept spec.evictionResponders (a 1.37 alpha field; the testenv turns alpha gates on)"
    );

    let (served, typed) = served_and_typed::<Pod>(&format!("/api/v1/namespaces/{namespace}/pods/responders")).await;
    assert_eq!(served["spec"]["evictionResponders"][0]["name"], "example.com/drainer");
    assert_eq!(typed, served, "the served Pod and its round trip through the type differ");
}
