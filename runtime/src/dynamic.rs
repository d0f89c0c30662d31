//! Objects whose kind is known only at run time (client-go's `dynamic`
//! package): [`DynamicObject`] holds any object as JSON with typed
//! metadata, and [`DynamicClient`] runs every verb for a
//! [`DynamicResource`] (from discovery or built by hand).
//!
//! Use it for CRDs without generated types, generic tools (apply, garbage
//! collection, `kubectl get` alikes); prefer the typed
//! [`ResourceClient`] when the kind is known
//! at compile time. Convert between the two with
//! [`DynamicObject::from_typed`] and [`DynamicObject::try_into_typed`].

use std::borrow::Cow;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::LeanString;
use crate::object::{DynamicResource, Metadata, Object, OwnerReference, Resource, metadata_field};
use crate::rest::{HasScale, HasStatus, ResourceClient};

/// Converting between dynamic and typed objects.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The object's JSON does not fit the other representation: a field of
    /// the wrong type, a missing required field.
    #[error("converting {kind} object")]
    Convert {
        /// The kind being converted to or from.
        kind: String,
        /// What serde found wrong.
        #[source]
        source: serde_json::Error,
    },
    /// The dynamic object's `apiVersion`/`kind` are not those of the typed
    /// kind asked for.
    #[error("object is {found_api_version}/{found_kind}, not {api_version}/{kind}")]
    WrongKind {
        /// `apiVersion` of the typed kind asked for.
        api_version: String,
        /// The typed kind asked for.
        kind: String,
        /// `apiVersion` of the object.
        found_api_version: String,
        /// `kind` of the object.
        found_kind: String,
    },
}

/// `metav1.ObjectMeta` as far as generic code needs it; every other field
/// is kept in `other` and written back unchanged.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DynamicMeta {
    /// `metadata.name`: unique among the kind's objects in the namespace (or
    /// the cluster).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `metadata.generateName`: the prefix the apiserver completes into a
    /// unique name on create when `name` is empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generate_name: Option<String>,
    /// `metadata.namespace`; absent for cluster-scoped objects.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// `metadata.uid`: set by the apiserver on create and never reused, it
    /// tells apart two objects that had the same name at different times.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
    /// `metadata.resourceVersion`: the opaque version the apiserver checks on
    /// update (optimistic concurrency) and resumes watches from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_version: Option<String>,
    /// `metadata.generation`: bumped by the apiserver on each change of the
    /// desired state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<i64>,
    /// `metadata.labels`, matched by label selectors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<crate::Map>,
    /// `metadata.annotations`: non-identifying key/value data for tools and
    /// controllers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<crate::Map>,
    /// `metadata.deletionTimestamp` (RFC 3339): set once deletion was requested
    /// and the object waits for its finalizers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion_timestamp: Option<String>,
    /// `metadata.managedFields`, the server-side-apply field ownership, kept as
    /// raw JSON; informers drop it by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub managed_fields: Option<Value>,
    /// Every other `metadata` field (`ownerReferences`, `finalizers`,
    /// `creationTimestamp`, ...), written back unchanged.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

impl Metadata for DynamicMeta {
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
    fn labels(&self) -> Option<&crate::Map> {
        self.labels.as_ref()
    }
    fn annotations(&self) -> Option<&crate::Map> {
        self.annotations.as_ref()
    }
    fn is_being_deleted(&self) -> bool {
        self.deletion_timestamp.is_some()
    }
    fn set_name(&mut self, name: Option<LeanString>) {
        self.name = name.map(String::from);
    }
    fn set_namespace(&mut self, namespace: Option<LeanString>) {
        self.namespace = namespace.map(String::from);
    }
    fn set_resource_version(&mut self, resource_version: Option<LeanString>) {
        self.resource_version = resource_version.map(String::from);
    }
    fn clear_managed_fields(&mut self) {
        self.managed_fields = None;
    }
    /// Read from the JSON kept in `other`; entries that are not owner
    /// references are left out.
    fn owner_references(&self) -> Cow<'_, [OwnerReference]> {
        let references = match self.other.get("ownerReferences") {
            Some(Value::Array(items)) => {
                items.iter().filter_map(|item| OwnerReference::deserialize(item).ok()).collect()
            }
            _ => Vec::new(),
        };
        Cow::Owned(references)
    }
    fn set_owner_references(&mut self, references: Vec<OwnerReference>) {
        if references.is_empty() {
            self.other.remove("ownerReferences");
        } else if let Ok(value) = serde_json::to_value(references) {
            self.other.insert("ownerReferences".to_owned(), value);
        }
    }
    fn finalizers(&self) -> Vec<&str> {
        match self.other.get("finalizers") {
            Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        }
    }
}

