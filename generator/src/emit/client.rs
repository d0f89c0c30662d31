//! The typed ClientSet: `Clientset` → `<Group><Version>Client` →
//! `<Kind>Client`, with one method per operation the spec lists for the
//! resource, each a thin call into the runtime's `ResourceClient<K>`.
//!
//! Method names: `get`, `list`, `watch`, `create`, `update`, `patch`,
//! `apply`, `delete`, `delete_collection`; for a subresource `s`:
//! `get_s`, `create_s`, `update_s`, `patch_s`, `apply_s` (`status` and any
//! other). `log` is `log` (text) and `log_stream` (bytes, for `follow`).
//! Connect operations (exec, attach, portforward, proxy) are protocol
//! upgrades, not REST calls: they are listed in each client's docs, not
//! generated.

use std::collections::BTreeMap;

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::types::{ident, is_kind, type_path};
use crate::ir::{Api, FieldType, Resource, Subresource, Verb};
use crate::naming;

/// A resource that gets a typed client, with what the emitter needs.
pub struct ClientResource<'a> {
    pub resource: &'a Resource,
    pub type_schema: &'a str,
    pub feature: Option<&'a str>,
}

/// Resources grouped by (group, version); resources that cannot have a typed
/// client are returned with the reason.
pub fn plan(api: &Api) -> (BTreeMap<(String, String), Vec<ClientResource<'_>>>, Vec<String>) {
    let with_impl = super::resource_by_schema(api);
    let mut groups: BTreeMap<(String, String), Vec<ClientResource>> = BTreeMap::new();
    let mut skipped = Vec::new();
    for r in api.resources.values() {
        let id = format!("{}/{} {}", if r.group.is_empty() { "core" } else { &r.group }, r.version, r.plural);
        let Some(schema) = r.type_schema.as_deref() else {
            skipped.push(format!("{id}: no schema for kind {:?}", r.kind));
            continue;
        };
        let has_object = matches!(with_impl.get(schema), Some(x) if std::ptr::eq(*x, r))
            && api.types.get(schema).is_some_and(|d| is_kind(d) && has_object_meta(d));
        if !has_object {
            skipped.push(format!("{id}: kind {} has no object metadata or is served by several resources", r.kind));
            continue;
        }
        if r.verbs.is_empty() && r.subresources.is_empty() {
            continue;
        }
        let feature = api.types[schema].feature.as_deref();
        groups.entry((r.group.clone(), r.version.clone())).or_default().push(ClientResource {
            resource: r,
            type_schema: schema,
            feature,
        });
    }
    (groups, skipped)
}

