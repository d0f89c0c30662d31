//! Bad input: malformed JSON, a `$ref` to nothing, an unknown schema
//! type. Each must fail with an error naming the file and the JSON pointer,
//! exit non-zero from the CLI, and leave no output behind.

use std::path::{Path, PathBuf};
use std::process::Command;

fn spec_dir(doc: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("api")).unwrap();
    let file = dir.path().join("api/v1.json");
    std::fs::write(&file, doc).unwrap();
    (dir, file)
}

fn doc_with_schemas(schemas: &str) -> String {
    format!(
        r#"{{"openapi":"3.0.0","info":{{"title":"t","version":"1"}},"paths":{{}},"components":{{"schemas":{schemas}}}}}"#
    )
}

fn run_cli(specs: &Path, out: &Path) -> (bool, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_k8s-client-gen"))
        .arg("--specs")
        .arg(specs)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    (output.status.success(), String::from_utf8_lossy(&output.stderr).into_owned())
}

#[test]
fn malformed_json_names_file_and_position() {
    let (dir, file) = spec_dir(r#"{"openapi": "3.0.0", "paths": {"#);
    let out = dir.path().join("out");
    let (ok, stderr) = run_cli(dir.path(), &out);
    assert!(!ok);
    assert!(stderr.contains(&file.display().to_string()), "{stderr}");
    assert!(stderr.contains("invalid JSON"), "{stderr}");
    // The position is the parser's, printed after the generator's own layer,
    // on the one line of the error.
    let line = stderr.lines().find(|l| l.starts_with("error: ")).unwrap_or_else(|| panic!("{stderr}"));
    assert!(line.contains(": invalid JSON at /paths/?: EOF while parsing an object at line 1 column 31"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(!out.exists(), "no output may be written on failure");
}

#[test]
fn wrongly_typed_node_names_its_pointer() {
    let doc = doc_with_schemas(r#"{"io.k8s.api.core.v1.X":{"type":"object","required":"name"}}"#);
    let (dir, _) = spec_dir(&doc);
    let err = k8s_client_gen::spec::load_dir(dir.path()).expect_err("must fail");
    let text = err.to_string();
    assert!(text.contains("/components/schemas/io.k8s.api.core.v1.X"), "{text}");
}

#[test]
fn dangling_ref_names_file_and_pointer() {
    let doc = doc_with_schemas(
        r##"{"io.k8s.api.core.v1.X":{"type":"object","properties":{"a~b/c":{"$ref":"#/components/schemas/io.k8s.api.core.v1.Missing"}}}}"##,
    );
    let (dir, file) = spec_dir(&doc);
    let out = dir.path().join("out");
    let (ok, stderr) = run_cli(dir.path(), &out);
    assert!(!ok);
    assert!(stderr.contains(&file.display().to_string()), "{stderr}");
    // The property name is escaped as RFC 6901 requires.
    assert!(stderr.contains("/components/schemas/io.k8s.api.core.v1.X/properties/a~0b~1c"), "{stderr}");
    assert!(stderr.contains("does not exist"), "{stderr}");
    assert!(!out.exists());
}

#[test]
fn unsupported_shape_names_pointer() {
    let doc = doc_with_schemas(r#"{"io.k8s.api.core.v1.X":{"type":"object","properties":{"a":{"type":"tuple"}}}}"#);
    let (dir, _) = spec_dir(&doc);
    let docs = k8s_client_gen::spec::load_dir(dir.path()).unwrap();
    let text = k8s_client_gen::spec::build(&docs).expect_err("must fail").to_string();
    assert!(text.contains("/components/schemas/io.k8s.api.core.v1.X/properties/a"), "{text}");
    assert!(text.contains("unsupported type \"tuple\""), "{text}");
}

#[test]
fn failure_leaves_existing_output_untouched() {
    let (dir, _) = spec_dir("not json");
    let out = dir.path().join("out");
    std::fs::create_dir_all(out.join("src")).unwrap();
    std::fs::write(out.join("src/lib.rs"), "// previous output\n").unwrap();
    let (ok, _) = run_cli(dir.path(), &out);
    assert!(!ok);
    assert_eq!(std::fs::read_to_string(out.join("src/lib.rs")).unwrap(), "// previous output\n");
}

#[test]
fn empty_directory_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let (ok, stderr) = run_cli(dir.path(), &dir.path().join("out"));
    assert!(!ok);
    assert!(stderr.contains("no OpenAPI documents found"), "{stderr}");
}

#[test]
fn type_name_that_is_no_identifier_is_an_error_not_a_panic() {
    let doc =
        doc_with_schemas(r#"{"io.k8s.api.core.v1.3Thing":{"type":"object","properties":{"a":{"type":"string"}}}}"#);
    let (dir, file) = spec_dir(&doc);
    let out = dir.path().join("out");
    let (ok, stderr) = run_cli(dir.path(), &out);
    assert!(!ok);
    assert!(stderr.contains(&file.display().to_string()), "{stderr}");
    assert!(stderr.contains("/components/schemas/io.k8s.api.core.v1.3Thing"), "{stderr}");
    assert!(stderr.contains("not a Rust identifier"), "{stderr}");
    assert!(!out.exists());
}
