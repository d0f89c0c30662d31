//! Informers against the real apiserver: the cache ends equal to the server
//! after many changes, survives watch cuts without relisting, relists after
//! compaction makes its resourceVersion too old (410), recovers from an
//! apiserver restart; late handlers and wait_for_cache_sync; managedFields
//! decoded only by informers that keep them.

mod support;

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use k8s_client::api::core::v1::ConfigMap;
use k8s_client::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_client::clientset::Clientset;
use k8s_client_runtime::Map;
use k8s_client_runtime::cache::{
    ListWatch, ReflectorOptions, ResourceEventHandlerFuncs, SharedIndexInformer, SharedInformerFactory,
    wait_for_cache_sync,
};
use k8s_client_runtime::codec::DecodeOptions;
use k8s_client_runtime::object::ObjectList;
use k8s_client_runtime::rest::{
    self, Client, CreateOptions, DeleteOptions, ListOptions, ResourceClient, WatchEvent, WatchStream,
};
use k8s_client_testenv::TestEnv;
use tokio_util::sync::CancellationToken;

/// Counts the calls that (re)load the whole state: lists, and watches that
/// ask for initial events (watch-list).
#[derive(Clone)]
struct Counting {
    inner: ResourceClient<ConfigMap>,
    full_loads: Arc<AtomicUsize>,
    watches: Arc<AtomicUsize>,
}

impl ListWatch<ConfigMap> for Counting {
    fn list<'a>(&'a self, opts: &'a ListOptions) -> BoxFuture<'a, Result<ObjectList<ConfigMap>, rest::Error>> {
        if opts.continue_token.is_none() {
            self.full_loads.fetch_add(1, Ordering::SeqCst);
        }
        Box::pin(self.inner.list(opts))
    }
    fn watch<'a>(&'a self, opts: &'a ListOptions) -> BoxFuture<'a, Result<WatchStream<ConfigMap>, rest::Error>> {
        self.watches.fetch_add(1, Ordering::SeqCst);
        if opts.send_initial_events == Some(true) {
            self.full_loads.fetch_add(1, Ordering::SeqCst);
        }
        Box::pin(self.inner.watch(opts))
    }
}

fn cm(name: &str, value: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta { name: Some(name.into()), ..Default::default() },
        data: Some(Map::from([("v", value)])),
        ..Default::default()
    }
}

fn informer(
    client: Client,
    ns: &str,
    min_watch_timeout: Option<Duration>,
) -> (SharedIndexInformer<ConfigMap>, Counting) {
    let lw =
        Counting { inner: ResourceClient::namespaced(client, ns), full_loads: Arc::default(), watches: Arc::default() };
    let mut options = ReflectorOptions::default();
    if let Some(t) = min_watch_timeout {
        options.min_watch_timeout = t;
    }
    let informer = SharedIndexInformer::builder(lw.clone()).reflector_options(options).build().unwrap();
    (informer, lw)
}

