//! Lists the pods of namespace `default` through the raw RESTClient, printing
//! `name<TAB>phase` per pod. Uses `KUBECONFIG` (or `~/.kube/config`).

use k8s_client_runtime::Report;
use k8s_client_runtime::rest::Client;

#[tokio::main]
async fn main() -> Result<(), Report> {
    let client = Client::try_default()?;
    let list: serde_json::Value = client.get("/api/v1").namespace("default").resource("pods").json().await?;
    for pod in list["items"].as_array().into_iter().flatten() {
        let name = pod["metadata"]["name"].as_str().unwrap_or_default();
        let phase = pod["status"]["phase"].as_str().unwrap_or_default();
        println!("{name}\t{phase}");
    }
    Ok(())
}
