//! Arbitrary bytes as an apiserver OpenAPI v3 document, through every
//! stage `k8s-client-gen --specs` runs: parsing, the IR, the plan, and the
//! emitted crate (kept in memory). Each stage either succeeds or returns an
//! error; none panics.
//!
//! The first byte picks the document's place in a specs directory (the
//! core group's `api/v1.json` or a group's `apis/<group>/<version>.json`),
//! which decides where its types live: the seeds start with `0` to `3`.
#![no_main]

use std::path::Path;

use k8s_client_gen::naming::GroupNames;
use k8s_client_gen::{emit, plan, spec};
use libfuzzer_sys::fuzz_target;

const PLACES: [&str; 4] = [
    "api/v1.json",
    "apis/3scale.net/v1.json",
    "apis/fancy-stuff.example.io/v1beta1.json",
    "apis/scheduling.k8s.io/v1.json",
];

fuzz_target!(|data: &[u8]| {
    let Some((&place, bytes)) = data.split_first() else { return };
    let rel_path = PLACES[usize::from(place) % PLACES.len()];
    let Ok(doc) = spec::parse_document(bytes, Path::new(rel_path), rel_path.to_owned()) else { return };
    let Ok(api) = spec::build(&[doc]) else { return };
    let opts = emit::Options {
        crate_name: "k8s-client".into(),
        crate_version: None,
        runtime_path: Some("../runtime".into()),
        standalone: false,
        source_label: "kubernetes/fuzz".into(),
        sources_in_label: true,
        client_path: Some("../generated".into()),
        group_names: GroupNames::default(),
    };
    let Ok(plan) = plan::plan(&api, &opts.group_names) else { return };
    let _ = emit::generate(&api, &plan, &opts);
});
