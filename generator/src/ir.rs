//! The generator's intermediate representation: what the emitters need to
//! know about an API, and nothing about OpenAPI.
//!
//! Built by [`crate::spec`], read by [`crate::emit`]. Every collection is a
//! sorted map or a sorted vector, so the output never depends on input order.

use std::collections::{BTreeMap, BTreeSet};

pub mod proto;

/// `metav1.ObjectMeta`: a kind with it is an `Object`.
pub const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";
/// `metav1.ListMeta`, the metadata of lists.
pub const LIST_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta";
/// `metav1.LabelSelector`.
pub const LABEL_SELECTOR: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector";
/// `metav1.OwnerReference`: converts to and from the runtime's.
pub const OWNER_REFERENCE: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference";
/// `metav1.Condition`: the runtime's `StatusCondition`.
pub const CONDITION: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Condition";

/// Everything generated from one set of input documents.
#[derive(Debug, Default)]
pub struct Api {
    /// Type definitions keyed by schema name (`io.k8s.api.apps.v1.Deployment`).
    pub types: BTreeMap<String, TypeDef>,
    /// Served resources keyed by (group, version, plural).
    pub resources: BTreeMap<(String, String, String), Resource>,
    /// The crate (as a Rust identifier, `k8s_client`) providing the types
    /// marked [`TypeDef::external`].
    pub external_crate: Option<String>,
    /// The protobuf messages of the types, when the specs have `proto/`
    /// (built-in types only; see [`crate::protobuf`]).
    pub protobuf: Option<proto::Encodings>,
    /// The types are emitted where a derive expands, not into a crate's
    /// modules: code names them by their bare names.
    pub in_place: bool,
}

/// A group/version/kind as written in `x-kubernetes-group-version-kind`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Gvk {
    /// API group; empty for the core group (whose `apiVersion` is `v1`).
    pub group: String,
    /// Version within the group (`v1`, `v1beta1`).
    pub version: String,
    /// The kind's name as objects carry it (`Deployment`).
    pub kind: String,
}

impl Gvk {
    /// The `apiVersion` objects of this kind carry (see [`api_version`]).
    pub fn api_version(&self) -> String {
        api_version(&self.group, &self.version)
    }
}

/// `group/version`, or `version` for the core group.
pub fn api_version(group: &str, version: &str) -> String {
    if group.is_empty() { version.to_owned() } else { format!("{group}/{version}") }
}

/// One schema of `components.schemas`, ready to be emitted as one Rust type.
#[derive(Debug, Clone)]
pub struct TypeDef {
    /// The schema name, e.g. `io.k8s.api.core.v1.Pod`.
    pub schema_name: String,
    /// Module path below the crate root, e.g. `["api", "core", "v1"]`.
    pub module: Vec<String>,
    /// Rust type name, e.g. `Pod`.
    pub rust_name: String,
    /// Input document it was read from, relative to the specs directory.
    pub source: String,
    /// Cargo feature gating it; `None` for apimachinery types, always built.
    pub feature: Option<String>,
    /// The schema's description, the type's doc comment.
    pub doc: Option<String>,
    /// Set when the schema is a top-level kind with exactly one GVK.
    pub gvk: Option<Gvk>,
    /// Every GVK the schema is registered under (several for DeleteOptions, WatchEvent).
    pub gvks: Vec<Gvk>,
    /// What Rust item it becomes.
    pub shape: Shape,
    /// For a type defined inline in another schema: that schema, whose file
    /// holds it.
    pub owner: Option<String>,
    /// Provided by the Kubernetes crate this one depends on, not generated here.
    pub external: bool,
    /// The schema's `x-kubernetes-map-type`: how server-side apply merges
    /// a value of it, unless the property holding it says otherwise.
    pub map_type: Option<MapType>,
    /// A type written in Rust by the user, read by a derive
    /// ([`crate::derive`]): its path where the derive expands (`Settings`,
    /// `crate::v1::Settings`). Emitted code names it there and never
    /// declares it; its fields are held as the user holds them.
    pub declared_at: Option<String>,
    /// OpenAPI keywords of the type's schema beyond its shape (CEL rules of
    /// the whole object), written into the schema as they are.
    pub keywords: Keywords,
}

/// OpenAPI keywords written into a schema as they are (`minimum`,
/// `pattern`, `x-kubernetes-validations`, `default`), by name.
pub type Keywords = BTreeMap<String, serde_json::Value>;

impl TypeDef {
    /// Whether it is a top-level kind whose `apiVersion`/`kind` are
    /// constants written on encode rather than fields.
    pub fn is_kind(&self) -> bool {
        let Shape::Struct(fields) = &self.shape else { return false };
        self.gvk.is_some()
            && fields.iter().any(|f| f.json_name == "apiVersion")
            && fields.iter().any(|f| f.json_name == "kind")
    }
}

