//! The many-operator crate beside the built-in crate (`k8s-client`) in one
//! program: a throwaway binary crate, written next to the many-operator
//! crate, with both preludes in scope, that calls on one
//! `SharedInformerFactory` and one `Clientset` of each crate the accessors
//! of every custom group/version, and beside each whose group's first
//! label is a built-in group's (`networking.istio.io/v1`) a built-in
//! accessor of that group (`networking_v1`). Both crates' informer
//! accessors are traits on the runtime's one factory type, so the program
//! compiles only if no accessor of one crate is also the other's. It is
//! built, never run.
//!
//! It is a member of the many-operator crate's workspace
//! ([`crate::bigcrate::write_workspace`]), so its build reuses that crate's.
//!
//! The custom group/versions come from the generator's plan of the
//! many-operator crate; the built-in accessors, and the Cargo feature of
//! each, from the built-in crate's `clientset/mod.rs` and
//! `informers/mod.rs`.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use k8s_client_gen::naming::{is_builtin, snake};
use k8s_client_gen::plan::Plan;

/// Reading the built-in crate or writing the program.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A module file of the built-in crate cannot be read.
    #[error("{}: cannot read the built-in crate's group/versions: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why it failed.
        #[source]
        source: std::io::Error,
    },
    /// A module file of the built-in crate is not Rust.
    #[error("{}: not Rust: {source}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// The parser's complaint.
        #[source]
        source: syn::Error,
    },
    /// The program cannot be written.
    #[error("{}: cannot write: {source}", path.display())]
    Write {
        /// The file or directory.
        path: PathBuf,
        /// Why it failed.
        #[source]
        source: std::io::Error,
    },
}

/// One group/version accessor of the built-in crate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuiltinAccessor {
    /// The Cargo feature that turns it on, if any.
    pub feature: Option<String>,
    /// Whether the informer factory has it too (not every group/version
    /// has a kind to watch).
    pub informers: bool,
}

/// The group/version accessors of the built-in crate at `client_crate`:
/// its ClientSet's modules, each with its `#[cfg(feature = ..)]`.
pub fn builtin_accessors(client_crate: &Path) -> Result<BTreeMap<String, BuiltinAccessor>, Error> {
    let clients = modules(&client_crate.join("src/clientset/mod.rs"))?;
    let informers = modules(&client_crate.join("src/informers/mod.rs"))?;
    Ok(clients
        .into_iter()
        .map(|(name, feature)| {
            let informers = informers.contains_key(&name);
            (name, BuiltinAccessor { feature, informers })
        })
        .collect())
}

/// The `pub mod` items of a Rust file, each with the feature it is gated on.
fn modules(path: &Path) -> Result<BTreeMap<String, Option<String>>, Error> {
    let text = std::fs::read_to_string(path).map_err(|source| Error::Read { path: path.to_owned(), source })?;
    let file = syn::parse_file(&text).map_err(|source| Error::Parse { path: path.to_owned(), source })?;
    let mut out = BTreeMap::new();
    for item in file.items {
        let syn::Item::Mod(module) = item else { continue };
        if !matches!(module.vis, syn::Visibility::Public(_)) {
            continue;
        }
        let feature = module.attrs.iter().find_map(cfg_feature);
        out.insert(module.ident.to_string(), feature);
    }
    Ok(out)
}

/// `feature` of `#[cfg(feature = "feature")]`.
fn cfg_feature(attr: &syn::Attribute) -> Option<String> {
    if !attr.path().is_ident("cfg") {
        return None;
    }
    let syn::Meta::NameValue(pair) = attr.parse_args::<syn::Meta>().ok()? else { return None };
    if !pair.path.is_ident("feature") {
        return None;
    }
    match pair.value {
        syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) => Some(s.value()),
        _ => None,
    }
}

/// One group/version of the many-operator crate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustomGroupVersion {
    /// `networking.istio.io/v1`.
    pub api_version: String,
    /// `networking.istio.io`.
    pub group: String,
    /// `v1`.
    pub version: String,
    /// Its accessor (`networking_istio_io_v1`).
    pub accessor: String,
    /// Whether the informer factory has it too.
    pub informers: bool,
}

