//! What a Kubernetes kind is to generic code: its group, version, kind,
//! plural and scope ([`Resource`]) and access to its metadata ([`Object`]).
//!
//! Every top-level kind of the generated crate implements these traits, so
//! the REST client, reflector, indexer and listers are written once, for any
//! kind, built in or custom.

use std::borrow::Cow;
use std::fmt;

use std::marker::PhantomData;

use serde::de::Deserializer;
use serde::{Deserialize, Serialize};

use crate::codec::{DecodeOptions, DecodeWith, WithOptions};
use crate::{LeanString, Map};

mod condition;
mod owner_reference;
mod protobuf;
mod resource_version;

pub use self::condition::{
    StatusCondition, find_status_condition, is_status_condition_true, remove_status_condition, set_status_condition,
};
pub use self::owner_reference::OwnerReference;
pub use self::resource_version::{InvalidResourceVersion, check_resource_version, compare_resource_version};

/// Whether a resource lives in a namespace or at cluster level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    /// Served under `/namespaces/<ns>/`; every object has a
    /// `metadata.namespace`.
    Namespaced,
    /// Served at cluster level, outside any namespace (nodes, namespaces,
    /// CRDs).
    Cluster,
}

/// Static identity of a resource type: the group/version/kind of its objects
/// and the REST resource (plural) that serves them.
pub trait Resource {
    /// API group; empty for the core (legacy) group.
    const GROUP: &'static str;
    /// API version within the group, e.g. `v1`.
    const VERSION: &'static str;
    /// `group/version`, or just `version` for the core group.
    const API_VERSION: &'static str;
    /// Kind, e.g. `Deployment`.
    const KIND: &'static str;
    /// REST resource name, e.g. `deployments`.
    const PLURAL: &'static str;
    /// Namespaced or cluster-scoped.
    const SCOPE: Scope;
    /// Kind of the list wrapper, e.g. `DeploymentList`.
    const LIST_KIND: &'static str;
    /// How the kind's objects are read from and written to Kubernetes'
    /// protobuf (`application/vnd.kubernetes.protobuf`): `Some` for a kind
    /// the apiserver serves in protobuf (the built-in kinds, from a crate
    /// generated with protobuf), whose typed requests then ask for it;
    /// `None`, the default, for every other (custom resources, which the
    /// apiserver serves in JSON only), whose requests stay JSON.
    ///
    /// [`impl_resource!`](crate::impl_resource)'s `; protobuf if <cfg>`
    /// sets it.
    const PROTOBUF: Option<crate::protobuf::Codec<Self>> = None;

    /// The path prefix of the group/version: `/api/v1` or `/apis/<group>/<version>`.
    fn api_prefix() -> String {
        GroupVersion::new(Self::GROUP, Self::VERSION).api_prefix()
    }
}

/// An API group and version, and the two ways of writing them that differ
/// for the core (legacy) group, whose name is empty: as an object's
/// `apiVersion` (`apps/v1`, but `v1`) and as the path prefix that serves
/// them (`/apis/apps/v1`, but `/api/v1`). Every `apiVersion` and prefix the
/// runtime makes is made here.
///
/// [`Display`](fmt::Display) writes the `apiVersion`, without allocating.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GroupVersion<'a> {
    /// API group; empty for the core group.
    pub group: &'a str,
    /// API version within the group, e.g. `v1`.
    pub version: &'a str,
}

impl<'a> GroupVersion<'a> {
    /// The version `version` of `group` (`""` for the core group).
    pub const fn new(group: &'a str, version: &'a str) -> Self {
        GroupVersion { group, version }
    }

    /// Reads an `apiVersion`: `apps/v1`, or `v1` of the core group. The
    /// group is what comes before the last `/`.
    pub fn parse(api_version: &'a str) -> Self {
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        GroupVersion { group, version }
    }

    /// Whether this is the core group, served under `/api`.
    pub fn is_core(&self) -> bool {
        self.group.is_empty()
    }

    /// `group/version`, or just `version` for the core group: the
    /// `apiVersion` of the objects.
    pub fn api_version(&self) -> String {
        self.to_string()
    }

    /// The path prefix of the group/version: `/api/v1`, or
    /// `/apis/<group>/<version>`.
    pub fn api_prefix(&self) -> String {
        let root = if self.is_core() { "/api" } else { "/apis" };
        format!("{root}/{self}")
    }
}

impl fmt::Display for GroupVersion<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_core() { f.write_str(self.version) } else { write!(f, "{}/{}", self.group, self.version) }
    }
}

