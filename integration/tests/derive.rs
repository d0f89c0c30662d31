//! Custom resources defined in Rust (`#[derive(CustomResource)]`), against
//! the real apiserver: their CRDs are accepted as written and become
//! Established, and the derived kinds work with the typed client,
//! informers, listers, patches and server-side apply, status and scale,
//! the apiserver's validation (CEL rules, `maximum`) and two versions of
//! one kind.

mod derived;
mod support;

use std::collections::BTreeMap;
use std::time::Duration;

use derived::{Color, Policy, PolicySpec, Port, Rule, Salute, SaluteSpec, SaluteStatus, Settings, v1alpha1};
use k8s_client::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_client::apimachinery::pkg::api::resource::Quantity;
use k8s_client::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use k8s_client::apimachinery::pkg::util::intstr::IntOrString;
use k8s_client_runtime::ResourceClient;
use k8s_client_runtime::cache::SharedInformerFactory;
use k8s_client_runtime::codec::parse_time;
use k8s_client_runtime::dynamic::DynamicObject;
use k8s_client_runtime::rest::{
    ApplyOptions, CreateOptions, DeleteOptions, GetOptions, ListOptions, Patch, PatchOptions, UpdateOptions,
};
use k8s_client_runtime::schema::merge_crds;
use serde_json::json;
use tokio::sync::OnceCell;

/// The CRDs of the derived kinds: `Salute` in two versions (stored as
/// v1) and `Policy`.
fn crds() -> Vec<CustomResourceDefinition> {
    let salute = merge_crds(vec![v1alpha1::Salute::crd(), Salute::crd()], "v1").expect("the versions merge");
    vec![salute, Policy::crd()]
}

/// A fresh namespace, once the derived CRDs are served.
async fn namespace(prefix: &str) -> String {
    static INSTALLED: OnceCell<()> = OnceCell::const_new();
    INSTALLED
        .get_or_init(|| async {
            support::install_crd_objects(&crds()).await;
        })
        .await;
    support::namespace(prefix)
}

fn salute(name: &str) -> Salute {
    Salute::new(
        name,
        SaluteSpec {
            message: "hello".into(),
            replicas: Some(2),
            settings: Some(Settings { bold: Some(true), font: Some("serif".into()), points: Some(11.5) }),
            color: Some(Color::Green),
            ports: Some(vec![Port { name: "http".into(), port: 80 }, Port { name: "https".into(), port: 443 }]),
            labels: Some(BTreeMap::from([("tier".to_owned(), "gold".to_owned())])),
            size: Some(IntOrString::String("50%".into())),
            memory: Some(Quantity("64Mi".into())),
            not_before: Some(Time::new(parse_time("2030-01-02T03:04:05Z").unwrap())),
            extra: Some(json!({"any": {"thing": [1, "two", null]}})),
            time_to_live: Some(3600),
            tags: vec!["a".into(), "b".into()],
        },
    )
}