/// The custom group/versions of a crate's plan.
pub fn custom_group_versions(plan: &Plan) -> Vec<CustomGroupVersion> {
    plan.group_versions
        .values()
        .filter(|gv| !is_builtin(&gv.group))
        .map(|gv| CustomGroupVersion {
            api_version: gv.api_version.clone(),
            group: gv.group.clone(),
            version: gv.version.clone(),
            accessor: gv.module.clone(),
            informers: gv.has_informers(),
        })
        .collect()
}

/// A custom group/version and the built-in accessor whose group's name is
/// its group's first label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pair {
    /// The custom group/version.
    pub custom: CustomGroupVersion,
    /// The built-in accessor (`networking_v1`).
    pub builtin: String,
    /// Whether the informer factory has the built-in accessor too.
    pub builtin_informers: bool,
}

/// The program: what it calls, and the built-in crate's features it needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program {
    /// Custom group/versions beside a built-in one of their first label.
    pub pairs: Vec<Pair>,
    /// The other custom group/versions, called on their own.
    pub alone: Vec<CustomGroupVersion>,
    /// The built-in crate's features the pairs need (`networking`).
    pub features: BTreeSet<String>,
}

impl Program {
    /// Pairs every custom group/version whose group's first label names a
    /// built-in group (`networking.istio.io` and `networking`) with that
    /// group's accessor of the same version if the built-in crate has one,
    /// else its first.
    pub fn new(custom: Vec<CustomGroupVersion>, builtin: &BTreeMap<String, BuiltinAccessor>) -> Program {
        // The program names the built-in crate's informer factory.
        let features = BTreeSet::from(["informers".to_owned()]);
        let mut program = Program { pairs: Vec::new(), alone: Vec::new(), features };
        for gv in custom {
            let label = snake(gv.group.split('.').next().unwrap_or_default());
            let same_group = |name: &&String| name.rsplit_once('_').is_some_and(|(group, _)| group == label);
            let same_version = format!("{label}_{}", snake(&gv.version));
            let chosen =
                builtin.get_key_value(&same_version).or_else(|| builtin.iter().find(|(name, _)| same_group(name)));
            match chosen {
                Some((name, accessor)) => {
                    program.features.extend(accessor.feature.clone());
                    program.pairs.push(Pair {
                        custom: gv,
                        builtin: name.clone(),
                        builtin_informers: accessor.informers,
                    });
                }
                None => program.alone.push(gv),
            }
        }
        program
    }

    /// The features as `cargo build --features` takes them for a crate
    /// that depends on the built-in crate (`k8s-client/networking`).
    pub fn cargo_features(&self) -> Vec<String> {
        self.features.iter().map(|f| format!("{}/{f}", k8s_client_gen::emit::CLIENT_PACKAGE)).collect()
    }

    /// The program's `src/main.rs`, for the many-operator crate whose
    /// library is `crate_ident`.
    pub fn main_rs(&self, crate_ident: &str) -> String {
        let client = k8s_client_gen::CLIENT_CRATE;
        let mut s = format!(
            "//! Written by check-public-crds: the many-operator crate beside the built-in\n\
             //! crate, both preludes in scope. It compiles only if no accessor of one\n\
             //! crate is also the other's.\n\
             use {client}::prelude::*;\n\
             use {crate_ident}::prelude::*;\n\n\
             /// Every group/version accessor of the many-operator crate, those whose\n\
             /// group's first label is a built-in group's beside that group's.\n\
             pub fn side_by_side(\n    \
             factory: &{client}::informers::SharedInformerFactory,\n    \
             builtin: &{client}::clientset::Clientset,\n    \
             custom: &{crate_ident}::clientset::Clientset,\n\
             ) {{\n"
        );
        let call = |s: &mut String, on: &str, accessor: &str| {
            let _ = writeln!(s, "    let _ = {on}.{accessor}();");
        };
        for pair in &self.pairs {
            let _ = writeln!(s, "    // {} beside {}", pair.custom.api_version, pair.builtin);
            if pair.custom.informers {
                call(&mut s, "factory", &pair.custom.accessor);
            }
            if pair.builtin_informers {
                call(&mut s, "factory", &pair.builtin);
            }
            call(&mut s, "custom", &pair.custom.accessor);
            call(&mut s, "builtin", &pair.builtin);
        }
        for gv in &self.alone {
            let _ = writeln!(s, "    // {}", gv.api_version);
            if gv.informers {
                call(&mut s, "factory", &gv.accessor);
            }
            call(&mut s, "custom", &gv.accessor);
        }
        s.push_str("}\n\nfn main() {\n    let _ = side_by_side;\n}\n");
        s
    }

