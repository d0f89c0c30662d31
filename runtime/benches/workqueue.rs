//! Workqueue throughput: items added, handed out and marked done per second,
//! with one and four workers.

use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use k8s_client_runtime::workqueue::Queue;

const ITEMS: u64 = 100_000;

/// Adds `ITEMS` distinct items while `workers` tasks get/done them; returns
/// the time until every item was done.
async fn run_batch(workers: usize) -> Duration {
    let queue: Queue<u64> = Queue::new();
    let start = Instant::now();
    let handles: Vec<_> = (0..workers)
        .map(|_| {
            let q = queue.clone();
            tokio::spawn(async move {
                let mut n = 0u64;
                while let Some(item) = q.get().await {
                    q.done(&item);
                    n += 1;
                }
                n
            })
        })
        .collect();
    for i in 0..ITEMS {
        queue.add(i);
    }
    queue.shut_down_with_drain().await;
    let mut total = 0;
    for h in handles {
        total += h.await.expect("worker panicked");
    }
    let elapsed = start.elapsed();
    assert_eq!(total, ITEMS);
    elapsed
}

fn workqueue(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    let mut group = c.benchmark_group("workqueue_add_get_done");
    group.throughput(Throughput::Elements(ITEMS));
    for workers in [1, 4] {
        group.bench_function(format!("{workers}_workers"), |b| {
            b.iter_custom(|iters| {
                rt.block_on(async {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        total += run_batch(workers).await;
                    }
                    total
                })
            })
        });
    }
    group.finish();
}

criterion_group!(benches, workqueue);
criterion_main!(benches);
