//! The non-type files of the generated crate: `lib.rs`, `prelude.rs`,
//! `Cargo.toml` (with one feature per API group) and `README.md`.

use std::collections::{BTreeMap, BTreeSet};

use askama::Template;
use proc_macro2::TokenStream;
use quote::quote;

use quote::format_ident;

use super::tokens::{gate, ident, type_path};
use super::{CLIENT_PACKAGE, GENERATOR, Options, header, text};
use crate::error::{Error, Result};
use crate::ir::{Api, Shape};
use crate::lower;
use crate::plan::{INFORMERS, Plan, RuntimeFeature};

/// A Cargo feature of the generated crate.
#[derive(Debug, Clone)]
pub struct Feature {
    /// The feature's name, the group's Go package (`apps`, `networking`),
    /// as [`crate::naming::module_feature`] makes it.
    pub name: String,
    /// Other features whose types this one's types use.
    pub deps: Vec<String>,
    /// Rust modules (`api::apps`) the feature turns on.
    pub modules: Vec<String>,
}

/// One feature per API group, with the groups each needs.
pub fn features(api: &Api) -> Vec<Feature> {
    let mut deps: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut modules: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for def in api.types.values().filter(|d| !d.external) {
        let Some(feature) = &def.feature else { continue };
        let entry = deps.entry(feature.clone()).or_default();
        let prefix_len = def.module.iter().position(|m| m == feature).map_or(def.module.len(), |i| i + 1);
        modules.entry(feature.clone()).or_default().insert(format!("`{}`", def.module[..prefix_len].join("::")));
        let mut refs = BTreeSet::new();
        if let Shape::Struct(fields) = &def.shape {
            for f in fields {
                f.ty.refs(&mut refs);
            }
        }
        for r in refs {
            if let Some(other) = api.types.get(&r).and_then(|d| d.feature.as_ref())
                && other != feature
            {
                entry.insert(other.clone());
            }
        }
    }
    deps.into_iter()
        .map(|(name, deps)| Feature {
            modules: modules.remove(&name).unwrap_or_default().into_iter().collect(),
            name,
            deps: deps.into_iter().collect(),
        })
        .collect()
}

/// The features of the Kubernetes crate that the external types this crate
/// uses live behind (`autoscaling` for `Scale`).
pub fn client_features(api: &Api, plan: &Plan) -> Vec<String> {
    let mut refs = BTreeSet::new();
    for def in api.types.values().filter(|d| !d.external) {
        if let Shape::Struct(fields) = &def.shape {
            for f in fields {
                f.ty.refs(&mut refs);
            }
        }
    }
    for gv in plan.group_versions.values() {
        for c in &gv.clients {
            refs.extend(c.scale.iter().map(|s| s.item.to_owned()));
        }
    }
    let features: BTreeSet<String> =
        refs.iter().filter_map(|r| api.types.get(r)).filter(|d| d.external).filter_map(|d| d.feature.clone()).collect();
    features.into_iter().collect()
}

/// Every input text in it is a TOML string ([`text::toml_string`]) or a
/// comment ([`text::comment`]); feature names are module names, which are
/// plain identifiers.
#[derive(Template)]
#[template(path = "Cargo.toml.j2", escape = "none")]
struct CargoToml<'a> {
    generator: &'a str,
    /// The input's label, for the header comment.
    source: String,
    /// The TOML strings of the package's name and description.
    crate_name: String,
    description: String,
    /// The TOML string of the crate's version.
    version: String,
    /// The TOML string of the version requirement on the runtime (and the
    /// Kubernetes crate).
    runtime_version: String,
    /// The TOML string of the runtime crate's path, if one is written.
    runtime_path: Option<String>,
    standalone: bool,
    features: &'a [Feature],
    /// The runtime's parts the crate builds on, each a feature forwarded.
    runtime_features: &'a [RuntimeFeature],
    /// The default features: every group's, the runtime parts', protobuf.
    defaults: Vec<&'a str>,
    /// The crate's types have protobuf codecs (the `protobuf` feature).
    protobuf: bool,
    /// The Kubernetes crate, when types are taken from it: package, path
    /// (a TOML string, if one is written), features.
    client: Option<(&'a str, Option<String>, &'a [String])>,
    /// The crate offers the derives ([`has_derive`]).
    derive: bool,
    /// The TOML string of the derives' crate's path, if one is written.
    derive_path: Option<String>,
}

/// The derives' package (`#[derive(CustomResource)]`), behind the
/// Kubernetes crate's `derive` feature.
pub const DERIVE_PACKAGE: &str = "k8s-client-derive";

/// Whether the crate offers the derives (feature `derive`): the
/// Kubernetes crate does, when it has the CRD type they return.
pub fn has_derive(api: &Api, features: &[Feature]) -> bool {
    api.external_crate.is_none() && features.iter().any(|f| f.name == "apiextensions")
}

