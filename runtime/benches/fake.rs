//! The fake apiserver's cost per request: 10,000 creates and one list of
//! the 10,000 objects through `ResourceClient` (the dynamic client), over
//! the in-memory transport, on a current-thread runtime.

use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use k8s_client_runtime::DynamicResource;
use k8s_client_runtime::dynamic::{DynamicClient, DynamicObject};
use k8s_client_runtime::fake::FakeCluster;
use k8s_client_runtime::rest::{ListOptions, WriteOptions};

const OBJECTS: u64 = 10_000;

fn things() -> DynamicResource {
    DynamicResource {
        group: "example.com".into(),
        version: "v1".into(),
        kind: "Thing".into(),
        plural: "things".into(),
        namespaced: true,
    }
}

/// Creates `OBJECTS` objects into a new fake, then lists them; returns the
/// time of the creates and of the list.
async fn creates_then_list() -> (Duration, Duration) {
    let fake = FakeCluster::new();
    let client = DynamicClient::namespaced_with(fake.client(), "ns", &things());
    let started = Instant::now();
    for i in 0..OBJECTS {
        let thing =
            DynamicObject::new(&things(), &format!("thing-{i}")).with_data(serde_json::json!({"spec": {"size": i}}));
        client.create(&thing, &WriteOptions::default()).await.expect("create");
    }
    let created = started.elapsed();
    let started = Instant::now();
    let list = client.list(&ListOptions::default()).await.expect("list");
    let listed = started.elapsed();
    assert_eq!(list.items.len() as u64, OBJECTS);
    (created, listed)
}

fn fake(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let mut group = c.benchmark_group("fake_apiserver");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(20));
    group.throughput(Throughput::Elements(OBJECTS));
    group.bench_function("create_10000", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| runtime.block_on(creates_then_list()).0).sum())
    });
    group.throughput(Throughput::Elements(OBJECTS));
    group.bench_function("list_10000", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| runtime.block_on(creates_then_list()).1).sum())
    });
    group.finish();
}

criterion_group!(benches, fake);
criterion_main!(benches);
