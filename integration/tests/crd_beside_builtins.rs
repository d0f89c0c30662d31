//! A crate of custom resources beside the built-in crate in one program,
//! against the real apiserver: the custom group `autoscaling.example.com/v1`
//! shares its first label with the built-in `autoscaling/v1`, yet with both
//! preludes in scope each accessor is its own (`autoscaling_v1()` and
//! `autoscaling_example_com_v1()`), and both informers run in one factory.

mod support;

use std::time::Duration;

use k8s_client::api::autoscaling::v1::{
    CrossVersionObjectReference, HorizontalPodAutoscaler, HorizontalPodAutoscalerSpec,
};
use k8s_client::prelude::*;
use k8s_client_runtime::cache::SharedInformerFactory;
use k8s_client_runtime::rest::CreateOptions;
use k8s_client_test_widgets::com::example::autoscaling::v1::{Autoscaler, AutoscalerSpec};
use k8s_client_test_widgets::prelude::*;

// `ObjectMeta` and `Map` come from both preludes, as the same items: one
// name each, with both in scope.
fn meta(name: &str) -> ObjectMeta {
    ObjectMeta { name: Some(name.into()), labels: Some(Map::from([("app", "web")])), ..Default::default() }
}

#[tokio::test]
async fn a_custom_group_named_like_a_built_in_one_runs_beside_it() {
    support::install_crds(&support::test_crds()).await;
    let ns = support::namespace("beside");
    let builtin = support::clientset();
    let custom = k8s_client_test_widgets::clientset::Clientset::new(support::client());

    let factory = SharedInformerFactory::builder(support::client()).namespace(ns.clone()).build();
    let hpas = factory.autoscaling_v1().horizontal_pod_autoscalers().lister();
    let autoscalers = factory.autoscaling_example_com_v1().autoscalers().lister();
    factory.start();
    let synced = tokio::time::timeout(Duration::from_secs(30), factory.wait_for_cache_sync()).await;
    assert!(synced.is_ok(), "the informers did not sync");

    let hpa = HorizontalPodAutoscaler {
        metadata: meta("web"),
        spec: HorizontalPodAutoscalerSpec {
            max_replicas: 3,
            scale_target_ref: CrossVersionObjectReference {
                api_version: Some("apps/v1".into()),
                kind: "Deployment".into(),
                name: "web".into(),
            },
            ..Default::default()
        },
        ..Default::default()
    };
    builtin.autoscaling_v1().horizontal_pod_autoscalers(&ns).create(&hpa, &CreateOptions::default()).await.unwrap();
    let autoscaler = Autoscaler {
        metadata: meta("web"),
        spec: Some(AutoscalerSpec { target: Some("web".into()), min_replicas: Some(2) }),
        status: None,
    };
    custom.autoscaling_example_com_v1().autoscalers(&ns).create(&autoscaler, &CreateOptions::default()).await.unwrap();

    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let hpa = hpas.namespace(&ns).get("web").ok();
        let autoscaler = autoscalers.namespace(&ns).get("web").ok();
        if let (Some(hpa), Some(autoscaler)) = (hpa, autoscaler) {
            assert_eq!(hpa.spec.max_replicas, 3);
            assert_eq!(autoscaler.spec.as_ref().and_then(|s| s.min_replicas), Some(2));
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the caches did not see both objects");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    factory.shutdown();
}
