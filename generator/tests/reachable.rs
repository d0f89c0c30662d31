//! Every operation the 1.37 spec lists for a resource is reachable through
//! its typed client: counted once from the IR and once from the emitted
//! code (parsed with syn) plus the runtime's verb list (parsed from its
//! source), and the two counts must agree.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use k8s_client_gen::emit::Options;
use k8s_client_gen::ir::Verb;
use quote::ToTokens;

/// What the emitted clientset offers one kind (by its Rust path).
#[derive(Default, Debug)]
struct Emitted {
    aliased: bool,
    status: bool,
    scale: bool,
    /// The verb markers (`rest::verbs::List`, ...) the kind implements.
    verbs: BTreeSet<String>,
}

fn path_string(ty: &syn::Type) -> String {
    ty.to_token_stream().to_string().replace(' ', "")
}

/// Public `async fn` names of a runtime source file.
fn runtime_methods(file: &str) -> BTreeSet<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../runtime/src/rest").join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let parsed = syn::parse_file(&text).unwrap();
    let mut out = BTreeSet::new();
    for item in parsed.items {
        if let syn::Item::Impl(imp) = item {
            for it in imp.items {
                if let syn::ImplItem::Fn(f) = it
                    && matches!(f.vis, syn::Visibility::Public(_))
                    && f.sig.asyncness.is_some()
                {
                    out.insert(f.sig.ident.to_string());
                }
            }
        }
    }
    out
}

fn verb_method(verb: Verb) -> &'static str {
    match verb {
        Verb::Get => "get",
        Verb::List => "list",
        Verb::Watch => "watch",
        Verb::Create => "create",
        Verb::Update => "update",
        Verb::Patch => "patch",
        Verb::Delete => "delete",
        Verb::DeleteCollection => "delete_collection",
        Verb::Connect => unreachable!("connect operations are not generated"),
    }
}

fn sub_methods(sub: &str, verb: Verb) -> Vec<String> {
    match verb {
        Verb::Get => vec![format!("get_{sub}"), sub.to_owned()],
        Verb::Create => vec![format!("create_{sub}")],
        Verb::Update => vec![format!("update_{sub}")],
        Verb::Patch => vec![format!("patch_{sub}")],
        _ => vec![],
    }
}

#[test]
fn every_listed_operation_is_reachable_through_the_typed_client() {
    let specs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../specs/kubernetes/1.37");
    let opts = Options {
        crate_name: "k8s-client".into(),
        crate_version: None,
        runtime_path: Some("../runtime".into()),
        standalone: false,
        source_label: "kubernetes/1.37".into(),
        sources_in_label: true,
        client_path: Some("../generated".into()),
        group_names: Default::default(),
    };
    let k8s_client_gen::Generated { api, output, .. } =
        k8s_client_gen::generate_from_dir(&specs, &opts).expect("1.37 generates");

    // From the emitted code: aliases, marker impls, extension traits.
    let mut emitted: BTreeMap<String, Emitted> = BTreeMap::new();
    let mut ext_by_alias: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (rel, text) in &output.files {
        if !rel.starts_with("src/clientset") {
            continue;
        }
        let file = syn::parse_file(text).unwrap_or_else(|e| panic!("{}: {e}", rel.display()));
        for item in file.items {
            match item {
                syn::Item::Type(alias) => {
                    if let syn::Type::Path(p) = alias.ty.as_ref() {
                        let last = p.path.segments.last().unwrap();
                        if last.ident == "ResourceClient" {
                            let syn::PathArguments::AngleBracketed(args) = &last.arguments else { continue };
                            let Some(syn::GenericArgument::Type(k)) = args.args.first() else { continue };
                            emitted.entry(path_string(k)).or_default().aliased = true;
                        }
                    }
                }
                syn::Item::Impl(imp) => {
                    let Some((_, trait_path, _)) = &imp.trait_ else { continue };
                    let name = trait_path.segments.last().unwrap().ident.to_string();
                    let kind = path_string(&imp.self_ty);
                    let in_verbs = trait_path.segments.iter().any(|s| s.ident == "verbs");
                    match name.as_str() {
                        "HasStatus" => emitted.entry(kind).or_default().status = true,
                        "HasScale" => emitted.entry(kind).or_default().scale = true,
                        _ if in_verbs => {
                            emitted.entry(kind).or_default().verbs.insert(name);
                        }
                        _ => {}
                    }
                }
                syn::Item::Trait(t) => {
                    let methods = t.items.iter().filter_map(|i| match i {
                        syn::TraitItem::Fn(f) => Some(f.sig.ident.to_string()),
                        _ => None,
                    });
                    let alias = t.ident.to_string().trim_end_matches("Ext").to_owned();
                    ext_by_alias.entry(alias).or_default().extend(methods);
                }
                _ => {}
            }
        }
    }

    let verbs = runtime_methods("resource.rs");
    let subresource_methods = runtime_methods("subresource.rs");
    let (mut listed, mut reachable) = (0usize, 0usize);
    let mut missing = Vec::new();
    for r in api.resources.values() {
        let schema = r.type_schema.as_deref().expect("every 1.37 resource has a schema");
        let def = &api.types[schema];
        let kind_path = format!("crate::{}::{}", def.module.join("::"), def.rust_name);
        let e = emitted.get(&kind_path);
        let exts = ext_by_alias.get(&format!("{}Client", r.kind));
        let ops = r
            .verbs
            .iter()
            .map(|v| (None, *v))
            .chain(r.subresources.values().flat_map(|s| s.verbs.iter().map(move |v| (Some(s.name.as_str()), *v))));
        for (sub, verb) in ops.filter(|(_, v)| *v != Verb::Connect) {
            listed += 1;
            let ok = match sub {
                None => {
                    e.is_some_and(|e| e.aliased && e.verbs.contains(&format!("{verb:?}")))
                        && verbs.contains(verb_method(verb))
                }
                Some(s) => {
                    let regular =
                        (s == "status" && e.is_some_and(|e| e.status)) || (s == "scale" && e.is_some_and(|e| e.scale));
                    let names = sub_methods(s, verb);
                    (regular && names.iter().any(|n| subresource_methods.contains(n)))
                        || exts.is_some_and(|x| names.iter().any(|n| x.contains(n)))
                }
            };
            if ok {
                reachable += 1;
            } else {
                missing.push(format!("{} {} {:?}", r.plural, sub.unwrap_or(""), verb));
            }
        }
    }
    // And nothing more: a client offers only the verbs its resource serves
    // (TokenReview is only created).
    for r in api.resources.values() {
        let def = &api.types[r.type_schema.as_deref().unwrap()];
        let kind_path = format!("crate::{}::{}", def.module.join("::"), def.rust_name);
        let served: BTreeSet<String> =
            r.verbs.iter().filter(|v| **v != Verb::Connect).map(|v| format!("{v:?}")).collect();
        if let Some(e) = emitted.get(&kind_path).filter(|e| e.aliased) {
            assert_eq!(e.verbs, served, "{} offers other verbs than it serves", r.plural);
        }
    }
    let token_review = emitted.get("crate::api::authentication::v1::TokenReview").expect("TokenReview has a client");
    assert_eq!(token_review.verbs, BTreeSet::from(["Create".to_owned()]));
    eprintln!("operations listed by the 1.37 spec: {listed}; reachable through typed clients: {reachable}");
    assert!(listed > 500, "suspiciously few operations: {listed}");
    assert!(missing.is_empty(), "unreachable: {missing:#?}");
    assert_eq!(listed, reachable);
}
