//! The request builder (client-go's `rest.Request`): a path made of API
//! prefix, namespace, resource, name and subresource, plus query, body and
//! headers; then one of the ways to read the answer.

use std::time::Duration;

use bytes::Bytes;
use http::Method;
use http::header::{HeaderMap, HeaderName, HeaderValue};
use http_body_util::BodyExt as _;
use percent_encoding::{AsciiSet, CONTROLS};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::client::{Client, Prepared, body_stream};
use super::content::{Format, response_format};
use super::error::Error;
use super::pool::Body;
use super::watch::{ByteStream, WatchStream, watch_stream, watch_stream_with};
use crate::codec::{DecodeOptions, DecodeWith};

/// Characters escaped in a path segment (names may come from users).
const PATH_SEGMENT: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'`')
    .add(b'{')
    .add(b'}')
    .add(b'/')
    .add(b'%');

/// A request being built. Mistakes (an unencodable body, a bad header) are
/// kept and reported by the method that sends it.
#[must_use = "a request does nothing until sent"]
pub struct Request {
    client: Client,
    method: Method,
    prefix: String,
    namespace: Option<String>,
    resource: Option<String>,
    name: Option<String>,
    subresource: Option<String>,
    /// Escaped path segments after everything else (a proxy's path).
    suffix: String,
    /// Whether the timeout goes into the query too (not through proxies,
    /// where the query is the backend's).
    timeout_param: bool,
    query: Vec<(String, String)>,
    headers: HeaderMap,
    body: Bytes,
    timeout: Option<Duration>,
    /// Client-side bound when no `timeout` is set (`Config::deadline`).
    deadline: Option<Duration>,
    error: Option<Error>,
}

impl Client {
    /// A request with `method` under `prefix` (`/api/v1`, `/apis/apps/v1`,
    /// or any absolute path such as `/version`).
    pub fn request(&self, method: Method, prefix: impl Into<String>) -> Request {
        Request {
            client: self.clone(),
            method,
            prefix: prefix.into(),
            namespace: None,
            resource: None,
            name: None,
            subresource: None,
            suffix: String::new(),
            timeout_param: true,
            query: Vec::new(),
            headers: HeaderMap::new(),
            body: Bytes::new(),
            timeout: self.inner.timeout,
            deadline: self.inner.deadline,
            error: None,
        }
    }
    /// A `GET` request under `prefix`: get, list, watch, logs.
    pub fn get(&self, prefix: impl Into<String>) -> Request {
        self.request(Method::GET, prefix)
    }
    /// A `POST` request under `prefix`: create, and subresources such as
    /// `eviction`.
    pub fn post(&self, prefix: impl Into<String>) -> Request {
        self.request(Method::POST, prefix)
    }
    /// A `PUT` request under `prefix`: update (replace) an object or its
    /// `status`/`scale`.
    pub fn put(&self, prefix: impl Into<String>) -> Request {
        self.request(Method::PUT, prefix)
    }
    /// A `PATCH` request under `prefix`: JSON, merge, strategic merge or
    /// apply patches, told apart by `Content-Type`.
    pub fn patch(&self, prefix: impl Into<String>) -> Request {
        self.request(Method::PATCH, prefix)
    }
    /// A `DELETE` request under `prefix`: delete one object or a
    /// collection.
    pub fn delete(&self, prefix: impl Into<String>) -> Request {
        self.request(Method::DELETE, prefix)
    }
}

/// Names that cannot be a path segment (client-go's `NameMayNotBe`): the
/// URL would be normalised to another resource.
const NAME_MAY_NOT_BE: [&str; 2] = [".", ".."];
/// What a path segment may not contain (client-go's `NameMayNotContain`),
/// even escaped: proxies and the apiserver unescape before routing.
const NAME_MAY_NOT_CONTAIN: [&str; 2] = ["/", "%"];

