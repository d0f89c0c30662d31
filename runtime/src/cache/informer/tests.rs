use std::collections::BTreeMap;
use std::sync::atomic::AtomicUsize;

use parking_lot::Mutex as PlMutex;

use super::*;

mod atomic;
mod metrics;
use crate::cache::list_watch::scripted::{Scripted, api_error, page};
use crate::cache::reflector::BackoffConfig;
use crate::cache::store::{IndexFn, Indexers};
use crate::rest::WatchEvent;
use crate::selector::LabelSelector;
use crate::testing::{Pod, pod};

fn pod_rv(name: &str, rv: &str) -> Pod {
    let mut p = pod("ns", name, "node");
    p.metadata.resource_version = Some(rv.to_owned());
    p
}

fn options() -> ReflectorOptions {
    ReflectorOptions {
        use_watch_list: false,
        backoff: BackoffConfig { jitter: 0.0, ..BackoffConfig::default() },
        ..ReflectorOptions::default()
    }
}

fn informer(lw: &Arc<Scripted<Pod>>, resync: Duration) -> SharedIndexInformer<Pod> {
    informer_on(QueueKind::default(), lw, resync)
}

fn informer_on(kind: QueueKind, lw: &Arc<Scripted<Pod>>, resync: Duration) -> SharedIndexInformer<Pod> {
    SharedIndexInformer::builder(Arc::clone(lw))
        .reflector_options(options())
        .resync_period(resync)
        .queue(kind)
        .build()
        .unwrap()
}

/// Every queue, for the cases where their semantics agree.
const EVERY_KIND: [QueueKind; 3] = [QueueKind::RealFifo, QueueKind::RealFifoPerObject, QueueKind::DeltaFifo];

#[derive(Debug, Clone, PartialEq, Eq)]
enum Ev {
    Add(String, bool),
    Update(String, String, String),
    Delete(String, bool),
}

fn name(p: &Pod) -> String {
    p.metadata.name.clone().unwrap_or_default()
}

fn rv(p: &Pod) -> String {
    p.metadata.resource_version.clone().unwrap_or_default()
}

#[derive(Default)]
struct Recorder(PlMutex<Vec<Ev>>);

impl Recorder {
    fn events(&self) -> Vec<Ev> {
        self.0.lock().clone()
    }
}

impl ResourceEventHandler<Pod> for Recorder {
    fn on_add(&self, obj: &Arc<Pod>, initial: bool) {
        self.0.lock().push(Ev::Add(name(obj), initial));
    }
    fn on_update(&self, old: &Arc<Pod>, new: &Arc<Pod>) {
        self.0.lock().push(Ev::Update(name(new), rv(old), rv(new)));
    }
    fn on_delete(&self, obj: &DeltaObject<Pod>) {
        let n = obj.object().map(|o| name(o)).unwrap_or_default();
        self.0.lock().push(Ev::Delete(n, obj.is_tombstone()));
    }
}

/// Lets every task run until all are idle (time is paused, so this only
/// advances the clock once nothing else can run).
async fn settle() {
    tokio::time::sleep(Duration::from_millis(10)).await;
}

fn sorted_names(store: &Store<Pod>) -> Vec<String> {
    let mut v: Vec<_> = store.list().iter().map(|p| name(p)).collect();
    v.sort();
    v
}

#[tokio::test(start_paused = true)]
async fn delivers_adds_updates_deletes_and_relist_tombstones() {
    // The update to "a" arrives while "a" is still queued: the RealFIFO
    // hands it over in the order it came, after "b"'s add...
    delivers_on(
        QueueKind::RealFifo,
        [Ev::Add("a".into(), true), Ev::Add("b".into(), true), Ev::Update("a".into(), "1".into(), "11".into())],
    )
    .await;
    // (The same with a relist as a change per object.)
    delivers_on(
        QueueKind::RealFifoPerObject,
        [Ev::Add("a".into(), true), Ev::Add("b".into(), true), Ev::Update("a".into(), "1".into(), "11".into())],
    )
    .await;
    // ...the DeltaFIFO with "a"'s other deltas, before "b".
    delivers_on(
        QueueKind::DeltaFifo,
        [Ev::Add("a".into(), true), Ev::Update("a".into(), "1".into(), "11".into()), Ev::Add("b".into(), true)],
    )
    .await;
}