/// Read and write access to an object's `metadata` (metav1.ObjectMeta),
/// implemented by the generated `ObjectMeta` type.
pub trait Metadata {
    /// `metadata.name`: unique within the namespace (or the cluster for
    /// cluster-scoped kinds) among objects of the kind.
    fn name(&self) -> Option<&str>;
    /// `metadata.generateName`: the prefix the apiserver completes into a
    /// unique name on create when `name` is empty.
    fn generate_name(&self) -> Option<&str>;
    /// `metadata.namespace`; `None` or empty for cluster-scoped objects.
    fn namespace(&self) -> Option<&str>;
    /// `metadata.uid`: set by the apiserver on create and never reused, it
    /// tells apart two objects that had the same name at different times.
    fn uid(&self) -> Option<&str>;
    /// `metadata.resourceVersion`: the opaque version the apiserver uses for
    /// optimistic concurrency on update and to resume watches.
    fn resource_version(&self) -> Option<&str>;
    /// `metadata.generation`: bumped by the apiserver on each change of the
    /// desired state (spec), for controllers to compare with
    /// `status.observedGeneration`.
    fn generation(&self) -> Option<i64>;
    /// `metadata.labels`: the key/value pairs label selectors match.
    fn labels(&self) -> Option<&Map>;
    /// `metadata.annotations`: arbitrary non-identifying key/value data for
    /// tools and controllers.
    fn annotations(&self) -> Option<&Map>;
    /// Whether `deletionTimestamp` is set.
    fn is_being_deleted(&self) -> bool;

    /// Sets `metadata.name` (`Some("web".into())`).
    fn set_name(&mut self, name: Option<LeanString>);
    /// Sets `metadata.namespace`.
    fn set_namespace(&mut self, namespace: Option<LeanString>);
    /// Sets `metadata.resourceVersion`; `None` makes an update unconditional
    /// (no optimistic-concurrency check).
    fn set_resource_version(&mut self, resource_version: Option<LeanString>);
    /// Drops `managedFields`; informers do this by default to save memory.
    fn clear_managed_fields(&mut self);
    /// `metadata.ownerReferences`: the objects this one belongs to.
    fn owner_references(&self) -> Cow<'_, [OwnerReference]>;
    /// Sets `metadata.ownerReferences` (empty: none).
    fn set_owner_references(&mut self, references: Vec<OwnerReference>);
    /// `metadata.finalizers`: what must happen before the object is gone.
    fn finalizers(&self) -> Vec<&str>;

    /// The owner reference marked `controller`, if any.
    fn controller_reference(&self) -> Option<OwnerReference> {
        self.owner_references().iter().find(|r| r.is_controller()).cloned()
    }
}

/// A persisted object: access to its metadata.
///
/// Every generated kind implements it beside [`Resource`]; the dynamic
/// object implements it alone, since its kind is known only at run time.
/// Generic code that needs the kind's identity asks for `Object + Resource`.
pub trait Object {
    /// The metadata type (`ObjectMeta` of the generated crate).
    type Meta: Metadata;
    /// The object's `metadata`.
    fn metadata(&self) -> &Self::Meta;
    /// The object's `metadata`, to change.
    fn metadata_mut(&mut self) -> &mut Self::Meta;

    /// Records `apiVersion` and `kind` on objects that hold them as data.
    /// List items arrive without them; a typed kind knows its own
    /// statically, so the default does nothing.
    fn set_type_meta(&mut self, api_version: &str, kind: &str) {
        let _ = (api_version, kind);
    }

    /// The object's `apiVersion` and `kind`, as far as it knows them: a
    /// generated kind answers with its [`Resource`] constants, a dynamic
    /// object with its fields. The default knows nothing (`None`).
    ///
    /// It names the object where its static type cannot, e.g. in the
    /// `involvedObject` of the events recorded about it.
    fn type_meta(&self) -> Option<(Cow<'_, str>, Cow<'_, str>)> {
        None
    }

    /// The `Accept` headers a [`ResourceClient`](crate::rest::ResourceClient)
    /// of this type sends when it asks for JSON, for a representation other
    /// than the resource's own objects (the metadata-only
    /// [`PartialObjectMetadata`](crate::metadata::PartialObjectMetadata));
    /// `None`, the default: plain `application/json`.
    fn accept_as() -> Option<AcceptAs>
    where
        Self: Sized,
    {
        None
    }

