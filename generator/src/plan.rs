//! What each kind and group/version gets, decided once from the IR.
//!
//! The emitters only render a [`Plan`]: which schemas implement the
//! runtime's `Resource`/`Object` traits, which kinds have a client, lister
//! and informer, which subresources are regular (`status`, `scale`: marker
//! traits the runtime turns into methods) and which need a generated
//! extension method, every name, apiVersion string and feature gate.
//! Everything is in sorted maps, so the output never depends on input order.

use std::collections::{BTreeMap, BTreeSet};

use crate::error::Result;
use crate::ir::{Api, FieldType, Gvk, OBJECT_META, Resource, Shape, Subresource, TypeDef, Verb, api_version};
use crate::naming::{self, GroupNames};

pub mod apply;
mod clashes;
pub mod fields;

pub use apply::{ApplyField, ApplyKind, ApplyPlan, ApplyType, Builder, Merge};
pub use fields::{Codec, Embedding, FieldPlan, Seed, StructPlan};

/// Everything the emitters need beyond the type definitions.
#[derive(Debug, Default)]
pub struct Plan<'a> {
    /// Schemas served as exactly one resource, keyed by schema name.
    pub kinds: BTreeMap<&'a str, KindPlan<'a>>,
    /// Group/versions with at least one typed client, keyed by (group, version).
    pub group_versions: BTreeMap<(String, String), GroupVersionPlan<'a>>,
    /// Resources without a typed client, with the reason.
    pub skipped: Vec<String>,
    /// Every generated struct and its fields, keyed by schema name.
    pub structs: BTreeMap<&'a str, StructPlan<'a>>,
    /// What the crate's scheme registers: every kind, and every schema
    /// registered under several GVKs (`DeleteOptions`), by schema name.
    pub scheme: Vec<(&'a TypeDef, &'a Gvk)>,
    /// The deepest chain of object types held inside one another.
    pub nesting: usize,
    /// The schemas whose types implement the runtime's `Schema` (their
    /// structural OpenAPI schema, for CRDs written from Rust): see
    /// [`schemas`].
    pub schemas: BTreeSet<&'a str>,
}

/// A schema that implements the runtime's `Resource` trait.
#[derive(Debug)]
pub struct KindPlan<'a> {
    /// The one resource serving the kind: its group, version and plural
    /// make the `Resource` impl.
    pub resource: &'a Resource,
    /// `group/version`, or `version` for the core group.
    pub api_version: String,
    /// The kind of its lists: the list schema's kind, else `<Kind>List`
    /// (a CRD's `listKind` need not be that).
    pub list_kind: String,
    /// Whether it has `metadata: ObjectMeta`, so it also implements `Object`.
    pub object: bool,
}

/// The clients, listers and informers of one group/version.
#[derive(Debug)]
pub struct GroupVersionPlan<'a> {
    /// API group; empty for the core group.
    pub group: String,
    /// Version within the group.
    pub version: String,
    /// `group/version`, or `version` for the core group: what the docs of
    /// its clients and informers name.
    pub api_version: String,
    /// Module and accessor name (`apps_v1`).
    pub module: String,
    /// Type-name prefix (`AppsV1`).
    pub type_prefix: String,
    /// The Cargo feature of the group, if any.
    pub feature: Option<&'a str>,
    /// One typed client per resource, in plural order.
    pub clients: Vec<ClientPlan<'a>>,
}

impl GroupVersionPlan<'_> {
    /// Whether any resource of the group/version has a lister and informer.
    pub fn has_informers(&self) -> bool {
        self.clients.iter().any(|c| c.informable)
    }
}

