//! The reflector through its [`ReflectorStore`] seam: a queue that only
//! records the calls it gets, keyed its own way, fed from real watch
//! streams over HTTP (the runtime's loopback test server) and, for the
//! resync timer, from a scripted list/watch.

use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::*;
use crate::cache::list_watch::scripted::{Scripted, page};
use crate::rest::ResourceClient;
use crate::rest::tests::server::{Recorded, Reply, TestServer};
use crate::testing::{Pod, pod};

/// One call on the queue: the keys it named, and the resourceVersion of the
/// object or list.
#[derive(Debug, Clone, PartialEq)]
enum Call {
    Add(String, String),
    Update(String, String),
    Delete(String, String),
    Replace(Vec<String>, String),
    Resync,
}

/// Records every call; holds no objects, makes no deltas. Keys are
/// `name@namespace`, unlike the DeltaFifo's `namespace/name`, so the
/// reflector's keys are seen to be the queue's.
#[derive(Clone, Default)]
struct Recording(Arc<Mutex<Vec<Call>>>);

impl Recording {
    fn calls(&self) -> Vec<Call> {
        self.0.lock().clone()
    }
    fn record(&self, call: Call) {
        self.0.lock().push(call);
    }
}

fn rv(obj: &Pod) -> String {
    obj.metadata.resource_version.clone().unwrap_or_default()
}

impl ReflectorStore<Pod> for Recording {
    fn key(&self, obj: &Pod) -> Key {
        let meta = &obj.metadata;
        format!("{}@{}", meta.name.as_deref().unwrap_or_default(), meta.namespace.as_deref().unwrap_or_default()).into()
    }
    fn add(&self, obj: Arc<Pod>) {
        self.record(Call::Add(self.key(&obj).to_string(), rv(&obj)));
    }
    fn update(&self, obj: Arc<Pod>) {
        self.record(Call::Update(self.key(&obj).to_string(), rv(&obj)));
    }
    fn delete(&self, obj: Arc<Pod>) {
        self.record(Call::Delete(self.key(&obj).to_string(), rv(&obj)));
    }
    fn replace(&self, list: Vec<(Key, Arc<Pod>)>, resource_version: &str) {
        for (key, obj) in &list {
            assert_eq!(*key, self.key(obj), "handed over with the queue's own key");
        }
        let mut keys: Vec<String> = list.iter().map(|(key, _)| key.to_string()).collect();
        keys.sort();
        self.record(Call::Replace(keys, resource_version.to_owned()));
    }
    fn resync(&self) {
        self.record(Call::Resync);
    }
}

fn event(kind: &str, name: &str, rv: &str) -> Vec<u8> {
    let object = json!({"metadata": {"name": name, "namespace": "ns", "resourceVersion": rv}});
    format!("{}\n", json!({"type": kind, "object": object})).into_bytes()
}

fn initial_events_end(rv: &str) -> Vec<u8> {
    let bookmark = json!({"kind": "Pod", "apiVersion": "v1", "metadata": {"resourceVersion": rv,
        "annotations": {"k8s.io/initial-events-end": "true"}}});
    format!("{}\n", json!({"type": "BOOKMARK", "object": bookmark})).into_bytes()
}

