//! One crate holding as many operators at once as can coexist, built with
//! `cargo build`.
//!
//! Two kinds of clash keep an operator out, as long as the generator names
//! group/versions by their first label (`operator.tigera.io/v1` and
//! `operator.victoriametrics.com/v1` are both `operator_v1`):
//! * a group/version named like one of the Kubernetes crate's
//!   (`autoscaling.k8s.io/v1` is `autoscaling_v1`);
//! * a group/version named like another group's already in the crate.
//!
//! A kind that another operator in the crate already defines (the same CRD
//! shipped twice) keeps the later operator out too, and so does a kind in
//! lower case (Zalando's `postgresql`), whose type and module would share
//! one name. Operators are taken in
//! corpus order; [`clashes`] lists every clash of the whole corpus, whether
//! or not the order met it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use k8s_client_gen::naming::{file_name, group_version_method};

use crate::corpus::Crd;

/// Writing or building the crate.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The Kubernetes crate's ClientSet directory cannot be read.
    #[error("{}: cannot list the built-in group/versions: {source}", path.display())]
    Builtin {
        /// The directory.
        path: PathBuf,
        /// Why it failed.
        #[source]
        source: std::io::Error,
    },
    /// Cargo.lock cannot be copied in, or cargo cannot be started.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// Why it failed.
        #[source]
        source: std::io::Error,
    },
}

/// An operator the crate could not take, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Excluded {
    /// The operator.
    pub operator: String,
    /// The clash that keeps it out.
    pub reason: String,
}

/// One group/version and the ClientSet accessor (and file) it gets.
fn accessors(crds: &[&Crd]) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for crd in crds {
        for version in &crd.served {
            out.entry(group_version_method(&crd.group, version))
                .or_default()
                .insert(format!("{}/{version}", crd.group));
        }
    }
    out
}

/// The accessors of the Kubernetes crate: its ClientSet's module files.
pub fn builtin_accessors(client_crate: &Path) -> Result<BTreeSet<String>, Error> {
    let dir = client_crate.join("src/clientset");
    let err = |source| Error::Builtin { path: dir.clone(), source };
    let mut out = BTreeSet::new();
    for entry in std::fs::read_dir(&dir).map_err(err)? {
        let path = entry.map_err(err)?.path();
        match path.file_stem().and_then(|s| s.to_str()) {
            Some(stem) if stem != "mod" && path.extension().is_some_and(|e| e == "rs") => {
                out.insert(stem.to_owned());
            }
            _ => {}
        }
    }
    Ok(out)
}

/// Every clash in the corpus: with the built-in crate (one operator), and
/// between the group/versions of two operators or of one.
pub fn clashes(operators: &[(String, Vec<&Crd>)], builtin: &BTreeSet<String>) -> Vec<String> {
    let mut out = Vec::new();
    let named: Vec<(&String, BTreeMap<String, BTreeSet<String>>)> =
        operators.iter().map(|(name, crds)| (name, accessors(crds))).collect();
    for (i, (name, own)) in named.iter().enumerate() {
        if let Some(kind) = lower_case_kind(&operators[i].1) {
            out.push(format!("{name}: {kind}"));
        }
        for (accessor, gvs) in own {
            if builtin.contains(accessor) {
                out.push(format!("{name}: {} is `{accessor}`, as the built-in crate's", join(gvs)));
            }
            if gvs.len() > 1 {
                out.push(format!("{name}: {} are all `{accessor}`", join(gvs)));
            }
        }
        for (other, theirs) in &named[i + 1..] {
            for (accessor, gvs) in own {
                if let Some(their_gvs) = theirs.get(accessor).filter(|t| *t != gvs) {
                    out.push(format!("{name} + {other}: {} and {} are both `{accessor}`", join(gvs), join(their_gvs)));
                }
            }
        }
    }
    out
}

/// A kind whose type would have its own module's name.
fn lower_case_kind(crds: &[&Crd]) -> Option<String> {
    crds.iter()
        .find(|c| file_name(&c.kind) == c.kind)
        .map(|c| format!("{}/{} is in lower case: its type and its module would share one name", c.group, c.kind))
}

fn join(set: &BTreeSet<String>) -> String {
    set.iter().map(String::as_str).collect::<Vec<_>>().join(", ")
}

/// The operators (in the given order) that can share one crate, and those
/// left out with the clash that keeps each out.
pub fn choose(operators: &[(String, Vec<&Crd>)], builtin: &BTreeSet<String>) -> (Vec<String>, Vec<Excluded>) {
    let mut taken: BTreeMap<String, (String, BTreeSet<String>)> = BTreeMap::new();
    let mut kinds: BTreeMap<(String, String), String> = BTreeMap::new();
    let (mut members, mut excluded) = (Vec::new(), Vec::new());
    for (name, crds) in operators {
        let own = accessors(crds);
        let clash = own.iter().find_map(|(accessor, gvs)| {
            if builtin.contains(accessor) {
                return Some(format!("{} is `{accessor}`, as the built-in crate's", join(gvs)));
            }
            if gvs.len() > 1 {
                return Some(format!("{} are all `{accessor}`", join(gvs)));
            }
            match taken.get(accessor) {
                Some((other, theirs)) if theirs != gvs => {
                    Some(format!("{} and {other}'s {} are both `{accessor}`", join(gvs), join(theirs)))
                }
                _ => None,
            }
        });
        let clash = clash.or_else(|| lower_case_kind(crds)).or_else(|| {
            crds.iter().find_map(|c| {
                kinds
                    .get(&(c.group.clone(), c.kind.clone()))
                    .map(|other| format!("{}/{} is {other}'s too", c.group, c.kind))
            })
        });
        match clash {
            Some(reason) => excluded.push(Excluded { operator: name.clone(), reason }),
            None => {
                for (accessor, gvs) in own {
                    taken.insert(accessor, (name.clone(), gvs));
                }
                for c in crds {
                    kinds.insert((c.group.clone(), c.kind.clone()), name.clone());
                }
                members.push(name.clone());
            }
        }
    }
    (members, excluded)
}

