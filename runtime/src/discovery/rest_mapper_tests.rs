//! Cases of client-go's `restmapper` tests and apimachinery's
//! `meta/restmapper_test.go` / `priority_test.go`, as discovery documents.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::{Value, json};

use super::*;
use crate::discovery::DiscoveryClient;
use crate::rest::tests::server::{Reply, TestServer};

/// One aggregated-discovery resource: `kind` served as `plural`, with
/// `singular`, scope, short names and categories.
fn res(plural: &str, singular: &str, kind: &str, namespaced: bool, short: &[&str], categories: &[&str]) -> Value {
    json!({"resource": plural, "singularResource": singular, "responseKind": {"kind": kind},
        "scope": if namespaced { "Namespaced" } else { "Cluster" }, "verbs": ["get", "list"],
        "shortNames": short, "categories": categories})
}

/// Groups (name, versions preferred first, each with its resources), as
/// `/apis` serves them.
fn groups(extra_crd: bool) -> Value {
    let mut example = vec![
        res("widgets", "widget", "Widget", true, &["wd"], &["all"]),
        // A plural equal to another resource's singular: ambiguous.
        res("widget", "widgetalias", "WidgetAlias", true, &[], &[]),
    ];
    if extra_crd {
        example.push(res("gizmos", "gizmo", "Gizmo", false, &["gz"], &[]));
    }
    json!([
        {"metadata": {"name": "apps"}, "versions": [
            {"version": "v1", "resources": [res("deployments", "deployment", "Deployment", true, &["deploy"], &["all"])]},
            {"version": "v1beta2", "resources": [
                res("deployments", "deployment", "Deployment", true, &["deploy"], &["all"]),
                res("oldsets", "oldset", "OldSet", true, &[], &[])]}]},
        {"metadata": {"name": "events.k8s.io"}, "versions": [
            {"version": "v1", "resources": [res("events", "event", "Event", true, &["ev"], &[])]}]},
        {"metadata": {"name": "storage.k8s.io"}, "versions": [
            {"version": "v1", "resources": [res("storageclasses", "storageclass", "StorageClass", false, &["sc"], &[])]}]},
        {"metadata": {"name": "example.com"}, "versions": [{"version": "v1", "resources": example}]},
        {"metadata": {"name": "example.org"}, "versions": [
            // `pod` is the singular of core pods and so not a short name
            // here; `po` is core's first.
            {"version": "v1", "resources": [res("things", "thing", "Thing", true, &["pod", "po", "thg"], &["all"])]}]},
    ])
}

fn core() -> Value {
    json!([{"metadata": {}, "versions": [{"version": "v1", "resources": [
        res("pods", "pod", "Pod", true, &["po"], &["all"]),
        res("services", "service", "Service", true, &["svc"], &["all"]),
        res("events", "event", "Event", true, &["ev"], &[]),
        res("nodes", "node", "Node", false, &["no"], &[]),
        // No singular given: guessed from the kind.
        res("componentstatuses", "", "ComponentStatus", false, &["cs"], &[])]}]}])
}

fn answer(path: &str, extra_crd: bool) -> Reply {
    let items = match path {
        "/api" => core(),
        "/apis" => groups(extra_crd),
        _ => return Reply::text(404, "not found"),
    };
    Reply::json(200, json!({"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2", "items": items}))
}

async fn mapper() -> (TestServer, RestMapper) {
    let server = TestServer::start(|r, _| answer(&r.path, false)).await;
    let mapper = RestMapper::new(DiscoveryClient::new(server.client()));
    (server, mapper)
}

/// `plural.version.group` and scope of a mapping.
fn gvr(m: &RestMapping) -> (String, Scope) {
    let r = &m.resource;
    (format!("{}.{}.{}", r.plural, r.version, r.group), m.scope)
}

