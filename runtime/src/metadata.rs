//! Metadata-only access to any resource (client-go's `metadata` client and
//! `metadatainformer`; kube-rs's `Api<PartialObjectMeta<K>>` and
//! `metadata_watcher`): objects as [`PartialObjectMetadata`], their
//! `apiVersion`, `kind` and `metadata` and nothing else.
//!
//! Use it when a controller needs only names, labels, annotations, owner
//! references or finalizers of a resource's objects: a garbage collector,
//! a quota or cleanup controller, anything that watches many kinds or
//! kinds with large objects (Secrets, ConfigMaps, big custom resources).
//! The apiserver then sends only the metadata, so nothing else is decoded,
//! and an informer's cache holds a few hundred bytes per object instead of
//! the whole object. Use a typed client (the generated ClientSet's
//! [`ResourceClient<K>`]) when you read or write the spec or status of a
//! kind known at compile time, and the [`dynamic`](crate::dynamic) client
//! for the whole object of a kind known only at run time.
//!
//! * [`MetadataClient`] is [`ResourceClient<PartialObjectMetadata>`]: get,
//!   list (and `list_all`, paging), watch, patch (metadata such as labels
//!   or finalizers, with a merge or JSON patch), delete and
//!   delete_collection of any resource, named by a [`DynamicResource`]
//!   (group, version, plural, scope). Requests ask for
//!   `application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1`
//!   (lists for `PartialObjectMetadataList`), then the same in JSON, then
//!   plain JSON, as client-go's metadata client does ([`ACCEPT_PROTOBUF`]);
//!   with a client configured for JSON only, JSON ([`ACCEPT`]). A server
//!   that cannot transform answers with whole objects, of which only the
//!   metadata is decoded.
//! * [`MetadataInformerFactory`] hands out one
//!   [`SharedIndexInformer<PartialObjectMetadata>`](crate::cache::SharedIndexInformer)
//!   per resource, whose [`lister`](crate::cache::SharedIndexInformer::lister)
//!   reads the cache. As typed informers do, they drop `managedFields`
//!   from what they cache unless told to keep them.
//!
//! ```no_run
//! use std::time::Duration;
//! use k8s_client_runtime::metadata::{MetadataClient, MetadataInformerFactory};
//! use k8s_client_runtime::rest::ListOptions;
//! use k8s_client_runtime::selector::LabelSelector;
//! use k8s_client_runtime::{Client, DynamicResource, Object as _};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let client = Client::try_default()?;
//! let pods = DynamicResource {
//!     group: String::new(),
//!     version: "v1".into(),
//!     kind: "Pod".into(),
//!     plural: "pods".into(),
//!     namespaced: true,
//! };
//! let in_default = MetadataClient::namespaced_with(client.clone(), "default", &pods);
//! for pod in in_default.list(&ListOptions::default()).await?.items {
//!     println!("{} {:?}", pod.name().unwrap_or_default(), pod.metadata.labels);
//! }
//! let factory = MetadataInformerFactory::new(client, Duration::ZERO);
//! let pod_informer = factory.for_resource(&pods);
//! factory.start();
//! factory.wait_for_cache_sync_within(Duration::from_secs(60)).await?;
//! println!("{} pods cached", pod_informer.lister().list(&LabelSelector::everything()).len());
//! # Ok(()) }
//! ```

use std::borrow::Cow;

use serde::{Deserialize, Deserializer, Serialize};

use crate::codec::CompactTimestamp;
#[cfg(doc)]
use crate::object::DynamicResource;
pub use crate::object::OwnerReference;
use crate::object::{AcceptAs, Metadata, Object, ObjectList, ProtobufAs, metadata_field};
use crate::rest::ResourceClient;
use crate::{LeanString, Map, ThinVec};

mod protobuf;
#[cfg(test)]
mod tests;

crate::cfg_feature!("informers" =>
    /// Shares one metadata-only informer per resource (client-go's
    /// `metadatainformer.SharedInformerFactory`): see
    /// [`ResourceInformerFactory`](crate::cache::ResourceInformerFactory).
    #[doc(alias = "metadatainformer.SharedInformerFactory")]
    pub type MetadataInformerFactory = crate::cache::ResourceInformerFactory<PartialObjectMetadata>;
);

/// `apiVersion` of [`PartialObjectMetadata`].
pub const API_VERSION: &str = "meta.k8s.io/v1";
/// `kind` of [`PartialObjectMetadata`].
pub const KIND: &str = "PartialObjectMetadata";
/// `kind` of [`PartialObjectMetadataList`].
pub const LIST_KIND: &str = "PartialObjectMetadataList";

/// What a [`MetadataClient`] accepts when it speaks JSON (its client's
/// [`content_type`](crate::Client::content_type) is JSON): the
/// metadata-only representation, else plain JSON.
pub const ACCEPT: AcceptAs = AcceptAs {
    object: "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json",
    list: "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json",
};