/// Any object: `apiVersion`, `kind`, typed `metadata`, and the rest
/// (`spec`, `status`, `data`, ...) as JSON.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DynamicObject {
    /// `apiVersion`: `group/version`, or `version` for the core group; may be
    /// empty on list items.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// `kind`, e.g. `Deployment`; may be empty on list items.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// The object's `metadata`.
    #[serde(default)]
    pub metadata: DynamicMeta,
    /// Every other top-level field (`spec`, `status`, `data`, ...) as JSON.
    #[serde(flatten)]
    pub data: Map<String, Value>,
}

impl Object for DynamicObject {
    metadata_field!(DynamicMeta);
    fn set_type_meta(&mut self, api_version: &str, kind: &str) {
        if self.api_version.is_empty() {
            api_version.clone_into(&mut self.api_version);
        }
        if self.kind.is_empty() {
            kind.clone_into(&mut self.kind);
        }
    }
    /// `apiVersion` and `kind` as the object holds them; `None` when both
    /// are empty.
    fn type_meta(&self) -> Option<(Cow<'_, str>, Cow<'_, str>)> {
        if self.api_version.is_empty() && self.kind.is_empty() {
            return None;
        }
        Some((Cow::Borrowed(&self.api_version), Cow::Borrowed(&self.kind)))
    }
}

/// Decoded whole, then trimmed: its `managedFields` are raw JSON among the
/// metadata, cleared afterwards when the options skip them.
impl crate::codec::DecodeWith for DynamicObject {
    fn deserialize_with<'de, D: serde::Deserializer<'de>>(
        deserializer: D,
        options: crate::codec::DecodeOptions,
    ) -> Result<Self, D::Error> {
        crate::object::deserialize_then_apply(deserializer, options)
    }
}

impl DynamicObject {
    /// An empty object of `resource`'s kind named `name`.
    pub fn new(resource: &DynamicResource, name: &str) -> Self {
        DynamicObject {
            api_version: resource.api_version(),
            kind: resource.kind.clone(),
            metadata: DynamicMeta { name: Some(name.to_owned()), ..Default::default() },
            data: Map::new(),
        }
    }
    /// Puts the object in `namespace`.
    #[must_use]
    pub fn within(mut self, namespace: &str) -> Self {
        self.metadata.namespace = Some(namespace.to_owned());
        self
    }
    /// Adds the top-level fields of `data`, a JSON object (anything else is
    /// ignored), replacing those already present.
    #[must_use]
    pub fn with_data(mut self, data: Value) -> Self {
        if let Value::Object(map) = data {
            self.data.extend(map);
        }
        self
    }
    /// `metadata.name`.
    pub fn name(&self) -> Option<&str> {
        self.metadata.name.as_deref()
    }
    /// `metadata.namespace`.
    pub fn namespace(&self) -> Option<&str> {
        self.metadata.namespace.as_deref()
    }
    /// `metadata.labels`.
    pub fn labels(&self) -> Option<&crate::Map> {
        self.metadata.labels.as_ref()
    }
    /// `metadata.resourceVersion`.
    pub fn resource_version(&self) -> Option<&str> {
        self.metadata.resource_version.as_deref()
    }