impl Plan<'_> {
    /// The group/version and informable resource a crate's own docs show in
    /// examples (`apps_v1().deployments(..)` where the crate has them, else
    /// its first), so every generated text names what the crate holds.
    pub fn doc_example(&self) -> Option<DocExample<'_>> {
        fn informable<'g, 'a>(gv: &'g GroupVersionPlan<'a>, method: Option<&str>) -> Option<&'g ClientPlan<'a>> {
            gv.clients.iter().find(|c| c.informable && method.is_none_or(|m| c.method == m))
        }
        let (gv, client) = self
            .group_versions
            .values()
            .find(|gv| gv.module == "apps_v1")
            .and_then(|gv| Some((gv, informable(gv, Some("deployments"))?)))
            .or_else(|| self.group_versions.values().find_map(|gv| Some((gv, informable(gv, None)?))))?;
        let clients = || self.group_versions.values().flat_map(|gv| &gv.clients);
        // Pod logs are the one everybody knows.
        let pod_logs = clients()
            .filter(|c| c.method == "pods")
            .find_map(|c| c.extensions.iter().find(|e| e.item.name == "log").map(|e| (c, e)));
        let extension = pod_logs
            .or_else(|| clients().find_map(|c| Some((c, c.extensions.first()?))))
            .map(|(c, e)| (c.method.as_str(), e.item.name.as_str()));
        Some(DocExample {
            module: &gv.module,
            resources: &client.method,
            namespaced: client.resource.namespaced,
            extension,
        })
    }
}

/// What generated docs show as an example; see [`Plan::doc_example`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DocExample<'p> {
    /// The group/version accessor (`apps_v1`).
    pub module: &'p str,
    /// The resource accessor (`deployments`).
    pub resources: &'p str,
    /// Whether the resource accessor takes a namespace.
    pub namespaced: bool,
    /// A resource accessor and one of its irregular subresource methods
    /// (`pods`, `create_eviction`), if the crate has any.
    pub extension: Option<(&'p str, &'p str)>,
}

/// One resource with a typed client.
#[derive(Debug)]
pub struct ClientPlan<'a> {
    /// The resource: its plural, scope and verbs.
    pub resource: &'a Resource,
    /// Schema of the objects.
    pub schema: &'a str,
    /// Accessor on the group/version client and informers (`config_maps`).
    pub method: String,
    /// The kind's type name (`ConfigMap`; `Postgresql` for the kind
    /// `postgresql`): prefix of the aliases `ConfigMapClient`,
    /// `ConfigMapLister`, ...
    pub kind: String,
    /// Listable and watchable: gets a lister and an informer.
    pub informable: bool,
    /// The verbs the resource serves, as the runtime's marker traits
    /// (`k8s_client_runtime::rest::verbs`): its client offers only these.
    pub verbs: Vec<&'static str>,
    /// `<Kind>Client`, the alias of the runtime's `ResourceClient<K>`.
    pub client_alias: String,
    /// `<Kind>ClientExt`, the trait of the irregular subresources.
    pub ext_trait: String,
    /// `<Kind>Lister`.
    pub lister_alias: String,
    /// `<Kind>NamespaceLister`, for a namespaced kind; `None` when a kind
    /// `<Kind>Namespace` of the group/version has that name for its lister
    /// (a kind's own lister comes first).
    pub namespace_lister_alias: Option<String>,
    /// `<Kind>Informer`.
    pub informer_alias: String,
    /// Has a `status` subresource whose body is the object: `HasStatus`.
    pub status: bool,
    /// Has a `scale` subresource: `HasScale` with this body schema.
    pub scale: Option<Gated<'a, &'a str>>,
    /// Methods of the generated extension trait, for irregular subresources.
    pub extensions: Vec<Gated<'a, Extension<'a>>>,
    /// The runtime's streaming markers the kind implements, from its
    /// connect operations and its text `log` (`HasExec`, `HasAttach`,
    /// `HasPortForward`, `HasProxy`, `HasLog`), with the subresource each
    /// stands for.
    pub streams: Vec<Stream>,
    /// Connect subresources the runtime has no stream for, documented as
    /// not generated.
    pub connect: Vec<String>,
}

/// A streaming subresource the runtime serves through a marker trait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stream {
    /// The marker trait in `k8s_client_runtime::rest`.
    pub marker: &'static str,
    /// The subresource (`exec`).
    pub subresource: &'static str,
    /// The runtime module with its methods (`remotecommand`).
    pub module: &'static str,
    /// The crate feature the marker is behind, when the runtime's stream
    /// is behind one ([`WS`] for the WebSocket streams).
    pub feature: Option<RuntimeFeature>,
}

