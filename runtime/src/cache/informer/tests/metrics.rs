//! The informer's metrics: processing observed per pop, the queue's depth
//! after it, the cache's resourceVersion.

use std::sync::Arc;

use parking_lot::Mutex;

use super::*;
use crate::cache::informer::metrics::{HistogramMetric, InformerId, InformerMetricsProvider, SettableGaugeMetric};

#[derive(Default)]
struct Recorded {
    ids: Vec<InformerId>,
    queued: Vec<f64>,
    latencies: usize,
    resource_versions: Vec<f64>,
}

#[derive(Clone, Default)]
struct Provider(Arc<Mutex<Recorded>>);

struct Gauge(Arc<Mutex<Recorded>>, fn(&mut Recorded) -> &mut Vec<f64>);
impl SettableGaugeMetric for Gauge {
    fn set(&self, value: f64) {
        (self.1)(&mut self.0.lock()).push(value);
    }
}

struct Latency(Arc<Mutex<Recorded>>);
impl HistogramMetric for Latency {
    fn observe(&self, value: f64) {
        assert!(value >= 0.0);
        self.0.lock().latencies += 1;
    }
}

impl InformerMetricsProvider for Provider {
    fn queued_items(&self, id: &InformerId) -> Box<dyn SettableGaugeMetric> {
        self.0.lock().ids.push(id.clone());
        Box::new(Gauge(Arc::clone(&self.0), |r| &mut r.queued))
    }
    fn processing_latency(&self, _: &InformerId) -> Box<dyn HistogramMetric> {
        Box::new(Latency(Arc::clone(&self.0)))
    }
    fn store_resource_version(&self, _: &InformerId) -> Box<dyn SettableGaugeMetric> {
        Box::new(Gauge(Arc::clone(&self.0), |r| &mut r.resource_versions))
    }
}

#[tokio::test(start_paused = true)]
async fn pops_are_timed_and_the_queue_and_version_reported() {
    for kind in EVERY_KIND {
        let lw = Arc::new(Scripted::default());
        lw.push_list(Ok(page(vec![pod_rv("a", "1"), pod_rv("b", "2")], "10", None)));
        lw.push_watch(vec![Ok(WatchEvent::Modified(pod_rv("a", "11"))), Ok(WatchEvent::Added(pod_rv("c", "12")))], true);
        let recorded = Provider::default();
        let provider: Arc<dyn InformerMetricsProvider> = Arc::new(recorded.clone());
        let id = InformerId { name: "test".into(), group: String::new(), version: "v1".into(), resource: "pods".into() };
        let inf = SharedIndexInformer::builder(Arc::clone(&lw))
            .reflector_options(options())
            .queue(kind)
            .metrics(&provider, &id)
            .build()
            .unwrap();
        let cancel = CancellationToken::new();
        let task = inf.start(cancel.clone());
        settle().await;
        assert_eq!(sorted_names(&inf.store()), ["a", "b", "c"], "{kind:?}");

        {
        let r = recorded.0.lock();
        assert_eq!(r.ids, std::slice::from_ref(&id), "{kind:?}: one set of metrics per informer");
        assert!(r.latencies >= 2, "{kind:?}: the list and each watch event are timed: {}", r.latencies);
        assert!(r.queued.len() >= r.latencies, "{kind:?}: the depth is set after every pop");
        assert_eq!(r.queued.last(), Some(&0.0), "{kind:?}: nothing left queued");
        assert_eq!(r.resource_versions.last(), Some(&12.0), "{kind:?}: {:?}", r.resource_versions);
        assert!(r.resource_versions.is_sorted(), "{kind:?}: the version never goes back: {:?}", r.resource_versions);
        }
        cancel.cancel();
        task.await.unwrap().unwrap();
    }
}
