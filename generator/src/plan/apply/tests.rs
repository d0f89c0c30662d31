//! The merge decisions of apply configurations, against the pinned
//! Kubernetes spec and a CRD fixture.

use std::path::Path;
use std::sync::OnceLock;

use super::Merge;
use crate::ir::{Api, ListType, PatchStrategy};
use crate::naming::GroupNames;

/// `m` compactly: `List(map[name], merge[name], Struct(ContainerApply))`,
/// a list's apply type, strategic-merge strategy and element.
fn show(m: &Merge) -> String {
    match m {
        Merge::Atomic => "Atomic".into(),
        Merge::Deduced => "Deduced".into(),
        Merge::Struct { name, .. } => format!("Struct({name})"),
        Merge::Declared(schema) => format!("Declared({schema})"),
        Merge::Map(inner) => format!("Map({})", show(inner)),
        Merge::List { apply, patch, element } => {
            let apply = match apply {
                ListType::Atomic => "atomic".to_owned(),
                ListType::Set => "set".to_owned(),
                ListType::Map(keys) => format!("map[{}]", keys.join(",")),
            };
            let patch = match patch {
                PatchStrategy::Replace => "replace".to_owned(),
                PatchStrategy::Merge { key: None } => "merge".to_owned(),
                PatchStrategy::Merge { key: Some(key) } => format!("merge[{key}]"),
            };
            format!("List({apply}, {patch}, {})", show(element))
        }
        Merge::RetainKeys(inner) => format!("RetainKeys({})", show(inner)),
    }
}

/// The listed (non-atomic) fields of `schema`'s apply configuration.
fn merge_fields(api: &Api, schema: &str) -> Vec<(String, String)> {
    let plan = crate::plan::plan(api, &GroupNames::default()).expect("plans");
    let apply = plan.structs[schema].apply.as_ref().expect("has an apply configuration");
    apply.merge_fields.iter().map(|(json, m)| ((*json).to_owned(), show(m))).collect()
}

fn kubernetes() -> &'static Api {
    static API: OnceLock<Api> = OnceLock::new();
    API.get_or_init(|| {
        let specs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../specs/kubernetes/1.37");
        crate::spec::build(&crate::spec::load_dir(&specs).expect("spec loads")).expect("spec builds")
    })
}

fn pairs(expected: &[(&str, &str)]) -> Vec<(String, String)> {
    expected.iter().map(|(a, b)| ((*a).to_owned(), (*b).to_owned())).collect()
}

#[test]
fn kubernetes_types_merge_as_their_schema_says() {
    let api = kubernetes();
    let table: &[(&str, &[(&str, &str)])] = &[
        // `selector` is an atomic LabelSelector: not listed.
        (
            "io.k8s.api.apps.v1.DeploymentSpec",
            // `strategy` is `retainKeys`: its patches say which of its
            // fields stay, so switching to `Recreate` drops `rollingUpdate`.
            &[
                ("strategy", "RetainKeys(Struct(DeploymentStrategyApply))"),
                ("template", "Struct(PodTemplateSpecApply)"),
            ],
        ),
        (
            "io.k8s.api.apps.v1.Deployment",
            &[
                ("metadata", "Struct(ObjectMetaApply)"),
                ("spec", "Struct(DeploymentSpecApply)"),
                ("status", "Struct(DeploymentStatusApply)"),
            ],
        ),
        // `managedFields` is atomic: not listed.
        (
            "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
            &[
                ("annotations", "Map(Atomic)"),
                ("finalizers", "List(set, merge, Atomic)"),
                ("labels", "Map(Atomic)"),
                ("ownerReferences", "List(map[uid], merge[uid], Atomic)"),
            ],
        ),
        // An atomic struct's own fields still merge as they say, where it
        // is held granularly.
        ("io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector", &[("matchLabels", "Map(Atomic)")]),
        // A RawExtension is deduced from its value.
        ("io.k8s.api.apps.v1.ControllerRevision", &[("data", "Deduced"), ("metadata", "Struct(ObjectMetaApply)")]),
    ];
    for (schema, expected) in table {
        assert_eq!(merge_fields(api, schema), pairs(expected), "{schema}");
    }
    let single: &[(&str, &str, &str)] = &[
        ("io.k8s.api.core.v1.PodSpec", "containers", "List(map[name], merge[name], Struct(ContainerApply))"),
        // `merge,retainKeys`: merged by name, each element's patch with
        // `$retainKeys`.
        ("io.k8s.api.core.v1.PodSpec", "volumes", "RetainKeys(List(map[name], merge[name], Struct(VolumeApply)))"),
        ("io.k8s.api.core.v1.PodSpec", "tolerations", "Atomic"),
        // The property's own `atomic` on a map.
        ("io.k8s.api.core.v1.PodSpec", "nodeSelector", "Atomic"),
        // The property's `granular` overrides ObjectReference's `atomic`.
        ("io.k8s.api.core.v1.PersistentVolumeSpec", "claimRef", "Struct(ObjectReferenceApply)"),
        ("io.k8s.api.core.v1.PersistentVolumeSpec", "capacity", "Map(Atomic)"),
        // ObjectReference is atomic where nothing overrides it.
        ("io.k8s.api.core.v1.Binding", "target", "Atomic"),
        // Apply keys by port and protocol, strategic merge by port alone.
        (
            "io.k8s.api.core.v1.Container",
            "ports",
            "List(map[containerPort,protocol], merge[containerPort], Struct(ContainerPortApply))",
        ),
        ("io.k8s.api.core.v1.Container", "env", "List(map[name], merge[name], Struct(EnvVarApply))"),
        ("io.k8s.api.core.v1.Container", "args", "Atomic"),
        // A `set` without a patch strategy: strategic merge replaces it.
        ("io.k8s.api.discovery.v1.Endpoint", "addresses", "List(set, replace, Atomic)"),
        // Atomic for apply, merged by key for strategic merge patch.
        ("io.k8s.api.batch.v1.JobStatus", "conditions", "List(atomic, merge[type], Struct(JobConditionApply))"),
        ("io.k8s.api.core.v1.PodStatus", "hostIPs", "List(atomic, merge[ip], Struct(HostIPApply))"),
        ("io.k8s.api.core.v1.NodeSpec", "podCIDRs", "List(set, merge, Atomic)"),
    ];
    for (schema, json, merge) in single {
        let fields = merge_fields(api, schema);
        let found = fields.iter().find(|(j, _)| j == json).map(|(_, m)| m.as_str()).unwrap_or("Atomic");
        assert_eq!(found, *merge, "{schema}.{json}: {fields:?}");
        // Listed once each, sorted by JSON name.
        let names: Vec<&str> = fields.iter().map(|(j, _)| j.as_str()).collect();
        assert!(names.is_sorted() && names.windows(2).all(|w| w[0] != w[1]), "{names:?}");
    }
}