/// The streams of the runtime, by subresource. Exec, attach, port-forward
/// and proxy are connect operations; `log` is a text GET.
const STREAMS: [Stream; 5] = [
    Stream { marker: "HasAttach", subresource: "attach", module: "remotecommand", feature: Some(WS) },
    Stream { marker: "HasExec", subresource: "exec", module: "remotecommand", feature: Some(WS) },
    Stream { marker: "HasLog", subresource: "log", module: "logs", feature: None },
    Stream { marker: "HasPortForward", subresource: "portforward", module: "portforward", feature: Some(WS) },
    Stream { marker: "HasProxy", subresource: "proxy", module: "proxy", feature: None },
];

/// A Cargo feature of the generated crate that turns on a part of the
/// runtime (one of its features) and what the crate builds on it, so a
/// program that does not use that part compiles neither.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuntimeFeature {
    /// The feature's name, in the generated crate and in the runtime.
    pub name: &'static str,
    /// What it holds, for the comment in Cargo.toml.
    pub doc: &'static str,
}

/// The `listers` and `informers` modules and the prelude's informer
/// accessors, on the runtime's informers.
pub const INFORMERS: RuntimeFeature = RuntimeFeature {
    name: "informers",
    doc: "Listers and informers (`listers`, `informers`, the prelude's accessors) on the runtime's informers.",
};

/// Exec, attach and port-forward of the kinds that have them, on the
/// runtime's WebSocket streams.
pub const WS: RuntimeFeature = RuntimeFeature {
    name: "ws",
    doc: "Exec, attach and port-forward (`HasExec`, `HasAttach`, `HasPortForward`) on the runtime's WebSockets.",
};

impl Plan<'_> {
    /// The runtime features this crate forwards: [`INFORMERS`] when a
    /// resource has an informer, [`WS`] when a kind has a WebSocket stream.
    pub fn runtime_features(&self) -> Vec<RuntimeFeature> {
        let clients = || self.group_versions.values().flat_map(|gv| &gv.clients);
        let informers = clients().any(|c| c.informable).then_some(INFORMERS);
        let ws = clients().flat_map(|c| &c.streams).find_map(|s| s.feature);
        informers.into_iter().chain(ws).collect()
    }
}

/// The runtime's stream of a subresource, if it has one.
fn stream_of(subresource: &str) -> Option<Stream> {
    STREAMS.into_iter().find(|s| s.subresource == subresource)
}

/// An item that exists only when these Cargo features are on (types of
/// another group in its signature).
#[derive(Debug, Clone)]
pub struct Gated<'a, T> {
    /// The features that must all be on, beside the kind's own; empty when
    /// the item is always there.
    pub features: BTreeSet<&'a str>,
    /// The gated item.
    pub item: T,
}

/// A method of a kind's extension trait.
#[derive(Debug, Clone)]
pub struct Extension<'a> {
    /// `create_eviction`, `log`, ...
    pub name: String,
    /// The subresource's name, the last segment of its path (`eviction`).
    pub subresource: &'a str,
    /// What the method does, which picks its signature.
    pub op: ExtensionOp,
    /// Body type: a schema, or the kind itself.
    pub body: Body<'a>,
    /// Answer type.
    pub response: Body<'a>,
    /// `<Kind><Subresource>Params`, the parameters of a text read and of
    /// its stream.
    pub params: Option<String>,
}

/// What an extension method does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExtensionOp {
    /// A GET of a JSON answer (`get_<sub>`).
    Get,
    /// A POST of a body (`create_<sub>`: an eviction, a token request).
    Create,
    /// A PUT of the whole subresource (`update_<sub>`).
    Update,
    /// A PATCH of a runtime `Patch` (`patch_<sub>`).
    Patch,
    /// A server-side apply, a PATCH of an apply configuration
    /// (`apply_<sub>`); every patchable subresource gets one beside `Patch`.
    Apply,
    /// A GET whose answer is text (pod logs), with a params struct.
    Text,
    /// The same as a byte stream (for `follow`).
    Stream,
}

