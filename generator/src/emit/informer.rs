//! Listers and informers (client-go's lister-gen and informer-gen output):
//! `listers::<gv>::<Kind>Lister` over an informer's cache, and the typed
//! `informers::SharedInformerFactory` with
//! `factory.apps_v1().deployments().informer()` / `.lister()`.
//!
//! Every resource that can be listed and watched gets both; they wrap the
//! runtime's generic `Lister<K>` and `SharedInformerFactory`.

use std::collections::BTreeMap;

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::client::{ClientResource, client_file_name};
use super::types::{ident, type_path};
use crate::ir::{Api, Resource, Verb};
use crate::naming;

/// Resources that an informer can follow: listable and watchable.
pub fn informable<'a>(
    groups: &'a BTreeMap<(String, String), Vec<ClientResource<'a>>>,
) -> BTreeMap<(String, String), Vec<&'a ClientResource<'a>>> {
    groups
        .iter()
        .map(|(gv, rs)| {
            let rs: Vec<_> = rs
                .iter()
                .filter(|cr| cr.resource.verbs.contains(&Verb::List) && cr.resource.verbs.contains(&Verb::Watch))
                .collect();
            (gv.clone(), rs)
        })
        .filter(|(_, rs)| !rs.is_empty())
        .collect()
}

fn lister_name(r: &Resource) -> proc_macro2::Ident {
    format_ident!("{}Lister", r.kind)
}

fn informer_name(r: &Resource) -> proc_macro2::Ident {
    format_ident!("{}Informer", r.kind)
}

/// `src/listers/<gv>/<kind>.rs`
pub fn emit_lister(api: &Api, cr: &ClientResource) -> TokenStream {
    let r = cr.resource;
    let k = type_path(api, cr.type_schema);
    let name = lister_name(r);
    let cache = quote!(::k8s_client_runtime::cache);
    let selector = quote!(::k8s_client_runtime::selector::LabelSelector);
    let doc = format!(" Reads `{}` from an informer's cache (client-go's `{}Lister`).", r.plural, r.kind);
    if r.namespaced {
        let ns_name = format_ident!("{}NamespaceLister", r.kind);
        let ns_doc = format!(" Reads `{}` of one namespace from an informer's cache.", r.plural);
        quote! {
            #[doc = #doc]
            #[derive(Clone, Debug)]
            pub struct #name {
                inner: #cache::Lister<#k>,
            }

            impl #name {
                pub fn new(inner: #cache::Lister<#k>) -> Self {
                    #name { inner }
                }

                /// Objects of all namespaces matching `selector`.
                #[inline]
                pub fn list(&self, selector: &#selector) -> ::std::vec::Vec<::std::sync::Arc<#k>> {
                    self.inner.list(selector)
                }

                /// The objects of one namespace, through the namespace index.
                #[inline]
                pub fn namespace(&self, namespace: &str) -> #ns_name {
                    #ns_name { inner: self.inner.namespace(namespace) }
                }
            }

            #[doc = #ns_doc]
            #[derive(Debug)]
            pub struct #ns_name {
                inner: #cache::NamespaceLister<#k>,
            }

            impl #ns_name {
                /// Objects of this namespace matching `selector`.
                #[inline]
                pub fn list(&self, selector: &#selector) -> ::std::vec::Vec<::std::sync::Arc<#k>> {
                    self.inner.list(selector)
                }

                /// The object `name` of this namespace; a NotFound error when absent.
                #[inline]
                pub fn get(&self, name: &str) -> ::std::result::Result<::std::sync::Arc<#k>, #cache::ListerError> {
                    self.inner.get(name)
                }
            }
        }
    } else {
        quote! {
            #[doc = #doc]
            #[derive(Clone, Debug)]
            pub struct #name {
                inner: #cache::Lister<#k>,
            }

            impl #name {
                pub fn new(inner: #cache::Lister<#k>) -> Self {
                    #name { inner }
                }

                /// Objects matching `selector`.
                #[inline]
                pub fn list(&self, selector: &#selector) -> ::std::vec::Vec<::std::sync::Arc<#k>> {
                    self.inner.list(selector)
                }

                /// The object `name`; a NotFound error when absent.
                #[inline]
                pub fn get(&self, name: &str) -> ::std::result::Result<::std::sync::Arc<#k>, #cache::ListerError> {
                    self.inner.get(name)
                }
            }
        }
    }
}

/// `src/informers/<gv>/<kind>.rs`
pub fn emit_informer(api: &Api, cr: &ClientResource) -> TokenStream {
    let r = cr.resource;
    let k = type_path(api, cr.type_schema);
    let name = informer_name(r);
    let lister = lister_name(r);
    let gv_module = ident(&naming::group_version_method(&r.group, &r.version));
    let doc = format!(" The shared informer of `{}` (client-go's `{}Informer`).", r.plural, r.kind);
    quote! {
        #[doc = #doc]
        #[derive(Clone, Debug)]
        pub struct #name {
            factory: ::k8s_client_runtime::cache::SharedInformerFactory,
        }

        impl #name {
            pub fn new(factory: ::k8s_client_runtime::cache::SharedInformerFactory) -> Self {
                #name { factory }
            }

            /// The factory's one informer of this kind, created on first use.
            #[inline]
            pub fn informer(&self) -> ::k8s_client_runtime::cache::SharedIndexInformer<#k> {
                self.factory.informer_for::<#k>()
            }

            /// A lister over the informer's cache.
            #[inline]
            pub fn lister(&self) -> crate::listers::#gv_module::#lister {
                crate::listers::#gv_module::#lister::new(self.informer().lister())
            }
        }
    }
}

