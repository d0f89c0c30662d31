//! Responses compressed with gzip. A client asks for them
//! (`Accept-Encoding: gzip`, as Go's transport does for client-go) unless
//! its [`Config::disable_compression`](crate::config::Config::disable_compression)
//! says not to (kubeconfig `disable-compression`); the apiserver compresses
//! responses over 128 KB (`APIResponseCompression`), so lists of many or
//! large objects (custom resources, which have no protobuf, above all)
//! cross the network at a fraction of their size. A compressed body is
//! decoded as it streams, so a watch or a paged list reads its events as
//! they come, and its end is checked (the trailer's CRC and length): a
//! truncated or corrupt body is an error, never a short answer.

use std::io::Write;

use bytes::Bytes;
use flate2::write::MultiGzDecoder;

/// The `Accept-Encoding` a client sends when compression is on.
pub(super) const ACCEPT_GZIP: &str = "gzip";

/// One compressed body's decoder. A body may hold several gzip members
/// one after another (the apiserver's streamed responses do), read as one
/// stream, as Go's `gzip.Reader` reads them.
pub(super) struct Gunzip {
    decoder: MultiGzDecoder<Vec<u8>>,
}

impl Gunzip {
    pub(super) fn new() -> Self {
        Gunzip { decoder: MultiGzDecoder::new(Vec::new()) }
    }

    /// Decodes `chunk`; returns what it decompressed, possibly nothing yet.
    pub(super) fn feed(&mut self, chunk: &[u8]) -> std::io::Result<Bytes> {
        self.decoder.write_all(chunk)?;
        // The decoder keeps what it decoded until its next write unless
        // flushed: a watch's last event before a quiet spell would wait
        // for the next one.
        self.decoder.flush()?;
        Ok(self.take())
    }

    /// At the end of the body: the rest, once the trailer checks out.
    pub(super) fn finish(&mut self) -> std::io::Result<Bytes> {
        self.decoder.try_finish()?;
        Ok(self.take())
    }

    fn take(&mut self) -> Bytes {
        Bytes::from(std::mem::take(self.decoder.get_mut()))
    }
}

/// Whether `headers` say the body is gzip-compressed.
pub(super) fn is_gzip(headers: &http::HeaderMap) -> bool {
    headers
        .get(http::header::CONTENT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("gzip"))
}

#[cfg(test)]
mod tests {
    use flate2::Compression;
    use flate2::write::GzEncoder;

    use super::*;

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut e = GzEncoder::new(Vec::new(), Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn a_body_decodes_however_it_is_chunked() {
        let data: Vec<u8> = (0..200_000u32).flat_map(|i| (i % 251).to_le_bytes()).collect();
        let compressed = gzip(&data);
        for chunk in [1, 7, 4096, compressed.len()] {
            let mut g = Gunzip::new();
            let mut out = Vec::new();
            for piece in compressed.chunks(chunk) {
                out.extend_from_slice(&g.feed(piece).unwrap());
            }
            out.extend_from_slice(&g.finish().unwrap());
            assert_eq!(out, data, "chunks of {chunk}");
        }
    }

    /// What the server flushed (a watch event, the initial events' end)
    /// comes out at once, not when the next bytes come.
    #[test]
    fn what_the_server_flushed_is_decoded_at_once() {
        let mut e = GzEncoder::new(Vec::new(), Compression::default());
        let mut g = Gunzip::new();
        let mut sent = 0;
        let mut out = Vec::new();
        for event in [&b"{\"type\":\"ADDED\"}\n"[..], b"{\"type\":\"BOOKMARK\"}\n"] {
            e.write_all(event).unwrap();
            e.flush().unwrap();
            let wire = e.get_ref();
            out.extend_from_slice(&g.feed(&wire[sent..]).unwrap());
            sent = wire.len();
            assert!(out.ends_with(event), "{:?}", String::from_utf8_lossy(&out));
        }
    }

    #[test]
    fn members_one_after_another_are_one_stream() {
        let mut wire = gzip(b"first member\n");
        wire.extend(gzip(b"second member\n"));
        let mut g = Gunzip::new();
        let mut out = g.feed(&wire).unwrap().to_vec();
        out.extend_from_slice(&g.finish().unwrap());
        assert_eq!(out, b"first member\nsecond member\n");
    }

    #[test]
    fn a_truncated_or_corrupt_body_is_an_error() {
        let compressed = gzip(b"{\"kind\":\"List\",\"items\":[]}");
        let mut g = Gunzip::new();
        g.feed(&compressed[..compressed.len() - 4]).unwrap();
        assert!(g.finish().is_err(), "a body cut before its trailer ends in an error");

        let mut corrupt = compressed.clone();
        let last = corrupt.len() - 5;
        corrupt[last] ^= 0xff;
        let mut g = Gunzip::new();
        let fed = g.feed(&corrupt);
        assert!(fed.is_err() || g.finish().is_err(), "a changed CRC is an error");
    }

    #[test]
    fn only_gzip_is_recognised() {
        let mut h = http::HeaderMap::new();
        assert!(!is_gzip(&h));
        h.insert(http::header::CONTENT_ENCODING, "GZIP".parse().unwrap());
        assert!(is_gzip(&h));
        h.insert(http::header::CONTENT_ENCODING, "br".parse().unwrap());
        assert!(!is_gzip(&h));
    }
}
