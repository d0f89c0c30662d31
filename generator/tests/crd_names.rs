//! Names of a crate of custom resources that must never clash: groups
//! named alike, names given by hand (`--group-name`), and CRDs of one
//! group claiming the same name. A clash is an error naming both owners,
//! with nothing written.

use std::path::Path;
use std::process::Command;

fn crd(group: &str, kind: &str, plural: &str, list_kind: Option<&str>) -> String {
    let list_kind = list_kind.map(|l| format!(", listKind: {l}")).unwrap_or_default();
    format!(
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: {plural}.{group}\n\
         spec:\n  group: {group}\n  scope: Namespaced\n  names: {{kind: {kind}, plural: {plural}{list_kind}}}\n  versions:\n\
         \x20 - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema: {{type: object}}\n"
    )
}

/// Runs `crd` on the documents, with extra flags; the outcome and stderr.
fn generate(docs: &[String], flags: &[&str]) -> (bool, String, std::path::PathBuf, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("crds.yaml");
    std::fs::write(&file, docs.join("---\n")).unwrap();
    let out = dir.path().join("out");
    let mut args = vec!["crd", "--crds", file.to_str().unwrap(), "--out", out.to_str().unwrap()];
    args.extend_from_slice(flags);
    let output = Command::new(env!("CARGO_BIN_EXE_k8s-client-gen")).args(&args).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(!stderr.contains("panicked"), "{stderr}");
    (output.status.success(), stderr, out, dir)
}

fn has_file(out: &Path, rel: &str) -> bool {
    out.join(rel).is_file()
}

#[test]
fn groups_named_alike_are_an_error_until_one_is_named_by_hand() {
    let docs = [crd("a-b.example.com", "Thing", "things", None), crd("a.b-example.com", "Other", "others", None)];
    let (ok, stderr, out, _dir) = generate(&docs, &[]);
    assert!(!ok, "{stderr}");
    for part in ["a-b.example.com", "a.b-example.com", "a_b_example_com_v1", "--group-name a.b-example.com=<name>"] {
        assert!(stderr.contains(part), "{part:?} missing: {stderr}");
    }
    assert!(!out.exists(), "nothing may be written on failure");

    let (ok, stderr, out, _dir) = generate(&docs, &["--group-name", "a.b-example.com=ab"]);
    assert!(ok, "{stderr}");
    assert!(has_file(&out, "src/clientset/a_b_example_com_v1.rs") && has_file(&out, "src/clientset/ab_v1.rs"));
}

#[test]
fn groups_sharing_a_first_label_each_get_their_whole_name() {
    let docs = [
        crd("operator.tigera.io", "Installation", "installations", None),
        crd("operator.victoriametrics.com", "VMCluster", "vmclusters", None),
        crd("autoscaling.k8s.io", "VerticalPodAutoscaler", "verticalpodautoscalers", None),
    ];
    let (ok, stderr, out, _dir) = generate(&docs, &[]);
    assert!(ok, "{stderr}");
    for gv in ["operator_tigera_io_v1", "operator_victoriametrics_com_v1", "autoscaling_k8s_io_v1"] {
        for dir in ["clientset", "listers", "informers"] {
            assert!(has_file(&out, &format!("src/{dir}/{gv}.rs")), "src/{dir}/{gv}.rs");
        }
    }
    // The headers name what the crate serves, and the input.
    let lib = std::fs::read_to_string(out.join("src/lib.rs")).unwrap();
    let first = lib.lines().next().unwrap();
    assert!(
        first.contains("autoscaling.k8s.io/v1, operator.tigera.io/v1, operator.victoriametrics.com/v1 in "),
        "{first}"
    );
    assert!(first.contains("crds.yaml"), "{first}");
    let cargo = std::fs::read_to_string(out.join("Cargo.toml")).unwrap();
    assert!(cargo.contains("autoscaling.k8s.io/v1"), "{cargo}");
}

#[test]
fn names_given_by_hand_are_checked() {
    let docs = [crd("operator.tigera.io", "Installation", "installations", None)];
    for (flag, why) in [
        ("operator.tigera.io=apps", "the name of a built-in group"),
        ("apps=mine", "built-in group"),
        ("other.example.com=other", "does not serve"),
        ("operator.tigera.io=Tigera", "not a snake_case word"),
    ] {
        let (ok, stderr, out, _dir) = generate(&docs, &["--group-name", flag]);
        assert!(!ok && stderr.contains(why), "{flag}: {stderr}");
        assert!(!out.exists(), "{flag}: nothing may be written on failure");
    }
    let (ok, stderr, out, _dir) = generate(&docs, &["--group-name", "operator.tigera.io=tigera"]);
    assert!(ok, "{stderr}");
    let clientset = std::fs::read_to_string(out.join("src/clientset/mod.rs")).unwrap();
    assert!(clientset.contains("pub fn tigera_v1(&self) -> tigera_v1::TigeraV1Client"), "{clientset}");
}

