//! The typed ClientSet: `Clientset` → `<Group><Version>Client` → the
//! runtime's `ResourceClient<K>` per kind.
//!
//! Every verb lives once, in the runtime; this emitter writes only what is
//! particular to an API: the accessors (`core_v1().config_maps(ns)`), a
//! `<Kind>Client` alias per kind, the `HasStatus`/`HasScale` marker impls
//! that give a kind its status and scale methods, and a small
//! `<Kind>ClientExt` trait for irregular subresources (pod `log`,
//! `eviction`, `binding`, ...). Connect operations (exec, attach,
//! portforward, proxy) are streams the runtime implements once: the kind
//! gets the runtime's marker trait for each (`HasExec`, `HasAttach`,
//! `HasPortForward`, `HasProxy`, and `HasLog` for a text `log`), as for
//! status and scale; a connect operation the runtime does not know is
//! listed in the alias's docs as not generated.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::text;
use super::tokens::{gate, ident, type_path};
use crate::ir::{Api, FieldType, Subresource};
use crate::naming;
use crate::plan::{Body, ClientPlan, Extension, ExtensionOp, GroupVersionPlan, Plan};

const REST: &str = "::k8s_client_runtime::rest";
/// The runtime's `rest` module as a rustdoc link target.
const REST_DOC: &str = "k8s_client_runtime::rest";

fn rest() -> TokenStream {
    REST.parse().unwrap_or_default()
}

/// `src/clientset/<gv>.rs`: the group/version client, aliases, markers,
/// extension traits.
pub fn emit_group_version(api: &Api, gv: &GroupVersionPlan) -> TokenStream {
    let rest = rest();
    let gv_type = format_ident!("{}Client", gv.type_prefix);
    let mut accessors = Vec::new();
    let mut items = Vec::new();
    for c in &gv.clients {
        let r = c.resource;
        let k = type_path(api, c.schema);
        let method = ident(&c.method);
        let alias = format_ident!("{}", c.client_alias);
        if r.namespaced {
            let doc = text::doc(&format!("`{}` in `namespace` (`\"\"` for all namespaces).", r.plural));
            accessors.push(quote! {
                #doc
                #[inline]
                pub fn #method(&self, namespace: &str) -> #alias {
                    #rest::ResourceClient::new(self.client.clone(), ::std::option::Option::Some(namespace))
                }
            });
        } else {
            let doc = text::doc(&format!("`{}` (cluster-scoped).", r.plural));
            accessors.push(quote! {
                #doc
                #[inline]
                pub fn #method(&self) -> #alias {
                    #rest::ResourceClient::all(self.client.clone())
                }
            });
        }
        let served = c.verbs.iter().map(|v| format!("`{}`", v.to_lowercase())).collect::<Vec<_>>().join(", ");
        let mut doc = vec![format!("The client of `{}` ({}): {served}.", r.plural, r.kind)];
        if !c.extensions.is_empty() {
            doc.push(format!("More subresources through [`{}`].", c.ext_trait));
        }
        if !c.streams.is_empty() {
            let streams = c
                .streams
                .iter()
                .map(|s| format!("`{}` ([`rest::{}`]({REST_DOC}::{}))", s.subresource, s.module, s.module))
                .collect::<Vec<_>>()
                .join(", ");
            doc.push(format!("Streams: {streams}."));
        }
        if !c.connect.is_empty() {
            doc.push(format!(
                "Not generated: {} (connect operations, streams rather than JSON).",
                c.connect.join(", ")
            ));
        }
        let doc = text::doc(&doc.join("\n"));
        items.push(quote! {
            #doc
            pub type #alias = #rest::ResourceClient<#k>;
        });
        items.push(client_markers(api, c, true));
        items.extend(extension_trait(api, c));
    }
    let doc = text::doc(&format!("Clients for the resources of `{}`.", gv.api_version));
    quote! {
        #doc
        #[derive(Clone, Debug)]
        pub struct #gv_type {
            client: #rest::Client,
        }

        impl #gv_type {
            /// The group/version's clients over `client`.
            pub fn new(client: #rest::Client) -> Self {
                #gv_type { client }
            }

            #(#accessors)*
        }

        #(#items)*
    }
}