#[tokio::test]
async fn kinds_map_to_the_preferred_version_unless_one_is_asked() {
    let (_server, mapper) = mapper().await;
    let m = mapper.mapping("apps", "Deployment", None).await.unwrap();
    assert_eq!(gvr(&m), ("deployments.v1.apps".into(), Scope::Namespaced));
    assert_eq!((m.resource.kind.as_str(), m.resource.api_version()), ("Deployment", "apps/v1".to_owned()));
    let m = mapper.mapping("apps", "Deployment", Some("v1beta2")).await.unwrap();
    assert_eq!(gvr(&m).0, "deployments.v1beta2.apps");
    // The lower-cased kind is registered too; other spellings are not.
    assert_eq!(gvr(&mapper.mapping("apps", "deployment", None).await.unwrap()).0, "deployments.v1.apps");
    assert!(mapper.mapping("apps", "DEPLOYMENT", None).await.unwrap_err().is_no_match());
    // A kind only the non-preferred version serves.
    assert_eq!(gvr(&mapper.mapping("apps", "OldSet", None).await.unwrap()).0, "oldsets.v1beta2.apps");
    let m = mapper.mapping("", "Node", None).await.unwrap();
    assert_eq!(gvr(&m), ("nodes.v1.".into(), Scope::Cluster));
    let all: Vec<String> = mapper.mappings("apps", "Deployment").await.unwrap().iter().map(|m| gvr(m).0).collect();
    assert_eq!(all, ["deployments.v1.apps", "deployments.v1beta2.apps"]);
}

