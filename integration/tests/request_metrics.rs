//! Request metrics, spans and a transport layer on the real apiserver: a
//! create, a list and a failing get are counted under client-go's metric
//! names, each runs in a `request` span that records its path template and
//! status, and each passes through the layer.
//!
//! The only test of its binary: it installs the process's subscriber.

mod support;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use k8s_client::api::core::v1::ConfigMap;
use k8s_client_runtime::controller::prometheus::{Encoder as _, Registry, TextEncoder};
use k8s_client_runtime::rest::metrics::PrometheusRequestMetrics;
use k8s_client_runtime::rest::{Client, CreateOptions, GetOptions, ListOptions, ResourceClient, TransportRequest};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::layer::{Context, SubscriberExt as _};

type Fields = BTreeMap<String, String>;

/// Keeps the fields of every `request` span, in the order they closed.
#[derive(Clone, Default)]
struct Spans {
    open: Arc<Mutex<BTreeMap<u64, Fields>>>,
    closed: Arc<Mutex<Vec<Fields>>>,
}

struct Collect<'a>(&'a mut Fields);

impl Visit for Collect<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Spans {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, _: Context<'_, S>) {
        if attrs.metadata().name() == "request" {
            let mut fields = Fields::new();
            attrs.record(&mut Collect(&mut fields));
            self.open.lock().unwrap().insert(id.into_u64(), fields);
        }
    }
    fn on_record(&self, id: &Id, values: &Record<'_>, _: Context<'_, S>) {
        if let Some(fields) = self.open.lock().unwrap().get_mut(&id.into_u64()) {
            values.record(&mut Collect(fields));
        }
    }
    fn on_close(&self, id: Id, _: Context<'_, S>) {
        if let Some(fields) = self.open.lock().unwrap().remove(&id.into_u64()) {
            self.closed.lock().unwrap().push(fields);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_are_counted_traced_and_layered() {
    let spans = Spans::default();
    tracing::subscriber::set_global_default(tracing_subscriber::registry().with(spans.clone())).expect("subscriber");
    let namespace = support::namespace("metrics");

    let registry = Registry::new();
    let attempts = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&attempts);
    let client = Client::builder(support::config_for(support::env(), None))
        .metrics(PrometheusRequestMetrics::new(&registry).expect("register"))
        .layer(tower::util::MapRequestLayer::new(move |req: TransportRequest| {
            counted.fetch_add(1, Ordering::SeqCst);
            req
        }))
        .build()
        .expect("client");
    let configmaps = ResourceClient::<ConfigMap>::namespaced(client.clone(), &namespace);
    let cm = support::config_map("measured", ("app", "metrics"), &[("k", "v")]);
    configmaps.create(&cm, &CreateOptions::default()).await.expect("create");
    let listed = configmaps.list(&ListOptions::default()).await.expect("list");
    assert_eq!(listed.items.len(), 1);
    let missing = configmaps.get("missing", &GetOptions::default()).await.expect_err("a missing object");
    assert_eq!(missing.code(), Some(404), "{missing}");

    let mut text = Vec::new();
    TextEncoder::new().encode(&registry.gather(), &mut text).expect("encode");
    let text = String::from_utf8(text).expect("UTF-8");
    let host = client.base_url().split_once("://").map(|(_, h)| h.to_owned()).expect("host");
    for line in [
        format!(r#"rest_client_requests_total{{code="201",host="{host}",method="POST"}} 1"#),
        format!(r#"rest_client_requests_total{{code="200",host="{host}",method="GET"}} 1"#),
        format!(r#"rest_client_requests_total{{code="404",host="{host}",method="GET"}} 1"#),
        format!(r#"rest_client_request_duration_seconds_count{{host="{host}",verb="GET"}} 2"#),
        format!(r#"rest_client_request_duration_seconds_count{{host="{host}",verb="POST"}} 1"#),
    ] {
        assert!(text.lines().any(|l| l == line), "missing {line} in\n{text}");
    }
    assert_eq!(attempts.load(Ordering::SeqCst), 3, "every request passed through the layer");

    let closed = spans.closed.lock().unwrap();
    let request = |method: &str, template: &str, status: &str| {
        closed.iter().any(|f| {
            f.get("http.request.method").map(String::as_str) == Some(method)
                && f.get("url.template").map(String::as_str) == Some(template)
                && f.get("http.response.status_code").map(String::as_str) == Some(status)
                && f.get("server.address") == Some(&host)
        })
    };
    let collection = "/api/v1/namespaces/{namespace}/configmaps";
    assert!(request("POST", collection, "201"), "no span of the create in {closed:#?}");
    assert!(request("GET", collection, "200"), "no span of the list in {closed:#?}");
    assert!(
        request("GET", "/api/v1/namespaces/{namespace}/configmaps/{name}", "404"),
        "no span of the get in {closed:#?}"
    );
}
