//! Informers on both queues against the real apiserver: every object's
//! updates reach a handler in the order they were written (and, on the
//! RealFIFO, the updates of all objects in the server's order), objects
//! created and deleted at once come as an add then a delete, and the cache
//! tells when it holds a write of ours (`last_store_sync_resource_version`).

mod support;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt as _;
use k8s_client::api::core::v1::ConfigMap;
use k8s_client::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_client_runtime::Map;
use k8s_client_runtime::cache::{
    DeltaObject, QueueKind, ResourceEventHandler, SharedIndexInformer, wait_for_cache_sync,
};
use k8s_client_runtime::rest::{self, CreateOptions, DeleteOptions, ResourceClient};
use tokio_util::sync::CancellationToken;

fn cm(name: &str, value: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta { name: Some(name.into()), ..Default::default() },
        data: Some(Map::from([("v", value)])),
        ..Default::default()
    }
}

fn name(c: &ConfigMap) -> String {
    c.metadata.name.as_deref().unwrap_or_default().to_owned()
}

fn value(c: &ConfigMap) -> String {
    c.data.as_ref().and_then(|d| d.get("v")).map(|v| v.to_string()).unwrap_or_default()
}

/// What a handler saw, in order: `add a=0`, `update a=7`, `delete a`.
#[derive(Default)]
struct Seen(Mutex<Vec<(String, String)>>);

impl Seen {
    fn all(&self) -> Vec<(String, String)> {
        self.0.lock().unwrap().clone()
    }
}

impl ResourceEventHandler<ConfigMap> for Seen {
    fn on_add(&self, obj: &Arc<ConfigMap>, _: bool) {
        self.0.lock().unwrap().push((name(obj), format!("add {}", value(obj))));
    }
    fn on_update(&self, _: &Arc<ConfigMap>, new: &Arc<ConfigMap>) {
        self.0.lock().unwrap().push((name(new), format!("update {}", value(new))));
    }
    fn on_delete(&self, obj: &DeltaObject<ConfigMap>) {
        let who = obj.object().map(|o| name(o)).unwrap_or_default();
        self.0.lock().unwrap().push((who, "delete".to_owned()));
    }
}

async fn started(
    cms: &ResourceClient<ConfigMap>,
    kind: QueueKind,
) -> (SharedIndexInformer<ConfigMap>, Arc<Seen>, CancellationToken) {
    let informer = SharedIndexInformer::builder(cms.clone()).queue(kind).build().unwrap();
    let seen = Arc::new(Seen::default());
    informer.add_event_handler(Arc::clone(&seen)).unwrap();
    let cancel = CancellationToken::new();
    informer.start(cancel.clone());
    let ok = tokio::time::timeout(Duration::from_secs(60), wait_for_cache_sync(&cancel, &[&informer])).await;
    assert!(matches!(ok, Ok(true)), "{kind:?}: informer did not sync");
    (informer, seen, cancel)
}

