//! Bad CRD input and unreachable clusters: a non-zero exit, an error that
//! names the file, the document index and the JSON pointer (or the URL),
//! nothing written, never a panic.

use std::path::Path;
use std::process::Command;

const HEAD: &str =
    "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: things.example.com\n";

fn run(args: &[&str]) -> (bool, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_k8s-client-gen")).args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(!stderr.contains("panicked"), "{stderr}");
    (output.status.success(), stderr)
}

/// Runs `crd` on one manifest holding `text` as its second document, after a ConfigMap.
fn crd_error(text: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("things.yaml");
    std::fs::write(&file, format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n---\n{text}")).unwrap();
    let out = dir.path().join("out");
    let (ok, stderr) = run(&["crd", "--crds", file.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(!ok, "must fail: {stderr}");
    assert!(stderr.contains(&file.display().to_string()), "{stderr}");
    assert!(stderr.contains("document 1"), "{stderr}");
    assert!(!out.exists(), "nothing may be written on failure");
    stderr
}

fn spec(versions: &str) -> String {
    format!(
        "{HEAD}spec:\n  group: example.com\n  scope: Namespaced\n  names: {{kind: Thing, plural: things}}\n  versions:\n{versions}"
    )
}

#[test]
fn invalid_yaml() {
    let e = crd_error("apiVersion: apiextensions.k8s.io/v1\nkind: [unclosed\n");
    assert!(e.contains("invalid YAML"), "{e}");
}

#[test]
fn crd_without_versions() {
    let e = crd_error(&format!(
        "{HEAD}spec:\n  group: example.com\n  scope: Namespaced\n  names: {{kind: Thing, plural: things}}\n  versions: []\n"
    ));
    assert!(e.contains("/spec/versions: things.example.com has no versions"), "{e}");
}

#[test]
fn version_without_schema() {
    let e = crd_error(&spec("  - name: v1\n    served: true\n    storage: true\n"));
    assert!(e.contains("/spec/versions/0/schema/openAPIV3Schema: things.example.com v1 has no schema"), "{e}");
}

#[test]
fn ref_inside_a_crd_schema() {
    let e = crd_error(&spec(
        "  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n        properties:\n          spec:\n            type: object\n            properties:\n              x: {$ref: '#/definitions/X'}\n",
    ));
    assert!(e.contains("/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/x/$ref"), "{e}");
    assert!(e.contains("$ref is not allowed"), "{e}");
}

/// What the apiserver refuses as not structural (Argo Workflows' "full"
/// CRDs, Emissary's unprocessed ones) is an error at the node, not a crate.
#[test]
fn schemas_that_are_not_structural() {
    let schema = |body: &str| {
        spec(&format!(
            "  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n        properties:\n{body}"
        ))
    };
    let e = crd_error(&schema("          inline:\n            properties:\n              a: {type: string}\n"));
    assert!(e.contains("/spec/versions/0/schema/openAPIV3Schema/properties/inline/type: must not be empty for specified object fields"), "{e}");
    let e = crd_error(&schema("          steps:\n            type: array\n            items: {type: array}\n"));
    assert!(e.contains("/properties/steps/items/items: must be specified for an array"), "{e}");
    let e = crd_error(&schema(
        "          id:\n            x-kubernetes-int-or-string: true\n            oneOf: [{type: string}, {type: integer}]\n",
    ));
    assert!(e.contains("/properties/id/oneOf/0/type: must not be set below allOf"), "{e}");
}

#[test]
fn kind_that_is_no_kind_name() {
    let text =
        spec("  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema: {type: object}\n")
            .replace("kind: Thing", "kind: 3-Thing");
    let e = crd_error(&text);
    assert!(e.contains("/spec/names/kind: kind \"3-Thing\" is not a kind name"), "{e}");
    assert!(e.contains("DNS-1035 label"), "{e}");
}

#[test]
fn wrongly_typed_field() {
    let e = crd_error(&spec("  - name: v1\n    served: yes-please\n    storage: true\n"));
    assert!(e.contains("/spec/versions/0/served"), "{e}");
}

#[test]
fn v1beta1_crds_are_refused() {
    let e =
        crd_error("apiVersion: apiextensions.k8s.io/v1beta1\nkind: CustomResourceDefinition\nmetadata:\n  name: x\n");
    assert!(e.contains("/apiVersion: apiextensions.k8s.io/v1beta1 CRDs are not supported"), "{e}");
}

#[test]
fn no_crd_at_all() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cm.yaml");
    std::fs::write(&file, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n").unwrap();
    let out = dir.path().join("out");
    let (ok, stderr) = run(&["crd", "--crds", file.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(!ok);
    assert!(stderr.contains("no served CustomResourceDefinition versions"), "{stderr}");
    assert!(stderr.contains("skipped ConfigMap \"x\""), "{stderr}");
    assert!(!out.exists());
}

#[test]
fn missing_input_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let missing = dir.path().join("nope.yaml");
    let (ok, stderr) = run(&["crd", "--crds", missing.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(!ok);
    assert!(stderr.contains(&missing.display().to_string()), "{stderr}");
}

#[test]
fn unreachable_cluster_names_the_url() {
    let dir = tempfile::tempdir().unwrap();
    // A port on loopback nobody listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {{server: 'http://127.0.0.1:{port}'}}\nusers:\n- name: u\n  user: {{token: t}}\ncontexts:\n- name: x\n  context: {{cluster: c, user: u}}\ncurrent-context: x\n"
        ),
    )
    .unwrap();
    let out = dir.path().join("out");
    let (ok, stderr) = run(&["cluster", "--kubeconfig", kubeconfig.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(!ok);
    assert!(stderr.contains(&format!("http://127.0.0.1:{port}/openapi/v3")), "{stderr}");
    // Why, from the root cause, with the URL named once.
    assert!(stderr.to_lowercase().contains("connection refused"), "{stderr}");
    assert_eq!(stderr.matches(&format!("127.0.0.1:{port}")).count(), 1, "{stderr}");
    assert!(!out.exists());
    assert!(!Path::new(&out).exists());
}

/// A CRD of one served version whose `openAPIV3Schema` is `schema` (YAML
/// flow style).
fn with_schema(schema: &str) -> String {
    spec(&format!("  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema: {schema}\n"))
}

const ROOT: &str = "/spec/versions/0/schema/openAPIV3Schema";

#[test]
fn schema_types_the_apiserver_does_not_know_are_refused() {
    let e =
        crd_error(&with_schema("{type: object, properties: {spec: {type: object, properties: {a: {type: tuple}}}}}"));
    assert!(e.contains(&format!("{ROOT}/properties/spec/properties/a/type: unsupported type \"tuple\": must be one of array, boolean, integer, number, object, string")), "{e}");
    let e = crd_error(&with_schema("{type: object, properties: {a: {type: 'null'}}}"));
    assert!(e.contains(&format!("{ROOT}/properties/a/type: type cannot be null")), "{e}");
    // Where values are only validated, no type may be set at all.
    let e = crd_error(&with_schema("{type: object, properties: {a: {type: string, anyOf: [{not: {type: date}}]}}}"));
    assert!(e.contains(&format!("{ROOT}/properties/a/anyOf/0/not/type: must not be set below allOf")), "{e}");
    let e = crd_error(&with_schema("{type: string}"));
    assert!(e.contains(&format!("{ROOT}/type: type \"string\" must be object at the root")), "{e}");
}

#[test]
fn schemas_that_are_not_structural_are_refused() {
    let cases = [
        ("{properties: {a: {type: string}}}", "/type: must not be empty at the root"),
        (
            "{type: object, properties: {a: {description: untyped}}}",
            "/properties/a/type: must not be empty for specified object fields",
        ),
        (
            "{type: object, properties: {a: {type: array, items: {}}}}",
            "/properties/a/items/type: must not be empty for specified array items",
        ),
        ("{type: object, properties: {a: {type: array}}}", "/properties/a/items: must be specified for an array"),
        (
            "{type: object, properties: {a: {type: object, properties: {b: {type: string}}, additionalProperties: {type: string}}}}",
            "/properties/a/additionalProperties: additionalProperties and properties are mutually exclusive",
        ),
        ("{type: object, additionalProperties: {type: string}}", "/additionalProperties: must not be used at the root"),
        (
            "{type: object, properties: {a: {type: string, x-kubernetes-embedded-resource: true}}}",
            "/properties/a/type: must be object if x-kubernetes-embedded-resource is true",
        ),
        ("{type: object, properties: {kind: {type: integer}}}", "/properties/kind/type: must be string"),
    ];
    for (schema, message) in cases {
        let e = crd_error(&with_schema(schema));
        assert!(e.contains(&format!("{ROOT}{message}")), "{schema}: {e}");
    }
    // What the markers allow: no type with int-or-string or preserve-unknown-fields.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("things.yaml");
    let ok = "{type: object, properties: {a: {x-kubernetes-int-or-string: true}, b: {x-kubernetes-preserve-unknown-fields: true}, c: {type: object, properties: {d: {type: string}}, additionalProperties: true}}}";
    std::fs::write(&file, with_schema(ok)).unwrap();
    let out = dir.path().join("out");
    let (ok, stderr) = run(&["crd", "--crds", file.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(ok, "{stderr}");
}

#[test]
fn names_and_versions_the_apiserver_refuses() {
    let schema = "    schema:\n      openAPIV3Schema: {type: object}\n";
    let e = crd_error(&spec(&format!(
        "  - name: v1\n    served: true\n    storage: true\n{schema}  - name: v1\n    served: true\n    storage: false\n{schema}"
    )));
    assert!(e.contains("/spec/versions/1/name: version \"v1\" is listed twice"), "{e}");
    let e = crd_error(&with_schema("{type: object}").replace("name: things.example.com", "name: widgets.example.com"));
    assert!(e.contains("/metadata/name: name \"widgets.example.com\" must be spec.names.plural + \".\" + spec.group (\"things.example.com\")"), "{e}");
    let e = crd_error(&with_schema("{type: object}").replace("scope: Namespaced", "scope: Global"));
    assert!(e.contains("/spec/scope: scope \"Global\" must be Namespaced or Cluster"), "{e}");
}

#[test]
fn a_storage_version_count_other_than_one_is_a_warning() {
    // Catalogs publish one version per file; which one is stored does not
    // change the code: generated, with a warning naming file and pointer.
    let schema = "    schema:\n      openAPIV3Schema: {type: object}\n";
    let cases = [
        (format!("  - name: v1\n    served: true\n    storage: false\n{schema}"), "no version is"),
        (
            format!(
                "  - name: v1\n    served: true\n    storage: true\n{schema}  - name: v2\n    served: true\n    storage: true\n{schema}"
            ),
            "2 versions (v1, v2) are",
        ),
    ];
    for (versions, what) in cases {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("things.yaml");
        std::fs::write(&file, spec(&versions)).unwrap();
        let out = dir.path().join("out");
        let (ok, stderr) = run(&["crd", "--crds", file.to_str().unwrap(), "--out", out.to_str().unwrap()]);
        assert!(ok, "{stderr}");
        let expected = format!(
            "warning: {}: document 0: /spec/versions: things.example.com: {what} marked as storage version \
             (the apiserver requires exactly one); generated anyway",
            file.display()
        );
        assert!(stderr.contains(&expected), "{expected}\n{stderr}");
        assert!(out.join("src").exists(), "{stderr}");
    }
}

#[test]
fn a_crd_without_served_versions_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let unserved = spec(
        "  - name: v1\n    served: false\n    storage: true\n    schema:\n      openAPIV3Schema: {type: object}\n",
    );
    std::fs::write(dir.path().join("things.yaml"), &unserved).unwrap();
    let out = dir.path().join("out");
    let (ok, stderr) =
        run(&["crd", "--crds", dir.path().join("things.yaml").to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(!ok);
    assert!(
        stderr.contains("no served CustomResourceDefinition versions in /") && stderr.contains("things.yaml\n"),
        "{stderr}"
    );
    assert!(
        stderr.contains("things.yaml: document 0: things.example.com has no served version: nothing generated for it"),
        "{stderr}"
    );
    assert!(!out.exists());
    // Beside a CRD that is served: generated, with the note.
    let served = with_schema("{type: object}").replace("things", "gadgets").replace("kind: Thing", "kind: Gadget");
    std::fs::write(dir.path().join("gadgets.yaml"), served).unwrap();
    let (ok, stderr) = run(&["crd", "--crds", dir.path().to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(ok, "{stderr}");
    assert!(
        stderr.contains("things.yaml: document 0: things.example.com has no served version: nothing generated for it"),
        "{stderr}"
    );
}

#[test]
fn names_that_would_collide_in_a_module_are_an_error() {
    // Group `x.clientset` is the module `clientset`, as the clients' is.
    let text = with_schema("{type: object}").replace("example.com", "x.clientset");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("things.yaml");
    std::fs::write(&file, text).unwrap();
    let out = dir.path().join("out");
    let (ok, stderr) = run(&["crd", "--crds", file.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(!ok);
    assert!(stderr.contains("two items of the crate root are both named clientset"), "{stderr}");
    assert!(!out.exists());
}
