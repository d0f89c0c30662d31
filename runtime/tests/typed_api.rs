//! The shape of code the generator emits, against the public API only:
//! a kind implementing `Resource`/`Object` and a per-kind client wrapping
//! `ResourceClient<K>`. Compiling this file is most of the test.

use std::collections::BTreeMap;

use k8s_client_runtime::object::{Metadata, Object, ObjectList, Resource, Scope};
use k8s_client_runtime::rest::{
    ApplyOptions, ByteStream, Client, CreateOptions, DeleteOptions, DeleteResult, Error, GetOptions, ListOptions, Patch,
    PatchOptions, ResourceClient, UpdateOptions, WatchStream,
};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectMeta {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}

impl Metadata for ObjectMeta {
    fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }
    fn generate_name(&self) -> Option<&str> {
        None
    }
    fn namespace(&self) -> Option<&str> {
        self.namespace.as_deref()
    }
    fn uid(&self) -> Option<&str> {
        None
    }
    fn resource_version(&self) -> Option<&str> {
        None
    }
    fn generation(&self) -> Option<i64> {
        None
    }
    fn labels(&self) -> Option<&BTreeMap<String, String>> {
        None
    }
    fn annotations(&self) -> Option<&BTreeMap<String, String>> {
        None
    }
    fn is_being_deleted(&self) -> bool {
        false
    }
    fn set_name(&mut self, name: Option<String>) {
        self.name = name;
    }
    fn set_namespace(&mut self, namespace: Option<String>) {
        self.namespace = namespace;
    }
    fn set_resource_version(&mut self, _: Option<String>) {}
    fn clear_managed_fields(&mut self) {}
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Deployment {
    pub metadata: ObjectMeta,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DeploymentList {
    pub items: Vec<Deployment>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Scale {
    pub metadata: ObjectMeta,
}

impl Resource for Deployment {
    const GROUP: &'static str = "apps";
    const VERSION: &'static str = "v1";
    const API_VERSION: &'static str = "apps/v1";
    const KIND: &'static str = "Deployment";
    const PLURAL: &'static str = "deployments";
    const SCOPE: Scope = Scope::Namespaced;
    const LIST_KIND: &'static str = "DeploymentList";
}

impl Object for Deployment {
    type Meta = ObjectMeta;
    fn metadata(&self) -> &ObjectMeta {
        &self.metadata
    }
    fn metadata_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

/// What a generated `DeploymentsClient` looks like.
#[derive(Clone)]
pub struct DeploymentsClient(ResourceClient<Deployment>);

#[allow(dead_code)]
impl DeploymentsClient {
    pub fn new(client: Client, namespace: &str) -> Self {
        DeploymentsClient(ResourceClient::namespaced(client, namespace))
    }
    pub async fn get(&self, name: &str, opts: &GetOptions) -> Result<Deployment, Error> {
        self.0.get(name, opts).await
    }
    pub async fn list(&self, opts: &ListOptions) -> Result<DeploymentList, Error> {
        self.0.list_as(opts).await
    }
    pub async fn list_generic(&self, opts: &ListOptions) -> Result<ObjectList<Deployment>, Error> {
        self.0.list(opts).await
    }
    pub async fn watch(&self, opts: &ListOptions) -> Result<WatchStream<Deployment>, Error> {
        self.0.watch(opts).await
    }
    pub async fn create(&self, obj: &Deployment, opts: &CreateOptions) -> Result<Deployment, Error> {
        self.0.create(obj, opts).await
    }
    pub async fn update(&self, obj: &Deployment, opts: &UpdateOptions) -> Result<Deployment, Error> {
        self.0.update(obj, opts).await
    }
    pub async fn update_status(&self, obj: &Deployment, opts: &UpdateOptions) -> Result<Deployment, Error> {
        self.0.update_status(obj, opts).await
    }
    pub async fn patch(&self, name: &str, patch: &Patch, opts: &PatchOptions) -> Result<Deployment, Error> {
        self.0.patch(name, patch, opts).await
    }
    pub async fn apply(&self, name: &str, obj: &Deployment, opts: &ApplyOptions) -> Result<Deployment, Error> {
        self.0.apply(name, obj, opts).await
    }
    pub async fn apply_status(&self, name: &str, obj: &Deployment, opts: &ApplyOptions) -> Result<Deployment, Error> {
        self.0.apply_subresource(name, "status", obj, opts).await
    }
    pub async fn delete(&self, name: &str, opts: &DeleteOptions) -> Result<DeleteResult<Deployment>, Error> {
        self.0.delete(name, opts).await
    }
    pub async fn delete_collection(
        &self,
        opts: &DeleteOptions,
        list: &ListOptions,
    ) -> Result<DeleteResult<ObjectList<Deployment>>, Error> {
        self.0.delete_collection(opts, list).await
    }
    pub async fn get_scale(&self, name: &str) -> Result<Scale, Error> {
        self.0.get_subresource(name, "scale", &()).await
    }
    pub async fn update_scale(&self, name: &str, scale: &Scale, opts: &UpdateOptions) -> Result<Scale, Error> {
        self.0.update_subresource(name, "scale", scale, opts).await
    }
    pub async fn patch_scale(&self, name: &str, patch: &Patch, opts: &PatchOptions) -> Result<Scale, Error> {
        self.0.patch_subresource(name, "scale", patch, opts).await
    }
    pub async fn create_rollback(&self, name: &str, body: &Scale, opts: &CreateOptions) -> Result<Scale, Error> {
        self.0.create_subresource(name, "rollback", body, opts).await
    }
    pub async fn logs(&self, name: &str, follow: bool) -> Result<ByteStream, Error> {
        self.0.stream_subresource(name, "log", &[("follow", follow)]).await
    }
}

#[test]
fn generated_wrapper_shape_compiles_and_builds() {
    let client = Client::new(Config::new("https://127.0.0.1:6443".parse().unwrap())).unwrap();
    let d = DeploymentsClient::new(client, "ns");
    assert_eq!(d.0.namespace(), Some("ns"));
}

use k8s_client_runtime::config::Config;

fn send_sync<T: Send + Sync + 'static>() {}
fn send<T: Send>(_: &T) {}

/// Controllers spawn these futures on tokio: they must be `Send`, and the
/// errors must cross threads.
#[test]
fn futures_and_errors_are_send() {
    send_sync::<Error>();
    send_sync::<k8s_client_runtime::config::Error>();
    send_sync::<k8s_client_runtime::discovery::Error>();
    send_sync::<Client>();
    send_sync::<ResourceClient<Deployment>>();
    let client = Client::new(Config::new("https://127.0.0.1:6443".parse().unwrap())).unwrap();
    let d = DeploymentsClient::new(client.clone(), "ns");
    let opts = ListOptions::default();
    send(&d.get("x", &GetOptions::default()));
    send(&d.list(&opts));
    send(&d.watch(&opts));
    send(&d.create(&Deployment::default(), &CreateOptions::default()));
    send(&d.delete("x", &DeleteOptions::default()));
    send(&d.logs("x", true));
    let dc = k8s_client_runtime::discovery::DiscoveryClient::new(client.clone());
    send(&dc.discover());
    let r = k8s_client_runtime::DynamicResource::of::<Deployment>();
    let dynamic = k8s_client_runtime::dynamic::DynamicClient::all(client, &r);
    send(&dynamic.list(&opts));
    send(&dynamic.watch(&opts));
}
