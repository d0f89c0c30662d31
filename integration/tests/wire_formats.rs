//! Values written and read as Go writes and reads them, against the real
//! apiserver: `MicroTime` with exactly six fraction digits, quantities
//! written as bare numbers, timestamps with more than nine fraction digits.

mod support;

use std::time::Duration;

use k8s_client::api::coordination::v1::{Lease, LeaseSpec};
use k8s_client::api::core::v1::{ObjectReference, Pod, ResourceQuota, ResourceQuotaSpec};
use k8s_client::api::events::v1::Event;
use k8s_client::apimachinery::pkg::api::resource::Quantity;
use k8s_client::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use k8s_client_runtime::Map;
use k8s_client_runtime::cache::SharedInformerFactory;
use k8s_client_runtime::codec::{Timestamp, format_micro_time};
use k8s_client_runtime::dynamic::{DynamicClient, DynamicObject};
use k8s_client_runtime::object::DynamicResource;
use k8s_client_runtime::rest::{CreateOptions, GetOptions, ListOptions, UpdateOptions};
use k8s_client_test_widgets::com::example::v1::Widget;
use k8s_client_test_widgets::prelude::*;
use serde_json::json;

fn meta(name: &str) -> ObjectMeta {
    ObjectMeta { name: Some(name.into()), ..Default::default() }
}

/// A time whose nanoseconds are not whole microseconds: nine digits if
/// written as they are.
fn time_with_nanoseconds() -> MicroTime {
    MicroTime::new(Timestamp::new(1_800_000_000, 123_456_789).unwrap())
}

#[tokio::test]
async fn micro_times_are_written_as_the_apiserver_reads_them() {
    let ns = support::namespace("wire-micro");
    let clientset = support::clientset();

    // An events.k8s.io/v1 Event: eventTime is a MicroTime.
    let events = clientset.events_v1().events(&ns);
    for (name, at) in [("precise", time_with_nanoseconds()), ("now", MicroTime::now())] {
        let event = Event {
            metadata: meta(name),
            event_time: at,
            action: Some("Test".into()),
            reason: Some("Testing".into()),
            note: Some("written with MicroTime".into()),
            type_: Some("Normal".into()),
            reporting_controller: Some("example.com/wire-formats".into()),
            reporting_instance: Some("wire-formats-1".into()),
            regarding: Some(Box::new(ObjectReference {
                kind: Some("ConfigMap".into()),
                namespace: Some(ns.as_str().into()),
                name: Some("subject".into()),
                ..Default::default()
            })),
            ..Default::default()
        };
        let created = events.create(&event, &CreateOptions::default()).await.unwrap_or_else(|e| panic!("{name}: {e}"));
        let micros = |t: MicroTime| format_micro_time(&t.timestamp());
        assert_eq!(micros(created.event_time), micros(at), "{name}: the server keeps the microseconds");
    }

    // A Lease: acquireTime and renewTime are MicroTimes, updated as a
    // leader renews.
    let leases = clientset.coordination_v1().leases(&ns);
    let lease = Lease {
        metadata: meta("lock"),
        spec: Some(LeaseSpec {
            holder_identity: Some("a".into()),
            lease_duration_seconds: Some(15),
            acquire_time: Some(time_with_nanoseconds()),
            renew_time: Some(MicroTime::now()),
            ..Default::default()
        }),
    };
    let mut lease = leases.create(&lease, &CreateOptions::default()).await.unwrap();
    let spec = lease.spec.as_mut().unwrap();
    spec.renew_time = Some(MicroTime::now());
    spec.acquire_time = Some(time_with_nanoseconds());
    let updated = leases.update(&lease, &UpdateOptions::default()).await.unwrap();
    let renewed = updated.spec.unwrap().acquire_time.unwrap().timestamp();
    assert_eq!(renewed, Timestamp::new(1_800_000_000, 123_456_000).unwrap(), "truncated to microseconds");

    // What the types now avoid: the apiserver refuses nine digits.
    let raw = DynamicClient::namespaced_with(support::client(), &ns, &DynamicResource::of::<Lease>());
    let nine = DynamicObject::new(&DynamicResource::of::<Lease>(), "nine")
        .with_data(json!({"spec": {"renewTime": "2027-01-15T08:00:00.123456789Z"}}));
    let err = raw.create(&nine, &CreateOptions::default()).await.unwrap_err();
    assert_eq!(err.status().map(|s| s.code), Some(400), "{err}");
}

