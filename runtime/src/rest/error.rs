//! The one error type of the REST layer and the `metav1.Status` it carries
//! when the apiserver said no.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

mod protobuf;

/// `metav1.Status`: what the apiserver returns for failed requests, for
/// `delete` that completed immediately, and inside watch `ERROR` events.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Status {
    /// `apiVersion`, `v1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// `kind`, `Status`; how a Status is told apart from an object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// `Success` or `Failure`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// Human-readable description of what went wrong.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// Machine-readable reason (`NotFound`, `AlreadyExists`, `Conflict`, ...).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// Which object the status is about, field-level causes and a
    /// suggested retry delay, depending on the reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<StatusDetails>,
    /// The HTTP status code suggested for this status; 0 when not set.
    #[serde(default)]
    pub code: u16,
}

/// `metav1.StatusDetails`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusDetails {
    /// Name of the object the status is about, when there is one.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// API group of that object.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub group: String,
    /// Kind of that object; for some errors its resource (plural) instead.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// UID of that object, when known.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub uid: String,
    /// The individual problems, e.g. one per invalid field of a 422.
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "nullable_vec")]
    pub causes: Vec<StatusCause>,
    /// How long the client should wait before retrying (429, 503, server
    /// timeouts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_seconds: Option<u32>,
}

/// `metav1.StatusCause`: one field-level reason, e.g. a validation failure.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusCause {
    /// Machine-readable cause, e.g. `FieldValueRequired`, `FieldValueInvalid`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// Human-readable description of the cause.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// Path of the field at fault, e.g. `spec.containers[0].image`; empty
    /// when the cause is not about one field.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub field: String,
}

/// A field a server-side apply would have taken from another manager; see
/// [`Error::apply_conflicts`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ApplyConflict {
    /// The field, as the apiserver writes its path (`.spec.replicas`,
    /// `.spec.template.spec.containers[name="app"].image`).
    pub field: String,
    /// The manager that owns it (`kubectl`, `my-controller`).
    pub manager: String,
    /// The apiserver's whole description of the owner, with its
    /// subresource, operation and time when it has them
    /// (`conflict with "kubectl" using apps/v1`).
    pub message: String,
}

impl ApplyConflict {
    fn from_cause(cause: &StatusCause) -> Self {
        // `conflict with "<manager>"…`: the manager is Go-quoted.
        let manager = cause
            .message
            .strip_prefix("conflict with ")
            .and_then(|rest| serde_json::Deserializer::from_str(rest).into_iter::<String>().next())
            .and_then(Result::ok)
            .unwrap_or_default();
        ApplyConflict { field: cause.field.clone(), manager, message: cause.message.clone() }
    }
}

fn nullable_vec<'de, D, T>(d: D) -> Result<Vec<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Ok(Option::<Vec<T>>::deserialize(d)?.unwrap_or_default())
}

impl Status {
    /// Decodes a response body as a Status if it is one (`kind: Status`).
    pub fn from_body(body: &[u8]) -> Option<Status> {
        let status: Status = serde_json::from_slice(body).ok()?;
        (status.kind.as_deref() == Some("Status")).then_some(status)
    }

