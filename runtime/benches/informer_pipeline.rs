//! The whole informer without the network: a scripted list/watch feeds a
//! real `SharedIndexInformer` (reflector → DeltaFifo → indexer → one
//! handler's delivery task). Measures events per second from the first
//! watch event to the handler having seen the last one. Decoding is not
//! included: the scripted watch yields objects already built.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use futures_util::StreamExt as _;
use futures_util::future::BoxFuture;
use k8s_client_runtime::cache::{ListWatch, ReflectorOptions, ResourceEventHandler, SharedIndexInformer};
use k8s_client_runtime::rest::{self, ListOptions, WatchEvent, WatchStream};
use k8s_client_runtime::{ListMeta, ObjectList};
use parking_lot::Mutex;
use support::{CpuClock, EVENTS, OBJECTS, Thing, bench_runs, thing};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

type Events = Vec<Result<WatchEvent<Thing>, rest::Error>>;

/// An empty list, then one watch that yields the prepared events and stays
/// open.
struct Script {
    events: Mutex<Option<Events>>,
    started: Mutex<Option<Instant>>,
}

impl ListWatch<Thing> for Script {
    fn list<'a>(&'a self, _: &'a ListOptions) -> BoxFuture<'a, Result<ObjectList<Thing>, rest::Error>> {
        Box::pin(async {
            Ok(ObjectList {
                metadata: ListMeta { resource_version: Some("1".into()), ..ListMeta::default() },
                items: Vec::new(),
            })
        })
    }
    fn watch<'a>(&'a self, _: &'a ListOptions) -> BoxFuture<'a, Result<WatchStream<Thing>, rest::Error>> {
        let events = self.events.lock().take().unwrap_or_default();
        *self.started.lock() = Some(Instant::now());
        Box::pin(async move { Ok(futures_util::stream::iter(events).chain(futures_util::stream::pending()).boxed()) })
    }
}

/// `EVENTS` watch events: an add per object, then updates, spread over 10
/// namespaces, with increasing resourceVersions.
fn events() -> Events {
    (0..EVENTS)
        .map(|i| {
            let mut thing = thing(i % OBJECTS);
            thing.metadata.resource_version = Some((i + 2).to_string());
            Ok(if i < OBJECTS { WatchEvent::Added(thing) } else { WatchEvent::Modified(thing) })
        })
        .collect()
}

struct Counter {
    seen: AtomicU64,
    done: Arc<Notify>,
}

impl Counter {
    fn tick(&self) {
        if self.seen.fetch_add(1, Ordering::Relaxed) + 1 == EVENTS {
            self.done.notify_one();
        }
    }
}

impl ResourceEventHandler<Thing> for Counter {
    fn on_add(&self, _: &Arc<Thing>, _: bool) {
        self.tick()
    }
    fn on_update(&self, _: &Arc<Thing>, _: &Arc<Thing>) {
        self.tick()
    }
}

/// One run; returns the wall time from the watch opening to the last
/// handler call, and the CPU time this thread spent from start to then.
async fn run_informer() -> (Duration, Duration) {
    let script = Arc::new(Script { events: Mutex::new(Some(events())), started: Mutex::new(None) });
    let cpu = CpuClock::start();
    let informer = SharedIndexInformer::builder(Arc::clone(&script))
        .reflector_options(ReflectorOptions { use_watch_list: false, ..ReflectorOptions::default() })
        .keep_managed_fields()
        .build()
        .expect("informer");
    let done = Arc::new(Notify::new());
    informer.add_event_handler(Counter { seen: AtomicU64::new(0), done: Arc::clone(&done) }).expect("handler");
    let cancel = CancellationToken::new();
    let task = informer.start(cancel.clone());
    done.notified().await;
    let end = Instant::now();
    let cpu = cpu.elapsed();
    cancel.cancel();
    task.await.expect("join").expect("run");
    assert_eq!(informer.store().len() as u64, OBJECTS);
    let started = script.started.lock().expect("watch was opened");
    (end - started, cpu)
}

fn informer_pipeline(c: &mut Criterion) {
    let mut group = c.benchmark_group("shared_informer");
    group.throughput(Throughput::Elements(EVENTS));
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(10));
    bench_runs(&mut group, "watch_to_handler", run_informer);
    group.finish();
}

criterion_group!(benches, informer_pipeline);
criterion_main!(benches);