#[test]
fn names_another_crd_of_the_group_claimed_are_an_error() {
    // `HubList` is already `Hub`'s list kind: the apiserver would not serve it.
    let docs =
        [crd("aliases.example.com", "Hub", "hubs", None), crd("aliases.example.com", "HubList", "hublists", None)];
    let (ok, stderr, out, _dir) = generate(&docs, &[]);
    assert!(!ok, "{stderr}");
    assert!(stderr.contains("document 1") && stderr.contains("/spec/names/kind"), "{stderr}");
    assert!(stderr.contains("hublists.aliases.example.com") && stderr.contains("hubs.aliases.example.com"), "{stderr}");
    assert!(!out.exists());
    // A short name that is another CRD's plural, and a singular that is
    // another's (defaulted) singular.
    let other = crd("aliases.example.com", "Other", "others", None);
    let docs = [
        crd("aliases.example.com", "Hub", "hubs", None),
        other.replace("plural: others", "plural: others, shortNames: [hubs]"),
    ];
    let (ok, stderr, ..) = generate(&docs, &[]);
    assert!(!ok && stderr.contains("/spec/names/shortNames/0"), "{stderr}");
    let docs = [
        crd("aliases.example.com", "Hub", "hubs", None),
        other.replace("plural: others", "plural: others, singular: hub"),
    ];
    let (ok, stderr, ..) = generate(&docs, &[]);
    assert!(!ok && stderr.contains("/spec/names/singular"), "{stderr}");
    // The same CRD twice (a bundle beside its parts, say).
    let thing = crd("aliases.example.com", "Hub", "hubs", None);
    let (ok, stderr, ..) = generate(&[thing.clone(), thing], &[]);
    assert!(!ok && stderr.contains("hubs.aliases.example.com is defined twice, also in "), "{stderr}");
    // In different groups the same names are fine.
    let docs = [crd("a.example.com", "Hub", "hubs", None), crd("b.example.com", "Hub", "hubs", None)];
    let (ok, stderr, ..) = generate(&docs, &[]);
    assert!(ok, "{stderr}");
}

#[test]
fn a_type_named_like_another_types_apply_configuration_keeps_its_name() {
    // `Thing`'s apply configuration would be `ThingApply`, the second
    // kind's name: the kind keeps it, the configuration is numbered.
    let docs = [crd("example.com", "Thing", "things", None), crd("example.com", "ThingApply", "thingapplies", None)];
    let (ok, stderr, out, _dir) = generate(&docs, &[]);
    assert!(ok, "{stderr}");
    let read = |rel: &str| std::fs::read_to_string(out.join(rel)).unwrap();
    let thing = read("src/com/example/v1/thing.rs");
    assert!(thing.contains("pub struct ThingApply_2 {") && thing.contains("for ThingApply_2 {}"), "{thing}");
    let thing_apply = read("src/com/example/v1/thing_apply.rs");
    assert!(thing_apply.contains("pub struct ThingApply {") && thing_apply.contains("pub struct ThingApplyApply {"));
    let module = read("src/com/example/v1/mod.rs");
    assert!(module.contains("pub use self::thing::ThingApply_2;"), "{module}");
    assert!(module.contains("pub use self::thing_apply::ThingApplyApply;"), "{module}");
}

#[test]
fn a_kind_field_named_like_a_metadata_builder_keeps_the_name() {
    // A top-level `labels` of the kind's own: `with_labels` sets it, and
    // `metadata.labels` is reached through `with_metadata`.
    let doc = crd("example.com", "Tagged", "taggeds", None).replace(
        "openAPIV3Schema: {type: object}",
        "openAPIV3Schema: {type: object, properties: {labels: {type: object, additionalProperties: {type: string}}}}",
    );
    let (ok, stderr, out, _dir) = generate(&[doc], &[]);
    assert!(ok, "{stderr}");
    let tagged = std::fs::read_to_string(out.join("src/com/example/v1/tagged.rs")).unwrap();
    assert_eq!(tagged.matches("pub fn with_labels(").count(), 1, "{tagged}");
    assert!(tagged.contains("Adds the entries to `labels`"), "{tagged}");
    assert!(!tagged.contains("metadata.labels"), "{tagged}");
    // The other metadata builders stay.
    assert!(tagged.contains("pub fn with_annotations("), "{tagged}");
}
