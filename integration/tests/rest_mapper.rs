//! The REST mapper and the discovery disk cache on the real apiserver: a
//! CRD found after a miss, built-in kinds, short names and categories; and
//! the disk cache shared with kubectl of the same release, both ways.

mod support;

use std::collections::BTreeSet;
use std::process::Command;
use std::time::Duration;

use k8s_client_runtime::discovery::{DEFAULT_TTL, DiscoveryClient, RestMapper, discovery_cache_dir};
use k8s_client_runtime::dynamic::{DynamicClient, DynamicInformerFactory, DynamicObject};
use k8s_client_runtime::object::Scope;
use k8s_client_runtime::rest::{Client, CreateOptions};
use serde_json::json;

/// Installs a cluster-scoped CRD `<plural>.<group>` of kind `kind` and
/// waits until it is Established.
async fn install_crd(group: &str, kind: &str, plural: &str, short_name: &str) {
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.{group}")},
        "spec": {"group": group, "scope": "Cluster",
            "names": {"kind": kind, "plural": plural, "shortNames": [short_name], "categories": ["all"]},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}
    });
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("crd.yaml");
    std::fs::write(&file, serde_json::to_vec(&crd).unwrap()).unwrap();
    support::install_crds(&[file]).await;
}

/// A group no other test uses: named after a fresh namespace.
fn fresh_group(prefix: &str) -> (String, String) {
    let suffix = support::namespace(prefix).replace('-', "");
    (format!("{suffix}.example.com"), suffix)
}

