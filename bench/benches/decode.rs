//! Decoding `shared/bench/podlist-5000.json.gz` (5,000 realistic pods) into
//! a typed PodList: throughput (MB/s of JSON) and live heap bytes per pod,
//! for the generated crate and for k8s-openapi, in the same run.
//!
//! Run: `cargo bench -p k8s-client-bench --bench decode`.

use std::alloc::System;
use std::time::{Duration, Instant};

use cap::Cap;

// Counting allocator: live heap bytes are read before and after a decode.
#[global_allocator]
static ALLOC: Cap<System> = Cap::new(System, usize::MAX);

const ROUNDS: usize = 7;

struct Figures {
    best: Duration,
    median: Duration,
    heap_per_pod: f64,
    pods: usize,
}

fn measure<T>(json: &[u8], decode: impl Fn(&[u8]) -> T, count: impl Fn(&T) -> usize) -> Figures {
    let mut times = Vec::with_capacity(ROUNDS);
    let mut heap = 0usize;
    let mut pods = 0;
    for _ in 0..ROUNDS {
        let before = ALLOC.allocated();
        let start = Instant::now();
        let list = decode(json);
        times.push(start.elapsed());
        heap = ALLOC.allocated() - before;
        pods = count(&list);
        drop(list);
    }
    times.sort();
    Figures { best: times[0], median: times[ROUNDS / 2], heap_per_pod: heap as f64 / pods as f64, pods }
}

fn report(name: &str, json_len: usize, f: &Figures) {
    let mb = json_len as f64 / 1e6;
    println!(
        "{name:<12} pods={} median={:>7.1} ms ({:>6.1} MB/s)  best={:>7.1} ms ({:>6.1} MB/s)  heap/pod={:>8.0} B ({:.2}x JSON)",
        f.pods,
        f.median.as_secs_f64() * 1e3,
        mb / f.median.as_secs_f64(),
        f.best.as_secs_f64() * 1e3,
        mb / f.best.as_secs_f64(),
        f.heap_per_pod,
        f.heap_per_pod / (json_len as f64 / f.pods as f64),
    );
}

fn main() {
    // `cargo test --benches` runs bench targets with `--bench` absent: stay quick then.
    if !std::env::args().any(|a| a == "--bench") {
        println!("decode bench: pass --bench (cargo bench) to measure");
        return;
    }
    let json =
        k8s_client_bench::gunzip_file(k8s_client_bench::SHARED_PODLIST.as_ref()).unwrap_or_else(|e| panic!("{e}"));
    println!("input: {} bytes of JSON, {ROUNDS} rounds each", json.len());
    let ours = measure(
        &json,
        |j| serde_json::from_slice::<k8s_client::api::core::v1::PodList>(j).expect("decode k8s-client PodList"),
        |l| l.items.len(),
    );
    let theirs = measure(
        &json,
        |j| {
            serde_json::from_slice::<k8s_openapi::List<k8s_openapi::api::core::v1::Pod>>(j)
                .expect("decode k8s-openapi PodList")
        },
        |l| l.items.len(),
    );
    report("k8s-client", json.len(), &ours);
    report("k8s-openapi", json.len(), &theirs);
    println!(
        "ratio k8s-client/k8s-openapi: throughput {:.2}x (median), heap per pod {:.2}x",
        theirs.median.as_secs_f64() / ours.median.as_secs_f64(),
        ours.heap_per_pod / theirs.heap_per_pod
    );
}
