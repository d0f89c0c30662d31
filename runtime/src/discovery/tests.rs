use serde_json::json;

use super::*;
use crate::rest::tests::server::{Reply, TestServer};

fn aggregated(path: &str) -> serde_json::Value {
    let deployments = json!({"resource":"deployments","responseKind":{"group":"apps","version":"v1","kind":"Deployment"},
        "scope":"Namespaced","singularResource":"deployment","verbs":["get","list","watch","create"],"shortNames":["deploy"],
        "categories":["all"],"subresources":[{"subresource":"scale","responseKind":{"group":"autoscaling","version":"v1","kind":"Scale"},"verbs":["get","update"]}]});
    let pods = json!({"resource":"pods","responseKind":{"group":"","version":"v1","kind":"Pod"},"scope":"Namespaced",
        "singularResource":"pod","verbs":["get","list"],"shortNames":["po"]});
    let nodes = json!({"resource":"nodes","responseKind":{"group":"","version":"v1","kind":"Node"},"scope":"Cluster","singularResource":"node","verbs":["get"]});
    let items = if path == "/api" {
        json!([{"metadata":{},"versions":[{"version":"v1","resources":[pods, nodes]}]}])
    } else {
        json!([{"metadata":{"name":"apps"},"versions":[{"version":"v1","resources":[deployments]},{"version":"v1beta1","resources":[],"freshness":"Stale"}]}])
    };
    json!({"kind":"APIGroupDiscoveryList","apiVersion":"apidiscovery.k8s.io/v2","metadata":{},"items":items})
}

fn legacy(path: &str) -> Reply {
    match path {
        "/api" => Reply::json(200, json!({"kind":"APIVersions","versions":["v1"]})),
        "/apis" => Reply::json(
            200,
            json!({"kind":"APIGroupList","groups":[
            {"name":"apps","versions":[{"groupVersion":"apps/v1","version":"v1"}],"preferredVersion":{"groupVersion":"apps/v1","version":"v1"}},
            {"name":"metrics.k8s.io","versions":[{"groupVersion":"metrics.k8s.io/v1beta1","version":"v1beta1"}]}]}),
        ),
        "/api/v1" => Reply::json(
            200,
            json!({"kind":"APIResourceList","groupVersion":"v1","resources":[
            {"name":"pods","singularName":"pod","namespaced":true,"kind":"Pod","verbs":["get"],"shortNames":["po"]},
            {"name":"pods/log","singularName":"","namespaced":true,"kind":"Pod","verbs":["get"]}]}),
        ),
        "/apis/apps/v1" => Reply::json(
            200,
            json!({"kind":"APIResourceList","groupVersion":"apps/v1","resources":[
            {"name":"deployments","singularName":"deployment","namespaced":true,"kind":"Deployment","verbs":["get"],"shortNames":["deploy"]}]}),
        ),
        _ => Reply::text(503, "service unavailable"),
    }
}

/// A client of a server that answers each path with `reply`, and what its
/// first discovery found.
async fn discovered(reply: fn(&str) -> Reply) -> (TestServer, DiscoveryClient, Arc<Discovery>) {
    let server = TestServer::start(move |r, _| reply(&r.path)).await;
    let dc = DiscoveryClient::new(server.client());
    let d = dc.discover().await.unwrap();
    (server, dc, d)
}

#[tokio::test]
async fn aggregated_discovery_in_two_requests() {
    let (server, dc, d) = discovered(aggregated_or_stale).await;
    assert!(d.aggregated);
    assert_eq!(d.groups.iter().map(|g| g.name.as_str()).collect::<Vec<_>>(), vec!["", "apps"]);
    assert_eq!(d.groups[1].preferred_version.as_deref(), Some("v1"));
    let apps = &d.resources["apps/v1"];
    assert_eq!(apps.iter().map(|r| r.name.as_str()).collect::<Vec<_>>(), vec!["deployments", "deployments/scale"]);
    assert_eq!(apps[1].kind, "Scale");
    assert!(d.failed.contains_key("apps/v1beta1"));
    // As client-go: a stale version is neither listed nor used.
    assert_eq!(d.groups[1].versions, ["v1"]);
    assert!(!d.resources.contains_key("apps/v1beta1"));
    let dep = d.resolve(None, "deploy").unwrap();
    assert_eq!((dep.group.as_str(), dep.plural.as_str(), dep.namespaced), ("apps", "deployments", true));
    assert!(!d.resolve(Some(""), "Node").unwrap().namespaced);
    assert!(d.find(None, "nothing").is_none());
    let r = server.requests();
    assert_eq!(r.len(), 2);
    assert!(
        r[0].header("accept")
            .unwrap()
            .starts_with("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList")
    );
    dc.discover().await.unwrap();
    let paths: Vec<String> = server.requests().into_iter().skip(2).map(|r| r.path).collect();
    assert_eq!(paths, ["/apis/apps/v1beta1"], "served from memory but the stale version");
    dc.invalidate();
    dc.preferred_resources().await.unwrap();
    assert_eq!(server.requests().len(), 5);
}

