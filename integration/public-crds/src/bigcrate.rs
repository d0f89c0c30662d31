//! One crate holding every operator's accepted CRDs at once, built with
//! `cargo build`.
//!
//! A custom group is named by its whole name, so operators' group/versions
//! never clash with each other's or with the built-in crate's, and nothing
//! is left out for its name. The one thing [`select`] drops is a CRD whose
//! `metadata.name` an earlier operator of the corpus already ships (Gateway
//! API's CRDs come with more than one operator): a cluster holds a CRD
//! once, so the crate takes the first copy and the summary names the
//! others. Should the generator still refuse the whole set, the run fails
//! with its error; the crate never leaves an operator out to get by.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::corpus::{Body, Crd};

/// Writing the crate's input or building it.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file cannot be copied, or cargo cannot be started.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// Why it failed.
        #[source]
        source: std::io::Error,
    },
}

/// A CRD left out of the crate because an earlier operator ships one of
/// the same name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Duplicate {
    /// The CRD's `metadata.name`.
    pub name: String,
    /// Where the copy left out ships.
    pub origin: String,
    /// Where the copy in the crate ships.
    pub kept: String,
    /// Whether both copies have the same `spec` (else they are different
    /// releases of the CRD).
    pub same_spec: bool,
}

/// The CRDs (in the given order) the crate takes: the first of each
/// `metadata.name` across operators, and every later one from another
/// operator named as a [`Duplicate`]. One operator shipping a name twice
/// keeps both: that is the generator's error to give ("defined twice").
pub fn select<'a>(crds: &[&'a Crd]) -> (Vec<&'a Crd>, Vec<Duplicate>) {
    let mut first: BTreeMap<&str, &Crd> = BTreeMap::new();
    let (mut taken, mut duplicates) = (Vec::new(), Vec::new());
    for &crd in crds {
        match first.get(crd.name.as_str()) {
            Some(kept) if kept.operator != crd.operator => duplicates.push(Duplicate {
                name: crd.name.clone(),
                origin: crd.origin.clone(),
                kept: kept.origin.clone(),
                same_spec: spec(kept).is_some() && spec(kept) == spec(crd),
            }),
            Some(_) => taken.push(crd),
            None => {
                first.insert(&crd.name, crd);
                taken.push(crd);
            }
        }
    }
    (taken, duplicates)
}

fn spec(crd: &Crd) -> Option<&serde_json::Value> {
    match &crd.body {
        Body::Object(doc) => doc.get("spec"),
        Body::Unreadable { .. } => None,
    }
}

/// Copies the per-CRD files of `crds` (as [`crate::corpus::write_alone`]
/// wrote them below `from`) to `to`, one directory per operator, replacing
/// whatever `to` held: the generator's one input for the crate.
pub fn write_input(crds: &[&Crd], from: &Path, to: &Path) -> Result<(), Error> {
    let io = |what: String| move |source| Error::Io { what, source };
    if to.exists() {
        std::fs::remove_dir_all(to).map_err(io(format!("removing {}", to.display())))?;
    }
    for crd in crds {
        let (source, target) = (crd.file_in(from), crd.file_in(to));
        if let Some(dir) = target.parent() {
            std::fs::create_dir_all(dir).map_err(io(format!("creating {}", dir.display())))?;
        }
        std::fs::copy(&source, &target).map_err(io(format!("copying {} to {}", source.display(), target.display())))?;
    }
    Ok(())
}

/// What `cargo build` of a crate gave.
#[derive(Debug)]
pub struct Build {
    /// Whether it built.
    pub ok: bool,
    /// Wall time of the build.
    pub time: Duration,
    /// The compiler's errors (the first lines), when it did not build.
    pub errors: String,
}

/// Makes `dir` the root of a workspace of `members` (directories below it)
/// that builds with the workspace's `lockfile`, so offline with the
/// workspace's versions. Members of one workspace share their build
/// artifacts: a path package's artifacts are named after its path from the
/// workspace root, so the program beside the built-in crate reuses the
/// many-operator crate's build only when both have one root.
pub fn write_workspace(dir: &Path, members: &[&str], lockfile: &Path) -> Result<(), Error> {
    let members: Vec<String> = members.iter().map(|m| format!("{m:?}")).collect();
    let manifest = format!(
        "# Written by check-public-crds: the many-operator crate and the program\n\
         # using it beside the built-in crate, sharing one build.\n\
         [workspace]\nmembers = [{}]\nresolver = \"3\"\n",
        members.join(", ")
    );
    let path = dir.join("Cargo.toml");
    std::fs::write(&path, manifest)
        .map_err(|source| Error::Io { what: format!("writing {}", path.display()), source })?;
    std::fs::copy(lockfile, dir.join("Cargo.lock"))
        .map_err(|source| Error::Io { what: format!("copying {}", lockfile.display()), source })?;
    Ok(())
}

