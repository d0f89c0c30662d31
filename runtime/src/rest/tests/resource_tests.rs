use futures_util::StreamExt as _;
use serde_json::json;

use super::server::{Reply, TestServer};
use crate::rest::*;

pub(crate) use crate::testing::{Meta, Node, Pod};

fn pod(name: &str) -> serde_json::Value {
    json!({"metadata": {"name": name, "namespace": "ns", "resourceVersion": "1"}})
}

async fn echo_server() -> TestServer {
    TestServer::start(|r, _| {
        let p = r.path.split('?').next().unwrap_or_default().to_owned();
        match r.method.as_str() {
            "GET" if p.ends_with("/pods") || p.ends_with("/nodes") => {
                Reply::json(200, json!({"kind":"List","metadata":{"resourceVersion":"9","continue":"next"},"items":[pod("a"), pod("b")]}))
            }
            "GET" if p.ends_with("/log") => Reply::Chunks { status: 200, chunks: vec![b"line1\n".to_vec(), b"line2\n".to_vec()] },
            "DELETE" if p.ends_with("/gone") => {
                Reply::json(200, json!({"kind":"Status","apiVersion":"v1","status":"Success","details":{"name":"gone"}}))
            }
            "POST" | "PUT" => Reply::Respond { status: 201, headers: vec![], body: r.body.clone() },
            _ => Reply::json(200, pod(p.rsplit('/').next().unwrap_or_default())),
        }
    })
    .await
}

#[tokio::test]
async fn typed_verbs_build_the_right_requests() {
    let server = echo_server().await;
    let pods: ResourceClient<Pod> = ResourceClient::namespaced(server.client(), "ns");

    let p = pods.get("a", &GetOptions { resource_version: Some("0".into()) }).await.unwrap();
    assert_eq!(p.metadata.name.as_deref(), Some("a"));
    let list = pods.list(&ListOptions::default().labels("app=x").limit(2)).await.unwrap();
    assert_eq!(list.items.len(), 2);
    assert_eq!(list.metadata.continue_.as_deref(), Some("next"));
    let raw: serde_json::Value = pods.list_as(&ListOptions::default()).await.unwrap();
    assert_eq!(raw["kind"], "List");

    let new = Pod {
        metadata: Meta { name: Some("c".into()), ..Default::default() },
        spec: Some(json!({"x": 1})),
        ..Pod::default()
    };
    let created = pods.create(&new, &CreateOptions { dry_run: true, ..Default::default() }).await.unwrap();
    assert_eq!(created, new);
    pods.update(&new, &UpdateOptions { field_manager: Some("me".into()), ..Default::default() }).await.unwrap();
    pods.patch("c", &Patch::Merge(json!({"spec": null})), &PatchOptions::default()).await.unwrap();
    pods.apply("c", &json!({"apiVersion":"v1","kind":"Pod"}), &ApplyOptions::new("mgr").force()).await.unwrap();
    let scale: serde_json::Value = pods.get_subresource("c", "scale", &()).await.unwrap();
    assert_eq!(scale["metadata"]["name"], "scale");
    let _: serde_json::Value =
        pods.patch_subresource("c", "status", &Patch::Json(json!([])), &PatchOptions::default()).await.unwrap();

    let r = server.requests();
    assert_eq!((r[0].method.as_str(), r[0].path.as_str()), ("GET", "/api/v1/namespaces/ns/pods/a?resourceVersion=0"));
    assert_eq!(r[1].path, "/api/v1/namespaces/ns/pods?labelSelector=app%3Dx&limit=2");
    assert_eq!((r[3].method.as_str(), r[3].path.as_str()), ("POST", "/api/v1/namespaces/ns/pods?dryRun=All"));
    assert_eq!(r[3].header("content-type"), Some("application/json"));
    assert_eq!((r[4].method.as_str(), r[4].path.as_str()), ("PUT", "/api/v1/namespaces/ns/pods/c?fieldManager=me"));
    assert_eq!(r[5].header("content-type"), Some("application/merge-patch+json"));
    assert_eq!(r[6].path, "/api/v1/namespaces/ns/pods/c?fieldManager=mgr&force=true");
    assert_eq!(r[6].header("content-type"), Some("application/apply-patch+yaml"));
    assert_eq!(r[7].path, "/api/v1/namespaces/ns/pods/c/scale");
    assert_eq!(
        (r[8].path.as_str(), r[8].header("content-type")),
        ("/api/v1/namespaces/ns/pods/c/status", Some("application/json-patch+json"))
    );
}

#[tokio::test]
async fn get_opt_and_list_all_pages() {
    let server = TestServer::start(|r, _| {
        if r.path.contains("/pods/missing") {
            return Reply::json(404, json!({"kind":"Status","apiVersion":"v1","reason":"NotFound","code":404}));
        }
        if r.path.contains("continue=expired") {
            return Reply::json(410, json!({"kind":"Status","apiVersion":"v1","reason":"Expired","code":410}));
        }
        let (items, cont) = if r.path.contains("continue=p2") {
            (vec![pod("c")], "")
        } else if r.path.contains("limit=") && r.path.contains("fieldSelector=expire") {
            (vec![pod("a")], "expired")
        } else if r.path.contains("limit=") {
            (vec![pod("a"), pod("b")], "p2")
        } else {
            (vec![pod("a"), pod("b"), pod("c"), pod("d")], "")
        };
        Reply::json(200, json!({"metadata": {"resourceVersion": "7", "continue": cont}, "items": items}))
    })
    .await;
    let pods: ResourceClient<Pod> = ResourceClient::namespaced(server.client(), "ns");
    assert!(pods.get_opt("missing", &GetOptions::default()).await.unwrap().is_none());
    let all = pods.list_all(&ListOptions::default().limit(2).resource_version("0")).await.unwrap();
    assert_eq!(all.items.len(), 3);
    assert_eq!(all.metadata.resource_version.as_deref(), Some("7"));
    let full = pods.list_all(&ListOptions::default().fields("expire")).await.unwrap();
    assert_eq!(full.items.len(), 4, "fell back to one full list");
    let paths: Vec<String> = server.requests().into_iter().map(|r| r.path).collect();
    assert_eq!(paths[1], "/api/v1/namespaces/ns/pods?limit=2&resourceVersion=0");
    assert_eq!(paths[2], "/api/v1/namespaces/ns/pods?limit=2&continue=p2");
    assert_eq!(paths.last().unwrap(), "/api/v1/namespaces/ns/pods?fieldSelector=expire");
}

