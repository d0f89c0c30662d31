//! Decodes `shared/bench/podlist-5000.json.gz` twenty times: a steady loop
//! to profile, e.g. `perf record -g target/release/examples/decode_loop`
//! after `CARGO_PROFILE_RELEASE_DEBUG=1 cargo build --release -p k8s-client-bench --example decode_loop`.

use std::io::Read;

fn main() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/bench/podlist-5000.json.gz");
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut json = Vec::new();
    flate2::read::GzDecoder::new(file).read_to_end(&mut json).expect("gunzip");
    for _ in 0..20 {
        let list: k8s_client::api::core::v1::PodList = serde_json::from_slice(&json).expect("decode PodList");
        std::hint::black_box(list);
    }
}
