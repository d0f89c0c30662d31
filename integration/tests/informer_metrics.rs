//! A factory's informers report their queue, processing time and cache
//! version under client-go's `informer_*` metric names, on the real
//! apiserver.

mod support;

use k8s_client::api::core::v1::ConfigMap;
use k8s_client_runtime::cache::{PrometheusInformerMetrics, SharedInformerFactory, wait_for_cache_sync};
use k8s_client_runtime::controller::prometheus::{Encoder as _, Registry, TextEncoder};
use k8s_client_runtime::rest::{CreateOptions, ResourceClient};

fn exposition(registry: &Registry) -> String {
    let mut text = Vec::new();
    TextEncoder::new().encode(&registry.gather(), &mut text).expect("encode");
    String::from_utf8(text).expect("UTF-8")
}

/// The value of the sample whose line starts with `prefix`.
fn sample(text: &str, prefix: &str) -> Option<f64> {
    text.lines().find_map(|l| l.strip_prefix(prefix)?.trim().parse().ok())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_factorys_informers_report_queue_processing_and_version() {
    let namespace = support::namespace("informer-metrics");
    let client = support::client();
    let configmaps = ResourceClient::<ConfigMap>::namespaced(client.clone(), &namespace);
    for i in 0..5 {
        let cm = support::config_map(&format!("cm-{i}"), ("app", "metrics"), &[("k", "v")]);
        configmaps.create(&cm, &CreateOptions::default()).await.expect("create");
    }
    let registry = Registry::new();
    let factory = SharedInformerFactory::builder(client.clone())
        .namespace(&namespace)
        .metrics("test-factory", PrometheusInformerMetrics::new(&registry).expect("register"))
        .build();
    let informer = factory.informer_for::<ConfigMap>();
    factory.start();
    let cancel = tokio_util::sync::CancellationToken::new();
    assert!(wait_for_cache_sync(&cancel, &[&informer]).await, "synced");

    // A write after the sync moves the cache's version.
    let created = configmaps
        .create(&support::config_map("late", ("app", "metrics"), &[("k", "v")]), &CreateOptions::default())
        .await
        .expect("create");
    let rv: f64 = created.metadata.resource_version.as_deref().expect("rv").parse().expect("numeric rv");
    let labels = r#"{group="",name="test-factory",resource="configmaps",version="v1"}"#;
    let version = format!("informer_store_resource_version{labels}");
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(30);
    while sample(&exposition(&registry), &version) < Some(rv) {
        assert!(tokio::time::Instant::now() < deadline, "the cache's version never reached {rv}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let text = exposition(&registry);
    assert_eq!(sample(&text, &format!("informer_queued_items{labels}")), Some(0.0), "{text}");
    let processed = sample(&text, &format!("informer_processing_latency_seconds_count{labels}")).expect("processing");
    assert!(processed >= 2.0, "the list and the late create were processed: {processed}\n{text}");
    factory.shutdown();
}