fn has_object_meta(def: &crate::ir::TypeDef) -> bool {
    matches!(&def.shape, crate::ir::Shape::Struct(fields)
        if fields.iter().any(|f| f.json_name == "metadata"
            && f.ty == FieldType::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta".into())))
}

pub fn client_type_name(r: &Resource) -> String {
    format!("{}Client", r.kind)
}

pub fn client_file_name(r: &Resource) -> String {
    naming::file_name(&r.kind)
}

/// `src/clientset/<gv>/<kind>.rs`
pub fn emit_resource_client(api: &Api, cr: &ClientResource) -> TokenStream {
    let r = cr.resource;
    let k = type_path(api, cr.type_schema);
    let name = format_ident!("{}", client_type_name(r));
    let list_ty = match &r.list_schema {
        Some(l) => type_path(api, l),
        None => quote!(::k8s_client_runtime::object::ObjectList<#k>),
    };
    let rest = quote!(::k8s_client_runtime::rest);
    let mut methods = Vec::new();
    let mut extra_items = Vec::new();
    for verb in &r.verbs {
        methods.push(match verb {
            Verb::Get => quote! {
                /// Reads the object `name`.
                #[inline]
                pub fn get(&self, name: &str, opts: &#rest::GetOptions) -> impl ::std::future::Future<Output = ::std::result::Result<#k, #rest::Error>> {
                    self.inner.get(name, opts)
                }
            },
            Verb::List => quote! {
                /// Lists objects (one page when `opts.limit` is set; follow `metadata.continue`).
                #[inline]
                pub fn list(&self, opts: &#rest::ListOptions) -> impl ::std::future::Future<Output = ::std::result::Result<#list_ty, #rest::Error>> {
                    self.inner.list_as(opts)
                }
            },
            Verb::Watch => quote! {
                /// Watches objects from `opts.resource_version` on.
                #[inline]
                pub fn watch(&self, opts: &#rest::ListOptions) -> impl ::std::future::Future<Output = ::std::result::Result<#rest::WatchStream<#k>, #rest::Error>> {
                    self.inner.watch(opts)
                }
            },
            Verb::Create => quote! {
                /// Creates `obj`.
                #[inline]
                pub fn create(&self, obj: &#k, opts: &#rest::CreateOptions) -> impl ::std::future::Future<Output = ::std::result::Result<#k, #rest::Error>> {
                    self.inner.create(obj, opts)
                }
            },
            Verb::Update => quote! {
                /// Replaces the object named by `obj.metadata.name`.
                #[inline]
                pub fn update(&self, obj: &#k, opts: &#rest::UpdateOptions) -> impl ::std::future::Future<Output = ::std::result::Result<#k, #rest::Error>> {
                    self.inner.update(obj, opts)
                }
            },
            Verb::Patch => quote! {
                /// Patches the object `name` (JSON, merge or strategic-merge patch).
                #[inline]
                pub fn patch(&self, name: &str, patch: &#rest::Patch, opts: &#rest::PatchOptions) -> impl ::std::future::Future<Output = ::std::result::Result<#k, #rest::Error>> {
                    self.inner.patch(name, patch, opts)
                }

                /// Server-side apply of `config` to the object `name`.
                #[inline]
                pub fn apply<B: ::serde::Serialize + ?Sized>(&self, name: &str, config: &B, opts: &#rest::ApplyOptions) -> impl ::std::future::Future<Output = ::std::result::Result<#k, #rest::Error>> {
                    self.inner.apply(name, config, opts)
                }
            },
            Verb::Delete => quote! {
                /// Deletes the object `name`; the server answers with the object (when
                /// finalizers keep it) or a Status.
                #[inline]
                pub fn delete(&self, name: &str, opts: &#rest::DeleteOptions) -> impl ::std::future::Future<Output = ::std::result::Result<#rest::DeleteResult<#k>, #rest::Error>> {
                    self.inner.delete(name, opts)
                }
            },
            Verb::DeleteCollection => quote! {
                /// Deletes every object matching `list`'s selectors.
                #[inline]
                pub fn delete_collection(&self, opts: &#rest::DeleteOptions, list: &#rest::ListOptions) -> impl ::std::future::Future<Output = ::std::result::Result<#rest::DeleteResult<::k8s_client_runtime::object::ObjectList<#k>>, #rest::Error>> {
                    self.inner.delete_collection(opts, list)
                }
            },
            Verb::Connect => quote!(),
        });
    }
    let mut connect = Vec::new();
    for sub in r.subresources.values() {
        if sub.verbs.contains(&Verb::Connect) {
            connect.push(sub.name.clone());
            continue;
        }
        methods.extend(subresource_methods(api, cr, sub, &mut extra_items));
    }
    let scope_doc = if r.namespaced {
        format!(" Namespaced: made by `{}(namespace)`; an empty namespace means all namespaces.", naming::resource_method(&r.kind, &r.plural))
    } else {
        " Cluster-scoped.".to_owned()
    };
    let doc = format!(" Typed client for `{}` ({}).", r.plural, r.kind);
    let connect_doc = if connect.is_empty() {
        quote!()
    } else {
        let text = format!(
            " Not generated: {} (connect operations, which upgrade the connection to a stream rather than answer with JSON).",
            connect.join(", ")
        );
        quote!(#[doc = ""] #[doc = #text])
    };
    quote! {
        #[doc = #doc]
        #[doc = #scope_doc]
        #connect_doc
        #[derive(Clone, Debug)]
        pub struct #name {
            inner: #rest::ResourceClient<#k>,
        }

        impl #name {
            /// Wraps a runtime client, for use with a custom `ResourceClient`.
            #[inline]
            pub fn new(inner: #rest::ResourceClient<#k>) -> Self {
                #name { inner }
            }

            /// The generic client underneath, for anything not covered here.
            #[inline]
            pub fn resource_client(&self) -> &#rest::ResourceClient<#k> {
                &self.inner
            }

            #(#methods)*
        }

        #(#extra_items)*
    }
}

fn subresource_methods(api: &Api, cr: &ClientResource, sub: &Subresource, extra: &mut Vec<TokenStream>) -> Vec<TokenStream> {
    let r = cr.resource;
    let k = type_path(api, cr.type_schema);
    let rest = quote!(::k8s_client_runtime::rest);
    let sub_name = &sub.name;
    let snake = naming::snake(&sub.name);
    let same_kind = sub.gvk.as_ref().is_none_or(|g| g.kind == r.kind);
    let body_ty = match (&sub.body_schema, same_kind) {
        (Some(b), _) => type_path(api, b),
        (None, true) => k.clone(),
        (None, false) => quote!(::serde_json::Value),
    };
    let resp_ty = match (&sub.response_schema, same_kind) {
        (Some(s), _) => type_path(api, s),
        (None, true) => k.clone(),
        (None, false) => quote!(::serde_json::Value),
    };
    let m = |prefix: &str| format_ident!("{}_{}", prefix, snake);
    // A subresource of another group's kind (Scale, Eviction) exists only
    // when that group's feature is on.
    let own = api.types[cr.type_schema].feature.as_deref();
    let foreign: std::collections::BTreeSet<&str> = [&sub.body_schema, &sub.response_schema]
        .into_iter()
        .flatten()
        .filter_map(|s| api.types.get(s.as_str()).and_then(|d| d.feature.as_deref()))
        .filter(|f| Some(*f) != own)
        .collect();
    let gate = if foreign.is_empty() {
        quote!()
    } else {
        let fs = foreign.iter();
        quote!(#[cfg(all(#(feature = #fs),*))])
    };
    let mut out = Vec::new();
    // A GET whose answer is not JSON (pod logs) is text, with typed parameters.
    let text = sub.verbs.contains(&Verb::Get) && sub.response_schema.is_none() && !sub.params.is_empty();
    for verb in &sub.verbs {
        let tokens = match verb {
            Verb::Get if text => {
                let params = format_ident!("{}{}Params", r.kind, heck::AsUpperCamelCase(&sub.name).to_string());
                extra.push(params_struct(&params, sub));
                let plain = format_ident!("{}", snake);
                let stream = m_stream(&snake);
                let doc = format!(" Reads `{sub_name}` of the object `name` as text.");
                let sdoc = format!(" Reads `{sub_name}` of the object `name` as a byte stream (for `follow`).");
                quote! {
                    #[doc = #doc]
                    #[inline]
                    pub async fn #plain(&self, name: &str, params: &#params) -> ::std::result::Result<::std::string::String, #rest::Error> {
                        use ::futures_util::TryStreamExt as _;
                        let chunks: ::std::vec::Vec<::bytes::Bytes> = self.inner.stream_subresource(name, #sub_name, params).await?.try_collect().await?;
                        Ok(chunks.iter().map(|c| ::std::string::String::from_utf8_lossy(c)).collect())
                    }

                    #[doc = #sdoc]
                    #[inline]
                    pub fn #stream(&self, name: &str, params: &#params) -> impl ::std::future::Future<Output = ::std::result::Result<#rest::ByteStream, #rest::Error>> {
                        self.inner.stream_subresource(name, #sub_name, params)
                    }
                }
            }
            Verb::Get => {
                let f = m("get");
                let doc = format!(" Reads the `{sub_name}` subresource of the object `name`.");
                quote! {
                    #[doc = #doc]
                    #[inline]
                    pub fn #f(&self, name: &str) -> impl ::std::future::Future<Output = ::std::result::Result<#resp_ty, #rest::Error>> {
                        self.inner.get_subresource(name, #sub_name, &())
                    }
                }
            }
            Verb::Create => {
                let f = m("create");
                let doc = format!(" Creates the `{sub_name}` subresource of the object `name`.");
                quote! {
                    #[doc = #doc]
                    #[inline]
                    pub fn #f(&self, name: &str, body: &#body_ty, opts: &#rest::CreateOptions) -> impl ::std::future::Future<Output = ::std::result::Result<#resp_ty, #rest::Error>> {
                        self.inner.create_subresource(name, #sub_name, body, opts)
                    }
                }
            }
            Verb::Update if sub.name == "status" => quote! {
                /// Replaces the status of the object named by `obj.metadata.name`.
                #[inline]
                pub fn update_status(&self, obj: &#k, opts: &#rest::UpdateOptions) -> impl ::std::future::Future<Output = ::std::result::Result<#k, #rest::Error>> {
                    self.inner.update_status(obj, opts)
                }
            },
            Verb::Update => {
                let f = m("update");
                let doc = format!(" Replaces the `{sub_name}` subresource of the object `name`.");
                quote! {
                    #[doc = #doc]
                    #[inline]
                    pub fn #f(&self, name: &str, body: &#body_ty, opts: &#rest::UpdateOptions) -> impl ::std::future::Future<Output = ::std::result::Result<#resp_ty, #rest::Error>> {
                        self.inner.update_subresource(name, #sub_name, body, opts)
                    }
                }
            }
            Verb::Patch => {
                let f = m("patch");
                let a = m("apply");
                let doc = format!(" Patches the `{sub_name}` subresource of the object `name`.");
                let adoc = format!(" Server-side apply to the `{sub_name}` subresource of the object `name`.");
                quote! {
                    #[doc = #doc]
                    #[inline]
                    pub fn #f(&self, name: &str, patch: &#rest::Patch, opts: &#rest::PatchOptions) -> impl ::std::future::Future<Output = ::std::result::Result<#resp_ty, #rest::Error>> {
                        self.inner.patch_subresource(name, #sub_name, patch, opts)
                    }

                    #[doc = #adoc]
                    #[inline]
                    pub fn #a<B: ::serde::Serialize + ?Sized>(&self, name: &str, config: &B, opts: &#rest::ApplyOptions) -> impl ::std::future::Future<Output = ::std::result::Result<#resp_ty, #rest::Error>> {
                        self.inner.apply_subresource(name, #sub_name, config, opts)
                    }
                }
            }
            // Nothing in the apiserver lists, watches or deletes a subresource.
            Verb::List | Verb::Watch | Verb::Delete | Verb::DeleteCollection | Verb::Connect => quote!(),
        };
        out.push(tokens);
    }
    if foreign.is_empty() {
        out
    } else {
        // Several methods share the gate: an `impl` block of their own carries it.
        let name = format_ident!("{}", client_type_name(r));
        extra.push(quote! {
            #gate
            impl #name {
                #(#out)*
            }
        });
        Vec::new()
    }
}

fn m_stream(snake: &str) -> proc_macro2::Ident {
    format_ident!("{}_stream", snake)
}

/// Query parameters of a text subresource as a struct serialized to the query.
fn params_struct(name: &proc_macro2::Ident, sub: &Subresource) -> TokenStream {
    let fields = sub.params.values().filter(|p| p.name != "pretty").map(|p| {
        let f = ident(&naming::field_name(&p.name));
        let json = &p.name;
        let ty = match &p.ty {
            FieldType::Bool => quote!(bool),
            FieldType::I32 => quote!(i32),
            FieldType::I64 => quote!(i64),
            _ => quote!(::std::string::String),
        };
        let doc = p.doc.as_deref().map(|d| format!(" {d}")).map(|d| quote!(#[doc = #d]));
        quote! {
            #doc
            #[serde(rename = #json, skip_serializing_if = "::std::option::Option::is_none")]
            pub #f: ::std::option::Option<#ty>,
        }
    });
    let doc = format!(" Query parameters of the `{}` subresource.", sub.name);
    quote! {
        #[doc = #doc]
        #[derive(Clone, Debug, Default, PartialEq, ::serde::Serialize)]
        pub struct #name {
            #(#fields)*
        }
    }
}

/// `src/clientset/<gv>/mod.rs`: the group/version client.
pub fn emit_group_client(api: &Api, group: &str, version: &str, resources: &[ClientResource]) -> TokenStream {
    let gv_type = format_ident!("{}Client", naming::group_version_type(group, version));
    let mods = resources.iter().map(|cr| {
        let file = ident(&client_file_name(cr.resource));
        let ty = format_ident!("{}", client_type_name(cr.resource));
        quote! {
            mod #file;
            pub use self::#file::#ty;
        }
    });
    let accessors = resources.iter().map(|cr| {
        let r = cr.resource;
        let method = ident(&naming::resource_method(&r.kind, &r.plural));
        let ty = format_ident!("{}", client_type_name(r));
        let k = type_path(api, cr.type_schema);
        if r.namespaced {
            let doc = format!(" `{}` in `namespace` (`\"\"` for all namespaces).", r.plural);
            quote! {
                #[doc = #doc]
                #[inline]
                pub fn #method(&self, namespace: &str) -> #ty {
                    let ns = if namespace.is_empty() { None } else { Some(namespace) };
                    #ty::new(::k8s_client_runtime::rest::ResourceClient::<#k>::new(self.client.clone(), ns))
                }
            }
        } else {
            let doc = format!(" `{}` (cluster-scoped).", r.plural);
            quote! {
                #[doc = #doc]
                #[inline]
                pub fn #method(&self) -> #ty {
                    #ty::new(::k8s_client_runtime::rest::ResourceClient::<#k>::all(self.client.clone()))
                }
            }
        }
    });
    let gv = if group.is_empty() { version.to_owned() } else { format!("{group}/{version}") };
    let doc = format!(" Clients for the resources of `{gv}`.");
    quote! {
        #(#mods)*

        #[doc = #doc]
        #[derive(Clone, Debug)]
        pub struct #gv_type {
            client: ::k8s_client_runtime::rest::Client,
        }

        impl #gv_type {
            pub fn new(client: ::k8s_client_runtime::rest::Client) -> Self {
                #gv_type { client }
            }

            #(#accessors)*
        }
    }
}

