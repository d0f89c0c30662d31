//! The shape of code the generator emits, against the public API only:
//! a kind implementing `Resource`/`Object` and a per-kind client wrapping
//! `ResourceClient<K>`. Compiling this file is most of the test.

use std::collections::BTreeMap;
use std::future::Future;

use k8s_client_runtime::object::{Metadata, Object, Resource, Scope};
use k8s_client_runtime::rest::{
    ApplyOptions, ByteStream, Client, CreateOptions, DeleteOptions, Error, GetOptions, HasScale, HasStatus, ListOptions,
    Patch, PatchOptions, ResourceClient, UpdateOptions,
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

/// What the generator emits for a kind: marker traits for its regular
/// subresources, an alias for its client, and an extension trait for the
/// irregular ones.
impl HasStatus for Deployment {}
impl HasScale for Deployment {
    type Scale = Scale;
}
pub type DeploymentClient = ResourceClient<Deployment>;

pub trait DeploymentClientExt {
    fn create_rollback(&self, name: &str, body: &Scale, opts: &CreateOptions) -> impl Future<Output = Result<Scale, Error>> + Send;
    fn logs(&self, name: &str, follow: bool) -> impl Future<Output = Result<ByteStream, Error>> + Send;
}

impl DeploymentClientExt for DeploymentClient {
    fn create_rollback(&self, name: &str, body: &Scale, opts: &CreateOptions) -> impl Future<Output = Result<Scale, Error>> + Send {
        self.create_subresource(name, "rollback", body, opts)
    }
    fn logs(&self, name: &str, follow: bool) -> impl Future<Output = Result<ByteStream, Error>> + Send {
        async move { self.stream_subresource(name, "log", &[("follow", follow)]).await }
    }
}

#[test]
fn generated_shape_compiles_and_builds() {
    let client = Client::new(Config::new("https://127.0.0.1:6443".parse().unwrap())).unwrap();
    let d = DeploymentClient::namespaced(client, "ns");
    assert_eq!(d.namespace(), Some("ns"));
    assert_eq!(d.resource().plural, "deployments");
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
    let d = DeploymentClient::namespaced(client.clone(), "ns");
    let opts = ListOptions::default();
    send(&d.get("x", &GetOptions::default()));
    send(&d.list(&opts));
    send(&d.list_as::<DeploymentList>(&opts));
    send(&d.update_status(&Deployment::default(), &UpdateOptions::default()));
    send(&d.apply_status("x", &Deployment::default(), &ApplyOptions::new("test")));
    send(&d.get_scale("x"));
    send(&d.patch_scale("x", &Patch::Merge(serde_json::json!({})), &PatchOptions::default()));
    send(&d.create_rollback("x", &Scale::default(), &CreateOptions::default()));
    send(&d.watch(&opts));
    send(&d.create(&Deployment::default(), &CreateOptions::default()));
    send(&d.delete("x", &DeleteOptions::default()));
    send(&d.logs("x", true));
    let dc = k8s_client_runtime::discovery::DiscoveryClient::new(client.clone());
    send(&dc.discover());
    let r = k8s_client_runtime::DynamicResource::of::<Deployment>();
    let dynamic = k8s_client_runtime::dynamic::DynamicClient::all_with(client, &r);
    send(&dynamic.list(&opts));
    send(&dynamic.watch(&opts));
}
