//! Nothing from the input becomes code. Every text that reaches a header,
//! a doc comment, Cargo.toml, a file path or an identifier (group, version,
//! kind, plural, file and directory names, the `--specs` label, crate name
//! and paths, a cluster's `/version` and discovery keys) either is refused
//! with an error naming where it came from, or lands escaped: the
//! generated Rust parses to the same items, Cargo.toml to the same tables.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Text that, written raw into a line comment, would end it and define a
/// function; into a TOML string, end it and open a table; into a block or
/// HTML comment, close it.
const PAYLOAD: &str = "x */ --> \"\n[workspace]\npub fn injected() {}\n//";

fn run(args: &[&std::ffi::OsStr]) -> (bool, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_k8s-client-gen")).args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(!stderr.contains("panicked"), "{stderr}");
    (output.status.success(), stderr)
}

fn os(s: &str) -> &std::ffi::OsStr {
    std::ffi::OsStr::new(s)
}

fn crd(group: &str, kind: &str, plural: &str, version: &str, extra_names: &str) -> String {
    let q = |s: &str| serde_json::to_string(s).unwrap();
    format!(
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: {}\nspec:\n  group: {}\n  scope: Namespaced\n  names: {{kind: {}, plural: {}{extra_names}}}\n  versions:\n  - name: {}\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n        description: {}\n        properties:\n          spec: {{type: object, properties: {{a: {{type: string, description: {}}}}}}}\n",
        q(&format!("{plural}.{group}")),
        q(group),
        q(kind),
        q(plural),
        q(version),
        q(PAYLOAD),
        q(PAYLOAD),
    )
}

/// `crd` on one manifest holding `text` must fail naming `pointer`, and
/// write nothing.
fn refused(text: &str, pointer: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("things.yaml");
    std::fs::write(&file, text).unwrap();
    let out = dir.path().join("out");
    let (ok, stderr) = run(&[os("crd"), os("--crds"), file.as_os_str(), os("--out"), out.as_os_str()]);
    assert!(!ok, "must fail: {stderr}");
    assert!(stderr.contains(&format!("{}: document 0: {pointer}: ", file.display())), "{stderr}");
    assert!(!out.exists(), "nothing may be written on failure");
    // The offending text is quoted, escaped, on the error's one line.
    assert!(!stderr.contains("\npub fn injected"), "{stderr}");
    stderr
}

#[test]
fn a_version_that_is_no_dns_label_is_refused() {
    let e = refused(&crd("example.com", "Thing", "things", PAYLOAD, ""), "/spec/versions/0/name");
    assert!(e.contains("is not a DNS-1035 label"), "{e}");
    let e = refused(
        &crd("example.com", "Thing", "things", "v1). DO NOT EDIT.\npub fn injected() {}\n//", ""),
        "/spec/versions/0/name",
    );
    assert!(e.contains(r#"version "v1). DO NOT EDIT.\npub fn injected() {}\n//" is not a DNS-1035 label"#), "{e}");
}

#[test]
fn a_group_that_is_no_dns_subdomain_is_refused() {
    let e = refused(&crd(PAYLOAD, "Thing", "things", "v1", ""), "/spec/group");
    assert!(e.contains("is not a DNS-1123 subdomain with a dot"), "{e}");
    let e = refused(&crd("example", "Thing", "things", "v1", ""), "/spec/group");
    assert!(e.contains("should be a domain with at least one dot"), "{e}");
}

#[test]
fn kinds_and_list_kinds_that_are_no_kind_names_are_refused() {
    let e = refused(&crd("example.com", PAYLOAD, "things", "v1", ""), "/spec/names/kind");
    assert!(e.contains("may have mixed case, but should otherwise match"), "{e}");
    let e = refused(
        &crd("example.com", "Thing", "things", "v1", &format!(", listKind: {PAYLOAD:?}")),
        "/spec/names/listKind",
    );
    assert!(e.contains("is not a kind name"), "{e}");
    let e = refused(&crd("example.com", "Thing", "things", "v1", ", listKind: Thing"), "/spec/names/listKind");
    assert!(e.contains("kind and listKind may not be the same"), "{e}");
}

#[test]
fn plurals_singulars_short_names_and_categories_must_be_dns_labels() {
    let e = refused(&crd("example.com", "Thing", "Things", "v1", ""), "/spec/names/plural");
    assert!(e.contains("plural \"Things\" is not a DNS-1035 label"), "{e}");
    refused(&crd("example.com", "Thing", "things", "v1", ", singular: \"a b\""), "/spec/names/singular");
    refused(&crd("example.com", "Thing", "things", "v1", ", shortNames: [ok, \"not_ok\"]"), "/spec/names/shortNames/1");
    refused(&crd("example.com", "Thing", "things", "v1", ", categories: [\"*/\"]"), "/spec/names/categories/0");
}

/// Every file of a generated crate is harmless: the Rust parses and holds no
/// `injected` item, each mention of the payload is inside a comment or a
/// string literal (the JSON of a type's schema, escaped on one line), and
/// Cargo.toml, rustfmt.toml and the README's header are what they should be.
fn assert_harmless(out: &Path) {
    let mut files = Vec::new();
    collect(out, &mut files);
    assert!(files.iter().any(|f| f.ends_with("lib.rs")));
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        assert!(!text.contains('\r'), "{} holds a carriage return", file.display());
        match file.extension().and_then(|e| e.to_str()) {
            Some("rs") => {
                let parsed = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
                let injected = |i: &syn::Item| matches!(i, syn::Item::Fn(f) if f.sig.ident == "injected");
                assert!(!parsed.items.iter().any(injected), "{}", file.display());
                for line in text.lines().filter(|l| l.contains("injected")) {
                    let line = line.trim_start();
                    let in_string = line.starts_with('"') && line.trim_end().trim_end_matches(',').ends_with('"');
                    assert!(line.starts_with("//") || in_string, "{}: {line}", file.display());
                }
            }
            Some("toml") => {
                let doc: toml_edit::DocumentMut =
                    text.parse().unwrap_or_else(|e| panic!("{}: {e}\n{text}", file.display()));
                let keys: Vec<&str> = doc.iter().map(|(k, _)| k).collect();
                let expected: &[&str] = if file.ends_with("Cargo.toml") {
                    &["package", "lib", "features", "dependencies"]
                } else {
                    &["disable_all_formatting"]
                };
                assert_eq!(keys, expected, "{}", file.display());
                assert!(text.starts_with("# @generated by k8s-client-gen from "), "{text}");
            }
            _ => {
                let first = text.lines().next().unwrap();
                assert!(first.starts_with("<!--") && first.ends_with("-->"), "{first}");
                assert_eq!(first.matches("-->").count(), 1, "{first}");
            }
        }
    }
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() { collect(&path, out) } else { out.push(path) }
    }
}