/// client-go's `IsValidPathSegmentName`: the reasons `name` cannot be used as
/// one path segment, empty when it can.
pub(crate) fn path_segment_problems(name: &str) -> Vec<String> {
    if let Some(bad) = NAME_MAY_NOT_BE.iter().find(|b| **b == name) {
        return vec![format!("may not be '{bad}'")];
    }
    NAME_MAY_NOT_CONTAIN.iter().filter(|c| name.contains(**c)).map(|c| format!("may not contain '{c}'")).collect()
}

impl Request {
    /// Empty means none (all namespaces / cluster scope), as in client-go.
    /// `.`, `..` and names with `/` or `%` make the request fail when sent.
    pub fn namespace(mut self, namespace: &str) -> Self {
        self.check_segment("namespace", namespace);
        self.namespace = (!namespace.is_empty()).then(|| namespace.to_owned());
        self
    }
    /// The resource (plural), e.g. `pods`; goes after the namespace in the
    /// path. Names with `/` or `%` make the request fail when sent.
    pub fn resource(mut self, resource: &str) -> Self {
        self.check_segment("resource", resource);
        self.resource = Some(resource.to_owned());
        self
    }
    /// The object's name; empty, `.`, `..` and names with `/` or `%` make
    /// the request fail when sent, before anything goes on the wire.
    pub fn name(mut self, name: &str) -> Self {
        if name.is_empty() {
            self.fail(Error::InvalidRequest { what: "resource name".into(), message: "may not be empty".into() });
        }
        self.check_segment("resource name", name);
        self.name = Some(name.to_owned());
        self
    }
    /// The subresource after the object's name, e.g. `status`, `scale`,
    /// `log`; empty means none.
    pub fn subresource(mut self, subresource: &str) -> Self {
        self.check_segment("subresource", subresource);
        self.subresource = (!subresource.is_empty()).then(|| subresource.to_owned());
        self
    }

    /// Path segments after the subresource (client-go's `Suffix`): `path`
    /// is split at `/` and each segment escaped; a trailing `/` is kept.
    /// For proxies (`.../proxy/metrics`).
    pub fn suffix(mut self, path: &str) -> Self {
        for segment in path.split('/').filter(|s| !s.is_empty()) {
            if segment == "." || segment == ".." {
                self.fail(Error::InvalidRequest {
                    what: format!("path {path:?}"),
                    message: format!("may not contain {segment:?}"),
                });
            }
            self.suffix.push('/');
            self.suffix.extend(percent_encoding::utf8_percent_encode(segment, PATH_SEGMENT));
        }
        if path.ends_with('/') {
            self.suffix.push('/');
        }
        self
    }

    /// Keeps the timeout on the client side only, out of the query (a
    /// proxied request's query belongs to the backend).
    pub(super) fn without_timeout_param(mut self) -> Self {
        self.timeout_param = false;
        self
    }

