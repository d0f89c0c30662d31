//! What a [`Client`](super::Client) reports of its requests, as client-go's
//! `tools/metrics`: latency, result code, size and retries of every
//! attempt, and the time spent waiting for the client's rate limiter.
//!
//! Give a [`RequestMetrics`] to [`ClientBuilder::metrics`](super::ClientBuilder::metrics);
//! [`PrometheusRequestMetrics`] (feature `metrics`) exports client-go's
//! `rest_client_*` metrics. Without one nothing is measured.
//!
//! Every request also runs in a `tracing` span named `request` (level
//! DEBUG) with OpenTelemetry's HTTP client fields: `http.request.method`,
//! `url.template` (the path with the namespace and name replaced, see
//! [`path_template`]), `server.address`, `http.response.status_code` and
//! `http.request.resend_count` (retries), recorded as the request goes.

use std::borrow::Cow;
use std::time::Duration;

crate::cfg_feature!("metrics" => mod prometheus;);
crate::cfg_feature!("metrics" => pub use self::prometheus::PrometheusRequestMetrics;);

/// The result label of an attempt that got no HTTP answer (client-go's).
pub const NO_ANSWER: &str = "<error>";

/// Receives the measurements of a client's requests. Every method has a
/// default that ignores it; implement those you export.
///
/// Called on the request's task, between sending and reading: keep it
/// cheap (an atomic add, a histogram observation).
pub trait RequestMetrics: Send + Sync + 'static {
    /// One attempt at a request ended: answered (any status, retried or
    /// not) or failed without an answer.
    fn attempt(&self, attempt: &Attempt<'_>) {
        let _ = attempt;
    }

    /// A request waited `waited` for the client's rate limiter
    /// (`rest_client_rate_limiter_duration_seconds`).
    fn rate_limited(&self, verb: &str, host: &str, waited: Duration) {
        let _ = (verb, host, waited);
    }

    /// A request is sent again after an attempt answered `code` (or
    /// [`NO_ANSWER`]) (`rest_client_request_retries_total`).
    fn retry(&self, verb: &str, host: &str, code: &str) {
        let _ = (verb, host, code);
    }
}

/// One attempt at a request, as [`RequestMetrics::attempt`] sees it.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Attempt<'a> {
    /// The HTTP method (`GET`, `POST`…), client-go's `verb` label.
    pub verb: &'a str,
    /// The server's `host:port`.
    pub host: &'a str,
    /// The path with the namespace and the object's name as `{namespace}`
    /// and `{name}` ([`path_template`]).
    pub path_template: &'a str,
    /// The HTTP status, or `None` when no answer came (connection refused,
    /// reset, TLS failure, a timeout).
    pub status: Option<u16>,
    /// From sending the request to the answer's headers (a watch's or a
    /// list's body is read after that).
    pub latency: Duration,
    /// Bytes of the request body.
    pub request_bytes: usize,
    /// Bytes of the answer's body, when the server said (`Content-Length`;
    /// compressed and streamed answers do not say).
    pub response_bytes: Option<u64>,
}

impl Attempt<'_> {
    /// The `code` label: the status as digits, or [`NO_ANSWER`].
    pub fn code(&self) -> Cow<'static, str> {
        match self.status {
            Some(status) => Cow::Owned(status.to_string()),
            None => Cow::Borrowed(NO_ANSWER),
        }
    }
}

/// `path` (with or without a query) with the namespace and the object's
/// name replaced by `{namespace}` and `{name}`, and whatever follows a
/// subresource by `{path}`, so that requests of one kind of call share a
/// label: `/api/v1/namespaces/default/pods/web-0/log?follow=true` is
/// `/api/v1/namespaces/{namespace}/pods/{name}/log`. Paths outside
/// `/api` and `/apis` are kept as they are, without their query.
pub fn path_template(path: &str) -> Cow<'_, str> {
    let path = path.split_once('?').map_or(path, |(p, _)| p);
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    // The group/version prefix: `api/v1` or `apis/<group>/<version>`.
    let prefix = match segments.first() {
        Some(&"api") if segments.len() >= 2 => 2,
        Some(&"apis") if segments.len() >= 3 => 3,
        _ => return Cow::Borrowed(path),
    };
    let mut out = String::with_capacity(path.len());
    for s in &segments[..prefix] {
        out.push('/');
        out.push_str(s);
    }
    let mut rest = &segments[prefix..];
    // `namespaces/<ns>/<resource>…`; `namespaces/<name>` alone, or with
    // one of its two subresources, is the Namespace object itself.
    let namespace_subresource = rest.len() == 3 && matches!(rest[2], "finalize" | "status");
    if rest.len() >= 3 && rest[0] == "namespaces" && !namespace_subresource {
        out.push_str("/namespaces/{namespace}");
        rest = &rest[2..];
    }
    match rest {
        [] | [""] => {}
        [resource] => {
            out.push('/');
            out.push_str(resource);
        }
        [resource, _name] => {
            out.push('/');
            out.push_str(resource);
            out.push_str("/{name}");
        }
        [resource, _name, subresource, more @ ..] => {
            out.push('/');
            out.push_str(resource);
            out.push_str("/{name}/");
            out.push_str(subresource);
            if !more.is_empty() {
                out.push_str("/{path}");
            }
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::path_template;

    #[test]
    fn templates_replace_namespace_name_and_subpaths() {
        let cases = [
            ("/api/v1/pods", "/api/v1/pods"),
            ("/api/v1/namespaces", "/api/v1/namespaces"),
            ("/api/v1/namespaces/kube-system", "/api/v1/namespaces/{name}"),
            ("/api/v1/namespaces/kube-system/finalize", "/api/v1/namespaces/{name}/finalize"),
            ("/api/v1/namespaces/kube-system/status", "/api/v1/namespaces/{name}/status"),
            ("/api/v1/namespaces/default/configmaps?limit=500", "/api/v1/namespaces/{namespace}/configmaps"),
            ("/api/v1/namespaces/default/configmaps/c1", "/api/v1/namespaces/{namespace}/configmaps/{name}"),
            ("/api/v1/namespaces/default/pods/web-0/log?follow=true", "/api/v1/namespaces/{namespace}/pods/{name}/log"),
            (
                "/api/v1/namespaces/default/services/web:80/proxy/healthz/ready",
                "/api/v1/namespaces/{namespace}/services/{name}/proxy/{path}",
            ),
            (
                "/apis/apps/v1/namespaces/ns/deployments/d/scale",
                "/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale",
            ),
            (
                "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/a.b.c",
                "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}",
            ),
            ("/apis/example.com/v1/widgets", "/apis/example.com/v1/widgets"),
            ("/apis/example.com/v1", "/apis/example.com/v1"),
            ("/apis", "/apis"),
            ("/version?timeout=32s", "/version"),
            ("/openapi/v3/apis/apps/v1", "/openapi/v3/apis/apps/v1"),
        ];
        for (path, want) in cases {
            assert_eq!(path_template(path), want, "{path}");
        }
    }
}
