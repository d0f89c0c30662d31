//! The server's limit of concurrent streams on an HTTP/2 connection,
//! read from its first SETTINGS frame as the bytes pass by.
//!
//! hyper's HTTP/2 client keeps the server's settings to itself, and once a
//! connection holds as many streams as the server allows it stops taking
//! any request until one ends. The [`pool`](super::pool) avoids that by
//! opening another connection first, as Go's transport does, which needs
//! the limit: kube-apiserver's `--http2-max-streams-per-connection`, 100
//! unless set. The server's connection preface is a SETTINGS frame, the
//! first frame it sends (RFC 9113 §3.4); later SETTINGS frames, which
//! kube-apiserver does not send, are not read.

/// Streams assumed until the server said (Go's
/// `initialMaxConcurrentStreams`, and kube-apiserver's default).
pub(super) const INITIAL_STREAM_LIMIT: usize = 100;

/// Streams assumed when the server's SETTINGS name no limit (Go's
/// `defaultMaxConcurrentStreams`).
const UNSTATED_STREAM_LIMIT: usize = 1000;

const FRAME_HEADER: usize = 9;
const SETTINGS: u8 = 0x4;
const SETTINGS_MAX_CONCURRENT_STREAMS: u16 = 0x3;
/// The largest frame a peer may send before settings say otherwise.
const MAX_FRAME: usize = 16_384;

/// Reads the server's first frame and tells its stream limit.
pub(super) struct SettingsSniffer {
    seen: Vec<u8>,
    tell: Option<Box<dyn FnOnce(usize) + Send>>,
}

impl SettingsSniffer {
    /// A sniffer that calls `tell` with the limit once it has read it.
    pub(super) fn new(tell: impl FnOnce(usize) + Send + 'static) -> Self {
        SettingsSniffer { seen: Vec::with_capacity(FRAME_HEADER + 36), tell: Some(Box::new(tell)) }
    }

    /// Takes the next bytes the server sent; true once the first frame has
    /// been read (or is not a SETTINGS frame), when the sniffer is done.
    pub(super) fn feed(&mut self, bytes: &[u8]) -> bool {
        if bytes.is_empty() {
            return false;
        }
        let wanted = match self.frame_len() {
            Some(len) => FRAME_HEADER + len,
            None => FRAME_HEADER,
        };
        let take = bytes.len().min(wanted.saturating_sub(self.seen.len()));
        self.seen.extend_from_slice(&bytes[..take]);
        if self.seen.len() < FRAME_HEADER {
            return false;
        }
        let Some(len) = self.frame_len() else { return true };
        if self.seen.len() < FRAME_HEADER + len {
            // The header came in this read; the payload may have too.
            return self.feed(&bytes[take..]);
        }
        let payload = &self.seen[FRAME_HEADER..];
        // A setting given twice counts as its last value.
        let stated = payload
            .chunks_exact(6)
            .rev()
            .find(|entry| u16::from_be_bytes([entry[0], entry[1]]) == SETTINGS_MAX_CONCURRENT_STREAMS)
            .map(|entry| u32::from_be_bytes([entry[2], entry[3], entry[4], entry[5]]));
        let limit = match stated {
            // Zero streams would open connections without end; one at a
            // time still makes progress.
            Some(n) => usize::try_from(n).unwrap_or(usize::MAX).max(1),
            None => UNSTATED_STREAM_LIMIT,
        };
        if let Some(tell) = self.tell.take() {
            tell(limit);
        }
        true
    }

    /// The payload length of a SETTINGS frame whose header has been read;
    /// `None` before that, or for a frame that is not a sound SETTINGS
    /// frame (no limit is learnt then).
    fn frame_len(&self) -> Option<usize> {
        let h = self.seen.get(..FRAME_HEADER)?;
        let len = usize::from(h[0]) << 16 | usize::from(h[1]) << 8 | usize::from(h[2]);
        let ack = h[4] & 0x1 != 0;
        (h[3] == SETTINGS && !ack && len % 6 == 0 && len <= MAX_FRAME).then_some(len)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    fn frame(entries: &[(u16, u32)]) -> Vec<u8> {
        let len = entries.len() * 6;
        let mut f = vec![(len >> 16) as u8, (len >> 8) as u8, len as u8, SETTINGS, 0, 0, 0, 0, 0];
        for (id, v) in entries {
            f.extend_from_slice(&id.to_be_bytes());
            f.extend_from_slice(&v.to_be_bytes());
        }
        f
    }

    fn sniff(bytes: &[u8], split: usize) -> (bool, usize) {
        let limit = Arc::new(AtomicUsize::new(INITIAL_STREAM_LIMIT));
        let told = Arc::clone(&limit);
        let mut s = SettingsSniffer::new(move |n| told.store(n, Ordering::Release));
        let (a, b) = bytes.split_at(split.min(bytes.len()));
        let done = s.feed(a) || s.feed(b);
        (done, limit.load(Ordering::Acquire))
    }

    #[test]
    fn reads_the_stream_limit_however_the_bytes_are_split() {
        // kube-apiserver's preface: max streams, window, frame size.
        let mut bytes = frame(&[(0x3, 250), (0x4, 262_144), (0x5, 16_384)]);
        bytes.extend_from_slice(&[0, 0, 4, 8, 0, 0, 0, 0, 0, 1, 2, 3, 4]); // a WINDOW_UPDATE after it
        for split in 0..=bytes.len() {
            assert_eq!(sniff(&bytes, split), (true, 250), "split at {split}");
        }
    }

    #[test]
    fn no_limit_stated_is_go_s_default_and_zero_is_one() {
        assert_eq!(sniff(&frame(&[(0x4, 65_535)]), 4), (true, UNSTATED_STREAM_LIMIT));
        assert_eq!(sniff(&frame(&[]), 9), (true, UNSTATED_STREAM_LIMIT));
        assert_eq!(sniff(&frame(&[(0x3, 0)]), 20), (true, 1));
        assert_eq!(sniff(&frame(&[(0x3, 10), (0x3, 20)]), 3), (true, 20), "the last value counts");
    }

    #[test]
    fn another_first_frame_teaches_nothing() {
        let mut ping = frame(&[(0x3, 5)]);
        ping[3] = 0x6;
        assert_eq!(sniff(&ping, 9), (true, INITIAL_STREAM_LIMIT));
        let mut odd = frame(&[(0x3, 5)]);
        odd[2] = 7;
        assert_eq!(sniff(&odd, 30), (true, INITIAL_STREAM_LIMIT));
        assert_eq!(sniff(&[0, 0], 1), (false, INITIAL_STREAM_LIMIT), "waits for a whole header");
    }
}