    /// The protobuf codec of a type read from any resource, with the
    /// `Accept` headers asking for it (the metadata-only
    /// [`PartialObjectMetadata`](crate::metadata::PartialObjectMetadata),
    /// as client-go's metadata client asks); `None`, the default: a
    /// [`ResourceClient`](crate::rest::ResourceClient) made with
    /// `for_resource` speaks JSON. Typed kinds speak protobuf through
    /// [`Resource::PROTOBUF`] instead.
    fn protobuf_as() -> Option<ProtobufAs<Self>>
    where
        Self: Sized,
    {
        None
    }

    /// `metadata.name`.
    fn name(&self) -> Option<&str> {
        self.metadata().name()
    }
    /// `metadata.namespace`.
    fn namespace(&self) -> Option<&str> {
        self.metadata().namespace()
    }
    /// `metadata.resourceVersion`.
    fn resource_version(&self) -> Option<&str> {
        self.metadata().resource_version()
    }
}

/// What [`Object::protobuf_as`] gives: the codec of a type read from any
/// resource and the `Accept` headers asking for it in protobuf (then in
/// JSON, then plain JSON).
#[derive(Debug)]
pub struct ProtobufAs<K> {
    /// Decodes and encodes the type.
    pub codec: crate::protobuf::Codec<K>,
    /// The `Accept` headers of requests for one object and for a list.
    pub accept: AcceptAs,
}

/// The `Accept` headers of an object type asking the apiserver for another
/// representation of a resource's objects (its `as=`, `g=` and `v=`
/// parameters), with plain JSON after it in case the server cannot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AcceptAs {
    /// For one object: get, patch, delete, and each object of a watch.
    pub object: &'static str,
    /// For a list: list and deletecollection.
    pub list: &'static str,
}

/// The [`Object`] items of a type that keeps its metadata, a `$meta`, in a
/// field named `metadata`; the dynamic object and the test kinds differ only
/// in what else they answer.
macro_rules! metadata_field {
    ($meta:ty) => {
        type Meta = $meta;
        fn metadata(&self) -> &$meta {
            &self.metadata
        }
        fn metadata_mut(&mut self) -> &mut $meta {
            &mut self.metadata
        }
    };
}
pub(crate) use metadata_field;

/// Implements [`Resource`] for a kind from its identity, and, given a
/// metadata type, [`Object`] for a kind whose `metadata` field is of that
/// type (its `type_meta` answers with the `Resource` constants). Generated
/// kinds use it, so these impls are written once, here. The arguments, in
/// order: the type, then its group, version, apiVersion, kind, plural,
/// scope ([`Scope`]'s variant), list kind and, optionally, metadata type;
/// then, optionally, `; protobuf if <cfg predicate>`, which sets
/// [`Resource::PROTOBUF`] to the kind's
/// [`Codec`](crate::protobuf::Codec) when the predicate holds in the crate
/// invoking the macro (`; protobuf if feature = "protobuf"`: under that
/// crate's `protobuf` feature), the kind then implementing
/// [`DecodeProto`](crate::protobuf::DecodeProto) and
/// [`EncodeProto`](crate::protobuf::EncodeProto) there:
///
/// ```
/// # use k8s_client_runtime::dynamic::DynamicMeta;
/// pub struct Widget {
///     pub metadata: DynamicMeta,
/// }
/// k8s_client_runtime::impl_resource!(
///     Widget, "example.com", "v1", "example.com/v1", "Widget", "widgets", Namespaced,
///     "WidgetList", DynamicMeta
/// );
/// # use k8s_client_runtime::object::{Object, Resource};
/// # let w = Widget { metadata: Default::default() };
/// assert_eq!(w.type_meta().unwrap().0, "example.com/v1");
/// assert_eq!(<Widget as Resource>::PLURAL, "widgets");
/// assert!(<Widget as Resource>::PROTOBUF.is_none());
/// ```
///
/// With protobuf (`Pod` implementing both traits):
///
/// ```ignore
/// k8s_client_runtime::impl_resource!(
///     Pod, "", "v1", "v1", "Pod", "pods", Namespaced, "PodList", ObjectMeta; protobuf if feature = "protobuf"
/// );
/// ```
#[macro_export]
macro_rules! impl_resource {
    (
        $ty:ident, $group:expr, $version:expr, $api_version:expr, $kind:expr, $plural:expr, $scope:ident,
        $list_kind:expr $(, $meta:ty)? $(; protobuf if $protobuf:meta)?
    ) => {
        impl $crate::object::Resource for $ty {
            const GROUP: &'static str = $group;
            const VERSION: &'static str = $version;
            const API_VERSION: &'static str = $api_version;
            const KIND: &'static str = $kind;
            const PLURAL: &'static str = $plural;
            const SCOPE: $crate::object::Scope = $crate::object::Scope::$scope;
            const LIST_KIND: &'static str = $list_kind;
            $(
                #[cfg($protobuf)]
                const PROTOBUF: ::std::option::Option<$crate::protobuf::Codec<Self>> =
                    ::std::option::Option::Some($crate::protobuf::Codec::of::<Self>());
            )?
        }
        $(
            impl $crate::object::Object for $ty {
                type Meta = $meta;
                fn metadata(&self) -> &$meta {
                    &self.metadata
                }
                fn metadata_mut(&mut self) -> &mut $meta {
                    &mut self.metadata
                }
                fn type_meta(
                    &self,
                ) -> ::std::option::Option<(::std::borrow::Cow<'_, str>, ::std::borrow::Cow<'_, str>)> {
                    ::std::option::Option::Some((
                        ::std::borrow::Cow::Borrowed(<Self as $crate::object::Resource>::API_VERSION),
                        ::std::borrow::Cow::Borrowed(<Self as $crate::object::Resource>::KIND),
                    ))
                }
            }
        )?
    };
}

