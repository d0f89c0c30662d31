//! The informer's inner loop without the network: a producer feeds a
//! DeltaFifo (as the reflector does), a consumer pops, applies each delta
//! to the indexed store and calls one handler. Measures events per second.

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use k8s_client_runtime::cache::{DeltaFifo, DeltaFifoOptions, DeltaType, Writer};
use k8s_client_runtime::dynamic::{DynamicMeta, DynamicObject};

const EVENTS: u64 = 200_000;
const OBJECTS: u64 = 10_000;

/// The dynamic object: a real runtime kind with real metadata, so the
/// benchmark needs no kind of its own.
type Thing = DynamicObject;

/// Objects spread over 10 namespaces.
fn objects() -> Vec<Arc<Thing>> {
    (0..OBJECTS)
        .map(|i| {
            Arc::new(Thing {
                metadata: DynamicMeta {
                    name: Some(format!("thing-{i}")),
                    namespace: Some(format!("ns-{}", i % 10)),
                    ..DynamicMeta::default()
                },
                ..Thing::default()
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
        ("current_thread", tokio::runtime::Builder::new_current_thread().enable_all().build()),
        ("multi_thread", tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()),
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
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
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
