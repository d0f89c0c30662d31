//! The generated apply configurations (`<Type>Apply`, the `apply` feature):
//! what they encode, how their builders combine, what `extract` reads from
//! managedFields, and server-side apply with them on the real apiserver,
//! where a partial configuration takes only the fields it sets.
#![cfg(feature = "apply")]

mod support;

use k8s_client::api::apps::v1::{Deployment, DeploymentApply, DeploymentSpec, DeploymentSpecApply};
use k8s_client::api::core::v1::{
    ContainerApply, ContainerPortApply, NamespaceApply, PodSpecApply, PodTemplateSpecApply,
};
use k8s_client::apimachinery::pkg::apis::meta::v1::{
    LabelSelectorApply, ObjectMeta, ObjectMetaApply, OwnerReferenceApply,
};
use k8s_client_runtime::rest::{ApplyOptions, GetOptions};
use k8s_client_test_widgets::com::example::v1::{Widget, WidgetApply, WidgetSpecApply, WidgetStatusApply};
use serde_json::json;

#[test]
fn only_what_is_set_is_encoded_with_the_type_meta() {
    let config = DeploymentApply::default().with_spec(DeploymentSpecApply::default().with_replicas(2));
    assert_eq!(
        serde_json::to_string(&config).unwrap(),
        r#"{"apiVersion":"apps/v1","kind":"Deployment","spec":{"replicas":2}}"#
    );
    assert_eq!(
        serde_json::to_string(&DeploymentApply::default()).unwrap(),
        r#"{"apiVersion":"apps/v1","kind":"Deployment"}"#
    );
    // A nested struct has no TypeMeta of its own.
    assert_eq!(serde_json::to_string(&ContainerApply::default().with_name("app")).unwrap(), r#"{"name":"app"}"#);
}

#[test]
fn maps_merge_and_lists_append() {
    let config = DeploymentApply::new("web", "prod")
        .with_labels([("app", "web"), ("tier", "front")])
        .with_labels([("tier", "back"), ("team", "a")])
        .with_finalizers(["one"])
        .with_finalizers(["two"]);
    let meta = config.metadata.as_ref().unwrap();
    assert_eq!(meta.name.as_deref(), Some("web"));
    assert_eq!(meta.namespace.as_deref(), Some("prod"));
    let labels: Vec<(&str, &str)> = meta.labels.iter().flatten().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    assert_eq!(labels, [("app", "web"), ("team", "a"), ("tier", "back")]);
    assert_eq!(meta.finalizers.as_deref().unwrap(), ["one", "two"]);

    let pod = PodSpecApply::default()
        .with_containers([ContainerApply::default().with_name("a")])
        .with_containers([ContainerApply::default().with_name("b"), ContainerApply::default().with_name("c")]);
    let names: Vec<&str> = pod.containers.iter().flatten().filter_map(|c| c.name.as_deref()).collect();
    assert_eq!(names, ["a", "b", "c"]);
    // Nothing appended or merged is nothing set.
    let empty = PodSpecApply::default().with_containers([]).with_node_selector(Vec::<(&str, &str)>::new());
    assert_eq!(empty, PodSpecApply::default());
    // A scalar set twice keeps the later value.
    assert_eq!(DeploymentSpecApply::default().with_replicas(1).with_replicas(3).replicas, Some(3));
}

#[test]
fn kinds_are_made_from_their_name_and_scope() {
    assert_eq!(
        serde_json::to_value(NamespaceApply::new("team-a")).unwrap(),
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}})
    );
    let owner = OwnerReferenceApply::default().with_kind("ReplicaSet").with_name("rs").with_uid("1");
    let config =
        DeploymentApply::new("web", "prod").with_owner_references([owner.clone()]).with_annotations([("a", "b")]);
    let expected = ObjectMetaApply::default()
        .with_name("web")
        .with_namespace("prod")
        .with_owner_references([owner])
        .with_annotations([("a", "b")]);
    assert_eq!(config.metadata, Some(expected));
    // A custom resource's configuration, from its own crate.
    let widget = WidgetApply::new("w", "ns").with_spec(WidgetSpecApply::default().with_replicas(3).with_tags(["x"]));
    assert_eq!(
        serde_json::to_value(widget).unwrap(),
        json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", "namespace": "ns"},
               "spec": {"replicas": 3, "tags": ["x"]}})
    );
}

/// `extract` is wired to the kind: the fields of the manager's Apply entry
/// (of the main resource or of `status`), with the object's name.
#[test]
fn extract_reads_the_managers_apply_entry() {
    let deployment: Deployment = serde_json::from_value(json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "prod", "labels": {"app": "web", "other": "x"},
            "managedFields": [
                {"manager": "scaler", "operation": "Apply", "apiVersion": "apps/v1", "fieldsType": "FieldsV1",
                 "fieldsV1": {"f:metadata": {"f:labels": {"f:app": {}}}, "f:spec": {"f:replicas": {}}}},
                {"manager": "scaler", "operation": "Apply", "apiVersion": "apps/v1", "fieldsType": "FieldsV1",
                 "subresource": "status", "fieldsV1": {"f:status": {"f:replicas": {}}}},
                {"manager": "other", "operation": "Apply", "apiVersion": "apps/v1", "fieldsType": "FieldsV1",
                 "fieldsV1": {"f:metadata": {"f:labels": {"f:other": {}}}, "f:spec": {"f:paused": {}}}}
            ]},
        "spec": {"replicas": 3, "paused": true, "selector": {"matchLabels": {"app": "web"}}, "template": {}},
        "status": {"replicas": 2}
    }))
    .unwrap();
    let main = DeploymentApply::extract(&deployment, "scaler").unwrap();
    let expected = DeploymentApply::new("web", "prod")
        .with_labels([("app", "web")])
        .with_spec(DeploymentSpecApply::default().with_replicas(3));
    assert_eq!(main, expected);
    let status = DeploymentApply::extract_status(&deployment, "scaler").unwrap();
    assert_eq!(serde_json::to_value(&status).unwrap()["status"], json!({"replicas": 2}));
    assert_eq!(status.spec, None);
}