/// Cached objects are shared `Arc`s: they answer for their metadata too,
/// and changing one clones it first (copy on write), so another holder of
/// the same `Arc` never sees the change.
impl<K: Object + Clone> Object for std::sync::Arc<K> {
    type Meta = K::Meta;
    fn metadata(&self) -> &K::Meta {
        (**self).metadata()
    }
    fn metadata_mut(&mut self) -> &mut K::Meta {
        std::sync::Arc::make_mut(self).metadata_mut()
    }
    fn set_type_meta(&mut self, api_version: &str, kind: &str) {
        std::sync::Arc::make_mut(self).set_type_meta(api_version, kind);
    }
    fn type_meta(&self) -> Option<(Cow<'_, str>, Cow<'_, str>)> {
        (**self).type_meta()
    }
    fn accept_as() -> Option<AcceptAs> {
        K::accept_as()
    }
}

/// The key client-go's `MetaNamespaceKeyFunc` gives an object:
/// `namespace/name`, or `name` when the object has no namespace. Caches,
/// queues and listers key objects by it.
#[doc(alias = "MetaNamespaceKeyFunc")]
pub fn object_key<K: Object + ?Sized>(obj: &K) -> String {
    let meta = obj.metadata();
    let name = meta.name().unwrap_or_default();
    match meta.namespace() {
        Some(ns) if !ns.is_empty() => {
            let mut key = String::with_capacity(ns.len() + 1 + name.len());
            key.push_str(ns);
            key.push('/');
            key.push_str(name);
            key
        }
        _ => name.to_owned(),
    }
}

/// The last segment of `K`'s type name (`Pod` for
/// `k8s_client::api::core::v1::Pod`): the kind of every generated type,
/// for names and messages in code that does not ask for [`Resource`].
#[cfg(feature = "informers")]
pub(crate) fn short_type_name<K: ?Sized>() -> &'static str {
    let full = std::any::type_name::<K>();
    let path = full.split('<').next().unwrap_or(full);
    path.rsplit("::").next().unwrap_or(path)
}

/// Splits a key made by [`object_key`] into namespace and name.
#[doc(alias = "SplitMetaNamespaceKey")]
pub fn split_key(key: &str) -> (Option<&str>, &str) {
    match key.split_once('/') {
        Some((ns, name)) => (Some(ns), name),
        None => (None, key),
    }
}

/// A group/version/resource known only at run time (dynamic client,
/// discovery), the counterpart of [`Resource`]'s constants.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DynamicResource {
    /// API group; empty for the core (legacy) group.
    pub group: String,
    /// API version within the group, e.g. `v1`.
    pub version: String,
    /// Kind of the objects, e.g. `Deployment`.
    pub kind: String,
    /// REST resource name in URLs, e.g. `deployments`.
    pub plural: String,
    /// Whether the resource is namespaced rather than cluster-scoped.
    pub namespaced: bool,
}

impl DynamicResource {
    /// The identity of a statically known kind `K`.
    pub fn of<K: Resource>() -> Self {
        DynamicResource {
            group: K::GROUP.to_owned(),
            version: K::VERSION.to_owned(),
            kind: K::KIND.to_owned(),
            plural: K::PLURAL.to_owned(),
            namespaced: K::SCOPE == Scope::Namespaced,
        }
    }

