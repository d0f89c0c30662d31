//! A minimal pod informer: syncs every pod of the cluster of the default
//! kubeconfig and prints how many it holds.

use futures::StreamExt;
use k8s_openapi::api::core::v1::Pod;
use kube::runtime::{reflector, watcher, WatchStreamExt};
use kube::{Api, Client};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let pods: Api<Pod> = Api::all(Client::try_default().await?);
    let (reader, writer) = reflector::store();
    let stream = reflector(writer, watcher(pods, watcher::Config::default())).default_backoff();
    let driver = tokio::spawn(stream.for_each(|_| async {}));
    reader.wait_until_ready().await?;
    println!("{} pods", reader.len());
    driver.abort();
    Ok(())
}
