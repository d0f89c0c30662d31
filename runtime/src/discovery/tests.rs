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
    assert_eq!(
        files_under(&cache_dir),
        ["apps/v1/serverresources.json", "servergroups.json", "v1/serverresources.json"]
    );

    let second = DiscoveryClient::new(server.client()).with_disk_cache(cache_dir.clone(), DEFAULT_TTL);
    let d2 = second.discover().await.unwrap();
    assert_eq!((&d2.groups, &d2.resources), (&d1.groups, &d1.resources));
    assert!(d2.failed.is_empty());
    assert_eq!(server.requests().len(), 2, "served from disk");

    let expired = DiscoveryClient::new(server.client()).with_disk_cache(cache_dir.clone(), Duration::ZERO);
    expired.discover().await.unwrap();
    assert_eq!(server.requests().len(), 4);

    std::fs::write(cache_dir.join("servergroups.json"), b"{garbage").unwrap();
    let third = DiscoveryClient::new(server.client()).with_disk_cache(cache_dir.clone(), DEFAULT_TTL);
    third.discover().await.unwrap();
    assert_eq!(server.requests().len(), 6, "corrupt cache is a miss");
    // Invalidated, the files stay for other readers but are not read:
    // discovery asks the server and rewrites them.
    third.invalidate();
    assert!(cache_dir.join("servergroups.json").exists());
    third.discover().await.unwrap();
    assert_eq!(server.requests().len(), 8);
    third.discover().await.unwrap();
    assert_eq!(server.requests().len(), 8, "from memory once rediscovered");
    let fourth = DiscoveryClient::new(server.client()).with_disk_cache(cache_dir.clone(), DEFAULT_TTL);
    fourth.discover().await.unwrap();
    assert_eq!(server.requests().len(), 8, "the rewritten files are read");
}

/// Paths of the files under `dir`, relative, sorted.
fn files_under(dir: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push(path.strip_prefix(dir).unwrap().to_string_lossy().into_owned());
            }
        }
    }
    out.sort();
    out
}

/// The files are what client-go's disk cache writes and reads: an
/// `APIGroupList` with the core group named `""`, one `APIResourceList` per
/// group/version, directories 0750 and files 0660.
#[cfg(unix)]
#[tokio::test]
async fn disk_cache_files_are_kubectls() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(|r, _| Reply::json(200, fresh_aggregated(&r.path))).await;
    let cache_dir = dir.path().join("host_6443");
    DiscoveryClient::new(server.client()).with_disk_cache(cache_dir.clone(), DEFAULT_TTL).discover().await.unwrap();
    let read =
        |p: &str| serde_json::from_slice::<serde_json::Value>(&std::fs::read(cache_dir.join(p)).unwrap()).unwrap();
    assert_eq!(
        read("servergroups.json"),
        json!({"kind":"APIGroupList","apiVersion":"v1","groups":[
            {"name":"","versions":[{"groupVersion":"v1","version":"v1"}],"preferredVersion":{"groupVersion":"v1","version":"v1"}},
            {"name":"apps","versions":[{"groupVersion":"apps/v1","version":"v1"}],"preferredVersion":{"groupVersion":"apps/v1","version":"v1"}}]})
    );
    let apps = read("apps/v1/serverresources.json");
    assert_eq!((apps["kind"].as_str(), apps["groupVersion"].as_str()), (Some("APIResourceList"), Some("apps/v1")));
    assert_eq!(
        apps["resources"][0],
        json!({"name":"deployments","singularName":"deployment","namespaced":true,"kind":"Deployment",
            "verbs":["get","list","watch","create"],"shortNames":["deploy"],"categories":["all"]})
    );
    assert_eq!(apps["resources"][1]["name"], "deployments/scale");
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&cache_dir.join("apps")), 0o750);
    assert_eq!(mode(&cache_dir.join("apps/v1")), 0o750);
    assert_eq!(mode(&cache_dir.join("apps/v1/serverresources.json")), 0o660);
    assert_eq!(mode(&cache_dir.join("servergroups.json")), 0o660);
}