    /// The resource's group and version.
    pub fn group_version(&self) -> GroupVersion<'_> {
        GroupVersion::new(&self.group, &self.version)
    }

    /// `group/version`, or just `version` for the core group: an object's
    /// `apiVersion`.
    pub fn api_version(&self) -> String {
        self.group_version().api_version()
    }

    /// The path prefix of the group/version: `/api/v1` or
    /// `/apis/<group>/<version>`.
    pub fn api_prefix(&self) -> String {
        self.group_version().api_prefix()
    }
}

/// One kind known to a generated crate's scheme (client-go's `runtime.Scheme`):
/// its group/version/kind and a typed codec.
#[derive(Debug, Clone, Copy)]
pub struct KindEntry {
    /// API group; empty for the core (legacy) group.
    pub group: &'static str,
    /// API version within the group, e.g. `v1`.
    pub version: &'static str,
    /// Kind, e.g. `Deployment`.
    pub kind: &'static str,
    /// Decodes JSON into the kind's Rust type and encodes it back: the
    /// canonical form of an object of this kind, or the decode error.
    pub transcode: Transcode,
    /// For a kind with a protobuf form (built-in kinds, with the generated
    /// crate's `protobuf` feature): decodes a protobuf message (without the
    /// `k8s\0` envelope) into the kind's Rust type, and gives the message
    /// encoded back from it and the object as JSON.
    pub transcode_protobuf: Option<ProtobufTranscode>,
    /// For a kind with an apply configuration (with the generated crate's
    /// `apply` feature): decodes JSON into the kind's apply configuration
    /// (`<Kind>Apply`, [`crate::apply`]) and encodes it back, as
    /// [`transcode`](Self::transcode) does with the kind.
    pub transcode_apply: Option<Transcode>,
}

/// The JSON codecs of a [`KindEntry`]: JSON decoded into a typed value and
/// encoded back ([`transcode`]), or the decode error.
pub type Transcode = fn(&[u8]) -> Result<serde_json::Value, serde_json::Error>;

/// The `transcode_protobuf` of a [`KindEntry`]: the message encoded back
/// from the decoded object, and the object as JSON.
pub type ProtobufTranscode =
    fn(&[u8]) -> Result<(Vec<u8>, serde_json::Value), Box<dyn std::error::Error + Send + Sync>>;

/// The `transcode_protobuf` of a [`KindEntry`] for the type `T`.
pub fn transcode_protobuf<T: crate::protobuf::DecodeProto + crate::protobuf::EncodeProto + Serialize>(
    message: &[u8],
) -> Result<(Vec<u8>, serde_json::Value), Box<dyn std::error::Error + Send + Sync>> {
    let typed = T::decode(message, crate::codec::DecodeOptions::default())?;
    Ok((typed.encode_to_vec(), serde_json::to_value(&typed)?))
}

impl KindEntry {
    /// `group/version`, or just `version` for the core group: the `apiVersion`
    /// of the kind's objects.
    pub fn api_version(&self) -> String {
        GroupVersion::new(self.group, self.version).api_version()
    }
}

/// The `transcode` of a [`KindEntry`] for the type `T`.
pub fn transcode<T: serde::de::DeserializeOwned + Serialize>(
    json: &[u8],
) -> Result<serde_json::Value, serde_json::Error> {
    let typed: T = crate::codec::decode_json(json)?;
    serde_json::to_value(&typed)
}

/// metav1.ListMeta as the runtime needs it for paging and resuming watches.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListMeta {
    /// The resourceVersion of the collection as of the list: where a watch
    /// started after the list resumes from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_version: Option<String>,
    /// `continue`: the opaque token to pass as `ListOptions::continue_token` to
    /// fetch the next page; empty or absent on the last page.
    #[serde(default, rename = "continue", skip_serializing_if = "Option::is_none")]
    pub continue_: Option<String>,
    /// When paging, how many items follow this page; may be an estimate, and
    /// absent when the list has a label or field selector.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remaining_item_count: Option<i64>,
    /// Deprecated, and no longer set by the apiserver since Kubernetes 1.20;
    /// kept to round-trip older payloads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub self_link: Option<String>,
}

/// Any `<Kind>List` decoded generically: the list metadata and the items.
///
/// `Deserialize` reads the items with their own `Deserialize`;
/// [`DecodeWith`] hands the decode's options on to each item.
#[derive(Debug, Clone, Serialize)]
#[serde(bound(serialize = "T: Serialize"))]
pub struct ObjectList<T> {
    /// The list's metadata: resourceVersion and continue token.
    pub metadata: ListMeta,
    /// The objects; the apiserver may leave out their `apiVersion` and `kind`
    /// (see [`Object::set_type_meta`]).
    pub items: Vec<T>,
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for ObjectList<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(list::ListVisitor(PhantomData::<T>))
    }
}

