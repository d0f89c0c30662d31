//! Request metrics, the `request` span's recording, and transport layers,
//! against the scripted server.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;

use super::server::{Reply, TestServer};
use crate::rest::metrics::{Attempt, RequestMetrics};
use crate::rest::{Client, Error, TransportRequest};

#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Recorded>>);

#[derive(Default)]
struct Recorded {
    attempts: Vec<(String, String, Option<u16>, usize)>,
    retries: Vec<String>,
    rate_limited: usize,
}

impl RequestMetrics for Recorder {
    fn attempt(&self, a: &Attempt<'_>) {
        let mut r = self.0.lock().unwrap();
        r.attempts.push((a.verb.to_owned(), a.path_template.to_owned(), a.status, a.request_bytes));
    }
    fn rate_limited(&self, _: &str, _: &str, waited: Duration) {
        assert!(waited < Duration::from_secs(5));
        self.0.lock().unwrap().rate_limited += 1;
    }
    fn retry(&self, _: &str, _: &str, code: &str) {
        self.0.lock().unwrap().retries.push(code.to_owned());
    }
}

fn client_with(
    server: &TestServer,
    build: impl FnOnce(crate::rest::ClientBuilder) -> crate::rest::ClientBuilder,
) -> Client {
    let mut config = crate::config::Config::new(server.url.parse().unwrap());
    config.qps = 100.0;
    build(Client::builder(config)).build().unwrap()
}

#[tokio::test]
async fn every_attempt_and_retry_is_reported() {
    let server = TestServer::start(|_, i| match i {
        0 => Reply::text(429, "").with_header("Retry-After", "0"),
        1 => Reply::text(503, "busy").with_header("Retry-After", "0"),
        _ => Reply::json(200, json!({"ok": true})),
    })
    .await;
    let recorder = Recorder::default();
    let client = client_with(&server, |b| b.metrics(recorder.clone()));
    client.get("/api/v1/namespaces/ns/configmaps/c1?x=1").bytes().await.unwrap();

    let r = recorder.0.lock().unwrap();
    let template = "/api/v1/namespaces/{namespace}/configmaps/{name}";
    let statuses: Vec<_> = r.attempts.iter().map(|a| (a.0.as_str(), a.1.as_str(), a.2)).collect();
    assert_eq!(statuses, [("GET", template, Some(429)), ("GET", template, Some(503)), ("GET", template, Some(200))]);
    assert_eq!(r.retries, ["429", "503"]);
    // Every attempt waits in line, the retries too.
    assert_eq!(r.rate_limited, 3);
}

#[tokio::test]
async fn an_attempt_without_answer_is_reported_as_such() {
    let server = TestServer::start(|_, i| if i == 0 { Reply::Drop } else { Reply::json(200, json!({})) }).await;
    let recorder = Recorder::default();
    let client = client_with(&server, |b| b.metrics(recorder.clone()));
    client.get("/version").bytes().await.unwrap();
    let r = recorder.0.lock().unwrap();
    let statuses: Vec<_> = r.attempts.iter().map(|a| a.2).collect();
    assert_eq!(statuses, [None, Some(200)]);
    assert_eq!(r.retries, [crate::rest::metrics::NO_ANSWER]);
}

#[tokio::test]
async fn request_bytes_are_the_body() {
    let server = TestServer::start(|_, _| Reply::json(201, json!({}))).await;
    let recorder = Recorder::default();
    let client = client_with(&server, |b| b.metrics(recorder.clone()));
    let body = json!({"kind": "ConfigMap", "metadata": {"name": "c"}});
    client.post("/api/v1/namespaces/ns/configmaps").json_body(&body).bytes().await.unwrap();
    let r = recorder.0.lock().unwrap();
    assert_eq!(r.attempts.len(), 1);
    assert_eq!(r.attempts[0].0, "POST");
    assert_eq!(r.attempts[0].3, serde_json::to_vec(&body).unwrap().len());
}

/// A layer that writes its name into the request's `x-layers` header and
/// into `seen` when the response passes back.
#[derive(Clone)]
struct Mark {
    name: &'static str,
    seen: Arc<Mutex<Vec<String>>>,
}

impl<S> tower::Layer<S> for Mark {
    type Service = MarkService<S>;
    fn layer(&self, inner: S) -> MarkService<S> {
        MarkService { mark: self.clone(), inner }
    }
}

#[derive(Clone)]
struct MarkService<S> {
    mark: Mark,
    inner: S,
}

