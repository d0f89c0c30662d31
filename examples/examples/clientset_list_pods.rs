//! Lists the pods of namespace `default` through the typed ClientSet,
//! printing `name<TAB>phase` per pod. Uses `KUBECONFIG` (or `~/.kube/config`).

use k8s_client::clientset::Clientset;
use k8s_client_runtime::Report;
use k8s_client_runtime::rest::ListOptions;

#[tokio::main]
async fn main() -> Result<(), Report> {
    let clientset = Clientset::try_default()?;
    let pods = clientset.core_v1().pods("default").list(&ListOptions::default()).await?;
    for pod in &pods.items {
        let name = pod.metadata.name.as_deref().unwrap_or_default();
        let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref()).unwrap_or_default();
        println!("{name}\t{phase}");
    }
    Ok(())
}