#[test]
fn the_crd_names_the_kind_its_versions_and_subresources() {
    let crd = serde_json::to_value(Salute::crd()).unwrap();
    assert_eq!(crd["metadata"]["name"], "salutes.derive.example.com");
    assert_eq!(crd["spec"]["scope"], "Namespaced");
    assert_eq!(crd["spec"]["names"]["shortNames"], json!(["sal"]));
    let version = &crd["spec"]["versions"][0];
    assert_eq!(version["subresources"]["scale"]["specReplicasPath"], ".spec.replicas");
    assert_eq!(version["selectableFields"], json!([{"jsonPath": ".spec.color"}]));
    let spec = &version["schema"]["openAPIV3Schema"]["properties"]["spec"];
    assert_eq!(spec["required"], json!(["message", "tags"]), "the fields that are not an Option");
    assert_eq!(spec["properties"]["ttl_seconds"]["minimum"].as_f64(), Some(0.0), "renamed, and unsigned");
    assert_eq!(spec["properties"]["ports"]["x-kubernetes-list-map-keys"], json!(["name"]));
    assert_eq!(spec["properties"]["settings"]["properties"]["font"]["pattern"], "^[a-z]+$");
    assert_eq!(spec["properties"]["color"]["enum"], json!(["red", "green"]));
    assert_eq!(spec["x-kubernetes-validations"][0]["message"], "that greeting is forbidden");
    let policy = serde_json::to_value(Policy::crd()).unwrap();
    assert_eq!(policy["spec"]["scope"], "Cluster");
    assert_eq!(policy["spec"]["names"]["plural"], "policies");
    let rule = &policy["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["rules"];
    assert_eq!(rule["additionalProperties"]["properties"]["weight"]["default"], 1);
    assert!(Salute::crd_yaml().starts_with("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"));
}

#[tokio::test]
async fn derived_kinds_are_served_listed_watched_patched_and_applied() {
    let ns = namespace("derive-crud").await;
    let client = ResourceClient::<Salute>::namespaced(support::client(), &ns);

    let factory = SharedInformerFactory::builder(support::client()).namespace(ns.clone()).build();
    let lister = factory.informer_for::<Salute>().lister();
    factory.start();
    assert!(tokio::time::timeout(Duration::from_secs(30), factory.wait_for_cache_sync()).await.is_ok());

    let sent = salute("one");
    let created = client.create(&sent, &CreateOptions::default()).await.unwrap();
    assert_eq!(created.spec, sent.spec, "the server's answer decodes to what was sent");
    assert!(created.metadata.uid.is_some());
    assert_eq!(client.get("one", &GetOptions::default()).await.unwrap(), created);
    let listed = client.list(&ListOptions::default()).await.unwrap();
    assert_eq!(listed.items.len(), 1);
    assert_eq!(listed.items[0].spec, sent.spec);

    // A merge patch, seen by the informer's cache.
    let patch = Patch::Merge(json!({"spec": {"message": "patched", "color": "red"}}));
    let patched = client.patch("one", &patch, &PatchOptions::default()).await.unwrap();
    assert_eq!((patched.spec.message.as_str(), patched.spec.color), ("patched", Some(Color::Red)));
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while lister.namespace(&ns).get("one").map(|s| s.spec.message.clone()).ok().as_deref() != Some("patched") {
        assert!(std::time::Instant::now() < deadline, "the informer did not see the patch");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let cached = lister.namespace(&ns).get("one").unwrap();
    assert_eq!(cached.spec, patched.spec);
    assert_eq!(cached.metadata.resource_version, patched.metadata.resource_version);

    // Server-side apply of the derived apply configuration, and extract.
    let config = derived::SaluteApply::new("two", &ns).with_spec(
        derived::SaluteSpecApply::default()
            .with_message("applied")
            .with_tags(["x"])
            .with_ports([derived::PortApply::default().with_name("grpc").with_port(9000)]),
    );
    let applied = client.apply("two", &config, &ApplyOptions::new("derive-test")).await.unwrap();
    assert_eq!(applied.spec.message, "applied");
    assert_eq!(applied.spec.ports, Some(vec![Port { name: "grpc".into(), port: 9000 }]));
    let extracted =
        derived::SaluteApply::extract(&client.get("two", &GetOptions::default()).await.unwrap(), "derive-test")
            .unwrap();
    assert_eq!(extracted.spec, config.spec, "extract gives back what the manager applied");

    // Status and scale.
    let mut with_status = client.get("one", &GetOptions::default()).await.unwrap();
    with_status.status = Some(SaluteStatus {
        replicas: Some(2),
        observed_generation: with_status.metadata.generation,
        conditions: Some(vec![Condition {
            type_: "Ready".into(),
            status: "True".into(),
            reason: "Greeted".into(),
            message: "all copies greet".into(),
            last_transition_time: Time::new(parse_time("2030-01-02T03:04:05Z").unwrap()),
            observed_generation: None,
        }]),
    });
    let updated = client.update_status(&with_status, &UpdateOptions::default()).await.unwrap();
    assert_eq!(updated.status, with_status.status);
    assert_eq!(client.get_status("one").await.unwrap().status, with_status.status);
    let scale = client.get_scale("one").await.unwrap();
    assert_eq!(scale.spec.as_ref().and_then(|s| s.replicas), Some(2));
    assert_eq!(scale.status.as_ref().map(|s| s.replicas), Some(2));
    let rescale = Patch::Merge(json!({"spec": {"replicas": 5}}));
    client.patch_scale("one", &rescale, &PatchOptions::default()).await.unwrap();
    assert_eq!(client.get("one", &GetOptions::default()).await.unwrap().spec.replicas, Some(5));

    client.delete("one", &DeleteOptions::default()).await.unwrap();
    factory.shutdown();
}

#[tokio::test]
async fn the_apiserver_refuses_what_the_schema_refuses() {
    let ns = namespace("derive-validation").await;
    let client = ResourceClient::<Salute>::namespaced(support::client(), &ns);
    let mut too_many = salute("too-many");
    too_many.spec.replicas = Some(11);
    let e = client.create(&too_many, &CreateOptions::default()).await.unwrap_err();
    assert!(e.is_invalid(), "{e}");
    assert!(e.to_string().contains("spec.replicas") && e.to_string().contains("less than or equal to 10"), "{e}");

    let mut forbidden = salute("forbidden");
    forbidden.spec.message = "forbidden".into();
    let e = client.create(&forbidden, &CreateOptions::default()).await.unwrap_err();
    assert!(e.is_invalid(), "{e}");
    assert!(e.to_string().contains("that greeting is forbidden"), "the CEL rule's message: {e}");

    let mut bad_font = salute("bad-font");
    bad_font.spec.settings = Some(Settings { font: Some("Serif 2".into()), ..Default::default() });
    let e = client.create(&bad_font, &CreateOptions::default()).await.unwrap_err();
    assert!(e.to_string().contains("spec.settings.font"), "the pattern: {e}");

    // A value the enum does not list, sent as JSON.
    let raw = ResourceClient::<DynamicObject>::namespaced_with(
        support::client(),
        &ns,
        &k8s_client_runtime::DynamicResource::of::<Salute>(),
    );
    let mut object = DynamicObject::from_typed(&salute("bad-color")).unwrap();
    object.data.get_mut("spec").unwrap()["color"] = json!("blue");
    let e = raw.create(&object, &CreateOptions::default()).await.unwrap_err();
    assert!(e.to_string().contains("spec.color"), "the enum: {e}");
}

#[tokio::test]
async fn two_versions_of_one_kind_serve_the_same_objects() {
    let ns = namespace("derive-versions").await;
    let old = ResourceClient::<v1alpha1::Salute>::namespaced(support::client(), &ns);
    let new = ResourceClient::<Salute>::namespaced(support::client(), &ns);
    let sent =
        v1alpha1::Salute::new("old", v1alpha1::SaluteSpec { message: "from v1alpha1".into(), replicas: Some(3) });
    old.create(&sent, &CreateOptions::default()).await.unwrap();
    let read = new.get("old", &GetOptions::default()).await.unwrap();
    assert_eq!((read.spec.message.as_str(), read.spec.replicas), ("from v1alpha1", Some(3)));
    new.create(&salute("new"), &CreateOptions::default()).await.unwrap();
    let names: Vec<String> = old
        .list(&ListOptions::default())
        .await
        .unwrap()
        .items
        .iter()
        .filter_map(|s| s.metadata.name.as_deref().map(str::to_owned))
        .collect();
    assert_eq!(names, ["new", "old"], "v1alpha1 lists what v1 created");
    assert_eq!(old.get_scale("new").await.unwrap().spec.and_then(|s| s.replicas), Some(2));
}

#[tokio::test]
async fn a_cluster_scoped_kind_with_a_map_of_structs_and_defaults() {
    namespace("derive-cluster").await;
    let client = ResourceClient::<Policy>::all(support::client());
    let sent = Policy::new(
        "derive-policy",
        PolicySpec {
            enforced: true,
            rules: BTreeMap::from([("read".to_owned(), Rule { allow: vec!["get".into()], weight: None })]),
        },
    );
    let created = client.create(&sent, &CreateOptions::default()).await.unwrap();
    assert_eq!(created.spec.rules["read"].weight, Some(1), "the schema's default is applied");
    assert_eq!(created.spec.rules["read"].allow, ["get"]);
    client.delete("derive-policy", &DeleteOptions::default()).await.unwrap();
}

/// What a type of the IR is, without its docs (descriptions differ
/// between a hand-written CRD and a derived one).
fn shapes(api: &k8s_client_gen::ir::Api) -> BTreeMap<String, String> {
    api.types
        .values()
        .filter(|d| !d.external)
        .map(|d| {
            let mut shape = d.shape.clone();
            if let k8s_client_gen::ir::Shape::Struct(fields) = &mut shape {
                fields.iter_mut().for_each(|f| f.doc = None);
            }
            (d.schema_name.clone(), format!("{} {:?} {shape:?}", d.rust_name, d.module))
        })
        .collect()
}

fn gen_options() -> k8s_client_gen::emit::Options {
    k8s_client_gen::emit::Options {
        crate_name: "round-trip".into(),
        crate_version: None,
        runtime_path: None,
        client_path: None,
        group_names: Default::default(),
        standalone: true,
        source_label: String::new(),
        sources_in_label: false,
    }
}

/// The `Greeting` of the examples, defined in Rust, through `k8s-client-gen
/// crd`: the generator reads the derived CRD into the types it reads the
/// hand-written `examples/crds/greeting.yaml` into, the types of the
/// committed crate `k8s-client-example-greetings`.
#[test]
fn a_derived_crd_through_the_generator_gives_the_hand_written_crds_types() {
    use k8s_client_examples::greeting::Greeting;
    let dir = tempfile::tempdir().unwrap();
    let derived = dir.path().join("greeting.yaml");
    std::fs::write(&derived, Greeting::crd_yaml()).unwrap();
    let hand = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/crds/greeting.yaml");
    let from_derived =
        k8s_client_gen::generate_from_crds(&[derived], &gen_options()).expect("the derived CRD generates");
    let from_hand = k8s_client_gen::generate_from_crds(&[hand], &gen_options()).unwrap();
    assert_eq!(shapes(&from_derived.api), shapes(&from_hand.api));
    let resources = |g: &k8s_client_gen::Generated| {
        g.api.resources.values().map(|r| format!("{r:?}").replace(&r.source, "")).collect::<Vec<_>>()
    };
    assert_eq!(resources(&from_derived), resources(&from_hand));
}

/// The derived `Greeting` and the one generated from the hand-written CRD
/// decode the same objects to the same JSON, on the apiserver too: an
/// object created through one reads back through the other, with the
/// schema's default applied by the derived CRD.
#[tokio::test]
async fn derived_and_generated_greetings_read_each_others_objects() {
    use k8s_client_example_greetings::com::example::v1 as generated;
    use k8s_client_examples::greeting::{self as derived_greeting, Greeting};

    let object = json!({
        "apiVersion": "example.com/v1",
        "kind": "Greeting",
        "metadata": {"name": "hello", "namespace": "default", "labels": {"a": "b"}},
        "spec": {"message": "hello", "replicas": 3},
        "status": {
            "observedGeneration": 2,
            "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2030-01-02T03:04:05Z",
                            "reason": "Greeted", "message": "done", "observedGeneration": 2}]
        }
    });
    let derived: Greeting = serde_json::from_value(object.clone()).unwrap();
    let from_hand: generated::Greeting = serde_json::from_value(object.clone()).unwrap();
    assert_eq!(serde_json::to_value(&derived).unwrap(), object);
    assert_eq!(serde_json::to_value(&from_hand).unwrap(), object);
    assert_eq!(
        derived.status.as_ref().and_then(|s| s.conditions.as_ref()).map(|c| c[0].status),
        Some(derived_greeting::ConditionStatus::True)
    );

    support::install_crd_objects(&[Greeting::crd()]).await;
    let ns = support::namespace("derive-greetings");
    let ours = ResourceClient::<Greeting>::namespaced(support::client(), &ns);
    let theirs = ResourceClient::<generated::Greeting>::namespaced(support::client(), &ns);
    let mut sent = from_hand.clone();
    sent.metadata = Default::default();
    sent.metadata.name = Some("from-generated".into());
    sent.spec.replicas = None;
    sent.status = None;
    theirs.create(&sent, &CreateOptions::default()).await.unwrap();
    let read = ours.get("from-generated", &GetOptions::default()).await.unwrap();
    assert_eq!(read.spec.message, "hello");
    assert_eq!(read.spec.replicas, Some(1), "the derived CRD's default");
    ours.create(&Greeting::new("from-derived", read.spec.clone()), &CreateOptions::default()).await.unwrap();
    let back = theirs.get("from-derived", &GetOptions::default()).await.unwrap();
    assert_eq!(serde_json::to_value(&back.spec).unwrap(), serde_json::to_value(&read.spec).unwrap());
}
