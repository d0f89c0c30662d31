//! Lists the pods of namespace `default` through the DynamicClient (no typed
//! structs: unstructured JSON), printing `name<TAB>phase` per pod.

use k8s_client_runtime::Report;
use k8s_client_runtime::dynamic::DynamicClient;
use k8s_client_runtime::object::DynamicResource;
use k8s_client_runtime::rest::{Client, ListOptions};

#[tokio::main]
async fn main() -> Result<(), Report> {
    let client = Client::try_default()?;
    let pods = DynamicResource {
        group: String::new(),
        version: "v1".into(),
        kind: "Pod".into(),
        plural: "pods".into(),
        namespaced: true,
    };
    let list = DynamicClient::namespaced_with(client, "default", &pods).list(&ListOptions::default()).await?;
    for pod in &list.items {
        let phase = pod.data.get("status").and_then(|s| s["phase"].as_str()).unwrap_or_default();
        println!("{}\t{}", pod.name().unwrap_or_default(), phase);
    }
    Ok(())
}