fn aggregated_or_stale(path: &str) -> Reply {
    match path {
        "/api" | "/apis" => Reply::json(200, aggregated(path)),
        _ => Reply::text(503, "service unavailable"),
    }
}

#[tokio::test]
async fn legacy_fallback_with_partial_failure() {
    let (_server, dc, d) = discovered(legacy).await;
    assert!(!d.aggregated);
    assert_eq!(d.groups.len(), 3);
    assert_eq!(d.resources["v1"].len(), 2);
    assert!(d.resources["v1"][1].is_subresource());
    assert_eq!(d.resources["apps/v1"][0].group, "apps");
    assert!(d.failed.contains_key("metrics.k8s.io/v1beta1"));
    let preferred: Vec<String> = dc.preferred_resources().await.unwrap().into_iter().map(|r| r.name).collect();
    assert_eq!(preferred, vec!["pods", "deployments"]);
    assert_eq!(dc.resources_for("apps/v1").await.unwrap().len(), 1);
}

/// The reason kept for a failed group/version names the root cause, not
/// only the layer that saw it (`decoding ...`).
#[tokio::test]
async fn a_failed_group_version_keeps_its_root_cause() {
    fn undecodable(path: &str) -> Reply {
        match path {
            "/apis/metrics.k8s.io/v1beta1" => Reply::json(200, json!({"kind":"APIResourceList","resources":5})),
            _ => legacy(path),
        }
    }
    let (_server, _dc, d) = discovered(undecodable).await;
    let reason = &d.failed["metrics.k8s.io/v1beta1"];
    assert!(reason.starts_with("decoding "), "{reason}");
    assert!(reason.contains("invalid type: integer `5`"), "{reason}");
}

#[tokio::test]
async fn disk_cache_is_used_until_ttl_or_invalidate() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(|r, _| Reply::json(200, fresh_aggregated(&r.path))).await;
    let cache_dir = dir.path().join("host_6443");
    let first = DiscoveryClient::new(server.client()).with_disk_cache(cache_dir.clone(), DEFAULT_TTL);
    let d1 = first.discover().await.unwrap();
    assert_eq!(server.requests().len(), 2);
    let files: Vec<_> = std::fs::read_dir(&cache_dir).unwrap().collect();
    assert_eq!(files.len(), 1, "no temporary files left behind");

    let second = DiscoveryClient::new(server.client()).with_disk_cache(cache_dir.clone(), DEFAULT_TTL);
    assert_eq!(second.discover().await.unwrap(), d1);
    assert_eq!(server.requests().len(), 2, "served from disk");

    let expired = DiscoveryClient::new(server.client()).with_disk_cache(cache_dir.clone(), Duration::ZERO);
    expired.discover().await.unwrap();
    assert_eq!(server.requests().len(), 4);

    std::fs::write(cache_dir.join(cache::FILE_NAME_FOR_TESTS), b"{garbage").unwrap();
    let third = DiscoveryClient::new(server.client()).with_disk_cache(cache_dir.clone(), DEFAULT_TTL);
    third.discover().await.unwrap();
    assert_eq!(server.requests().len(), 6, "corrupt cache is a miss");
    third.invalidate();
    assert!(std::fs::read_dir(&cache_dir).unwrap().next().is_none());
}

/// [`aggregated`] without the stale version.
fn fresh_aggregated(path: &str) -> serde_json::Value {
    let mut v = aggregated(path);
    if path == "/apis" {
        v["items"][0]["versions"].as_array_mut().unwrap().retain(|v| v.get("freshness").is_none());
    }
    v
}