    /// The program's `Cargo.toml`: the built-in crate at `client_path`
    /// with the features the pairs need, and the many-operator crate
    /// `crate_package` at `crate_path`.
    pub fn cargo_toml(&self, client_path: &Path, crate_package: &str, crate_path: &Path) -> String {
        let features: Vec<String> = self.features.iter().map(|f| format!("{f:?}")).collect();
        format!(
            "# Written by check-public-crds: the many-operator crate beside the built-in crate.\n\
             [package]\nname = \"public-crds-side-by-side\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n\
             [dependencies]\n\
             {} = {{ path = {:?}, default-features = false, features = [{}] }}\n\
             {crate_package} = {{ path = {:?} }}\n",
            k8s_client_gen::emit::CLIENT_PACKAGE,
            client_path.display().to_string(),
            features.join(", "),
            crate_path.display().to_string(),
        )
    }

    /// Writes the program into `dir` (replacing it); paths are taken as
    /// given, so give them absolute.
    pub fn write(&self, dir: &Path, client_path: &Path, crate_package: &str, crate_path: &Path) -> Result<(), Error> {
        let write = |path: PathBuf, text: String| {
            std::fs::write(&path, text).map_err(|source| Error::Write { path: path.clone(), source })
        };
        let dir_error = |source| Error::Write { path: dir.to_owned(), source };
        if dir.exists() {
            std::fs::remove_dir_all(dir).map_err(dir_error)?;
        }
        std::fs::create_dir_all(dir.join("src")).map_err(dir_error)?;
        write(dir.join("Cargo.toml"), self.cargo_toml(client_path, crate_package, crate_path))?;
        write(dir.join("src/main.rs"), self.main_rs(&crate_package.replace('-', "_")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn custom(group: &str, version: &str, informers: bool) -> CustomGroupVersion {
        CustomGroupVersion {
            api_version: format!("{group}/{version}"),
            group: group.into(),
            version: version.into(),
            accessor: format!("{}_{version}", group.replace(['.', '-'], "_")),
            informers,
        }
    }

    fn builtin() -> BTreeMap<String, BuiltinAccessor> {
        let accessor = |feature: &str, informers| BuiltinAccessor { feature: Some(feature.into()), informers };
        BTreeMap::from([
            ("apiextensions_v1".into(), accessor("apiextensions", true)),
            ("authentication_v1".into(), accessor("authentication", false)),
            ("networking_v1".into(), accessor("networking", true)),
            ("networking_v1beta1".into(), accessor("networking", true)),
            ("core_v1".into(), accessor("core", true)),
        ])
    }

    #[test]
    fn groups_named_like_a_builtin_group_by_their_first_label_are_paired_with_it() {
        let program = Program::new(
            vec![
                custom("networking.istio.io", "v1beta1", true),
                custom("networking.internal.knative.dev", "v1alpha1", true),
                custom("apiextensions.crossplane.io", "v2", true),
                custom("authentication.example.com", "v1", true),
                custom("cert-manager.io", "v1", true),
                custom("networkingx.io", "v1", true),
            ],
            &builtin(),
        );
        let pairs: Vec<(&str, &str)> =
            program.pairs.iter().map(|p| (p.custom.accessor.as_str(), p.builtin.as_str())).collect();
        assert_eq!(
            pairs,
            [
                ("networking_istio_io_v1beta1", "networking_v1beta1"),
                ("networking_internal_knative_dev_v1alpha1", "networking_v1"),
                ("apiextensions_crossplane_io_v2", "apiextensions_v1"),
                ("authentication_example_com_v1", "authentication_v1"),
            ]
        );
        let alone: Vec<&str> = program.alone.iter().map(|gv| gv.accessor.as_str()).collect();
        assert_eq!(alone, ["cert_manager_io_v1", "networkingx_io_v1"]);
        assert_eq!(
            program.cargo_features(),
            ["k8s-client/apiextensions", "k8s-client/authentication", "k8s-client/informers", "k8s-client/networking"]
        );
    }

    #[test]
    fn the_program_calls_both_crates_accessors_on_one_factory_and_each_clientset() {
        let program = Program::new(
            vec![custom("authentication.example.com", "v1", true), custom("jobs.example.com", "v1", false)],
            &builtin(),
        );
        let main = program.main_rs("k8s_public_crds");
        assert!(main.contains("use k8s_client::prelude::*;\nuse k8s_public_crds::prelude::*;\n"), "{main}");
        let calls: Vec<&str> =
            main.lines().filter(|l| l.contains("let _ = ") && l.contains('.')).map(str::trim).collect();
        assert_eq!(
            calls,
            [
                "let _ = factory.authentication_example_com_v1();",
                "let _ = custom.authentication_example_com_v1();",
                "let _ = builtin.authentication_v1();",
                "let _ = custom.jobs_example_com_v1();",
            ]
        );
        if let Err(e) = syn::parse_file(&main) {
            panic!("{e}\n{main}");
        }
    }

    #[test]
    fn the_cargo_toml_names_both_crates_with_the_features_the_pairs_need() {
        let program = Program::new(vec![custom("networking.istio.io", "v1", true)], &builtin());
        let toml = program.cargo_toml(Path::new("/w/generated"), "k8s-public-crds", Path::new("/w/target/crate"));
        assert!(
            toml.contains(
                "k8s-client = { path = \"/w/generated\", default-features = false, features = [\"informers\", \"networking\"] }\n\
                 k8s-public-crds = { path = \"/w/target/crate\" }\n"
            ),
            "{toml}"
        );
    }

    #[test]
    fn builtin_accessors_are_the_clientset_modules_with_their_features() {
        let dir = tempfile::tempdir().unwrap();
        for sub in ["clientset", "informers"] {
            std::fs::create_dir_all(dir.path().join("src").join(sub)).unwrap();
        }
        std::fs::write(
            dir.path().join("src/clientset/mod.rs"),
            "//! Clients.\n#[cfg(feature = \"core\")]\npub mod core_v1;\n#[cfg(feature = \"apiserverinternal\")]\n\
             pub mod internal_v1alpha1;\npub mod plain_v1;\nmod private;\npub struct Clientset;\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("src/informers/mod.rs"), "#[cfg(feature = \"core\")]\npub mod core_v1;\n")
            .unwrap();
        let found = builtin_accessors(dir.path()).unwrap();
        let accessor =
            |feature: Option<&str>, informers| BuiltinAccessor { feature: feature.map(Into::into), informers };
        assert_eq!(
            found,
            BTreeMap::from([
                ("core_v1".to_owned(), accessor(Some("core"), true)),
                ("internal_v1alpha1".to_owned(), accessor(Some("apiserverinternal"), false)),
                ("plain_v1".to_owned(), accessor(None, false)),
            ])
        );
    }

    #[test]
    fn a_builtin_crate_that_is_not_rust_is_named() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src/clientset")).unwrap();
        std::fs::write(dir.path().join("src/clientset/mod.rs"), "pub mod {").unwrap();
        let err = builtin_accessors(dir.path()).unwrap_err().to_string();
        assert!(err.contains("src/clientset/mod.rs: not Rust"), "{err}");
    }
}
