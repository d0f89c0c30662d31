//! Controllers on the fake cluster: concurrency, keys never reconciled
//! twice at once, the answers and the error policy, panics, shutdown.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use parking_lot::Mutex;
use prometheus::Registry;

use super::{Action, BoxError, Controller, Metrics, Request};
use crate::cache::SharedInformerFactory;
use crate::fake::FakeCluster;
use crate::rest::{Patch, PatchOptions, ResourceClient};
use crate::testing::{Node, Pod, pod};

fn cluster(pods: usize) -> FakeCluster {
    let fake = FakeCluster::new();
    for i in 0..pods {
        fake.add(&pod("ns", &format!("p{i}"), "node")).unwrap();
    }
    fake
}

/// Polls `done` for up to 10 s.
async fn eventually(what: &str, done: impl Fn() -> bool) {
    for _ in 0..1000 {
        if done() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("not within 10 s: {what}");
}

/// Runs `controller` with `reconcile` until the returned sender fires.
fn spawn<C: Send + Sync + 'static, F, Fut>(
    controller: Controller<Pod>,
    reconcile: F,
    context: Arc<C>,
) -> (tokio::sync::oneshot::Sender<()>, tokio::task::JoinHandle<Result<(), super::Error>>)
where
    F: Fn(Request<Pod>, Arc<C>) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<Action, BoxError>> + Send + 'static,
{
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(controller.run(reconcile, context, async {
        let _ = stopped.await;
    }));
    (stop, task)
}

fn metric(metrics: &Metrics, name: &str, labels: &str) -> f64 {
    let text = metrics.gather_text();
    let prefix = format!("{name}{{{labels}}} ");
    text.lines().find_map(|l| l.strip_prefix(&prefix)).map_or(0.0, |v| v.parse().unwrap())
}

