//! Decoding `shared/bench/podlist-5000.json.gz` (5,000 realistic pods) into
//! a typed PodList: throughput (MB/s of JSON) and live heap bytes per pod,
//! for the generated crate and for k8s-openapi, in the same run.
//!
//! Run: `cargo bench -p k8s-client-bench --bench decode`.

use std::alloc::System;
use std::time::{Duration, Instant};

use cap::Cap;
use k8s_client::api::core::v1::PodList;

// Counting allocator: live heap bytes are read before and after a decode.
#[global_allocator]
static ALLOC: Cap<System> = Cap::new(System, usize::MAX);

const ROUNDS: usize = 21;

struct Figures {
    best: Duration,
    median: Duration,
    heap_per_pod: f64,
    pods: usize,
}

/// One way to decode the list: its name and a function returning the number
/// of pods it decoded and the list (dropped after the clock stops).
type Decoder<'a> = (&'a str, Box<dyn Fn(&[u8]) -> (usize, Box<dyn std::any::Any>) + 'a>);

/// Runs the decoders in turn, round after round, so that a slow stretch of
/// the machine (or the heap's state after the one before) does not fall on
/// one decoder only.
fn measure(json: &[u8], decoders: &[Decoder]) -> Vec<Figures> {
    let mut times = vec![Vec::with_capacity(ROUNDS); decoders.len()];
    let mut heap = vec![(0usize, 0usize); decoders.len()];
    for _ in 0..ROUNDS {
        for (i, (_, decode)) in decoders.iter().enumerate() {
            let before = ALLOC.allocated();
            let start = Instant::now();
            let (pods, list) = decode(json);
            times[i].push(start.elapsed());
            heap[i] = (ALLOC.allocated() - before, pods);
            drop(list);
        }
    }
    times
        .into_iter()
        .zip(heap)
        .map(|(mut t, (bytes, pods))| {
            t.sort();
            Figures { best: t[0], median: t[ROUNDS / 2], heap_per_pod: bytes as f64 / pods as f64, pods }
        })
        .collect()
}

fn report(name: &str, json_len: usize, f: &Figures) {
    let mb = json_len as f64 / 1e6;
    println!(
        "{name:<24} pods={} median={:>7.1} ms ({:>6.1} MB/s)  best={:>7.1} ms ({:>6.1} MB/s)  heap/pod={:>8.0} B ({:.2}x JSON)",
        f.pods,
        f.median.as_secs_f64() * 1e3,
        mb / f.median.as_secs_f64(),
        f.best.as_secs_f64() * 1e3,
        mb / f.best.as_secs_f64(),
        f.heap_per_pod,
        f.heap_per_pod / (json_len as f64 / f.pods as f64),
    );
}

type OpenapiPodList = k8s_openapi::List<k8s_openapi::api::core::v1::Pod>;

fn main() {
    // `cargo test --benches` runs bench targets with `--bench` absent: stay quick then.
    if !std::env::args().any(|a| a == "--bench") {
        println!("decode bench: pass --bench (cargo bench) to measure");
        return;
    }
    let json =
        k8s_client_bench::gunzip_file(k8s_client_bench::SHARED_PODLIST.as_ref()).unwrap_or_else(|e| panic!("{e}"));
    println!("input: {} bytes of JSON, {ROUNDS} rounds each, decoders taking turns", json.len());
    let decoders: Vec<Decoder> = vec![
        // What the runtime does with every response body and watch event.
        (
            "k8s-client",
            Box::new(|j| {
                let list = k8s_client_runtime::codec::decode_json::<PodList>(j).expect("decode k8s-client PodList");
                (list.items.len(), Box::new(list))
            }),
        ),
        // kube's client checks a body's UTF-8 (`String::from_utf8`) and
        // decodes the text with `serde_json::from_str`.
        (
            "k8s-openapi (text)",
            Box::new(|j| {
                let text = std::str::from_utf8(j).expect("the list is UTF-8");
                let list = serde_json::from_str::<OpenapiPodList>(text).expect("decode k8s-openapi PodList");
                (list.items.len(), Box::new(list))
            }),
        ),
        (
            "k8s-openapi (bytes)",
            Box::new(|j| {
                let list = serde_json::from_slice::<OpenapiPodList>(j).expect("decode k8s-openapi PodList");
                (list.items.len(), Box::new(list))
            }),
        ),
    ];
    let figures = measure(&json, &decoders);
    for ((name, _), f) in decoders.iter().zip(&figures) {
        report(name, json.len(), f);
    }
    // Against the faster of k8s-openapi's two ways.
    let ours = &figures[0];
    let theirs = figures[1..].iter().min_by_key(|f| f.median).expect("two k8s-openapi decoders");
    println!(
        "ratio k8s-client/k8s-openapi: throughput {:.2}x (median, against k8s-openapi's faster way), heap per pod {:.2}x",
        theirs.median.as_secs_f64() / ours.median.as_secs_f64(),
        ours.heap_per_pod / theirs.heap_per_pod
    );
}