/// `source` is a [`text::comment`]; the other texts are names.
#[derive(Template)]
#[template(path = "README.md.j2", escape = "none")]
struct Readme<'a> {
    generator: &'a str,
    source: String,
    crate_name: &'a str,
    crate_ident: String,
    type_count: usize,
    resource_count: usize,
    /// For a crate of custom resources: each kind and its Rust path.
    custom_kinds: Option<Vec<(String, String)>>,
    features: &'a [Feature],
    runtime_features: &'a [RuntimeFeature],
}

fn render(what: &str, t: &impl Template) -> Result<String> {
    t.render()
        .map(|s| s + "\n")
        .map_err(|e| Error::Check(format!("rendering {what}: {}", k8s_client_runtime::ErrorChain(&e))))
}

/// The crate's `Cargo.toml`: package, the runtime (and, for custom
/// resources, the Kubernetes crate with `client_features`) by path, and
/// one feature per API group, all on by default.
pub fn cargo_toml(
    api: &Api,
    opts: &Options,
    features: &[Feature],
    client_features: &[String],
    runtime_features: &[RuntimeFeature],
) -> Result<String> {
    check_package_name(&opts.crate_name)?;
    let client = api
        .external_crate
        .as_ref()
        .map(|_| (CLIENT_PACKAGE, opts.client_path.as_deref().map(text::toml_string), client_features));
    let version = opts.crate_version.as_deref().unwrap_or(super::DEFAULT_CRATE_VERSION);
    check_crate_version(version)?;
    let description =
        format!("Kubernetes API types, typed clients, listers and informers, generated from {}", opts.source_label);
    render(
        "Cargo.toml",
        &CargoToml {
            generator: GENERATOR,
            source: text::comment(&opts.source_label),
            crate_name: text::toml_string(&opts.crate_name),
            description: text::toml_string(&description),
            version: text::toml_string(version),
            runtime_version: text::toml_string(super::RUNTIME_VERSION),
            runtime_path: opts.runtime_path.as_deref().map(text::toml_string),
            standalone: opts.standalone,
            features,
            runtime_features,
            defaults: features
                .iter()
                .map(|f| f.name.as_str())
                .chain(runtime_features.iter().map(|f| f.name))
                .chain(api.protobuf.is_some().then_some("protobuf"))
                .collect(),
            protobuf: api.protobuf.is_some(),
            client,
            derive: has_derive(api, features),
            // The derives' crate lives beside the runtime.
            derive_path: opts.runtime_path.as_deref().map(|runtime| {
                let path = std::path::Path::new(runtime).with_file_name("derive");
                text::toml_string(&path.to_string_lossy())
            }),
        },
    )
}

/// The crate's `README.md`: what it was generated from, how many types
/// and resources it holds, its features and, for custom resources, each
/// kind's Rust path.
pub fn readme(api: &Api, opts: &Options, features: &[Feature], runtime_features: &[RuntimeFeature]) -> Result<String> {
    render(
        "README.md",
        &Readme {
            generator: GENERATOR,
            source: text::comment(&opts.source_label),
            crate_name: &opts.crate_name,
            crate_ident: opts.crate_name.replace('-', "_"),
            type_count: api.types.values().filter(|d| !d.external).count(),
            resource_count: api.resources.len(),
            custom_kinds: api.external_crate.as_ref().map(|_| custom_kinds(api)),
            features,
            runtime_features,
        },
    )
}

/// Refuses a package name that Cargo would not take or that would not stay
/// a name in Cargo.toml and the README: ASCII letters, digits, `-` and `_`,
/// starting with a letter, at most 64 characters.
pub fn check_package_name(name: &str) -> Result<()> {
    let valid = name.starts_with(|c: char| c.is_ascii_alphabetic())
        && name.len() <= 64
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if valid {
        Ok(())
    } else {
        Err(Error::Check(format!(
            "crate name {name:?} is not a package name (ASCII letters, digits, `-` and `_`, starting with a letter, at most 64 characters)"
        )))
    }
}

