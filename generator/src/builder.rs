//! Generating clients for CRD manifests from a build script, as prost-build
//! and tonic-build generate from `.proto` files: [`Builder`] runs the
//! `crd` front end and writes the crate as one module
//! ([`emit::inline`](crate::emit::inline)) for `include!`, or as a crate of
//! its own ([`Builder::write_crate`], what `k8s-client-gen crd` does).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::emit::{self, Options};
use crate::error::{Error, Result};
use crate::naming::GroupNames;

/// The generator's settings for one module of custom resources, for a
/// build script:
///
/// ```no_run
/// // build.rs: writes $OUT_DIR/greetings.rs, the module `greetings`, which
/// // src/lib.rs includes with
/// // `include!(concat!(env!("OUT_DIR"), "/greetings.rs"));`
/// fn main() -> Result<(), Box<dyn std::error::Error>> {
///     k8s_client_gen::Builder::new("greetings").crd("crds/greeting.yaml").generate()?;
///     Ok(())
/// }
/// ```
/// The including crate depends on what the generated code names:
/// `k8s-client` and `k8s-client-runtime` (of this generator's version),
/// `serde` (with `derive`), `serde_json`, `bytes` and `futures-util`.
#[derive(Debug, Clone)]
pub struct Builder {
    module: String,
    module_path: Option<String>,
    crds: Vec<PathBuf>,
    group_names: Vec<String>,
    features: BTreeSet<String>,
    out_dir: Option<PathBuf>,
    cargo_directives: bool,
}

/// The features of a generated crate a module can turn on.
const FEATURES: [&str; 3] = ["informers", "apply", "scheme"];

impl Builder {
    /// A module named `module` (a Rust identifier), with the generated
    /// crate's default features: informers and listers on, apply
    /// configurations and the scheme off.
    pub fn new(module: impl Into<String>) -> Self {
        Builder {
            module: module.into(),
            module_path: None,
            crds: Vec::new(),
            group_names: Vec::new(),
            features: BTreeSet::from(["informers".to_owned()]),
            out_dir: None,
            cargo_directives: true,
        }
    }

    /// A CRD manifest file, or a directory searched for them (YAML or JSON);
    /// repeat for several. Relative paths are the package's (a build
    /// script runs in its package's directory).
    pub fn crd(mut self, path: impl Into<PathBuf>) -> Self {
        self.crds.push(path.into());
        self
    }

    /// Where the including crate puts the module (default `crate::<module>`,
    /// its root): `crate::k8s::greetings` when it is included inside
    /// `mod k8s`. Generated code names its own items through this path.
    pub fn module_path(mut self, path: impl Into<String>) -> Self {
        self.module_path = Some(path.into());
        self
    }

    /// Names a group's accessor and modules by hand, `<group>=<name>`, as
    /// `--group-name` does.
    pub fn group_name(mut self, group_equals_name: impl Into<String>) -> Self {
        self.group_names.push(group_equals_name.into());
        self
    }

    /// Turns a part of the generated code on or off: `informers` (listers
    /// and informers; needs the runtime's `informers` feature, on by
    /// default), `apply` (apply configurations; needs `k8s-client`'s `apply`
    /// feature) or `scheme`.
    pub fn feature(mut self, name: &str, on: bool) -> Self {
        if on {
            self.features.insert(name.to_owned());
        } else {
            self.features.remove(name);
        }
        self
    }

    /// The directory to write to (default: `OUT_DIR`, which Cargo sets for
    /// build scripts).
    pub fn out_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.out_dir = Some(dir.into());
        self
    }

    /// Whether [`generate`](Self::generate) prints `cargo::rerun-if-changed`
    /// for every input (default: yes, as a build script should).
    pub fn cargo_directives(mut self, on: bool) -> Self {
        self.cargo_directives = on;
        self
    }

    /// Writes `<out dir>/<module>.rs` and returns its path. Errors name
    /// the manifest and the place in it; warnings (what would not decide
    /// the code, such as a missing storage version) go to Cargo as
    /// `cargo::warning`.
    pub fn generate(self) -> Result<PathBuf> {
        if !is_identifier(&self.module) {
            return Err(Error::Check(format!("module name {:?} is not a Rust identifier", self.module)));
        }
        if let Some(unknown) = self.features.iter().find(|f| !FEATURES.contains(&f.as_str())) {
            return Err(Error::Check(format!("unknown feature {unknown:?}: the features are {}", FEATURES.join(", "))));
        }
        let out_dir = match &self.out_dir {
            Some(dir) => dir.clone(),
            None => std::env::var_os("OUT_DIR").map(PathBuf::from).ok_or_else(|| {
                Error::Check("OUT_DIR is not set: run from a build script, or give Builder::out_dir".into())
            })?,
        };
        let generated = self.run(&self.module.replace('_', "-"))?;
        let root = self.module_path.clone().unwrap_or_else(|| format!("crate::{}", self.module));
        let text = emit::inline::inline_module(&generated.output, &self.module, &root, &self.features)?;
        let path = out_dir.join(format!("{}.rs", self.module));
        std::fs::create_dir_all(&out_dir).map_err(|e| io_error(&out_dir, e))?;
        std::fs::write(&path, text).map_err(|e| io_error(&path, e))?;
        if self.cargo_directives {
            for input in &self.crds {
                println!("cargo::rerun-if-changed={}", input.display());
            }
            // Only warnings: notes (a document that is no CRD, an unserved
            // version left out) would be noise on every build.
            for warning in generated.notes.iter().filter_map(|n| n.strip_prefix("warning: ")) {
                println!("cargo::warning={}", warning.replace('\n', " "));
            }
        }
        Ok(path)
    }

    /// Writes the manifests' crate (named `crate_name`) into `dir` instead,
    /// as `k8s-client-gen crd` does, depending on the runtime and the
    /// Kubernetes crate by version; returns what was noted on the way.
    pub fn write_crate(self, crate_name: &str, dir: &Path) -> Result<Vec<String>> {
        let generated = self.run(crate_name)?;
        emit::write(&generated.output, dir)?;
        Ok(generated.notes)
    }

    fn run(&self, crate_name: &str) -> Result<crate::Generated> {
        if self.crds.is_empty() {
            return Err(Error::Check("no CRD manifests: give Builder::crd a file or directory".into()));
        }
        let opts = Options {
            crate_name: crate_name.to_owned(),
            crate_version: None,
            runtime_path: None,
            standalone: false,
            source_label: String::new(),
            sources_in_label: false,
            client_path: None,
            group_names: GroupNames::parse(&self.group_names).map_err(Error::Check)?,
        };
        crate::generate_from_crds(&self.crds, &opts)
    }
}

fn is_identifier(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && crate::naming::escape_keyword(name.to_owned()) == name
}

fn io_error(path: &Path, source: std::io::Error) -> Error {
    Error::Write { path: path.to_path_buf(), source }
}