/// `plural.version.group` of a mapping.
fn gvr(m: &k8s_client_runtime::discovery::RestMapping) -> String {
    format!("{}.{}.{}", m.resource.plural, m.resource.version, m.resource.group)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mapper_finds_a_crd_installed_after_a_miss() {
    let (group, suffix) = fresh_group("mapper");
    // Zero: the second lookup comes sooner than the default interval could
    // allow; the interval itself is covered by the unit tests.
    let mapper = RestMapper::new(DiscoveryClient::new(support::client())).with_refresh_interval(Duration::ZERO);
    let kind = format!("Sprocket{suffix}");
    let missed = mapper.mapping(&group, &kind, None).await.unwrap_err();
    assert!(missed.is_no_match(), "{missed}");
    assert!(missed.to_string().contains(&kind), "{missed}");

    install_crd(&group, &kind, "sprockets", &format!("spr{suffix}")).await;
    let m = mapper.mapping(&group, &kind, None).await.expect("found after discovering again");
    assert_eq!(gvr(&m), format!("sprockets.v1.{group}"));
    assert_eq!((m.resource.kind.as_str(), m.scope), (kind.as_str(), Scope::Cluster));
    // Now in the cache: the short name and the category find it too.
    assert_eq!(gvr(&mapper.resource(&format!("spr{suffix}")).await.unwrap()), format!("sprockets.v1.{group}"));
    let all: Vec<String> = mapper.expand_category("all").await.unwrap().iter().map(gvr).collect();
    assert!(all.contains(&format!("sprockets.v1.{group}")), "{all:?}");

    // The dynamic client and informers built from the kind alone.
    let api_version = format!("{group}/v1");
    let sprockets = DynamicClient::for_kind(support::client(), &mapper, &api_version, &kind, None).await.unwrap();
    let object = DynamicObject::new(&m.resource, "first").with_data(json!({"spec": {"teeth": 12}}));
    sprockets.create(&object, &CreateOptions::default()).await.expect("created through the mapped resource");
    let informers = DynamicInformerFactory::new(support::client(), Duration::ZERO);
    let informer = informers.for_kind(&mapper, &api_version, &kind).await.unwrap();
    informers.start();
    informers.wait_for_cache_sync_within(Duration::from_secs(30)).await.expect("synced");
    let cached = informer.lister().get("first").expect("listed by the informer");
    assert_eq!(cached.data["spec"]["teeth"], 12);
    informers.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mapper_maps_built_in_kinds_short_names_and_all() {
    let mapper = RestMapper::new(DiscoveryClient::new(support::client()));
    let m = mapper.mapping("apps", "Deployment", None).await.unwrap();
    assert_eq!((gvr(&m), m.scope), ("deployments.v1.apps".to_owned(), Scope::Namespaced));
    let m = mapper.mapping("apps", "Deployment", Some("v1")).await.unwrap();
    assert_eq!(gvr(&m), "deployments.v1.apps");
    assert!(mapper.mapping("apps", "Deployment", Some("v1beta1")).await.unwrap_err().is_no_match());
    let m = mapper.mapping("", "Namespace", None).await.unwrap();
    assert_eq!((gvr(&m), m.scope), ("namespaces.v1.".to_owned(), Scope::Cluster));
    for (asked, expected) in [
        ("deploy", "deployments.v1.apps"),
        ("po", "pods.v1."),
        ("pod", "pods.v1."),
        ("svc", "services.v1."),
        ("ev", "events.v1."),
        ("events.events.k8s.io", "events.v1.events.k8s.io"),
        ("hpa", "horizontalpodautoscalers.v2.autoscaling"),
        ("horizontalpodautoscalers.v1.autoscaling", "horizontalpodautoscalers.v1.autoscaling"),
        ("crd", "customresourcedefinitions.v1.apiextensions.k8s.io"),
        ("sc", "storageclasses.v1.storage.k8s.io"),
        ("storageclasses.storage", "storageclasses.v1.storage.k8s.io"),
    ] {
        let m = mapper.resource(asked).await.unwrap_or_else(|e| panic!("{asked}: {e}"));
        assert_eq!(gvr(&m), expected, "{asked}");
    }
    // What `kubectl get all` lists (its built-in members).
    let all: BTreeSet<String> = mapper.expand_category("all").await.unwrap().iter().map(gvr).collect();
    for member in [
        "pods.v1.",
        "replicationcontrollers.v1.",
        "services.v1.",
        "daemonsets.v1.apps",
        "deployments.v1.apps",
        "replicasets.v1.apps",
        "statefulsets.v1.apps",
        "horizontalpodautoscalers.v2.autoscaling",
        "cronjobs.v1.batch",
        "jobs.v1.batch",
    ] {
        assert!(all.contains(member), "{member} not in {all:?}");
    }
    assert!(!all.contains("configmaps.v1."), "{all:?}");
}

/// Runs kubectl against the testenv; its standard output.
fn kubectl(args: &[&str]) -> String {
    let env = support::env();
    let out = Command::new(env.kubectl())
        .args(args)
        .arg("--kubeconfig")
        .arg(env.kubeconfig_path())
        .output()
        .expect("running kubectl");
    assert!(out.status.success(), "kubectl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// `kubectl api-resources -o name` lines.
fn names(output: &str) -> BTreeSet<String> {
    output.lines().map(str::to_owned).collect()
}

/// The names `kubectl api-resources -o name` gives our preferred
/// resources: `plural`, or `plural.group`.
async fn our_names(dc: &DiscoveryClient) -> BTreeSet<String> {
    let resources = dc.preferred_resources().await.expect("discovery");
    resources
        .iter()
        .map(|r| if r.group.is_empty() { r.name.clone() } else { format!("{}.{}", r.name, r.group) })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_reads_the_cache_we_write() {
    let cache = tempfile::tempdir().unwrap();
    let cache_dir = cache.path().to_str().unwrap();
    let client = support::client();
    let ours =
        DiscoveryClient::new(client.clone()).with_disk_cache(discovery_cache_dir(cache.path(), &client), DEFAULT_TTL);
    let written = our_names(&ours).await;
    assert!(written.contains("deployments.apps") && written.contains("pods"), "{written:?}");
    assert!(cache.path().join("discovery").read_dir().unwrap().count() == 1, "one server directory");

    // Installed after our cache was written: kubectl's --cached listing
    // cannot know it unless it asks the server.
    let (group, suffix) = fresh_group("kubectlreads");
    install_crd(&group, &format!("Cog{suffix}"), "cogs", &format!("cog{suffix}")).await;
    let cog = format!("cogs.{group}");

    let cached = names(&kubectl(&["api-resources", "--cached", "--cache-dir", cache_dir, "-o", "name"]));
    assert_eq!(cached, written, "kubectl lists exactly what our cache holds");
    assert!(!cached.contains(&cog));
    let live = names(&kubectl(&["api-resources", "--cache-dir", cache_dir, "-o", "name"]));
    assert!(live.contains(&cog), "uncached, kubectl asks the server: {live:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn we_read_the_cache_kubectl_writes_without_a_server() {
    let cache = tempfile::tempdir().unwrap();
    let cache_dir = cache.path().to_str().unwrap();
    let listed = names(&kubectl(&["api-resources", "--cache-dir", cache_dir, "-o", "name"]));
    // The directory kubectl wrote is where we look for this server...
    let host_dir = discovery_cache_dir(cache.path(), &support::client());
    let groups = std::fs::read(host_dir.join("servergroups.json"))
        .unwrap_or_else(|e| panic!("{} has no kubectl files: {e}", host_dir.display()));
    let groups: serde_json::Value = serde_json::from_slice(&groups).unwrap();
    let versions: BTreeSet<String> = groups["groups"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| g["versions"].as_array().unwrap().iter().map(|v| v["groupVersion"].as_str().unwrap().to_owned()))
        .collect();
    assert!(versions.contains("v1") && versions.contains("apps/v1"), "{versions:?}");
    // ...read through a client of a port nothing listens on.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("https://{}", closed.local_addr().unwrap());
    drop(closed);
    let offline = Client::new(k8s_client_runtime::config::Config::new(url.parse().unwrap())).unwrap();
    let ours = DiscoveryClient::new(offline).with_disk_cache(host_dir, DEFAULT_TTL);
    let d = ours.discover().await.expect("served from kubectl's cache alone");
    assert!(d.failed.is_empty(), "{:?}", d.failed);
    assert_eq!(our_names(&ours).await, listed);
    let our_versions: BTreeSet<String> =
        d.groups.iter().flat_map(|g| g.versions.iter().map(|v| g.group_version(v))).collect();
    assert_eq!(our_versions, versions);
    let deployments = &d.resources["apps/v1"].iter().find(|r| r.name == "deployments").unwrap();
    assert_eq!(
        (deployments.kind.as_str(), deployments.short_names.as_slice()),
        ("Deployment", &["deploy".to_owned()][..])
    );
    assert!(deployments.categories.contains(&"all".to_owned()));
}
