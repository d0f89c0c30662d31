//! A list of 10,000 custom resources from the real apiserver with and
//! without gzip, in the same run: bytes on the wire and time to read and
//! decode (as `DynamicObject`s), median of alternating runs. Custom
//! resources have no protobuf, so JSON is what they cost uncompressed.
//!
//! Run: `cargo bench -p k8s-client-bench --bench compressed_list`.

use std::time::{Duration, Instant};

use futures_util::StreamExt;
use http_body_util::BodyExt as _;
use k8s_client_runtime::config::{Config, KubeconfigOptions};
use k8s_client_runtime::dynamic::DynamicObject;
use k8s_client_runtime::rest::{Client, CreateOptions, ResourceClient};
use k8s_client_runtime::{DynamicResource, ObjectList};
use k8s_client_testenv::TestEnv;
use serde_json::json;

const OBJECTS: usize = 10_000;
const RUNS: usize = 5;

fn client(env: &TestEnv, compression: bool) -> Client {
    let mut config = Config::from_kubeconfig_file(env.kubeconfig_path(), &KubeconfigOptions::default()).unwrap();
    config.qps = 2000.0;
    config.burst = 4000;
    config.disable_compression = !compression;
    Client::new(config).unwrap()
}

fn resource(group: &str, version: &str, kind: &str, plural: &str, namespaced: bool) -> DynamicResource {
    DynamicResource {
        group: group.into(),
        version: version.into(),
        kind: kind.into(),
        plural: plural.into(),
        namespaced,
    }
}

/// The CRD of the listed objects: a spec of a few scalars, a list and a map,
/// about 600 bytes of JSON an object.
async fn install_crd(client: &Client) -> DynamicResource {
    let crds = resource("apiextensions.k8s.io", "v1", "CustomResourceDefinition", "customresourcedefinitions", false);
    let crd: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "gadgets.bench.k8s-client.dev"},
        "spec": {
            "group": "bench.k8s-client.dev",
            "names": {"kind": "Gadget", "plural": "gadgets", "singular": "gadget", "listKind": "GadgetList"},
            "scope": "Namespaced",
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
                }}}
            }]
        }
    }))
    .unwrap();
    let crd_client = ResourceClient::<DynamicObject>::all_with(client.clone(), &crds);
    if let Err(e) = crd_client.create(&crd, &CreateOptions::default()).await {
        assert_eq!(e.code(), Some(409), "creating the CRD: {e}");
    }
    let gadgets = resource("bench.k8s-client.dev", "v1", "Gadget", "gadgets", true);
    let list = ResourceClient::<DynamicObject>::all_with(client.clone(), &gadgets);
    let deadline = Instant::now() + Duration::from_secs(60);
    while list.list(&Default::default()).await.is_err() {
        assert!(Instant::now() < deadline, "the CRD was never served");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    gadgets
}

fn gadget(gadgets: &DynamicResource, i: usize) -> DynamicObject {
    let mut object = DynamicObject::new(gadgets, &format!("gadget-{i:05}"));
    object.data.insert(
        "spec".into(),
        json!({
            "owner": format!("team-{}", i % 20),
            "replicas": i % 7,
            "image": format!("registry.example.com/gadgets/gadget:{}.{}.0", i % 3, i % 11),
            "ports": [{"name": "http", "port": 8080}, {"name": "metrics", "port": 9090}],
            "labels": {"tier": "backend", "zone": format!("zone-{}", i % 3), "release": "stable"},
            "description": format!("gadget number {i}, part of the benchmark's list of custom resources"),
        }),
    );
    object
}

/// Bytes on the wire, and seconds to read and decode the whole list.
async fn list_once(client: &Client, path: &str) -> (u64, f64, usize) {
    let start = Instant::now();
    let response = client.get(path).send().await.expect("list");
    let mut body = response.into_body();
    let mut bytes = Vec::new();
    while let Some(frame) = body.frame().await {
        if let Ok(data) = frame.expect("body").into_data() {
            bytes.extend_from_slice(&data);
        }
    }
    let list: ObjectList<DynamicObject> = serde_json::from_slice(&bytes).expect("a list");
    (body.wire_bytes(), start.elapsed().as_secs_f64(), list.items.len())
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

#[tokio::main]
async fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        println!("compressed_list bench: pass --bench (cargo bench) to measure");
        return;
    }
    let env = TestEnv::shared();
    let (gzip, plain) = (client(env, true), client(env, false));
    let gadgets = install_crd(&gzip).await;
    let ns = env.create_namespace("bench-gzip");
    let namespaced = ResourceClient::<DynamicObject>::namespaced_with(gzip.clone(), &ns, &gadgets);
    let t = Instant::now();
    let created = futures_util::stream::iter((0..OBJECTS).map(|i| {
        let (namespaced, object) = (&namespaced, gadget(&gadgets, i));
        async move { namespaced.create(&object, &CreateOptions::default()).await.is_ok() }
    }))
    .buffer_unordered(64)
    .filter(|ok| std::future::ready(*ok))
    .count()
    .await;
    assert_eq!(created, OBJECTS, "not every object was created");
    println!("created {OBJECTS} Gadgets in {:.1} s", t.elapsed().as_secs_f64());

    let path = format!("/apis/bench.k8s-client.dev/v1/namespaces/{ns}/gadgets");
    // One of each first, unmeasured: the apiserver's watch cache and both
    // clients' connections warm.
    list_once(&gzip, &path).await;
    list_once(&plain, &path).await;
    let (mut gzip_times, mut plain_times) = (Vec::new(), Vec::new());
    let (mut gzip_wire, mut plain_wire) = (0, 0);
    for _ in 0..RUNS {
        let (wire, secs, items) = list_once(&gzip, &path).await;
        assert_eq!(items, OBJECTS);
        gzip_wire = wire;
        gzip_times.push(secs);
        let (wire, secs, items) = list_once(&plain, &path).await;
        assert_eq!(items, OBJECTS);
        plain_wire = wire;
        plain_times.push(secs);
    }
    let (gzip_s, plain_s) = (median(gzip_times), median(plain_times));
    println!(
        "list of {OBJECTS} custom resources, gzip: {gzip_wire} bytes on the wire, {:.0} ms (median of {RUNS})",
        gzip_s * 1e3
    );
    println!(
        "list of {OBJECTS} custom resources, uncompressed: {plain_wire} bytes on the wire, {:.0} ms (median of {RUNS})",
        plain_s * 1e3
    );
    println!("gzip/uncompressed: bytes {:.3}x, time {:.2}x", gzip_wire as f64 / plain_wire as f64, gzip_s / plain_s);
}