async fn delivers_on(kind: QueueKind, first: [Ev; 3]) {
    let lw = Arc::new(Scripted::default());
    lw.push_list(Ok(page(vec![pod_rv("a", "1"), pod_rv("b", "2")], "10", None)));
    lw.push_watch(
        vec![
            Ok(WatchEvent::Modified(pod_rv("a", "11"))),
            Ok(WatchEvent::Deleted(pod_rv("b", "12"))),
            Ok(WatchEvent::Added(pod_rv("c", "13"))),
            Err(api_error(410, "Expired")),
        ],
        false,
    );
    // "a" was deleted while the watch was down; "c" is unchanged.
    lw.push_list(Ok(page(vec![pod_rv("c", "13")], "14", None)));
    lw.push_watch(vec![], true);

    let inf = SharedIndexInformer::builder(Arc::clone(&lw)).reflector_options(options()).queue(kind).build().unwrap();
    let rec = Arc::new(Recorder::default());
    let reg = inf.add_event_handler(Arc::clone(&rec)).unwrap();
    assert!(!inf.has_synced() && !reg.has_synced());
    let cancel = CancellationToken::new();
    let task = inf.start(cancel.clone());
    settle().await;
    assert!(inf.has_synced() && reg.has_synced());
    tokio::time::sleep(Duration::from_secs(2)).await;

    let mut want = first.to_vec();
    want.extend([
        Ev::Delete("b".into(), false),
        Ev::Add("c".into(), false),
        // The relist's unchanged "c" is a resync-like update: not for a
        // handler without resync. "a" is gone: a tombstone.
        Ev::Delete("a".into(), true),
    ]);
    assert_eq!(rec.events(), want, "{kind:?}");
    assert_eq!(sorted_names(&inf.store()), ["c"]);
    assert_eq!(inf.last_sync_resource_version(), "14");
    // The cache holds the relist at 14 (its newest object is at 13).
    assert_eq!(inf.last_store_sync_resource_version(), "14", "{kind:?}");
    cancel.cancel();
    task.await.unwrap().unwrap();
    assert!(inf.is_stopped());
    assert!(matches!(inf.add_event_handler(Recorder::default()), Err(Error::Stopped)));
}

/// client-go 1.36: a bookmark moves the cache's resourceVersion once the
/// events before it are applied, so a cache whose selector hides every
/// write (nothing but bookmarks comes) still reaches newer versions; the
/// DeltaFIFO, whose order is per object, leaves bookmarks out.
#[tokio::test(start_paused = true)]
async fn bookmarks_move_the_caches_version_after_the_events_before_them() {
    use crate::rest::Bookmark;
    let bookmark = |rv: &str| {
        Ok(WatchEvent::Bookmark(Bookmark { resource_version: rv.to_owned(), annotations: Default::default() }))
    };
    for (kind, want) in [(QueueKind::RealFifo, "30"), (QueueKind::DeltaFifo, "11")] {
        let lw = Arc::new(Scripted::default());
        lw.push_list(Ok(page(vec![pod_rv("a", "1")], "10", None)));
        lw.push_watch(vec![Ok(WatchEvent::Modified(pod_rv("a", "11"))), bookmark("20"), bookmark("30")], true);
        let inf = SharedIndexInformer::builder(Arc::clone(&lw)).reflector_options(options()).queue(kind).build().unwrap();
        let cancel = CancellationToken::new();
        let task = inf.start(cancel.clone());
        settle().await;
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert_eq!(inf.last_sync_resource_version(), "30", "{kind:?}");
        assert_eq!(inf.last_store_sync_resource_version(), want, "{kind:?}");
        let reached = inf.wait_for_store_resource_version("25", Duration::from_millis(100)).await;
        assert_eq!(reached.is_ok(), kind == QueueKind::RealFifo, "{kind:?}");
        cancel.cancel();
        task.await.unwrap().unwrap();
    }
}