/// The type of a body or answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Body<'a> {
    /// The type of this schema (the kind's own when the subresource serves
    /// the kind).
    Schema(&'a str),
    /// Any JSON (`serde_json::Value`): the spec names no schema and the
    /// subresource's kind is not the resource's.
    Json,
}

/// Resolves the plan, with the group/versions named by `names`
/// ([`naming::GroupNames`]). Fails when two groups, or two items of one
/// module, would get the same name: the crate would not compile.
pub fn plan<'a>(api: &'a Api, names: &GroupNames) -> Result<Plan<'a>> {
    let scheme = api
        .types
        .values()
        .filter(|d| !d.external && (d.is_kind() || d.gvks.len() > 1))
        .flat_map(|d| d.gvks.iter().map(move |gvk| (d, gvk)))
        .collect();
    let mut plan = Plan {
        structs: fields::structs(api),
        scheme,
        nesting: fields::nesting_depth(api),
        schemas: schemas(api),
        ..Plan::default()
    };
    let mut served: BTreeMap<&str, Vec<&Resource>> = BTreeMap::new();
    for r in api.resources.values() {
        if let Some(s) = &r.type_schema {
            served.entry(s.as_str()).or_default().push(r);
        }
    }
    for (schema, rs) in &served {
        let Some(def) = api.types.get(*schema) else { continue };
        if rs.len() != 1 || !def.is_kind() {
            continue;
        }
        let r = rs[0];
        plan.kinds.insert(
            schema,
            KindPlan {
                resource: r,
                api_version: api_version(&r.group, &r.version),
                list_kind: list_kind(api, r),
                object: has_object_meta(def),
            },
        );
    }
    for r in api.resources.values() {
        let id = format!("{}/{} {}", if r.group.is_empty() { "core" } else { &r.group }, r.version, r.plural);
        let Some(schema) = r.type_schema.as_deref() else {
            plan.skipped.push(format!("{id}: no schema for kind {:?}", r.kind));
            continue;
        };
        let has_object = plan.kinds.get(schema).is_some_and(|k| std::ptr::eq(k.resource, r) && k.object);
        if !has_object {
            plan.skipped
                .push(format!("{id}: kind {} has no object metadata or is served by several resources", r.kind));
            continue;
        }
        if r.verbs.is_empty() && r.subresources.is_empty() {
            continue;
        }
        let feature = api.types[schema].feature.as_deref();
        let client = client_plan(api, r, schema);
        plan.group_versions
            .entry((r.group.clone(), r.version.clone()))
            .or_insert_with(|| GroupVersionPlan {
                group: r.group.clone(),
                version: r.version.clone(),
                api_version: api_version(&r.group, &r.version),
                module: names.method(&r.group, &r.version),
                type_prefix: names.type_prefix(&r.group, &r.version),
                feature,
                clients: Vec::new(),
            })
            .clients
            .push(client);
    }
    for gv in plan.group_versions.values_mut() {
        leave_lister_names_to_their_kinds(gv);
    }
    let apply_names = apply::apply_names(api);
    for (schema, sp) in &mut plan.structs {
        sp.apply = apply::apply_plan(api, &apply_names, sp, plan.kinds.get(schema));
    }
    clashes::check(api, &plan, names)?;
    Ok(plan)
}

/// The schemas that get a `Schema` impl: every type the user declared,
/// and every generated type of no feature (apimachinery's, a
/// custom-resource crate's) whose fields' types all have one, down to
/// the leaves, so that a derived type may hold it. Types of a feature
/// (core's `PodSpec`) have none: their schemas would be compiled into
/// every program using the group. The schema-or-X unions of
/// `JSONSchemaProps` have none: they are not structural.
pub fn schemas(api: &Api) -> BTreeSet<&str> {
    let candidate = |d: &TypeDef| {
        d.declared_at.is_some()
            || (d.feature.is_none()
                && !d.is_kind()
                && !matches!(
                    d.shape,
                    Shape::Special(
                        crate::ir::Special::SchemaOrArray
                            | crate::ir::Special::SchemaOrBool
                            | crate::ir::Special::SchemaOrStringArray
                    )
                ))
    };
    let mut with: BTreeSet<&str> =
        api.types.values().filter(|d| candidate(d)).map(|d| d.schema_name.as_str()).collect();
    // Drop every type holding one without, until none is left to drop.
    loop {
        let without: Vec<&str> = with
            .iter()
            .copied()
            .filter(|s| {
                let def = &api.types[*s];
                // Answers for itself where it is written.
                if def.external {
                    return false;
                }
                let Shape::Struct(fields) = &def.shape else { return false };
                let mut refs = BTreeSet::new();
                fields.iter().for_each(|f| f.ty.refs(&mut refs));
                refs.iter().any(|r| !with.contains(r.as_str()))
            })
            .collect();
        if without.is_empty() {
            break;
        }
        without.iter().for_each(|s| {
            with.remove(s);
        });
    }
    // External and declared types have their impls where they are written.
    with.retain(|s| !api.types[*s].external);
    with
}

