//! Decodes `shared/bench/podlist-5000.json.gz` twenty times, as the runtime
//! decodes a response (`codec::decode_json`), and prints each decode's time
//! (the list dropped after the clock stops): a steady loop to profile, e.g.
//! `perf record -g target/release/examples/decode_loop` after
//! `CARGO_PROFILE_RELEASE_DEBUG=1 cargo build --release -p k8s-client-bench --example decode_loop`,
//! and a plain program (no counting allocator) whose decodes show how the
//! heap left by one decode shapes the next.

use std::time::Instant;

fn main() {
    let json =
        k8s_client_bench::gunzip_file(k8s_client_bench::SHARED_PODLIST.as_ref()).unwrap_or_else(|e| panic!("{e}"));
    let mut times = Vec::new();
    for _ in 0..20 {
        let start = Instant::now();
        let list: k8s_client::api::core::v1::PodList =
            k8s_client_runtime::codec::decode_json(&json).expect("decode PodList");
        times.push(format!("{:.1}", start.elapsed().as_secs_f64() * 1e3));
        drop(std::hint::black_box(list));
    }
    println!("ms per decode: {}", times.join(" "));
}
