//! Objects whose kind is known only at run time (client-go's `dynamic`
//! package): [`DynamicObject`] holds any object as JSON with typed
//! metadata, and [`DynamicClient`] runs every verb for a
//! [`DynamicResource`] (from discovery or built by hand).
//!
//! Use it for CRDs without generated types, generic tools (apply, garbage
//! collection, `kubectl get` alikes); prefer the typed
//! [`ResourceClient`](crate::rest::ResourceClient) when the kind is known
//! at compile time. Convert between the two with
//! [`DynamicObject::from_typed`] and [`DynamicObject::try_into_typed`].

use std::collections::BTreeMap;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::object::{DynamicResource, Metadata, ObjectList, Resource};
use crate::rest::{
    ApplyOptions, ByteStream, Client, CreateOptions, DeleteOptions, DeleteResult, Error as RestError, GetOptions,
    ListOptions, Patch, PatchOptions, Target, UpdateOptions, WatchEvent, WatchStream,
};

/// Converting between dynamic and typed objects.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("converting {kind} object: {source}")]
    Convert {
        kind: String,
        #[source]
        source: serde_json::Error,
    },
    #[error("object is {found_api_version}/{found_kind}, not {api_version}/{kind}")]
    WrongKind { api_version: String, kind: String, found_api_version: String, found_kind: String },
}

/// `metav1.ObjectMeta` as far as generic code needs it; every other field
/// is kept in `other` and written back unchanged.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DynamicMeta {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generate_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<BTreeMap<String, String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<BTreeMap<String, String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion_timestamp: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub managed_fields: Option<Value>,
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
    fn labels(&self) -> Option<&BTreeMap<String, String>> {
        self.labels.as_ref()
    }
    fn annotations(&self) -> Option<&BTreeMap<String, String>> {
        self.annotations.as_ref()
    }
    fn is_being_deleted(&self) -> bool {
        self.deletion_timestamp.is_some()
    }
    fn set_name(&mut self, name: Option<String>) {
        self.name = name;
    }
    fn set_namespace(&mut self, namespace: Option<String>) {
        self.namespace = namespace;
    }
    fn set_resource_version(&mut self, resource_version: Option<String>) {
        self.resource_version = resource_version;
    }
    fn clear_managed_fields(&mut self) {
        self.managed_fields = None;
    }
}

/// Any object: `apiVersion`, `kind`, typed `metadata`, and the rest
/// (`spec`, `status`, `data`, ...) as JSON.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DynamicObject {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    #[serde(default)]
    pub metadata: DynamicMeta,
    #[serde(flatten)]
    pub data: Map<String, Value>,
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
    pub fn within(mut self, namespace: &str) -> Self {
        self.metadata.namespace = Some(namespace.to_owned());
        self
    }
    pub fn with_data(mut self, data: Value) -> Self {
        if let Value::Object(map) = data {
            self.data.extend(map);
        }
        self
    }
    pub fn name(&self) -> Option<&str> {
        self.metadata.name.as_deref()
    }
    pub fn namespace(&self) -> Option<&str> {
        self.metadata.namespace.as_deref()
    }
    pub fn labels(&self) -> Option<&BTreeMap<String, String>> {
        self.metadata.labels.as_ref()
    }
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

/// All verbs for one resource known at run time.
#[derive(Clone, Debug)]
pub struct DynamicClient {
    target: Target,
    resource: DynamicResource,
}

impl DynamicClient {
    /// Namespace `None` = all namespaces (or cluster scope); ignored for
    /// cluster-scoped resources.
    pub fn new(client: Client, resource: &DynamicResource, namespace: Option<&str>) -> Self {
        DynamicClient {
            target: Target {
                client,
                prefix: resource.api_prefix(),
                plural: resource.plural.clone(),
                namespaced: resource.namespaced,
                namespace: namespace.filter(|n| resource.namespaced && !n.is_empty()).map(str::to_owned),
            },
            resource: resource.clone(),
        }
    }
    pub fn namespaced(client: Client, resource: &DynamicResource, namespace: &str) -> Self {
        Self::new(client, resource, Some(namespace))
    }
    pub fn all(client: Client, resource: &DynamicResource) -> Self {
        Self::new(client, resource, None)
    }
    pub fn resource(&self) -> &DynamicResource {
        &self.resource
    }

    fn fill_type(&self, obj: &mut DynamicObject) {
        if obj.api_version.is_empty() {
            obj.api_version = self.resource.api_version();
        }
        if obj.kind.is_empty() {
            obj.kind = self.resource.kind.clone();
        }
    }

    /// # Cancel safety
    /// As [`ResourceClient`](crate::rest::ResourceClient): dropping a
    /// future abandons its request.
    pub async fn get(&self, name: &str, opts: &GetOptions) -> Result<DynamicObject, RestError> {
        self.target.get(name, "", opts).await
    }

    /// Items get `apiVersion`/`kind` filled in (list items lack them).
    pub async fn list(&self, opts: &ListOptions) -> Result<ObjectList<DynamicObject>, RestError> {
        let mut list: ObjectList<DynamicObject> = self.target.list(opts).await?;
        for item in &mut list.items {
            self.fill_type(item);
        }
        Ok(list)
    }