/// What `cargo build` of the crate gave.
#[derive(Debug)]
pub struct Build {
    /// Whether it built.
    pub ok: bool,
    /// Wall time of the build.
    pub time: Duration,
    /// The compiler's errors (the first lines), when it did not build.
    pub errors: String,
}

/// Builds the crate in `dir` with the workspace's `lockfile` (so it builds
/// offline with the workspace's versions) into `target_dir`.
pub fn build(dir: &Path, lockfile: &Path, target_dir: &Path) -> Result<Build, Error> {
    std::fs::copy(lockfile, dir.join("Cargo.lock"))
        .map_err(|source| Error::Io { what: format!("copying {}", lockfile.display()), source })?;
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let start = Instant::now();
    let output = Command::new(cargo)
        .args(["build", "--quiet", "--offline", "--message-format", "short"])
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
    use crate::corpus::Body;

    fn crd(operator: &str, group: &str, kind: &str, versions: &[&str]) -> Crd {
        Crd {
            operator: operator.into(),
            origin: format!("{operator}/{kind}.yaml"),
            stem: kind.into(),
            name: format!("{kind}.{group}"),
            group: group.into(),
            kind: kind.into(),
            served: versions.iter().map(|v| (*v).to_owned()).collect(),
            body: Body::Object(serde_json::Value::Null),
        }
    }

    #[test]
    fn clashing_operators_are_left_out_with_the_reason() {
        let tigera = crd("tigera", "operator.tigera.io", "Installation", &["v1"]);
        let vm = crd("vm", "operator.victoriametrics.com", "VMAgent", &["v1", "v1beta1"]);
        let vpa = crd("vpa", "autoscaling.k8s.io", "VerticalPodAutoscaler", &["v1"]);
        let again = crd("again", "operator.tigera.io", "Installation", &["v1"]);
        let fine = crd("fine", "fine.io", "Thing", &["v1"]);
        let lower = crd("lower", "acid.zalan.do", "postgresql", &["v1"]);
        let operators = vec![
            ("tigera".to_owned(), vec![&tigera]),
            ("vm".to_owned(), vec![&vm]),
            ("vpa".to_owned(), vec![&vpa]),
            ("again".to_owned(), vec![&again]),
            ("fine".to_owned(), vec![&fine]),
            ("lower".to_owned(), vec![&lower]),
        ];
        let builtin = BTreeSet::from(["autoscaling_v1".to_owned()]);
        let (members, excluded) = choose(&operators, &builtin);
        assert_eq!(members, ["tigera", "fine"]);
        let reasons: Vec<(&str, &str)> = excluded.iter().map(|e| (e.operator.as_str(), e.reason.as_str())).collect();
        assert_eq!(
            reasons,
            [
                ("vm", "operator.victoriametrics.com/v1 and tigera's operator.tigera.io/v1 are both `operator_v1`"),
                ("vpa", "autoscaling.k8s.io/v1 is `autoscaling_v1`, as the built-in crate's"),
                ("again", "operator.tigera.io/Installation is tigera's too"),
                ("lower", "acid.zalan.do/postgresql is in lower case: its type and its module would share one name"),
            ]
        );
        let all = clashes(&operators, &builtin);
        assert_eq!(
            all,
            [
                "tigera + vm: operator.tigera.io/v1 and operator.victoriametrics.com/v1 are both `operator_v1`",
                "vm + again: operator.victoriametrics.com/v1 and operator.tigera.io/v1 are both `operator_v1`",
                "vpa: autoscaling.k8s.io/v1 is `autoscaling_v1`, as the built-in crate's",
                "lower: acid.zalan.do/postgresql is in lower case: its type and its module would share one name",
            ]
        );
    }

    #[test]
    fn builtin_accessors_are_the_clientset_modules() {
        let dir = tempfile::tempdir().unwrap();
        let clientset = dir.path().join("src/clientset");
        std::fs::create_dir_all(&clientset).unwrap();
        for f in ["mod.rs", "apps_v1.rs", "core_v1.rs", "notes.txt"] {
            std::fs::write(clientset.join(f), "").unwrap();
        }
        let found = builtin_accessors(dir.path()).unwrap();
        assert_eq!(found, BTreeSet::from(["apps_v1".to_owned(), "core_v1".to_owned()]));
    }
}
