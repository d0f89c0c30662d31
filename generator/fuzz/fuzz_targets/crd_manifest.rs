//! Arbitrary text as a CRD manifest, through every stage `k8s-client-gen
//! crd` runs: manifests to documents, documents to the IR, the plan, and
//! the emitted crate (kept in memory). Each stage either succeeds or
//! returns an error; none panics.
#![no_main]

use std::path::Path;

use k8s_client_gen::crd::Manifests;
use k8s_client_gen::naming::GroupNames;
use k8s_client_gen::{CLIENT_CRATE, emit, plan, spec};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let mut manifests = Manifests::default();
    if manifests.add_text(text, Path::new("fuzz.yaml"), "fuzz.yaml").is_err() || manifests.documents.is_empty() {
        return;
    }
    let options = spec::BuildOptions { external_crate: Some(CLIENT_CRATE.to_owned()) };
    let Ok(api) = spec::build_with(&manifests.documents, &options) else { return };
    let opts = emit::Options {
        crate_name: "k8s-crds".into(),
        crate_version: None,
        runtime_path: Some("../runtime".into()),
        standalone: false,
        source_label: "fuzz.yaml".into(),
        sources_in_label: false,
        client_path: Some("../generated".into()),
        group_names: GroupNames::default(),
    };
    let Ok(plan) = plan::plan(&api, &opts.group_names) else { return };
    let _ = emit::generate(&api, &plan, &opts);
});
