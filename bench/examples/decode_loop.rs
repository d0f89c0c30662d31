//! Decodes `shared/bench/podlist-5000.json.gz` twenty times, as the runtime
//! decodes a response (`codec::decode_json`): a steady loop
//! to profile, e.g. `perf record -g target/release/examples/decode_loop`
//! after `CARGO_PROFILE_RELEASE_DEBUG=1 cargo build --release -p k8s-client-bench --example decode_loop`.

fn main() {
    let json =
        k8s_client_bench::gunzip_file(k8s_client_bench::SHARED_PODLIST.as_ref()).unwrap_or_else(|e| panic!("{e}"));
    for _ in 0..20 {
        let list: k8s_client::api::core::v1::PodList =
            k8s_client_runtime::codec::decode_json(&json).expect("decode PodList");
        std::hint::black_box(list);
    }
}