async fn synced(informer: &SharedIndexInformer<ConfigMap>, cancel: &CancellationToken) {
    let ok = tokio::time::timeout(Duration::from_secs(60), wait_for_cache_sync(cancel, &[informer])).await;
    assert!(matches!(ok, Ok(true)), "informer did not sync");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cache_equals_server_after_1000_changes_and_late_handler_sees_all() {
    let ns = support::namespace("informer");
    let client = support::client();
    let cms = ResourceClient::<ConfigMap>::namespaced(client.clone(), &ns);
    for i in 0..50 {
        cms.create(&cm(&format!("pre-{i}"), "0"), &CreateOptions::default()).await.unwrap();
    }
    let (informer, lw) = informer(client, &ns, None);
    let events = Arc::new(Mutex::new(Vec::<String>::new()));
    let seen = events.clone();
    informer
        .add_event_handler(ResourceEventHandlerFuncs::new().on_add(move |c: &Arc<ConfigMap>, _| {
            seen.lock().unwrap().push(format!("add {}", c.metadata.name.as_deref().unwrap_or_default()))
        }))
        .unwrap();
    let cancel = CancellationToken::new();
    informer.start(cancel.clone());
    synced(&informer, &cancel).await;
    assert_eq!(informer.store().list().len(), 50);

    // 1,000 changes: 500 creates, 300 updates, 200 deletes, several at once.
    let ops: Vec<(usize, &str)> = (0..500)
        .map(|i| (i, "create"))
        .chain((0..300).map(|i| (i, "update")))
        .chain((300..500).map(|i| (i, "delete")))
        .collect();
    for phase in ["create", "update", "delete"] {
        let batch = ops.iter().filter(|(_, op)| *op == phase).map(|(i, op)| {
            let cms = cms.clone();
            async move {
                let name = format!("obj-{i}");
                match *op {
                    "create" => cms.create(&cm(&name, "1"), &CreateOptions::default()).await.map(|_| ()),
                    "update" => cms
                        .patch(&name, &rest::Patch::Merge(serde_json::json!({"data": {"v": "2"}})), &Default::default())
                        .await
                        .map(|_| ()),
                    _ => cms.delete(&name, &DeleteOptions::default()).await.map(|_| ()),
                }
            }
        });
        let results: Vec<_> = futures_util::stream::iter(batch).buffer_unordered(16).collect().await;
        assert!(results.iter().all(Result::is_ok), "{phase} failed: {:?}", results.iter().find(|r| r.is_err()));
    }
    support::cache_converges(&informer, &cms).await;
    assert_eq!(informer.store().list().len(), 350);
    assert!(informer.store().list().iter().filter(|c| c.metadata.name.as_deref().unwrap().starts_with("obj-")).all(
        |c| {
            let n: usize = c.metadata.name.as_deref().unwrap()[4..].parse().unwrap();
            c.data.as_ref().unwrap()["v"] == if n < 300 { "2" } else { "1" }
        }
    ));
    // The initial load was the only one.
    assert_eq!(lw.full_loads.load(Ordering::SeqCst), 1);
    // Every object created was announced once.
    let adds: BTreeSet<String> = events.lock().unwrap().iter().cloned().collect();
    assert_eq!(adds.len(), 550);
    assert_eq!(events.lock().unwrap().len(), 550, "duplicated add notifications");
    // managedFields are dropped by default.
    assert!(informer.store().list().iter().all(|c| c.metadata.managed_fields.is_none()));

    // A handler added now receives the current objects as adds.
    let late = Arc::new(AtomicUsize::new(0));
    let count = late.clone();
    let registration = informer
        .add_event_handler(ResourceEventHandlerFuncs::new().on_add(move |_: &Arc<ConfigMap>, _| {
            count.fetch_add(1, Ordering::SeqCst);
        }))
        .unwrap();
    let start = Instant::now();
    while late.load(Ordering::SeqCst) < 350 || !registration.has_synced() {
        assert!(start.elapsed() < Duration::from_secs(30), "late handler saw {}", late.load(Ordering::SeqCst));
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(late.load(Ordering::SeqCst), 350);
    cancel.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_cuts_resume_without_relist_or_lost_events() {
    let ns = support::namespace("watchcut");
    let client = support::client();
    let cms = ResourceClient::<ConfigMap>::namespaced(client.clone(), &ns);
    // The server ends each watch after ~1-2 s, so the stream is cut many times.
    let (informer, lw) = informer(client, &ns, Some(Duration::from_secs(1)));
    let adds = Arc::new(Mutex::new(Vec::<String>::new()));
    let seen = adds.clone();
    informer
        .add_event_handler(
            ResourceEventHandlerFuncs::new().on_add(move |c: &Arc<ConfigMap>, _| {
                seen.lock().unwrap().push(c.metadata.name.clone().unwrap().into())
            }),
        )
        .unwrap();
    let cancel = CancellationToken::new();
    informer.start(cancel.clone());
    synced(&informer, &cancel).await;

    for i in 0..60 {
        cms.create(&cm(&format!("c-{i}"), "x"), &CreateOptions::default()).await.unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    support::cache_converges(&informer, &cms).await;
    let watches = lw.watches.load(Ordering::SeqCst);
    assert!(watches >= 3, "expected the watch to be cut and resumed, saw {watches} watches");
    assert_eq!(lw.full_loads.load(Ordering::SeqCst), 1, "a watch cut must not cause a relist");
    let adds = adds.lock().unwrap().clone();
    assert_eq!(adds.len(), 60, "lost or duplicated events: {adds:?}");
    assert_eq!(adds.iter().collect::<BTreeSet<_>>().len(), 60);
    cancel.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restart_recovers_and_compaction_forces_a_relist() {
    // A private apiserver: this test restarts and compacts it.
    let env = TestEnv::start();
    let client = Client::new(support::config_for(&env, None)).unwrap();
    let ns = env.create_namespace("restart");
    let other = env.create_namespace("elsewhere");
    let cms = ResourceClient::<ConfigMap>::namespaced(client.clone(), &ns);
    for i in 0..20 {
        cms.create(&cm(&format!("a-{i}"), "x"), &CreateOptions::default()).await.unwrap();
    }
    let (informer, lw) = informer(client.clone(), &ns, None);
    let cancel = CancellationToken::new();
    informer.start(cancel.clone());
    synced(&informer, &cancel).await;

    // Restart: the watch breaks, the informer comes back and keeps up.
    env.restart_apiserver();
    cms.create(&cm("after-restart", "x"), &CreateOptions::default()).await.unwrap();
    cms.delete("a-0", &DeleteOptions::default()).await.unwrap();
    support::cache_converges(&informer, &cms).await;
    let loads_before = lw.full_loads.load(Ordering::SeqCst);

    // Move the store's revision on elsewhere, compact it, and restart: the
    // informer's last resourceVersion is now too old (410), so it relists.
    let others = Clientset::new(client.clone()).core_v1().config_maps(&other);
    for i in 0..20 {
        others.create(&cm(&format!("b-{i}"), "x"), &CreateOptions::default()).await.unwrap();
    }
    env.compact();
    env.restart_apiserver();
    cms.create(&cm("after-compaction", "x"), &CreateOptions::default()).await.unwrap();
    cms.delete("a-1", &DeleteOptions::default()).await.unwrap();
    support::cache_converges(&informer, &cms).await;
    assert!(lw.full_loads.load(Ordering::SeqCst) > loads_before, "a compacted resourceVersion must lead to a relist");
    let names: BTreeSet<String> = support::cache_state(&informer).into_keys().collect();
    assert!(names.contains("after-compaction") && !names.contains("a-1") && !names.contains("a-0"));
    cancel.cancel();
}

/// A client's list/watch that notes, for every object the client decoded,
/// whether it held managedFields: what reached the informer before its
/// transform.
#[derive(Clone)]
struct Peeking {
    inner: ResourceClient<ConfigMap>,
    decoded: Arc<Mutex<Vec<bool>>>,
}

impl Peeking {
    fn note(&self, cm: &ConfigMap) {
        self.decoded.lock().unwrap().push(cm.metadata.managed_fields.is_some());
    }
}

impl ListWatch<ConfigMap> for Peeking {
    fn list<'a>(&'a self, opts: &'a ListOptions) -> BoxFuture<'a, Result<ObjectList<ConfigMap>, rest::Error>> {
        self.list_with(opts, DecodeOptions::default())
    }
    fn watch<'a>(&'a self, opts: &'a ListOptions) -> BoxFuture<'a, Result<WatchStream<ConfigMap>, rest::Error>> {
        self.watch_with(opts, DecodeOptions::default())
    }
    fn list_with<'a>(
        &'a self,
        opts: &'a ListOptions,
        decode: DecodeOptions,
    ) -> BoxFuture<'a, Result<ObjectList<ConfigMap>, rest::Error>> {
        Box::pin(async move {
            let list = ListWatch::list_with(&self.inner, opts, decode).await?;
            list.items.iter().for_each(|cm| self.note(cm));
            Ok(list)
        })
    }
    fn watch_with<'a>(
        &'a self,
        opts: &'a ListOptions,
        decode: DecodeOptions,
    ) -> BoxFuture<'a, Result<WatchStream<ConfigMap>, rest::Error>> {
        Box::pin(async move {
            let stream = ListWatch::watch_with(&self.inner, opts, decode).await?;
            let this = self.clone();
            Ok(stream
                .inspect(move |event| {
                    if let Ok(WatchEvent::Added(cm) | WatchEvent::Modified(cm) | WatchEvent::Deleted(cm)) = event {
                        this.note(cm);
                    }
                })
                .boxed())
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn informers_decode_managed_fields_only_when_they_keep_them() {
    let ns = support::namespace("informer-mf");
    let cms = ResourceClient::<ConfigMap>::namespaced(support::client(), &ns);
    cms.create(&cm("listed", "1"), &CreateOptions::default()).await.unwrap();
    // Through a watch-list and through a list, then a watch.
    for (keep, watch_list) in [(false, true), (false, false), (true, true), (true, false)] {
        let lw = Peeking { inner: cms.clone(), decoded: Arc::default() };
        let options = ReflectorOptions { use_watch_list: watch_list, ..ReflectorOptions::default() };
        let mut builder = SharedIndexInformer::builder(lw.clone()).reflector_options(options);
        if keep {
            builder = builder.keep_managed_fields();
        }
        let informer = builder.build().unwrap();
        let cancel = CancellationToken::new();
        informer.start(cancel.clone());
        synced(&informer, &cancel).await;
        cms.create(&cm(&format!("watched-{keep}-{watch_list}"), "1"), &CreateOptions::default()).await.unwrap();
        support::cache_converges(&informer, &cms).await;
        cancel.cancel();

        let case = format!("keep {keep}, watch-list {watch_list}");
        let decoded = lw.decoded.lock().unwrap().clone();
        let stored = informer.store().list();
        assert!(decoded.len() >= stored.len(), "{case}: decoded {decoded:?} for {} stored", stored.len());
        assert!(decoded.iter().all(|&had| had == keep), "{case}: {decoded:?}");
        assert!(stored.iter().all(|c| c.metadata.managed_fields.as_ref().is_some_and(|m| !m.is_empty()) == keep));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn factory_informers_keep_managed_fields_only_when_asked() {
    let ns = support::namespace("factory-mf");
    let cms = ResourceClient::<ConfigMap>::namespaced(support::client(), &ns);
    cms.create(&cm("a", "1"), &CreateOptions::default()).await.unwrap();
    for keep in [false, true] {
        let mut builder = SharedInformerFactory::builder(support::client()).namespace(ns.clone());
        if keep {
            builder = builder.keep_managed_fields();
        }
        let factory = builder.build();
        let informer = factory.informer_for::<ConfigMap>();
        factory.start();
        let synced = tokio::time::timeout(Duration::from_secs(60), factory.wait_for_cache_sync()).await.unwrap();
        assert_eq!(synced.values().collect::<Vec<_>>(), [&true]);
        support::cache_converges(&informer, &cms).await;
        let stored = informer.store().list();
        assert_eq!(stored.len(), 1);
        assert_eq!(stored[0].metadata.managed_fields.is_some(), keep);
        factory.shutdown();
    }
}
