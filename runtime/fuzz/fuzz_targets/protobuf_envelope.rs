//! Arbitrary bytes as a protobuf body and as a protobuf watch stream.
//!
//! The first byte picks the chunk size, the rest is the input. Checked:
//! - [`Envelope::decode`] returns an envelope or an error, never panics,
//!   and an envelope it returns, written again, reads back the same;
//! - [`FrameDecoder`] cuts the same frames whether the stream comes in
//!   those chunks or whole, never returns a frame over its maximum, and
//!   keeps its buffer within the maximum, a header and one chunk;
//! - [`WatchEventFrame::decode`] of each frame never panics, and an event
//!   it returns, written again, reads back the same.
#![no_main]

use k8s_client_runtime::protobuf::{Envelope, FrameDecoder, WatchEventFrame};
use libfuzzer_sys::fuzz_target;

const MAX_FRAME: usize = 4096;

fuzz_target!(|data: &[u8]| {
    let Some((&cut_seed, body)) = data.split_first() else { return };
    let chunk = usize::from(cut_seed).max(1);

    if let Ok(envelope) = Envelope::decode(body) {
        let again = envelope.encode();
        assert_eq!(Envelope::decode(&again).expect("a written envelope reads back"), envelope);
    }

    let chunked = frames(body, chunk);
    assert_eq!(chunked, frames(body, body.len().max(1)), "frames depend on chunks of {chunk}");
    for frame in chunked.0 {
        if let Ok(event) = WatchEventFrame::decode(&frame) {
            let again = event.encode();
            assert_eq!(WatchEventFrame::decode(&again).expect("a written event reads back"), event);
        }
    }
});

/// The frames of `body` pushed in chunks of `chunk`, and how it ended.
fn frames(body: &[u8], chunk: usize) -> (Vec<bytes::Bytes>, Result<(), String>) {
    let mut decoder = FrameDecoder::new(MAX_FRAME);
    let mut out = Vec::new();
    for piece in body.chunks(chunk) {
        decoder.push(piece);
        loop {
            match decoder.next_frame() {
                Ok(Some(frame)) => {
                    assert!(frame.len() <= MAX_FRAME);
                    out.push(frame);
                }
                Ok(None) => break,
                Err(e) => return (out, Err(e.to_string())),
            }
        }
        assert!(decoder.buffered() <= MAX_FRAME + 4 + chunk);
    }
    (out, decoder.finish().map_err(|e| e.to_string()))
}
