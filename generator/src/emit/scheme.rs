//! `src/scheme.rs` of the generated crate: every kind with its
//! group/version/kind and typed codecs (of the kind, its protobuf form and
//! its apply configuration), like client-go's `scheme` package.

use proc_macro2::TokenStream;
use quote::quote;

use super::tokens::{type_path, type_path_named};
use crate::ir::Api;
use crate::plan::Plan;

/// `src/scheme.rs`: the kinds the plan registers.
pub fn emit_scheme(api: &Api, plan: &Plan) -> TokenStream {
    let entries = plan.scheme.iter().map(|(def, gvk)| {
        let (group, version, kind) = (&gvk.group, &gvk.version, &gvk.kind);
        let ty = type_path(api, &def.schema_name);
        let gate = def.feature.as_ref().map(|f| quote!(#[cfg(feature = #f)]));
        let has_message = api.protobuf.as_ref().is_some_and(|p| p.types.contains_key(&def.schema_name));
        let protobuf = if has_message { quote!(protobuf::<#ty>()) } else { quote!(::std::option::Option::None) };
        // The apply configuration exists only with its feature: named only then.
        let apply = plan.structs.get(def.schema_name.as_str()).and_then(|sp| sp.apply.as_ref()).map(|a| {
            let feature = super::apply::FEATURE;
            let apply_ty = type_path_named(api, &def.schema_name, &a.name);
            quote! {
                #[cfg(feature = #feature)]
                transcode_apply: ::std::option::Option::Some(::k8s_client_runtime::object::transcode::<#apply_ty>),
                #[cfg(not(feature = #feature))]
                transcode_apply: ::std::option::Option::None,
            }
        });
        let apply = apply.unwrap_or_else(|| quote!(transcode_apply: ::std::option::Option::None,));
        quote! {
            #gate
            ::k8s_client_runtime::object::KindEntry {
                group: #group,
                version: #version,
                kind: #kind,
                transcode: ::k8s_client_runtime::object::transcode::<#ty>,
                transcode_protobuf: #protobuf,
                #apply
            },
        }
    });
    let feature = super::protobuf::FEATURE;
    let protobuf_fn = api.protobuf.is_some().then(|| {
        quote! {
            /// The protobuf transcode of a kind, with the `protobuf` feature.
            #[cfg(feature = #feature)]
            const fn protobuf<T>() -> ::std::option::Option<::k8s_client_runtime::object::ProtobufTranscode>
            where
                T: ::k8s_client_runtime::protobuf::DecodeProto + ::k8s_client_runtime::protobuf::EncodeProto + ::serde::Serialize,
            {
                ::std::option::Option::Some(::k8s_client_runtime::object::transcode_protobuf::<T>)
            }

            /// Without the `protobuf` feature, no kind has a protobuf transcode.
            #[cfg(not(feature = #feature))]
            const fn protobuf<T>() -> ::std::option::Option<::k8s_client_runtime::object::ProtobufTranscode> {
                ::std::option::Option::None
            }
        }
    });
    quote! {
        //! Every kind of this crate (with the enabled features), by group, version and kind.

        #protobuf_fn

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
