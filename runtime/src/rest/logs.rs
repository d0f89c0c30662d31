//! Container logs as a stream of lines (`pods/log`).
//!
//! * [`ResourceClient::log_stream`] with [`LogOptions`] (or a generated
//!   `PodLogParams`): one item per line, as the kubelet writes them; with
//!   `follow` the stream stays open while the container runs and ends
//!   cleanly when it stops. No client-side timeout applies.
//! * [`lines`] turns any byte stream (such as
//!   [`ResourceClient::stream_subresource`]'s) into the same line stream.
//! * For the whole log at once, the generated `log` (or
//!   [`ResourceClient::get_subresource_text`]).

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::{Bytes, BytesMut};
use futures_util::Stream;
use serde::Serialize;

use super::error::Error;
use super::resource::{ClientObject, ResourceClient};
use super::watch::ByteStream;

/// Kinds with a `log` subresource (pods).
pub trait HasLog: ClientObject {}

/// What log to read (the query of `pods/log`, client-go's
/// `PodLogOptions`); `None` fields are left to the server's default.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LogOptions {
    /// The container; `None` for a pod with one container.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub container: Option<String>,
    /// Keep the stream open and send lines as they are written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub follow: Option<bool>,
    /// The log of the previous, terminated instance of the container.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous: Option<bool>,
    /// Only lines written in the last this many seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub since_seconds: Option<i64>,
    /// Only lines written at or after this RFC 3339 time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub since_time: Option<String>,
    /// Only the last this many lines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tail_lines: Option<i64>,
    /// Start each line with its RFC 3339 time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamps: Option<bool>,
    /// Stop after about this many bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit_bytes: Option<i64>,
}

impl<K: HasLog> ResourceClient<K> {
    /// The log of the pod `name`, line by line; `params` is [`LogOptions`],
    /// a generated `PodLogParams`, or any flat struct of the query.
    ///
    /// # Cancel safety
    /// Dropping the future or the stream closes the connection.
    pub async fn log_stream<P: Serialize + ?Sized>(&self, name: &str, params: &P) -> Result<Lines, Error> {
        Ok(lines(self.stream_subresource(name, "log", params).await?))
    }
}

/// The lines of `bytes`, each without its `\n` (nor a `\r` before it); a
/// last line without `\n` comes when the stream ends.
pub fn lines(bytes: ByteStream) -> Lines {
    Lines { bytes, pending: BytesMut::new(), done: false }
}

/// A stream of lines as raw bytes (a log need not be UTF-8: use
/// `String::from_utf8_lossy` to print one); made by [`lines`].
#[must_use = "a stream does nothing unless polled"]
pub struct Lines {
    bytes: ByteStream,
    /// Bytes after the last `\n` seen.
    pending: BytesMut,
    done: bool,
}

impl std::fmt::Debug for Lines {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lines").field("pending", &self.pending.len()).field("done", &self.done).finish()
    }
}

fn take_line(pending: &mut BytesMut) -> Option<Bytes> {
    let end = memchr::memchr(b'\n', pending)?;
    let mut line = pending.split_to(end + 1);
    line.truncate(end);
    if line.last() == Some(&b'\r') {
        line.truncate(end - 1);
    }
    Some(line.freeze())
}

impl Stream for Lines {
    type Item = Result<Bytes, Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        loop {
            if let Some(line) = take_line(&mut this.pending) {
                return Poll::Ready(Some(Ok(line)));
            }
            if this.done {
                if this.pending.is_empty() {
                    return Poll::Ready(None);
                }
                return Poll::Ready(Some(Ok(this.pending.split().freeze())));
            }
            match this.bytes.as_mut().poll_next(cx) {
                Poll::Ready(Some(Ok(chunk))) => this.pending.extend_from_slice(&chunk),
                Poll::Ready(Some(Err(e))) => {
                    this.done = true;
                    return Poll::Ready(Some(Err(e)));
                }
                Poll::Ready(None) => this.done = true,
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::{StreamExt as _, TryStreamExt as _};
    use proptest::prelude::*;

    fn chunks(parts: Vec<&'static [u8]>) -> ByteStream {
        futures_util::stream::iter(parts.into_iter().map(|p| Ok(Bytes::from_static(p)))).boxed()
    }

    #[tokio::test]
    async fn lines_are_split_across_chunks_and_the_last_comes_at_the_end() {
        let got: Vec<Bytes> =
            lines(chunks(vec![b"one\ntw", b"o\r\n", b"", b"three\nfour"])).try_collect().await.unwrap();
        assert_eq!(got, vec![&b"one"[..], b"two", b"three", b"four"]);
    }

    #[tokio::test]
    async fn an_empty_stream_has_no_lines() {
        assert_eq!(lines(chunks(vec![])).count().await, 0);
        let got: Vec<Bytes> = lines(chunks(vec![b"\n"])).try_collect().await.unwrap();
        assert_eq!(got, vec![Bytes::new()]);
    }

    #[test]
    fn log_options_are_the_servers_query() {
        let opts = LogOptions {
            container: Some("app".into()),
            follow: Some(true),
            since_seconds: Some(10),
            tail_lines: Some(5),
            timestamps: Some(true),
            previous: Some(false),
            ..LogOptions::default()
        };
        assert_eq!(
            serde_urlencoded::to_string(&opts).unwrap(),
            "container=app&follow=true&previous=false&sinceSeconds=10&tailLines=5&timestamps=true"
        );
    }

    proptest! {
        #[test]
        fn no_byte_is_lost(text in "[a-z\n]{0,200}", cut in 0usize..200) {
            let cut = cut.min(text.len());
            let (a, b) = text.split_at(cut);
            let stream = futures_util::stream::iter(vec![
                Ok(Bytes::copy_from_slice(a.as_bytes())),
                Ok(Bytes::copy_from_slice(b.as_bytes())),
            ]).boxed();
            let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
            let got: Vec<Bytes> = rt.block_on(lines(stream).try_collect()).unwrap();
            let mut expected: Vec<&str> = text.split('\n').collect();
            if expected.last() == Some(&"") {
                expected.pop();
            }
            let got: Vec<String> = got.iter().map(|l| String::from_utf8(l.to_vec()).unwrap()).collect();
            prop_assert_eq!(got, expected);
        }
    }
}