#[test]
fn file_and_directory_names_land_escaped_in_every_header() {
    let dir = tempfile::tempdir().unwrap();
    // The input directory names the crate in Cargo.toml, README and lib.rs;
    // the one below it each type's header. A name holds no `/`, but a
    // label ending in `*` before one makes `*/`.
    let input = dir.path().join(PAYLOAD.replace('/', "|"));
    let nested = input.join(format!("{}*", PAYLOAD.replace('/', "|")));
    std::fs::create_dir_all(&nested).unwrap();
    std::fs::write(nested.join("things.yaml"), crd("example.com", "Thing", "things", "v1", "")).unwrap();
    let out = dir.path().join("out");
    let (ok, stderr) = run(&[os("crd"), os("--crds"), input.as_os_str(), os("--out"), out.as_os_str()]);
    assert!(ok, "{stderr}");
    assert_harmless(&out);
    let thing = std::fs::read_to_string(out.join("src/com/example/v1/thing.rs")).unwrap();
    let header = thing.lines().next().unwrap();
    assert!(header.starts_with("// @generated by k8s-client-gen from "), "{header}");
    assert!(header.contains("\\u{a}pub fn injected() {}\\u{a}"), "{header}");
    assert!(header.contains("*\\/things.yaml (document 0, example.com/v1). DO NOT EDIT."), "{header}");
    // Descriptions are doc comments, line by line.
    assert!(thing.contains("/// pub fn injected() {}\n"), "{thing}");
    let cargo = std::fs::read_to_string(out.join("Cargo.toml")).unwrap();
    let doc: toml_edit::DocumentMut = cargo.parse().unwrap();
    let description = doc["package"]["description"].as_str().unwrap();
    assert!(description.ends_with(&PAYLOAD.replace('/', "|")), "{description}");
}

#[test]
fn a_specs_directory_label_lands_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let specs = dir.path().join(PAYLOAD.replace('/', "|")).join("1.35\r*");
    std::fs::create_dir_all(specs.join("api")).unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/small/api/v1.json");
    std::fs::copy(fixture, specs.join("api/v1.json")).unwrap();
    let out = dir.path().join("out");
    let (ok, stderr) = run(&[os("--specs"), specs.as_os_str(), os("--out"), out.as_os_str()]);
    assert!(ok, "{stderr}");
    assert_harmless(&out);
    let lib = std::fs::read_to_string(out.join("src/lib.rs")).unwrap();
    assert!(lib.contains("//! Kubernetes API types and clients generated from `x *| --> \"\n//! [workspace]\n//! pub fn injected() {}\n//! ||/1.35\n//! *`. See the crate README."), "{lib}");
    let rustfmt = std::fs::read_to_string(out.join("rustfmt.toml")).unwrap();
    assert!(rustfmt.starts_with("# @generated by k8s-client-gen from x *| --\\> \"\\u{a}[workspace]\\u{a}pub fn injected() {}\\u{a}||/1.35\\u{d}*. DO NOT EDIT.\n"), "{rustfmt}");
}