impl<S> tower::Service<TransportRequest> for MarkService<S>
where
    S: tower::Service<TransportRequest, Response = http::Response<crate::rest::Body>, Error = tower::BoxError>,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = tower::BoxError;
    type Future = futures_util::future::BoxFuture<'static, Result<S::Response, tower::BoxError>>;

    fn poll_ready(&mut self, cx: &mut std::task::Context<'_>) -> std::task::Poll<Result<(), tower::BoxError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: TransportRequest) -> Self::Future {
        if self.mark.name == "refuse" {
            return Box::pin(async { Err("refused by policy".into()) });
        }
        req.headers_mut().append("x-layers", http::HeaderValue::from_static(self.mark.name));
        let (name, seen) = (self.mark.name, Arc::clone(&self.mark.seen));
        let response = self.inner.call(req);
        Box::pin(async move {
            let response = response.await?;
            seen.lock().unwrap().push(format!("{name}:{}", response.status().as_u16()));
            Ok(response)
        })
    }
}

#[tokio::test]
async fn layers_wrap_every_attempt_first_outermost() {
    let server = TestServer::start(|_, i| match i {
        0 => Reply::text(503, "busy").with_header("Retry-After", "0"),
        _ => Reply::json(200, json!({})),
    })
    .await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mark = |name| Mark { name, seen: Arc::clone(&seen) };
    let client = client_with(&server, |b| b.layer(mark("outer")).layer(mark("inner")));
    client.get("/version").bytes().await.unwrap();

    let requests = server.requests();
    assert_eq!(requests.len(), 2, "the retry passes through the layers too");
    for r in &requests {
        assert_eq!(r.headers_named("x-layers"), ["outer", "inner"]);
    }
    assert_eq!(*seen.lock().unwrap(), ["inner:503", "outer:503", "inner:200", "outer:200"]);
}

#[tokio::test]
async fn a_layer_keeps_the_clients_own_errors_recognised() {
    // A reset GET is still retried under a layer: its error crosses the
    // layer boxed, and is still the client's.
    let server = TestServer::start(|_, i| if i == 0 { Reply::Drop } else { Reply::json(200, json!({"n": i})) }).await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let client = client_with(&server, |b| b.layer(Mark { name: "m", seen: Arc::clone(&seen) }));
    let v: serde_json::Value = client.get("/x").json().await.unwrap();
    assert_eq!(v["n"], 1);
}

#[tokio::test]
async fn a_layers_error_is_named_as_such() {
    let server = TestServer::start(|_, _| Reply::json(200, json!({}))).await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let client = client_with(&server, |b| b.layer(Mark { name: "refuse", seen }));
    let err = client.get("/x").bytes().await.unwrap_err();
    let Error::Layer { verb, url, source } = &err else { panic!("{err:?}") };
    assert_eq!(verb, "GET");
    assert!(url.ends_with("/x"), "{url}");
    assert_eq!(source.to_string(), "refused by policy");
    assert!(server.requests().is_empty());
}

#[cfg(feature = "metrics")]
#[tokio::test]
async fn prometheus_metrics_carry_client_gos_names_and_labels() {
    use prometheus::Encoder as _;

    let server = TestServer::start(|_, i| match i {
        0 => Reply::text(503, "busy").with_header("Retry-After", "0"),
        1 => Reply::json(200, json!({})),
        _ => Reply::json(404, json!({"kind": "Status", "code": 404, "reason": "NotFound"})),
    })
    .await;
    let registry = prometheus::Registry::new();
    let metrics = crate::rest::metrics::PrometheusRequestMetrics::new(&registry).unwrap();
    let client = client_with(&server, |b| b.metrics(metrics.clone()));
    client.get("/api/v1/namespaces/ns/pods").bytes().await.unwrap();
    client.get("/api/v1/namespaces/ns/pods/p").bytes().await.unwrap_err();
    // A second registration in one registry is refused.
    assert!(crate::rest::metrics::PrometheusRequestMetrics::new(&registry).is_err());

    let mut text = Vec::new();
    prometheus::TextEncoder::new().encode(&registry.gather(), &mut text).unwrap();
    let text = String::from_utf8(text).unwrap();
    let host = server.url.trim_start_matches("http://").trim_end_matches('/').to_owned();
    for line in [
        format!(r#"rest_client_requests_total{{code="200",host="{host}",method="GET"}} 1"#),
        format!(r#"rest_client_requests_total{{code="404",host="{host}",method="GET"}} 1"#),
        format!(r#"rest_client_requests_total{{code="503",host="{host}",method="GET"}} 1"#),
        format!(r#"rest_client_request_retries_total{{code="503",host="{host}",verb="GET"}} 1"#),
        format!(r#"rest_client_request_duration_seconds_count{{host="{host}",verb="GET"}} 3"#),
        format!(r#"rest_client_rate_limiter_duration_seconds_count{{host="{host}",verb="GET"}} 3"#),
        format!(r#"rest_client_request_size_bytes_count{{host="{host}",verb="GET"}} 3"#),
    ] {
        assert!(text.lines().any(|l| l == line), "missing {line} in\n{text}");
    }
}