/// A crate version is semver: `MAJOR.MINOR.PATCH`, then an optional
/// pre-release (`-rc.1`) and build (`+k3s1`) of ASCII letters, digits, `.`
/// and `-`.
pub fn check_crate_version(version: &str) -> Result<()> {
    let core_end = version.find(['-', '+']).unwrap_or(version.len());
    let (core, rest) = version.split_at(core_end);
    let numbers: Vec<&str> = core.split('.').collect();
    let valid = numbers.len() == 3
        && numbers.iter().all(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
        && rest.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+'));
    if valid {
        Ok(())
    } else {
        Err(Error::Check(format!("crate version {version:?} is not a semver version such as 0.37.2")))
    }
}

/// `(group/version kind, Rust path)` of every served kind.
fn custom_kinds(api: &Api) -> Vec<(String, String)> {
    let mut kinds: Vec<(String, String)> = api
        .resources
        .values()
        .filter_map(|r| {
            let def = api.types.get(r.type_schema.as_deref()?)?;
            let gvk = def.gvk.as_ref()?;
            let path = [def.module.join("::"), def.rust_name.clone()].join("::");
            Some((format!("{} {}", gvk.api_version(), gvk.kind), path))
        })
        .collect();
    kinds.sort();
    kinds.dedup();
    kinds
}

/// `rustfmt.toml`: the generator already formats its output (prettyplease),
/// and `cargo fmt` in a workspace holding the crate must not rewrite it.
pub fn rustfmt_toml(source: &str) -> String {
    format!(
        "# @generated by {GENERATOR} from {}. DO NOT EDIT.\n\
         # Formatted by the generator; rustfmt leaves it as generated.\n\
         disable_all_formatting = true\n",
        text::comment(source)
    )
}

/// Beyond this depth of types nested in types, a crate raises its recursion
/// limit: the compiler's check that a type is `Send` goes through every
/// `Option<Box<_>>` and `Vec` level, and the 33-deep golden CRD overflowed
/// the default of 128 (the built-in API stays below this depth).
const DEEP_NESTING: usize = 20;

/// The docs of `CustomResource` in the Kubernetes crate.
const DERIVE_DOC: &str = r#"Makes a custom resource kind of a spec struct, from `#[resource(...)]`: the kind's struct (`metadata`, `spec`, and `status` when named), `new(name, spec)`, `crd()` (the CustomResourceDefinition, with the structural schema of the spec and status) and `crd_yaml()`, with everything a kind generated from a CRD has: the codec, the runtime's `Resource` and `Object`, and with the `apply` feature its apply configuration and `extract`. Types the spec and status hold derive [`Schema`](macro@Schema).

```ignore
use k8s_client::CustomResource;

#[derive(CustomResource, Clone, Debug, Default, PartialEq)]
#[resource(group = "example.com", version = "v1", kind = "Greeting", namespaced, status = "GreetingStatus")]
pub struct GreetingSpec {
    /// What to say.
    #[schema(min_length = 1)]
    pub message: String,
    #[schema(minimum = 0, maximum = 10)]
    pub replicas: Option<i32>,
}

#[derive(k8s_client::Schema, Clone, Debug, Default, PartialEq)]
pub struct GreetingStatus {
    pub observed_generation: Option<i64>,
}
```

JSON names are the lowerCamelCase of the field names unless `#[schema(rename = "...")]`; a field that is not an `Option` is required. The expansion names `::k8s_client`, `::k8s_client_runtime`, `::serde` and `::serde_json`: a crate deriving depends on all four. Keys of `#[resource(...)]`: `group`, `version`, `kind` (required), `namespaced`, `status = "Type"`, `plural`, `singular`, `shortname`, `category`, `printcolumn(name, type_, json_path, description, format, priority)`, `selectable`, `scale(spec_replicas_path, status_replicas_path, label_selector_path)`, `served`, `deprecated`. Several versions of a kind (one module each) make one CRD with `k8s_client::runtime::schema::merge_crds`."#;

/// `src/lib.rs`; `nesting` is the deepest chain of types inside types.
pub fn lib_rs(opts: &Options, plan: &Plan, derive: bool, modules: TokenStream) -> Result<String> {
    let nesting = plan.nesting;
    let mut front =
        format!("Kubernetes API types and clients generated from `{}`. See the crate README.", opts.source_label);
    if let Some(e) = plan.doc_example() {
        let krate = opts.crate_name.replace('-', "_");
        let namespace = if e.namespaced { "\"default\"" } else { "" };
        front.push_str(&format!(
            "\n\n\
            - [`clientset`]: the typed ClientSet (client-go's `kubernetes.Clientset`), one\n  \
              `ResourceClient` per resource with the verbs it serves.\n\
            - [`informers`] and [`listers`]: typed accessors on the runtime's\n  \
              `SharedInformerFactory`, and the listers' names.\n\
            - [`prelude`]: `use {krate}::prelude::*;` brings the accessors into scope.\n\
            - [`runtime`]: `k8s-client-runtime`, where the client, informers, workqueue,\n  \
              events and leader election live, with a table of where each client-go\n  \
              concept is.\n\
            \n\
            ```ignore\n\
            use {krate}::clientset::Clientset;\n\
            use {krate}::prelude::*;\n\
            use {krate}::runtime::{{Client, cache::SharedInformerFactory}};\n\
            \n\
            let client = Client::try_default()?;\n\
            let listed = Clientset::new(client.clone()).{m}().{r}({namespace}).list(&Default::default()).await?;\n\
            let factory = SharedInformerFactory::new(client, std::time::Duration::from_secs(300));\n\
            let lister = factory.{m}().{r}().lister();\n\
            factory.start();\n\
            factory.wait_for_cache_sync_within(std::time::Duration::from_secs(60)).await?;\n\
            ```",
            m = e.module,
            r = e.resources,
        ));
    }
    let doc = text::inner_doc(&front);
    let limit = (nesting > DEEP_NESTING).then(|| {
        let limit = (nesting * 8).next_power_of_two().max(256).to_string();
        quote!(#![recursion_limit = #limit])
    });
    let derive_items = derive.then(|| {
        let doc = text::doc(DERIVE_DOC);
        quote! {
            #doc
            #[cfg(feature = "derive")]
            pub use ::k8s_client_derive::CustomResource;
            /// Gives a struct or an enum of unit variants (a string enum) its codec, its
            /// structural schema (the runtime's [`Schema`](trait@Schema) trait) and its
            /// apply configuration, so that a derived kind can hold it. Keys of
            /// `#[schema(...)]` on fields: `rename`, `nullable`, `minimum`, `maximum`,
            /// `exclusive_minimum`, `exclusive_maximum`, `multiple_of`, `min_length`,
            /// `max_length`, `min_items`, `max_items`, `min_properties`, `max_properties`,
            /// `unique_items`, `pattern`, `format`, `title`, `default`, `default_json`,
            /// `list_type`, `list_map_keys`, `map_type`, `preserve_unknown_fields`,
            /// `embedded_resource`, `int_or_string` and `validation(rule = "...", message =
            /// "...")` (CEL), which also goes on the struct.
            #[cfg(feature = "derive")]
            pub use ::k8s_client_derive::Schema;
            pub use ::k8s_client_runtime::schema::Schema;
        }
    });
    let tokens = quote! {
        #doc
        #limit
        #![forbid(unsafe_code)]
        #![allow(clippy::all, clippy::pedantic, non_camel_case_types, rustdoc::all)]

        /// The runtime the generated code stands on (config, REST, informers, workqueue).
        pub use ::k8s_client_runtime as runtime;

        #derive_items

        #modules
    };
    let file: syn::File = syn::parse2(tokens).map_err(|source| Error::Emit { what: "src/lib.rs".into(), source })?;
    Ok(format!("{}\n{}", header(&opts.source_label), prettyplease::unparse(&file)))
}

/// Schemas whose types a program builds objects from, put in the prelude
/// when the crate has them (a CRD crate's are `k8s-client`'s, so glob
/// imports of several preludes name the same items).
const PRELUDE_TYPES: [&str; 5] =
    [crate::ir::OBJECT_META, lower::TIME, lower::MICRO_TIME, lower::QUANTITY, lower::INT_OR_STRING];

/// `src/prelude.rs`: the extension traits, imported anonymously so that
/// the preludes of several generated crates can be glob-imported together.
pub fn prelude(api: &Api, plan: &Plan) -> TokenStream {
    let exts = plan.group_versions.values().flat_map(|gv| {
        let module = ident(&gv.module);
        gv.clients.iter().filter(|c| !c.extensions.is_empty()).map(move |c| {
            let g = gate(gv.feature);
            let name = format_ident!("{}", c.ext_trait);
            quote!(#g pub use crate::clientset::#module::#name as _;)
        })
    });
    let mut doc = String::from(
        "`use <crate>::prelude::*;` brings the generated extension traits\ninto scope: the informer accessors of the shared informer factory",
    );
    if let Some(example) = plan.doc_example() {
        doc.push_str(&format!("\n(`factory.{}()`)", example.module));
        if let Some((resources, method)) = example.extension {
            doc.push_str(&format!(" and the methods of irregular subresources\n(`{resources}.{method}(..)`)"));
        }
    }
    doc.push_str(
        ", and what objects are built from: `ObjectMeta`, `Time`, `Quantity`,\n`IntOrString` (those this crate uses), the runtime's `Map`, `ThinVec`,\n`thin_vec!` and `LeanString`.",
    );
    let doc = text::inner_doc(&doc);
    let informers = plan.runtime_features().contains(&INFORMERS).then(|| {
        let g = gate([INFORMERS.name]);
        quote!(#g pub use crate::informers::InformerGroups as _;)
    });
    let values = PRELUDE_TYPES.iter().filter(|schema| api.types.contains_key(**schema)).map(|schema| {
        let path = type_path(api, schema);
        quote!(pub use #path;)
    });
    quote! {
        #doc

        pub use ::k8s_client_runtime::{LeanString, Map, ThinVec, thin_vec};
        #(#values)*
        #informers
        #(#exts)*
    }
}
