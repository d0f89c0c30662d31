//! Typed server-side apply on the real apiserver: apply configurations send
//! only what is set, managers share an object field by field (list-map
//! elements included), a conflict names fields and managers, and `extract`
//! reads back what a manager owns, for a built-in kind and a custom one.

mod support;

use k8s_client::api::apps::v1::{Deployment, DeploymentApply, DeploymentSpecApply};
use k8s_client::api::core::v1::{ContainerApply, PodSpecApply, PodTemplateSpecApply};
use k8s_client::apimachinery::pkg::apis::meta::v1::{LabelSelectorApply, ObjectMetaApply};
use k8s_client_runtime::ResourceClient;
use k8s_client_runtime::rest::{ApplyOptions, GetOptions};
use k8s_client_test_widgets::clientset::Clientset as Widgets;
use k8s_client_test_widgets::com::example::v1::{WidgetApply, WidgetSpecApply, WidgetSpecPortsApply};
use serde_json::{Value, json};

fn container(name: &str, image: &str) -> ContainerApply {
    ContainerApply::default().with_name(name).with_image(image)
}

/// The selector and template of a deployment `web`, without replicas.
fn shape(namespace: &str, containers: Vec<ContainerApply>) -> DeploymentApply {
    DeploymentApply::new("web", namespace).with_spec(
        DeploymentSpecApply::default()
            .with_selector(LabelSelectorApply::default().with_match_labels([("app", "web")]))
            .with_template(
                PodTemplateSpecApply::default()
                    .with_metadata(ObjectMetaApply::default().with_labels([("app", "web")]))
                    .with_spec(PodSpecApply::default().with_containers(containers)),
            ),
    )
}

fn replicas(namespace: &str, count: i32) -> DeploymentApply {
    DeploymentApply::new("web", namespace).with_spec(DeploymentSpecApply::default().with_replicas(count))
}

fn json_of(value: &impl serde::Serialize) -> Value {
    serde_json::to_value(value).unwrap()
}

async fn read(deployments: &ResourceClient<Deployment>) -> Deployment {
    deployments.get("web", &GetOptions::default()).await.unwrap()
}

#[tokio::test]
async fn managers_share_a_deployment_field_by_field() {
    let namespace = support::namespace("ssa");
    let deployments = support::clientset().apps_v1().deployments(&namespace);

    // What a typed partial configuration sends: only what was set.
    assert_eq!(
        json_of(&replicas(&namespace, 3)),
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": namespace}, "spec": {"replicas": 3}})
    );

    let shaped = shape(&namespace, vec![container("app", "nginx:1")]);
    deployments.apply("web", &shaped, &ApplyOptions::new("shaper")).await.unwrap();
    // Replicas alone, while `shaper` owns selector and template: no conflict.
    let scaled = deployments.apply("web", &replicas(&namespace, 3), &ApplyOptions::new("scaler")).await.unwrap();
    assert_eq!(scaled.spec.replicas, Some(3));
    assert_eq!(scaled.spec.template.spec.as_ref().unwrap().containers[0].image.as_deref(), Some("nginx:1"));

    // A second container, applied by another manager: the list-map
    // `containers` (keyed by name) is shared element by element.
    let sidecar = DeploymentApply::new("web", &namespace).with_spec(
        DeploymentSpecApply::default().with_template(
            PodTemplateSpecApply::default()
                .with_spec(PodSpecApply::default().with_containers([container("sidecar", "proxy:1")])),
        ),
    );
    let both = deployments.apply("web", &sidecar, &ApplyOptions::new("sidecars")).await.unwrap();
    let names: Vec<_> = both.spec.template.spec.unwrap().containers.iter().map(|c| c.name.to_string()).collect();
    assert_eq!(names, ["app", "sidecar"]);

    // Extract gives back exactly what each manager applied.
    let current = read(&deployments).await;
    assert_eq!(json_of(&DeploymentApply::extract(&current, "shaper").unwrap()), json_of(&shaped));
    assert_eq!(json_of(&DeploymentApply::extract(&current, "scaler").unwrap()), json_of(&replicas(&namespace, 3)));
    assert_eq!(json_of(&DeploymentApply::extract(&current, "sidecars").unwrap()), json_of(&sidecar));

    // Read, modify, apply: `shaper` changes its image through what it owns;
    // the sidecar and the replicas stay.
    let mut config = DeploymentApply::extract(&current, "shaper").unwrap();
    let template = config.spec.as_mut().unwrap().template.as_mut().unwrap();
    template.spec.as_mut().unwrap().containers.as_mut().unwrap()[0].image = Some("nginx:2".into());
    let changed = deployments.apply("web", &config, &ApplyOptions::new("shaper")).await.unwrap();
    let spec = changed.spec;
    assert_eq!(spec.replicas, Some(3));
    let images: Vec<_> =
        spec.template.spec.unwrap().containers.iter().map(|c| c.image.as_deref().unwrap_or("").to_owned()).collect();
    assert_eq!(images, ["nginx:2", "proxy:1"]);
}