const FIXTURE: &str = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: merges.example.com}
spec:
  group: example.com
  names: {kind: Merging, plural: merges}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          apiVersion: {type: string}
          kind: {type: string}
          metadata: {type: object}
          spec:
            type: object
            properties:
              config: {type: object, x-kubernetes-preserve-unknown-fields: true}
              frozen: {type: object, x-kubernetes-preserve-unknown-fields: true, x-kubernetes-map-type: atomic}
              tags: {type: array, x-kubernetes-list-type: set, items: {type: string}}
              list: {type: array, items: {type: string}}
              ports:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items:
                  type: object
                  required: [name]
                  properties:
                    name: {type: string}
                    port: {type: integer}
              target:
                type: object
                x-kubernetes-map-type: atomic
                properties:
                  name: {type: string}
              owner:
                type: object
                properties:
                  name: {type: string}
              sizes: {type: object, additionalProperties: {type: integer}}
              chooser:
                type: object
                properties:
                  matchLabels: {type: object, additionalProperties: {type: string}}
                  matchExpressions:
                    type: array
                    items:
                      type: object
                      required: [key, operator]
                      properties:
                        key: {type: string}
                        operator: {type: string}
                        values: {type: array, items: {type: string}}
              selector:
                type: object
                x-kubernetes-map-type: atomic
                properties:
                  matchLabels: {type: object, additionalProperties: {type: string}}
                  matchExpressions:
                    type: array
                    items:
                      type: object
                      required: [key, operator]
                      properties:
                        key: {type: string}
                        operator: {type: string}
                        values: {type: array, items: {type: string}}
"#;

#[test]
fn custom_resources_merge_as_their_schema_says() {
    let mut manifests = crate::crd::Manifests::default();
    manifests.add_text(FIXTURE, Path::new("merges.yaml"), "merges.yaml").expect("fixture reads");
    let build = crate::spec::BuildOptions { external_crate: Some("k8s_client".into()) };
    let api = crate::spec::build_with(&manifests.documents, &build).expect("fixture builds");
    let spec = api.types.keys().find(|k| k.ends_with("/spec")).expect("the spec's type").clone();
    assert_eq!(
        merge_fields(&api, &spec),
        pairs(&[
            // Copies LabelSelector's shape but says nothing of its map type.
            ("chooser", "Struct(LabelSelectorApply)"),
            ("config", "Deduced"),
            ("owner", "Struct(MergingSpecOwnerApply)"),
            ("ports", "List(map[name], replace, Struct(MergingSpecPortsApply))"),
            ("sizes", "Map(Atomic)"),
            ("tags", "List(set, replace, Atomic)"),
        ]),
        "{spec}"
    );
    let kind = "com.example.v1.Merging";
    assert_eq!(
        merge_fields(&api, kind),
        pairs(&[("metadata", "Struct(ObjectMetaApply)"), ("spec", "Struct(MergingSpecApply)")])
    );
}

#[test]
fn a_map_list_without_keys_is_an_error_naming_where() {
    let text = FIXTURE.replace("x-kubernetes-list-map-keys: [name]", "x-kubernetes-list-map-keys: []");
    let mut manifests = crate::crd::Manifests::default();
    manifests.add_text(&text, Path::new("merges.yaml"), "merges.yaml").expect("fixture reads");
    let build = crate::spec::BuildOptions { external_crate: Some("k8s_client".into()) };
    let err = crate::spec::build_with(&manifests.documents, &build).expect_err("refused").to_string();
    assert!(err.contains("/properties/ports") && err.contains("x-kubernetes-list-map-keys"), "{err}");
}

#[test]
fn an_unknown_list_or_map_type_is_an_error_naming_where() {
    for (keyword, value) in [("x-kubernetes-list-type", "bag"), ("x-kubernetes-map-type", "loose")] {
        let text = FIXTURE.replace("x-kubernetes-list-type: set", &format!("{keyword}: {value}"));
        let mut manifests = crate::crd::Manifests::default();
        manifests.add_text(&text, Path::new("merges.yaml"), "merges.yaml").expect("fixture reads");
        let build = crate::spec::BuildOptions { external_crate: Some("k8s_client".into()) };
        let err = crate::spec::build_with(&manifests.documents, &build).expect_err("refused").to_string();
        assert!(err.contains(&format!("/properties/tags/{keyword}")) && err.contains(value), "{err}");
    }
}