/// Waits until `done` holds for what the handler saw, for up to a minute.
async fn until(seen: &Seen, what: &str, done: impl Fn(&[(String, String)]) -> bool) {
    for _ in 0..600 {
        if done(&seen.all()) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{what}: not seen within a minute; saw {} notifications", seen.all().len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_objects_updates_arrive_in_the_order_written() {
    for kind in [QueueKind::RealFifo, QueueKind::DeltaFifo] {
        let ns = support::namespace("in-order");
        let cms = ResourceClient::<ConfigMap>::namespaced(support::client(), &ns);
        for i in 0..10 {
            cms.create(&cm(&format!("cm-{i}"), "0"), &CreateOptions::default()).await.unwrap();
        }
        let (informer, seen, cancel) = started(&cms, kind).await;

        // 1,000 updates, interleaved over the 10 objects: update n writes
        // n to cm-(n % 10). Sent one after the other, so the server applies
        // them in this order; four writers at a time would not say more
        // about the informer.
        let mut written: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let mut order = Vec::new();
        for n in 1..=1000 {
            let who = format!("cm-{}", n % 10);
            let patch = rest::Patch::Merge(serde_json::json!({"data": {"v": n.to_string()}}));
            cms.patch(&who, &patch, &Default::default()).await.unwrap();
            written.entry(who.clone()).or_default().push(format!("update {n}"));
            order.push(format!("update {n}"));
        }
        until(&seen, "the 1,000 updates", |s| s.iter().filter(|(_, e)| e.starts_with("update")).count() >= 1000).await;

        let all = seen.all();
        let mut per_object: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (who, event) in all.iter().filter(|(_, e)| e.starts_with("update")) {
            per_object.entry(who.clone()).or_default().push(event.clone());
        }
        assert_eq!(per_object, written, "{kind:?}: each object's updates, in the order written");
        if kind == QueueKind::RealFifo {
            // In order across objects too: the server's order.
            let updates: Vec<_> = all.iter().filter(|(_, e)| e.starts_with("update")).map(|(_, e)| e.clone()).collect();
            assert_eq!(updates, order, "{kind:?}: all updates in the server's order");
        }
        cancel.cancel();
        drop(informer);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn created_then_deleted_objects_come_as_an_add_then_a_delete() {
    for kind in [QueueKind::RealFifo, QueueKind::DeltaFifo] {
        let ns = support::namespace("add-delete");
        let cms = ResourceClient::<ConfigMap>::namespaced(support::client(), &ns);
        let (informer, seen, cancel) = started(&cms, kind).await;

        // Each object is deleted as soon as it exists, 100 of them, four at
        // a time: often before the informer has applied its creation.
        let names: Vec<String> = (0..100).map(|i| format!("short-{i}")).collect();
        let writes = names.iter().map(|who| {
            let cms = cms.clone();
            async move {
                cms.create(&cm(who, "1"), &CreateOptions::default()).await.unwrap();
                cms.delete(who, &DeleteOptions::default()).await.unwrap();
            }
        });
        futures_util::stream::iter(writes).buffer_unordered(4).collect::<Vec<()>>().await;
        until(&seen, "100 deletions", |s| s.iter().filter(|(_, e)| e == "delete").count() >= 100).await;

        let all = seen.all();
        for who in &names {
            let events: Vec<&str> = all.iter().filter(|(w, _)| w == who).map(|(_, e)| e.as_str()).collect();
            assert_eq!(events, ["add 1", "delete"], "{kind:?}: {who}");
        }
        assert!(informer.store().is_empty(), "{kind:?}: the cache ends empty");
        cancel.cancel();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cache_tells_when_it_holds_a_write() {
    for kind in [QueueKind::RealFifo, QueueKind::DeltaFifo] {
        let ns = support::namespace("read-your-writes");
        let cms = ResourceClient::<ConfigMap>::namespaced(support::client(), &ns);
        let (informer, _seen, cancel) = started(&cms, kind).await;
        // Synced on an empty namespace: the cache is at the list's version.
        assert!(!informer.last_store_sync_resource_version().is_empty(), "{kind:?}: no version after the list");

        for round in 0..20 {
            let written = cms.create(&cm(&format!("w-{round}"), "1"), &CreateOptions::default()).await.unwrap();
            let rv = written.metadata.resource_version.as_deref().unwrap().to_owned();
            informer.wait_for_store_resource_version(&rv, Duration::from_secs(30)).await.unwrap();
            // Once there, the cache has the write.
            let cached = informer.lister().namespace(&ns).get(&format!("w-{round}"));
            assert!(cached.is_ok(), "{kind:?}: w-{round} at {rv} not in the cache");
        }

        // A version from the future is not reached; the error says where
        // the cache is.
        let reached = informer.last_store_sync_resource_version();
        let future = (reached.parse::<u64>().unwrap() + 1_000_000).to_string();
        let err = informer.wait_for_store_resource_version(&future, Duration::from_millis(300)).await.unwrap_err();
        let text = err.to_string();
        assert!(text.contains(&future) && text.contains(&reached), "{kind:?}: {text}");
        // A malformed one is refused at once.
        assert!(informer.wait_for_store_resource_version("12a", Duration::from_secs(30)).await.is_err());
        cancel.cancel();
    }
}