    /// The typed object as a dynamic one, `apiVersion`/`kind` filled in
    /// from `K` when the typed value leaves them out.
    pub fn from_typed<K: Resource + Serialize>(obj: &K) -> Result<DynamicObject, Error> {
        let convert = |source| Error::Convert { kind: K::KIND.to_owned(), source };
        let mut d: DynamicObject = serde_json::to_value(obj).and_then(serde_json::from_value).map_err(convert)?;
        if d.api_version.is_empty() {
            d.api_version = K::API_VERSION.to_owned();
        }
        if d.kind.is_empty() {
            d.kind = K::KIND.to_owned();
        }
        Ok(d)
    }

    /// Decodes as `K`, refusing an object of another kind.
    pub fn try_into_typed<K: Resource + DeserializeOwned>(self) -> Result<K, Error> {
        let wrong_kind = (!self.kind.is_empty() && self.kind != K::KIND)
            || (!self.api_version.is_empty() && self.api_version != K::API_VERSION);
        if wrong_kind {
            return Err(Error::WrongKind {
                api_version: K::API_VERSION.to_owned(),
                kind: K::KIND.to_owned(),
                found_api_version: self.api_version,
                found_kind: self.kind,
            });
        }
        let convert = |source| Error::Convert { kind: K::KIND.to_owned(), source };
        serde_json::to_value(self).and_then(serde_json::from_value).map_err(convert)
    }
}

/// The client of a resource known only at run time: the same
/// [`ResourceClient`] as for typed kinds, over [`DynamicObject`], so every
/// verb and subresource call is there. List items and watch events get
/// `apiVersion`/`kind` filled in from the resource. Make one with
/// [`ResourceClient::namespaced_with`], [`ResourceClient::all_with`] or
/// [`ResourceClient::for_resource`].
pub type DynamicClient = ResourceClient<DynamicObject>;

crate::cfg_feature!("informers" =>
    /// Shares one informer of whole objects per resource known at run time
    /// (client-go's `dynamicinformer.DynamicSharedInformerFactory`, and its
    /// listers: `.for_resource(&resource).lister()`): see
    /// [`ResourceInformerFactory`](crate::cache::ResourceInformerFactory).
    #[doc(alias = "dynamicinformer.DynamicSharedInformerFactory")]
    #[doc(alias = "dynamiclister")]
    pub type DynamicInformerFactory = crate::cache::ResourceInformerFactory<DynamicObject>;
);

/// The server decides whether a resource has a status; asking one that has
/// none answers 404.
impl HasStatus for DynamicObject {}

// What a run-time resource serves is known only to the server.
crate::impl_verbs!(DynamicObject: Get, List, Watch, Create, Update, Patch, Delete, DeleteCollection);

/// Any resource's scale, as JSON.
impl HasScale for DynamicObject {
    type Scale = Value;
}