#[tokio::test]
async fn quantities_written_as_numbers_keep_their_text() {
    let ns = support::namespace("wire-quantity");
    let clientset = support::clientset();

    // A manifest as people write them: bare numbers for cpu and memory.
    let manifest = r#"
metadata: {name: quota}
spec:
  hard: {cpu: 2, memory: 1e3, pods: 10, requests.storage: 123456789012345678901234}
"#;
    let quota: ResourceQuota = serde_yaml_ng::from_str(manifest).unwrap();
    let hard = |q: &ResourceQuota| -> Vec<(String, String)> {
        let hard = q.spec.as_ref().and_then(|s| s.hard.as_ref()).unwrap();
        hard.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    };
    // YAML hands numbers over as numbers: whole ones keep their digits.
    assert_eq!(hard(&quota)[0], ("cpu".to_owned(), "2".to_owned()));
    let created = clientset.core_v1().resource_quotas(&ns).create(&quota, &CreateOptions::default()).await.unwrap();
    // The apiserver answers with its canonical text.
    assert_eq!(hard(&created)[..2], [("cpu".into(), "2".into()), ("memory".into(), "1k".into())]);

    // JSON keeps the exact text of every number, as Go's Quantity does.
    let pod_json = r#"{"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "busybox",
        "resources": {"requests": {"cpu": 0.5, "memory": 1e3}, "limits": {"cpu": 2, "memory": 1E+6}}}]}}"#;
    let pod: Pod = serde_json::from_str(pod_json).unwrap();
    let resources = pod.spec.as_ref().unwrap().containers[0].resources.as_ref().unwrap();
    let text = |m: Option<&Map<Quantity>>, k: &str| m.and_then(|m| m.get(k)).map(|q| q.to_string());
    assert_eq!(text(resources.requests.as_ref(), "cpu").as_deref(), Some("0.5"));
    assert_eq!(text(resources.requests.as_ref(), "memory").as_deref(), Some("1e3"));
    assert_eq!(text(resources.limits.as_ref(), "memory").as_deref(), Some("1E+6"));
    // The server got that text: it answers in the same (exponent) form.
    let created = clientset.core_v1().pods(&ns).create(&pod, &CreateOptions::default()).await.unwrap();
    let resources = created.spec.unwrap().containers[0].resources.clone().unwrap();
    assert_eq!(text(resources.requests.as_ref(), "memory").as_deref(), Some("1e3"));
    assert_eq!(text(resources.limits.as_ref(), "memory").as_deref(), Some("1E+6"));

    // Quantities from text, as a controller writes them.
    let quota = ResourceQuota {
        metadata: meta("typed"),
        spec: Some(ResourceQuotaSpec {
            hard: Some(Map::from([("cpu", Quantity::from("100m")), ("memory", "64Mi".into())])),
            ..Default::default()
        }),
        ..Default::default()
    };
    let created = clientset.core_v1().resource_quotas(&ns).create(&quota, &CreateOptions::default()).await.unwrap();
    assert_eq!(hard(&created), [("cpu".into(), "100m".into()), ("memory".into(), "64Mi".into())]);
}

#[tokio::test]
async fn a_timestamp_with_more_than_nine_fraction_digits_does_not_stop_an_informer() {
    support::install_crds(&support::test_crds()).await;
    let ns = support::namespace("wire-time");
    let raw = DynamicClient::namespaced_with(support::client(), &ns, &DynamicResource::of::<Widget>());
    // Go reads (and the apiserver's date-time format check accepts) a
    // fraction of any length; the digits past nanoseconds are dropped.
    let widget = DynamicObject::new(&DynamicResource::of::<Widget>(), "precise")
        .with_data(json!({"spec": {"replicas": 1, "notBefore": "2030-01-02T03:04:05.123456789123Z"}}));
    raw.create(&widget, &CreateOptions::default()).await.unwrap();

    let typed = k8s_client_test_widgets::clientset::Clientset::new(support::client());
    let got = typed.example_com_v1().widgets(&ns).get("precise", &GetOptions::default()).await.unwrap();
    let expected = Timestamp::new(1_893_553_445, 123_456_789).unwrap();
    assert_eq!(got.spec.not_before.map(|t| t.timestamp()), Some(expected));
    let listed = typed.example_com_v1().widgets(&ns).list(&ListOptions::default()).await.unwrap();
    assert_eq!(listed.items.len(), 1);

    let factory = SharedInformerFactory::builder(support::client()).namespace(ns.clone()).build();
    let lister = factory.example_com_v1().widgets().lister();
    factory.start();
    let synced = tokio::time::timeout(Duration::from_secs(30), factory.wait_for_cache_sync()).await;
    assert!(synced.is_ok(), "the informer did not sync");
    assert_eq!(lister.namespace(&ns).get("precise").unwrap().spec.not_before.map(|t| t.timestamp()), Some(expected));
    factory.shutdown();
}