/// The marker impls that give `ResourceClient<Kind>` its methods: one per
/// served verb, `HasStatus`, the streams' and `HasScale`; `gated`: behind
/// the crate's features of the types they name (a derive, expanding in a
/// crate without them, has the types it names always).
pub fn client_markers(api: &Api, c: &ClientPlan, gated: bool) -> TokenStream {
    let rest = rest();
    let k = type_path(api, c.schema);
    let gate_if = |features: Vec<&str>| if gated { gate(features) } else { TokenStream::new() };
    let mut items = Vec::new();
    for verb in &c.verbs {
        let verb = ident(verb);
        items.push(quote!(impl #rest::verbs::#verb for #k {}));
    }
    if c.status {
        items.push(quote!(impl #rest::HasStatus for #k {}));
    }
    for stream in &c.streams {
        let marker = ident(stream.marker);
        let g = gate_if(stream.feature.map(|f| f.name).into_iter().collect());
        items.push(quote!(#g impl #rest::#marker for #k {}));
    }
    if let Some(scale) = &c.scale {
        let g = gate_if(scale.features.iter().copied().collect());
        let scale_ty = type_path(api, scale.item);
        items.push(quote! {
            #g
            impl #rest::HasScale for #k {
                type Scale = #scale_ty;
            }
        });
    }
    quote!(#(#items)*)
}

/// The `<Kind>ClientExt` trait and its impl, plus params structs.
fn extension_trait(api: &Api, c: &ClientPlan) -> Vec<TokenStream> {
    if c.extensions.is_empty() {
        return Vec::new();
    }
    let k = type_path(api, c.schema);
    let name = format_ident!("{}", c.ext_trait);
    let alias = format_ident!("{}", c.client_alias);
    let mut decls = Vec::new();
    let mut defs = Vec::new();
    let mut params = Vec::new();
    for e in &c.extensions {
        let g = gate(e.features.iter().copied());
        let (signature, body) = extension_method(api, c, &e.item, &k);
        let doc = extension_doc(&e.item);
        decls.push(quote!(#g #[doc = #doc] #signature;));
        defs.push(quote!(#g #[inline] #signature { #body }));
        if e.item.op == ExtensionOp::Text {
            let sub = &c.resource.subresources[e.item.subresource];
            params.push(params_struct(&params_name(&e.item), sub));
        }
    }
    let doc = format!(" The subresources of `{}` beyond status and scale.", c.resource.plural);
    let mut out = params;
    out.push(quote! {
        #[doc = #doc]
        pub trait #name {
            #(#decls)*
        }

        impl #name for #alias {
            #(#defs)*
        }
    });
    out
}

/// The parameters struct of a text read (planned with it).
fn params_name(e: &Extension) -> proc_macro2::Ident {
    format_ident!("{}", e.params.as_deref().unwrap_or("Params"))
}

fn extension_doc(e: &Extension) -> String {
    let sub = e.subresource;
    match e.op {
        ExtensionOp::Get => format!(" Reads the `{sub}` subresource of the object `name`."),
        ExtensionOp::Create => format!(" Creates the `{sub}` subresource of the object `name`."),
        ExtensionOp::Update => format!(" Replaces the `{sub}` subresource of the object `name`."),
        ExtensionOp::Patch => format!(" Patches the `{sub}` subresource of the object `name`."),
        ExtensionOp::Apply => format!(" Server-side apply to the `{sub}` subresource of the object `name`."),
        ExtensionOp::Text => format!(" Reads `{sub}` of the object `name` as text."),
        ExtensionOp::Stream => format!(" Reads `{sub}` of the object `name` as a byte stream (for `follow`)."),
    }
}

/// The method's signature (returning a `Send` future) and its body.
fn extension_method(api: &Api, c: &ClientPlan, e: &Extension, k: &TokenStream) -> (TokenStream, TokenStream) {
    let rest = rest();
    let f = ident(&e.name);
    let sub = e.subresource;
    let ty = |b: Body| match b {
        Body::Schema(s) if s == c.schema => k.clone(),
        Body::Schema(s) => type_path(api, s),
        Body::Json => quote!(::serde_json::Value),
    };
    let (body_ty, resp_ty) = (ty(e.body), ty(e.response));
    let fut = |out: TokenStream| quote!(impl ::std::future::Future<Output = ::std::result::Result<#out, #rest::Error>> + ::std::marker::Send);
    match e.op {
        ExtensionOp::Get => {
            let ret = fut(resp_ty);
            (quote!(fn #f(&self, name: &str) -> #ret), quote!(self.get_subresource(name, #sub, &())))
        }
        ExtensionOp::Create => {
            let ret = fut(resp_ty);
            (
                quote!(fn #f(&self, name: &str, body: &#body_ty, opts: &#rest::CreateOptions) -> #ret),
                quote!(self.create_subresource(name, #sub, body, opts)),
            )
        }
        ExtensionOp::Update => {
            let ret = fut(resp_ty);
            (
                quote!(fn #f(&self, name: &str, body: &#body_ty, opts: &#rest::UpdateOptions) -> #ret),
                quote!(self.update_subresource(name, #sub, body, opts)),
            )
        }
        ExtensionOp::Patch => {
            let ret = fut(resp_ty);
            (
                quote!(fn #f(&self, name: &str, patch: &#rest::Patch, opts: &#rest::PatchOptions) -> #ret),
                quote!(self.patch_subresource(name, #sub, patch, opts)),
            )
        }
        ExtensionOp::Apply => {
            let ret = fut(resp_ty);
            (
                quote!(fn #f<B: ::serde::Serialize + ?Sized + ::std::marker::Sync>(&self, name: &str, config: &B, opts: &#rest::ApplyOptions) -> #ret),
                quote!(self.apply_subresource(name, #sub, config, opts)),
            )
        }
        ExtensionOp::Text | ExtensionOp::Stream => {
            let params = params_name(e);
            if e.op == ExtensionOp::Text {
                let ret = fut(quote!(::std::string::String));
                (
                    quote!(fn #f(&self, name: &str, params: &#params) -> #ret),
                    quote!(self.get_subresource_text(name, #sub, params)),
                )
            } else {
                let ret = fut(quote!(#rest::ByteStream));
                (
                    quote!(fn #f(&self, name: &str, params: &#params) -> #ret),
                    quote!(self.stream_subresource(name, #sub, params)),
                )
            }
        }
    }
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
        let doc = p.doc.as_deref().map(text::doc);
        quote! {
            #doc
            #[serde(rename = #json, skip_serializing_if = "::std::option::Option::is_none")]
            pub #f: ::std::option::Option<#ty>,
        }
    });
    let doc = text::doc(&format!("Query parameters of the `{}` subresource.", sub.name));
    quote! {
        #doc
        #[derive(Clone, Debug, Default, PartialEq, ::serde::Serialize)]
        pub struct #name {
            #(#fields)*
        }
    }
}

/// `src/clientset/mod.rs`: the root with one accessor per group/version.
pub fn emit_clientset(plan: &Plan) -> TokenStream {
    let rest = rest();
    let mut mods = Vec::new();
    let mut accessors = Vec::new();
    for gv in plan.group_versions.values() {
        let module = ident(&gv.module);
        let ty = format_ident!("{}Client", gv.type_prefix);
        let g = gate(gv.feature);
        let doc = text::doc(&format!("Clients for `{}`.", gv.api_version));
        mods.push(quote! { #g pub mod #module; });
        accessors.push(quote! {
            #doc
            #g
            pub fn #module(&self) -> #module::#ty {
                #module::#ty::new(self.client.clone())
            }
        });
    }
    let skipped_doc = if plan.skipped.is_empty() {
        quote!()
    } else {
        let list: Vec<String> = plan.skipped.iter().map(|s| format!("- {s}")).collect();
        text::doc(&format!(
            "\nResources without a typed client (use the DynamicClient for these):\n{}",
            list.join("\n")
        ))
    };
    let mut doc = String::from("The typed ClientSet (client-go's `kubernetes.Clientset`)");
    if let Some(e) = plan.doc_example() {
        let namespace = if e.namespaced { "\"ns\"" } else { "" };
        doc.push_str(&format!(":\n`clientset.{}().{}({namespace}).list(&opts)`", e.module, e.resources));
    }
    doc.push('.');
    let doc = text::inner_doc(&doc);
    quote! {
        #doc

        #(#mods)*

        /// One client per group/version, sharing one connection pool and rate limiter.
        #skipped_doc
        #[derive(Clone, Debug)]
        pub struct Clientset {
            client: #rest::Client,
        }

        impl Clientset {
            /// A ClientSet over an existing REST client.
            pub fn new(client: #rest::Client) -> Self {
                Clientset { client }
            }

            /// A ClientSet for the inferred configuration: `KUBECONFIG` or
            /// `~/.kube/config`, else the in-cluster service account.
            pub fn try_default() -> ::std::result::Result<Self, #rest::Error> {
                #rest::Client::try_default().map(Clientset::new)
            }

            /// The REST client underneath (client-go's `RESTClient()`).
            pub fn rest_client(&self) -> &#rest::Client {
                &self.client
            }

            #(#accessors)*
        }
    }
}
