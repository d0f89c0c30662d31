//! Arbitrary bytes, cut into arbitrary chunks, as a watch response body.
//!
//! The first byte picks the chunk size, the rest is the body. Checked:
//! - [`WatchDecoder`] returns frames or an error, never panics, never
//!   returns a frame over the event size limit, and keeps its buffer within
//!   the limit plus one chunk;
//! - [`watch_stream`] yields the same events and errors whether the body
//!   arrives in those chunks or all at once (how a body is cut must never
//!   change what it means), and stops after its first error that is not an
//!   `ERROR` event.
#![no_main]

use bytes::Bytes;
use futures_util::{FutureExt as _, StreamExt as _};
use k8s_client_runtime::rest::watch::{WatchDecoder, decode_event, watch_stream};
use libfuzzer_sys::fuzz_target;

const MAX_EVENT: usize = 4096;

fuzz_target!(|data: &[u8]| {
    let Some((&cut_seed, body)) = data.split_first() else { return };
    let chunk = usize::from(cut_seed).max(1);
    decoder_alone(body, chunk);
    let chunked = events(body.chunks(chunk).map(Bytes::copy_from_slice).collect());
    let whole = events(vec![Bytes::copy_from_slice(body)]);
    assert_eq!(chunked, whole, "events depend on how the body was cut into chunks of {chunk}");
});

fn decoder_alone(body: &[u8], chunk: usize) {
    let mut decoder = WatchDecoder::new(MAX_EVENT);
    for piece in body.chunks(chunk) {
        decoder.push(piece);
        loop {
            match decoder.next_frame() {
                Ok(Some(frame)) => {
                    assert!(frame.len() <= MAX_EVENT);
                    let _ = decode_event::<serde_json::Value>(&frame);
                }
                Ok(None) => break,
                Err(_) => return,
            }
        }
        assert!(decoder.buffered() <= MAX_EVENT + chunk);
    }
    let _ = decoder.finish();
}

/// Every item of a watch over `chunks`, errors as their Debug text.
fn events(chunks: Vec<Bytes>) -> Vec<Result<String, String>> {
    let body = futures_util::stream::iter(chunks.into_iter().map(Ok)).boxed();
    let mut stream = watch_stream::<serde_json::Value>(body, MAX_EVENT);
    let mut out = Vec::new();
    // The body is always ready, so is every poll of the stream.
    while let Some(item) = stream.next().now_or_never().expect("a ready body gives a ready stream") {
        let stops = matches!(&item, Err(e) if e.status().is_none());
        out.push(item.map(|event| format!("{event:?}")).map_err(|e| format!("{e:?}")));
        if stops {
            let after = stream.next().now_or_never().expect("a ready body gives a ready stream");
            assert!(after.is_none(), "the stream went on after an error");
            break;
        }
    }
    out
}
