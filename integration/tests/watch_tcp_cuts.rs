//! Broken connections under an informer, against the real apiserver: a
//! TCP proxy on loopback sits between the client and the apiserver and
//! severs connections (a reset, or a plain close), during the initial
//! watch-list and while objects churn. As in client-go, a watch-list that
//! breaks before its initial events end is streamed again, and a watch that
//! breaks afterwards is resumed from the last resourceVersion: the state is
//! loaded once, no event is lost or delivered twice, and after every cut the
//! cache comes back equal to the server.

mod support;

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use k8s_client::api::core::v1::ConfigMap;
use k8s_client::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_client_runtime::Map;
use k8s_client_runtime::cache::{
    BackoffConfig, DeltaObject, ReflectorCounters, ReflectorOptions, ResourceEventHandlerFuncs, SharedIndexInformer,
    reflector, wait_for_cache_sync,
};
use k8s_client_runtime::rest::{self, CreateOptions, DeleteOptions, ListOptions, ResourceClient, WatchEvent};
use support::proxy::{Cut, Proxy, apiserver_addr};
use tokio_util::sync::CancellationToken;

/// A ConfigMap of about 20 KiB, so an event spans several TLS records and
/// HTTP/2 frames and a cut often lands inside one.
fn cm(name: &str, round: usize) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta { name: Some(name.into()), ..Default::default() },
        data: Some(Map::from([("v", format!("{round}-{}", "x".repeat(20 * 1024)))])),
        ..Default::default()
    }
}

/// Creates, updates and deletes ConfigMaps until `stop`, a round at a time
/// while holding `gate` (so holding it pauses the churn between rounds);
/// returns how many changes it made.
async fn churn(cms: ResourceClient<ConfigMap>, gate: Arc<tokio::sync::Mutex<()>>, stop: Arc<AtomicBool>) -> usize {
    let mut changes = 0;
    let mut round = 0;
    while !stop.load(Ordering::SeqCst) {
        round += 1;
        {
            let _round = gate.lock().await;
            for i in 0..6 {
                let name = format!("churn-{i}");
                let r = match (round + i) % 3 {
                    0 => cms.create(&cm(&name, round), &CreateOptions::default()).await.map(|_| ()),
                    1 => cms
                        .patch(
                            &name,
                            &rest::Patch::Merge(serde_json::json!({"data": {"r": round.to_string()}})),
                            &Default::default(),
                        )
                        .await
                        .map(|_| ()),
                    _ => cms.delete(&name, &DeleteOptions::default()).await.map(|_| ()),
                };
                // Not found / already exists are part of the churn.
                if r.is_ok() {
                    changes += 1;
                }
            }
        }
        tokio::time::sleep(Duration::from_millis(40)).await;
    }
    changes
}