    fn check_segment(&mut self, what: &str, value: &str) {
        let problems = path_segment_problems(value);
        if !problems.is_empty() {
            self.fail(Error::InvalidRequest { what: format!("{what} {value:?}"), message: problems.join(", ") });
        }
    }
    /// Adds the query parameter `key=value` (percent-encoded when sent);
    /// adding a key twice sends it twice.
    pub fn param(mut self, key: &str, value: impl Into<String>) -> Self {
        self.query.push((key.to_owned(), value.into()));
        self
    }
    /// Adds query parameters, such as the
    /// [`ListOptions::query_pairs`](super::ListOptions::query_pairs) of an
    /// options struct.
    pub fn params<K: AsRef<str>, I: IntoIterator<Item = (K, String)>>(mut self, pairs: I) -> Self {
        self.query.extend(pairs.into_iter().map(|(k, v)| (k.as_ref().to_owned(), v)));
        self
    }
    /// Query parameters from a flat struct or a list of pairs (e.g. the
    /// generated `PodLogOptions`): `None` fields are left out.
    pub fn params_from<P: Serialize + ?Sized>(mut self, params: &P) -> Self {
        match serde_urlencoded::to_string(params) {
            Ok(encoded) => {
                for (k, v) in form_pairs(&encoded) {
                    self.query.push((k, v));
                }
            }
            Err(e) => self.fail(Error::Encode { what: "query parameters".into(), message: e.to_string() }),
        }
        self
    }
    /// A JSON body (`Content-Type: application/json`).
    pub fn json_body<B: Serialize + ?Sized>(self, body: &B) -> Self {
        self.json_body_as(body, "application/json")
    }
    /// A body serialized as JSON but labelled `content_type` (patches).
    pub fn json_body_as<B: Serialize + ?Sized>(mut self, body: &B, content_type: &str) -> Self {
        match serde_json::to_vec(body) {
            Ok(bytes) => self.body(bytes, content_type),
            Err(e) => {
                self.fail(Error::Encode { what: "request body".into(), message: e.to_string() });
                self
            }
        }
    }
    /// A body sent as is, labelled `content_type`.
    pub fn body(mut self, body: impl Into<Bytes>, content_type: &str) -> Self {
        self.body = body.into();
        self.header(http::header::CONTENT_TYPE.as_str(), content_type)
    }
    /// Sets header `name`, replacing an earlier value; an invalid name or
    /// value makes the request fail when sent.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        match (HeaderName::try_from(name), HeaderValue::try_from(value)) {
            (Ok(n), Ok(v)) => {
                self.headers.insert(n, v);
            }
            _ => self.fail(Error::InvalidRequest {
                what: format!("header {name}"),
                message: "invalid name or value".into(),
            }),
        }
        self
    }
    /// Sets `Accept`, e.g. to ask for aggregated discovery or a table.
    pub fn accept(self, value: &str) -> Self {
        self.header("accept", value)
    }
    /// Bounds this request (and, for `bytes`/`json`, reading its body).
    /// Also sent as the `timeout` parameter so the server gives up too.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }
    /// Neither a timeout nor the configured default deadline: waits as long
    /// as the server takes (watches).
    pub fn no_timeout(mut self) -> Self {
        self.timeout = None;
        self.deadline = None;
        self
    }

    fn fail(&mut self, e: Error) {
        self.error.get_or_insert(e);
    }

    /// The escaped path and query this request will use.
    pub fn path_and_query(&self) -> String {
        let mut p = self.prefix.trim_end_matches('/').to_owned();
        let mut push = |seg: &str| {
            p.push('/');
            p.extend(percent_encoding::utf8_percent_encode(seg, PATH_SEGMENT));
        };
        if let Some(ns) = &self.namespace {
            push("namespaces");
            push(ns);
        }
        for seg in [&self.resource, &self.name, &self.subresource].into_iter().flatten() {
            push(seg);
        }
        p.push_str(&self.suffix);
        if p.is_empty() {
            p.push('/');
        }
        let mut query = self.query.clone();
        let watch = self.is_watch();
        if let Some(t) = self.timeout.filter(|_| self.timeout_param && !watch) {
            query.push(("timeout".into(), format!("{}s", t.as_secs().max(1))));
        }
        if !query.is_empty() {
            p.push('?');
            p.push_str(&serde_urlencoded::to_string(&query).unwrap_or_default());
        }
        p
    }

    /// Whether the query asks for a watch.
    fn is_watch(&self) -> bool {
        self.query.iter().any(|(k, v)| k == "watch" && v == "true")
    }

    pub(super) fn prepare(mut self) -> Result<(Client, Prepared, Option<Duration>), Error> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        let path_and_query = self.path_and_query();
        if !self.headers.contains_key(http::header::ACCEPT) {
            self.headers.insert(http::header::ACCEPT, HeaderValue::from_static("application/json"));
        }
        let watch = self.is_watch();
        let prepared = Prepared { method: self.method, path_and_query, headers: self.headers, body: self.body, watch };
        Ok((self.client, prepared, self.timeout.or(self.deadline)))
    }

    /// Sends and returns the 2xx response, body unread.
    ///
    /// # Cancel safety
    /// Dropping the future abandons the request (the connection is closed
    /// or returned to the pool); nothing is retried later.
    pub async fn send(self) -> Result<http::Response<Body>, Error> {
        let (client, prepared, timeout) = self.prepare()?;
        with_timeout(timeout, client.execute(&prepared)).await
    }

    /// The whole body.
    ///
    /// # Cancel safety
    /// As [`Request::send`].
    pub async fn bytes(self) -> Result<Bytes, Error> {
        let (client, prepared, timeout) = self.prepare()?;
        with_timeout(timeout, async {
            let response = client.execute(&prepared).await?;
            Ok(response.into_body().collect().await?.to_bytes())
        })
        .await
    }

    /// The whole body and its format, by its `Content-Type` (for a request
    /// that negotiated protobuf), with what it answers to name it in
    /// errors.
    pub(super) async fn negotiated_bytes(self) -> Result<(Bytes, Format, String), Error> {
        let what = format!("{} {} response", self.method, self.path_and_query());
        let (client, prepared, timeout) = self.prepare()?;
        let (headers, body) = with_timeout(timeout, async {
            let response = client.execute(&prepared).await?;
            let headers = response.headers().clone();
            Ok((headers, response.into_body().collect().await?.to_bytes()))
        })
        .await?;
        let format = response_format(&headers, &body, &what)?;
        Ok((body, format, what))
    }

    /// The body decoded from JSON.
    ///
    /// # Cancel safety
    /// As [`Request::send`].
    pub async fn json<T: DeserializeOwned>(self) -> Result<T, Error> {
        let what = format!("{} {} response", self.method, self.path_and_query());
        let bytes = self.bytes().await?;
        crate::codec::decode_json(&bytes).map_err(|source| Error::Decode { what, source })
    }

    /// The body decoded from JSON with `options` (e.g. without any
    /// `metadata.managedFields`).
    ///
    /// # Cancel safety
    /// As [`Request::send`].
    pub async fn json_with<T: DecodeWith>(self, options: DecodeOptions) -> Result<T, Error> {
        let what = format!("{} {} response", self.method, self.path_and_query());
        let bytes = self.bytes().await?;
        crate::codec::decode_json_with(&bytes, options).map_err(|source| Error::Decode { what, source })
    }

    /// The body as it arrives (logs with `follow=true`, exec output). The
    /// timeout bounds getting the response headers only.
    ///
    /// # Cancel safety
    /// As [`Request::send`]; dropping the stream closes the connection.
    pub async fn stream(self) -> Result<ByteStream, Error> {
        let (client, prepared, timeout) = self.prepare()?;
        let response = with_timeout(timeout, client.execute(&prepared)).await?;
        Ok(body_stream(response))
    }

    /// A watch: the body decoded as watch events. Add `watch=true` (or use
    /// `ListOptions::query_pairs(true)`) before calling.
    ///
    /// # Cancel safety
    /// As [`Request::stream`].
    pub async fn watch<T: DeserializeOwned + Send + 'static>(self) -> Result<WatchStream<T>, Error> {
        let max = self.client.inner.max_watch_event_size;
        let body = self.no_timeout().stream().await?;
        Ok(watch_stream(body, max))
    }

    /// [`watch`](Self::watch), each object decoded with `options`.
    ///
    /// # Cancel safety
    /// As [`Request::stream`].
    pub async fn watch_with<T: DecodeWith + Send + 'static>(
        self,
        options: DecodeOptions,
    ) -> Result<WatchStream<T>, Error> {
        let max = self.client.inner.max_watch_event_size;
        let body = self.no_timeout().stream().await?;
        Ok(watch_stream_with(body, max, options))
    }
}

async fn with_timeout<T>(
    timeout: Option<Duration>,
    fut: impl std::future::Future<Output = Result<T, Error>>,
) -> Result<T, Error> {
    match timeout {
        Some(t) => tokio::time::timeout(t, fut).await.map_err(|_| Error::Timeout(t))?,
        None => fut.await,
    }
}

fn form_pairs(encoded: &str) -> Vec<(String, String)> {
    let decode = |s: &str| percent_encoding::percent_decode_str(&s.replace('+', " ")).decode_utf8_lossy().into_owned();
    encoded
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('=') {
            Some((k, v)) => (decode(k), decode(v)),
            None => (decode(p), String::new()),
        })
        .collect()
}