#[tokio::test]
async fn misses_name_what_was_asked() {
    let (_server, mapper) = mapper().await;
    // The group must be given exactly: `Deployment` is not a core kind.
    let e = mapper.mapping("", "Deployment", None).await.unwrap_err();
    assert_eq!(e.to_string(), r#"no matches for kind "Deployment" in group """#);
    let e = mapper.mapping("apps", "Deployment", Some("v2")).await.unwrap_err();
    assert_eq!(e.to_string(), r#"no matches for kind "Deployment" in version "apps/v2""#);
    let e = mapper.resource_in(Some("apps"), None, "pods").await.unwrap_err();
    assert_eq!(e.to_string(), r#"no matches for resource "pods" in group "apps""#);
    let e = mapper.resource("nothing").await.unwrap_err();
    assert_eq!(e.to_string(), r#"no matches for resource type "nothing""#);
}

#[tokio::test]
async fn resources_by_plural_singular_and_short_name() {
    let (_server, mapper) = mapper().await;
    for (asked, expected) in [
        ("deployments", "deployments.v1.apps"),
        ("deployment", "deployments.v1.apps"),
        ("Deployments", "deployments.v1.apps"),
        ("deploy", "deployments.v1.apps"),
        ("po", "pods.v1."),
        ("pod", "pods.v1."),
        ("svc", "services.v1."),
        ("thg", "things.v1.example.org"),
        // No singular in discovery: the lower-cased kind stands for it.
        ("componentstatus", "componentstatuses.v1."),
        // The core group comes first, then groups in the server's order.
        ("events", "events.v1."),
        ("ev", "events.v1."),
        ("events.events.k8s.io", "events.v1.events.k8s.io"),
        ("ev.events.k8s.io", "events.v1.events.k8s.io"),
        // `resource.group`, the group possibly cut short.
        ("deployments.apps", "deployments.v1.apps"),
        ("deploy.apps", "deployments.v1.apps"),
        ("deploy.app", "deployments.v1.apps"),
        ("storageclasses.storage", "storageclasses.v1.storage.k8s.io"),
        ("sc", "storageclasses.v1.storage.k8s.io"),
        // `resource.version.group`.
        ("deployments.v1beta2.apps", "deployments.v1beta2.apps"),
        ("storageclasses.v1.storage.k8s.io", "storageclasses.v1.storage.k8s.io"),
        // Failing resources, a kind.
        ("Deployment.apps", "deployments.v1.apps"),
        ("Deployment.v1beta2.apps", "deployments.v1beta2.apps"),
        ("Node", "nodes.v1."),
    ] {
        let m = mapper.resource(asked).await.unwrap_or_else(|e| panic!("{asked}: {e}"));
        assert_eq!(gvr(&m).0, expected, "{asked}");
    }
    let m = mapper.resource_in(None, Some("v1beta2"), "deploy").await.unwrap();
    assert_eq!(gvr(&m).0, "deployments.v1.apps", "a short name's expansion drops the version, as client-go's");
    let m = mapper.resource_in(None, Some("v1beta2"), "deployments").await.unwrap();
    assert_eq!(gvr(&m).0, "deployments.v1beta2.apps");
}

#[tokio::test]
async fn ambiguity_names_every_candidate() {
    let (_server, mapper) = mapper().await;
    let e = mapper.resource("widget").await.unwrap_err();
    let MappingError::Ambiguous { candidates, .. } = &e else { panic!("{e}") };
    assert_eq!(candidates, &["widgets.v1.example.com", "widget.v1.example.com"]);
    assert_eq!(
        e.to_string(),
        r#"resource "widget" is ambiguous: it matches widgets.v1.example.com, widget.v1.example.com"#
    );
    // Unambiguous with the plural of the one.
    assert_eq!(gvr(&mapper.resource("widgets").await.unwrap()).0, "widgets.v1.example.com");
}

#[tokio::test]
async fn categories_expand_to_each_resource_once() {
    let (_server, mapper) = mapper().await;
    let all: Vec<String> = mapper.expand_category("all").await.unwrap().iter().map(|m| gvr(m).0).collect();
    assert_eq!(
        all,
        ["pods.v1.", "services.v1.", "deployments.v1.apps", "widgets.v1.example.com", "things.v1.example.org"]
    );
    assert!(mapper.expand_category("none").await.unwrap().is_empty());
}

/// A server that serves `gizmos` once `installed` is set.
async fn installing() -> (TestServer, Arc<AtomicBool>) {
    let installed = Arc::new(AtomicBool::new(false));
    let seen = installed.clone();
    let server = TestServer::start(move |r, _| answer(&r.path, seen.load(Ordering::SeqCst))).await;
    (server, installed)
}

#[tokio::test]
async fn a_miss_discovers_again_once() {
    let (server, installed) = installing().await;
    let mapper = RestMapper::new(DiscoveryClient::new(server.client())).with_refresh_interval(Duration::ZERO);
    assert!(mapper.mapping("example.com", "Gizmo", None).await.unwrap_err().is_no_match());
    assert_eq!(server.requests().len(), 4, "discovery, then once more for the miss");
    installed.store(true, Ordering::SeqCst);
    let m = mapper.mapping("example.com", "Gizmo", None).await.unwrap();
    assert_eq!(gvr(&m), ("gizmos.v1.example.com".into(), Scope::Cluster));
    assert_eq!(server.requests().len(), 6);
    assert_eq!(gvr(&mapper.resource("gz").await.unwrap()).0, "gizmos.v1.example.com");
    assert_eq!(server.requests().len(), 6, "a hit does not discover");
}

#[tokio::test]
async fn misses_within_the_refresh_interval_do_not_discover_again() {
    let (server, installed) = installing().await;
    let mapper =
        RestMapper::new(DiscoveryClient::new(server.client())).with_refresh_interval(Duration::from_secs(3600));
    assert!(mapper.mapping("example.com", "Gizmo", None).await.unwrap_err().is_no_match());
    assert_eq!(server.requests().len(), 4);
    installed.store(true, Ordering::SeqCst);
    for _ in 0..3 {
        assert!(mapper.resource("gizmos").await.unwrap_err().is_no_match());
    }
    assert_eq!(server.requests().len(), 4, "the last refresh is too recent");
}

#[tokio::test]
async fn concurrent_misses_share_one_refresh() {
    let (server, _installed) = installing().await;
    let mapper = RestMapper::new(DiscoveryClient::new(server.client())).with_refresh_interval(Duration::ZERO);
    mapper.discovery().discover().await.unwrap();
    let misses = (0..8).map(|_| mapper.mapping("example.com", "Gizmo", None));
    for result in futures_util::future::join_all(misses).await {
        assert!(result.unwrap_err().is_no_match());
    }
    assert_eq!(server.requests().len(), 4, "one discovery, one refresh");
}

/// As client-go's `ServerPreferredResources`: a resource only a
/// non-preferred version serves is listed at that version; the others once,
/// at the preferred one.
#[tokio::test]
async fn preferred_resources_include_those_only_other_versions_serve() {
    let (_server, mapper) = mapper().await;
    let preferred = mapper.discovery().preferred_resources().await.unwrap();
    let apps: Vec<String> =
        preferred.iter().filter(|r| r.group == "apps").map(|r| format!("{}.{}", r.name, r.version)).collect();
    assert_eq!(apps, ["deployments.v1", "oldsets.v1beta2"]);
}