impl<T: DecodeWith> DecodeWith for ObjectList<T> {
    fn deserialize_with<'de, D: Deserializer<'de>>(deserializer: D, options: DecodeOptions) -> Result<Self, D::Error> {
        deserializer.deserialize_map(list::ListVisitor(WithOptions::<T>::new(options)))
    }
}

/// [`DecodeWith`] of a kind decoded by its own `Deserialize` (the dynamic
/// object, a hand-written kind): the object is decoded whole, then what
/// `options` leave out is cleared from it (`metadata.managedFields`).
/// Generated kinds skip those parts unread instead.
///
/// ```
/// # use k8s_client_runtime::codec::{DecodeOptions, DecodeWith};
/// # use k8s_client_runtime::dynamic::DynamicMeta;
/// # use k8s_client_runtime::object::Object;
/// #[derive(Clone, Default, serde::Serialize, serde::Deserialize)]
/// struct Review {
///     metadata: DynamicMeta,
/// }
/// # impl Object for Review {
/// #     type Meta = DynamicMeta;
/// #     fn metadata(&self) -> &DynamicMeta { &self.metadata }
/// #     fn metadata_mut(&mut self) -> &mut DynamicMeta { &mut self.metadata }
/// # }
/// impl DecodeWith for Review {
///     fn deserialize_with<'de, D: serde::Deserializer<'de>>(d: D, options: DecodeOptions) -> Result<Self, D::Error> {
///         k8s_client_runtime::object::deserialize_then_apply(d, options)
///     }
/// }
/// ```
pub fn deserialize_then_apply<'de, K, D>(deserializer: D, options: DecodeOptions) -> Result<K, D::Error>
where
    K: Object + Deserialize<'de>,
    D: Deserializer<'de>,
{
    let mut object = K::deserialize(deserializer)?;
    if options.skips_managed_fields() {
        object.metadata_mut().clear_managed_fields();
    }
    Ok(object)
}

mod list {
    //! One reading of an [`ObjectList`], whatever reads its items.

    use std::fmt;

