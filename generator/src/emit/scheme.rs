//! `src/scheme.rs` of the generated crate: every kind with its
//! group/version/kind and typed codec, like client-go's `scheme` package.

use proc_macro2::TokenStream;
use quote::quote;

use super::tokens::type_path;
use crate::ir::Api;
use crate::plan::Plan;

/// `src/scheme.rs`: the kinds the plan registers.
pub fn emit_scheme(api: &Api, plan: &Plan) -> TokenStream {
    let entries = plan.scheme.iter().map(|(def, gvk)| {
        let (group, version, kind) = (&gvk.group, &gvk.version, &gvk.kind);
        let ty = type_path(api, &def.schema_name);
        let gate = def.feature.as_ref().map(|f| quote!(#[cfg(feature = #f)]));
        quote! {
            #gate
            ::k8s_client_runtime::object::KindEntry {
                group: #group,
                version: #version,
                kind: #kind,
                transcode: ::k8s_client_runtime::object::transcode::<#ty>,
            },
        }
    });
    quote! {
        //! Every kind of this crate (with the enabled features), by group, version and kind.

        /// The kinds, sorted by schema name.
        pub static KINDS: &[::k8s_client_runtime::object::KindEntry] = &[
            #(#entries)*
        ];

        /// Looks a kind up by group, version and kind.
        pub fn find(group: &str, version: &str, kind: &str) -> ::std::option::Option<&'static ::k8s_client_runtime::object::KindEntry> {
            KINDS.iter().find(|k| k.group == group && k.version == version && k.kind == kind)
        }
    }
}
