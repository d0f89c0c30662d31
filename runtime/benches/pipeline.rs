//! The informer's inner loop without the network: a producer feeds a
//! DeltaFifo (as the reflector does), a consumer pops, applies each delta
//! to the indexed store and calls one handler. Measures events per second.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use k8s_client_runtime::cache::{DeltaFifo, DeltaFifoOptions, DeltaType, Writer};
use k8s_client_runtime::{Metadata, Object, Resource, Scope};

const EVENTS: u64 = 200_000;
const OBJECTS: u64 = 10_000;

#[derive(Default)]
struct Meta {
    name: Option<String>,
    namespace: Option<String>,
}

impl Metadata for Meta {
    fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }
    fn generate_name(&self) -> Option<&str> {
        None
    }
    fn namespace(&self) -> Option<&str> {
        self.namespace.as_deref()
    }
    fn uid(&self) -> Option<&str> {
        None
    }
    fn resource_version(&self) -> Option<&str> {
        None
    }
    fn generation(&self) -> Option<i64> {
        None
    }
    fn labels(&self) -> Option<&BTreeMap<String, String>> {
        None
    }
    fn annotations(&self) -> Option<&BTreeMap<String, String>> {
        None
    }
    fn is_being_deleted(&self) -> bool {
        false
    }
    fn set_name(&mut self, name: Option<String>) {
        self.name = name;
    }
    fn set_namespace(&mut self, namespace: Option<String>) {
        self.namespace = namespace;
    }
    fn set_resource_version(&mut self, _: Option<String>) {}
    fn clear_managed_fields(&mut self) {}
}

#[derive(Default)]
struct Thing {
    metadata: Meta,
}

impl Resource for Thing {
    const GROUP: &'static str = "example.com";
    const VERSION: &'static str = "v1";
    const API_VERSION: &'static str = "example.com/v1";
    const KIND: &'static str = "Thing";
    const PLURAL: &'static str = "things";
    const SCOPE: Scope = Scope::Namespaced;
    const LIST_KIND: &'static str = "ThingList";
}

impl Object for Thing {
    type Meta = Meta;
    fn metadata(&self) -> &Meta {
        &self.metadata
    }
    fn metadata_mut(&mut self) -> &mut Meta {
        &mut self.metadata
    }
}

/// Objects spread over 10 namespaces.
fn objects() -> Vec<Arc<Thing>> {
    (0..OBJECTS)
        .map(|i| {
            Arc::new(Thing {
                metadata: Meta {
                    name: Some(format!("thing-{i}")),
                    namespace: Some(format!("ns-{}", i % 10)),
                },
            })
        })
        .collect()
}

/// One run: `EVENTS` events (an add per object, then updates) through
/// DeltaFifo → indexer → handler; returns the time until the handler saw
/// them all.
async fn run_pipeline(objects: &[Arc<Thing>]) -> Duration {
    let mut writer: Writer<Thing> = Writer::new();
    let fifo = DeltaFifo::new(DeltaFifoOptions::default().known_objects(Arc::new(writer.store())));
    let start = Instant::now();
    let producer = tokio::spawn({
        let fifo = fifo.clone();
        let objects = objects.to_vec();
        async move {
            for i in 0..EVENTS {
                let obj = Arc::clone(&objects[(i % OBJECTS) as usize]);
                if i < OBJECTS {
                    fifo.add(obj)
                } else {
                    fifo.update(obj)
                }
                if i % 1024 == 0 {
                    // Let the consumer in, as a reflector does between events.
                    tokio::task::yield_now().await;
                }
            }
        }
    });
    let mut handled = 0u64;
    while handled < EVENTS {
        let mut seen = 0u64;
        fifo.pop(|deltas, _| {
            for d in deltas {
                let Some(obj) = d.object.object() else {
                    continue;
                };
                match d.delta_type {
                    DeltaType::Deleted => {
                        writer.delete(obj);
                    }
                    _ => writer.update(Arc::clone(obj)),
                }
                // The handler: count the event.
                seen += 1;
            }
            Ok(())
        })
        .await
        .expect("pop");
        handled += seen;
    }
    let elapsed = start.elapsed();
    producer.await.expect("producer");
    assert_eq!(writer.len() as u64, OBJECTS);
    elapsed
}

/// CPU time of the calling thread (Linux `schedstat`), to measure on a
/// machine shared with other work; `None` elsewhere.
fn thread_cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let nanos: u64 = stat.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(nanos))
}

fn pipeline(c: &mut Criterion) {
    let objects = objects();
    let mut group = c.benchmark_group("informer_pipeline");
    group.throughput(Throughput::Elements(EVENTS));
    // Producer and consumer on one thread (no lock contention) and on two.
    let runtimes = [
        (
            "current_thread",
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build(),
        ),
        (
            "multi_thread",
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build(),
        ),
    ];
    for (flavor, rt) in runtimes {
        let rt = rt.expect("runtime");
        group.bench_function(format!("delta_fifo_store_handler/{flavor}"), |b| {
            b.iter_custom(|iters| {
                rt.block_on(async {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        total += run_pipeline(&objects).await;
                    }
                    total
                })
            })
        });
    }
    // The same single-thread run timed by the CPU time it used rather than
    // the wall clock: what the code costs, whatever else the machine runs.
    if thread_cpu_time().is_some() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        group.bench_function("delta_fifo_store_handler/current_thread_cpu_time", |b| {
            b.iter_custom(|iters| {
                rt.block_on(async {
                    let before = thread_cpu_time().unwrap_or_default();
                    for _ in 0..iters {
                        run_pipeline(&objects).await;
                    }
                    thread_cpu_time().unwrap_or_default().saturating_sub(before)
                })
            })
        });
    }
    group.finish();
}

criterion_group!(benches, pipeline);
criterion_main!(benches);
