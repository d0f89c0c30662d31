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

#[test]
fn kind_that_is_no_identifier() {
    let text =
        spec("  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema: {type: object}\n")
            .replace("kind: Thing", "kind: 3-Thing");
    let e = crd_error(&text);
    assert!(e.contains("/spec/names/kind"), "{e}");
    assert!(e.contains("not a Rust identifier"), "{e}");
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
    assert!(!out.exists());
    assert!(!Path::new(&out).exists());
}
