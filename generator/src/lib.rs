//! `k8s-client-gen`: turns kube-apiserver OpenAPI v3 documents into a Rust
//! crate of API types (and, on top of them, clients, listers, informers).
//!
//! The pipeline is load → lower → plan → emit, one stage a step in every
//! `generate_*` function below:
//! - load: [`spec`] reads OpenAPI documents (from a directory, from CRD
//!   manifests through [`crd`], or from a cluster through [`cluster`]);
//! - lower: [`lower`] turns schemas into the [`ir`], which describes the
//!   API and nothing of OpenAPI;
//! - plan: [`plan`] decides once what every kind, group/version and field
//!   gets (names, traits, holding, decode seeds, gates);
//! - emit: [`emit`] only renders the plan with `quote!`, formatted by
//!   `prettyplease`.
//!
//! From a build script, [`Builder`] turns CRD manifests into a module in
//! `OUT_DIR` for `include!`; the `k8s-client-gen` binary does the rest.

#[cfg(feature = "cli")]
mod builder;
#[cfg(feature = "cli")]
pub mod cluster;
#[cfg(feature = "cli")]
pub mod crd;
pub mod derive;
pub mod emit;
pub mod error;
pub mod ir;
pub mod lower;
pub mod naming;
pub mod plan;
#[cfg(feature = "cli")]
pub mod protobuf;
pub mod schema;
pub mod spec;

#[cfg(feature = "cli")]
pub use builder::Builder;
pub use error::{Error, Result};

use std::path::Path;

/// Names a specs directory in generated headers without making output
/// depend on where the checkout lives: its last two components
/// (`specs/kubernetes/1.35` → `kubernetes/1.35`).
pub fn source_label(specs: &Path) -> String {
    let parts: Vec<String> = specs
        .components()
        .filter_map(|c| match c {
            std::path::Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    let start = parts.len().saturating_sub(2);
    parts[start..].join("/")
}

#[cfg(feature = "cli")]
/// What a run produced, before anything is written.
#[derive(Debug)]
pub struct Generated {
    /// The IR the crate was made from, for callers that report on it (the
    /// number of types and resources, what a CRD became).
    pub api: ir::Api,
    /// The crate's files, not yet written ([`emit::write`] writes them).
    pub output: emit::Output,
    /// What was skipped, and why (non-CRD documents, unserved versions).
    pub notes: Vec<String>,
}

/// The Rust identifier of the Kubernetes crate custom-resource crates use.
pub const CLIENT_CRATE: &str = "k8s_client";

#[cfg(feature = "cli")]
/// From a directory of OpenAPI documents: every type generated.
/// The crate's version is that of the Kubernetes release the directory's
/// `VERSION` file names (`make specs` writes it: `v1.37.2` gives 0.37.2),
/// unless `opts.crate_version` sets one.
pub fn generate_from_dir(specs: &Path, opts: &emit::Options) -> Result<Generated> {
    let docs = spec::load_dir(specs)?;
    let mut api = spec::build(&docs)?;
    api.protobuf = protobuf::load(specs, &api)?;
    let mut opts = opts.clone();
    if opts.crate_version.is_none() {
        opts.crate_version = release_version(specs)?;
    }
    let output = plan_and_emit(&api, &opts)?;
    Ok(Generated { api, output, notes: Vec::new() })
}

#[cfg(feature = "cli")]
/// From CRD manifests: the custom resources, on the Kubernetes crate for
/// metadata and the like.
/// The headers name the group/versions served and the inputs
/// ([`crd_label`]); `opts.source_label` is not used.
pub fn generate_from_crds(inputs: &[std::path::PathBuf], opts: &emit::Options) -> Result<Generated> {
    let manifests = crd::load(inputs)?;
    if manifests.documents.is_empty() {
        return Err(Error::Check(format!(
            "no served CustomResourceDefinition versions in {}{}",
            inputs_label(inputs),
            manifests.notes.iter().map(|n| format!("\n  {n}")).collect::<String>()
        )));
    }
    let build = spec::BuildOptions { external_crate: Some(CLIENT_CRATE.to_owned()) };
    let api = spec::build_with(&manifests.documents, &build)?;
    let mut opts = opts.clone();
    opts.source_label = crd_label(inputs, &api);
    opts.sources_in_label = false;
    let output = plan_and_emit(&api, &opts)?;
    Ok(Generated { api, output, notes: manifests.notes })
}

#[cfg(feature = "cli")]
/// From a live cluster's `/openapi/v3`. The headers name
/// `kubernetes/<major>.<minor>` and the documents as the apiserver lays them out.
pub fn generate_from_cluster(source: &cluster::Source, mut opts: emit::Options) -> Result<Generated> {
    let fetched = cluster::fetch(source)?;
    if fetched.documents.is_empty() {
        return Err(Error::Check("the cluster serves no OpenAPI v3 group/version documents".into()));
    }
    opts.source_label = fetched.label;
    opts.sources_in_label = true;
    // Of a built-in group, the crate is numbered after the release serving
    // it, as one from that release's specs would be.
    if opts.crate_version.is_none() && fetched.has_builtin_group {
        opts.crate_version = emit::crate_version_of_release(&fetched.release);
    }
    let external_crate = (!fetched.has_builtin_group).then(|| CLIENT_CRATE.to_owned());
    let api = spec::build_with(&fetched.documents, &spec::BuildOptions { external_crate })?;
    let output = plan_and_emit(&api, &opts)?;
    Ok(Generated { api, output, notes: Vec::new() })
}

#[cfg(feature = "cli")]
/// The crate version of the release a specs directory's `VERSION` names;
/// `None` without that file.
fn release_version(specs: &Path) -> Result<Option<String>> {
    let path = specs.join("VERSION");
    let release = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::Check(format!("reading {}: {e}", path.display()))),
    };
    emit::crate_version_of_release(&release).map(Some).ok_or_else(|| {
        Error::Check(format!("{}: {:?} is not a Kubernetes release such as v1.37.2", path.display(), release.trim()))
    })
}

#[cfg(feature = "cli")]
/// The last two stages: the plan, checked (names unique), then the files.
fn plan_and_emit(api: &ir::Api, opts: &emit::Options) -> Result<emit::Output> {
    let plan = plan::plan(api, &opts.group_names)?;
    emit::generate(api, &plan, opts)
}

#[cfg(feature = "cli")]
/// Names a crate of custom resources in its headers: the group/versions it
/// serves (the first three, and how many more) and its inputs
/// ([`crd::display_path`]): `example.com/v1, example.com/v1beta1 in
/// integration/crds`.
pub fn crd_label(inputs: &[std::path::PathBuf], api: &ir::Api) -> String {
    const SHOWN: usize = 3;
    let group_versions: std::collections::BTreeSet<String> =
        api.resources.values().map(|r| ir::api_version(&r.group, &r.version)).collect();
    let mut served: Vec<&str> = group_versions.iter().map(String::as_str).take(SHOWN).collect();
    let more = group_versions.len().saturating_sub(SHOWN);
    let more = format!("and {more} more");
    if group_versions.len() > SHOWN {
        served.push(&more);
    }
    format!("{} in {}", served.join(", "), inputs_label(inputs))
}

#[cfg(feature = "cli")]
/// CRD inputs as given, relative to the working directory.
pub fn inputs_label(inputs: &[std::path::PathBuf]) -> String {
    inputs.iter().map(|p| crd::display_path(p)).collect::<Vec<_>>().join(", ")
}
