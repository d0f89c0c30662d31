//! `src/scheme.rs` of the generated crate: every kind with its
//! group/version/kind and typed codec, like client-go's `scheme` package.

use proc_macro2::TokenStream;
use quote::quote;

use super::types::{is_kind, type_path};
use crate::ir::Api;

pub fn emit_scheme(api: &Api) -> TokenStream {
    // Kinds proper, and schemas registered under several GVKs (DeleteOptions).
    let registered = api.types.values().filter(|d| !d.external && (is_kind(d) || d.gvks.len() > 1));
    let entries = registered.flat_map(|def| def.gvks.iter().map(move |gvk| (def, gvk))).map(|(def, gvk)| {
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