    use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};

    use super::{ListMeta, ObjectList};

    /// Reads a list whose items the seed `S` reads: `metadata` and `items`
    /// (`null` or absent: none), every other key (`apiVersion`, `kind`)
    /// skipped, a key given twice an error.
    pub(super) struct ListVisitor<S>(pub(super) S);

    impl<'de, S: DeserializeSeed<'de> + Copy> Visitor<'de> for ListVisitor<S> {
        type Value = ObjectList<S::Value>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("struct ObjectList")
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut metadata: Option<ListMeta> = None;
            let mut items: Option<Vec<S::Value>> = None;
            while let Some(key) = map.next_key::<Field>()? {
                match key {
                    Field::Metadata if metadata.is_some() => return Err(de::Error::duplicate_field("metadata")),
                    Field::Metadata => metadata = Some(map.next_value()?),
                    Field::Items if items.is_some() => return Err(de::Error::duplicate_field("items")),
                    Field::Items => items = Some(map.next_value_seed(Items(self.0))?),
                    Field::Other => {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
            }
            Ok(ObjectList { metadata: metadata.unwrap_or_default(), items: items.unwrap_or_default() })
        }
    }

    /// The keys of a list.
    enum Field {
        Metadata,
        Items,
        Other,
    }

    impl<'de> de::Deserialize<'de> for Field {
        fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Field, D::Error> {
            crate::codec::deserialize_str_as(d, |key| match key {
                "metadata" => Field::Metadata,
                "items" => Field::Items,
                _ => Field::Other,
            })
        }
    }

    /// `items`: `null`, or a list of what `S` reads.
    struct Items<S>(S);

    impl<'de, S: DeserializeSeed<'de> + Copy> DeserializeSeed<'de> for Items<S> {
        type Value = Vec<S::Value>;
        fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_option(self)
        }
    }

    impl<'de, S: DeserializeSeed<'de> + Copy> Visitor<'de> for Items<S> {
        type Value = Vec<S::Value>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a list of objects or null")
        }
        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(Vec::new())
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(Vec::new())
        }
        fn visit_some<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_seq(self)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let mut items = Vec::new();
            while let Some(item) = seq.next_element_seed(self.0)? {
                items.push(item);
            }
            Ok(items)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_key_round_trips() {
        assert_eq!(split_key("ns/name"), (Some("ns"), "name"));
        assert_eq!(split_key("node-1"), (None, "node-1"));
    }

    #[test]
    fn group_versions_are_written_as_the_apiserver_writes_them() {
        let core = GroupVersion::new("", "v1");
        let apps = GroupVersion::new("apps", "v1");
        assert_eq!((core.api_version(), core.api_prefix()), ("v1".into(), "/api/v1".into()));
        assert_eq!((apps.api_version(), apps.api_prefix()), ("apps/v1".into(), "/apis/apps/v1".into()));
        assert_eq!(GroupVersion::parse("v1"), core);
        assert_eq!(GroupVersion::parse("apps/v1"), apps);
        assert_eq!(GroupVersion::parse("a/b/v2"), GroupVersion::new("a/b", "v2"), "the group ends at the last slash");

        let widgets = DynamicResource {
            group: "example.io".into(),
            version: "v1beta1".into(),
            kind: "Widget".into(),
            plural: "widgets".into(),
            namespaced: true,
        };
        assert_eq!(
            (widgets.api_version(), widgets.api_prefix()),
            ("example.io/v1beta1".into(), "/apis/example.io/v1beta1".into())
        );
        let pods = DynamicResource::of::<crate::testing::Pod>();
        assert_eq!((pods.api_version(), pods.api_prefix()), ("v1".into(), "/api/v1".into()));
        assert_eq!(<crate::testing::Node as Resource>::api_prefix(), "/apis/example.io/v1beta1");
        let entry = KindEntry {
            group: "",
            version: "v1",
            kind: "Pod",
            transcode: transcode::<serde_json::Value>,
            transcode_protobuf: None,
            transcode_apply: None,
        };
        assert_eq!(entry.api_version(), "v1");
    }

    proptest::proptest! {
        /// An `apiVersion` read back is the group and version it was made of,
        /// and the prefix is the root of its group followed by it.
        #[test]
        fn group_versions_round_trip(group in "([a-z0-9.-]{1,20})?", version in "v[0-9]{1,2}([a-z]{1,5}[0-9]{0,2})?") {
            let gv = GroupVersion::new(&group, &version);
            let api_version = gv.api_version();
            proptest::prop_assert_eq!(GroupVersion::parse(&api_version), gv);
            let root = if group.is_empty() { "/api/" } else { "/apis/" };
            proptest::prop_assert_eq!(gv.api_prefix(), format!("{root}{api_version}"));
            proptest::prop_assert_eq!(api_version.contains('/'), !group.is_empty());
        }
    }

    #[test]
    fn object_lists_decode_their_items_with_the_options() {
        use crate::codec::{DecodeOptions, decode_json_with};
        use crate::dynamic::DynamicObject;
        let json = br#"{"apiVersion": "v1", "kind": "PodList", "metadata": {"resourceVersion": "9"},
            "items": [{"metadata": {"name": "a", "managedFields": [{"manager": "kubectl"}], "uid": "u"}}, {}]}"#;
        let plain: ObjectList<crate::testing::Pod> = crate::codec::decode_json(json).unwrap();
        let kept: ObjectList<crate::testing::Pod> = decode_json_with(json, DecodeOptions::KEEP_ALL).unwrap();
        let skipped: ObjectList<crate::testing::Pod> =
            decode_json_with(json, DecodeOptions::WITHOUT_MANAGED_FIELDS).unwrap();
        assert_eq!((plain.items.len(), plain.metadata.resource_version.as_deref()), (2, Some("9")));
        assert_eq!(kept.items, plain.items);
        assert!(plain.items[0].metadata.managed_fields.is_some());
        let mut expected = plain.items.clone();
        expected[0].metadata.managed_fields = None;
        assert_eq!(skipped.items, expected);
        assert_eq!(skipped.metadata, plain.metadata);

        // The dynamic object drops them after decoding, keeping the rest.
        let dynamic: ObjectList<DynamicObject> = decode_json_with(json, DecodeOptions::WITHOUT_MANAGED_FIELDS).unwrap();
        assert_eq!(dynamic.items[0].metadata.managed_fields, None);
        assert_eq!(dynamic.items[0].metadata.uid.as_deref(), Some("u"));
        let dynamic: ObjectList<DynamicObject> = decode_json_with(json, DecodeOptions::KEEP_ALL).unwrap();
        assert!(dynamic.items[0].metadata.managed_fields.is_some());
    }

    #[test]
    fn object_lists_read_null_absent_and_repeated_keys_as_before() {
        use crate::codec::{DecodeOptions, decode_json_with};
        let skip = DecodeOptions::WITHOUT_MANAGED_FIELDS;
        for json in [&br#"{"items": null}"#[..], br#"{"metadata": {}}"#, br#"{}"#] {
            let list: ObjectList<crate::testing::Pod> = decode_json_with(json, skip).unwrap();
            assert!(list.items.is_empty());
            let list: ObjectList<serde_json::Value> = crate::codec::decode_json(json).unwrap();
            assert!(list.items.is_empty());
        }
        for json in [&br#"{"items": [], "items": []}"#[..], br#"{"metadata": {}, "metadata": {}}"#] {
            let err = decode_json_with::<ObjectList<crate::testing::Pod>>(json, skip).unwrap_err();
            assert!(err.to_string().contains("duplicate field"), "{err}");
        }
        let err = crate::codec::decode_json::<ObjectList<serde_json::Value>>(br#"{"items": {}}"#).unwrap_err();
        assert!(err.to_string().contains("a list of objects or null"), "{err}");
        let err = crate::codec::decode_json::<ObjectList<serde_json::Value>>(b"[]").unwrap_err();
        assert!(err.to_string().contains("struct ObjectList"), "{err}");
    }

    /// A kind with one string field (1), speaking protobuf under a
    /// predicate that holds, and the same kind under one that does not.
    #[derive(Debug, Default, PartialEq)]
    struct Gadget {
        metadata: crate::dynamic::DynamicMeta,
        name: LeanString,
    }

    impl crate::protobuf::DecodeProto for Gadget {
        const NAME: &'static str = "Gadget";
        fn merge_field(
            &mut self,
            number: u32,
            wire_type: crate::protobuf::WireType,
            reader: &mut crate::protobuf::Reader<'_>,
            options: DecodeOptions,
        ) -> Result<(), crate::protobuf::Error> {
            match number {
                1 => crate::protobuf::decode::value(&mut self.name, wire_type, reader, options),
                _ => reader.skip(wire_type),
            }
        }
    }

    impl crate::protobuf::EncodeProto for Gadget {
        fn encode_fields(&self, writer: &mut crate::protobuf::Writer) {
            crate::protobuf::encode::value(writer, 1, &self.name);
        }
    }

    crate::impl_resource!(
        Gadget, "example.io", "v1", "example.io/v1", "Gadget", "gadgets", Namespaced, "GadgetList",
        crate::dynamic::DynamicMeta; protobuf if all()
    );

    #[derive(Debug, Default)]
    struct Gizmo;
    crate::impl_resource!(Gizmo, "", "v1", "v1", "Gizmo", "gizmos", Cluster, "GizmoList"; protobuf if any());

    #[test]
    fn impl_resource_sets_the_codec_when_its_predicate_holds() {
        let codec = Gadget::PROTOBUF.expect("the predicate holds");
        assert_eq!(codec.name(), "Gadget");
        let gadget = Gadget { name: "g".into(), ..Gadget::default() };
        let bytes = codec.encode_to_vec(&gadget);
        assert_eq!(bytes, b"\x0a\x01g");
        assert_eq!(codec.decode(&bytes, DecodeOptions::default()).unwrap(), gadget);
        let envelope = codec.encode_object(Gadget::API_VERSION, Gadget::KIND, &gadget);
        let decoded = crate::protobuf::Envelope::decode(&envelope).unwrap();
        assert_eq!((decoded.api_version, decoded.kind, decoded.raw), ("example.io/v1", "Gadget", &bytes[..]));
        assert_eq!(format!("{codec:?}"), "Codec(\"Gadget\")");
        assert_eq!(gadget.type_meta().unwrap().1, "Gadget", "the metadata type is still taken");

        assert!(Gizmo::PROTOBUF.is_none(), "a predicate that does not hold leaves the default");
        assert!(<crate::testing::Pod as Resource>::PROTOBUF.is_none(), "the default");
    }

    #[test]
    fn object_list_accepts_null_items() {
        let l: ObjectList<serde_json::Value> =
            serde_json::from_str(r#"{"metadata":{"resourceVersion":"7","continue":"abc"},"items":null}"#).unwrap();
        assert!(l.items.is_empty());
        assert_eq!(l.metadata.resource_version.as_deref(), Some("7"));
        assert_eq!(l.metadata.continue_.as_deref(), Some("abc"));
    }
}