// The connect operations of pods, services and nodes: a run-time object
// may be any of them, and the server answers 404 where it is not.
impl crate::rest::HasLog for DynamicObject {}
impl crate::rest::HasProxy for DynamicObject {}
crate::cfg_feature!("ws" =>
    impl crate::rest::HasExec for DynamicObject {}
    impl crate::rest::HasAttach for DynamicObject {}
    impl crate::rest::HasPortForward for DynamicObject {}
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rest::tests::server::{Reply, TestServer};
    use crate::rest::{CreateOptions, GetOptions, ListOptions, Patch, PatchOptions};
    use serde_json::json;

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    struct Widget {
        metadata: DynamicMeta,
        spec: Value,
    }
    impl Resource for Widget {
        const GROUP: &'static str = "example.io";
        const VERSION: &'static str = "v1";
        const API_VERSION: &'static str = "example.io/v1";
        const KIND: &'static str = "Widget";
        const PLURAL: &'static str = "widgets";
        const SCOPE: crate::object::Scope = crate::object::Scope::Namespaced;
        const LIST_KIND: &'static str = "WidgetList";
    }

    fn widgets() -> DynamicResource {
        DynamicResource::of::<Widget>()
    }

    #[test]
    fn typed_round_trip_keeps_unknown_fields() {
        let w = Widget {
            metadata: DynamicMeta {
                name: Some("w".into()),
                other: json!({"finalizers": ["f"]}).as_object().unwrap().clone(),
                ..Default::default()
            },
            spec: json!({"size": 3}),
        };
        let d = DynamicObject::from_typed(&w).unwrap();
        assert_eq!((d.api_version.as_str(), d.kind.as_str()), ("example.io/v1", "Widget"));
        assert_eq!(d.data["spec"]["size"], 3);
        let v = serde_json::to_value(&d).unwrap();
        assert_eq!(v["metadata"]["finalizers"][0], "f");
        assert_eq!(d.clone().try_into_typed::<Widget>().unwrap(), w);
        let mut other = d;
        other.kind = "Gadget".into();
        assert!(matches!(other.try_into_typed::<Widget>(), Err(Error::WrongKind { .. })));
    }

    #[test]
    fn metadata_setters_take_the_fields_string_type() {
        let mut obj = DynamicObject::default();
        obj.metadata_mut().set_name(Some("web".into()));
        obj.metadata_mut().set_namespace(Some(LeanString::from("default")));
        obj.metadata_mut().set_resource_version(Some("7".into()));
        assert_eq!((obj.name(), obj.namespace(), obj.resource_version()), (Some("web"), Some("default"), Some("7")));
        obj.metadata_mut().set_resource_version(None);
        assert_eq!(obj.resource_version(), None);
    }

    #[test]
    fn numbers_survive_a_round_trip_exactly() {
        // Numbers with more digits than an f64 holds, which serde_json's
        // default parse reads one unit off: written and read again, such a
        // number changed (found by fuzzing `json_codec`).
        let text = r#"{"code":677777777777777777777777777777777777777777777777,"ratio":6.777777777777777e+47}"#;
        let first: DynamicObject = crate::codec::decode_json(text.as_bytes()).unwrap();
        let again: DynamicObject =
            crate::codec::decode_json(serde_json::to_string(&first).unwrap().as_bytes()).unwrap();
        assert_eq!(again, first, "a number changed through its encoding");
        // Each is read as the nearest f64, as Go's strconv.ParseFloat reads it.
        assert_eq!(first.data["code"].as_f64(), Some(6.777777777777778e47));
        assert_eq!(first.data["ratio"].as_f64(), Some(6.777777777777777e47));
    }

    #[tokio::test]
    async fn verbs_share_the_typed_paths() {
        let server = TestServer::start(|r, _| match r.method.as_str() {
            "GET" if r.path.contains("/widgets?") || r.path.ends_with("/widgets") => {
                Reply::json(200, json!({"items": [{"metadata": {"name": "a"}, "spec": {}}], "metadata": {}}))
            }
            "POST" => Reply::Respond { status: 201, headers: vec![], body: r.body.clone() },
            _ => Reply::json(
                200,
                json!({"apiVersion":"example.io/v1","kind":"Widget","metadata":{"name":"a","labels":{"x":"y"}}}),
            ),
        })
        .await;
        let c = DynamicClient::namespaced_with(server.client(), "ns", &widgets());
        let list = c.list(&ListOptions::default()).await.unwrap();
        assert_eq!(list.items[0].kind, "Widget");
        assert_eq!(list.items[0].api_version, "example.io/v1");
        let got = c.get("a", &GetOptions::default()).await.unwrap();
        assert_eq!(got.labels().unwrap()["x"], "y");
        let obj = DynamicObject::new(&widgets(), "b").with_data(json!({"spec": {"size": 1}}));
        let created = c.create(&obj, &CreateOptions::default()).await.unwrap();
        assert_eq!(created, obj);
        c.patch("a", &Patch::Merge(json!({"spec": {}})), &PatchOptions::default()).await.unwrap();
        let all = DynamicClient::all_with(server.client(), &widgets());
        all.list(&ListOptions::default()).await.unwrap();
        let paths: Vec<String> = server.requests().into_iter().map(|r| r.path).collect();
        assert_eq!(
            paths,
            vec![
                "/apis/example.io/v1/namespaces/ns/widgets",
                "/apis/example.io/v1/namespaces/ns/widgets/a",
                "/apis/example.io/v1/namespaces/ns/widgets",
                "/apis/example.io/v1/namespaces/ns/widgets/a",
                "/apis/example.io/v1/widgets",
            ]
        );
    }
}
