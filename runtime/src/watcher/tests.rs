use std::time::Duration;

use futures_util::StreamExt as _;
use serde_json::{Value, json};

use super::*;
use crate::rest::tests::server::{Reply, TestServer};
use crate::testing::Pod;

fn pod(name: &str, rv: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "ns", "resourceVersion": rv}})
}

fn list(items: Vec<Value>, rv: &str) -> Reply {
    Reply::json(
        200,
        json!({"kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": rv}, "items": items}),
    )
}

fn events(events: &[(&str, Value)]) -> Reply {
    let chunks = events.iter().map(|(t, o)| format!("{}\n", json!({"type": t, "object": o})).into_bytes()).collect();
    Reply::Chunks { status: 200, chunks }
}

fn gone() -> Value {
    json!({"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Expired", "code": 410,
           "message": "too old resource version"})
}

fn bookmark(rv: &str) -> Value {
    json!({"kind": "Pod", "apiVersion": "v1", "metadata": {"resourceVersion": rv}})
}

fn fast() -> BackoffConfig {
    BackoffConfig {
        initial: Duration::from_millis(10),
        max: Duration::from_millis(20),
        jitter: 0.0,
        ..Default::default()
    }
}

/// The resourceVersion a request asked for.
fn rv_param(path: &str) -> Option<&str> {
    path.split(['?', '&']).find_map(|p| p.strip_prefix("resourceVersion="))
}

/// What an event says, in short.
fn short(event: &Event<Pod>) -> String {
    let name = |p: &Pod| p.metadata.name.clone().unwrap_or_default();
    match event {
        Event::Init => "init".into(),
        Event::InitApply(p) => format!("list {}", name(p)),
        Event::InitDone { resource_version } => format!("done {resource_version}"),
        Event::Watch(WatchEvent::Added(p)) => format!("added {}", name(p)),
        Event::Watch(WatchEvent::Modified(p)) => format!("modified {}", name(p)),
        Event::Watch(WatchEvent::Deleted(p)) => format!("deleted {}", name(p)),
        Event::Watch(WatchEvent::Bookmark(b)) => format!("bookmark {}", b.resource_version),
    }
}

#[tokio::test]
async fn lists_resumes_after_an_end_and_relists_on_410() {
    let server = TestServer::start(|r, n| match n {
        0 => list(vec![pod("a", "5")], "10"),
        1 => events(&[("ADDED", pod("b", "11")), ("MODIFIED", pod("a", "12")), ("BOOKMARK", bookmark("15"))]),
        2 => events(&[("ERROR", gone())]),
        3 => list(vec![pod("b", "20")], "21"),
        4 => events(&[("DELETED", pod("b", "22"))]),
        _ if r.path.contains("watch=true") => Reply::Hang,
        _ => Reply::text(500, "unexpected"),
    })
    .await;
    let pods = ResourceClient::<Pod>::namespaced(server.client(), "ns");
    let seen: Vec<String> = watcher(pods, Config::default().backoff(fast()))
        .take(10)
        .map(|item| short(&item.expect("no error")))
        .collect()
        .await;
    assert_eq!(
        seen,
        ["init", "list a", "done 10", "added b", "modified a", "bookmark 15", "init", "list b", "done 21", "deleted b"]
    );
    let requests = server.requests();
    let rvs: Vec<Option<&str>> = requests.iter().take(5).map(|r| rv_param(&r.path)).collect();
    // Lists are consistent reads; each watch resumes after the last version
    // seen, the bookmark's included.
    assert_eq!(rvs, [None, Some("10"), Some("15"), None, Some("21")]);
    assert!(requests[1].path.contains("allowWatchBookmarks=true"));
}

#[tokio::test]
async fn retry_watcher_retries_failures_and_ends_on_410() {
    let server = TestServer::start(|_, n| match n {
        0 => events(&[("ADDED", pod("a", "8"))]),
        1 => Reply::json(500, json!({"kind": "Status", "apiVersion": "v1", "code": 500, "message": "boom"})),
        2 => events(&[("MODIFIED", pod("a", "9"))]),
        _ => events(&[("ERROR", gone())]),
    })
    .await;
    let pods = ResourceClient::<Pod>::namespaced(server.client(), "ns");
    let items: Vec<_> = std::pin::pin!(retry_watcher(pods, "7", ListOptions::default())).collect().await;
    assert_eq!(items.len(), 4, "{items:?}");
    assert!(matches!(&items[0], Ok(WatchEvent::Added(_))));
    assert!(matches!(&items[1], Err(e @ Error::WatchStart(_)) if e.is_transient()));
    assert!(matches!(&items[2], Ok(WatchEvent::Modified(_))));
    assert!(matches!(&items[3], Err(Error::Expired { resource_version, .. }) if resource_version == "9"));
    let rvs: Vec<String> = server.requests().iter().map(|r| rv_param(&r.path).unwrap_or_default().to_owned()).collect();
    assert_eq!(rvs, ["7", "8", "8", "9"]);
}

#[tokio::test]
async fn retry_watcher_from_now_learns_the_version_from_one_object() {
    let server = TestServer::start(|r, _| {
        if r.path.contains("watch=true") {
            events(&[("ADDED", pod("z", "31"))])
        } else {
            list(vec![pod("a", "5")], "30")
        }
    })
    .await;
    let pods = ResourceClient::<Pod>::namespaced(server.client(), "ns");
    let first = std::pin::pin!(retry_watcher(pods, "", ListOptions::default())).next().await;
    assert!(matches!(first, Some(Ok(WatchEvent::Added(p))) if p.metadata.name.as_deref() == Some("z")));
    let requests = server.requests();
    assert!(requests[0].path.contains("limit=1"), "{}", requests[0].path);
    assert_eq!(rv_param(&requests[1].path), Some("30"));
}

#[tokio::test]
async fn next_is_cancel_safe() {
    let server = TestServer::start(|r, n| match n {
        0 => list(vec![], "1"),
        1 => events(&[("ADDED", pod("a", "2"))]),
        _ if r.path.contains("watch=true") => Reply::Hang,
        _ => Reply::text(500, "unexpected"),
    })
    .await;
    let pods = ResourceClient::<Pod>::namespaced(server.client(), "ns");
    let mut stream = std::pin::pin!(watcher(pods, Config::default().backoff(fast())));
    let mut seen = Vec::new();
    // Polls cut short again and again lose nothing and repeat nothing.
    while seen.len() < 3 {
        if let Ok(Some(item)) = tokio::time::timeout(Duration::from_micros(50), stream.next()).await {
            seen.push(short(&item.unwrap()));
        }
    }
    assert_eq!(seen, ["init", "done 1", "added a"]);
    assert!(tokio::time::timeout(Duration::from_millis(200), stream.next()).await.is_err());
    assert_eq!(server.requests().len(), 3, "one list, the watch, the resumed watch");
}