#[tokio::test]
async fn a_conflict_names_fields_and_managers_and_extract_follows_ownership() {
    let namespace = support::namespace("ssa-conflict");
    let deployments = support::clientset().apps_v1().deployments(&namespace);
    let owner = shape(&namespace, vec![container("app", "nginx:1")]);
    let owner = owner.with_labels([("team", "blue")]);
    let mut owned = owner.clone();
    owned.spec.as_mut().unwrap().replicas = Some(2);
    deployments.apply("web", &owned, &ApplyOptions::new("owner")).await.unwrap();

    let err = deployments.apply("web", &replicas(&namespace, 5), &ApplyOptions::new("scaler")).await.unwrap_err();
    assert!(err.is_conflict(), "{err}");
    let conflicts = err.apply_conflicts();
    assert_eq!(conflicts.len(), 1, "{conflicts:?}");
    assert_eq!((conflicts[0].field.as_str(), conflicts[0].manager.as_str()), (".spec.replicas", "owner"));

    // Forced, the scaler takes the replicas: the owner's extract no longer
    // has them, and has everything else it applied.
    deployments.apply("web", &replicas(&namespace, 5), &ApplyOptions::new("scaler").force()).await.unwrap();
    let current = read(&deployments).await;
    assert_eq!(current.spec.replicas, Some(5));
    assert_eq!(json_of(&DeploymentApply::extract(&current, "owner").unwrap()), json_of(&owner));
    // A manager that never applied gets the name and namespace only.
    let nobody = DeploymentApply::extract(&current, "nobody").unwrap();
    assert_eq!(json_of(&nobody), json_of(&DeploymentApply::new("web", &namespace)));
}

#[tokio::test]
async fn a_custom_kind_is_applied_and_extracted_the_same_way() {
    support::install_crds(&support::test_crds()).await;
    let namespace = support::namespace("ssa-crd");
    let widgets = Widgets::new(support::client()).example_com_v1().widgets(&namespace);
    let port = |name: &str, number: i32| WidgetSpecPortsApply::default().with_name(name).with_port(number);

    let first = WidgetApply::new("w", &namespace)
        .with_spec(WidgetSpecApply::default().with_replicas(2).with_ports([port("http", 80)]).with_tags(["a"]));
    widgets.apply("w", &first, &ApplyOptions::new("first")).await.unwrap();
    let second = WidgetApply::new("w", &namespace)
        .with_spec(WidgetSpecApply::default().with_ports([port("metrics", 9090)]).with_tags(["b"]));
    let both = widgets.apply("w", &second, &ApplyOptions::new("second")).await.unwrap();
    let ports: Vec<_> = both.spec.ports.as_ref().unwrap().iter().map(|p| (p.name.to_string(), p.port)).collect();
    assert_eq!(ports, [("http".to_owned(), 80), ("metrics".to_owned(), 9090)]);
    let tags: Vec<_> = both.spec.tags.as_ref().unwrap().iter().map(|t| t.to_string()).collect();
    assert_eq!(tags, ["a", "b"]);

    let current = widgets.get("w", &GetOptions::default()).await.unwrap();
    assert_eq!(json_of(&WidgetApply::extract(&current, "first").unwrap()), json_of(&first));
    assert_eq!(json_of(&WidgetApply::extract(&current, "second").unwrap()), json_of(&second));
}

#[tokio::test]
async fn what_the_apiserver_defaulted_inside_an_applied_struct_is_not_extracted() {
    use k8s_client::api::apps::v1::DeploymentStrategyApply;
    let namespace = support::namespace("ssa-defaults");
    let deployments = support::clientset().apps_v1().deployments(&namespace);
    // An empty strategy: the apiserver fills in type and rollingUpdate,
    // which no manager owns; the selector is atomic, owned whole.
    let mut config = shape(&namespace, vec![container("app", "nginx:1")]);
    config.spec.as_mut().unwrap().strategy = Some(Box::new(DeploymentStrategyApply::default()));
    deployments.apply("web", &config, &ApplyOptions::new("shaper")).await.unwrap();
    let current = read(&deployments).await;
    let strategy = current.spec.strategy.as_ref().unwrap();
    assert_eq!(strategy.type_.as_deref(), Some("RollingUpdate"), "defaulted");
    assert_eq!(
        json_of(&DeploymentApply::extract(&current, "shaper").unwrap()),
        json_of(&shape(&namespace, vec![container("app", "nginx:1")])),
        "the selector whole, the strategy's defaults not"
    );
}
