//! Shared set-up of the integration tests: clients for the real apiserver
//! started by `k8s-client-testenv`, one namespace per test.
#![allow(dead_code)]

pub mod proxy;
pub mod testdata;

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use k8s_client::api::core::v1::ConfigMap;
use k8s_client::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_client::clientset::Clientset;
use k8s_client_runtime::Map;
use k8s_client_runtime::cache::SharedIndexInformer;
use k8s_client_runtime::config::{Config, KubeconfigOptions};
use k8s_client_runtime::rest::{Client, ListOptions, ResourceClient};
use k8s_client_testenv::TestEnv;

pub fn env() -> &'static TestEnv {
    TestEnv::shared()
}

/// The configuration of a kubeconfig context of `env` (`None`: admin),
/// with a rate limit high enough for bulk tests.
pub fn config_for(env: &TestEnv, context: Option<&str>) -> Config {
    let options = KubeconfigOptions { context: context.map(str::to_owned), ..Default::default() };
    let mut config = Config::from_kubeconfig_file(env.kubeconfig_path(), &options).expect("testenv kubeconfig");
    config.qps = 1000.0;
    config.burst = 2000;
    config
}

/// A REST client for a kubeconfig context of the testenv (`None`: admin),
/// with a rate limit high enough for bulk tests.
pub fn client_for(context: Option<&str>) -> Client {
    Client::new(config_for(env(), context)).expect("client")
}

pub fn client() -> Client {
    client_for(None)
}

pub fn clientset() -> Clientset {
    Clientset::new(client())
}

/// A fresh namespace for one test.
pub fn namespace(prefix: &str) -> String {
    env().create_namespace(prefix)
}

/// Creates every CustomResourceDefinition in the YAML manifests `files`
/// (other documents are ignored) through the generated clientset, and waits
/// until the apiserver serves each of them. Returns the CRDs' names.
pub async fn install_crds(files: &[std::path::PathBuf]) -> Vec<String> {
    use k8s_client::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    use serde::Deserialize as _;

    let mut crds: Vec<CustomResourceDefinition> = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        for doc in serde_yaml_ng::Deserializer::from_str(&text) {
            let value = serde_json::Value::deserialize(doc).unwrap();
            if value.get("kind").and_then(|k| k.as_str()) != Some("CustomResourceDefinition") {
                continue;
            }
            crds.push(serde_json::from_value(value).unwrap());
        }
    }
    install_crd_objects(&crds).await
}

/// Creates the CRDs (an existing one is left as it is) and waits until the
/// apiserver serves each of them. Returns their names.
pub async fn install_crd_objects(
    objects: &[k8s_client::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition],
) -> Vec<String> {
    use k8s_client_runtime::rest::{CreateOptions, GetOptions};

    let crds = clientset().apiextensions_v1().custom_resource_definitions();
    let mut names = Vec::new();
    for crd in objects {
        let name = crd.metadata.name.clone().unwrap().to_string();
        match crds.create(crd, &CreateOptions::default()).await {
            Ok(_) => {}
            Err(e) if e.is_already_exists() => {}
            Err(e) => panic!("creating {name}: {e}"),
        }
        names.push(name);
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    for name in &names {
        loop {
            let crd = crds.get(name, &GetOptions::default()).await.unwrap();
            let established = crd
                .status
                .iter()
                .flat_map(|s| s.conditions.iter().flatten())
                .any(|c| c.type_ == "Established" && c.status == "True");
            if established {
                break;
            }
            assert!(std::time::Instant::now() < deadline, "{name} not Established within 60 s");
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    }
    names
}

/// The manifests of the custom resources the tests use (`integration/crds`).
pub fn test_crds() -> Vec<std::path::PathBuf> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("crds");
    vec![dir.join("autoscalers.yaml"), dir.join("gadgets.yaml"), dir.join("postgresqls.yaml"), dir.join("widgets.yaml")]
}

/// A ConfigMap named `name` with one label and `data`.
pub fn config_map(name: &str, label: (&str, &str), data: &[(&str, &str)]) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta { name: Some(name.into()), labels: Some(Map::from([label])), ..Default::default() },
        data: Some(data.iter().copied().collect()),
        ..Default::default()
    }
}

/// name → resourceVersion of the server's ConfigMaps.
pub async fn server_state(cms: &ResourceClient<ConfigMap>) -> BTreeMap<String, String> {
    let list = cms.list(&ListOptions::default()).await.unwrap();
    list.items
        .into_iter()
        .map(|c| (c.metadata.name.unwrap().into(), c.metadata.resource_version.unwrap().into()))
        .collect()
}

/// name → resourceVersion of the informer's cache.
pub fn cache_state(informer: &SharedIndexInformer<ConfigMap>) -> BTreeMap<String, String> {
    informer
        .store()
        .list()
        .iter()
        .map(|c| (c.metadata.name.clone().unwrap().into(), c.metadata.resource_version.clone().unwrap().into()))
        .collect()
}

/// Waits, up to 60 s, until the informer's cache holds what the server
/// holds now.
pub async fn cache_converges(informer: &SharedIndexInformer<ConfigMap>, cms: &ResourceClient<ConfigMap>) {
    cache_converges_or(informer, cms, String::new).await;
}

/// [`cache_converges`], with `context()` added to the failure message.
pub async fn cache_converges_or(
    informer: &SharedIndexInformer<ConfigMap>,
    cms: &ResourceClient<ConfigMap>,
    context: impl Fn() -> String,
) {
    let server = server_state(cms).await;
    let start = Instant::now();
    loop {
        let cache = cache_state(informer);
        if cache == server {
            return;
        }
        let differing: BTreeSet<&String> =
            cache.keys().chain(server.keys()).filter(|k| cache.get(*k) != server.get(*k)).collect();
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "cache never matched the server: cache {} objects, server {}; differing: {differing:?}{}",
            cache.len(),
            server.len(),
            context()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
