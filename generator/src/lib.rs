//! `k8s-client-gen`: turns kube-apiserver OpenAPI v3 documents into a Rust
//! crate of API types (and, on top of them, clients, listers, informers).
//!
//! The pipeline is parse → IR → plan → emit: [`spec`] is the only module
//! that reads OpenAPI, [`ir`] describes the API, [`plan`] decides once what
//! each kind and group/version gets (names, traits, gates), and [`emit`]
//! only renders that with `quote!`, formatted by `prettyplease`.
#![forbid(unsafe_code)]

pub mod emit;
pub mod error;
pub mod ir;
pub mod lower;
pub mod naming;
pub mod plan;
pub mod schema;
pub mod spec;

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

/// Parse, build the IR and emit, without writing anything.
pub fn generate_from_dir(specs: &Path, opts: &emit::Options) -> Result<(ir::Api, emit::Output)> {
    let docs = spec::load_dir(specs)?;
    let api = spec::build(&docs)?;
    let output = emit::generate(&api, opts)?;
    Ok((api, output))
}