#[derive(Default)]
struct Seen {
    running: Mutex<HashSet<String>>,
    now: AtomicUsize,
    max: AtomicUsize,
    calls: AtomicUsize,
    overlap: AtomicBool,
    without_object: AtomicBool,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn at_most_n_reconciles_run_at_once_and_never_two_of_one_key() {
    let fake = cluster(12);
    let factory = SharedInformerFactory::new(fake.client(), Duration::ZERO);
    let seen = Arc::new(Seen::default());
    let reconcile = |request: Request<Pod>, seen: Arc<Seen>| async move {
        if !seen.running.lock().insert(request.key().to_owned()) {
            seen.overlap.store(true, Ordering::SeqCst);
        }
        // Caches have synced before the first reconcile: every key's object is there.
        if request.object().is_none() {
            seen.without_object.store(true, Ordering::SeqCst);
        }
        let now = seen.now.fetch_add(1, Ordering::SeqCst) + 1;
        seen.max.fetch_max(now, Ordering::SeqCst);
        // p0 takes long enough to be changed while it runs.
        let work = if request.key() == "ns/p0" { 300 } else { 30 };
        tokio::time::sleep(Duration::from_millis(work)).await;
        seen.now.fetch_sub(1, Ordering::SeqCst);
        seen.running.lock().remove(request.key());
        seen.calls.fetch_add(1, Ordering::SeqCst);
        Ok::<_, BoxError>(Action::done())
    };
    let (stop, task) = spawn(Controller::<Pod>::new(&factory).concurrency(3), reconcile, seen.clone());
    // Changes of one pod while its key is being reconciled bring it back,
    // after the running reconcile.
    let pods = ResourceClient::<Pod>::namespaced(fake.client(), "ns");
    eventually("p0 being reconciled", || seen.running.lock().contains("ns/p0")).await;
    for i in 0..5 {
        let patch = Patch::Merge(serde_json::json!({"metadata": {"labels": {"round": i.to_string()}}}));
        pods.patch("p0", &patch, &PatchOptions::default()).await.unwrap();
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    eventually("every pod and the changes reconciled", || seen.calls.load(Ordering::SeqCst) >= 13).await;
    stop.send(()).unwrap();
    task.await.unwrap().unwrap();
    assert!(!seen.overlap.load(Ordering::SeqCst), "a key was reconciled twice at once");
    assert!(!seen.without_object.load(Ordering::SeqCst), "a reconcile before the cache synced");
    assert_eq!(seen.max.load(Ordering::SeqCst), 3, "at most 3 at once, and 3 used");
}

#[tokio::test]
async fn errors_back_off_requeue_after_comes_back_and_done_rests() {
    let fake = cluster(1);
    let factory = SharedInformerFactory::new(fake.client(), Duration::ZERO);
    let metrics = Metrics::new(&Registry::new()).unwrap();
    let calls = Arc::new(AtomicUsize::new(0));
    let reconcile = |_: Request<Pod>, calls: Arc<AtomicUsize>| async move {
        match calls.fetch_add(1, Ordering::SeqCst) {
            0..3 => Err("not yet".into()),
            3..5 => Ok(Action::requeue_after(Duration::from_millis(20))),
            _ => Ok(Action::done()),
        }
    };
    let controller = Controller::<Pod>::new(&factory).name("pods").metrics(&metrics);
    let (stop, task) = spawn(controller, reconcile, calls.clone());
    eventually("six reconciles", || calls.load(Ordering::SeqCst) == 6).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(calls.load(Ordering::SeqCst), 6, "done: no more reconciles until a change");
    let total = |result: &str| metric(&metrics, "controller_runtime_reconcile_total", &format!("controller=\"pods\",result=\"{result}\""));
    assert_eq!((total("error"), total("requeue_after"), total("success")), (3.0, 2.0, 1.0));
    assert_eq!(metric(&metrics, "controller_runtime_reconcile_errors_total", "controller=\"pods\""), 3.0);
    assert_eq!(metric(&metrics, "controller_runtime_max_concurrent_reconciles", "controller=\"pods\""), 1.0);
    // client-go counts every delayed add as a retry: 3 backoffs, 2 requeues.
    assert_eq!(metric(&metrics, "workqueue_retries_total", "name=\"pods\""), 5.0);
    stop.send(()).unwrap();
    task.await.unwrap().unwrap();
}

#[tokio::test]
async fn the_error_policy_decides_and_sees_the_retries() {
    let fake = cluster(1);
    let factory = SharedInformerFactory::new(fake.client(), Duration::ZERO);
    let calls = Arc::new(AtomicUsize::new(0));
    let retries = Arc::new(Mutex::new(Vec::new()));
    let reconcile = |_: Request<Pod>, calls: Arc<AtomicUsize>| async move {
        calls.fetch_add(1, Ordering::SeqCst);
        Err::<Action, BoxError>("always".into())
    };
    let seen = retries.clone();
    let controller = Controller::<Pod>::new(&factory).error_policy(move |key, error, retries| {
        seen.lock().push((key.to_owned(), error.to_string(), retries));
        if retries < 2 { Action::backoff() } else { Action::done() }
    });
    let (stop, task) = spawn(controller, reconcile, calls.clone());
    eventually("three reconciles", || calls.load(Ordering::SeqCst) == 3).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(calls.load(Ordering::SeqCst), 3, "dropped after the third failure");
    let key = "ns/p0".to_owned();
    let always = "always".to_owned();
    assert_eq!(*retries.lock(), [(key.clone(), always.clone(), 0), (key.clone(), always.clone(), 1), (key, always, 2)]);
    stop.send(()).unwrap();
    task.await.unwrap().unwrap();
}

#[tokio::test]
async fn a_panicking_reconcile_is_counted_and_retried() {
    let fake = cluster(1);
    let factory = SharedInformerFactory::new(fake.client(), Duration::ZERO);
    let metrics = Metrics::new(&Registry::new()).unwrap();
    let calls = Arc::new(AtomicUsize::new(0));
    let reconcile = |_: Request<Pod>, calls: Arc<AtomicUsize>| async move {
        assert!(calls.fetch_add(1, Ordering::SeqCst) > 0, "a bug on the first call");
        Ok::<_, BoxError>(Action::done())
    };
    let (stop, task) = spawn(Controller::<Pod>::new(&factory).name("p").metrics(&metrics), reconcile, calls.clone());
    eventually("the retry after the panic", || calls.load(Ordering::SeqCst) == 2).await;
    assert_eq!(metric(&metrics, "controller_runtime_reconcile_panics_total", "controller=\"p\""), 1.0);
    assert!(!task.is_finished(), "the controller goes on");
    stop.send(()).unwrap();
    task.await.unwrap().unwrap();
}

#[tokio::test]
async fn shutdown_lets_running_reconciles_finish_within_the_deadline_then_aborts() {
    for (work, deadline, finishes) in [(200, 5_000, true), (10_000, 100, false)] {
        let fake = cluster(1);
        let factory = SharedInformerFactory::new(fake.client(), Duration::ZERO);
        let state = Arc::new((AtomicBool::new(false), AtomicBool::new(false)));
        let reconcile = move |_: Request<Pod>, state: Arc<(AtomicBool, AtomicBool)>| async move {
            state.0.store(true, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(work)).await;
            state.1.store(true, Ordering::SeqCst);
            Ok::<_, BoxError>(Action::done())
        };
        let controller = Controller::<Pod>::new(&factory).shutdown_deadline(Duration::from_millis(deadline));
        let (stop, task) = spawn(controller, reconcile, state.clone());
        eventually("a reconcile running", || state.0.load(Ordering::SeqCst)).await;
        let asked = tokio::time::Instant::now();
        stop.send(()).unwrap();
        task.await.unwrap().unwrap();
        assert_eq!(state.1.load(Ordering::SeqCst), finishes, "work {work} ms, deadline {deadline} ms");
        assert!(asked.elapsed() < Duration::from_secs(3), "{:?}", asked.elapsed());
    }
}

#[tokio::test]
async fn watched_objects_enqueue_the_keys_their_mapper_gives() {
    let fake = cluster(2);
    let factory = SharedInformerFactory::new(fake.client(), Duration::ZERO);
    let keys = Arc::new(Mutex::new(Vec::new()));
    let reconcile = |request: Request<Pod>, keys: Arc<Mutex<Vec<String>>>| async move {
        keys.lock().push(request.key().to_owned());
        Ok::<_, BoxError>(Action::done())
    };
    // A node names the pod it concerns in a label.
    let controller = Controller::<Pod>::new(&factory).watches(|node: &Node| {
        node.metadata.labels.as_ref().and_then(|l| l.get("pod")).map(|p| format!("ns/{p}"))
    });
    let (stop, task) = spawn(controller, reconcile, keys.clone());
    eventually("both pods reconciled", || keys.lock().len() == 2).await;
    let mut node = Node::default();
    node.metadata.name = Some("n1".into());
    node.metadata.labels = Some(crate::Map::from([("pod", "p1")]));
    ResourceClient::<Node>::all(fake.client()).create(&node, &Default::default()).await.unwrap();
    eventually("p1 again", || keys.lock().len() == 3).await;
    assert_eq!(keys.lock()[2], "ns/p1");
    stop.send(()).unwrap();
    task.await.unwrap().unwrap();
}
