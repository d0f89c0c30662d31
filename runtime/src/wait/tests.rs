use serde_json::{Value, json};

use super::*;
use crate::dynamic::DynamicObject;
use crate::object::DynamicResource;
use crate::rest::tests::server::{Reply, TestServer};
use crate::testing::{Pod, pod};

fn pods() -> DynamicResource {
    DynamicResource {
        group: String::new(),
        version: "v1".into(),
        kind: "Pod".into(),
        plural: "pods".into(),
        namespaced: true,
    }
}

fn object(rv: &str, uid: &str, phase: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "p", "namespace": "ns", "uid": uid, "resourceVersion": rv},
           "status": {"phase": phase}})
}

fn list(items: Vec<Value>) -> Reply {
    Reply::json(
        200,
        json!({"kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": "1"}, "items": items}),
    )
}

fn events(events: &[(&str, Value)]) -> Reply {
    let chunks = events.iter().map(|(t, o)| format!("{}\n", json!({"type": t, "object": o})).into_bytes()).collect();
    Reply::Chunks { status: 200, chunks }
}

#[tokio::test]
async fn await_condition_watches_one_object_until_it_holds() {
    let server = TestServer::start(|r, _| {
        if r.path.contains("watch=true") {
            events(&[("ADDED", object("2", "u1", "Pending")), ("MODIFIED", object("3", "u1", "Running"))])
        } else {
            list(vec![])
        }
    })
    .await;
    let client = ResourceClient::<DynamicObject>::namespaced_with(server.client(), "ns", &pods());
    let found = await_condition(client, "p", conditions::is_pod_running()).await.unwrap().expect("the pod");
    assert_eq!(found.resource_version(), Some("3"));
    // One object, by name.
    assert!(server.requests()[0].path.contains("fieldSelector=metadata.name%3Dp"), "{}", server.requests()[0].path);
}

#[tokio::test]
async fn await_condition_judges_the_listed_object_and_its_deletion() {
    let server = TestServer::start(|r, _| {
        if r.path.contains("watch=true") {
            events(&[("DELETED", object("2", "u1", "Running"))])
        } else {
            list(vec![object("1", "u1", "Running")])
        }
    })
    .await;
    let client = ResourceClient::<DynamicObject>::namespaced_with(server.client(), "ns", &pods());
    let running = await_condition(client.clone(), "p", conditions::is_pod_running()).await.unwrap();
    assert!(running.is_some(), "already true of the listed object");
    let gone = await_condition(client, "p", conditions::is_deleted("u1")).await.unwrap();
    assert!(gone.is_none());
}

#[tokio::test]
async fn await_condition_ends_on_errors_that_do_not_heal() {
    let server = TestServer::start(|_, _| {
        Reply::json(403, json!({"kind": "Status", "apiVersion": "v1", "code": 403, "reason": "Forbidden"}))
    })
    .await;
    let client = ResourceClient::<DynamicObject>::namespaced_with(server.client(), "ns", &pods());
    let err = await_condition(client, "p", conditions::is_pod_running()).await.unwrap_err();
    assert!(matches!(err, watcher::Error::List(ref e) if e.is_forbidden()), "{err:?}");
}

#[test]
fn a_relist_is_told_as_the_changes_it_shows() {
    let with_rv = |name: &str, rv: &str| {
        let mut p = pod("ns", name, "");
        p.metadata.resource_version = Some(rv.into());
        p
    };
    let before: HashMap<_, _> = [with_rv("kept", "1"), with_rv("changed", "1"), with_rv("gone", "1")]
        .into_iter()
        .map(|p| (key(&p), p))
        .collect();
    let after: HashMap<_, _> = [with_rv("kept", "1"), with_rv("changed", "5"), with_rv("new", "6")]
        .into_iter()
        .map(|p| (key(&p), p))
        .collect();
    let mut events: Vec<String> = diff::<Pod>(before, after)
        .iter()
        .map(|e| match e {
            WatchEvent::Added(p) => format!("added {}", p.metadata.name.as_deref().unwrap()),
            WatchEvent::Modified(p) => format!("modified {}", p.metadata.name.as_deref().unwrap()),
            WatchEvent::Deleted(p) => format!("deleted {}", p.metadata.name.as_deref().unwrap()),
            WatchEvent::Bookmark(_) => "bookmark".into(),
        })
        .collect();
    assert_eq!(events[0], "deleted gone", "deletions first");
    events.sort();
    assert_eq!(events, ["added new", "deleted gone", "modified changed"]);
}