/// A kind `<Kind>Namespace` beside `<Kind>` (Azure's `Eventhub` and
/// `EventhubNamespace`) would give two listers the name
/// `EventhubNamespaceLister`: the kind's own lister keeps it, and
/// `Eventhub`'s namespace lister is `NamespaceLister<Eventhub>` unaliased.
fn leave_lister_names_to_their_kinds(gv: &mut GroupVersionPlan) {
    let listers: BTreeSet<String> =
        gv.clients.iter().filter(|c| c.informable).map(|c| c.lister_alias.clone()).collect();
    for c in &mut gv.clients {
        if c.namespace_lister_alias.as_ref().is_some_and(|n| listers.contains(n)) {
            c.namespace_lister_alias = None;
        }
    }
}

/// The kind of a resource's lists: its list schema's, else `<kind>List`.
fn list_kind(api: &Api, r: &Resource) -> String {
    let list = r.list_schema.as_deref().and_then(|s| api.types.get(s)).and_then(|d| d.gvk.as_ref());
    list.map_or_else(|| format!("{}List", r.kind), |gvk| gvk.kind.clone())
}

fn has_object_meta(def: &TypeDef) -> bool {
    matches!(&def.shape, Shape::Struct(fields)
        if fields.iter().any(|f| f.json_name == "metadata" && f.ty == FieldType::Ref(OBJECT_META.into())))
}

fn client_plan<'a>(api: &'a Api, r: &'a Resource, schema: &'a str) -> ClientPlan<'a> {
    let kind = api.types[schema].rust_name.clone();
    let mut client = ClientPlan {
        resource: r,
        schema,
        method: naming::resource_method(&r.kind, &r.plural),
        informable: r.verbs.contains(&Verb::List) && r.verbs.contains(&Verb::Watch),
        verbs: r.verbs.iter().filter_map(|v| verb_marker(*v)).collect(),
        client_alias: format!("{kind}Client"),
        ext_trait: format!("{kind}ClientExt"),
        lister_alias: format!("{kind}Lister"),
        namespace_lister_alias: r.namespaced.then(|| format!("{kind}NamespaceLister")),
        informer_alias: format!("{kind}Informer"),
        kind,
        status: false,
        scale: None,
        extensions: Vec::new(),
        streams: Vec::new(),
        connect: Vec::new(),
    };
    let own_feature = api.types[schema].feature.as_deref();
    for sub in r.subresources.values() {
        if sub.verbs.contains(&Verb::Connect) {
            match stream_of(&sub.name).filter(|s| s.subresource != "log") {
                Some(stream) => client.streams.push(stream),
                None => client.connect.push(sub.name.clone()),
            }
            continue;
        }
        let same_kind = sub.gvk.as_ref().is_none_or(|g| g.kind == r.kind);
        let body = body_of(sub.body_schema.as_deref(), same_kind, schema);
        let response = body_of(sub.response_schema.as_deref(), same_kind, schema);
        let features = foreign_features(api, sub, own_feature);
        let regular_verbs = sub.verbs.iter().all(|v| matches!(v, Verb::Get | Verb::Update | Verb::Patch));
        if sub.name == "status" && regular_verbs && body == Body::Schema(schema) && response == body {
            client.status = true;
            continue;
        }
        if let (true, true, Body::Schema(scale)) = (sub.name == "scale", regular_verbs, response)
            && body == response
        {
            client.scale = Some(Gated { features, item: scale });
            continue;
        }
        let mut ops = extension_ops(sub);
        if sub.name == "log"
            && ops.contains(&ExtensionOp::Stream)
            && let Some(stream) = stream_of(&sub.name)
        {
            // The runtime's stream (`log_stream`, line by line) takes the
            // place of a generated byte stream of the same name.
            client.streams.push(stream);
            ops.retain(|op| *op != ExtensionOp::Stream);
        }
        for op in ops {
            let name = extension_name(&sub.name, op);
            let text = matches!(op, ExtensionOp::Text | ExtensionOp::Stream);
            let params = text.then(|| format!("{}{}Params", client.kind, naming::pascal(&sub.name)));
            let item = Extension { name, subresource: &sub.name, op, body, response, params };
            client.extensions.push(Gated { features: features.clone(), item });
        }
    }
    client
}

