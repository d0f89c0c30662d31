//! `k8s-client-gen cluster` against the real apiserver: with the shared
//! CRDs (Gateway API, cert-manager) installed, generation from the
//! cluster's `/openapi/v3` gives a crate that compiles, the same types as
//! generation from the manifests, and, for the built-in groups, exactly the
//! committed `generated/` crate.

mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use k8s_client_gen::cluster::Source;
use k8s_client_gen::emit::{Options, Output};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The CRD sets of `../shared/crds`; a missing directory fails the test.
fn shared_crd_sets() -> Vec<PathBuf> {
    let dir = workspace().join("../shared/crds");
    let mut sets: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e} (the shared CRDs are needed)", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    sets.sort();
    assert!(!sets.is_empty(), "no CRD sets in {}", dir.display());
    sets
}

fn manifests(sets: &[PathBuf]) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for set in sets {
        for entry in std::fs::read_dir(set).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "yaml") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

fn options(name: &str) -> Options {
    Options {
        crate_name: name.into(),
        crate_version: None,
        runtime_path: Some(workspace().join("runtime").display().to_string()),
        client_path: Some(workspace().join("generated").display().to_string()),
        group_names: Default::default(),
        standalone: true,
        source_label: String::new(),
        sources_in_label: false,
    }
}

fn source(groups: &[&str]) -> Source {
    Source {
        kubeconfig: Some(support::env().kubeconfig_path().to_owned()),
        context: None,
        groups: groups.iter().map(|g| (*g).to_owned()).collect(),
    }
}

/// The Rust of each file without comments: the types, not their docs.
fn code_only(output: &Output) -> BTreeMap<PathBuf, String> {
    output
        .files
        .iter()
        .filter(|(p, _)| p.extension().is_some_and(|e| e == "rs"))
        .map(|(p, text)| {
            let code: Vec<&str> = text.lines().filter(|l| !l.trim_start().starts_with("//")).collect();
            (p.clone(), code.join("\n"))
        })
        .collect()
}

/// Builds a generated crate with the workspace's lock file, offline.
fn cargo_build(dir: &Path) {
    std::fs::copy(workspace().join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = std::process::Command::new(cargo)
        .args(["build", "--quiet", "--offline"])
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", workspace().join("target"))
        .status()
        .unwrap();
    assert!(status.success(), "the crate generated from the cluster does not build: {}", dir.display());
}

#[tokio::test(flavor = "multi_thread")]
async fn custom_groups_from_the_cluster_compile_and_equal_the_manifests() {
    let sets = shared_crd_sets();
    support::install_crds(&manifests(&sets)).await;
    let groups = ["gateway.networking.k8s.io", "cert-manager.io", "acme.cert-manager.io"];

    let from_manifests =
        k8s_client_gen::generate_from_crds(&sets, &options("cluster-crds")).expect("generation from the manifests");
    // The apiserver publishes a CRD's document shortly after it is
    // Established: wait until every served version is there.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let from_cluster = loop {
        let generated = tokio::task::spawn_blocking(move || {
            k8s_client_gen::generate_from_cluster(&source(&groups), options("cluster-crds"))
        })
        .await
        .unwrap()
        .expect("generation from the cluster");
        if generated.api.resources.len() >= from_manifests.api.resources.len() {
            break generated;
        }
        assert!(std::time::Instant::now() < deadline, "the cluster did not publish every CRD within 60 s");
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    };

    // One road to Rust: the same files, the same code; only docs differ
    // (the manifests say more: printer columns, short names).
    let (cluster_code, manifest_code) = (code_only(&from_cluster.output), code_only(&from_manifests.output));
    assert_eq!(cluster_code.keys().collect::<Vec<_>>(), manifest_code.keys().collect::<Vec<_>>());
    for (path, code) in &cluster_code {
        assert!(*code == manifest_code[path], "{} differs between cluster and manifests", path.display());
    }

    let out = workspace().join("target/cluster-gen/crds");
    k8s_client_gen::emit::write(&from_cluster.output, &out).unwrap();
    tokio::task::spawn_blocking(move || cargo_build(&out)).await.unwrap();
}