/// How a type is represented.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    /// An object with named fields.
    Struct(Vec<Field>),
    /// A string with known values, and a fallback variant holding any other.
    Enum {
        /// The known values, in the schema's order.
        variants: Vec<Variant>,
        /// Name of the variant holding any other value: `Other`, numbered
        /// (`Other_2`) when a known value takes the name.
        fallback: String,
    },
    /// A type with hand-designed representation (see [`Special`]).
    Special(Special),
    /// A type written in Rust elsewhere, which a derive names but whose
    /// shape it does not see ([`TypeDef::declared_at`]): it answers for
    /// itself through the runtime's traits (`Schema`, `ApplyValue`) and
    /// its own `Deserialize`/`Serialize`.
    Declared,
}

/// Schemas whose wire format no plain struct describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Special {
    /// `intstr.IntOrString`: a JSON integer or string, kept as whichever
    /// was sent.
    IntOrString,
    /// `resource.Quantity` (`"500m"`): kept as the text written, a bare JSON
    /// number too, never parsed.
    Quantity,
    /// `metav1.Time`: an RFC 3339 timestamp with whole seconds.
    Time,
    /// `metav1.MicroTime`: an RFC 3339 timestamp with microseconds (events,
    /// leases).
    MicroTime,
    /// Opaque JSON kept as text (managedFields' FieldsV1).
    RawJsonText,
    /// Any JSON value (RawExtension, apiextensions JSON, empty schemas).
    JsonValue,
    /// JSONSchemaPropsOrArray: a schema or a list of schemas.
    SchemaOrArray,
    /// JSONSchemaPropsOrBool: a schema or a boolean.
    SchemaOrBool,
    /// JSONSchemaPropsOrStringArray: a schema or a list of strings.
    SchemaOrStringArray,
}

/// One known value of a string enum.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Variant {
    /// The value on the wire.
    pub wire: String,
    /// The variant's name: the value in PascalCase, made unique among the
    /// enum's values.
    pub rust_name: String,
}

/// A property of an object schema.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// Name on the wire (`clusterIPs`).
    pub json_name: String,
    /// Rust field name (`cluster_ips`).
    pub rust_name: String,
    /// What the value holds.
    pub ty: FieldType,
    /// Listed in the schema's `required`: held plainly, not as an `Option`,
    /// unless also `nullable`.
    pub required: bool,
    /// `nullable: true`: a required field may still be `null`.
    pub nullable: bool,
    /// The property's description, with what the schema says beyond the
    /// type (default, allowed values, CEL rules) for custom resources.
    pub doc: Option<String>,
    /// Must be boxed to break a cycle of directly nested types.
    pub boxed: bool,
    /// The fields not declared (`x-kubernetes-preserve-unknown-fields` at
    /// the root of a kind): a map flattened into the object.
    pub flatten: bool,
    /// How server-side apply merges the value, as the property says.
    pub merge: MergeFacts,
    /// OpenAPI keywords of the property's schema beyond its type
    /// (validation, defaults, formats), for the schema a derive writes.
    pub keywords: Keywords,
}

/// What a schema node says of how server-side apply merges its value, as
/// kube-openapi's `schemaconv` reads it into structured-merge-diff's
/// schema. Parallel to [`FieldType`]: an array's items and a map's values
/// have their own in [`MergeFacts::inner`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MergeFacts {
    /// The node's own `x-kubernetes-map-type`; on a `$ref` (or one-member
    /// `allOf`) property it overrides the referenced schema's.
    pub map_type: Option<MapType>,
    /// An array's list type: `x-kubernetes-list-type`, else `merge` in
    /// `x-kubernetes-patch-strategy` (associative), else atomic.
    pub list_type: ListType,
    /// How strategic merge patch merges an array: `merge` in
    /// `x-kubernetes-patch-strategy`, by `x-kubernetes-patch-merge-key`.
    pub patch: PatchStrategy,
    /// `retainKeys` in `x-kubernetes-patch-strategy`: the strategic merge
    /// patches of the value (of each element, for an array) list the fields
    /// they keep in `$retainKeys`, so that fields of a union the patch
    /// switches away from are cleared (a Deployment's `strategy`, a pod's
    /// `volumes`).
    pub retain_keys: bool,
    /// The facts of an array's items or of a map's values.
    pub inner: Option<Box<MergeFacts>>,
}

/// `x-kubernetes-map-type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MapType {
    /// Replaced whole.
    Atomic,
    /// Merged key by key (the default for objects and maps).
    Granular,
}

/// How server-side apply merges an array.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ListType {
    /// Replaced whole (the default).
    #[default]
    Atomic,
    /// Elements are scalars (or atomic values) merged by value.
    Set,
    /// Elements are objects merged by their key fields
    /// (`x-kubernetes-list-map-keys`, else the patch merge key).
    Map(Vec<String>),
}

impl ListType {
    /// Whether elements merge one by one.
    pub fn is_associative(&self) -> bool {
        *self != ListType::Atomic
    }
}

/// How strategic merge patch merges an array, from its
/// `x-kubernetes-patch-strategy` and `x-kubernetes-patch-merge-key` (the
/// Go struct tags `patchStrategy` and `patchMergeKey`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum PatchStrategy {
    /// Replaced by the patch's list (the default).
    #[default]
    Replace,
    /// Merged: objects by the field `key`, scalars (no key) by value.
    Merge {
        /// `x-kubernetes-patch-merge-key`.
        key: Option<String>,
    },
}