#[test]
fn crate_names_and_paths_cannot_break_out_of_cargo_toml() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("things.yaml");
    std::fs::write(&file, crd("example.com", "Thing", "things", "v1", "")).unwrap();
    let out = dir.path().join("out");
    let base = [os("crd"), os("--crds"), file.as_os_str(), os("--out"), out.as_os_str()];
    let mut args = base.to_vec();
    args.extend([os("--crate-name"), os("x\"\n[workspace]")]);
    let (ok, stderr) = run(&args);
    assert!(!ok && stderr.contains("crate name \"x\\\"\\n[workspace]\" is not a package name"), "{stderr}");
    assert!(!out.exists());

    let mut args = base.to_vec();
    args.extend([os("--runtime-path"), os(PAYLOAD), os("--client-path"), os("a'b\"c\\")]);
    let (ok, stderr) = run(&args);
    assert!(ok, "{stderr}");
    assert_harmless(&out);
    let doc: toml_edit::DocumentMut = std::fs::read_to_string(out.join("Cargo.toml")).unwrap().parse().unwrap();
    assert_eq!(doc["dependencies"]["k8s-client-runtime"]["path"].as_str(), Some(PAYLOAD));
    assert_eq!(doc["dependencies"]["k8s-client"]["path"].as_str(), Some("a'b\"c\\"));
}

fn spec_dir(rel: &str, doc: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(rel);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, doc).unwrap();
    (dir, file)
}

/// `--specs` on a directory with one document must fail naming the file
/// and `needle`, and write nothing.
fn specs_refused(rel: &str, doc: &str, needle: &str) {
    let (dir, file) = spec_dir(rel, doc);
    let out = dir.path().join("out");
    let (ok, stderr) = run(&[os("--specs"), dir.path().as_os_str(), os("--out"), out.as_os_str()]);
    assert!(!ok, "must fail: {stderr}");
    assert!(stderr.contains(&file.display().to_string()), "{stderr}");
    assert!(stderr.contains(needle), "{needle} not in {stderr}");
    assert!(!out.exists());
}