/// The committed crate's types, generated from the cluster instead of the
/// captured specs: the same code, but for the protobuf codecs, which come
/// from the `.proto` files a cluster does not serve. So the cluster's
/// output is compared with the committed specs' without their `proto/`,
/// and every file is one the committed crate has.
#[tokio::test(flavor = "multi_thread")]
async fn built_in_groups_from_the_cluster_equal_the_committed_crate() {
    let opts = || {
        let mut opts = options("k8s-client");
        opts.runtime_path = Some("../runtime".into());
        opts.standalone = false;
        opts
    };
    let generated = tokio::task::spawn_blocking(move || k8s_client_gen::generate_from_cluster(&source(&[]), opts()))
        .await
        .unwrap()
        .expect("generation from the cluster");
    // Named as the committed specs are: the files' headers name their source.
    let temp = tempfile::tempdir().unwrap();
    // The pinned release, which the testenv serves: the newest captured.
    let release = std::fs::read_dir(workspace().join("specs/kubernetes"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .max_by_key(|name| name.split('.').map(|n| n.parse::<u32>().unwrap_or(0)).collect::<Vec<_>>())
        .expect("a captured release");
    let specs_path = temp.path().join("kubernetes").join(&release);
    std::fs::create_dir_all(&specs_path).unwrap();
    let committed_specs = workspace().join("specs/kubernetes").join(&release);
    for entry in ["api", "apis", "VERSION"] {
        copy_tree(&committed_specs.join(entry), &specs_path.join(entry));
    }
    let from_specs = tokio::task::spawn_blocking(move || {
        let mut opts = opts();
        opts.source_label = k8s_client_gen::source_label(&specs_path);
        opts.sources_in_label = true;
        k8s_client_gen::generate_from_dir(&specs_path, &opts)
    })
    .await
    .unwrap()
    .expect("generation from the committed specs without proto/");
    let committed = workspace().join("generated");
    let mut compared = 0;
    for (rel, text) in &generated.output.files {
        let in_builtin_module =
            ["src/api/", "src/apimachinery/", "src/apiextensions_apiserver/", "src/kube_aggregator/"]
                .iter()
                .any(|m| rel.to_string_lossy().starts_with(m));
        if !in_builtin_module {
            continue;
        }
        assert!(committed.join(rel).is_file(), "{} generated from the cluster, not committed", rel.display());
        let expected = &from_specs.output.files[rel];
        assert!(text == expected, "{} differs from the committed specs' output", rel.display());
        compared += 1;
    }
    // Every committed type file came from the cluster too.
    let committed_types = count_rs(&committed.join("src/api"))
        + count_rs(&committed.join("src/apimachinery"))
        + count_rs(&committed.join("src/apiextensions_apiserver"))
        + count_rs(&committed.join("src/kube_aggregator"));
    assert_eq!(compared, committed_types, "files compared vs committed type files");
}

fn copy_tree(from: &Path, to: &Path) {
    if from.is_dir() {
        std::fs::create_dir_all(to).unwrap();
        for entry in std::fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            copy_tree(&entry.path(), &to.join(entry.file_name()));
        }
    } else {
        std::fs::copy(from, to).unwrap();
    }
}

fn count_rs(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| if p.is_dir() { count_rs(&p) } else { usize::from(p.extension().is_some_and(|e| e == "rs")) })
        .sum()
}

/// A user the cluster does not let read `/openapi/v3`: a 403, named with its URL.
#[tokio::test(flavor = "multi_thread")]
async fn forbidden_openapi_is_an_error_naming_the_url() {
    use k8s_client_runtime::rest::{GetOptions, UpdateOptions};
    // Authenticated users read the OpenAPI documents through the
    // `system:discovery` binding; take them out of it (admin is a member of
    // system:masters and is not affected), and put them back after.
    let bindings = support::clientset().rbac_v1().cluster_role_bindings();
    let original = bindings.get("system:discovery", &GetOptions::default()).await.unwrap();
    let mut restricted = original.clone();
    restricted.subjects = Some(Default::default());
    bindings.update(&restricted, &UpdateOptions::default()).await.unwrap();

    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let kubeconfig = support::env().kubeconfig_path().to_owned();
    let result = tokio::task::spawn_blocking(move || {
        let source = Source { kubeconfig: Some(kubeconfig), context: Some("unprivileged".into()), groups: Vec::new() };
        k8s_client_gen::generate_from_cluster(&source, options("x"))
    })
    .await
    .unwrap();

    let mut back = bindings.get("system:discovery", &GetOptions::default()).await.unwrap();
    back.subjects = original.subjects.clone();
    bindings.update(&back, &UpdateOptions::default()).await.unwrap();

    let err = result.expect_err("a 403 must fail").to_string();
    assert!(err.contains("/openapi/v3:"), "{err}");
    assert!(err.contains("forbidden"), "{err}");
    assert!(!out.exists());
}