/// `src/clientset/mod.rs`: the root with one accessor per group/version.
pub fn emit_clientset(groups: &BTreeMap<(String, String), Vec<ClientResource>>, skipped: &[String]) -> TokenStream {
    let mut mods = Vec::new();
    let mut accessors = Vec::new();
    for ((group, version), resources) in groups {
        let module = ident(&naming::group_version_method(group, version));
        let ty = format_ident!("{}Client", naming::group_version_type(group, version));
        let gate = resources.iter().find_map(|r| r.feature).map(|f| quote!(#[cfg(feature = #f)]));
        let gv = if group.is_empty() { version.clone() } else { format!("{group}/{version}") };
        let doc = format!(" Clients for `{gv}`.");
        mods.push(quote! { #gate pub mod #module; });
        accessors.push(quote! {
            #[doc = #doc]
            #gate
            pub fn #module(&self) -> #module::#ty {
                #module::#ty::new(self.client.clone())
            }
        });
    }
    let mut skipped_doc: Vec<String> = skipped.iter().map(|s| format!(" - {s}")).collect();
    if !skipped_doc.is_empty() {
        skipped_doc.insert(0, String::new());
        skipped_doc.insert(1, " Resources without a typed client (use the DynamicClient for these):".to_owned());
    }
    quote! {
        //! The typed ClientSet (client-go's `kubernetes.Clientset`):
        //! `clientset.apps_v1().deployments("ns").list(&opts)`.

        #(#mods)*

        /// One client per group/version, sharing one connection pool and rate limiter.
        #(#[doc = #skipped_doc])*
        #[derive(Clone, Debug)]
        pub struct Clientset {
            client: ::k8s_client_runtime::rest::Client,
        }

        impl Clientset {
            /// A ClientSet over an existing REST client.
            pub fn new(client: ::k8s_client_runtime::rest::Client) -> Self {
                Clientset { client }
            }

            /// A ClientSet for the inferred configuration: `KUBECONFIG` or
            /// `~/.kube/config`, else the in-cluster service account.
            pub fn try_default() -> ::std::result::Result<Self, ::k8s_client_runtime::rest::Error> {
                ::k8s_client_runtime::rest::Client::try_default().map(Clientset::new)
            }

            /// The REST client underneath (client-go's `RESTClient()`).
            pub fn rest_client(&self) -> &::k8s_client_runtime::rest::Client {
                &self.client
            }

            #(#accessors)*
        }
    }
}
