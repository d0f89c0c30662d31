//! A pod informer with add/update/delete handlers printing `ADD ns/name`,
//! `UPDATE ns/name` and `DELETE ns/name`; resync every minute. Runs until
//! Ctrl-C, or for `--for <seconds>`. Uses `KUBECONFIG` (or `~/.kube/config`).

use std::time::Duration;

use k8s_client::api::core::v1::Pod;
use k8s_client::informers::SharedInformerFactory;
use k8s_client::prelude::*;
use k8s_client_runtime::Report;
use k8s_client_runtime::cache::{DeltaObject, ResourceEventHandlerFuncs};
use k8s_client_runtime::object::object_key;
use k8s_client_runtime::rest::Client;

fn run_for() -> Option<Duration> {
    let args: Vec<String> = std::env::args().collect();
    let at = args.iter().position(|a| a == "--for")?;
    let seconds: f64 = args.get(at + 1)?.parse().ok()?;
    Some(Duration::from_secs_f64(seconds))
}

#[tokio::main]
async fn main() -> Result<(), Report> {
    let factory = SharedInformerFactory::new(Client::try_default()?, Duration::from_secs(60));
    let pods = factory.core_v1().pods().informer();
    pods.add_event_handler(
        ResourceEventHandlerFuncs::<Pod>::new()
            .on_add(|pod, _initial| println!("ADD {}", object_key(pod)))
            .on_update(|_old, new| println!("UPDATE {}", object_key(new)))
            .on_delete(|deleted| match deleted {
                DeltaObject::Object(pod) => println!("DELETE {}", object_key(pod)),
                DeltaObject::DeletedFinalStateUnknown(tombstone) => println!("DELETE {}", tombstone.key),
            }),
    )?;
    factory.start();
    factory.wait_for_cache_sync_within(Duration::from_secs(60)).await?;
    eprintln!("synced");
    match run_for() {
        Some(d) => tokio::select! {
            _ = tokio::time::sleep(d) => {}
            _ = tokio::signal::ctrl_c() => {}
        },
        None => tokio::signal::ctrl_c().await?,
    }
    factory.shutdown();
    Ok(())
}
