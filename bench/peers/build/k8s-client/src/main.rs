//! A minimal pod informer: syncs every pod of the cluster of the default
//! kubeconfig and prints how many it holds.

use k8s_client::informers::SharedInformerFactory;
use k8s_client::prelude::*;
use k8s_client_runtime::rest::Client;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let factory = SharedInformerFactory::builder(Client::try_default()?).build();
    let pods = factory.core_v1().pods().informer();
    factory.start();
    factory.wait_for_cache_sync().await;
    println!("{} pods", pods.store().len());
    factory.shutdown();
    Ok(())
}
