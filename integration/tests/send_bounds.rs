//! Controllers spawn the client's futures on a multi-threaded runtime: the
//! futures of every verb, subresource and extension method must be `Send`,
//! and the errors must cross threads. Compiling this file is the test.

use k8s_client::api::apps::v1::Deployment;
use k8s_client::api::core::v1::{Pod, PodList};
use k8s_client::clientset::Clientset;
use k8s_client::clientset::core_v1::PodLogParams;
use k8s_client::prelude::*;
use k8s_client_runtime::config::Config;
use k8s_client_runtime::dynamic::DynamicClient;
use k8s_client_runtime::rest::{
    ApplyOptions, Client, CreateOptions, DeleteOptions, Error, GetOptions, ListOptions, Patch, PatchOptions,
    ResourceClient, UpdateOptions,
};

fn send_sync<T: Send + Sync + 'static>() {}
fn send<T: Send>(_: &T) {}

#[test]
fn futures_and_errors_are_send() {
    send_sync::<Error>();
    send_sync::<k8s_client_runtime::config::Error>();
    send_sync::<k8s_client_runtime::discovery::Error>();
    send_sync::<k8s_client_runtime::discovery::MappingError>();
    send_sync::<k8s_client_runtime::discovery::RestMapper>();
    send_sync::<Client>();
    send_sync::<ResourceClient<Deployment>>();
    let client = Client::new(Config::new("https://127.0.0.1:6443".parse().unwrap())).unwrap();
    let clientset = Clientset::new(client.clone());
    let deployments = clientset.apps_v1().deployments("ns");
    let pods = clientset.core_v1().pods("ns");
    let opts = ListOptions::default();
    send(&deployments.get("x", &GetOptions::default()));
    send(&deployments.list(&opts));
    send(&pods.list_as::<PodList>(&opts));
    send(&deployments.watch(&opts));
    send(&deployments.create(&Deployment::default(), &CreateOptions::default()));
    send(&deployments.update_status(&Deployment::default(), &UpdateOptions::default()));
    send(&deployments.apply_status("x", &Deployment::default(), &ApplyOptions::new("test")));
    send(&deployments.get_scale("x"));
    send(&deployments.patch_scale("x", &Patch::Merge(serde_json::json!({})), &PatchOptions::default()));
    send(&deployments.delete("x", &DeleteOptions::default()));
    send(&pods.log("x", &PodLogParams::default()));
    send(&pods.log_stream("x", &PodLogParams { follow: Some(true), ..Default::default() }));
    send(&pods.update_ephemeralcontainers("x", &Pod::default(), &UpdateOptions::default()));
    send(&pods.apply_resize("x", &serde_json::json!({}), &ApplyOptions::new("test")));
    let dc = k8s_client_runtime::discovery::DiscoveryClient::new(client.clone());
    send(&dc.discover());
    let mapper = k8s_client_runtime::discovery::RestMapper::new(dc.clone());
    send(&mapper.mapping("apps", "Deployment", None));
    send(&mapper.resource("deploy"));
    send(&mapper.expand_category("all"));
    send(&DynamicClient::for_kind(client.clone(), &mapper, "apps/v1", "Deployment", None));
    let r = k8s_client_runtime::DynamicResource::of::<Deployment>();
    let dynamic = DynamicClient::all_with(client, &r);
    send(&dynamic.list(&opts));
    send(&dynamic.watch(&opts));
    send(&dynamic.get_status("x"));
}