fn body_of<'a>(schema: Option<&'a str>, same_kind: bool, kind_schema: &'a str) -> Body<'a> {
    match (schema, same_kind) {
        (Some(s), _) => Body::Schema(s),
        (None, true) => Body::Schema(kind_schema),
        (None, false) => Body::Json,
    }
}

/// Features of the subresource's types that are not the kind's own: a
/// subresource of another group's kind (Scale, Eviction) exists only when
/// that group is compiled in.
fn foreign_features<'a>(api: &'a Api, sub: &Subresource, own: Option<&str>) -> BTreeSet<&'a str> {
    [&sub.body_schema, &sub.response_schema]
        .into_iter()
        .flatten()
        // A type of the Kubernetes crate a custom-resource crate depends on
        // is always there: that crate's features are set in Cargo.toml.
        .filter_map(|s| api.types.get(s.as_str()).filter(|d| !d.external).and_then(|d| d.feature.as_deref()))
        .filter(|f| Some(*f) != own)
        .collect()
}

fn extension_ops(sub: &Subresource) -> Vec<ExtensionOp> {
    // A GET whose answer is not JSON (pod logs) is text, with typed parameters.
    let text = sub.verbs.contains(&Verb::Get) && sub.response_schema.is_none() && !sub.params.is_empty();
    let mut ops = Vec::new();
    for verb in &sub.verbs {
        match verb {
            Verb::Get if text => ops.extend([ExtensionOp::Text, ExtensionOp::Stream]),
            Verb::Get => ops.push(ExtensionOp::Get),
            Verb::Create => ops.push(ExtensionOp::Create),
            Verb::Update => ops.push(ExtensionOp::Update),
            Verb::Patch => ops.extend([ExtensionOp::Patch, ExtensionOp::Apply]),
            // Nothing in the apiserver lists, watches or deletes a subresource.
            Verb::List | Verb::Watch | Verb::Delete | Verb::DeleteCollection | Verb::Connect => {}
        }
    }
    ops
}

/// The runtime's marker trait of a verb; connect operations have none.
fn verb_marker(verb: Verb) -> Option<&'static str> {
    Some(match verb {
        Verb::Get => "Get",
        Verb::List => "List",
        Verb::Watch => "Watch",
        Verb::Create => "Create",
        Verb::Update => "Update",
        Verb::Patch => "Patch",
        Verb::Delete => "Delete",
        Verb::DeleteCollection => "DeleteCollection",
        Verb::Connect => return None,
    })
}

/// `get_s`, `create_s`, `update_s`, `patch_s`, `apply_s`; `log` and `log_stream`
/// (a text subresource without a runtime stream).
pub fn extension_name(subresource: &str, op: ExtensionOp) -> String {
    let snake = naming::snake(subresource);
    match op {
        ExtensionOp::Get => format!("get_{snake}"),
        ExtensionOp::Create => format!("create_{snake}"),
        ExtensionOp::Update => format!("update_{snake}"),
        ExtensionOp::Patch => format!("patch_{snake}"),
        ExtensionOp::Apply => format!("apply_{snake}"),
        ExtensionOp::Text => snake,
        ExtensionOp::Stream => format!("{snake}_stream"),
    }
}
