//! Watch stream decoding throughput: framing plus JSON decoding of
//! pod-sized events arriving in 16 KiB chunks, as from a TLS connection.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use k8s_client_runtime::rest::watch::{WatchDecoder, WatchEvent, decode_event};

const EVENTS: usize = 1000;

fn stream() -> Vec<u8> {
    let mut out = Vec::new();
    for i in 0..EVENTS {
        let labels: serde_json::Map<String, serde_json::Value> =
            (0..10).map(|l| (format!("label-{l}"), format!("value-{i}-{l}").into())).collect();
        let event = serde_json::json!({
            "type": "MODIFIED",
            "object": {
                "apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": format!("pod-{i}"), "namespace": "bench", "resourceVersion": i.to_string(), "labels": labels},
                "spec": {"containers": [{"name": "c", "image": "registry.example/app:1.2.3",
                    "args": ["--flag=\"quoted\"", "{not json}"], "env": (0..20).map(|e| serde_json::json!({"name": format!("E{e}"), "value": "x".repeat(20)})).collect::<Vec<_>>()}]},
                "status": {"phase": "Running", "podIP": "10.0.0.1"}
            }
        });
        out.extend_from_slice(event.to_string().as_bytes());
        out.push(b'\n');
    }
    out
}

/// Feeds `data` to a decoder in 16 KiB chunks and counts the frames that
/// `counts` says yes to.
fn count_frames(data: &[u8], counts: impl Fn(&[u8]) -> bool) -> usize {
    let mut d = WatchDecoder::default();
    let mut n = 0;
    for chunk in data.chunks(16 * 1024) {
        d.push(chunk);
        while let Ok(Some(frame)) = d.next_frame() {
            if counts(&frame) {
                n += 1;
            }
        }
    }
    n
}

fn decode(c: &mut Criterion) {
    let data = stream();
    let mut group = c.benchmark_group("watch");
    group.throughput(Throughput::Bytes(data.len() as u64));
    group.bench_function("frame_only", |b| b.iter(|| assert_eq!(count_frames(&data, |_| true), EVENTS)));
    group.bench_function("frame_and_decode_value", |b| {
        b.iter(|| {
            let modified =
                |frame: &[u8]| matches!(decode_event::<serde_json::Value>(frame), Ok(WatchEvent::Modified(_)));
            assert_eq!(count_frames(&data, modified), EVENTS)
        })
    });
    group.finish();
}

criterion_group!(benches, decode);
criterion_main!(benches);