/// `src/{listers,informers}/<gv>/mod.rs`
pub fn emit_gv_module(resources: &[&ClientResource], informers: bool, group: &str, version: &str) -> TokenStream {
    let mods = resources.iter().map(|cr| {
        let file = ident(&client_file_name(cr.resource));
        if informers {
            let ty = informer_name(cr.resource);
            quote! { mod #file; pub use self::#file::#ty; }
        } else {
            let ty = lister_name(cr.resource);
            let ns = cr.resource.namespaced.then(|| format_ident!("{}NamespaceLister", cr.resource.kind));
            let ns = ns.map(|n| quote!(pub use self::#file::#n;));
            quote! { mod #file; pub use self::#file::#ty; #ns }
        }
    });
    if !informers {
        return quote!(#(#mods)*);
    }
    let gv_type = format_ident!("{}Informers", naming::group_version_type(group, version));
    let accessors = resources.iter().map(|cr| {
        let r = cr.resource;
        let method = ident(&naming::resource_method(&r.kind, &r.plural));
        let ty = informer_name(r);
        quote! {
            pub fn #method(&self) -> #ty {
                #ty::new(self.factory.clone())
            }
        }
    });
    let gv = if group.is_empty() { version.to_owned() } else { format!("{group}/{version}") };
    let doc = format!(" Informers for `{gv}`.");
    quote! {
        #(#mods)*

        #[doc = #doc]
        #[derive(Clone, Debug)]
        pub struct #gv_type {
            factory: ::k8s_client_runtime::cache::SharedInformerFactory,
        }

        impl #gv_type {
            pub fn new(factory: ::k8s_client_runtime::cache::SharedInformerFactory) -> Self {
                #gv_type { factory }
            }

            #(#accessors)*
        }
    }
}

/// `src/listers/mod.rs` and `src/informers/mod.rs`.
pub fn emit_root(groups: &BTreeMap<(String, String), Vec<&ClientResource>>, informers: bool) -> TokenStream {
    let mut mods = Vec::new();
    let mut accessors = Vec::new();
    for ((group, version), resources) in groups {
        let module = ident(&naming::group_version_method(group, version));
        let gate = resources.iter().find_map(|r| r.feature).map(|f| quote!(#[cfg(feature = #f)]));
        mods.push(quote!(#gate pub mod #module;));
        if informers {
            let ty = format_ident!("{}Informers", naming::group_version_type(group, version));
            accessors.push(quote! {
                #gate
                pub fn #module(&self) -> #module::#ty {
                    #module::#ty::new(self.inner.clone())
                }
            });
        }
    }
    if !informers {
        return quote! {
            //! Listers: typed reads of informer caches (client-go's `listers`).
            #(#mods)*
        };
    }
    quote! {
        //! Shared informers (client-go's `informers`): one informer per kind,
        //! `factory.apps_v1().deployments().informer()`, then `start()` and
        //! `wait_for_cache_sync()`.

        #(#mods)*

        /// The typed shared informer factory over the runtime's
        /// [`SharedInformerFactory`](::k8s_client_runtime::cache::SharedInformerFactory),
        /// which it dereferences to for `start`, `wait_for_cache_sync`,
        /// `shutdown` and `informer_for::<K>()`.
        #[derive(Clone, Debug)]
        pub struct SharedInformerFactory {
            inner: ::k8s_client_runtime::cache::SharedInformerFactory,
        }

        impl SharedInformerFactory {
            /// All namespaces, with `default_resync` (zero: no resync).
            pub fn new(client: ::k8s_client_runtime::rest::Client, default_resync: ::std::time::Duration) -> Self {
                SharedInformerFactory { inner: ::k8s_client_runtime::cache::SharedInformerFactory::new(client, default_resync) }
            }

            /// Options: namespace, list-option tweaks, transforms, per-kind resync.
            pub fn builder(client: ::k8s_client_runtime::rest::Client) -> ::k8s_client_runtime::cache::FactoryBuilder {
                ::k8s_client_runtime::cache::SharedInformerFactory::builder(client)
            }

            /// Wraps a factory made with [`builder`](Self::builder).
            pub fn from_runtime(inner: ::k8s_client_runtime::cache::SharedInformerFactory) -> Self {
                SharedInformerFactory { inner }
            }

            #(#accessors)*
        }

        impl ::std::ops::Deref for SharedInformerFactory {
            type Target = ::k8s_client_runtime::cache::SharedInformerFactory;
            fn deref(&self) -> &Self::Target {
                &self.inner
            }
        }
    }
}