    /// What client-go's `newUnstructuredResponseError` makes of a non-Status
    /// error body: a reason and message derived from the HTTP code, with the
    /// body text as a cause when there is any.
    pub fn from_http(code: u16, body: &[u8], verb: &str, path: &str) -> Status {
        let (reason, message) = match code {
            409 => ("Conflict", "the server reported a conflict"),
            404 => ("NotFound", "the server could not find the requested resource"),
            400 => ("BadRequest", "the server rejected our request for an unknown reason"),
            401 => ("Unauthorized", "the server has asked for the client to provide credentials"),
            403 => ("Forbidden", "the server does not allow access to the requested resource"),
            405 => ("MethodNotAllowed", "the server does not allow this method on the requested resource"),
            406 => ("NotAcceptable", "the server was unable to respond with a content type that the client supports"),
            410 => ("Gone", "the server has asked for the client to start over"),
            413 => ("RequestEntityTooLarge", "the server has rejected the request because it is too large"),
            415 => ("UnsupportedMediaType", "the server was unable to interpret the content type of the request"),
            422 => ("Invalid", "the server rejected our request due to an error in our request"),
            429 => ("TooManyRequests", "the server has received too many requests and has asked us to try again later"),
            500 => ("InternalError", "an error on the server has prevented the request from succeeding"),
            503 => ("ServiceUnavailable", "the server is currently unable to handle the request"),
            504 => (
                "Timeout",
                "the server was unable to return a response in the time allotted, but may still be processing the request",
            ),
            c if c >= 500 => ("InternalError", "an error on the server has prevented the request from succeeding"),
            _ => ("Unknown", "an error on the server has prevented the request from succeeding"),
        };
        let text = String::from_utf8_lossy(body);
        let text = text.trim();
        let causes = if text.is_empty() {
            Vec::new()
        } else {
            vec![StatusCause {
                reason: "UnexpectedServerResponse".into(),
                message: truncate(text, 1024),
                field: String::new(),
            }]
        };
        Status {
            api_version: Some("v1".into()),
            kind: Some("Status".into()),
            status: Some("Failure".into()),
            message: format!("{message} ({verb} {path})"),
            reason: reason.into(),
            details: (!causes.is_empty()).then(|| StatusDetails { causes, ..Default::default() }),
            code,
        }
    }

    /// Whether `status` is `Success`, as for a completed delete.
    pub fn is_success(&self) -> bool {
        self.status.as_deref() == Some("Success")
    }

    /// `details.retryAfterSeconds`, if the server suggested a wait.
    pub fn retry_after(&self) -> Option<Duration> {
        self.details.as_ref()?.retry_after_seconds.map(|s| Duration::from_secs(s.into()))
    }
}

fn truncate(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_owned();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &s[..end])
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let message = if self.message.is_empty() { "unknown error" } else { &self.message };
        write!(f, "{message}")?;
        if !self.reason.is_empty() || self.code != 0 {
            write!(f, " (reason {:?}, code {})", self.reason, self.code)?;
        }
        Ok(())
    }
}

