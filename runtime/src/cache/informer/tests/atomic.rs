//! Relists and resyncs through an informer, with the RealFIFO's atomic
//! events (the default) and without: client-go v0.37's controller tests
//! about them (`controller_test.go`), and ours.

use super::*;

/// Every notification, with the cache's resourceVersion of its object's key
/// when the handler ran ("" if absent), as upstream's `eventRecorder`.
struct StoreRecorder {
    store: Store<Pod>,
    events: PlMutex<Vec<(&'static str, String, String, String)>>,
}

impl StoreRecorder {
    fn new(inf: &SharedIndexInformer<Pod>) -> Arc<Self> {
        Arc::new(StoreRecorder { store: inf.store(), events: PlMutex::default() })
    }

    fn record(&self, action: &'static str, obj: &Pod) {
        let key = format!("ns/{}", name(obj));
        let in_store = self.store.get_by_key(&key).map(|p| rv(&p)).unwrap_or_default();
        self.events.lock().push((action, name(obj), rv(obj), in_store));
    }

    fn take(&self) -> Vec<(&'static str, String, String, String)> {
        std::mem::take(&mut *self.events.lock())
    }
}

impl ResourceEventHandler<Pod> for StoreRecorder {
    fn on_add(&self, obj: &Arc<Pod>, _: bool) {
        self.record("add", obj);
    }
    fn on_update(&self, _: &Arc<Pod>, new: &Arc<Pod>) {
        self.record("update", new);
    }
    fn on_delete(&self, obj: &DeltaObject<Pod>) {
        self.record("delete", obj.object().expect("a last state"));
    }
}

/// The RealFIFO, with atomic relists and without (upstream's `atomic`
/// true and false).
const REAL_FIFOS: [QueueKind; 2] = [QueueKind::RealFifo, QueueKind::RealFifoPerObject];

// TestReplaceEvents: a relist's notifications, atomic or not, are the
// same, and each handler sees the cache holding what it is told of. The
// initial objects come by watch after an empty list; the watch then
// expires and the relist replaces them.
#[tokio::test(start_paused = true)]
async fn replace_events() {
    type Case = (&'static str, Vec<Pod>, Vec<Pod>, &'static str, Vec<(&'static str, &'static str, &'static str, &'static str)>);
    let table: Vec<Case> = vec![
        (
            "Create with no initial objects",
            vec![],
            vec![pod_rv("pod-1", "1")],
            "1",
            vec![("add", "pod-1", "1", "1")],
        ),
        (
            "Delete all objects",
            vec![pod_rv("pod-1", "1"), pod_rv("pod-3", "2")],
            vec![],
            "2",
            vec![("delete", "pod-1", "1", ""), ("delete", "pod-3", "2", "")],
        ),
        (
            "Create, update, delete",
            vec![pod_rv("pod-1", "1"), pod_rv("pod-2", "2"), pod_rv("pod-3", "3")],
            vec![pod_rv("pod-1", "4"), pod_rv("pod-2", "5"), pod_rv("pod-4", "6")],
            "6",
            vec![
                ("delete", "pod-3", "3", ""),
                ("update", "pod-1", "4", "4"),
                ("update", "pod-2", "5", "5"),
                ("add", "pod-4", "6", "6"),
            ],
        ),
    ];
    for kind in REAL_FIFOS {
        for (case, initial, replaced, replace_rv, want) in &table {
            let lw = Arc::new(Scripted::default());
            lw.push_list(Ok(page(vec![], "1", None)));
            let mut events: Vec<_> = initial.iter().map(|p| Ok(WatchEvent::Added(p.clone()))).collect();
            events.push(Err(api_error(410, "Expired")));
            lw.push_watch(events, false);
            lw.push_list(Ok(page(replaced.clone(), replace_rv, None)));
            lw.push_watch(vec![], true);
            let inf = informer_on(kind, &lw, Duration::ZERO);
            let rec = StoreRecorder::new(&inf);
            inf.add_event_handler(Arc::clone(&rec)).unwrap();
            let cancel = CancellationToken::new();
            let task = inf.start(cancel.clone());
            tokio::time::sleep(Duration::from_secs(5)).await;

            let mut history = rec.take();
            let initial_adds = history.drain(..initial.len()).map(|(action, ..)| action).collect::<Vec<_>>();
            assert!(initial_adds.iter().all(|a| *a == "add"), "{kind:?} {case}: {initial_adds:?}");
            // Upstream sorts a relist's deletions by key (client-go's come in
            // map order); ours come sorted with atomic relists.
            let deletions = history.iter().take_while(|(action, ..)| *action == "delete").count();
            if kind == QueueKind::RealFifoPerObject {
                history[..deletions].sort();
            }
            let want: Vec<_> = want
                .iter()
                .map(|(action, key, event_rv, store_rv)| (*action, (*key).to_owned(), (*event_rv).to_owned(), (*store_rv).to_owned()))
                .collect();
            assert_eq!(history, want, "{kind:?} {case}");
            assert_eq!(sorted_names(&inf.store()), replaced.iter().map(name).collect::<Vec<_>>(), "{kind:?} {case}");
            cancel.cancel();
            task.await.unwrap().unwrap();
        }
    }
}

// TestResetWatch: changes missed while the watch was down come from the
// relist, as an update and an add outside the initial list.
#[tokio::test(start_paused = true)]
async fn reset_watch() {
    for kind in REAL_FIFOS {
        let lw = Arc::new(Scripted::default());
        lw.push_list(Ok(page(vec![pod_rv("pod-1", "1")], "1", None)));
        lw.push_watch(vec![Err(api_error(410, "Expired"))], false);
        lw.push_list(Ok(page(vec![pod_rv("pod-1", "2"), pod_rv("pod-2", "3")], "3", None)));
        lw.push_watch(vec![], true);
        let inf = informer_on(kind, &lw, Duration::ZERO);
        let rec = Arc::new(Recorder::default());
        inf.add_event_handler(Arc::clone(&rec)).unwrap();
        let cancel = CancellationToken::new();
        let task = inf.start(cancel.clone());
        tokio::time::sleep(Duration::from_secs(5)).await;
        assert_eq!(
            rec.events(),
            [
                Ev::Add("pod-1".into(), true),
                Ev::Update("pod-1".into(), "1".into(), "2".into()),
                Ev::Add("pod-2".into(), false),
            ],
            "{kind:?}"
        );
        cancel.cancel();
        task.await.unwrap().unwrap();
    }
}

/// Checks, for every notification of a relist to `rv`, that the cache
/// already holds the whole list: `want` objects, all at `rv`.
struct WholeListChecker {
    store: Store<Pod>,
    rv: &'static str,
    want: usize,
    /// Notifications of the relist seen, and those that saw part of it.
    seen: AtomicUsize,
    partial: PlMutex<Vec<String>>,
}

impl WholeListChecker {
    fn check(&self, what: String) {
        self.seen.fetch_add(1, Ordering::SeqCst);
        let objects = self.store.list();
        let at_rv = objects.iter().filter(|p| rv(p) == self.rv).count();
        if objects.len() != self.want || at_rv != self.want {
            self.partial.lock().push(format!("{what}: {} objects, {at_rv} at {}", objects.len(), self.rv));
        }
    }
}

impl ResourceEventHandler<Pod> for WholeListChecker {
    fn on_add(&self, obj: &Arc<Pod>, initial: bool) {
        if !initial {
            self.check(format!("add {}", name(obj)));
        }
    }
    fn on_update(&self, _: &Arc<Pod>, new: &Arc<Pod>) {
        self.check(format!("update {}", name(new)));
    }
    fn on_delete(&self, obj: &DeltaObject<Pod>) {
        self.check(format!("delete {}", obj.object().map(|p| name(p)).unwrap_or_default()));
    }
}

/// Ours: with atomic relists, a handler told of any change of a relist,
/// even the first, reads the whole new list from the cache, and a reader
/// polling the cache meanwhile never sees half of it (which it does when
/// the relist is applied object by object,
/// [`QueueKind::RealFifoPerObject`]).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_relist_reaches_the_cache_whole_before_its_handlers() {
    const N: usize = 2000;
    let pods = |rv: &str| (0..N).map(|i| pod_rv(&format!("p{i:04}"), rv)).collect::<Vec<_>>();
    let lw = Arc::new(Scripted::default());
    lw.push_list(Ok(page(pods("1"), "1", None)));
    lw.push_watch(vec![Err(api_error(410, "Expired"))], false);
    // Every object changed, the first one gone, a new one: N objects again.
    let mut relisted = pods("2");
    relisted.remove(0);
    relisted.push(pod_rv("new", "2"));
    lw.push_list(Ok(page(relisted, "2", None)));
    lw.push_watch(vec![], true);
    // Storing a relisted object takes a while (an index function runs as
    // it is stored), so that a relist applied object by object would be
    // half applied for long enough to be seen.
    let slow: IndexFn<Pod> = Arc::new(|p: &Pod| {
        if rv(p) == "2" {
            std::thread::sleep(Duration::from_micros(100));
        }
        vec![]
    });
    let inf = SharedIndexInformer::builder(Arc::clone(&lw))
        .reflector_options(options())
        .queue(QueueKind::RealFifo)
        .indexers(Indexers::from([("slow".to_owned(), slow)]))
        .build()
        .unwrap();
    let checker = Arc::new(WholeListChecker {
        store: inf.store(),
        rv: "2",
        want: N,
        seen: AtomicUsize::new(0),
        partial: PlMutex::default(),
    });
    inf.add_event_handler(Arc::clone(&checker)).unwrap();
    let cancel = CancellationToken::new();
    let task = inf.start(cancel.clone());
    let done = Arc::new(AtomicBool::new(false));
    let reader = {
        let (store, done) = (inf.store(), Arc::clone(&done));
        std::thread::spawn(move || {
            let mut half = 0;
            while !done.load(Ordering::SeqCst) {
                let objects = store.list();
                let relisted = objects.iter().filter(|p| rv(p) == "2").count();
                if relisted > 0 && (relisted != N || objects.len() != N) {
                    half += 1;
                }
            }
            half
        })
    };
    // The deletion, N - 1 updates and the add.
    let deadline = Instant::now() + Duration::from_secs(20);
    while checker.seen.load(Ordering::SeqCst) < N + 1 {
        assert!(Instant::now() < deadline, "saw {} notifications", checker.seen.load(Ordering::SeqCst));
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    done.store(true, Ordering::SeqCst);
    assert_eq!(reader.join().unwrap(), 0, "times the reader saw half the list");
    let partial = checker.partial.lock().clone();
    assert!(partial.is_empty(), "{} of {} saw part of the list, first: {:?}", partial.len(), N + 1, partial.first());
    cancel.cancel();
    task.await.unwrap().unwrap();
}

/// Ours: a resync queued behind changes re-delivers the cache as it is
/// once they are applied, to the handlers whose resync is due.
#[tokio::test(start_paused = true)]
async fn a_resync_delivers_the_cache_after_the_changes_before_it() {
    for kind in REAL_FIFOS {
        let lw = Arc::new(Scripted::default());
        lw.push_list(Ok(page(vec![pod_rv("a", "1"), pod_rv("b", "2")], "2", None)));
        lw.push_watch(vec![Ok(WatchEvent::Deleted(pod_rv("b", "3")))], true);
        let inf = informer_on(kind, &lw, Duration::from_secs(10));
        let resyncing = Arc::new(Recorder::default());
        inf.add_event_handler(Arc::clone(&resyncing)).unwrap();
        let cancel = CancellationToken::new();
        let task = inf.start(cancel.clone());
        tokio::time::sleep(Duration::from_secs(15)).await;
        assert_eq!(
            resyncing.events(),
            [
                Ev::Add("a".into(), true),
                Ev::Add("b".into(), true),
                Ev::Delete("b".into(), false),
                Ev::Update("a".into(), "1".into(), "1".into()),
            ],
            "{kind:?}"
        );
        cancel.cancel();
        task.await.unwrap().unwrap();
    }
}
