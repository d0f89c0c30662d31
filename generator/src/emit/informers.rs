//! Informers (client-go's informer-gen output), on the runtime's one
//! `SharedInformerFactory`: the `InformerGroups` extension trait adds
//! `factory.apps_v1()`, whose accessors (`.deployments()`) hand out the
//! runtime's `TypedInformer<K>` with `.informer()` and `.lister()`.
//! Being a trait, it lets the factory serve several generated crates
//! (built-in kinds and custom resources) at once.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::text;
use super::tokens::gate;
use super::tokens::{ident, type_path};
use crate::ir::Api;
use crate::plan::{GroupVersionPlan, Plan};

/// `src/informers/<gv>.rs`
pub fn emit_group_version(api: &Api, gv: &GroupVersionPlan) -> TokenStream {
    let gv_type = format_ident!("{}Informers", gv.type_prefix);
    let mut accessors = Vec::new();
    let mut aliases = Vec::new();
    for c in gv.clients.iter().filter(|c| c.informable) {
        let k = type_path(api, c.schema);
        let alias = format_ident!("{}", c.informer_alias);
        let method = ident(&c.method);
        let doc =
            text::doc(&format!("The shared informer of `{}` (client-go's `{}Informer`).", c.resource.plural, c.kind));
        aliases.push(quote! {
            #doc
            pub type #alias = ::k8s_client_runtime::cache::TypedInformer<#k>;
        });
        accessors.push(quote! {
            #doc
            #[inline]
            pub fn #method(&self) -> #alias {
                ::k8s_client_runtime::cache::TypedInformer::new(self.factory)
            }
        });
    }
    let doc = text::doc(&format!("Informers for `{}`.", gv.api_version));
    quote! {
        #doc
        #[derive(Clone, Copy, Debug)]
        pub struct #gv_type<'f> {
            factory: &'f ::k8s_client_runtime::cache::SharedInformerFactory,
        }

        impl<'f> #gv_type<'f> {
            /// The group/version's informers of `factory`.
            pub fn new(factory: &'f ::k8s_client_runtime::cache::SharedInformerFactory) -> Self {
                #gv_type { factory }
            }

            #(#accessors)*
        }

        #(#aliases)*
    }
}

/// `src/informers/mod.rs`
pub fn emit_root(plan: &Plan) -> TokenStream {
    let mut mods = Vec::new();
    let mut decls = Vec::new();
    let mut defs = Vec::new();
    for gv in plan.group_versions.values().filter(|gv| gv.has_informers()) {
        let module = ident(&gv.module);
        let ty = format_ident!("{}Informers", gv.type_prefix);
        let g = gate(gv.feature);
        let doc = text::doc(&format!("Informers for `{}`.", gv.api_version));
        mods.push(quote!(#g pub mod #module;));
        decls.push(quote!(#g #doc fn #module(&self) -> #module::#ty<'_>;));
        defs.push(quote! {
            #g
            #[inline]
            fn #module(&self) -> #module::#ty<'_> {
                #module::#ty::new(self)
            }
        });
    }
    let example = match plan.doc_example() {
        Some(e) => format!("`factory.{}().{}().informer()`", e.module, e.resources),
        None => "`factory.<group>_<version>().<resources>().informer()`".to_owned(),
    };
    let doc = text::inner_doc(&format!(
        "Shared informers (client-go's `informers`): one informer per kind,\n{example}, then `start()` and\n`wait_for_cache_sync_within(..)`. Bring the accessors into scope with\n`use <crate>::prelude::*`."
    ));
    quote! {
        #doc

        pub use ::k8s_client_runtime::cache::SharedInformerFactory;

        #(#mods)*

        /// The group/versions of this crate on the runtime's
        /// [`SharedInformerFactory`].
        pub trait InformerGroups {
            #(#decls)*
        }

        impl InformerGroups for SharedInformerFactory {
            #(#defs)*
        }
    }
}