/// A cache as kubectl writes it (legacy field spellings, subresource kinds
/// in other groups) is read; a group/version whose file has expired is
/// asked for alone and written back.
#[tokio::test]
async fn reads_kubectls_files_and_asks_only_for_what_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let write = |p: &str, v: serde_json::Value| {
        let path = dir.path().join(p);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, serde_json::to_vec(&v).unwrap()).unwrap();
    };
    write(
        "servergroups.json",
        json!({"kind":"APIGroupList","apiVersion":"v1","groups":[
        {"name":"","versions":[{"groupVersion":"v1","version":"v1"}],"preferredVersion":{"groupVersion":"v1","version":"v1"}},
        {"name":"apps","versions":[{"groupVersion":"apps/v1","version":"v1"}],"preferredVersion":{"groupVersion":"apps/v1","version":"v1"}}]}),
    );
    write(
        "apps/v1/serverresources.json",
        json!({"kind":"APIResourceList","apiVersion":"v1","groupVersion":"apps/v1","resources":[
        {"name":"deployments","singularName":"deployment","namespaced":true,"kind":"Deployment","verbs":["get"],"shortNames":["deploy"],"storageVersionHash":"8aSe+NMegvE="},
        {"name":"deployments/scale","singularName":"","namespaced":true,"group":"autoscaling","version":"v1","kind":"Scale","verbs":["get"]}]}),
    );
    let server = TestServer::start(|r, _| legacy(&r.path)).await;
    let dc = DiscoveryClient::new(server.client()).with_disk_cache(dir.path().to_owned(), DEFAULT_TTL);
    let d = dc.discover().await.unwrap();
    let paths: Vec<String> = server.requests().into_iter().map(|r| r.path).collect();
    assert_eq!(paths, ["/api/v1"], "only the group/version without a file");
    assert!(d.failed.is_empty());
    let scale = &d.resources["apps/v1"][1];
    assert_eq!((scale.group.as_str(), scale.version.as_str(), scale.kind.as_str()), ("apps", "v1", "Scale"));
    assert_eq!(d.resources["v1"][0].name, "pods");
    assert!(dir.path().join("v1/serverresources.json").exists(), "what was fetched is cached");
}

/// Each file has its own age: only the group/version whose file expired is
/// asked again, and its new file makes it fresh.
#[tokio::test]
async fn an_expired_resource_file_is_asked_for_alone() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(|r, _| legacy(&r.path)).await;
    let client =
        || DiscoveryClient::new(server.client()).with_disk_cache(dir.path().to_owned(), Duration::from_secs(60));
    client().discover().await.unwrap();
    let n = server.requests().len();
    let apps = dir.path().join("apps/v1/serverresources.json");
    let old = std::time::SystemTime::now() - Duration::from_secs(120);
    std::fs::File::options().write(true).open(&apps).unwrap().set_modified(old).unwrap();

    let d = client().discover().await.unwrap();
    assert_eq!(d.resources["apps/v1"][0].name, "deployments");
    let mut paths: Vec<String> = server.requests().into_iter().skip(n).map(|r| r.path).collect();
    paths.sort(); // asked concurrently
    // metrics.k8s.io never answered, so it has no file either.
    assert_eq!(paths, ["/apis/apps/v1", "/apis/metrics.k8s.io/v1beta1"]);
    let age = std::fs::metadata(&apps).unwrap().modified().unwrap().elapsed().unwrap();
    assert!(age < Duration::from_secs(60), "rewritten: {age:?}");
}

#[tokio::test]
async fn cache_dir_is_named_as_kubectl_names_it() {
    let dir = |url: &str| {
        let client = crate::rest::Client::new(crate::config::Config::new(url.parse().unwrap())).unwrap();
        discovery_cache_dir(std::path::Path::new("/c"), &client)
    };
    assert_eq!(dir("https://127.0.0.1:6443"), std::path::Path::new("/c/discovery/127.0.0.1_6443"));
    assert_eq!(dir("http://my-host.example:80"), std::path::Path::new("/c/discovery/my_host.example_80"));
    assert_eq!(dir("https://h:1/prefix/a"), std::path::Path::new("/c/discovery/h_1/prefix/a"));
    assert_eq!(dir("https://h/../../x"), std::path::Path::new("/c/discovery/x"));
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
    assert!(!dir.path().join("metrics.k8s.io").exists(), "a failure is not cached");
    assert!(dir.path().join("apps/v1/serverresources.json").exists(), "what succeeded is cached");

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