#[test]
fn openapi_documents_with_no_valid_group_version_kind_are_refused() {
    let schema = |gvk: &str| {
        format!(
            r#"{{"openapi":"3.0.0","paths":{{}},"components":{{"schemas":{{"io.k8s.api.core.v1.Thing":{{"type":"object","properties":{{"apiVersion":{{"type":"string"}},"kind":{{"type":"string"}}}},"x-kubernetes-group-version-kind":[{gvk}]}}}}}}}}"#
        )
    };
    let pointer = "/components/schemas/io.k8s.api.core.v1.Thing/x-kubernetes-group-version-kind: ";
    specs_refused(
        "api/v1.json",
        &schema(r#"{"group":"","version":"v1","kind":"Thing\n//"}"#),
        &format!("{pointer}kind \"Thing\\n//\" is not a kind name"),
    );
    specs_refused(
        "api/v1.json",
        &schema(r#"{"group":"Bad Group","version":"v1","kind":"Thing"}"#),
        &format!("{pointer}group \"Bad Group\" is not a DNS-1123 subdomain"),
    );
    specs_refused(
        "api/v1.json",
        &schema(r#"{"group":"","version":"v1 */","kind":"Thing"}"#),
        &format!("{pointer}version \"v1 */\" is not a DNS-1035 label"),
    );
    // The paths name a group and version too.
    specs_refused(
        "api/v1.json",
        r#"{"openapi":"3.0.0","paths":{"/apis/Evil Group/v1/things":{}},"components":{"schemas":{}}}"#,
        "/paths/~1apis~1Evil Group~1v1~1things: group \"Evil Group\" is not a DNS-1123 subdomain",
    );
    // And so does the layout of a specs directory.
    specs_refused(
        "apis/x\npub fn injected() {}\n/v1.json",
        r#"{"openapi":"3.0.0","paths":{},"components":{"schemas":{}}}"#,
        "not a document of a group/version (apis/<group>/<version>.json): group \"x\\npub fn injected() {}\\n\"",
    );
}

/// A loopback HTTP server answering `GET <path>` with `answers[path]` (as
/// JSON) and 404 otherwise: a cluster that sends what no apiserver does.
fn canned_cluster(answers: Vec<(&'static str, String)>) -> (tempfile::TempDir, PathBuf) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let answers = answers.clone();
            std::thread::spawn(move || {
                let mut writer = stream.try_clone().unwrap();
                let mut reader = BufReader::new(stream);
                loop {
                    let mut request = String::new();
                    if reader.read_line(&mut request).unwrap_or(0) == 0 {
                        return;
                    }
                    let mut header = String::new();
                    while reader.read_line(&mut header).unwrap_or(0) > 2 {
                        header.clear();
                    }
                    let path = request.split_whitespace().nth(1).unwrap_or_default();
                    let path = path.split('?').next().unwrap_or_default();
                    let (status, body) = match answers.iter().find(|(p, _)| *p == path) {
                        Some((_, body)) => ("200 OK", body.clone()),
                        None => ("404 Not Found", "{}".to_owned()),
                    };
                    let response = format!(
                        "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                        body.len()
                    );
                    if writer.write_all(response.as_bytes()).is_err() {
                        return;
                    }
                }
            });
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {{server: 'http://127.0.0.1:{port}'}}\nusers:\n- name: u\n  user: {{token: t}}\ncontexts:\n- name: x\n  context: {{cluster: c, user: u}}\ncurrent-context: x\n"
        ),
    )
    .unwrap();
    (dir, kubeconfig)
}

/// `cluster` against `answers` must fail naming `url_path` and `needle`.
fn cluster_refused(answers: Vec<(&'static str, String)>, url_path: &str, needle: &str) {
    let (dir, kubeconfig) = canned_cluster(answers);
    let out = dir.path().join("out");
    let (ok, stderr) = run(&[os("cluster"), os("--kubeconfig"), kubeconfig.as_os_str(), os("--out"), out.as_os_str()]);
    assert!(!ok, "must fail: {stderr}");
    assert!(stderr.contains("http://127.0.0.1:") && stderr.contains(&format!("{url_path}: ")), "{stderr}");
    assert!(stderr.contains(needle), "{needle} not in {stderr}");
    assert!(!stderr.contains("\npub fn injected"), "{stderr}");
    assert!(!out.exists());
}

fn listing(key: &str, url: &str) -> String {
    serde_json::json!({"paths": {key: {"serverRelativeURL": url}}}).to_string()
}

#[test]
fn a_cluster_version_that_is_no_number_is_refused() {
    let version = serde_json::json!({"major": "1). DO NOT EDIT.\npub fn injected() {}\n//", "minor": "35"}).to_string();
    cluster_refused(
        vec![("/openapi/v3", listing("api/v1", "/openapi/v3/api/v1?hash=1")), ("/version", version)],
        "/version",
        "are not a version number",
    );
}

#[test]
fn cluster_discovery_keys_that_are_no_group_version_are_refused() {
    let version = serde_json::json!({"major": "1", "minor": "35"}).to_string();
    let key = "apis/x\npub fn injected() {}\n/v1";
    cluster_refused(
        vec![("/openapi/v3", listing(key, "/openapi/v3/apis/x/v1")), ("/version", version.clone())],
        "/openapi/v3",
        "listed document \"apis/x\\npub fn injected() {}\\n/v1\": group \"x\\npub fn injected() {}\\n\"",
    );
    // A listed document is fetched from where it is listed, nowhere else.
    cluster_refused(
        vec![("/openapi/v3", listing("apis/apps/v1", "//elsewhere.example/apis/apps/v1")), ("/version", version)],
        "/openapi/v3",
        "the URL \"//elsewhere.example/apis/apps/v1\" of \"apis/apps/v1\" is not /openapi/v3/apis/apps/v1",
    );
}

#[test]
fn a_cluster_document_with_a_bad_kind_is_refused() {
    let version = serde_json::json!({"major": "1", "minor": "35"}).to_string();
    let doc = serde_json::json!({
        "openapi": "3.0.0",
        "paths": {},
        "components": {"schemas": {"com.example.v1.Thing": {
            "type": "object",
            "properties": {"apiVersion": {"type": "string"}, "kind": {"type": "string"}},
            "x-kubernetes-group-version-kind": [{"group": "example.com", "version": "v1", "kind": "Thing\n//"}],
        }}},
    })
    .to_string();
    cluster_refused(
        vec![
            ("/openapi/v3", listing("apis/example.com/v1", "/openapi/v3/apis/example.com/v1?hash=1")),
            ("/version", version),
            ("/openapi/v3/apis/example.com/v1", doc),
        ],
        "/openapi/v3/apis/example.com/v1",
        "/components/schemas/com.example.v1.Thing/x-kubernetes-group-version-kind: kind \"Thing\\n//\" is not a kind name",
    );
}
