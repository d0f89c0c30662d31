//! Arbitrary bytes, cut into arbitrary chunks, through the watch decoder:
//! it must return events or errors, never panic, and keep its buffer
//! bounded by the event size limit plus one chunk.
#![no_main]

use k8s_client_runtime::rest::watch::{WatchDecoder, decode_event};
use libfuzzer_sys::fuzz_target;

const MAX_EVENT: usize = 4096;

fuzz_target!(|data: &[u8]| {
    let Some((&cut_seed, rest)) = data.split_first() else { return };
    let chunk = usize::from(cut_seed).max(1);
    let mut decoder = WatchDecoder::new(MAX_EVENT);
    for piece in rest.chunks(chunk) {
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
});