#[tokio::test]
async fn delete_returns_object_or_status() {
    let server = echo_server().await;
    let pods: ResourceClient<Pod> = ResourceClient::namespaced(server.client(), "ns");
    match pods.delete("x", &DeleteOptions::foreground()).await.unwrap() {
        DeleteResult::Object(p) => assert_eq!(p.metadata.name.as_deref(), Some("x")),
        other => panic!("{other:?}"),
    }
    match pods.delete("gone", &DeleteOptions::default()).await.unwrap() {
        DeleteResult::Status(s) => assert!(s.is_success()),
        other => panic!("{other:?}"),
    }
    let r = server.requests();
    assert_eq!(r[0].json()["propagationPolicy"], "Foreground");
    assert_eq!(r[0].json()["kind"], "DeleteOptions");
    pods.delete_collection(&DeleteOptions::default(), &ListOptions::default().labels("a=b")).await.unwrap();
    assert_eq!(server.requests()[2].path, "/api/v1/namespaces/ns/pods?labelSelector=a%3Db");
}

#[tokio::test]
async fn scopes_and_namespaces() {
    let server = echo_server().await;
    let client = server.client();
    let nodes: ResourceClient<Node> = ResourceClient::namespaced(client.clone(), "ignored");
    nodes.get("n1", &GetOptions::default()).await.unwrap();
    nodes.list(&ListOptions::default()).await.unwrap();
    let all: ResourceClient<Pod> = ResourceClient::all(client.clone());
    all.list(&ListOptions::default()).await.unwrap();
    let err = all.get("a", &GetOptions::default()).await.unwrap_err();
    assert!(matches!(err, Error::InvalidRequest { .. }), "{err}");
    let mut p = Pod::default();
    p.metadata.namespace = Some("from-obj".into());
    all.create(&p, &CreateOptions::default()).await.unwrap();
    assert!(all.create(&Pod::default(), &CreateOptions::default()).await.is_err());
    assert!(all.update(&p, &UpdateOptions::default()).await.is_err(), "no name");
    let dflt: ResourceClient<Pod> = ResourceClient::default_namespaced(client);
    dflt.get("z", &GetOptions::default()).await.unwrap();
    let paths: Vec<String> = server.requests().into_iter().map(|r| r.path).collect();
    assert_eq!(
        paths,
        vec![
            "/apis/example.io/v1beta1/nodes/n1",
            "/apis/example.io/v1beta1/nodes",
            "/api/v1/pods",
            "/api/v1/namespaces/from-obj/pods",
            "/api/v1/namespaces/dflt/pods/z",
        ]
    );
}

#[tokio::test]
async fn log_stream_and_watch() {
    let server = TestServer::start(|r, _| {
        if r.path.contains("watch=true") {
            Reply::Chunks {
                status: 200,
                chunks: vec![
                    br#"{"type":"ADDED","object":{"metadata":{"name":"a"}}}"#[..20].to_vec(),
                    br#"{"type":"ADDED","object":{"metadata":{"name":"a"}}}"#[20..].to_vec(),
                    b"\n{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"12\"}}}\n".to_vec(),
                    br#"{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","reason":"Expired","code":410}}"#
                        .to_vec(),
                ],
            }
        } else {
            Reply::Chunks { status: 200, chunks: vec![b"line1\n".to_vec(), b"line2\n".to_vec()] }
        }
    })
    .await;
    let pods: ResourceClient<Pod> = ResourceClient::namespaced(server.client(), "ns");
    let mut logs = pods.stream_subresource("a", "log", &[("follow", "true"), ("container", "c")]).await.unwrap();
    let mut text = Vec::new();
    while let Some(chunk) = logs.next().await {
        text.extend_from_slice(&chunk.unwrap());
    }
    assert_eq!(text, b"line1\nline2\n");

    let opts = ListOptions { allow_watch_bookmarks: true, resource_version: Some("5".into()), ..Default::default() };
    let events: Vec<_> = pods.watch(&opts).await.unwrap().collect().await;
    assert_eq!(events.len(), 3);
    assert!(matches!(&events[0], Ok(WatchEvent::Added(p)) if p.metadata.name.as_deref() == Some("a")));
    assert!(matches!(&events[1], Ok(WatchEvent::Bookmark(b)) if b.resource_version == "12"));
    assert!(events[2].as_ref().unwrap_err().is_gone());
    let r = server.requests();
    assert_eq!(r[0].path, "/api/v1/namespaces/ns/pods/a/log?follow=true&container=c");
    assert_eq!(r[1].path, "/api/v1/namespaces/ns/pods?watch=true&allowWatchBookmarks=true&resourceVersion=5");
}