/// What a [`MetadataClient`] accepts when it speaks protobuf (the default,
/// as client-go's metadata client): the metadata-only representation in
/// protobuf, else in JSON, else plain JSON (a server that cannot
/// transform answers with whole objects in JSON, of which only the
/// metadata is decoded).
pub const ACCEPT_PROTOBUF: AcceptAs = AcceptAs {
    object: "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,\
             application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json",
    list: "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,\
           application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json",
};

/// The client of the metadata of one resource's objects: the same
/// [`ResourceClient`] as for typed kinds, over [`PartialObjectMetadata`],
/// offering get, list, watch, patch, delete and deletecollection. Make one
/// with [`ResourceClient::namespaced_with`], [`ResourceClient::all_with`]
/// or [`ResourceClient::for_resource`].
#[doc(alias = "metadata.Interface")]
pub type MetadataClient = ResourceClient<PartialObjectMetadata>;

/// A list of [`PartialObjectMetadata`] (`metav1.PartialObjectMetadataList`).
pub type PartialObjectMetadataList = ObjectList<PartialObjectMetadata>;

/// Any object reduced to its type and metadata
/// (`metav1.PartialObjectMetadata`).
///
/// The apiserver answers a metadata request with `apiVersion`
/// `meta.k8s.io/v1` and `kind` `PartialObjectMetadata`; when it answers
/// with the whole object instead, these are the object's own and every
/// field besides `metadata` is skipped unread.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PartialObjectMetadata {
    /// `apiVersion`: [`API_VERSION`], or the object's own.
    #[serde(default, skip_serializing_if = "LeanString::is_empty", deserialize_with = "shared")]
    pub api_version: LeanString,
    /// `kind`: [`KIND`], or the object's own.
    #[serde(default, skip_serializing_if = "LeanString::is_empty", deserialize_with = "shared")]
    pub kind: LeanString,
    /// The object's `metadata`.
    #[serde(default)]
    pub metadata: PartialMeta,
}

/// `metav1.ObjectMeta`, every field typed and held lean (strings of up to
/// 16 bytes inline, empty lists one pointer), for caches of many objects.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PartialMeta {
    /// `metadata.name`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<LeanString>,
    /// `metadata.generateName`: the prefix the apiserver completes into a
    /// unique name on create when `name` is empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generate_name: Option<LeanString>,
    /// `metadata.namespace`; absent for cluster-scoped objects.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<LeanString>,
    /// `metadata.selfLink`: no longer set by the apiserver; kept to
    /// round-trip older payloads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub self_link: Option<LeanString>,
    /// `metadata.uid`: set on create and never reused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<LeanString>,
    /// `metadata.resourceVersion`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_version: Option<LeanString>,
    /// `metadata.generation`: bumped on each change of the desired state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<i64>,
    /// `metadata.creationTimestamp`.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "optional_time")]
    pub creation_timestamp: Option<CompactTimestamp>,
    /// `metadata.deletionTimestamp`: set once deletion was requested and
    /// the object waits for its finalizers.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "optional_time")]
    pub deletion_timestamp: Option<CompactTimestamp>,
    /// `metadata.deletionGracePeriodSeconds`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion_grace_period_seconds: Option<i64>,
    /// `metadata.labels`.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "shared_map")]
    pub labels: Option<Map>,
    /// `metadata.annotations`.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "shared_map")]
    pub annotations: Option<Map>,
    /// `metadata.ownerReferences`.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "exact_list")]
    pub owner_references: Option<ThinVec<OwnerReference>>,
    /// `metadata.finalizers`.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "exact_list")]
    pub finalizers: Option<ThinVec<LeanString>>,
    /// `metadata.managedFields`, the server-side-apply field ownership, as
    /// raw JSON; metadata informers drop it by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub managed_fields: Option<Box<serde_json::Value>>,
}

/// A string many objects repeat (`apiVersion`, `kind`), sharing the buffer
/// of an equal one decoded recently; `null` reads as empty.
fn shared<'de, D: Deserializer<'de>>(deserializer: D) -> Result<LeanString, D::Error> {
    let text: Option<Cow<'de, str>> = Option::deserialize(deserializer)?;
    Ok(text.map(|t| crate::codec::shared(&t)).unwrap_or_default())
}

/// A map many objects repeat (the labels and annotations of one workload's
/// pods), sharing the entries of an equal one decoded recently, as the
/// generated decoders read them; `null` reads as absent.
fn shared_map<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Map>, D::Error> {
    struct Shared(Map);
    impl<'de> Deserialize<'de> for Shared {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            crate::map::deserialize_shared(deserializer).map(Shared)
        }
    }
    Ok(Option::<Shared>::deserialize(deserializer)?.map(|shared| shared.0))
}