    pub async fn watch(&self, opts: &ListOptions) -> Result<WatchStream<DynamicObject>, RestError> {
        use futures_util::StreamExt as _;
        let this = self.clone();
        let stream = self.target.watch::<DynamicObject>(opts).await?;
        Ok(stream
            .map(move |event| {
                event.map(|e| match e {
                    WatchEvent::Added(mut o) => {
                        this.fill_type(&mut o);
                        WatchEvent::Added(o)
                    }
                    WatchEvent::Modified(mut o) => {
                        this.fill_type(&mut o);
                        WatchEvent::Modified(o)
                    }
                    WatchEvent::Deleted(mut o) => {
                        this.fill_type(&mut o);
                        WatchEvent::Deleted(o)
                    }
                    b @ WatchEvent::Bookmark(_) => b,
                })
            })
            .boxed())
    }

    pub async fn create(&self, obj: &DynamicObject, opts: &CreateOptions) -> Result<DynamicObject, RestError> {
        self.target.create(obj.namespace(), obj, opts).await
    }

    pub async fn update(&self, obj: &DynamicObject, opts: &UpdateOptions) -> Result<DynamicObject, RestError> {
        let name = obj.name().filter(|n| !n.is_empty()).ok_or_else(|| RestError::InvalidRequest {
            what: format!("{} object", self.resource.kind),
            message: "metadata.name is not set".into(),
        })?;
        self.target.replace(name, "", obj.namespace(), obj, opts).await
    }

    pub async fn patch(&self, name: &str, patch: &Patch, opts: &PatchOptions) -> Result<DynamicObject, RestError> {
        self.target.patch(name, "", patch, opts).await
    }

    pub async fn apply<B: Serialize + ?Sized>(
        &self,
        name: &str,
        config: &B,
        opts: &ApplyOptions,
    ) -> Result<DynamicObject, RestError> {
        self.target.apply(name, "", None, config, opts).await
    }

    pub async fn delete(&self, name: &str, opts: &DeleteOptions) -> Result<DeleteResult<DynamicObject>, RestError> {
        self.target.delete(name, opts).await
    }

    pub async fn delete_collection(
        &self,
        opts: &DeleteOptions,
        list: &ListOptions,
    ) -> Result<DeleteResult<ObjectList<DynamicObject>>, RestError> {
        self.target.delete_collection(opts, list).await
    }

    pub async fn get_subresource<P: Serialize + ?Sized>(
        &self,
        name: &str,
        subresource: &str,
        params: &P,
    ) -> Result<Value, RestError> {
        self.target.get_with(name, subresource, params).await
    }

    pub async fn update_subresource<B: Serialize + ?Sized>(
        &self,
        name: &str,
        subresource: &str,
        body: &B,
        opts: &UpdateOptions,
    ) -> Result<Value, RestError> {
        self.target.replace(name, subresource, None, body, opts).await
    }

    pub async fn patch_subresource(
        &self,
        name: &str,
        subresource: &str,
        patch: &Patch,
        opts: &PatchOptions,
    ) -> Result<Value, RestError> {
        self.target.patch(name, subresource, patch, opts).await
    }

    pub async fn stream_subresource<P: Serialize + ?Sized>(
        &self,
        name: &str,
        subresource: &str,
        params: &P,
    ) -> Result<ByteStream, RestError> {
        self.target.stream_sub(name, subresource, params).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rest::tests::server::{Reply, TestServer};
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
            metadata: DynamicMeta { name: Some("w".into()), other: json!({"finalizers": ["f"]}).as_object().unwrap().clone(), ..Default::default() },
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

    #[tokio::test]
    async fn verbs_share_the_typed_paths() {
        let server = TestServer::start(|r, _| match r.method.as_str() {
            "GET" if r.path.contains("/widgets?") || r.path.ends_with("/widgets") => {
                Reply::json(200, json!({"items": [{"metadata": {"name": "a"}, "spec": {}}], "metadata": {}}))
            }
            "POST" => Reply::Respond { status: 201, headers: vec![], body: r.body.clone() },
            _ => Reply::json(200, json!({"apiVersion":"example.io/v1","kind":"Widget","metadata":{"name":"a","labels":{"x":"y"}}})),
        })
        .await;
        let c = DynamicClient::namespaced(server.client(), &widgets(), "ns");
        let list = c.list(&ListOptions::default()).await.unwrap();
        assert_eq!(list.items[0].kind, "Widget");
        assert_eq!(list.items[0].api_version, "example.io/v1");
        let got = c.get("a", &GetOptions::default()).await.unwrap();
        assert_eq!(got.labels().unwrap()["x"], "y");
        let obj = DynamicObject::new(&widgets(), "b").with_data(json!({"spec": {"size": 1}}));
        let created = c.create(&obj, &CreateOptions::default()).await.unwrap();
        assert_eq!(created, obj);
        c.patch("a", &Patch::Merge(json!({"spec": {}})), &PatchOptions::default()).await.unwrap();
        let all = DynamicClient::all(server.client(), &widgets());
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
