//! A client-only program: lists the pods of the cluster of the default
//! kubeconfig and prints how many there are.

use k8s_client::clientset::Clientset;
use k8s_client_runtime::rest::Client;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let pods = Clientset::new(Client::try_default()?).core_v1().pods("").list(&Default::default()).await?;
    println!("{} pods", pods.items.len());
    Ok(())
}