/// A failed group/version is not cached: neither in memory nor on disk
/// (where it must not be served for the TTL); each discovery asks it, and
/// only it, again until it answers, and then it is cached like the rest.
#[tokio::test]
async fn failed_group_versions_are_asked_again_and_cached_once_they_answer() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let up = Arc::new(AtomicBool::new(false));
    let metrics_up = up.clone();
    let server = TestServer::start(move |r, _| match r.path.as_str() {
        "/apis/metrics.k8s.io/v1beta1" if metrics_up.load(Ordering::SeqCst) => Reply::json(
            200,
            json!({"kind":"APIResourceList","groupVersion":"metrics.k8s.io/v1beta1","resources":[
                {"name":"pods","singularName":"","namespaced":true,"kind":"PodMetrics","verbs":["get"]}]}),
        ),
        p => legacy(p),
    })
    .await;
    let paths_since = |n: usize| server.requests().into_iter().skip(n).map(|r| r.path).collect::<Vec<_>>();
    let dir = tempfile::tempdir().unwrap();
    let client = || DiscoveryClient::new(server.client()).with_disk_cache(dir.path().to_owned(), DEFAULT_TTL);

    let first = client();
    let d = first.discover().await.unwrap();
    assert!(d.failed.contains_key("metrics.k8s.io/v1beta1"));
    let n = server.requests().len();
    assert_eq!(n, 5, "/api, /apis and three group/versions");
    let on_disk: Discovery =
        serde_json::from_slice(&std::fs::read(dir.path().join(cache::FILE_NAME_FOR_TESTS)).unwrap()).unwrap();
    assert!(!on_disk.resources.contains_key("metrics.k8s.io/v1beta1"));
    assert_eq!(on_disk.resources.len(), 2, "what succeeded is cached");

    // From memory and from disk alike, only the failed one is asked again.
    assert!(first.discover().await.unwrap().failed.contains_key("metrics.k8s.io/v1beta1"));
    assert_eq!(paths_since(n), ["/apis/metrics.k8s.io/v1beta1"]);
    let second = client();
    let d = second.discover().await.unwrap();
    assert!(d.failed.contains_key("metrics.k8s.io/v1beta1"));
    assert_eq!(paths_since(n + 1), ["/apis/metrics.k8s.io/v1beta1"]);

    // It answers: resolved, written to disk, then served from there.
    up.store(true, Ordering::SeqCst);
    let d = client().discover().await.unwrap();
    assert!(d.failed.is_empty());
    assert_eq!(d.resources["metrics.k8s.io/v1beta1"][0].kind, "PodMetrics");
    assert_eq!(server.requests().len(), n + 3);
    let d = client().discover().await.unwrap();
    assert_eq!(d.resources["metrics.k8s.io/v1beta1"][0].group, "metrics.k8s.io");
    assert_eq!(server.requests().len(), n + 3, "served from disk");
    // Memory, too, stops asking.
    second.discover().await.unwrap();
    assert_eq!(server.requests().len(), n + 4, "one last retry from the old memory entry");
    second.discover().await.unwrap();
    assert_eq!(server.requests().len(), n + 4);
}

/// A stale aggregated version that recovers gets its version listed again.
#[tokio::test]
async fn stale_aggregated_version_is_asked_again() {
    let server = TestServer::start(|r, _| match r.path.as_str() {
        "/apis/apps/v1beta1" => Reply::json(
            200,
            json!({"kind":"APIResourceList","groupVersion":"apps/v1beta1","resources":[
            {"name":"deployments","singularName":"deployment","namespaced":true,"kind":"Deployment","verbs":["get"]}]}),
        ),
        p => Reply::json(200, aggregated(p)),
    })
    .await;
    let dc = DiscoveryClient::new(server.client());
    assert!(dc.discover().await.unwrap().failed.contains_key("apps/v1beta1"));
    let d = dc.discover().await.unwrap();
    assert!(d.failed.is_empty());
    assert_eq!(d.groups[1].versions, ["v1", "v1beta1"]);
    assert_eq!(d.groups[1].preferred_version.as_deref(), Some("v1"));
    assert_eq!(d.resources["apps/v1beta1"][0].version, "v1beta1");
}

#[tokio::test]
async fn server_version() {
    let server =
        TestServer::start(|_, _| Reply::json(200, json!({"major":"1","minor":"34","gitVersion":"v1.34.1"}))).await;
    let v = DiscoveryClient::new(server.client()).server_version().await.unwrap();
    assert_eq!((v.major.as_str(), v.minor.as_str(), v.git_version.as_str()), ("1", "34", "v1.34.1"));
}
