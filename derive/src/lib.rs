//! `#[derive(CustomResource)]` and `#[derive(Schema)]`, re-exported by the
//! `k8s-client` crate under its `derive` feature: use them from there.
//!
//! The expansion is the generator's: these derives read the Rust items into
//! its IR and render them with its plan and emitters
//! (`k8s_client_gen::derive`), so a derived kind has exactly what a kind
//! generated from a CRD has.

use proc_macro::TokenStream;

fn options() -> k8s_client_gen::derive::Options {
    k8s_client_gen::derive::Options { apply: cfg!(feature = "apply") }
}

/// Makes a custom resource kind of a spec struct: see `k8s_client::CustomResource`.
#[proc_macro_derive(CustomResource, attributes(resource, schema))]
pub fn custom_resource(input: TokenStream) -> TokenStream {
    k8s_client_gen::derive::custom_resource(input.into(), options())
        .unwrap_or_else(k8s_client_gen::derive::to_compile_error)
        .into()
}

/// Gives a struct or a string enum its codec, structural schema and apply
/// configuration: see `k8s_client::Schema`.
#[proc_macro_derive(Schema, attributes(schema))]
pub fn schema(input: TokenStream) -> TokenStream {
    k8s_client_gen::derive::schema(input.into(), options())
        .unwrap_or_else(k8s_client_gen::derive::to_compile_error)
        .into()
}
