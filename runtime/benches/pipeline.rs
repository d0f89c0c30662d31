//! The informer's inner loop without the network: a producer feeds a
//! DeltaFifo (as the reflector does), a consumer pops, applies each delta
//! to the indexed store and calls one handler. Measures events per second.

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use k8s_client_runtime::cache::{DeltaFifo, DeltaFifoOptions, DeltaType, Writer};
use support::{CpuClock, EVENTS, OBJECTS, Thing, bench_runs, thing};

/// One run: `EVENTS` events (an add per object, then updates) through
/// DeltaFifo → indexer → handler; returns the time until the handler saw
/// them all, and the CPU time of the whole run.
async fn run_pipeline(objects: &[Arc<Thing>]) -> (Duration, Duration) {
    let cpu = CpuClock::start();
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
    // Freeing the queue and the store is part of a run's cost.
    drop((fifo, writer));
    (elapsed, cpu.elapsed())
}

fn pipeline(c: &mut Criterion) {
    // Built once, outside the timed runs.
    let objects: Vec<Arc<Thing>> = (0..OBJECTS).map(|i| Arc::new(thing(i))).collect();
    let mut group = c.benchmark_group("informer_pipeline");
    group.throughput(Throughput::Elements(EVENTS));
    bench_runs(&mut group, "delta_fifo_store_handler", || run_pipeline(&objects));
    group.finish();
}

criterion_group!(benches, pipeline);
criterion_main!(benches);
