//! Informers of a custom resource known only at run time, on the real
//! apiserver: the dynamic factory's informer lists and watches Widgets as
//! `DynamicObject`s, its lister reads them, and it shares start and sync
//! with the typed informers of the same factory.

mod support;

use std::time::Duration;

use k8s_client::api::core::v1::ConfigMap;
use k8s_client_runtime::cache::SharedInformerFactory;
use k8s_client_runtime::dynamic::{DynamicInformerFactory, DynamicObject};
use k8s_client_runtime::object::DynamicResource;
use k8s_client_runtime::rest::{CreateOptions, ResourceClient};
use k8s_client_runtime::selector::LabelSelector;
use serde_json::json;

fn widgets() -> DynamicResource {
    DynamicResource {
        group: "example.com".into(),
        version: "v1".into(),
        kind: "Widget".into(),
        plural: "widgets".into(),
        namespaced: true,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dynamic_informers_cache_a_custom_resource_beside_typed_ones() {
    support::install_crds(&support::test_crds()).await;
    let ns = support::namespace("dyninf");
    let client = support::client();
    let objects = ResourceClient::<DynamicObject>::namespaced_with(client.clone(), &ns, &widgets());
    let first = DynamicObject::new(&widgets(), "first").within(&ns).with_data(json!({"spec": {"replicas": 1}}));
    objects.create(&first, &CreateOptions::default()).await.expect("create first");

    let typed = SharedInformerFactory::builder(client.clone()).namespace(&ns).build();
    let dynamic = DynamicInformerFactory::with_factory(typed.clone());
    let informer = dynamic.for_resource(&widgets());
    let configmaps = typed.informer_for::<ConfigMap>();
    dynamic.start();
    dynamic.wait_for_cache_sync_within(Duration::from_secs(30)).await.expect("both caches sync");
    assert!(configmaps.has_synced(), "the typed informer of the same factory started and synced too");

    let second = DynamicObject::new(&widgets(), "second").within(&ns).with_data(json!({"spec": {"replicas": 2}}));
    objects.create(&second, &CreateOptions::default()).await.expect("create second");
    let lister = informer.lister();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let mut cached = lister.namespace(&ns).list(&LabelSelector::everything());
        cached.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
        let sizes: Vec<_> = cached.iter().map(|w| w.data["spec"]["replicas"].as_i64()).collect();
        if sizes == [Some(1), Some(2)] {
            assert_eq!(cached[1].kind, "Widget");
            assert_eq!(cached[1].api_version, "example.com/v1");
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "the cache never held both widgets: {sizes:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        std::ptr::eq(
            &*dynamic.for_resource(&widgets()).lister().namespace(&ns).get("first").unwrap(),
            &*lister.namespace(&ns).get("first").unwrap()
        ),
        "one informer per resource"
    );
    dynamic.shutdown();
}
