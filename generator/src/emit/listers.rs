//! Listers (client-go's lister-gen output): `listers::<gv>::<Kind>Lister`,
//! aliases of the runtime's generic `Lister<K>` and `NamespaceLister<K>`,
//! for every resource that can be listed and watched.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::text;
use super::tokens::gate;
use super::tokens::{ident, type_path};
use crate::ir::Api;
use crate::plan::{GroupVersionPlan, Plan};

/// `src/listers/<gv>.rs`
pub fn emit_group_version(api: &Api, gv: &GroupVersionPlan) -> TokenStream {
    let items = gv.clients.iter().filter(|c| c.informable).map(|c| {
        let k = type_path(api, c.schema);
        let lister = format_ident!("{}", c.lister_alias);
        let mut doc =
            format!("Reads `{}` from an informer's cache (client-go's `{}Lister`).", c.resource.plural, c.kind);
        if c.resource.namespaced && c.namespace_lister_alias.is_none() {
            doc.push_str(&format!(
                "\nIts namespace lister is `NamespaceLister<{}>`: `{}NamespaceLister` is the lister of `{}Namespace`.",
                c.kind, c.kind, c.kind
            ));
        }
        let doc = text::doc(&doc);
        let ns = c.namespace_lister_alias.as_ref().map(|ns_lister| {
            let ns_lister = format_ident!("{}", ns_lister);
            let ns_doc =
                text::doc(&format!("Reads `{}` of one namespace from an informer's cache.", c.resource.plural));
            quote! {
                #ns_doc
                pub type #ns_lister = ::k8s_client_runtime::cache::NamespaceLister<#k>;
            }
        });
        quote! {
            #doc
            pub type #lister = ::k8s_client_runtime::cache::Lister<#k>;
            #ns
        }
    });
    quote!(#(#items)*)
}

/// `src/listers/mod.rs`
pub fn emit_root(plan: &Plan) -> TokenStream {
    let mods = plan.group_versions.values().filter(|gv| gv.has_informers()).map(|gv| {
        let module = ident(&gv.module);
        let g = gate(gv.feature);
        quote!(#g pub mod #module;)
    });
    quote! {
        //! Listers: typed reads of informer caches (client-go's `listers`).
        #(#mods)*
    }
}