/// A list held in an allocation of exactly its length: a `ThinVec` grown
/// while decoding keeps room for four (a single owner reference would
/// take 304 bytes instead of 88), and a cache keeps it as long as the
/// object.
fn exact_list<'de, D, T>(deserializer: D) -> Result<Option<ThinVec<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Ok(Option::<Vec<T>>::deserialize(deserializer)?.map(ThinVec::from_iter))
}

/// A `metav1.Time` in its JSON form.
#[derive(Serialize, Deserialize)]
struct Time(#[serde(with = "crate::codec::time")] CompactTimestamp);

/// `#[serde(with = ...)]` for an optional `metav1.Time`.
mod optional_time {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::Time;
    use crate::codec::CompactTimestamp;

    pub(super) fn serialize<S: Serializer>(t: &Option<CompactTimestamp>, s: S) -> Result<S::Ok, S::Error> {
        t.map(Time).serialize(s)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<CompactTimestamp>, D::Error> {
        Ok(Option::<Time>::deserialize(d)?.map(|t| t.0))
    }
}

impl Metadata for PartialMeta {
    fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }
    fn generate_name(&self) -> Option<&str> {
        self.generate_name.as_deref()
    }
    fn namespace(&self) -> Option<&str> {
        self.namespace.as_deref()
    }
    fn uid(&self) -> Option<&str> {
        self.uid.as_deref()
    }
    fn resource_version(&self) -> Option<&str> {
        self.resource_version.as_deref()
    }
    fn generation(&self) -> Option<i64> {
        self.generation
    }
    fn labels(&self) -> Option<&Map> {
        self.labels.as_ref()
    }
    fn annotations(&self) -> Option<&Map> {
        self.annotations.as_ref()
    }
    fn is_being_deleted(&self) -> bool {
        self.deletion_timestamp.is_some()
    }
    fn set_name(&mut self, name: Option<LeanString>) {
        self.name = name;
    }
    fn set_namespace(&mut self, namespace: Option<LeanString>) {
        self.namespace = namespace;
    }
    fn set_resource_version(&mut self, resource_version: Option<LeanString>) {
        self.resource_version = resource_version;
    }
    fn clear_managed_fields(&mut self) {
        self.managed_fields = None;
    }
    fn owner_references(&self) -> Cow<'_, [OwnerReference]> {
        Cow::Borrowed(self.owner_references.as_deref().unwrap_or_default())
    }
    fn set_owner_references(&mut self, references: Vec<OwnerReference>) {
        self.owner_references = (!references.is_empty()).then(|| references.into());
    }
    fn finalizers(&self) -> Vec<&str> {
        self.finalizers.iter().flatten().map(LeanString::as_str).collect()
    }
}

impl Object for PartialObjectMetadata {
    metadata_field!(PartialMeta);

    /// `apiVersion` and `kind` as the object holds them; `None` when both
    /// are empty.
    fn type_meta(&self) -> Option<(Cow<'_, str>, Cow<'_, str>)> {
        if self.api_version.is_empty() && self.kind.is_empty() {
            return None;
        }
        Some((Cow::Borrowed(&self.api_version), Cow::Borrowed(&self.kind)))
    }

    /// [`ACCEPT`]: the metadata only, else the whole object.
    fn accept_as() -> Option<AcceptAs> {
        Some(ACCEPT)
    }

    /// [`ACCEPT_PROTOBUF`], read by the codec of `metadata/protobuf.rs`.
    fn protobuf_as() -> Option<ProtobufAs<Self>> {
        Some(ProtobufAs { codec: protobuf::CODEC, accept: ACCEPT_PROTOBUF })
    }
}

/// Decoded whole, then trimmed: its `managedFields` are cleared afterwards
/// when the options skip them.
impl crate::codec::DecodeWith for PartialObjectMetadata {
    fn deserialize_with<'de, D: Deserializer<'de>>(
        deserializer: D,
        options: crate::codec::DecodeOptions,
    ) -> Result<Self, D::Error> {
        crate::object::deserialize_then_apply(deserializer, options)
    }
}

// client-go's metadata client has no create or update: an object is not
// made of its metadata alone.
crate::impl_verbs!(PartialObjectMetadata: Get, List, Watch, Patch, Delete, DeleteCollection);

impl PartialObjectMetadata {
    /// `metadata.name`.
    pub fn name(&self) -> Option<&str> {
        self.metadata.name.as_deref()
    }
    /// `metadata.namespace`.
    pub fn namespace(&self) -> Option<&str> {
        self.metadata.namespace.as_deref()
    }
    /// `metadata.labels`.
    pub fn labels(&self) -> Option<&Map> {
        self.metadata.labels.as_ref()
    }
}
