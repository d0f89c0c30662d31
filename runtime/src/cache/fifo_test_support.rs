//! What the ported upstream tests of both queues share: client-go's
//! `testFifoObject` as a cluster-scoped test pod (key = name, `val` in
//! `node`), its `literalListerGetter`, a delta as text, and the cases both
//! test files run: two producers keeping their order, and a relist racing
//! the processing of a pop.

use std::sync::Arc;
use std::time::Duration;

use super::delta_fifo::{Delta, DeltaFifo, DeltaObject, DeltaType, KnownObjects};
use super::real_fifo::RealFifo;
use super::store::ThreadSafeStore;
use crate::object::object_key;
use crate::testing::{Pod, pod};

/// Upstream's `mkFifoObj(name, val)`.
pub(crate) fn obj(name: &str, val: i64) -> Arc<Pod> {
    Arc::new(pod("", name, &val.to_string()))
}

/// Upstream's `literalListerGetter`: a fixed set of known objects.
pub(crate) struct Literal(pub(crate) Vec<Arc<Pod>>);

impl KnownObjects<Pod> for Literal {
    fn list_keys(&self) -> Vec<String> {
        self.0.iter().map(|o| object_key(&**o)).collect()
    }
    fn get_by_key(&self, key: &str) -> Option<Arc<Pod>> {
        self.0.iter().find(|o| object_key(&***o) == key).cloned()
    }
}

/// A delta as text: `Added foo=10`, `Deleted tombstone(bar, bar=6)`.
pub(crate) fn show(d: &Delta<Pod>) -> String {
    let o = |p: &Arc<Pod>| format!("{}={}", p.metadata.name.as_deref().unwrap_or(""), p.node);
    let what = match &d.object {
        DeltaObject::Object(p) => o(p),
        DeltaObject::DeletedFinalStateUnknown(t) => {
            format!("tombstone({}, {})", t.key, t.obj.as_ref().map_or_else(|| "none".to_owned(), o))
        }
    };
    format!("{:?} {what}", d.delta_type)
}

/// A queue of either kind, as the shared cases use it.
pub(crate) trait TestFifo: Clone + Send + Sync + 'static {
    fn add(&self, obj: Arc<Pod>);
    fn replace(&self, list: Vec<Arc<Pod>>, resource_version: &str);
    /// Pops, hands `process` the (first) delta, and returns its type and
    /// key, failing the test after 5 s.
    fn pop_with(&self, process: impl FnOnce(&Delta<Pod>) + Send) -> impl Future<Output = (DeltaType, String)>;
    /// Pops and returns the (first) object, failing the test after 5 s.
    fn pop_object(&self) -> impl Future<Output = Arc<Pod>> {
        async {
            let mut popped = None;
            self.pop_with(|d| popped = d.object.object().cloned()).await;
            popped.expect("an object")
        }
    }
}

fn delta_key(d: &Delta<Pod>) -> String {
    match &d.object {
        DeltaObject::Object(o) => object_key(&**o),
        DeltaObject::DeletedFinalStateUnknown(t) => t.key.clone(),
    }
}

impl TestFifo for DeltaFifo<Pod> {
    fn add(&self, obj: Arc<Pod>) {
        DeltaFifo::add(self, obj)
    }
    fn replace(&self, list: Vec<Arc<Pod>>, resource_version: &str) {
        DeltaFifo::replace(self, list, resource_version)
    }
    async fn pop_with(&self, process: impl FnOnce(&Delta<Pod>) + Send) -> (DeltaType, String) {
        let pop = self.pop(|deltas, _| {
            process(&deltas[0]);
            Ok(())
        });
        let deltas = tokio::time::timeout(Duration::from_secs(5), pop).await;
        let deltas = deltas.expect("pop timed out").expect("pop failed");
        (deltas[0].delta_type, delta_key(&deltas[0]))
    }
}

impl TestFifo for RealFifo<Pod> {
    fn add(&self, obj: Arc<Pod>) {
        RealFifo::add(self, obj)
    }
    fn replace(&self, list: Vec<Arc<Pod>>, resource_version: &str) {
        RealFifo::replace(self, list, resource_version)
    }
    async fn pop_with(&self, process: impl FnOnce(&Delta<Pod>) + Send) -> (DeltaType, String) {
        let pop = self.pop(|entry, _| process(&entry.change().expect("a change").delta));
        let entry = tokio::time::timeout(Duration::from_secs(5), pop).await;
        let entry = entry.expect("pop timed out").expect("pop failed");
        let change = entry.change().expect("a change");
        (change.delta.delta_type, delta_key(&change.delta))
    }
}

/// A relist in another thread while a popped add is being processed, after
/// the pop and before the store holds the object, of a list without it
/// (deleted meanwhile): the deletion must still come out of the queue.
/// The relist waits for the processing (it runs under the queue's lock, as
/// client-go's); were it to run in between, it would find the object
/// neither queued nor known, and a ghost would stay in the store.
pub(crate) async fn a_relist_racing_a_pop_keeps_the_deletion<F: TestFifo>(
    make: impl FnOnce(Arc<dyn KnownObjects<Pod>>) -> F,
) {
    let store = Arc::new(ThreadSafeStore::<Pod>::default());
    let f = make(store.clone());
    f.add(obj("ghost", 1));
    let (in_process, relist_now) = std::sync::mpsc::channel();
    let relister = {
        let f = f.clone();
        std::thread::spawn(move || {
            relist_now.recv().unwrap();
            f.replace(Vec::new(), "10");
        })
    };
    let popped = f
        .pop_with(|d| {
            in_process.send(()).unwrap();
            // Time for the relist to run, were it not held off.
            std::thread::sleep(Duration::from_millis(100));
            let obj = Arc::clone(d.object.object().expect("an object"));
            store.add(object_key(&*obj), obj);
        })
        .await;
    assert_eq!(popped, (DeltaType::Added, "ghost".into()));
    relister.join().unwrap();
    assert_eq!(f.pop_with(|_| {}).await, (DeltaType::Deleted, "ghost".into()), "the relist's deletion");
}

/// `TestDeltaFIFO_basic` / `TestRealFIFO_basic`: two producers adding 500
/// objects each; pops keep each producer's order.
pub(crate) async fn two_producers_keep_their_order(f: impl TestFifo) {
    const AMOUNT: i64 = 500;
    let producers: Vec<_> = ["a", "b"]
        .into_iter()
        .map(|prefix| {
            let f = f.clone();
            tokio::spawn(async move {
                for i in 0..AMOUNT {
                    f.add(obj(&format!("{prefix}{i}"), i + 1));
                    tokio::task::yield_now().await;
                }
            })
        })
        .collect();
    let mut last = std::collections::HashMap::new();
    for _ in 0..AMOUNT * 2 {
        let p = f.pop_object().await;
        let prefix = &p.metadata.name.as_deref().unwrap()[..1];
        let val: i64 = p.node.parse().unwrap();
        let prev = last.insert(prefix.to_owned(), val).unwrap_or(0);
        assert!(val > prev, "{prefix}: got {val} after {prev}");
    }
    for p in producers {
        p.await.unwrap();
    }
}