/// Runs a reflector of pods from `server` into `queue` until the queue got
/// `expected` calls (or 10 s passed); answers the calls and the requests'
/// paths.
async fn reflect(
    server: &TestServer,
    queue: &Recording,
    watch_list: bool,
    expected: usize,
) -> (Vec<Call>, Vec<String>) {
    let lw = ResourceClient::<Pod>::all(server.client());
    let options = ReflectorOptions { use_watch_list: watch_list, ..ReflectorOptions::default() };
    let reflector = Reflector::new(lw, queue.clone(), options);
    let cancel = CancellationToken::new();
    let task = tokio::spawn(reflector.run(cancel.clone()));
    let arrived = tokio::time::timeout(Duration::from_secs(10), async {
        while queue.calls().len() < expected {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
    cancel.cancel();
    task.await.unwrap();
    let paths: Vec<String> = server.requests().iter().map(|r: &Recorded| r.path.clone()).collect();
    assert!(arrived.is_ok(), "calls: {:?}, requests: {paths:?}", queue.calls());
    (queue.calls(), paths)
}

/// A watch-list stream: the initial events become one `replace` at the
/// bookmark that ends them (a pod added and deleted before it is not in
/// it, found by the queue's key), then every event one call.
#[tokio::test]
async fn a_watch_list_stream_reaches_a_queue_of_another_kind() {
    let server = TestServer::start(|req, i| match i {
        0 if req.path.contains("sendInitialEvents=true") => Reply::Chunks {
            status: 200,
            chunks: vec![
                event("ADDED", "a", "5"),
                event("ADDED", "b", "6"),
                event("DELETED", "b", "7"),
                initial_events_end("8"),
                event("MODIFIED", "a", "9"),
                event("ADDED", "c", "10"),
                event("DELETED", "a", "11"),
            ],
        },
        _ => Reply::Hang,
    })
    .await;
    let queue = Recording::default();
    let (calls, paths) = reflect(&server, &queue, true, 4).await;
    assert_eq!(
        calls,
        [
            Call::Replace(vec!["a@ns".into()], "8".into()),
            Call::Update("a@ns".into(), "9".into()),
            Call::Add("c@ns".into(), "10".into()),
            Call::Delete("a@ns".into(), "11".into()),
        ]
    );
    assert!(paths[0].starts_with("/api/v1/pods?"), "{paths:?}");
}

/// A list, then a watch from its resourceVersion: the list's objects are
/// keyed by the queue and replaced at once.
#[tokio::test]
async fn a_list_and_a_watch_reach_a_queue_of_another_kind() {
    let server = TestServer::start(|req, i| match i {
        0 => Reply::json(
            200,
            json!({"kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": "20"}, "items": [
                {"metadata": {"name": "b", "namespace": "ns", "resourceVersion": "12"}},
                {"metadata": {"name": "a", "namespace": "other", "resourceVersion": "14"}},
            ]}),
        ),
        1 if req.path.contains("watch=true") && req.path.contains("resourceVersion=20") => {
            Reply::Chunks { status: 200, chunks: vec![event("MODIFIED", "b", "21"), event("DELETED", "b", "22")] }
        }
        _ => Reply::Hang,
    })
    .await;
    let queue = Recording::default();
    let (calls, paths) = reflect(&server, &queue, false, 3).await;
    assert_eq!(
        calls,
        [
            Call::Replace(vec!["a@other".into(), "b@ns".into()], "20".into()),
            Call::Update("b@ns".into(), "21".into()),
            Call::Delete("b@ns".into(), "22".into()),
        ]
    );
    assert!(!paths[0].contains("watch=true"), "{paths:?}");
}

/// The resync timer asks the queue, here one shared as
/// `Arc<dyn ReflectorStore>`; what a resync does is the queue's business.
#[tokio::test(start_paused = true)]
async fn the_resync_period_asks_the_queue_to_resync() {
    let lw = Arc::new(Scripted::<Pod>::default());
    let mut listed = pod("ns", "a", "node");
    listed.metadata.resource_version = Some("3".into());
    lw.push_list(Ok(page(vec![listed], "10", None)));
    lw.push_watch(vec![], true);
    let queue = Recording::default();
    let shared: Arc<dyn ReflectorStore<Pod>> = Arc::new(queue.clone());
    let options = ReflectorOptions {
        use_watch_list: false,
        resync_period: Duration::from_secs(30),
        ..ReflectorOptions::default()
    };
    let reflector = Reflector::new(lw, shared, options);
    let cancel = CancellationToken::new();
    let task = tokio::spawn(reflector.run(cancel.clone()));
    tokio::time::sleep(Duration::from_secs(65)).await;
    cancel.cancel();
    task.await.unwrap();
    assert_eq!(queue.calls(), [Call::Replace(vec!["a@ns".into()], "10".into()), Call::Resync, Call::Resync]);
}
