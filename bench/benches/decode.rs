//! Decoding `shared/bench/podlist-5000.json.gz` (5,000 realistic pods) into
//! a typed PodList: throughput (MB/s of JSON) and live heap bytes per pod,
//! for the generated crate and for k8s-openapi, in the same run.
//!
//! Measured two ways, both printed:
//! - **each decoder in its own process**, the processes alternating: a
//!   program decoding its responses over and over, its heap shaped by its
//!   own objects (as `make bench-peers` measures its programs);
//! - **taking turns in one process**: each decode starts on the heap the
//!   decoder before it left, whose freed blocks are of other sizes.
//!
//! Run: `cargo bench -p k8s-client-bench --bench decode`.

use std::process::Command;
use std::time::{Duration, Instant};

use k8s_client::api::core::v1::PodList;

// Counting allocator: live heap bytes are read before and after a decode.
#[global_allocator]
static ALLOC: k8s_client_bench::CountingAlloc = k8s_client_bench::CountingAlloc;

const ROUNDS: usize = 21;
/// Each decoder in its own process: this many processes per decoder, taking
/// turns, each timing [`ROUNDS_PER_PROCESS`] decodes after two to warm up.
const PROCESSES: usize = 5;
/// Ten, not fewer: a process's decodes can go through phases as glibc's
/// heap changes shape from one decode to the next. In the plain loop of
/// `examples/decode_loop.rs`, a list grown by `realloc` took 34.5–37.6 ms
/// in the third to sixth decodes and mostly 40–42 ms after; five rounds
/// after two to warm up would time only the first phase.
const ROUNDS_PER_PROCESS: usize = 10;

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
/// the machine does not fall on one decoder only. Each decode starts on the
/// heap the decoder before it left: glibc finishes freeing that list during
/// the next decoder's first allocations, in blocks of other sizes.
fn measure_in_turns(json: &[u8], decoders: &[Decoder]) -> Vec<Figures> {
    let mut times = vec![Vec::with_capacity(ROUNDS); decoders.len()];
    let mut heap = vec![(0usize, 0usize); decoders.len()];
    for _ in 0..ROUNDS {
        for (i, (_, decode)) in decoders.iter().enumerate() {
            let before = k8s_client_bench::thread_heap_bytes();
            let start = Instant::now();
            let (pods, list) = decode(json);
            times[i].push(start.elapsed());
            heap[i] = (k8s_client_bench::thread_heap_bytes() - before, pods);
            drop(list);
        }
    }
    times.into_iter().zip(heap).map(|(t, (bytes, pods))| figures(t, bytes, pods)).collect()
}

fn figures(mut times: Vec<Duration>, heap_bytes: usize, pods: usize) -> Figures {
    times.sort();
    Figures { best: times[0], median: times[times.len() / 2], heap_per_pod: heap_bytes as f64 / pods as f64, pods }
}

/// Runs decoder `index` alone in a child process (this program with
/// `--decoder <index>`), [`PROCESSES`] times, the decoders' processes
/// taking turns.
fn measure_alone(decoders: &[Decoder]) -> Vec<Figures> {
    let exe = std::env::current_exe().expect("the bench's own path");
    let mut times = vec![Vec::new(); decoders.len()];
    let mut heap = vec![(0usize, 0usize); decoders.len()];
    for _ in 0..PROCESSES {
        for (i, (name, _)) in decoders.iter().enumerate() {
            let out = Command::new(&exe)
                .args(["--bench", "--decoder", &i.to_string()])
                .output()
                .unwrap_or_else(|e| panic!("run {}: {e}", exe.display()));
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(out.status.success(), "{name} in its own process failed: {}", String::from_utf8_lossy(&out.stderr));
            // One line: `<heap bytes> <pods> <nanoseconds>...`.
            let fields: Vec<u128> = text
                .split_whitespace()
                .map(|f| f.parse().unwrap_or_else(|e| panic!("{name}'s process printed {text:?}: {e}")))
                .collect();
            assert!(fields.len() > 2, "{name}'s process printed {text:?}");
            heap[i] = (fields[0] as usize, fields[1] as usize);
            times[i].extend(fields[2..].iter().map(|&ns| Duration::from_nanos(ns as u64)));
        }
    }
    times.into_iter().zip(heap).map(|(t, (bytes, pods))| figures(t, bytes, pods)).collect()
}

/// The child of [`measure_alone`]: two decodes to warm up (the first one's
/// live heap counted; until the second, the heap still grows into fresh
/// pages), then [`ROUNDS_PER_PROCESS`] timed, each list dropped after the
/// clock stops.
fn run_alone(json: &[u8], (_, decode): &Decoder) {
    let before = k8s_client_bench::thread_heap_bytes();
    let (pods, warm) = decode(json);
    let heap = k8s_client_bench::thread_heap_bytes() - before;
    drop(warm);
    drop(decode(json));
    let mut line = format!("{heap} {pods}");
    for _ in 0..ROUNDS_PER_PROCESS {
        let start = Instant::now();
        let (_, list) = decode(json);
        let ns = start.elapsed().as_nanos();
        drop(list);
        line.push_str(&format!(" {ns}"));
    }
    println!("{line}");
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
    if let Some(index) = arg_after("--decoder") {
        let index: usize = index.parse().expect("--decoder takes a decoder's index");
        run_alone(&json, &decoders[index]);
        return;
    }
    println!(
        "input: {} bytes of JSON; each decoder in its own process ({PROCESSES} processes taking turns, \
         {ROUNDS_PER_PROCESS} rounds each), then taking turns in one process ({ROUNDS} rounds)",
        json.len()
    );
    let alone = measure_alone(&decoders);
    println!("each decoder in its own process:");
    compare(&decoders, json.len(), &alone);
    let in_turns = measure_in_turns(&json, &decoders);
    println!("taking turns in one process:");
    compare(&decoders, json.len(), &in_turns);
}

fn arg_after(flag: &str) -> Option<String> {
    let mut args = std::env::args();
    args.find(|a| a == flag)?;
    args.next()
}

fn compare(decoders: &[Decoder], json_len: usize, figures: &[Figures]) {
    for ((name, _), f) in decoders.iter().zip(figures) {
        report(name, json_len, f);
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
