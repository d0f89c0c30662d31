//! CRD manifests read from text (`Manifests::add_text`, what the fuzzer and
//! other tools without files use) give what reading the same file gives,
//! and errors name the path they were given.

use std::path::{Path, PathBuf};

use k8s_client_gen::Error;
use k8s_client_gen::crd::{self, Manifests};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/crds")
}

#[test]
fn text_reads_as_its_file_does() {
    let mut files: Vec<PathBuf> =
        std::fs::read_dir(fixtures()).unwrap().map(|e| e.unwrap().path()).filter(|p| p.is_file()).collect();
    files.sort();
    assert!(!files.is_empty());
    for file in files {
        let from_file = crd::load(std::slice::from_ref(&file)).unwrap();
        let label = crd::display_path(&file);
        let mut from_text = Manifests::default();
        from_text.add_text(&std::fs::read_to_string(&file).unwrap(), &file, &label).unwrap();
        assert!(!from_text.documents.is_empty(), "{}", file.display());
        assert_eq!(format!("{from_file:?}"), format!("{from_text:?}"), "{}", file.display());
    }
}

#[test]
fn text_adds_to_what_was_read() {
    let file = fixtures().join("06-open.yaml");
    let text = std::fs::read_to_string(&file).unwrap();
    let mut manifests = Manifests::default();
    manifests.add_text(&text, &file, "a.yaml").unwrap();
    let one = manifests.documents.len();
    manifests.add_text("apiVersion: v1\nkind: ConfigMap\n", Path::new("b.yaml"), "b.yaml").unwrap();
    assert_eq!(manifests.documents.len(), one);
    assert_eq!(manifests.notes, [r#"b.yaml: document 0: skipped ConfigMap "", not a CustomResourceDefinition"#]);
}

#[test]
fn errors_name_the_path_and_document() {
    let mut manifests = Manifests::default();
    let err = manifests
        .add_text("apiVersion: v1\nkind: ConfigMap\n---\nkind: [unclosed\n", Path::new("inline/things.yaml"), "things")
        .unwrap_err();
    assert!(matches!(&err, Error::Manifest { document: 1, .. }), "{err:?}");
    let message = err.to_string();
    assert!(message.starts_with("inline/things.yaml: document 1: invalid YAML"), "{message}");
}
