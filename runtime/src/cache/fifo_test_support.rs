//! What the ported upstream tests of both queues share: client-go's
//! `testFifoObject` as a cluster-scoped test pod (key = name, `val` in
//! `node`), its `literalListerGetter`, a delta as text, and the two-producer
//! ordering case both test files have.

use std::sync::Arc;
use std::time::Duration;

use super::delta_fifo::{Delta, DeltaFifo, DeltaObject, KnownObjects};
use super::real_fifo::RealFifo;
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
    /// Pops and returns the (first) object, failing the test after 5 s.
    fn pop_object(&self) -> impl Future<Output = Arc<Pod>>;
}

impl TestFifo for DeltaFifo<Pod> {
    fn add(&self, obj: Arc<Pod>) {
        DeltaFifo::add(self, obj)
    }
    async fn pop_object(&self) -> Arc<Pod> {
        let popped = tokio::time::timeout(Duration::from_secs(5), self.pop(|_, _| Ok(()))).await;
        let deltas = popped.expect("pop timed out").expect("pop failed");
        Arc::clone(deltas[0].object.object().expect("an object"))
    }
}

impl TestFifo for RealFifo<Pod> {
    fn add(&self, obj: Arc<Pod>) {
        RealFifo::add(self, obj)
    }
    async fn pop_object(&self) -> Arc<Pod> {
        let popped = tokio::time::timeout(Duration::from_secs(5), self.pop(|_, _| {})).await;
        let change = popped.expect("pop timed out").expect("pop failed");
        Arc::clone(change.delta.object.object().expect("an object"))
    }
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