/// Builds the workspace member in `dir` (see [`write_workspace`]) into
/// `target_dir`, with `features` on (`k8s-client/networking`: the
/// side-by-side program's features of the built-in crate, so that the
/// program's build finds every artifact this one made).
pub fn build(dir: &Path, target_dir: &Path, features: &[String]) -> Result<Build, Error> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    command.args(["build", "--quiet", "--offline", "--message-format", "short"]);
    if !features.is_empty() {
        command.arg("--features").arg(features.join(","));
    }
    let start = Instant::now();
    let output = command
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", target_dir)
        // Incremental state of a crate this size is gigabytes of disk and
        // bookkeeping time for a build that a generator change redoes whole.
        .env("CARGO_INCREMENTAL", "0")
        .output()
        .map_err(|source| Error::Io { what: "starting cargo".into(), source })?;
    let time = start.elapsed();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let errors = stderr.lines().filter(|l| l.contains("error")).take(40).collect::<Vec<_>>().join("\n");
    Ok(Build { ok: output.status.success(), time, errors })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn crd(operator: &str, name: &str, spec: serde_json::Value) -> Crd {
        let stem = name.replace('.', "_");
        Crd {
            operator: operator.into(),
            origin: format!("{operator}/{stem}.yaml"),
            stem,
            name: name.into(),
            group: name.split_once('.').map(|(_, g)| g.to_owned()).unwrap_or_default(),
            kind: "Thing".into(),
            served: vec!["v1".into()],
            body: Body::Object(json!({ "metadata": { "name": name }, "spec": spec })),
        }
    }

    #[test]
    fn a_crd_another_operator_already_ships_is_left_out_with_the_kept_copy_named() {
        let gateway = crd("gateway-api", "gateways.gateway.networking.k8s.io", json!({ "v": 1 }));
        let istio = crd("istio", "virtualservices.networking.istio.io", json!({}));
        let again = crd("istio", "gateways.gateway.networking.k8s.io", json!({ "v": 1 }));
        let older = crd("knative", "gateways.gateway.networking.k8s.io", json!({ "v": 0 }));
        let (taken, duplicates) = select(&[&gateway, &istio, &again, &older]);
        let taken: Vec<&str> = taken.iter().map(|c| c.origin.as_str()).collect();
        assert_eq!(taken, [gateway.origin.as_str(), istio.origin.as_str()]);
        assert_eq!(
            duplicates,
            [
                Duplicate {
                    name: again.name.clone(),
                    origin: again.origin.clone(),
                    kept: gateway.origin.clone(),
                    same_spec: true
                },
                Duplicate {
                    name: older.name.clone(),
                    origin: older.origin.clone(),
                    kept: gateway.origin.clone(),
                    same_spec: false
                },
            ]
        );
    }

    #[test]
    fn one_operator_shipping_a_name_twice_keeps_both_for_the_generator_to_refuse() {
        let a = crd("op", "things.a.io", json!({}));
        let mut b = crd("op", "things.a.io", json!({}));
        b.origin = "op/other.yaml".into();
        let (taken, duplicates) = select(&[&a, &b]);
        assert_eq!(taken.len(), 2);
        assert!(duplicates.is_empty());
    }

    proptest::proptest! {
        /// Every CRD is taken or named as a duplicate, each name's copies
        /// in the crate are one operator's (the first to ship it), and each
        /// duplicate names a copy in the crate.
        #[test]
        fn each_name_is_in_the_crate_from_its_first_operator_only(
            shipped in proptest::collection::vec((0..4usize, 0..5usize), 0..24)
        ) {
            let crds: Vec<Crd> = shipped
                .iter()
                .enumerate()
                .map(|(i, (op, name))| {
                    let mut c = crd(&format!("op{op}"), &format!("n{name}.a.io"), json!({ "i": i }));
                    c.origin = format!("op{op}/{i}.yaml");
                    c
                })
                .collect();
            let refs: Vec<&Crd> = crds.iter().collect();
            let (taken, duplicates) = select(&refs);
            proptest::prop_assert_eq!(taken.len() + duplicates.len(), crds.len());
            for c in &taken {
                let first = crds.iter().find(|f| f.name == c.name).unwrap();
                proptest::prop_assert_eq!(&c.operator, &first.operator);
            }
            for d in &duplicates {
                let first = crds.iter().find(|f| f.name == d.name).unwrap();
                proptest::prop_assert_eq!(&d.kept, &first.origin);
                proptest::prop_assert!(taken.iter().any(|t| t.origin == d.kept));
                proptest::prop_assert!(!taken.iter().any(|t| t.origin == d.origin));
            }
        }
    }

    #[test]
    fn the_workspace_lists_its_members_and_takes_the_lock_file() {
        let dir = tempfile::tempdir().unwrap();
        let lock = dir.path().join("workspace.lock");
        std::fs::write(&lock, "# lock\n").unwrap();
        write_workspace(dir.path(), &["crate", "side-by-side"], &lock).unwrap();
        let manifest = std::fs::read_to_string(dir.path().join("Cargo.toml")).unwrap();
        assert!(manifest.contains("[workspace]\nmembers = [\"crate\", \"side-by-side\"]\n"), "{manifest}");
        assert_eq!(std::fs::read_to_string(dir.path().join("Cargo.lock")).unwrap(), "# lock\n");
    }

    #[test]
    fn the_input_holds_the_taken_copies_only() {
        let dir = tempfile::tempdir().unwrap();
        let (from, to) = (dir.path().join("accepted"), dir.path().join("crate-crds"));
        let a = crd("a", "things.a.io", json!({}));
        let b = crd("b", "things.a.io", json!({}));
        for c in [&a, &b] {
            std::fs::create_dir_all(c.file_in(&from).parent().unwrap()).unwrap();
            std::fs::write(c.file_in(&from), &c.operator).unwrap();
        }
        std::fs::create_dir_all(to.join("stale")).unwrap();
        write_input(&[&a], &from, &to).unwrap();
        assert_eq!(std::fs::read_to_string(a.file_in(&to)).unwrap(), "a");
        assert!(!b.file_in(&to).exists());
        assert!(!to.join("stale").exists());
    }
}