/// Everything that can go wrong talking to the apiserver.
///
/// An answer from the server that is not 2xx is [`Error::Api`]; use the
/// `is_*` helpers (mirrors of apimachinery's `errors.IsNotFound` & co.) rather
/// than matching codes by hand.
///
/// The message names what failed; the cause, where there is one, is the
/// `source()`: log or print the error with [`ErrorChain`](crate::ErrorChain)
/// to say why as well. [`Error::Transport`] is the exception.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The apiserver answered with an error status (or a watch `ERROR` event).
    #[error("apiserver: {0}")]
    Api(Box<Status>),
    /// The request could not be built (bad URL, header, ...).
    #[error("building request {what}: {message}")]
    InvalidRequest {
        /// What could not be built, e.g. a header name or an object without a
        /// name.
        what: String,
        /// What is wrong with it.
        message: String,
    },
    /// Connecting or sending failed.
    ///
    /// Unlike the other variants, the message names the root cause itself
    /// (`GET https://10.0.0.1:6443/api: tcp connect error: Connection refused
    /// (os error 111)`, `invalid peer certificate: UnknownIssuer`, a DNS
    /// failure) and `source()` is `None`: the client's own text, `client
    /// error (Connect)`, says nothing, so the causes under it are written
    /// into the message instead. The client's error is kept in `error`, to
    /// inspect its kind or walk its own causes.
    #[error("{verb} {url}: {}", transport_causes(error))]
    Transport {
        /// The HTTP method.
        verb: String,
        /// The URL requested.
        url: String,
        /// The client's error: DNS, connect, TLS, or the connection closing
        /// before the response head. Not the `source()` of this error: its
        /// causes' text is already in the message.
        error: hyper_util::client::legacy::Error,
    },
    /// A layer around the transport ([`ClientBuilder::layer`](super::ClientBuilder::layer))
    /// failed the request.
    #[error("{verb} {url}: a transport layer failed")]
    Layer {
        /// The HTTP method.
        verb: String,
        /// The URL requested.
        url: String,
        /// What the layer returned.
        #[source]
        source: tower::BoxError,
    },
    /// Reading the response body failed mid-way.
    #[error("reading response body")]
    Body(#[source] hyper::Error),
    /// The response body was gzip-compressed and does not decompress: it
    /// is corrupt, or it ended before its trailer.
    #[error("decompressing the gzip response body")]
    Decompress(#[source] std::io::Error),
    /// The request (including reading the body, where it applies) exceeded
    /// its timeout.
    #[error("request timed out after {0:?}")]
    Timeout(Duration),
    /// The response body is not what the caller asked to decode.
    #[error("decoding {what}")]
    Decode {
        /// What was being decoded, e.g. the type asked for.
        what: String,
        /// Where and why decoding failed.
        #[source]
        source: serde_json::Error,
    },
    /// The response body is not the protobuf message the caller asked to
    /// decode.
    #[error("decoding {what} (protobuf)")]
    DecodeProtobuf {
        /// What was being decoded, e.g. the type asked for.
        what: String,
        /// Where and why decoding failed: the message types and field
        /// numbers down to the failing value.
        #[source]
        source: crate::protobuf::Error,
    },
    /// A response in a format the client did not ask for: neither JSON
    /// nor Kubernetes' protobuf.
    #[error(
        "decoding {what}: the server answered with content type {content_type:?}, expected application/json or application/vnd.kubernetes.protobuf"
    )]
    UnexpectedContentType {
        /// What was being decoded.
        what: String,
        /// The response's `Content-Type`.
        content_type: String,
    },
    /// The request body could not be encoded.
    #[error("encoding {what}: {message}")]
    Encode {
        /// What was being encoded.
        what: String,
        /// Why encoding failed.
        message: String,
    },
    /// The watch stream is malformed or has an oversized event.
    #[error("watch stream: {0}")]
    Watch(String),
    /// A watch event of a type this client does not know, e.g. from a newer
    /// server. [`watch_stream`](super::watch::watch_stream) logs and skips
    /// such an event rather than ending the stream.
    #[error("watch stream: unknown event type {0:?}")]
    UnknownWatchEventType(String),
    /// The watch stream ended inside an event: the connection broke (an
    /// unexpected EOF, see [`Error::is_probable_eof`]), not a bad event.
    #[error("watch stream: stream ended inside an event ({buffered} bytes buffered)")]
    WatchTruncated {
        /// Bytes of the incomplete event received before the end.
        buffered: usize,
    },
    /// Opening a WebSocket (exec, attach, port-forward) failed after the
    /// request was built: dialing, the HTTP/1.1 handshake, or an answer
    /// that is not a valid switch of protocols. A refusal with a status
    /// (403, 404, 400) is [`Error::Api`] instead.
    #[error("upgrading {url} to a WebSocket")]
    Upgrade {
        /// The URL requested.
        url: String,
        /// Why the upgrade failed.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// An open stream (exec, attach, port-forward) broke: the connection
    /// failed, or the server broke the channel protocol.
    #[error("{what}: {message}")]
    Stream {
        /// The stream, e.g. `exec of pod default/web`.
        what: String,
        /// What went wrong.
        message: String,
    },
    /// Credentials could not be obtained (exec plugin, token file, ...).
    #[error("authentication")]
    Auth(#[source] crate::config::Error),
    /// The configuration cannot be turned into a client.
    #[error("client configuration")]
    Config(#[source] crate::config::Error),
}

impl Error {
    /// The Status the server sent (or that was synthesized from its answer).
    pub fn status(&self) -> Option<&Status> {
        match self {
            Error::Api(s) => Some(s),
            _ => None,
        }
    }

    fn reason_or_code(&self, reason: &str, code: u16) -> bool {
        match self.status() {
            Some(s) if !s.reason.is_empty() && s.reason != "Unknown" => s.reason == reason,
            Some(s) => s.code == code,
            None => false,
        }
    }

    /// `reason: NotFound` (404): the object (or the resource) does not
    /// exist (`errors.IsNotFound`).
    pub fn is_not_found(&self) -> bool {
        self.reason_or_code("NotFound", 404)
    }
    /// `reason: AlreadyExists` (409): a create named an object that exists
    /// (`errors.IsAlreadyExists`).
    pub fn is_already_exists(&self) -> bool {
        self.status().is_some_and(|s| s.reason == "AlreadyExists")
    }
    /// `reason: Conflict` (409): the object changed since it was read (its
    /// resourceVersion no longer matches) or an apply hit fields another
    /// manager owns; read again and retry (`errors.IsConflict`).
    pub fn is_conflict(&self) -> bool {
        self.reason_or_code("Conflict", 409)
    }
    /// The conflicts of a refused server-side apply (a 409 whose causes are
    /// `FieldManagerConflict`s): each field and the manager that owns it.
    /// Empty for any other error. Apply again with
    /// [`ApplyOptions::force`](super::ApplyOptions::force) to take the
    /// fields, or leave them out of the configuration.
    pub fn apply_conflicts(&self) -> Vec<ApplyConflict> {
        let Some(details) = self.status().and_then(|s| s.details.as_ref()) else { return Vec::new() };
        details
            .causes
            .iter()
            .filter(|cause| cause.reason == "FieldManagerConflict")
            .map(ApplyConflict::from_cause)
            .collect()
    }
    /// `reason: Invalid` (422): validation refused the object; the causes
    /// name the fields (`errors.IsInvalid`).
    pub fn is_invalid(&self) -> bool {
        self.reason_or_code("Invalid", 422)
    }
    /// `reason: Forbidden` (403): RBAC or an admission plugin refused the
    /// request (`errors.IsForbidden`).
    pub fn is_forbidden(&self) -> bool {
        self.reason_or_code("Forbidden", 403)
    }
    /// `reason: Unauthorized` (401): the credentials were missing, wrong or
    /// expired (`errors.IsUnauthorized`).
    pub fn is_unauthorized(&self) -> bool {
        self.reason_or_code("Unauthorized", 401)
    }
    /// 410: the requested resourceVersion is too old; relist.
    pub fn is_gone(&self) -> bool {
        self.status().is_some_and(|s| s.reason == "Gone" || s.code == 410)
    }
    /// `reason: Expired` (a watch or continue token whose resourceVersion
    /// was compacted; also code 410).
    pub fn is_resource_expired(&self) -> bool {
        self.status().is_some_and(|s| s.reason == "Expired")
    }
    /// [`is_gone`](Self::is_gone) or [`is_resource_expired`](Self::is_resource_expired):
    /// the resourceVersion a watch or list resumed from is no longer
    /// served; list again from the start (what a reflector or a
    /// [`watcher`](crate::watcher) does).
    pub fn is_expired(&self) -> bool {
        self.is_gone() || self.is_resource_expired()
    }
    /// `reason: TooManyRequests` (429): API priority and fairness (or a
    /// rate limit) turned the request away; retry after
    /// [`Status::retry_after`] (`errors.IsTooManyRequests`).
    pub fn is_too_many_requests(&self) -> bool {
        self.reason_or_code("TooManyRequests", 429)
    }
    /// `reason: Timeout` (504): the server gave up waiting.
    pub fn is_timeout(&self) -> bool {
        self.reason_or_code("Timeout", 504)
    }
    /// `reason: ServerTimeout`: the server could not finish in time and
    /// asks the client to retry.
    pub fn is_server_timeout(&self) -> bool {
        self.status().is_some_and(|s| s.reason == "ServerTimeout")
    }
    /// The HTTP-ish code of an API error.
    pub fn code(&self) -> Option<u16> {
        self.status().map(|s| s.code)
    }

    /// The server refused the connection (apimachinery
    /// `net.IsConnectionRefused`): nothing listens there now, an apiserver
    /// restarting, say. Worth retrying after a while.
    pub fn is_connection_refused(&self) -> bool {
        let Error::Transport { error, .. } = self else { return false };
        let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(error);
        while let Some(e) = cur {
            if e.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::ConnectionRefused) {
                return true;
            }
            cur = e.source();
        }
        false
    }

    /// The connection broke or timed out rather than the server or the data
    /// being wrong (apimachinery `net.IsProbableEOF` or `net.IsTimeout`): an
    /// EOF or unexpected EOF (also inside a watch event), a reset or aborted
    /// connection, a broken pipe, an HTTP/2 GOAWAY, a closed connection, a
    /// timeout. A watch stream ending with one of these ended normally, as
    /// far as its events go: watch again from the last resourceVersion
    /// (client-go's `StreamWatcher` closes the watch quietly on them).
    pub fn is_probable_eof(&self) -> bool {
        match self {
            Error::WatchTruncated { .. } | Error::Timeout(_) => true,
            Error::Body(e) => chain_is_probable_eof(e),
            Error::Transport { error, .. } => chain_is_probable_eof(error),
            _ => false,
        }
    }
}

/// A body that failed mid-way, as [`Error::Body`].
impl From<hyper::Error> for Error {
    fn from(e: hyper::Error) -> Self {
        Error::Body(e)
    }
}

/// The causes of a transport error, root last, for its message: the
/// client's error without its own generic text (`client error (Connect)`)
/// when it has causes that say more.
fn transport_causes(error: &hyper_util::client::legacy::Error) -> crate::ErrorChain<'_> {
    crate::ErrorChain(std::error::Error::source(error).unwrap_or(error as &(dyn std::error::Error + 'static)))
}

/// Walks an error and its sources looking for a sign of a broken or
/// timed-out connection. Like apimachinery, falls back on the messages of
/// errors that have no kind to test (an HTTP/2 GOAWAY is only a message).
fn chain_is_probable_eof(e: &(dyn std::error::Error + 'static)) -> bool {
    use std::io::ErrorKind;
    let mut cur = Some(e);
    while let Some(e) = cur {
        if let Some(h) = e.downcast_ref::<hyper::Error>()
            && (h.is_incomplete_message() || h.is_closed() || h.is_timeout() || h.is_canceled())
        {
            return true;
        }
        // HTTP/2 keeps the I/O error inside and has no source chain to it;
        // a GOAWAY (the server closing the connection) is also an end.
        let io =
            e.downcast_ref::<std::io::Error>().or_else(|| e.downcast_ref::<h2::Error>().and_then(h2::Error::get_io));
        if e.downcast_ref::<h2::Error>().is_some_and(h2::Error::is_go_away) {
            return true;
        }
        if let Some(io) = io
            && matches!(
                io.kind(),
                ErrorKind::UnexpectedEof
                    | ErrorKind::ConnectionReset
                    | ErrorKind::ConnectionAborted
                    | ErrorKind::BrokenPipe
                    | ErrorKind::NotConnected
                    | ErrorKind::TimedOut
            )
        {
            return true;
        }
        let msg = e.to_string().to_ascii_lowercase();
        if [
            "connection reset",
            "broken pipe",
            "goaway",
            "go away",
            "connection error received",
            "use of closed network connection",
        ]
        .iter()
        .any(|m| msg.contains(m))
        {
            return true;
        }
        cur = e.source();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apply_conflicts_name_fields_and_managers() {
        // As the apiserver writes them (managedfields/internal/conflict.go).
        let body = br#"{"kind":"Status","status":"Failure","reason":"Conflict","code":409,
            "message":"Apply failed with 2 conflicts: ...",
            "details":{"causes":[
                {"reason":"FieldManagerConflict","message":"conflict with \"kubectl\" using apps/v1","field":".spec.replicas"},
                {"reason":"FieldManagerConflict","message":"conflict with \"ctl \\\"x\\\"\" with subresource \"status\"","field":".status.replicas"},
                {"reason":"FieldValueInvalid","message":"other","field":".spec"}]}}"#;
        let error = Error::Api(Box::new(Status::from_body(body).unwrap()));
        assert!(error.is_conflict());
        let conflicts = error.apply_conflicts();
        assert_eq!(conflicts.len(), 2);
        assert_eq!((conflicts[0].field.as_str(), conflicts[0].manager.as_str()), (".spec.replicas", "kubectl"));
        assert_eq!(conflicts[0].message, "conflict with \"kubectl\" using apps/v1");
        assert_eq!((conflicts[1].field.as_str(), conflicts[1].manager.as_str()), (".status.replicas", "ctl \"x\""));
        let other =
            Error::Api(Box::new(Status::from_body(br#"{"kind":"Status","reason":"Conflict","code":409}"#).unwrap()));
        assert!(other.apply_conflicts().is_empty());
    }

    #[test]
    fn decodes_full_status() {
        let body = br#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
            "message":"pods \"x\" is invalid","reason":"Invalid",
            "details":{"name":"x","kind":"pods","causes":[{"reason":"FieldValueRequired","message":"Required value","field":"spec.containers"}],"retryAfterSeconds":3},
            "code":422}"#;
        let s = Status::from_body(body).unwrap();
        assert_eq!(s.code, 422);
        assert_eq!(s.details.as_ref().unwrap().causes[0].field, "spec.containers");
        assert_eq!(s.retry_after(), Some(Duration::from_secs(3)));
        let e = Error::Api(Box::new(s));
        assert!(e.is_invalid() && !e.is_not_found());
    }

    #[test]
    fn non_status_bodies_are_not_statuses() {
        assert!(Status::from_body(b"<html>bad gateway</html>").is_none());
        assert!(Status::from_body(br#"{"kind":"Pod"}"#).is_none());
        assert!(Status::from_body(br#"{"kind":"Status","causes":null,"details":{"causes":null}}"#).is_some());
    }

    #[test]
    fn synthesized_status_follows_http_code() {
        let s = Status::from_http(404, b"404 page not found", "GET", "/api/v1/x");
        let e = Error::Api(Box::new(s));
        assert!(e.is_not_found());
        assert!(e.to_string().contains("404 page not found") || e.status().unwrap().details.is_some());
        assert!(Error::Api(Box::new(Status::from_http(429, b"", "GET", "/"))).is_too_many_requests());
        assert!(Error::Api(Box::new(Status::from_http(504, b"", "GET", "/"))).is_timeout());
        assert!(Error::Api(Box::new(Status::from_http(410, b"", "GET", "/"))).is_gone());
        assert!(Error::Api(Box::new(Status::from_http(418, b"", "GET", "/"))).code() == Some(418));
    }

    #[test]
    fn probable_eof_follows_apimachinery() {
        use std::io::{Error as IoError, ErrorKind};
        let io = |k: ErrorKind, m: &str| -> Box<dyn std::error::Error + Send + Sync> { Box::new(IoError::new(k, m)) };
        // A wrapper with the I/O error as its source, as hyper and rustls nest them.
        #[derive(Debug, thiserror::Error)]
        #[error("outer")]
        struct Outer(#[source] Box<dyn std::error::Error + Send + Sync>);
        let eof = |e: Box<dyn std::error::Error + Send + Sync>| chain_is_probable_eof(&Outer(e));
        assert!(eof(io(ErrorKind::UnexpectedEof, "peer closed connection without sending TLS close_notify")));
        assert!(eof(io(ErrorKind::ConnectionReset, "x")));
        assert!(eof(io(ErrorKind::BrokenPipe, "x")));
        assert!(eof(io(ErrorKind::TimedOut, "x")));
        assert!(eof(io(ErrorKind::Other, "http2: server sent GOAWAY and closed the connection")));
        assert!(eof(io(ErrorKind::Other, "read tcp: use of closed network connection")));
        assert!(!eof(io(ErrorKind::ConnectionRefused, "connection refused")));
        // A stream reset by the server is not an end of the connection.
        // (h2's I/O errors cannot be built outside h2; the integration test
        // watch_tcp_cuts sees them through hyper.)
        assert!(!eof(Box::new(h2::Error::from(h2::Reason::PROTOCOL_ERROR))));
        assert!(!eof(io(ErrorKind::InvalidData, "bad certificate")));
        assert!(Error::WatchTruncated { buffered: 3 }.is_probable_eof());
        assert!(Error::Timeout(Duration::from_secs(1)).is_probable_eof());
        assert!(!Error::Watch("expected '{'".into()).is_probable_eof());
        let decode = serde_json::from_str::<u8>("x").unwrap_err();
        assert!(!Error::Decode { what: "event".into(), source: decode }.is_probable_eof());
        assert!(!Error::Api(Box::new(Status::from_http(410, b"", "GET", "/"))).is_probable_eof());
    }

    #[test]
    fn expired_is_gone_and_expired() {
        let s = Status { reason: "Expired".into(), code: 410, ..Default::default() };
        let e = Error::Api(Box::new(s));
        assert!(e.is_gone() && e.is_resource_expired());
    }
}
