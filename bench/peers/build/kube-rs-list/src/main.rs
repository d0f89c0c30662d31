//! A client-only program: lists the pods of the cluster of the default
//! kubeconfig and prints how many there are.

use k8s_openapi::api::core::v1::Pod;
use kube::api::ListParams;
use kube::{Api, Client};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let pods: Api<Pod> = Api::all(Client::try_default().await?);
    println!("{} pods", pods.list(&ListParams::default()).await?.items.len());
    Ok(())
}
