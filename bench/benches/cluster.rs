//! Figures against the real apiserver of the testenv (started here unless
//! `K8S_TESTENV_KUBECONFIG` names a running one):
//! - listing 10,000 ConfigMaps through the ClientSet, 500 per page: wall
//!   time and peak resident memory of this process;
//! - a pod informer's initial sync of 10,000 pods: time to synced and
//!   resident-memory growth.
//!
//! Run: `cargo bench -p k8s-client-bench --bench cluster`.

use k8s_client_runtime::{Map, thin_vec};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use k8s_client::api::core::v1::{ConfigMap, Container, Pod, PodSpec};
use k8s_client::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_client::clientset::Clientset;
use k8s_client::informers::SharedInformerFactory;
use k8s_client::prelude::*;
use k8s_client_bench::rss_kib;
use k8s_client_runtime::config::{Config, KubeconfigOptions};
use k8s_client_runtime::rest::{Client, CreateOptions, ListOptions, ResourceClient, verbs};
use k8s_client_testenv::TestEnv;

const OBJECTS: usize = 10_000;

fn client(env: &TestEnv) -> Client {
    let mut config = Config::from_kubeconfig_file(env.kubeconfig_path(), &KubeconfigOptions::default()).unwrap();
    config.qps = 2000.0;
    config.burst = 4000;
    Client::new(config).unwrap()
}

/// Creates `OBJECTS` objects in `client`'s namespace, `make(i)` the i-th,
/// 64 at a time, and says how long that took.
async fn create_all<K: verbs::Create>(client: &ResourceClient<K>, what: &str, make: impl Fn(usize) -> K) {
    let t = Instant::now();
    let ok = futures_util::stream::iter((0..OBJECTS).map(|i| {
        let object = make(i);
        async move { client.create(&object, &CreateOptions::default()).await.is_ok() }
    }))
    .buffer_unordered(64)
    .filter(|ok| std::future::ready(*ok))
    .count()
    .await;
    assert_eq!(ok, OBJECTS, "not every object was created");
    println!("created {OBJECTS} {what} in {:.1} s", t.elapsed().as_secs_f64());
}

#[tokio::main]
async fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        println!("cluster bench: pass --bench (cargo bench) to measure");
        return;
    }
    let env = TestEnv::shared();
    let clientset = Clientset::new(client(env));

    // 10,000 ConfigMaps with ~100 bytes of data each.
    let ns = env.create_namespace("bench-cm");
    let cms = clientset.core_v1().config_maps(&ns);
    create_all(&cms, "ConfigMaps", |i| ConfigMap {
        metadata: ObjectMeta { name: Some(format!("cm-{i:05}").into()), ..Default::default() },
        data: Some(Map::from([("payload", "x".repeat(100))])),
        ..Default::default()
    })
    .await;

    let (rss_before, _) = rss_kib();
    let t = Instant::now();
    let mut opts = ListOptions::default().limit(500);
    let mut items = 0;
    loop {
        let page = cms.list(&opts).await.unwrap();
        items += page.items.len();
        match page.metadata.continue_.filter(|c| !c.is_empty()) {
            Some(token) => opts = ListOptions::default().limit(500).continue_token(token),
            None => break,
        }
    }
    let elapsed = t.elapsed();
    let (_, peak) = rss_kib();
    assert_eq!(items, OBJECTS);
    println!(
        "list {items} ConfigMaps via ClientSet, 500/page: {:.0} ms; process RSS before {} MiB, peak {} MiB",
        elapsed.as_secs_f64() * 1e3,
        rss_before / 1024,
        peak / 1024
    );

    // 10,000 pods (no kubelet: they stay Pending) for the informer sync.
    let ns = env.create_namespace("bench-pods");
    let pods = clientset.core_v1().pods(&ns);
    create_all(&pods, "pods", |i| Pod {
        metadata: ObjectMeta {
            name: Some(format!("pod-{i:05}").into()),
            labels: Some(Map::from([("app", format!("app-{}", i % 50))])),
            ..Default::default()
        },
        spec: Some(PodSpec {
            containers: thin_vec![Container {
                name: "main".into(),
                image: Some("registry.invalid/app:1.0".into()),
                ..Default::default()
            }],
            ..Default::default()
        }),
        ..Default::default()
    })
    .await;

    let (rss_before, _) = rss_kib();
    let factory = SharedInformerFactory::builder(client(env)).namespace(ns.clone()).build();
    let informer = factory.core_v1().pods().informer();
    let t = Instant::now();
    factory.start();
    let synced = tokio::time::timeout(Duration::from_secs(300), factory.wait_for_cache_sync()).await.unwrap();
    let elapsed = t.elapsed();
    assert!(synced.values().all(|s| *s));
    assert_eq!(informer.store().list().len(), OBJECTS);
    let (rss_after, _) = rss_kib();
    println!(
        "informer initial sync of {OBJECTS} pods: {:.0} ms to synced; RSS growth {} MiB ({} bytes/pod)",
        elapsed.as_secs_f64() * 1e3,
        rss_after.saturating_sub(rss_before) / 1024,
        rss_after.saturating_sub(rss_before) * 1024 / OBJECTS as u64
    );
    factory.shutdown();
}