/// Blocks in its first call until released.
struct Gate {
    release: PlMutex<Option<std::sync::mpsc::Receiver<()>>>,
    seen: AtomicUsize,
}

impl ResourceEventHandler<Pod> for Gate {
    fn on_add(&self, _: &Arc<Pod>, _: bool) {
        if let Some(rx) = self.release.lock().take() {
            let _ = rx.recv();
        }
        self.seen.fetch_add(1, Ordering::SeqCst);
    }
}

#[derive(Default)]
struct Count(AtomicUsize);

impl ResourceEventHandler<Pod> for Count {
    fn on_add(&self, _: &Arc<Pod>, _: bool) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blocked_handler_stalls_neither_other_handlers_nor_the_cache() {
    const N: usize = 2000;
    let lw = Arc::new(Scripted::default());
    let pods = (0..N).map(|i| pod_rv(&format!("p{i}"), "1")).collect();
    lw.push_list(Ok(page(pods, "10", None)));
    lw.push_watch(vec![], true);
    let inf = informer(&lw, Duration::ZERO);
    let (release, gate_rx) = std::sync::mpsc::channel();
    let slow = Arc::new(Gate { release: PlMutex::new(Some(gate_rx)), seen: AtomicUsize::new(0) });
    let fast = Arc::new(Count::default());
    let slow_reg = inf.add_event_handler(Arc::clone(&slow)).unwrap();
    let fast_reg = inf.add_event_handler(Arc::clone(&fast)).unwrap();
    let cancel = CancellationToken::new();
    let task = inf.start(cancel.clone());

    let caught_up = tokio::time::timeout(Duration::from_secs(20), async {
        while !(fast_reg.has_synced() && inf.store().len() == N) {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
    assert!(caught_up.is_ok(), "fast handler got {} of {N}", fast.0.load(Ordering::SeqCst));
    assert_eq!(fast.0.load(Ordering::SeqCst), N);
    assert!(inf.has_synced());
    assert_eq!(slow.seen.load(Ordering::SeqCst), 0);
    assert!(!slow_reg.has_synced(), "the blocked handler has not seen the initial list");
    assert_eq!((slow_reg.pending(), fast_reg.pending(), inf.queued()), (N, 0, 0), "the backlog is the slow handler's");

    release.send(()).unwrap();
    let drained = tokio::time::timeout(Duration::from_secs(20), async {
        while !slow_reg.has_synced() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
    assert!(drained.is_ok());
    assert_eq!(slow.seen.load(Ordering::SeqCst), N);
    assert_eq!(slow_reg.pending(), 0);
    cancel.cancel();
    task.await.unwrap().unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_late_handler_first_gets_the_current_objects_as_adds() {
    for kind in EVERY_KIND {
        a_late_handler_first_gets_the_current_objects_as_adds_on(kind).await;
    }
}

async fn a_late_handler_first_gets_the_current_objects_as_adds_on(kind: QueueKind) {
    eprintln!("queue: {kind:?}");
    let lw = Arc::new(Scripted::default());
    lw.push_list(Ok(page(vec![pod_rv("a", "1"), pod_rv("b", "2")], "10", None)));
    lw.push_watch(vec![Ok(WatchEvent::Added(pod_rv("c", "11")))], true);
    let inf = informer_on(kind, &lw, Duration::ZERO);
    let cancel = CancellationToken::new();
    let task = inf.start(cancel.clone());
    assert!(wait_for_cache_sync(&cancel, &[&inf]).await);
    settle().await;

    let rec = Arc::new(Recorder::default());
    let reg = inf.add_event_handler(Arc::clone(&rec)).unwrap();
    assert!(!reg.has_synced(), "replayed objects are not delivered yet");
    settle().await;
    assert!(reg.has_synced());
    let mut events = rec.events();
    events.sort_by_key(|e| format!("{e:?}"));
    assert_eq!(events, [Ev::Add("a".into(), true), Ev::Add("b".into(), true), Ev::Add("c".into(), true)]);
    cancel.cancel();
    task.await.unwrap().unwrap();
}

#[tokio::test(start_paused = true)]
async fn resyncs_reach_only_handlers_whose_period_is_due() {
    for kind in EVERY_KIND {
        resyncs_reach_only_handlers_whose_period_is_due_on(kind).await;
    }
}

async fn resyncs_reach_only_handlers_whose_period_is_due_on(kind: QueueKind) {
    eprintln!("queue: {kind:?}");
    let lw = Arc::new(Scripted::default());
    lw.push_list(Ok(page(vec![pod_rv("a", "1")], "10", None)));
    lw.push_watch(vec![], true);
    let inf = informer_on(kind, &lw, Duration::from_secs(30));
    let every_10s = Arc::new(Recorder::default());
    let never = Arc::new(Recorder::default());
    let default_30s = Arc::new(Recorder::default());
    inf.add_event_handler_with_resync_period(Arc::clone(&every_10s), Duration::from_secs(10)).unwrap();
    inf.add_event_handler_with_resync_period(Arc::clone(&never), Duration::ZERO).unwrap();
    inf.add_event_handler(Arc::clone(&default_30s)).unwrap();
    let cancel = CancellationToken::new();
    let task = inf.start(cancel.clone());
    tokio::time::sleep(Duration::from_secs(65)).await;
    cancel.cancel();
    task.await.unwrap().unwrap();

    let updates = |r: &Recorder| r.events().iter().filter(|e| matches!(e, Ev::Update(..))).count();
    assert_eq!(updates(&every_10s), 6);
    assert_eq!(updates(&default_30s), 2);
    assert_eq!(updates(&never), 0);
    assert_eq!(never.events(), [Ev::Add("a".into(), true)]);
}

#[tokio::test(start_paused = true)]
async fn an_empty_initial_list_is_synced_and_waiting_honours_cancel() {
    for kind in EVERY_KIND {
        an_empty_initial_list_is_synced_and_waiting_honours_cancel_on(kind).await;
    }
}

async fn an_empty_initial_list_is_synced_and_waiting_honours_cancel_on(kind: QueueKind) {
    eprintln!("queue: {kind:?}");
    let lw = Arc::new(Scripted::default());
    lw.push_list(Ok(page(vec![], "10", None)));
    lw.push_watch(vec![], true);
    let inf = informer_on(kind, &lw, Duration::ZERO);
    let reg = inf.add_event_handler(Recorder::default()).unwrap();
    let cancel = CancellationToken::new();
    let task = inf.start(cancel.clone());
    assert!(wait_for_cache_sync(&cancel, &[&inf, &reg]).await);
    assert!(matches!(inf.run(cancel.clone()).await, Err(Error::AlreadyStarted)));
    cancel.cancel();
    task.await.unwrap().unwrap();

    // A list that never answers: never synced; waiting ends with the token.
    let stuck = informer_on(kind, &Arc::new(Scripted::default()), Duration::ZERO);
    let cancel = CancellationToken::new();
    let task = stuck.start(cancel.clone());
    let stop = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(5)).await;
        stop.cancel();
    });
    assert!(!wait_for_cache_sync(&cancel, &[&stuck]).await);
    assert!(!stuck.has_synced());
    task.await.unwrap().unwrap();
}

#[tokio::test(start_paused = true)]
async fn the_watch_error_hook_sees_failures() {
    let lw = Arc::new(Scripted::<Pod>::default());
    lw.push_list(Err(api_error(403, "Forbidden")));
    lw.push_list(Ok(page(vec![], "10", None)));
    lw.push_watch(vec![], true);
    let errors = Arc::new(PlMutex::new(Vec::new()));
    let seen = Arc::clone(&errors);
    let inf = SharedIndexInformer::builder(Arc::clone(&lw))
        .reflector_options(options())
        .watch_error_handler(move |e| seen.lock().push(e.rest_error().and_then(|e| e.code())))
        .build()
        .unwrap();
    let cancel = CancellationToken::new();
    let task = inf.start(cancel.clone());
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(inf.has_synced());
    assert_eq!(*errors.lock(), [Some(403)]);
    assert!(inf.set_watch_error_handler(|_| {}).is_err());
    cancel.cancel();
    task.await.unwrap().unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_custom_transform_runs_before_storing() {
    let lw = Arc::new(Scripted::default());
    lw.push_list(Ok(page(vec![pod_rv("a", "1")], "10", None)));
    lw.push_watch(vec![], true);
    let inf = SharedIndexInformer::builder(Arc::clone(&lw))
        .reflector_options(options())
        .transform(|p: &mut Pod| p.node = "transformed".into())
        .build()
        .unwrap();
    let cancel = CancellationToken::new();
    let task = inf.start(cancel.clone());
    settle().await;
    let lister = inf.lister();
    assert_eq!(lister.namespace("ns").get("a").unwrap().node, "transformed");
    assert!(lister.namespace("other").get("a").unwrap_err().is_not_found());
    assert_eq!(lister.list(&LabelSelector::everything()).len(), 1);
    cancel.cancel();
    task.await.unwrap().unwrap();
}

/// A pod with two `managedFields` entries, to see the default transform at work.
fn managed(name: &str) -> Pod {
    let mut m = pod("ns", name, "");
    m.metadata.resource_version = Some("1".into());
    m.metadata.managed_fields = Some(serde_json::json!([{"manager": "kubectl"}, {"manager": "controller"}]));
    m
}

/// How a test informer is told to store objects.
#[derive(Debug, Clone, Copy)]
enum Storing {
    Default,
    Kept,
    Transformed,
}

/// How many `managedFields` each stored object holds, and the decode
/// options each list and watch call was given.
async fn stored_managed_fields(storing: Storing) -> (Vec<usize>, Vec<DecodeOptions>) {
    let lw = Arc::new(Scripted::default());
    lw.push_list(Ok(page(vec![managed("a")], "10", None)));
    lw.push_watch(vec![Ok(WatchEvent::Added(managed("b")))], true);
    let mut builder = SharedIndexInformer::builder(Arc::clone(&lw)).reflector_options(options());
    match storing {
        Storing::Default => {}
        Storing::Kept => builder = builder.keep_managed_fields(),
        Storing::Transformed => builder = builder.transform(|p: &mut Pod| p.node = "transformed".into()),
    }
    let inf = builder.build().unwrap();
    let cancel = CancellationToken::new();
    let task = inf.start(cancel.clone());
    settle().await;
    cancel.cancel();
    task.await.unwrap().unwrap();
    let mut counts: Vec<_> = inf
        .store()
        .list()
        .iter()
        .map(|m| m.metadata.managed_fields.as_ref().and_then(|f| f.as_array()).map_or(0, Vec::len))
        .collect();
    counts.sort();
    (counts, lw.calls().iter().map(|c| c.decode).collect())
}

#[tokio::test(start_paused = true)]
async fn managed_fields_are_dropped_unless_kept() {
    // The scripted list/watch ignores the options: the default transform
    // still drops what it was asked to skip.
    let (skip, keep) = (DecodeOptions::WITHOUT_MANAGED_FIELDS, DecodeOptions::KEEP_ALL);
    assert_eq!(stored_managed_fields(Storing::Default).await, (vec![0, 0], vec![skip, skip]));
    assert_eq!(stored_managed_fields(Storing::Kept).await, (vec![2, 2], vec![keep, keep]));
    assert_eq!(stored_managed_fields(Storing::Transformed).await, (vec![2, 2], vec![keep, keep]));
}

#[tokio::test(start_paused = true)]
async fn removed_handlers_stop_receiving() {
    let lw = Arc::new(Scripted::default());
    lw.push_list(Ok(page(vec![pod_rv("a", "1")], "10", None)));
    lw.push_watch(vec![], true);
    let inf = informer(&lw, Duration::ZERO);
    let rec = Arc::new(Recorder::default());
    let reg = inf.add_event_handler(Arc::clone(&rec)).unwrap();
    assert_eq!(inf.handler_count(), 1);
    assert!(inf.remove_event_handler(&reg));
    assert!(!inf.remove_event_handler(&reg));
    let cancel = CancellationToken::new();
    let task = inf.start(cancel.clone());
    settle().await;
    assert!(rec.events().is_empty());
    cancel.cancel();
    task.await.unwrap().unwrap();
}

#[tokio::test(start_paused = true)]
async fn by_default_watch_list_is_tried_and_a_rejection_falls_back_to_list() {
    use crate::cache::list_watch::scripted::Verb;
    let lw = Arc::new(Scripted::default());
    lw.push_watch_err(api_error(422, "Invalid"));
    lw.push_list(Ok(page(vec![pod_rv("a", "1")], "10", None)));
    lw.push_watch(vec![Ok(WatchEvent::Added(pod_rv("b", "11")))], true);
    let inf = SharedIndexInformer::builder(Arc::clone(&lw)).build().unwrap();
    let rec = Arc::new(Recorder::default());
    inf.add_event_handler(Arc::clone(&rec)).unwrap();
    let cancel = CancellationToken::new();
    let task = inf.start(cancel.clone());
    assert!(wait_for_cache_sync(&cancel, &[&inf]).await);
    settle().await;
    let calls: Vec<_> = lw.calls().iter().map(|c| (c.verb, c.opts.send_initial_events)).collect();
    assert_eq!(calls, [(Verb::Watch, Some(true)), (Verb::List, None), (Verb::Watch, None)]);
    assert_eq!(rec.events(), [Ev::Add("a".into(), true), Ev::Add("b".into(), false)]);
    cancel.cancel();
    task.await.unwrap().unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_watch_list_informer_syncs_at_the_initial_events_end_bookmark() {
    for kind in EVERY_KIND {
        a_watch_list_informer_syncs_at_the_initial_events_end_bookmark_on(kind).await;
    }
}

async fn a_watch_list_informer_syncs_at_the_initial_events_end_bookmark_on(kind: QueueKind) {
    eprintln!("queue: {kind:?}");
    use crate::rest::Bookmark;
    let lw = Arc::new(Scripted::default());
    let end = Bookmark {
        resource_version: "12".into(),
        annotations: BTreeMap::from([("k8s.io/initial-events-end".to_owned(), "true".to_owned())]),
    };
    lw.push_watch(
        vec![
            Ok(WatchEvent::Added(pod_rv("a", "5"))),
            Ok(WatchEvent::Added(pod_rv("b", "6"))),
            Ok(WatchEvent::Bookmark(end)),
            Ok(WatchEvent::Modified(pod_rv("a", "13"))),
        ],
        true,
    );
    let inf = SharedIndexInformer::builder(Arc::clone(&lw)).queue(kind).build().unwrap();
    let rec = Arc::new(Recorder::default());
    let reg = inf.add_event_handler(Arc::clone(&rec)).unwrap();
    let cancel = CancellationToken::new();
    let task = inf.start(cancel.clone());
    assert!(wait_for_cache_sync(&cancel, &[&inf, &reg]).await);
    settle().await;
    let mut events = rec.events();
    events.sort_by_key(|e| format!("{e:?}"));
    assert_eq!(
        events,
        [Ev::Add("a".into(), true), Ev::Add("b".into(), true), Ev::Update("a".into(), "5".into(), "13".into())]
    );
    assert_eq!(inf.last_sync_resource_version(), "13");
    assert_eq!(lw.calls().len(), 1);
    cancel.cancel();
    task.await.unwrap().unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_panicking_handler_keeps_receiving() {
    struct Flaky(PlMutex<Vec<String>>);
    impl ResourceEventHandler<Pod> for Flaky {
        fn on_add(&self, obj: &Arc<Pod>, _: bool) {
            if name(obj) == "bad" {
                panic!("handler bug");
            }
            self.0.lock().push(name(obj));
        }
    }
    let lw = Arc::new(Scripted::default());
    lw.push_list(Ok(page(vec![pod_rv("bad", "1"), pod_rv("good", "2")], "10", None)));
    lw.push_watch(vec![Ok(WatchEvent::Added(pod_rv("later", "11")))], true);
    let inf = informer(&lw, Duration::ZERO);
    let flaky = Arc::new(Flaky(PlMutex::new(Vec::new())));
    let reg = inf.add_event_handler(Arc::clone(&flaky)).unwrap();
    let cancel = CancellationToken::new();
    let task = inf.start(cancel.clone());
    settle().await;
    assert!(reg.has_synced());
    let mut seen = flaky.0.lock().clone();
    seen.sort();
    assert_eq!(seen, ["good", "later"]);
    cancel.cancel();
    task.await.unwrap().unwrap();
}

/// A panicking index function (or transform, or key function) stops the
/// informer, which is then failed with the panic's message: the wait for
/// sync ends at once, and `run` returns the error.
#[tokio::test(start_paused = true)]
async fn a_panic_in_an_index_function_fails_the_informer() {
    let lw = Arc::new(Scripted::default());
    lw.push_list(Ok(page(vec![pod_rv("a", "3")], "10", None)));
    lw.push_watch(vec![], true);
    let exploding: IndexFn<Pod> = Arc::new(|_: &Pod| -> Vec<String> { panic!("index function exploded") });
    let inf = SharedIndexInformer::builder(Arc::clone(&lw))
        .reflector_options(options())
        .indexers(Indexers::from([("boom".to_owned(), exploding)]))
        .build()
        .unwrap();
    let cancel = CancellationToken::new();
    let task = inf.start(cancel.clone());
    assert!(!wait_for_cache_sync(&cancel, &[&inf]).await, "a failed informer never syncs");
    assert!(!cancel.is_cancelled());
    assert_eq!(inf.failure().as_deref(), Some("index function exploded"));
    assert_eq!(HasSynced::failure(&inf).as_deref(), Some("index function exploded"));
    assert!(inf.is_stopped());
    match task.await.unwrap() {
        Err(Error::Panicked { message }) => assert_eq!(message, "index function exploded"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn filtering_handler_turns_transitions_into_adds_and_deletes() {
    let rec = Arc::new(Recorder::default());
    let on_node_a = FilteringResourceEventHandler::new(|p: &Pod| p.node == "a", Arc::clone(&rec));
    let on = |node: &str, rv: &str| {
        let mut p = pod_rv("x", rv);
        p.node = node.to_owned();
        Arc::new(p)
    };
    on_node_a.on_add(&on("b", "1"), true);
    on_node_a.on_update(&on("b", "1"), &on("a", "2"));
    on_node_a.on_update(&on("a", "2"), &on("a", "3"));
    on_node_a.on_update(&on("a", "3"), &on("b", "4"));
    on_node_a.on_delete(&DeltaObject::Object(on("b", "5")));
    on_node_a.on_delete(&DeltaObject::Object(on("a", "6")));
    assert_eq!(
        rec.events(),
        [
            Ev::Add("x".into(), false),
            Ev::Update("x".into(), "2".into(), "3".into()),
            Ev::Delete("x".into(), false),
            Ev::Delete("x".into(), false),
        ]
    );
}

/// The informer over a real `ResourceClient` and HTTP: the query
/// parameters the apiserver sees, and the watch-list stream decoded.
mod over_http {
    use serde_json::json;

    use super::*;
    use crate::cache::FilteredListWatch;
    use crate::rest::tests::server::{Reply, TestServer};
    use crate::rest::{ListOptions, ResourceClient};

    fn event(kind: &str, object: serde_json::Value) -> Vec<u8> {
        format!("{}\n", json!({"type": kind, "object": object})).into_bytes()
    }

    #[tokio::test]
    async fn watch_list_then_watch_over_a_resource_client() {
        let server = TestServer::start(|req, i| match i {
            0 if req.path.contains("sendInitialEvents=true") => Reply::Chunks {
                status: 200,
                chunks: vec![
                    event(
                        "ADDED",
                        json!({"metadata": {"name": "a", "namespace": "ns", "resourceVersion": "5",
                                "managedFields": [{"manager": "kubectl"}]}}),
                    ),
                    event(
                        "BOOKMARK",
                        json!({"kind": "Pod", "apiVersion": "v1", "metadata": {"resourceVersion": "7",
                                "annotations": {"k8s.io/initial-events-end": "true"}}}),
                    ),
                    event("ADDED", json!({"metadata": {"name": "b", "namespace": "ns", "resourceVersion": "8"}})),
                ],
            },
            _ => Reply::Hang,
        })
        .await;
        let client = ResourceClient::<Pod>::all(server.client());
        let lw = FilteredListWatch::new(client, |o: &mut ListOptions| {
            o.label_selector = Some("app=web".into());
        });
        let inf = SharedIndexInformer::builder(lw).build().unwrap();
        let cancel = CancellationToken::new();
        let task = inf.start(cancel.clone());
        let synced = tokio::time::timeout(Duration::from_secs(10), async {
            while !(inf.has_synced() && inf.store().len() == 2 && server.requests().len() == 2) {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
        .await;
        assert!(synced.is_ok(), "requests: {:?}", server.requests().iter().map(|r| &r.path).collect::<Vec<_>>());

        let paths: Vec<String> = server.requests().iter().map(|r| r.path.clone()).collect();
        let first = &paths[0];
        assert!(first.starts_with("/api/v1/pods?"), "{first}");
        for p in [
            "watch=true",
            "allowWatchBookmarks=true",
            "sendInitialEvents=true",
            "resourceVersionMatch=NotOlderThan",
            "labelSelector=app%3Dweb",
            "timeoutSeconds=",
        ] {
            assert!(first.contains(p), "{p} missing in {first}");
        }
        assert!(!first.contains("resourceVersion="), "{first}");
        let second = &paths[1];
        for p in ["watch=true", "resourceVersion=8", "labelSelector=app%3Dweb"] {
            assert!(second.contains(p), "{p} missing in {second}");
        }
        assert!(!second.contains("sendInitialEvents"), "{second}");
        let a = inf.lister().namespace("ns").get("a").unwrap();
        assert!(a.metadata.managed_fields.is_none(), "dropped by the default transform");
        assert_eq!(inf.last_sync_resource_version(), "8");
        cancel.cancel();
        task.await.unwrap().unwrap();
    }
}

#[tokio::test(start_paused = true)]
async fn a_handler_runs_in_the_span_of_its_options() {
    // A subscriber for this thread (the test's runtime runs every task on it),
    // so spans are real.
    let subscriber = tracing_subscriber::fmt().with_writer(std::io::sink).finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    let lw = Arc::new(Scripted::default());
    lw.push_list(Ok(page(vec![pod_rv("a", "1")], "10", None)));
    lw.push_watch(vec![], true);
    let inf = informer(&lw, Duration::ZERO);
    let spans = Arc::new(PlMutex::new(Vec::new()));
    let (in_span, plain) = (Arc::clone(&spans), Arc::clone(&spans));
    let record = |to: Arc<PlMutex<Vec<String>>>| {
        move |_: &Arc<Pod>, _: bool| {
            let name = tracing::Span::current().metadata().map_or("none", |m| m.name());
            to.lock().push(name.to_owned());
        }
    };
    inf.add_event_handler_with_options(
        ResourceEventHandlerFuncs::new().on_add(record(in_span)),
        HandlerOptions::new().span(tracing::info_span!("web_handler")),
    )
    .unwrap();
    inf.add_event_handler(ResourceEventHandlerFuncs::new().on_add(record(plain))).unwrap();
    let cancel = CancellationToken::new();
    let task = inf.start(cancel.clone());
    settle().await;
    let mut seen = spans.lock().clone();
    seen.sort();
    assert_eq!(seen, ["none", "web_handler"]);
    cancel.cancel();
    task.await.unwrap().unwrap();
}
