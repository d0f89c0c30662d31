//! The fake apiserver, driven through the runtime's own clients.

mod clients;
mod objects;
mod watches;

use serde_json::json;

use super::{FakeCluster, FakeResource};
use crate::dynamic::{DynamicClient, DynamicObject};
use crate::object::DynamicResource;
use crate::rest::ResourceClient;
use crate::testing::{Pod, pod};

/// `example.com/v1` widgets, namespaced, with status and scale.
fn widgets() -> DynamicResource {
    DynamicResource {
        group: "example.com".into(),
        version: "v1".into(),
        kind: "Widget".into(),
        plural: "widgets".into(),
        namespaced: true,
    }
}

fn widget_cluster() -> (FakeCluster, DynamicClient) {
    let fake = FakeCluster::new();
    fake.register_resource(&FakeResource { status: true, scale: true, ..FakeResource::new(widgets()) });
    let client = DynamicClient::namespaced_with(fake.client(), "ns", &widgets());
    (fake, client)
}

fn widget(name: &str, replicas: i64) -> DynamicObject {
    DynamicObject::new(&widgets(), name).within("ns").with_data(json!({"spec": {"replicas": replicas}}))
}

fn pods(fake: &FakeCluster, namespace: &str) -> ResourceClient<Pod> {
    ResourceClient::namespaced(fake.client(), namespace)
}

fn labelled(namespace: &str, name: &str, labels: &[(&str, &str)]) -> Pod {
    let mut p = pod(namespace, name, "");
    p.metadata.labels = Some(labels.iter().copied().collect());
    p
}
