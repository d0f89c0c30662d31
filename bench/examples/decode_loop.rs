use std::io::Read;
fn main() {
    let mut json = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open("../shared/bench/podlist-5000.json.gz").unwrap())
        .read_to_end(&mut json)
        .unwrap();
    for _ in 0..20 {
        let list: k8s_client::api::core::v1::PodList = serde_json::from_slice(&json).unwrap();
        std::hint::black_box(list);
    }
}