/// The type of a field, independent of Rust spelling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldType {
    /// A JSON string; built-in types keep their enums as strings too, since
    /// the apiserver adds values over releases.
    String,
    /// A JSON boolean.
    Bool,
    /// `integer` of format `int32`: a value out of range is a decode error,
    /// as in Go.
    I32,
    /// `integer` of any other format (`int64` or none).
    I64,
    /// `number`, whatever its format.
    F64,
    /// `format: byte`: base64 on the wire.
    Bytes,
    /// Any JSON value.
    Json,
    /// Another schema, by name.
    Ref(String),
    /// `array`: elements of the given type (any JSON when the schema has no
    /// `items`).
    Array(Box<FieldType>),
    /// `additionalProperties`: string keys.
    Map(Box<FieldType>),
}

impl FieldType {
    /// The schema this type names directly (not through a container).
    pub fn direct_ref(&self) -> Option<&str> {
        match self {
            FieldType::Ref(r) => Some(r),
            _ => None,
        }
    }

    /// Renames the schemas this type mentions.
    pub fn rewrite_refs(&mut self, rename: &impl Fn(&str) -> Option<String>) {
        match self {
            FieldType::Ref(r) => {
                if let Some(new) = rename(r) {
                    *r = new;
                }
            }
            FieldType::Array(t) | FieldType::Map(t) => t.rewrite_refs(rename),
            _ => {}
        }
    }

    /// Every schema this type mentions, through containers too.
    pub fn refs(&self, out: &mut BTreeSet<String>) {
        match self {
            FieldType::Ref(r) => {
                out.insert(r.clone());
            }
            FieldType::Array(t) | FieldType::Map(t) => t.refs(out),
            _ => {}
        }
    }
}

/// A REST resource served under a group/version.
#[derive(Debug, Clone)]
pub struct Resource {
    /// API group; empty for the core group (`/api/v1`).
    pub group: String,
    /// Version within the group.
    pub version: String,
    /// Kind of the objects, from the operations' GVK.
    pub kind: String,
    /// REST name, e.g. `deployments`.
    pub plural: String,
    /// Schema of the objects, when the spec has one for the kind.
    pub type_schema: Option<String>,
    /// Schema of `<Kind>List`, when present.
    pub list_schema: Option<String>,
    /// Its objects live in a namespace: some path of it is under
    /// `/namespaces/{namespace}/`.
    pub namespaced: bool,
    /// The verbs of its own paths (a list that takes `watch=true` also
    /// watches): what its typed client, lister and informer stand on.
    pub verbs: BTreeSet<Verb>,
    /// Subresources by name.
    pub subresources: BTreeMap<String, Subresource>,
    /// Document the resource was read from.
    pub source: String,
}

/// A subresource such as `status`, `scale`, `eviction` or `log`.
#[derive(Debug, Clone)]
pub struct Subresource {
    /// The path segment after the object's name (`status`, `log`).
    pub name: String,
    /// The verbs its paths serve; one with `Connect` (exec, proxy) is a
    /// stream of the runtime, through a marker trait.
    pub verbs: BTreeSet<Verb>,
    /// GVK of the subresource's objects (Scale, Eviction, ...), if any.
    pub gvk: Option<Gvk>,
    /// Schema of the request body (for create/update), if any.
    pub body_schema: Option<String>,
    /// Schema of the response, if any.
    pub response_schema: Option<String>,
    /// Query parameters the operations accept, sorted by name.
    pub params: BTreeMap<String, Param>,
}

/// A query parameter of an operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Param {
    /// Its name in the query string (`sinceSeconds`).
    pub name: String,
    /// A scalar from the parameter's schema (`String` when it has none).
    pub ty: FieldType,
    /// The parameter's description, the doc of its params-struct field.
    pub doc: Option<String>,
}

/// An operation as named by `x-kubernetes-action`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Verb {
    /// `get`: one object by name.
    Get,
    /// `list`: a collection, one page at a time.
    List,
    /// `watch` or `watchlist`: a stream of changes.
    Watch,
    /// `post`: creates an object (or a subresource's, an eviction).
    Create,
    /// `put`: replaces an object.
    Update,
    /// `patch`: a JSON, merge, strategic merge or apply patch.
    Patch,
    /// `delete`: one object by name.
    Delete,
    /// `deletecollection`: every object a selector matches.
    DeleteCollection,
    /// exec/attach/portforward/proxy: streams, served by the runtime.
    Connect,
}

impl Verb {
    /// The verb of an `x-kubernetes-action` value; `None` for one the
    /// generator does not know, which [`crate::spec`] reports with the
    /// operation's JSON pointer.
    pub fn from_action(action: &str) -> Option<Verb> {
        Some(match action {
            "get" => Verb::Get,
            "list" => Verb::List,
            "watch" | "watchlist" => Verb::Watch,
            "post" => Verb::Create,
            "put" => Verb::Update,
            "patch" => Verb::Patch,
            "delete" => Verb::Delete,
            "deletecollection" => Verb::DeleteCollection,
            "connect" => Verb::Connect,
            _ => return None,
        })
    }
}
