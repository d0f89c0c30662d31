//! What the golden tests share: comparing a generated crate with its
//! committed copy, and reading one file of it.

use std::path::{Path, PathBuf};

use k8s_client_gen::emit::Output;

/// `output` must be exactly the files under `golden`. With `UPDATE_GOLDEN`
/// set, `golden` is rewritten first (then review the diff).
pub fn assert_golden(output: &Output, golden: &Path) {
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        let _ = std::fs::remove_dir_all(golden);
        k8s_client_gen::emit::write(output, golden).unwrap();
    }
    let mut on_disk = Vec::new();
    collect(golden, golden, &mut on_disk);
    on_disk.sort();
    let generated: Vec<PathBuf> = output.files.keys().cloned().collect();
    assert_eq!(generated, on_disk, "set of generated files differs from {}", golden.display());
    for (rel, text) in &output.files {
        let expected = std::fs::read_to_string(golden.join(rel)).unwrap();
        assert!(
            expected == *text,
            "{} differs from its golden copy; run with UPDATE_GOLDEN=1 and review",
            rel.display()
        );
    }
}

fn collect(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        if path.is_dir() {
            collect(root, &path, out);
        } else if path.file_name().is_some_and(|n| n == "Cargo.lock") {
            // Left by building the golden crate (`make check-golden`); not generated.
        } else {
            out.push(path.strip_prefix(root).unwrap().to_owned());
        }
    }
}

/// One generated file's text.
pub fn file(output: &Output, rel: &str) -> String {
    output.files.get(Path::new(rel)).unwrap_or_else(|| panic!("{rel} not generated")).clone()
}

/// The arguments of the `impl_resource!` call in a kind's file, as one
/// line (the formatter breaks it where it fits): `Kind, "group", …`.
pub fn resource_args(text: &str) -> String {
    let start = text.find("::k8s_client_runtime::impl_resource!(").expect("an impl_resource! call") + 37;
    let end = start + text[start..].find(");").expect("the end of impl_resource!");
    text[start..end].split_whitespace().collect::<Vec<_>>().join(" ")
}