/// One change as seen by a watcher: type, name and resourceVersion.
type Change = (&'static str, String, u64);

fn change(kind: &'static str, cm: &ConfigMap) -> Change {
    let rv = cm.metadata.resource_version.as_deref().unwrap_or_default().parse().unwrap_or(0);
    (kind, cm.metadata.name.as_deref().unwrap_or_default().to_owned(), rv)
}

/// The ConfigMap created last: once a watcher has seen it, it has seen
/// every change before it.
const END_MARKER: &str = "end-marker";

/// Every change to the namespace's ConfigMaps after `rv` up to the
/// creation of [`END_MARKER`], from one watch straight to the apiserver
/// (no proxy).
async fn watch_directly(cms: ResourceClient<ConfigMap>, rv: String) -> Vec<Change> {
    let mut stream = cms.watch(&ListOptions::default().resource_version(rv).timeout(1800)).await.unwrap();
    let mut seen = Vec::new();
    loop {
        match stream.next().await {
            Some(Ok(WatchEvent::Added(c))) => {
                seen.push(change("add", &c));
                if c.metadata.name.as_deref() == Some(END_MARKER) {
                    return seen;
                }
            }
            Some(Ok(WatchEvent::Modified(c))) => seen.push(change("update", &c)),
            Some(Ok(WatchEvent::Deleted(c))) => seen.push(change("delete", &c)),
            Some(Ok(WatchEvent::Bookmark(_))) => {}
            other => panic!("the direct watch ended: {other:?}"),
        }
    }
}

/// Waits up to `limit` for `done`, polling.
async fn wait_until(limit: Duration, what: impl Fn() -> String, done: impl Fn() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < limit, "waited {limit:?} for {}", what());
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Cuts during the initial watch-list, each after this many bytes of it.
const INITIAL_CUTS: usize = 10;
const INITIAL_CUT_AT: usize = 512 * 1024;
/// Cuts while objects churn, alternately reset and closed.
const CHURN_CUTS: usize = 90;
/// ConfigMaps of 20 KiB before the informer starts: an initial stream of
/// about 3 MiB, so a cut lands inside it.
const PRESENT: usize = 150;

/// What the informer's reflector and the proxy have done, and what the
/// reflector reported, for every wait's failure message.
fn state(counters: &ReflectorCounters, proxy: &Proxy, reported: &Mutex<Vec<(String, bool)>>) -> String {
    format!(
        "\nreflector: {} lists, {} watch-lists, {} watches, next attempt in {:?}, last error: {:?}\n{}\nreported: {:#?}",
        counters.lists(),
        counters.watch_lists(),
        counters.watches(),
        counters.next_attempt_in(),
        counters.last_error(),
        proxy.counts(),
        reported.lock().unwrap()
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn severed_tcp_connections_rewatch_without_relisting() {
    let ns = support::namespace("tcpcut");
    let direct = ResourceClient::<ConfigMap>::namespaced(support::client(), &ns);
    for i in 0..PRESENT {
        direct.create(&cm(&format!("pre-{i}"), 0), &CreateOptions::default()).await.unwrap();
    }
    let start_rv = direct.list(&ListOptions::default()).await.unwrap().metadata.resource_version.unwrap();
    let start: u64 = start_rv.parse().unwrap();
    let direct_watch = tokio::spawn(watch_directly(direct.clone(), start_rv.to_string()));

    let proxy = Proxy::start(apiserver_addr()).await;
    let lw = ResourceClient::<ConfigMap>::namespaced(proxy.client(1000.0, 2000), &ns);
    // What the reflector reports (a cut must not be one of them), kept
    // for the failure message; and what the handler is told, in order.
    let reported = Arc::new(Mutex::new(Vec::<(String, bool)>::new()));
    let errors = reported.clone();
    let notified = Arc::new(Mutex::new(Vec::<(Change, bool)>::new()));
    let (on_add, on_update, on_delete) = (notified.clone(), notified.clone(), notified.clone());
    // A small backoff cap: a failure that is not a cut (the only thing
    // that backs off) shows in the reported errors, not as a long stall.
    let backoff = BackoffConfig { max: Duration::from_secs(2), ..BackoffConfig::default() };
    let informer = SharedIndexInformer::builder(lw)
        .reflector_options(ReflectorOptions { name: "tcpcut".into(), backoff, ..ReflectorOptions::default() })
        .watch_error_handler(move |e: &reflector::Error| {
            let chain = std::iter::successors(Some(e as &dyn std::error::Error), |e| e.source())
                .map(|e| format!("{e} [{e:?}]"))
                .collect::<Vec<_>>()
                .join(" <- ");
            let gone = e.rest_error().is_some_and(|e| e.is_gone());
            errors.lock().unwrap().push((chain, gone));
        })
        .build()
        .unwrap();
    informer
        .add_event_handler(
            ResourceEventHandlerFuncs::new()
                .on_add(move |c: &Arc<ConfigMap>, initial| on_add.lock().unwrap().push((change("add", c), initial)))
                .on_update(move |_, c: &Arc<ConfigMap>| on_update.lock().unwrap().push((change("update", c), false)))
                .on_delete(move |c: &DeltaObject<ConfigMap>| {
                    let c = match c {
                        DeltaObject::Object(c) => change("delete", c),
                        DeltaObject::DeletedFinalStateUnknown(d) => {
                            ("delete (final state unknown)", d.key.to_string(), 0)
                        }
                    };
                    on_delete.lock().unwrap().push((c, false));
                }),
        )
        .unwrap();
    let counters = informer.reflector_counters();
    let state = || state(&counters, &proxy, &reported);
    let cancel = CancellationToken::new();

    // The initial watch-list, cut part-way through its events again and
    // again: each time it is streamed again from the start, and what the
    // broken attempts delivered never reaches the cache or the handler.
    // Each cut is for a connection accepted after the one before, so none
    // can land on a connection that already carried the whole initial list.
    let cuts: Vec<(usize, Cut)> =
        (0..INITIAL_CUTS).map(|n| (INITIAL_CUT_AT, if n % 2 == 0 { Cut::Reset } else { Cut::Close })).collect();
    proxy.arm(&cuts);
    informer.start(cancel.clone());
    for n in 0..INITIAL_CUTS {
        wait_until(Duration::from_secs(60), || format!("initial cut {n}{}", state()), || proxy.self_cuts() > n).await;
        assert!(!informer.has_synced(), "the initial watch-list ended before cut {n}: make it longer{}", state());
    }
    let synced = tokio::time::timeout(Duration::from_secs(60), wait_for_cache_sync(&cancel, &[&informer])).await;
    assert!(matches!(synced, Ok(true)), "informer did not sync{}", state());
    let initial_attempts = counters.watch_lists();
    println!(
        "{INITIAL_CUTS} cuts during the initial watch-list: {initial_attempts} watch-lists, {} lists",
        counters.lists()
    );
    assert_eq!(counters.lists(), 0, "a broken watch-list is streamed again, not replaced by a list{}", state());
    assert_eq!(initial_attempts, INITIAL_CUTS as u64 + 1, "{}", state());
    wait_until(
        Duration::from_secs(30),
        || format!("the initial adds{}", state()),
        || notified.lock().unwrap().len() >= PRESENT,
    )
    .await;
    {
        let notified = notified.lock().unwrap();
        let names: HashSet<&str> = notified.iter().map(|((_, name, _), _)| name.as_str()).collect();
        assert_eq!((notified.len(), names.len()), (PRESENT, PRESENT), "each present object added once");
        assert!(notified.iter().all(|((kind, _, _), initial)| *kind == "add" && *initial));
    }
    support::cache_converges_or(&informer, &direct, state).await;

    // Cuts while objects churn: each waits until the watch has delivered
    // an event (a watch that ends within a second with nothing is, as in
    // client-go, taken for a misbehaving server and relisted), then severs
    // every connection, waits for the next watch, pauses the churn and
    // waits for the cache to equal the server.
    let gate = Arc::new(tokio::sync::Mutex::new(()));
    let stop = Arc::new(AtomicBool::new(false));
    let churner = tokio::spawn(churn(direct.clone(), gate.clone(), stop.clone()));
    let cut_started = Instant::now();
    let mut watched_from = informer.last_sync_resource_version();
    for n in 0..CHURN_CUTS {
        // The reflector's resourceVersion moves with each event the
        // current watch delivers.
        wait_until(
            Duration::from_secs(30),
            || format!("an event before cut {n}{}", state()),
            || informer.last_sync_resource_version() != watched_from,
        )
        .await;
        let before = counters.watches();
        let how = if n % 2 == 0 { Cut::Reset } else { Cut::Close };
        proxy.sever(how);
        wait_until(
            Duration::from_secs(45),
            || format!("a watch after cut {n} ({how:?}){}", state()),
            || counters.watches() > before,
        )
        .await;
        watched_from = informer.last_sync_resource_version();
        let paused = gate.lock().await;
        support::cache_converges_or(&informer, &direct, || format!("after cut {n} ({how:?}){}", state())).await;
        drop(paused);
    }
    stop.store(true, Ordering::SeqCst);
    let changes = churner.await.unwrap();
    support::cache_converges_or(&informer, &direct, state).await;
    let cut_time = cut_started.elapsed();

    // Every change the apiserver made after the start, exactly once and in
    // order, as a watch that was never cut saw them.
    direct.create(&cm(END_MARKER, 0), &CreateOptions::default()).await.unwrap();
    let seen_marker =
        |n: &Vec<(Change, bool)>| n.iter().any(|((kind, name, _), _)| *kind == "add" && name == END_MARKER);
    wait_until(
        Duration::from_secs(30),
        || format!("the handler to see the last change{}", state()),
        || seen_marker(&notified.lock().unwrap()),
    )
    .await;
    let server_changes = tokio::time::timeout(Duration::from_secs(30), direct_watch).await.unwrap().unwrap();
    let after_start =
        |n: &Vec<(Change, bool)>| -> Vec<Change> { n.iter().map(|(c, _)| c.clone()).filter(|c| c.2 > start).collect() };
    let informer_changes = after_start(&notified.lock().unwrap());

    let (lists, watch_lists, watches) = (counters.lists(), counters.watch_lists(), counters.watches());
    let reported = reported.lock().unwrap().clone();
    let gone = reported.iter().filter(|(_, gone)| *gone).count() as u64;
    println!(
        "{} cuts survived ({INITIAL_CUTS} in the initial watch-list, {CHURN_CUTS} during churn, {cut_time:.1?}), \
         {changes} changes, {} events delivered, {} connections: relists {}, watch-lists {watch_lists}, watches {watches}, 410s {gone}",
        INITIAL_CUTS + CHURN_CUTS,
        informer_changes.len(),
        proxy.accepted(),
        lists + watch_lists - initial_attempts,
    );
    // A cut is an end of a watch, never an error; only a 410 (the
    // resourceVersion compacted meanwhile) may be reported.
    let not_gone: Vec<&String> = reported.iter().filter(|(_, gone)| !gone).map(|(e, _)| e).collect();
    assert!(not_gone.is_empty(), "cuts were reported as errors: {not_gone:#?}");
    assert_eq!(
        lists + watch_lists - initial_attempts,
        gone,
        "a broken connection must not cause a relist, only a 410 may (lists {lists}, watch-lists {watch_lists}, watches {watches})"
    );
    assert!(watches >= CHURN_CUTS as u64, "every cut is followed by a new watch: {watches}");
    if gone == 0 {
        let mut unique = HashSet::new();
        let duplicated: Vec<_> = informer_changes.iter().filter(|c| !unique.insert((c.1.clone(), c.2))).collect();
        assert!(duplicated.is_empty(), "delivered twice: {duplicated:?}");
        let lost: Vec<_> = server_changes.iter().filter(|c| !informer_changes.contains(c)).collect();
        assert!(lost.is_empty(), "lost {} of {} changes: {lost:?}", lost.len(), server_changes.len());
        assert_eq!(informer_changes, server_changes, "the handler saw the server's changes in the server's order");
    }
    cancel.cancel();
}