fn web_deployment(name: &str, ns: &str) -> DeploymentApply {
    let labels = [("app", name)];
    DeploymentApply::new(name, ns).with_spec(
        DeploymentSpecApply::default()
            .with_replicas(1)
            .with_selector(LabelSelectorApply::default().with_match_labels(labels))
            .with_template(
                PodTemplateSpecApply::default()
                    .with_metadata(ObjectMetaApply::default().with_labels(labels))
                    .with_spec(
                        PodSpecApply::default().with_containers([ContainerApply::default()
                            .with_name("app")
                            .with_image("registry.k8s.io/pause:3.10")
                            .with_ports([ContainerPortApply::default().with_container_port(8080)])]),
                    ),
            ),
    )
}

/// A second manager applies only `replicas`: no conflict over the selector
/// and template the first owns (the kind itself sends them empty, and
/// conflicts), and each manager's `extract` gives back exactly what it
/// applied.
#[tokio::test]
async fn partial_apply_takes_only_its_fields_and_extracts_them_back() {
    let ns = support::namespace("apply-typed");
    let deployments = support::clientset().apps_v1().deployments(&ns);
    let full = web_deployment("web", ns.as_str());
    let created = deployments.apply("web", &full, &ApplyOptions::new("owner")).await.unwrap();
    assert_eq!(created.spec.replicas, Some(1));

    // The kind itself sends its required selector and template, empty: a
    // conflict with their owner, though the replicas agree. The apply
    // configuration sends the replicas alone, and shares them.
    let whole = Deployment {
        metadata: ObjectMeta { name: Some("web".into()), ..Default::default() },
        spec: DeploymentSpec { replicas: Some(1), ..Default::default() },
        status: None,
    };
    let err = deployments.apply("web", &whole, &ApplyOptions::new("sharer")).await.unwrap_err();
    assert!(err.is_conflict(), "expected a conflict over the selector and template, got {err}");
    let share = DeploymentApply::new("web", ns.as_str()).with_spec(DeploymentSpecApply::default().with_replicas(1));
    deployments.apply("web", &share, &ApplyOptions::new("sharer")).await.unwrap();

    // Take replicas over (forced: the first manager owns them too).
    let scale = DeploymentApply::new("web", ns.as_str()).with_spec(DeploymentSpecApply::default().with_replicas(4));
    let scaled = deployments.apply("web", &scale, &ApplyOptions::new("scaler").force()).await.unwrap();
    assert_eq!(scaled.spec.replicas, Some(4));
    assert_eq!(scaled.spec.template.spec.as_ref().unwrap().containers[0].name, "app", "the template stays");

    let got = deployments.get("web", &GetOptions::default()).await.unwrap();
    assert_eq!(DeploymentApply::extract(&got, "scaler").unwrap(), scale);
    let owner = DeploymentApply::extract(&got, "owner").unwrap();
    let owner_spec = owner.spec.as_ref().unwrap();
    assert_eq!(owner_spec.replicas, None, "replicas went to the scaler");
    assert_eq!(owner_spec.selector, full.spec.as_ref().unwrap().selector);
    assert_eq!(owner_spec.template, full.spec.as_ref().unwrap().template);

    // The extracted configuration applies again without conflict, changed.
    let rescaled =
        DeploymentApply::extract(&got, "scaler").unwrap().with_spec(DeploymentSpecApply::default().with_replicas(2));
    let answer = deployments.apply("web", &rescaled, &ApplyOptions::new("scaler")).await.unwrap();
    assert_eq!(answer.spec.replicas, Some(2));
}

/// A custom resource's configuration, applied to the object and to its
/// status, and extracted from each.
#[tokio::test]
async fn custom_resource_apply_and_status_extract() {
    support::install_crds(&support::test_crds()).await;
    let ns = support::namespace("apply-crd");
    let widgets = k8s_client_test_widgets::clientset::Clientset::new(support::client()).example_com_v1().widgets(&ns);
    let config = WidgetApply::new("w", ns.as_str())
        .with_labels([("app", "w")])
        .with_spec(WidgetSpecApply::default().with_replicas(2).with_tags(["a"]));
    let created: Widget = widgets.apply("w", &config, &ApplyOptions::new("maker")).await.unwrap();
    assert_eq!(created.spec.replicas, 2);

    let status = WidgetApply::new("w", ns.as_str()).with_status(WidgetStatusApply::default().with_replicas(2));
    let applied = widgets.apply_status("w", &status, &ApplyOptions::new("maker")).await.unwrap();
    assert_eq!(applied.status.as_ref().and_then(|s| s.replicas), Some(2));

    let got = widgets.get("w", &GetOptions::default()).await.unwrap();
    assert_eq!(WidgetApply::extract(&got, "maker").unwrap(), config);
    assert_eq!(WidgetApply::extract_status(&got, "maker").unwrap(), status);
}
